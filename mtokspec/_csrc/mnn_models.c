/* mtokspec._speedups, the mnn semantics' models (registered by module.c through speedups.h).
 *
 * The pure-Python models (mtokspec/runtime/mnn/models.py: Vocab, BPE, WordPiece, Unigram) are the
 * reference.  This file redoes their look-ups and loops on bytes, in the same order, so that every
 * id is the one the pure code gives; where the pure code would raise (Unigram reading scores[-1]),
 * the core hands the piece back to the pure code, which raises.  Python decides when to use it.
 *
 *   MnnVocab(tokens, ids, index=None)
 *       tokens, ids: the vocabulary's rows in file order (bytes, int); every id in 0..len-1, else
 *       ValueError (the pure code reports it).  Or, from a table as stored (Table.string_index):
 *       tokens the table's bytes, index each row's token as native uint32 (offset, length), ids a
 *       buffer of native uint32 -- no object per row.  The look-up is MNN's std::lower_bound over the rows:
 *       on rows in ascending order a hash table keeping the first of equal keys, otherwise the same
 *       binary search (bisect_left) over the rows as they stand; a key longer than 0xFFFF is cut to
 *       len & 0xFFFF first (MNN passes the length as uint16_t)
 *     .find(key) -> id or -1          .id_to_token() -> list (last row of an id wins; holes b"")
 *     .token(i) -> id_to_token()[i], or None outside
 *     .max_len() -> longest token of id_to_token     .row_lengths() -> sorted distinct row lengths
 *
 *   MnnBPE(vocab, merges, byte_level, byte_map, byte_pieces)
 *       merges: (keys, ranks) with key = left << 32 | right, or (encoding, "<III") rows as stored;
 *       looked up as the vocabulary is (first of equal keys, or bisect over unsorted keys); ranks
 *       read as int32, applied when 0 <= rank < 10^9
 *     .tokenize(text) -> list          .tokenize_pieces(pieces, out) -> None (out += each's ids)
 *
 *   MnnWordPiece(vocab, prefix, max_chars, unk_id, longest)     .tokenize / .tokenize_pieces
 *
 *   MnnUnigram(vocab, scores, unk_id, byte_fallback, lengths, byte_pieces, fallback)
 *       scores: per row (file order; the last row of an id wins; a sequence of float or a buffer
 *       of native doubles); lengths: the candidate lengths,
 *       shortest first; fallback: callable(bytes) -> list, the pure tokenize, for a piece where the
 *       pure code reads scores[-1] (it raises there)
 *     .tokenize / .tokenize_pieces     .scores() -> list of floats by id
 */
#include "speedups.h"

#include <stdlib.h>

#define MNN_KEY_CUT 0xFFFF

/* building a hash table: the slot of the row PREFETCH_AHEAD rows on is fetched while this one goes in */
#define PREFETCH_AHEAD 8
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch((p), 1)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* ---------------------------------------------------------------------------------------------- */
/* byte strings                                                                                    */

/* Python's bytes order: memcmp over the common length, then the shorter first. */
static inline int bytes_cmp(const unsigned char *a, Py_ssize_t na, const unsigned char *b, Py_ssize_t nb)
{
    int c = memcmp(a, b, (size_t)(na < nb ? na : nb));
    if (c != 0)
        return c;
    return (na > nb) - (na < nb);
}

/* ---------------------------------------------------------------------------------------------- */
/* MnnVocab                                                                                        */

typedef struct {
    const unsigned char *p;      /* the token's bytes */
    Py_ssize_t n;
    int32_t id;
} VRow;

typedef struct {
    int32_t row;
    uint32_t hash;               /* the high half of the key's hash */
} VSlot;

typedef struct {
    PyObject_HEAD
    PyObject *tokens;            /* tuple of bytes, rows in file order, or the table's bytes (owns the bytes below) */
    Py_ssize_t nrows;
    VRow *rows;                  /* in file order */
    int32_t *id_row;             /* id -> the last row with that id, or -1 (a hole) */
    int sorted;
    VSlot *slots;                /* sorted: open addressing over rows (row -1: empty) */
    size_t cap;
} MnnVocab;

