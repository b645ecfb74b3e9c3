/* The mnn semantics' compiled parts (_speedups_mnn.c), registered into mtokspec._speedups. */
#ifndef MTOKSPEC_SPEEDUPS_MNN_H
#define MTOKSPEC_SPEEDUPS_MNN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds the mnn functions to the module; 0, or -1 with an exception set. */
int mnn_speedups_register(PyObject *module);

#endif
