/* The shared declarations of mtokspec._speedups (one extension module built from the files of
 * mtokspec/_csrc/; see module.c for what it holds). */
#ifndef MTOKSPEC_SPEEDUPS_H
#define MTOKSPEC_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* an ASCII set given as bytes: set[c] = 1 for each byte c of o (all below 128) */
static inline int read_set128(PyObject *o, uint8_t *set)
{
    if (!PyBytes_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "an ASCII set is bytes");
        return -1;
    }
    memset(set, 0, 128);
    for (Py_ssize_t k = 0; k < PyBytes_GET_SIZE(o); k++) {
        uint8_t c = (uint8_t)PyBytes_AS_STRING(o)[k];
        if (c >= 128) {
            PyErr_SetString(PyExc_ValueError, "an ASCII set holds bytes below 128");
            return -1;
        }
        set[c] = 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* hashing                                                                                         */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static inline size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

/* a byte string's hash (the mnn models' and the legacy files' tables) */
static inline uint64_t bytes_hash(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    while (n >= 8) {
        memcpy(&w, p, 8);
        h = mix64(h ^ w) + 0x632BE59BD9B4E019ULL;
        p += 8;
        n -= 8;
    }
    w = 0;
    if (n > 0)
        memcpy(&w, p, (size_t)n);
    return mix64(h ^ w ^ ((uint64_t)n << 59));
}

/* An id read from Python: 0 <= id < 2**32 (the file's ids are u32), else -1 with an error set. */
static inline int64_t read_id(PyObject *o)
{
    unsigned long long v;
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "ids must be int");
        return -1;
    }
    v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (v > 0xFFFFFFFFULL) {
        PyErr_SetString(PyExc_OverflowError, "id out of u32 range");
        return -1;
    }
    return (int64_t)v;
}

/* out += seq (a tuple or any sequence of ids): 0, or -1 with an error set. */
static inline int extend_ids(PyObject *out, PyObject *seq, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    Py_ssize_t k, n;
    int rc = 0;
    if (fast == NULL)
        return -1;
    n = PySequence_Fast_GET_SIZE(fast);
    for (k = 0; k < n && rc == 0; k++)
        rc = PyList_Append(out, PySequence_Fast_GET_ITEM(fast, k));
    Py_DECREF(fast);
    return rc;
}


/* bpe.c */
extern PyTypeObject BPECoreType;
PyObject *sp_crossing(PyObject *mod, PyObject *tokens);
/* unigram.c */
extern PyTypeObject UnigramCoreType;
/* tables.c: the codec's tables, and the vocabularies built from their columns */
PyObject *string_table(PyObject *mod, PyObject *args);
PyObject *string_index(PyObject *mod, PyObject *args);
PyObject *strings_at(PyObject *mod, PyObject *args);
PyObject *line_table(PyObject *mod, PyObject *args);
PyObject *dict_zip(PyObject *mod, PyObject *args);
PyObject *rows(PyObject *mod, PyObject *columns);
/* pieces.c */
PyObject *encode_pieces(PyObject *mod, PyObject *args);

/* mnn_regex.c: the mnn semantics' regex matcher, added to the module (0, or -1 with an exception set) */
int mnn_speedups_register(PyObject *module);
/* MNN's scan over folded text with the compiled pattern (a mnn_regex_program capsule): 0 with the
 * advancing matches as *count (start, end) pairs in *spans (PyMem, the caller frees) and *steps
 * counted down; 1 when the budget ran out; -1 with an exception set */
int mnn_regex_spans(PyObject *capsule, const unsigned char *folded, Py_ssize_t n, long long *steps,
                    long long window, Py_ssize_t **spans, Py_ssize_t *count);
/* mnn_models.c: the mnn semantics' models (MnnVocab, MnnBPE, MnnWordPiece, MnnUnigram), added to the module */
int mnn_models_register(PyObject *module);
/* mnn_stages.c: the mnn semantics' normalizer, pre-tokenizer and special-split loops (0, or -1 with an exception set) */
int mnn_stages_register(PyObject *module);
/* mnn_legacy.c: the legacy tokenizer.txt types 0 and 3 (mnn_legacy_sp, MnnLegacyHF), added to the module */
int mnn_legacy_register(PyObject *module);

#endif