static int32_t vocab_find(const MnnVocab *v, const unsigned char *key, Py_ssize_t n)
{
    if (n > MNN_KEY_CUT)
        n &= MNN_KEY_CUT;
    if (v->sorted) {
        uint64_t h;
        size_t mask = v->cap - 1, j;
        if (v->cap == 0)
            return -1;
        h = bytes_hash(key, n);
        j = (size_t)h & mask;
        while (v->slots[j].row != -1) {
            const VRow *r = &v->rows[v->slots[j].row];
            if (v->slots[j].hash == (uint32_t)(h >> 32) && r->n == n && memcmp(r->p, key, (size_t)n) == 0)
                return r->id;
            j = (j + 1) & mask;
        }
        return -1;
    } else {
        Py_ssize_t lo = 0, hi = v->nrows, mid;
        while (lo < hi) {
            mid = (lo + hi) / 2;
            if (bytes_cmp(v->rows[mid].p, v->rows[mid].n, key, n) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < v->nrows && v->rows[lo].n == n && memcmp(v->rows[lo].p, key, (size_t)n) == 0)
            return v->rows[lo].id;
        return -1;
    }
}

/* The token of id i (i a valid id): the last row's, or empty for a hole. */
static inline void vocab_token(const MnnVocab *v, int32_t i, const unsigned char **p, Py_ssize_t *n)
{
    int32_t r = v->id_row[i];
    if (r < 0) {
        *p = (const unsigned char *)"";
        *n = 0;
    } else {
        *p = v->rows[r].p;
        *n = v->rows[r].n;
    }
}

/* The ids of a vocabulary: a sequence of int, or a buffer of native uint32 (a table's typed column).
 * Fills *seq (a fast sequence to release) or *buf (a buffer to release); -1 with an error set. */
static int vocab_ids(PyObject *ids, PyObject **seq, Py_buffer *buf, Py_ssize_t n)
{
    *seq = NULL;
    buf->obj = NULL;
    if (PyObject_CheckBuffer(ids)) {
        if (PyObject_GetBuffer(ids, buf, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
            return -1;
        if (buf->itemsize != 4 || buf->format == NULL || strcmp(buf->format, "I") != 0) {
            PyBuffer_Release(buf);
            buf->obj = NULL;
            PyErr_SetString(PyExc_TypeError, "an ids buffer must be of native uint32 ('I')");
            return -1;
        }
        if (buf->len / 4 != n) {
            PyBuffer_Release(buf);
            buf->obj = NULL;
            PyErr_SetString(PyExc_ValueError, "tokens and ids differ in length");
            return -1;
        }
        return 0;
    }
    *seq = PySequence_Fast(ids, "ids must be a sequence");
    if (*seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(*seq) != n) {
        Py_CLEAR(*seq);
        PyErr_SetString(PyExc_ValueError, "tokens and ids differ in length");
        return -1;
    }
    return 0;
}

static int MnnVocab_init(MnnVocab *self, PyObject *args, PyObject *kw)
{
    PyObject *tokens, *ids, *index = Py_None, *idt = NULL;
    Py_buffer idbuf, ixbuf;
    uint64_t *hashes;
    Py_ssize_t n, k;
    static char *names[] = {"tokens", "ids", "index", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O", names, &tokens, &ids, &index))
        return -1;
    if (self->tokens != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnVocab is initialised once");
        return -1;
    }
    idbuf.obj = NULL;
    if (index == Py_None) {
        tokens = PySequence_Tuple(tokens);
        if (tokens == NULL)
            return -1;
        n = PyTuple_GET_SIZE(tokens);
    } else {
        /* tokens: a table's bytes; index: each row's token as native uint32 (offset, length) */
        const uint32_t *ix;
        if (!PyBytes_Check(tokens)) {
            PyErr_SetString(PyExc_TypeError, "with an index, tokens must be the table's bytes");
            return -1;
        }
        if (PyObject_GetBuffer(index, &ixbuf, PyBUF_SIMPLE) < 0)
            return -1;
        n = ixbuf.len / 8;
        ix = (const uint32_t *)ixbuf.buf;
        if (ixbuf.len % 8 != 0) {
            PyBuffer_Release(&ixbuf);
            PyErr_SetString(PyExc_ValueError, "an index is (offset, length) pairs of uint32");
            return -1;
        }
        for (k = 0; k < n; k++)
            if ((uint64_t)ix[2 * k] + ix[2 * k + 1] > (uint64_t)PyBytes_GET_SIZE(tokens)) {
                PyBuffer_Release(&ixbuf);
                PyErr_SetString(PyExc_ValueError, "an index entry runs past the table's bytes");
                return -1;
            }
        if (n >= INT32_MAX / 2) {
            PyBuffer_Release(&ixbuf);
            PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
            return -1;
        }
        self->rows = PyMem_Malloc(sizeof(VRow) * (size_t)(n + 1));
        if (self->rows == NULL) {
            PyBuffer_Release(&ixbuf);
            PyErr_NoMemory();
            return -1;
        }
        for (k = 0; k < n; k++) {
            self->rows[k].p = (const unsigned char *)PyBytes_AS_STRING(tokens) + ix[2 * k];
            self->rows[k].n = (Py_ssize_t)ix[2 * k + 1];
        }
        PyBuffer_Release(&ixbuf);
        Py_INCREF(tokens);
    }
    self->tokens = tokens;
    if (vocab_ids(ids, &idt, &idbuf, n) < 0)
        return -1;
    if (n >= INT32_MAX / 2) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
        goto fail;
    }
    self->nrows = n;
    if (self->rows == NULL)
        self->rows = PyMem_Malloc(sizeof(VRow) * (size_t)(n + 1));
    self->id_row = PyMem_Malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!self->rows || !self->id_row) {
        PyErr_NoMemory();
        goto fail;
    }
    for (k = 0; k < n; k++)
        self->id_row[k] = -1;
    self->sorted = 1;
    for (k = 0; k < n; k++) {
        int64_t id;
        if (index == Py_None) {
            PyObject *t = PyTuple_GET_ITEM(tokens, k);
            if (!PyBytes_Check(t)) {
                PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
                goto fail;
            }
            self->rows[k].p = (const unsigned char *)PyBytes_AS_STRING(t);
            self->rows[k].n = PyBytes_GET_SIZE(t);
        }
        if (idt != NULL) {
            id = read_id(PySequence_Fast_GET_ITEM(idt, k));
            if (id < 0)
                goto fail;
        } else {
            uint32_t v;
            memcpy(&v, (const char *)idbuf.buf + 4 * k, 4);
            id = (int64_t)v;
        }
        if (id >= n) {  /* (a u32 from 2^31 on is negative to MNN: outside the table too) */
            PyErr_SetString(PyExc_ValueError, "an id outside the table");
            goto fail;
        }
        self->rows[k].id = (int32_t)id;
        self->id_row[id] = (int32_t)k;
        if (k > 0 && self->sorted && bytes_cmp(self->rows[k - 1].p, self->rows[k - 1].n, self->rows[k].p, self->rows[k].n) > 0)
            self->sorted = 0;
    }
    if (idbuf.obj != NULL)
        PyBuffer_Release(&idbuf);
    Py_CLEAR(idt);
    if (self->sorted && n > 0) {
        size_t mask;
        self->cap = pow2_at_least((size_t)n * 2 + 1);
        mask = self->cap - 1;
        self->slots = PyMem_Malloc(sizeof(VSlot) * self->cap);
        if (!self->slots) {
            PyErr_NoMemory();
            return -1;
        }
        memset(self->slots, 0xFF, sizeof(VSlot) * self->cap);
        hashes = PyMem_Malloc(sizeof(uint64_t) * (size_t)n);
        if (hashes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (k = 0; k < n; k++)
            hashes[k] = bytes_hash(self->rows[k].p, self->rows[k].n);
        for (k = 0; k < n; k++) {
            uint64_t h = hashes[k];
            size_t j = (size_t)h & mask;
            int dup = 0;
            if (k + PREFETCH_AHEAD < n)
                PREFETCH(&self->slots[(size_t)hashes[k + PREFETCH_AHEAD] & mask]);
            while (self->slots[j].row != -1) {
                int32_t r = self->slots[j].row;
                if (self->slots[j].hash == (uint32_t)(h >> 32) && self->rows[r].n == self->rows[k].n
                    && memcmp(self->rows[r].p, self->rows[k].p, (size_t)self->rows[k].n) == 0) {
                    dup = 1;  /* the first row of equal keys is the one lower_bound finds */
                    break;
                }
                j = (j + 1) & mask;
            }
            if (!dup) {
                self->slots[j].row = (int32_t)k;
                self->slots[j].hash = (uint32_t)(h >> 32);
            }
        }
        PyMem_Free(hashes);
    }
    return 0;
fail:
    Py_XDECREF(idt);
    if (idbuf.obj != NULL)
        PyBuffer_Release(&idbuf);
    return -1;
}

static void MnnVocab_dealloc(MnnVocab *self)
{
    Py_CLEAR(self->tokens);
    PyMem_Free(self->rows);
    PyMem_Free(self->id_row);
    PyMem_Free(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int vocab_ready(const MnnVocab *v)
{
    if (v->tokens == NULL || v->rows == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnVocab is not initialised");
        return 0;
    }
    return 1;
}

static PyObject *MnnVocab_find(MnnVocab *self, PyObject *key)
{
    if (!vocab_ready(self))
        return NULL;
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "find() expects bytes");
        return NULL;
    }
    return PyLong_FromLong(vocab_find(self, (const unsigned char *)PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)));
}

static PyObject *MnnVocab_id_to_token(MnnVocab *self, PyObject *unused)
{
    PyObject *out, *empty;
    Py_ssize_t i;
    if (!vocab_ready(self))
        return NULL;
    out = PyList_New(self->nrows);
    empty = PyBytes_FromStringAndSize("", 0);
    if (out == NULL || empty == NULL) {
        Py_XDECREF(out);
        Py_XDECREF(empty);
        return NULL;
    }
    for (i = 0; i < self->nrows; i++) {
        int32_t r = self->id_row[i];
        PyObject *t;
        if (r < 0) {
            t = empty;
            Py_INCREF(t);
        } else if (PyTuple_Check(self->tokens)) {
            t = PyTuple_GET_ITEM(self->tokens, r);
            Py_INCREF(t);
        } else {
            t = PyBytes_FromStringAndSize((const char *)self->rows[r].p, self->rows[r].n);
            if (t == NULL) {
                Py_DECREF(out);
                Py_DECREF(empty);
                return NULL;
            }
        }
        PyList_SET_ITEM(out, i, t);
    }
    Py_DECREF(empty);
    return out;
}

static PyObject *MnnVocab_token(MnnVocab *self, PyObject *arg)
{
    Py_ssize_t i;
    int32_t r;
    if (!vocab_ready(self))
        return NULL;
    i = PyLong_AsSsize_t(arg);
    if (i == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return NULL;
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (i < 0 || i >= self->nrows)
        Py_RETURN_NONE;
    r = self->id_row[i];
    if (r < 0)
        return PyBytes_FromStringAndSize("", 0);
    if (PyTuple_Check(self->tokens)) {
        PyObject *t = PyTuple_GET_ITEM(self->tokens, r);
        Py_INCREF(t);
        return t;
    }
    return PyBytes_FromStringAndSize((const char *)self->rows[r].p, self->rows[r].n);
}

static PyObject *MnnVocab_max_len(MnnVocab *self, PyObject *unused)
{
    Py_ssize_t i, m = 0;
    if (!vocab_ready(self))
        return NULL;
    for (i = 0; i < self->nrows; i++)
        if (self->id_row[i] >= 0 && self->rows[self->id_row[i]].n > m)
            m = self->rows[self->id_row[i]].n;
    return PyLong_FromSsize_t(m);
}

static int cmp_ssize(const void *a, const void *b)
{
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

static int append_ssize(PyObject *list, Py_ssize_t v)
{
    PyObject *x = PyLong_FromSsize_t(v);
    int rc;
    if (x == NULL)
        return -1;
    rc = PyList_Append(list, x);
    Py_DECREF(x);
    return rc;
}

static PyObject *MnnVocab_row_lengths(MnnVocab *self, PyObject *unused)
{
    char seen[1024];  /* the short lengths marked, the few long ones sorted */
    Py_ssize_t *lng, nlong = 0, i;
    PyObject *out;
    if (!vocab_ready(self))
        return NULL;
    lng = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(self->nrows + 1));
    if (lng == NULL)
        return PyErr_NoMemory();
    memset(seen, 0, sizeof(seen));
    for (i = 0; i < self->nrows; i++) {
        Py_ssize_t len = self->rows[i].n;
        if (len < (Py_ssize_t)sizeof(seen))
            seen[len] = 1;
        else
            lng[nlong++] = len;
    }
    qsort(lng, (size_t)nlong, sizeof(Py_ssize_t), cmp_ssize);
    out = PyList_New(0);
    for (i = 0; out != NULL && i < (Py_ssize_t)sizeof(seen); i++)
        if (seen[i] && append_ssize(out, i) < 0)
            Py_CLEAR(out);
    for (i = 0; out != NULL && i < nlong; i++)
        if ((i == 0 || lng[i] != lng[i - 1]) && append_ssize(out, lng[i]) < 0)
            Py_CLEAR(out);
    PyMem_Free(lng);
    return out;
}

static PyObject *MnnVocab_size(MnnVocab *self, void *closure)
{
    return PyLong_FromSsize_t(self->nrows);
}

static PyMethodDef MnnVocab_methods[] = {
    {"find", (PyCFunction)MnnVocab_find, METH_O, "find(key) -> the id MNN's look-up finds, or -1."},
    {"id_to_token", (PyCFunction)MnnVocab_id_to_token, METH_NOARGS,
     "id_to_token() -> list of each id's token (the last row of an id; b\"\" for a hole)."},
    {"token", (PyCFunction)MnnVocab_token, METH_O,
     "token(i) -> id i's token (id_to_token()[i]), or None when i is not an id."},
    {"max_len", (PyCFunction)MnnVocab_max_len, METH_NOARGS, "max_len() -> the longest token of id_to_token()."},
    {"row_lengths", (PyCFunction)MnnVocab_row_lengths, METH_NOARGS,
     "row_lengths() -> the distinct lengths of the rows' tokens, ascending."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef MnnVocab_getset[] = {
    {"size", (getter)MnnVocab_size, NULL, "the number of rows", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject MnnVocabType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnVocab",
    .tp_basicsize = sizeof(MnnVocab),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MNN's vocabulary look-up (see mnn_models.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnVocab_init,
    .tp_dealloc = (destructor)MnnVocab_dealloc,
    .tp_methods = MnnVocab_methods,
    .tp_getset = MnnVocab_getset,
};

static MnnVocab *as_vocab(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &MnnVocabType)) {
        PyErr_SetString(PyExc_TypeError, "expected an MnnVocab");
        return NULL;
    }
    if (!vocab_ready((MnnVocab *)o))
        return NULL;
    return (MnnVocab *)o;
}

/* ---------------------------------------------------------------------------------------------- */
/* small helpers                                                                                   */

typedef struct {
    int32_t *p;
    Py_ssize_t n, cap;
} IdBuf;

static int idbuf_push(IdBuf *b, int32_t v)
{
    if (b->n == b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 64;
        int32_t *p = PyMem_Realloc(b->p, sizeof(int32_t) * (size_t)cap);
        if (p == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    b->p[b->n++] = v;
    return 0;
}

/* out += ids[0..n) as ints (out a list), or a new list when out is NULL. */
static PyObject *ids_out(PyObject *out, const int32_t *ids, Py_ssize_t n)
{
    Py_ssize_t k;
    if (out == NULL) {
        out = PyList_New(n);
        if (out == NULL)
            return NULL;
        for (k = 0; k < n; k++) {
            PyObject *x = PyLong_FromLong(ids[k]);
            if (x == NULL) {
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(out, k, x);
        }
        return out;
    }
    for (k = 0; k < n; k++) {
        PyObject *x = PyLong_FromLong(ids[k]);
        int rc;
        if (x == NULL)
            return NULL;
        rc = PyList_Append(out, x);
        Py_DECREF(x);
        if (rc < 0)
            return NULL;
    }
    Py_INCREF(out);
    return out;
}

/* MNN's Unicode::utf8_decode at u[i] (n bytes left, n >= 1): the length of the character, or 0 when
 * it reads U+FFFD from one invalid byte (unicode.py utf8_decode). */
static inline Py_ssize_t utf8_char_len(const unsigned char *u, Py_ssize_t n)
{
    unsigned b0 = u[0];
    uint32_t cp;
    if (b0 < 0x80)
        return 1;
    if ((b0 & 0xE0) == 0xC0 && n >= 2 && (u[1] & 0xC0) == 0x80) {
        cp = (b0 & 0x1F) << 6 | (u[1] & 0x3F);
        return cp >= 0x80 ? 2 : 0;
    }
    if ((b0 & 0xF0) == 0xE0 && n >= 3 && (u[1] & 0xC0) == 0x80 && (u[2] & 0xC0) == 0x80) {
        cp = (b0 & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
        return cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF) ? 3 : 0;
    }
    if ((b0 & 0xF8) == 0xF0 && n >= 4 && (u[1] & 0xC0) == 0x80 && (u[2] & 0xC0) == 0x80 && (u[3] & 0xC0) == 0x80) {
        cp = (b0 & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 | (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
        return cp >= 0x10000 && cp <= 0x10FFFF ? 4 : 0;
    }
    return 0;
}

/* The ids of 256 keys (a list of 256 bytes) in the vocabulary. */
static int byte_ids(const MnnVocab *v, PyObject *keys, int32_t *out)
{
    int k;
    if (!PyList_Check(keys) || PyList_GET_SIZE(keys) != 256) {
        PyErr_SetString(PyExc_TypeError, "byte keys must be a list of 256 bytes");
        return -1;
    }
    for (k = 0; k < 256; k++) {
        PyObject *b = PyList_GET_ITEM(keys, k);
        if (!PyBytes_Check(b)) {
            PyErr_SetString(PyExc_TypeError, "byte keys must be a list of 256 bytes");
            return -1;
        }
        out[k] = vocab_find(v, (const unsigned char *)PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    }
    return 0;
}

/* The model's tokenize(text) into an empty buffer: 1 done (the ids in out), 0 hand the piece back
 * to the pure code, -1 error. */
typedef int (*tokenize_fn)(PyObject *self, const unsigned char *u, Py_ssize_t n, IdBuf *out);

#define MNN_CACHE_LIMIT (1 << 16)  /* as the pure models' caches: a model's ids depend on the piece alone */

/* The ids of piece p as a tuple, from the cache (a dict: bytes -> tuple) or fn (then kept while the
 * cache is not full); NULL with an error set, or NULL with *handed_back set (fn said 0). */
static PyObject *cached_ids(PyObject *self, PyObject *p, tokenize_fn fn, PyObject *cache, IdBuf *buf,
                            int *handed_back)
{
    PyObject *ids = PyDict_GetItemWithError(cache, p), *x;
    Py_ssize_t k;
    int rc;
    *handed_back = 0;
    if (ids != NULL) {
        Py_INCREF(ids);
        return ids;
    }
    if (PyErr_Occurred())
        return NULL;
    buf->n = 0;
    rc = fn(self, (const unsigned char *)PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p), buf);
    if (rc <= 0) {
        *handed_back = rc == 0;
        return NULL;
    }
    ids = PyTuple_New(buf->n);
    for (k = 0; ids != NULL && k < buf->n; k++) {
        if ((x = PyLong_FromLong(buf->p[k])) == NULL) {
            Py_CLEAR(ids);
            break;
        }
        PyTuple_SET_ITEM(ids, k, x);
    }
    if (ids != NULL && PyObject_GC_IsTracked(ids))
        PyObject_GC_UnTrack(ids);  /* ints only: no cycle through it (the collector would untrack it too) */
    if (ids != NULL && PyDict_GET_SIZE(cache) < MNN_CACHE_LIMIT && PyDict_SetItem(cache, p, ids) < 0)
        Py_CLEAR(ids);
    return ids;
}

static PyObject *tokenize_one(PyObject *self, PyObject *text, tokenize_fn fn, PyObject *cache, PyObject *fallback)
{
    IdBuf buf = {NULL, 0, 0};
    PyObject *ids, *res;
    int handed_back;
    if (!PyBytes_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "tokenize() expects bytes");
        return NULL;
    }
    ids = cached_ids(self, text, fn, cache, &buf, &handed_back);
    PyMem_Free(buf.p);
    if (ids == NULL)
        return handed_back ? PyObject_CallOneArg(fallback, text) : NULL;
    res = PySequence_List(ids);
    Py_DECREF(ids);
    return res;
}

static PyObject *tokenize_many(PyObject *self, PyObject *args, tokenize_fn fn, PyObject *cache, PyObject *fallback)
{
    PyObject *pieces, *out, *fast;
    IdBuf buf = {NULL, 0, 0};
    Py_ssize_t k, n;
    if (!PyArg_ParseTuple(args, "OO!", &pieces, &PyList_Type, &out))
        return NULL;
    fast = PySequence_Fast(pieces, "pieces must be a sequence of bytes");
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    for (k = 0; k < n; k++) {
        PyObject *p = PySequence_Fast_GET_ITEM(fast, k), *ids;
        Py_ssize_t end;
        int handed_back, rc;
        if (!PyBytes_Check(p)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be bytes");
            goto fail;
        }
        ids = cached_ids(self, p, fn, cache, &buf, &handed_back);
        if (ids == NULL && !handed_back)
            goto fail;
        if (ids == NULL) {
            ids = PyObject_CallOneArg(fallback, p);
            if (ids == NULL)
                goto fail;
            rc = extend_ids(out, ids, "the fallback returns a sequence of ids");
        } else {
            end = PyList_GET_SIZE(out);
            rc = PyList_SetSlice(out, end, end, ids);
        }
        Py_DECREF(ids);
        if (rc < 0)
            goto fail;
    }
    Py_DECREF(fast);
    PyMem_Free(buf.p);
    Py_RETURN_NONE;
fail:
    Py_DECREF(fast);
    PyMem_Free(buf.p);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* MnnBPE                                                                                          */

#define MSLOT_EMPTY INT32_MIN
#define JOINED_UNKNOWN (-2)

typedef struct {
    uint64_t key;
    int32_t rank;
    int32_t joined;               /* the id of the pair's joined text, -1 none, JOINED_UNKNOWN not yet
                                   * looked up, MSLOT_EMPTY an empty slot */
} MSlot;

typedef struct {
    PyObject_HEAD
    MnnVocab *vocab;
    int byte_level;
    int32_t byte_map_id[256];     /* byte-level: the id of each byte's GPT-2 character, or -1 */
    int32_t byte_piece_id[256];   /* the id of each byte's <0xHH>, or -1 */
    int32_t char_id[0x800];       /* the id of each one- or two-byte character (code point below
                                   * U+0800), -1 none, JOINED_UNKNOWN not yet looked up */
    Py_ssize_t nmerges;
    uint64_t *keys;               /* rows in file order */
    int32_t *ranks;
    int sorted;
    MSlot *mslots;                /* sorted: open addressing, the first row of each key */
    size_t mcap;
    PyObject *cache;              /* dict: piece -> tuple of ids */
} MnnBPE;

/* The rank MNN's look-up finds for key, or -1 when none or one that never applies; *slot: where
 * the sorted table keeps the key (NULL: not sorted). */
static inline int32_t bpe_rank(MnnBPE *b, uint64_t key, MSlot **slot)
{
    int32_t r = -1;
    *slot = NULL;
    if (b->sorted) {
        size_t mask = b->mcap - 1, j;
        if (b->mcap == 0)
            return -1;
        j = (size_t)mix64(key) & mask;
        while (b->mslots[j].joined != MSLOT_EMPTY) {
            if (b->mslots[j].key == key) {
                r = b->mslots[j].rank;
                *slot = &b->mslots[j];
                break;
            }
            j = (j + 1) & mask;
        }
    } else {
        Py_ssize_t lo = 0, hi = b->nmerges, mid;
        while (lo < hi) {
            mid = (lo + hi) / 2;
            if (b->keys[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < b->nmerges && b->keys[lo] == key)
            r = b->ranks[lo];
    }
    return r >= 0 && r < 1000000000 ? r : -1;
}

typedef struct {
    int32_t r, i;
    uint32_t vi;
    int32_t j;
    uint32_t vj;
    MSlot *slot;                  /* the pair's slot in the sorted table (its joined id), or NULL */
} MItem;

/* Python's order of the pure loop's heap tuples (r, i, vi, j, vj). */
static inline int mitem_less(const MItem *a, const MItem *b)
{
    if (a->r != b->r)
        return a->r < b->r;
    if (a->i != b->i)
        return a->i < b->i;
    if (a->vi != b->vi)
        return a->vi < b->vi;
    if (a->j != b->j)
        return a->j < b->j;
    return a->vj < b->vj;
}

static void mheap_push(MItem *h, Py_ssize_t *n, MItem it)
{
    Py_ssize_t k = (*n)++;
    while (k > 0) {
        Py_ssize_t p = (k - 1) / 2;
        if (!mitem_less(&it, &h[p]))
            break;
        h[k] = h[p];
        k = p;
    }
    h[k] = it;
}

static MItem mheap_pop(MItem *h, Py_ssize_t *n)
{
    MItem top = h[0], last = h[--(*n)];
    Py_ssize_t k = 0, m = *n;
    for (;;) {
        Py_ssize_t c = 2 * k + 1;
        if (c >= m)
            break;
        if (c + 1 < m && mitem_less(&h[c + 1], &h[c]))
            c++;
        if (!mitem_less(&h[c], &last))
            break;
        h[k] = h[c];
        k = c;
    }
    if (m > 0)
        h[k] = last;
    return top;
}

/* The id of the joined text of tokens a and b (MNN looks it up), or -1. */
static int32_t bpe_joined(const MnnVocab *v, int32_t a, int32_t b)
{
    const unsigned char *pa, *pb;
    Py_ssize_t na, nb;
    unsigned char sbuf[256], *buf = sbuf;
    int32_t nid;
    vocab_token(v, a, &pa, &na);
    vocab_token(v, b, &pb, &nb);
    if (na + nb > (Py_ssize_t)sizeof(sbuf) && (buf = PyMem_Malloc((size_t)(na + nb))) == NULL)
        return -2;
    memcpy(buf, pa, (size_t)na);
    memcpy(buf + na, pb, (size_t)nb);
    nid = vocab_find(v, buf, na + nb);
    if (buf != sbuf)
        PyMem_Free(buf);
    return nid;
}

#define MERGE_STACK 64

/* BPE._merge over ids[0..n): the merged ids written back from ids[0]; the count, or -1 (no memory). */
static Py_ssize_t bpe_merge(MnnBPE *self, int32_t *ids, Py_ssize_t n)
{
    int32_t snxt[MERGE_STACK], sprv[MERGE_STACK], *nxt = snxt, *prv = sprv;
    uint32_t sver[MERGE_STACK], *ver = sver;
    char salive[MERGE_STACK], *alive = salive;
    MItem sheap[3 * MERGE_STACK + 4], *heap = sheap;
    Py_ssize_t hn = 0, i, m;
    MSlot *slot;
    if (n < 2)
        return n;
    if (n > MERGE_STACK) {
        nxt = PyMem_Malloc(sizeof(int32_t) * (size_t)n);
        prv = PyMem_Malloc(sizeof(int32_t) * (size_t)n);
        ver = PyMem_Malloc(sizeof(uint32_t) * (size_t)n);
        alive = PyMem_Malloc((size_t)n);
        heap = PyMem_Malloc(sizeof(MItem) * (size_t)(3 * n + 4));  /* n - 1 pairs, two pushes a merge */
        if (!nxt || !prv || !ver || !alive || !heap) {
            m = -1;
            PyErr_NoMemory();
            goto done;
        }
    }
    for (i = 0; i < n; i++) {
        nxt[i] = (int32_t)(i + 1 < n ? i + 1 : -1);
        prv[i] = (int32_t)(i - 1);
        ver[i] = 0;
        alive[i] = 1;
    }
    for (i = 0; i + 1 < n; i++) {
        int32_t r = bpe_rank(self, (uint64_t)(uint32_t)ids[i] << 32 | (uint32_t)ids[i + 1], &slot);
        if (r >= 0) {
            MItem it = {r, (int32_t)i, 0, (int32_t)(i + 1), 0, slot};
            mheap_push(heap, &hn, it);
        }
    }
    while (hn > 0) {
        MItem it = mheap_pop(heap, &hn);
        int32_t a = it.i, b = it.j, h, k, nid;
        if (!alive[a] || ver[a] != it.vi || nxt[a] != b || ver[b] != it.vj)
            continue;  /* stale: one side merged since, or no longer next to the other */
        nid = it.slot != NULL ? it.slot->joined : JOINED_UNKNOWN;
        if (nid == JOINED_UNKNOWN) {
            nid = bpe_joined(self->vocab, ids[a], ids[b]);
            if (nid == -2) {
                m = -1;
                PyErr_NoMemory();
                goto done;
            }
            if (it.slot != NULL)
                it.slot->joined = nid;
        }
        if (nid == -1)
            break;  /* a joined text not in the vocabulary ends merging */
        ids[a] = nid;
        ver[a]++;
        alive[b] = 0;
        k = nxt[b];
        nxt[a] = k;
        if (k != -1)
            prv[k] = a;
        h = prv[a];
        if (h != -1) {
            int32_t r = bpe_rank(self, (uint64_t)(uint32_t)ids[h] << 32 | (uint32_t)ids[a], &slot);
            if (r >= 0) {
                MItem e = {r, h, ver[h], a, ver[a], slot};
                mheap_push(heap, &hn, e);
            }
        }
        if (k != -1) {
            int32_t r = bpe_rank(self, (uint64_t)(uint32_t)ids[a] << 32 | (uint32_t)ids[k], &slot);
            if (r >= 0) {
                MItem e = {r, a, ver[a], k, ver[k], slot};
                mheap_push(heap, &hn, e);
            }
        }
    }
    m = 0;
    for (i = 0; i != -1; i = nxt[i])
        ids[m++] = ids[i];
done:
    if (n > MERGE_STACK) {
        PyMem_Free(nxt);
        PyMem_Free(prv);
        PyMem_Free(ver);
        PyMem_Free(alive);
        PyMem_Free(heap);
    }
    return m;
}

static int bpe_tokenize(PyObject *obj, const unsigned char *u, Py_ssize_t n, IdBuf *out)
{
    MnnBPE *self = (MnnBPE *)obj;
    const MnnVocab *v = self->vocab;
    Py_ssize_t off = 0, m, k;
    if (n == 0)
        return 1;
    if (self->byte_level) {
        for (off = 0; off < n; off++)
            if (self->byte_map_id[u[off]] != -1 && idbuf_push(out, self->byte_map_id[u[off]]) < 0)
                return -1;
    } else {
        while (off < n) {
            Py_ssize_t r = utf8_char_len(u + off, n - off);
            int32_t i;
            if (r == 0) {  /* U+FFFD read from one invalid byte: that byte's piece */
                i = self->byte_piece_id[u[off]];
                if (i != -1 && idbuf_push(out, i) < 0)
                    return -1;
                off++;
                continue;
            }
            if (r <= 2) {  /* a one- or two-byte character: its id is kept once looked up */
                uint32_t cp = r == 1 ? u[off] : (uint32_t)(u[off] & 0x1F) << 6 | (u[off + 1] & 0x3F);
                i = self->char_id[cp];
                if (i == JOINED_UNKNOWN)
                    i = self->char_id[cp] = vocab_find(v, u + off, r);
            } else {
                i = vocab_find(v, u + off, r);
            }
            if (i != -1) {
                if (idbuf_push(out, i) < 0)
                    return -1;
            } else {
                for (k = 0; k < r; k++)
                    if (self->byte_piece_id[u[off + k]] != -1 && idbuf_push(out, self->byte_piece_id[u[off + k]]) < 0)
                        return -1;
            }
            off += r;
        }
    }
    m = bpe_merge(self, out->p, out->n);
    if (m < 0)
        return -1;
    out->n = m;
    return 1;
}

static int MnnBPE_init(MnnBPE *self, PyObject *args, PyObject *kw)
{
    PyObject *vocab, *merges, *bmap, *bpieces;
    int byte_level;
    Py_ssize_t k, n;
    MnnVocab *v;
    static char *names[] = {"vocab", "merges", "byte_level", "byte_map", "byte_pieces", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOpOO", names, &vocab, &merges, &byte_level, &bmap, &bpieces))
        return -1;
    if (self->vocab != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnBPE is initialised once");
        return -1;
    }
    if ((v = as_vocab(vocab)) == NULL)
        return -1;
    for (k = 0; k < 0x800; k++)
        self->char_id[k] = JOINED_UNKNOWN;
    if (byte_ids(v, bmap, self->byte_map_id) < 0 || byte_ids(v, bpieces, self->byte_piece_id) < 0)
        return -1;
    if (!PyTuple_Check(merges) || PyTuple_GET_SIZE(merges) != 2) {
        PyErr_SetString(PyExc_TypeError, "merges must be (keys, ranks) or (encoding, \"<III\")");
        return -1;
    }
    if (PyUnicode_Check(PyTuple_GET_ITEM(merges, 1))) {
        Py_buffer rows;
        const unsigned char *p;
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(merges, 1), "<III") != 0) {
            PyErr_SetString(PyExc_TypeError, "merge rows must be \"<III\" (left, right, rank)");
            return -1;
        }
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(merges, 0), &rows, PyBUF_SIMPLE) < 0)
            return -1;
        if (rows.len % 12 != 0) {
            PyBuffer_Release(&rows);
            PyErr_SetString(PyExc_ValueError, "merge rows are 12 bytes each");
            return -1;
        }
        n = rows.len / 12;
        self->keys = PyMem_Malloc(sizeof(uint64_t) * (size_t)(n + 1));
        self->ranks = PyMem_Malloc(sizeof(int32_t) * (size_t)(n + 1));
        if (!self->keys || !self->ranks) {
            PyBuffer_Release(&rows);
            PyErr_NoMemory();
            return -1;
        }
        p = rows.buf;
        for (k = 0; k < n; k++, p += 12) {
            uint32_t a, b, r;
            memcpy(&a, p, 4);  /* (little-endian hosts; the rows are little-endian) */
            memcpy(&b, p + 4, 4);
            memcpy(&r, p + 8, 4);
            self->keys[k] = (uint64_t)a << 32 | b;
            self->ranks[k] = (int32_t)r;
        }
        PyBuffer_Release(&rows);
    } else {
        PyObject *ks = PySequence_Fast(PyTuple_GET_ITEM(merges, 0), "merge keys must be a sequence");
        PyObject *rs = ks == NULL ? NULL : PySequence_Fast(PyTuple_GET_ITEM(merges, 1), "ranks must be a sequence");
        if (rs == NULL) {
            Py_XDECREF(ks);
            return -1;
        }
        n = PySequence_Fast_GET_SIZE(ks);
        if (PySequence_Fast_GET_SIZE(rs) != n) {
            PyErr_SetString(PyExc_ValueError, "keys and ranks differ in length");
            goto seq_fail;
        }
        self->keys = PyMem_Malloc(sizeof(uint64_t) * (size_t)(n + 1));
        self->ranks = PyMem_Malloc(sizeof(int32_t) * (size_t)(n + 1));
        if (!self->keys || !self->ranks) {
            PyErr_NoMemory();
            goto seq_fail;
        }
        for (k = 0; k < n; k++) {
            PyObject *key = PySequence_Fast_GET_ITEM(ks, k);
            unsigned long long kv;
            int64_t r;
            if (!PyLong_Check(key)) {
                PyErr_SetString(PyExc_TypeError, "merge keys must be int");
                goto seq_fail;
            }
            kv = PyLong_AsUnsignedLongLong(key);
            if (kv == (unsigned long long)-1 && PyErr_Occurred())
                goto seq_fail;
            r = read_id(PySequence_Fast_GET_ITEM(rs, k));
            if (r < 0)
                goto seq_fail;
            self->keys[k] = kv;
            self->ranks[k] = (int32_t)(uint32_t)r;
        }
        Py_DECREF(ks);
        Py_DECREF(rs);
        goto read;
seq_fail:
        Py_DECREF(ks);
        Py_DECREF(rs);
        return -1;
    }
read:
    self->nmerges = n;
    self->sorted = 1;
    for (k = 1; k < n; k++)
        if (self->keys[k - 1] > self->keys[k]) {
            self->sorted = 0;
            break;
        }
    if (self->sorted && n > 0) {
        size_t mask;
        self->mcap = pow2_at_least((size_t)n * 2 + 1);
        mask = self->mcap - 1;
        self->mslots = PyMem_Malloc(sizeof(MSlot) * self->mcap);
        if (self->mslots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (k = 0; k < (Py_ssize_t)self->mcap; k++)
            self->mslots[k].joined = MSLOT_EMPTY;
        for (k = 0; k < n; k++) {
            size_t j = (size_t)mix64(self->keys[k]) & mask;
            if (k + PREFETCH_AHEAD < n)
                PREFETCH(&self->mslots[(size_t)mix64(self->keys[k + PREFETCH_AHEAD]) & mask]);
            while (self->mslots[j].joined != MSLOT_EMPTY && self->mslots[j].key != self->keys[k])
                j = (j + 1) & mask;
            if (self->mslots[j].joined == MSLOT_EMPTY) {  /* the first row of equal keys: lower_bound's */
                self->mslots[j].key = self->keys[k];
                self->mslots[j].rank = self->ranks[k];
                self->mslots[j].joined = JOINED_UNKNOWN;
            }
        }
    }
    self->byte_level = byte_level;
    if ((self->cache = PyDict_New()) == NULL)
        return -1;
    Py_INCREF(v);
    self->vocab = v;
    return 0;
}

static void MnnBPE_dealloc(MnnBPE *self)
{
    Py_CLEAR(self->vocab);
    Py_CLEAR(self->cache);
    PyMem_Free(self->keys);
    PyMem_Free(self->ranks);
    PyMem_Free(self->mslots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int bpe_ready(MnnBPE *self)
{
    if (self->vocab == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnBPE is not initialised");
        return 0;
    }
    return 1;
}

static PyObject *MnnBPE_tokenize(MnnBPE *self, PyObject *text)
{
    return bpe_ready(self) ? tokenize_one((PyObject *)self, text, bpe_tokenize, self->cache, NULL) : NULL;
}

static PyObject *MnnBPE_tokenize_pieces(MnnBPE *self, PyObject *args)
{
    return bpe_ready(self) ? tokenize_many((PyObject *)self, args, bpe_tokenize, self->cache, NULL) : NULL;
}

/* merge(ids) -> list: BPE._merge of a list of ids of the vocabulary. */
static PyObject *MnnBPE_merge(MnnBPE *self, PyObject *ids)
{
    IdBuf buf = {NULL, 0, 0};
    PyObject *fast, *res = NULL;
    Py_ssize_t k, n, m;
    if (!bpe_ready(self))
        return NULL;
    fast = PySequence_Fast(ids, "merge() expects a sequence of ids");
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    for (k = 0; k < n; k++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, k));
        if (x == -1 && PyErr_Occurred())
            goto done;
        if (x < 0 || x >= self->vocab->nrows) {
            PyErr_SetString(PyExc_ValueError, "merge() expects ids of the vocabulary");
            goto done;
        }
        if (idbuf_push(&buf, (int32_t)x) < 0)
            goto done;
    }
    m = bpe_merge(self, buf.p, buf.n);
    if (m >= 0)
        res = ids_out(NULL, buf.p, m);
done:
    Py_DECREF(fast);
    PyMem_Free(buf.p);
    return res;
}

static PyMethodDef MnnBPE_methods[] = {
    {"tokenize", (PyCFunction)MnnBPE_tokenize, METH_O, "tokenize(text) -> list of ids (BPE.tokenize)."},
    {"tokenize_pieces", (PyCFunction)MnnBPE_tokenize_pieces, METH_VARARGS,
     "tokenize_pieces(pieces, out): out += tokenize(piece) for each piece."},
    {"merge", (PyCFunction)MnnBPE_merge, METH_O, "merge(ids) -> list (BPE._merge)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnBPEType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnBPE",
    .tp_basicsize = sizeof(MnnBPE),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MNN's BPE model (see mnn_models.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnBPE_init,
    .tp_dealloc = (destructor)MnnBPE_dealloc,
    .tp_methods = MnnBPE_methods,
};

/* ---------------------------------------------------------------------------------------------- */
/* MnnWordPiece                                                                                    */

typedef struct {
    PyObject_HEAD
    MnnVocab *vocab;
    PyObject *prefix;      /* bytes */
    long long max_chars;
    int32_t unk;
    Py_ssize_t longest;
    PyObject *cache;
} MnnWordPiece;

static int wordpiece_tokenize(PyObject *obj, const unsigned char *u, Py_ssize_t n, IdBuf *out)
{
    MnnWordPiece *self = (MnnWordPiece *)obj;
    const unsigned char *pre = (const unsigned char *)PyBytes_AS_STRING(self->prefix);
    Py_ssize_t np = PyBytes_GET_SIZE(self->prefix), start = 0, longest, end;
    unsigned char *key;
    int32_t unk = self->unk;
    if (n == 0)
        return 1;
    if ((long long)n > self->max_chars)
        return unk != -1 ? idbuf_push(out, unk) == 0 ? 1 : -1 : 1;
    longest = self->longest < MNN_KEY_CUT ? self->longest : n;  /* (longer keys are cut by MNN's look-up) */
    key = PyMem_Malloc((size_t)(np + n + 1));
    if (key == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(key, pre, (size_t)np);
    while (start < n) {
        int32_t cur = -1;
        end = n < start + longest ? n : start + longest;
        while (end > start) {
            int32_t i;
            if (start > 0) {
                memcpy(key + np, u + start, (size_t)(end - start));
                i = vocab_find(self->vocab, key, np + end - start);
            } else {
                i = vocab_find(self->vocab, u, end);
            }
            if (i != -1 && i != unk) {
                cur = i;
                break;
            }
            end--;
        }
        if (cur == -1) {
            out->n = 0;  /* a word that cannot be covered is the unknown id alone */
            PyMem_Free(key);
            return idbuf_push(out, unk) == 0 ? 1 : -1;
        }
        if (idbuf_push(out, cur) < 0) {
            PyMem_Free(key);
            return -1;
        }
        start = end;
    }
    PyMem_Free(key);
    return 1;
}

static int MnnWordPiece_init(MnnWordPiece *self, PyObject *args, PyObject *kw)
{
    PyObject *vocab, *prefix;
    long long max_chars, unk;
    Py_ssize_t longest;
    MnnVocab *v;
    static char *names[] = {"vocab", "prefix", "max_chars", "unk_id", "longest", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!LLn", names, &vocab, &PyBytes_Type, &prefix, &max_chars, &unk,
                                     &longest))
        return -1;
    if (self->vocab != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnWordPiece is initialised once");
        return -1;
    }
    if ((v = as_vocab(vocab)) == NULL)
        return -1;
    if (unk < -1 || unk >= v->nrows) {
        PyErr_SetString(PyExc_ValueError, "unk_id must be -1 or an id of the vocabulary");
        return -1;
    }
    if ((self->cache = PyDict_New()) == NULL)
        return -1;
    Py_INCREF(v);
    self->vocab = v;
    Py_INCREF(prefix);
    self->prefix = prefix;
    self->max_chars = max_chars;
    self->unk = (int32_t)unk;
    self->longest = longest;
    return 0;
}

static void MnnWordPiece_dealloc(MnnWordPiece *self)
{
    Py_CLEAR(self->vocab);
    Py_CLEAR(self->prefix);
    Py_CLEAR(self->cache);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int wordpiece_ready(MnnWordPiece *self)
{
    if (self->vocab == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnWordPiece is not initialised");
        return 0;
    }
    return 1;
}

static PyObject *MnnWordPiece_tokenize(MnnWordPiece *self, PyObject *text)
{
    return wordpiece_ready(self) ? tokenize_one((PyObject *)self, text, wordpiece_tokenize, self->cache, NULL) : NULL;
}

static PyObject *MnnWordPiece_tokenize_pieces(MnnWordPiece *self, PyObject *args)
{
    return wordpiece_ready(self) ? tokenize_many((PyObject *)self, args, wordpiece_tokenize, self->cache, NULL) : NULL;
}

static PyMethodDef MnnWordPiece_methods[] = {
    {"tokenize", (PyCFunction)MnnWordPiece_tokenize, METH_O, "tokenize(text) -> list of ids (WordPiece.tokenize)."},
    {"tokenize_pieces", (PyCFunction)MnnWordPiece_tokenize_pieces, METH_VARARGS,
     "tokenize_pieces(pieces, out): out += tokenize(piece) for each piece."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnWordPieceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnWordPiece",
    .tp_basicsize = sizeof(MnnWordPiece),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "MNN's WordPiece model (see mnn_models.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnWordPiece_init,
    .tp_dealloc = (destructor)MnnWordPiece_dealloc,
    .tp_methods = MnnWordPiece_methods,
};

/* ---------------------------------------------------------------------------------------------- */
/* MnnUnigram                                                                                      */

typedef struct {
    PyObject_HEAD
    MnnVocab *vocab;
    PyObject *fallback;
    double *scores;          /* by id (the last row of an id), 0.0 for a hole */
    int32_t unk;
    int byte_fallback;
    int unk_score_raises;    /* the pure code reads scores[unk_id] with unk_id < 0 */
    double unk_score;
    int32_t byte_piece_id[256];
    Py_ssize_t *lengths, nlengths;
    PyObject *cache;
} MnnUnigram;

#define U_NEG (-1e18)
#define U_LOW (-1e17)

/* Unigram._tokenize: 1 done, 0 the pure code raises here (hand the piece back), -1 error. */
static int unigram_tokenize(PyObject *obj, const unsigned char *u, Py_ssize_t n, IdBuf *out)
{
    MnnUnigram *self = (MnnUnigram *)obj;
    const MnnVocab *v = self->vocab;
    double *best;
    int32_t *best_id, unk = self->unk;
    Py_ssize_t *prev, i, k, cur, start;
    int rc = 1;
    if (n == 0)
        return 1;
    best = PyMem_Malloc(sizeof(double) * (size_t)(n + 1));
    best_id = PyMem_Malloc(sizeof(int32_t) * (size_t)(n + 1));
    prev = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n + 1));
    if (!best || !best_id || !prev) {
        PyErr_NoMemory();
        rc = -1;
        goto done;
    }
    for (i = 0; i <= n; i++) {
        best[i] = U_NEG;
        best_id[i] = -1;
        prev[i] = 0;
    }
    best[0] = 0.0;
    for (i = 1; i <= n; i++) {
        double bi = best[i];
        for (k = 0; k < self->nlengths && self->lengths[k] <= i; k++) {
            Py_ssize_t j = i - self->lengths[k];
            double bj = best[j], score, s;
            int32_t fid, tid;
            if (bj <= U_LOW)
                continue;
            fid = vocab_find(v, u + j, i - j);
            if (fid != -1 && fid != unk) {
                tid = fid;
                score = self->scores[fid];
            } else if (self->byte_fallback && i - j == 1) {
                int32_t bf = self->byte_piece_id[u[j]];
                if (bf != unk) {
                    if (bf < 0) {
                        rc = 0;  /* scores[-1]: the pure code raises */
                        goto done;
                    }
                    tid = bf;
                    score = self->scores[bf];
                } else {
                    if (self->unk_score_raises) {
                        rc = 0;
                        goto done;
                    }
                    tid = unk;
                    score = self->unk_score;
                }
            } else {
                continue;
            }
            s = bj + score;
            if (s > bi || bi <= U_LOW) {
                bi = s;
                best[i] = s;
                prev[i] = j;
                best_id[i] = tid;
            }
        }
        if (bi <= U_LOW) {
            Py_ssize_t char_len = 1;
            double p;
            for (k = 1; k < 5; k++) {
                unsigned c;
                if (i - k < 0)
                    break;
                c = u[i - k];
                if ((c & 0xC0) != 0x80) {
                    Py_ssize_t expected = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
                    if (expected == k)
                        char_len = k;
                    break;
                }
            }
            p = best[i - char_len];
            if (p > U_LOW) {
                if (self->unk_score_raises) {
                    rc = 0;
                    goto done;
                }
                best[i] = p + self->unk_score;
                prev[i] = i - char_len;
                best_id[i] = unk;
            }
        }
    }
    if (best[n] <= U_LOW)
        goto done;
    start = out->n;
    for (cur = n; cur > 0; cur = prev[cur]) {
        int32_t tid = best_id[cur];
        if (out->n == start || tid != unk || out->p[out->n - 1] != unk)
            if (idbuf_push(out, tid) < 0) {
                rc = -1;
                goto done;
            }
    }
    for (i = start, k = out->n - 1; i < k; i++, k--) {
        int32_t t = out->p[i];
        out->p[i] = out->p[k];
        out->p[k] = t;
    }
done:
    PyMem_Free(best);
    PyMem_Free(best_id);
    PyMem_Free(prev);
    return rc;
}

static int MnnUnigram_init(MnnUnigram *self, PyObject *args, PyObject *kw)
{
    PyObject *vocab, *scores, *lengths, *bpieces, *fallback, *fs = NULL, *fl = NULL;
    long long unk;
    int byte_fallback;
    Py_ssize_t k, n;
    MnnVocab *v;
    static char *names[] = {"vocab", "scores", "unk_id", "byte_fallback", "lengths", "byte_pieces", "fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOLpOOO", names, &vocab, &scores, &unk, &byte_fallback, &lengths,
                                     &bpieces, &fallback))
        return -1;
    if (self->vocab != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnUnigram is initialised once");
        return -1;
    }
    if ((v = as_vocab(vocab)) == NULL)
        return -1;
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return -1;
    }
    if (unk < INT32_MIN || unk > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "unk_id must be an int32");
        return -1;
    }
    if (byte_ids(v, bpieces, self->byte_piece_id) < 0)
        return -1;
    n = v->nrows;
    if (PyObject_CheckBuffer(scores)) {  /* a table's typed column: native doubles */
        Py_buffer sb;
        if (PyObject_GetBuffer(scores, &sb, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
            return -1;
        if (sb.itemsize != 8 || sb.format == NULL || strcmp(sb.format, "d") != 0 || sb.len / 8 != n) {
            PyBuffer_Release(&sb);
            PyErr_SetString(PyExc_ValueError, "a scores buffer holds one native double ('d') per row");
            return -1;
        }
        self->scores = PyMem_Calloc((size_t)(n + 1), sizeof(double));
        if (self->scores == NULL) {
            PyBuffer_Release(&sb);
            PyErr_NoMemory();
            return -1;
        }
        for (k = 0; k < n; k++)  /* rows in order: the last row of an id wins */
            memcpy(&self->scores[v->rows[k].id], (const char *)sb.buf + 8 * k, 8);
        PyBuffer_Release(&sb);
    } else {
        fs = PySequence_Fast(scores, "scores must be a sequence");
        if (fs == NULL)
            return -1;
        if (PySequence_Fast_GET_SIZE(fs) != n) {
            PyErr_SetString(PyExc_ValueError, "one score per row");
            goto fail;
        }
        self->scores = PyMem_Calloc((size_t)(n + 1), sizeof(double));
        if (self->scores == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        for (k = 0; k < n; k++) {
            double s = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fs, k));
            if (s == -1.0 && PyErr_Occurred())
                goto fail;
            self->scores[v->rows[k].id] = s;  /* rows in order: the last row of an id wins */
        }
        Py_CLEAR(fs);
    }
    fl = PySequence_Fast(lengths, "lengths must be a sequence");
    if (fl == NULL)
        goto fail;
    self->nlengths = PySequence_Fast_GET_SIZE(fl);
    self->lengths = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(self->nlengths + 1));
    if (self->lengths == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (k = 0; k < self->nlengths; k++) {
        Py_ssize_t x = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fl, k));
        if (x == -1 && PyErr_Occurred())
            goto fail;
        if (x < 1 || (k > 0 && x <= self->lengths[k - 1])) {
            PyErr_SetString(PyExc_ValueError, "lengths must be positive and ascending");
            goto fail;
        }
        self->lengths[k] = x;
    }
    Py_CLEAR(fl);
    self->unk = (int32_t)unk;
    self->byte_fallback = byte_fallback;
    /* Unigram._unk_score: scores[unk_id] when unk_id < len(scores) (raising below 0), else -10 */
    self->unk_score_raises = unk < 0;
    self->unk_score = unk >= n ? -10.0 : unk >= 0 ? self->scores[unk] : 0.0;
    if ((self->cache = PyDict_New()) == NULL)
        return -1;
    Py_INCREF(v);
    self->vocab = v;
    Py_INCREF(fallback);
    self->fallback = fallback;
    return 0;
fail:
    Py_XDECREF(fs);
    Py_XDECREF(fl);
    return -1;
}

static int MnnUnigram_traverse(MnnUnigram *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    return 0;
}

static int MnnUnigram_clear(MnnUnigram *self)
{
    Py_CLEAR(self->fallback);
    return 0;
}

static void MnnUnigram_dealloc(MnnUnigram *self)
{
    PyObject_GC_UnTrack(self);
    MnnUnigram_clear(self);
    Py_CLEAR(self->vocab);
    Py_CLEAR(self->cache);
    PyMem_Free(self->scores);
    PyMem_Free(self->lengths);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int unigram_ready(MnnUnigram *self)
{
    if (self->vocab == NULL || self->fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnUnigram is not initialised");
        return 0;
    }
    return 1;
}

static PyObject *MnnUnigram_tokenize(MnnUnigram *self, PyObject *text)
{
    return unigram_ready(self) ? tokenize_one((PyObject *)self, text, unigram_tokenize, self->cache, self->fallback) : NULL;
}

static PyObject *MnnUnigram_tokenize_pieces(MnnUnigram *self, PyObject *args)
{
    return unigram_ready(self) ? tokenize_many((PyObject *)self, args, unigram_tokenize, self->cache, self->fallback) : NULL;
}

static PyObject *MnnUnigram_scores(MnnUnigram *self, PyObject *unused)
{
    PyObject *out;
    Py_ssize_t k;
    if (!unigram_ready(self))
        return NULL;
    out = PyList_New(self->vocab->nrows);
    for (k = 0; out != NULL && k < self->vocab->nrows; k++) {
        PyObject *x = PyFloat_FromDouble(self->scores[k]);
        if (x == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, k, x);
    }
    return out;
}

static PyMethodDef MnnUnigram_methods[] = {
    {"tokenize", (PyCFunction)MnnUnigram_tokenize, METH_O, "tokenize(text) -> list of ids (Unigram.tokenize)."},
    {"tokenize_pieces", (PyCFunction)MnnUnigram_tokenize_pieces, METH_VARARGS,
     "tokenize_pieces(pieces, out): out += tokenize(piece) for each piece."},
    {"scores", (PyCFunction)MnnUnigram_scores, METH_NOARGS, "scores() -> list of each id's score."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnUnigramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnUnigram",
    .tp_basicsize = sizeof(MnnUnigram),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "MNN's Unigram model (see mnn_models.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnUnigram_init,
    .tp_dealloc = (destructor)MnnUnigram_dealloc,
    .tp_traverse = (traverseproc)MnnUnigram_traverse,
    .tp_clear = (inquiry)MnnUnigram_clear,
    .tp_methods = MnnUnigram_methods,
};

/* ---------------------------------------------------------------------------------------------- */

int mnn_models_register(PyObject *module)
{
    PyTypeObject *types[] = {&MnnVocabType, &MnnBPEType, &MnnWordPieceType, &MnnUnigramType};
    const char *names[] = {"MnnVocab", "MnnBPE", "MnnWordPiece", "MnnUnigram"};
    int k;
    for (k = 0; k < 4; k++) {
        if (PyType_Ready(types[k]) < 0)
            return -1;
        Py_INCREF(types[k]);
        if (PyModule_AddObject(module, names[k], (PyObject *)types[k]) < 0) {
            Py_DECREF(types[k]);
            return -1;
        }
    }
    return 0;
}
