/* The tokenizer's loop over pre-tokenized pieces. */
#include "speedups.h"

/* encode_pieces(pieces, cache, tokenize, out): for each piece, cache[piece] or tokenize(piece)
 * (which fills the cache), its ids appended to out: the tokenizer's loop over pre-tokenized pieces
 * for the models without a core of their own (WordPiece; Unigram's cache misses go to its core). */
PyObject *encode_pieces(PyObject *mod, PyObject *args)
{
    PyObject *pieces, *cache, *tokenize, *out, *seq;
    Py_ssize_t i, n;
    if (!PyArg_ParseTuple(args, "OO!OO!", &pieces, &PyDict_Type, &cache, &tokenize, &PyList_Type, &out))
        return NULL;
    seq = PySequence_Fast(pieces, "encode_pieces() expects a sequence of str");
    if (seq == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    for (i = 0; i < n; i++) {
        PyObject *p = PySequence_Fast_GET_ITEM(seq, i), *r;
        int rc;
        r = PyDict_GetItemWithError(cache, p);
        if (r != NULL) {
            Py_INCREF(r);
        } else {
            if (PyErr_Occurred())
                goto fail;
            r = PyObject_CallOneArg(tokenize, p);
            if (r == NULL)
                goto fail;
        }
        rc = extend_ids(out, r, "tokenize() must return a sequence of ids");
        Py_DECREF(r);
        if (rc < 0)
            goto fail;
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    return NULL;
}
