/* Unigram: the lattice over a piece's UTF-8 on a byte trie of the pieces. */
#include "speedups.h"

/* A byte trie over the pieces sorted by bytes, expanded as text reaches it: a node is the run of
 * pieces that start with its prefix; its children (one per next byte, found by binary search in
 * the run) are made the first time the lattice asks for one, next to each other, so a child is a
 * binary search among at most 256 labels.  Building it is one sort (in Python) and nothing more;
 * a line of text expands a few hundred nodes. */
typedef struct {
    uint32_t lo, hi;  /* the pieces (indices into the sorted keys) that start with this prefix */
    uint32_t depth;   /* the prefix's length in bytes */
    int32_t row;      /* the piece equal to the prefix, or -1 */
    int32_t first;    /* the first child's index; -1 until expanded */
    uint16_t nchild;
    uint8_t label;    /* the byte from the parent */
} TrieNode;

typedef struct {
    PyObject_HEAD
    PyObject *keys;     /* the sorted pieces (kept alive: kp points into them) */
    const unsigned char **kp;
    uint32_t *klen;
    int32_t *krow;
    TrieNode *nodes;
    size_t nnodes, ncap;
    int64_t *ids;       /* per row */
    double *score;      /* per row, valid when known[row] */
    char *known;
    int64_t unk_id;
    double unk_score;
    int unk_known;
    PyObject *score_fn, *unk_fn, *fused_fn;
} UnigramCore;

/* Make node idx's children; 0, or -1 with MemoryError. */
static int trie_expand(UnigramCore *self, uint32_t idx)
{
    TrieNode nd = self->nodes[idx];
    uint32_t i = nd.lo, d = nd.depth;
    size_t start = self->nnodes;
    if (i < nd.hi && self->klen[i] == d)
        i++;  /* the piece equal to the prefix sorts first; the others are longer */
    while (i < nd.hi) {
        unsigned char c = self->kp[i][d];
        uint32_t lo = i + 1, hi = nd.hi;
        TrieNode *ch;
        while (lo < hi) {  /* the end of the run whose byte at d is c */
            uint32_t m = lo + (hi - lo) / 2;
            if (self->kp[m][d] <= c)
                lo = m + 1;
            else
                hi = m;
        }
        if (self->nnodes == self->ncap) {
            size_t ncap = self->ncap * 2;
            TrieNode *n = PyMem_Realloc(self->nodes, ncap * sizeof(TrieNode));
            if (n == NULL) {
                self->nnodes = start;
                PyErr_NoMemory();
                return -1;
            }
            self->nodes = n;
            self->ncap = ncap;
        }
        ch = &self->nodes[self->nnodes++];
        ch->lo = i;
        ch->hi = lo;
        ch->depth = d + 1;
        ch->row = self->klen[i] == d + 1 ? self->krow[i] : -1;
        ch->first = -1;
        ch->nchild = 0;
        ch->label = c;
        i = lo;
    }
    self->nodes[idx].first = (int32_t)start;
    self->nodes[idx].nchild = (uint16_t)(self->nnodes - start);
    return 0;
}

/* The child of node idx by byte c: its index, -1 when there is none, -2 on error. */
static inline int64_t trie_child(UnigramCore *self, uint32_t idx, unsigned char c)
{
    uint32_t lo, hi;
    if (self->nodes[idx].first < 0 && trie_expand(self, idx) < 0)
        return -2;
    lo = (uint32_t)self->nodes[idx].first;
    hi = lo + self->nodes[idx].nchild;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        unsigned char l = self->nodes[m].label;
        if (l == c)
            return m;
        if (l < c)
            lo = m + 1;
        else
            hi = m;
    }
    return -1;
}

static double row_score(UnigramCore *self, int32_t row, int *err)
{
    PyObject *r, *a;
    double x;
    if (self->known[row])
        return self->score[row];
    a = PyLong_FromLong(row);
    if (a == NULL) {
        *err = 1;
        return 0.0;
    }
    r = PyObject_CallOneArg(self->score_fn, a);
    Py_DECREF(a);
    if (r == NULL) {
        *err = 1;
        return 0.0;
    }
    x = PyFloat_AsDouble(r);
    Py_DECREF(r);
    if (x == -1.0 && PyErr_Occurred()) {
        *err = 1;
        return 0.0;
    }
    self->score[row] = x;
    self->known[row] = 1;
    return x;
}

static double unk_node_score(UnigramCore *self, int *err)
{
    PyObject *r;
    double x;
    if (self->unk_known)
        return self->unk_score;
    r = PyObject_CallNoArgs(self->unk_fn);
    if (r == NULL) {
        *err = 1;
        return 0.0;
    }
    x = PyFloat_AsDouble(r);
    Py_DECREF(r);
    if (x == -1.0 && PyErr_Occurred()) {
        *err = 1;
        return 0.0;
    }
    self->unk_score = x;
    self->unk_known = 1;
    return x;
}

static inline Py_ssize_t utf8_len(unsigned char b)
{
    return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* The same lattice as Unigram.segment (HF encode_optimized): starts in order, then lengths in
 * order, a node keeping the first best score; a character that starts no one-character piece is
 * an unknown node; positions are byte offsets at character boundaries. */
static PyObject *UnigramCore_word(UnigramCore *self, PyObject *s)
{
    const char *u;
    Py_ssize_t n, i, e, k;
    double *bscore = NULL;
    Py_ssize_t *bstart = NULL;
    int64_t *bid = NULL;
    PyObject *out = NULL, *res = NULL;
    int err = 0;
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "word() expects str");
        return NULL;
    }
    u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) {  /* lone surrogates: the pure path handles them */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (n == 0)
        return PyTuple_New(0);
    bscore = PyMem_Malloc(sizeof(double) * (size_t)(n + 1));
    bstart = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n + 1));
    bid = PyMem_Malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (bscore == NULL || bstart == NULL || bid == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i <= n; i++) {
        bscore[i] = 0.0;
        bstart[i] = -1;
        bid[i] = 0;
    }
    for (i = 0; i < n; i += utf8_len((unsigned char)u[i])) {
        double base = bscore[i], sc;
        Py_ssize_t j = i + utf8_len((unsigned char)u[i]);
        int64_t node = 0;
        /* the first character: a piece, else an unknown node */
        for (k = i; k < j && node >= 0; k++)
            node = trie_child(self, (uint32_t)node, (unsigned char)u[k]);
        if (node == -2)
            goto done;
        if (node < 0 || self->nodes[node].row < 0) {
            sc = unk_node_score(self, &err) + base;
            if (err)
                goto done;
            if (bstart[j] < 0 || sc > bscore[j]) {
                bscore[j] = sc;
                bstart[j] = i;
                bid[j] = self->unk_id;
            }
            if (node < 0)
                continue;
        } else {
            int32_t r = self->nodes[node].row;
            sc = row_score(self, r, &err) + base;
            if (err)
                goto done;
            if (bstart[j] < 0 || sc > bscore[j]) {
                bscore[j] = sc;
                bstart[j] = i;
                bid[j] = self->ids[r];
            }
        }
        /* longer pieces: one character more at a time, while the text is a prefix of some piece */
        while (j < n) {
            Py_ssize_t j2 = j + utf8_len((unsigned char)u[j]);
            int32_t r;
            if (j2 > n)
                break;
            for (k = j; k < j2 && node >= 0; k++)
                node = trie_child(self, (uint32_t)node, (unsigned char)u[k]);
            if (node == -2)
                goto done;
            if (node < 0)
                break;
            j = j2;
            r = self->nodes[node].row;
            if (r >= 0) {
                sc = row_score(self, r, &err) + base;
                if (err)
                    goto done;
                if (bstart[j] < 0 || sc > bscore[j]) {
                    bscore[j] = sc;
                    bstart[j] = i;
                    bid[j] = self->ids[r];
                }
            }
        }
    }
    /* back from the end; runs of unknown-id nodes are fused and handed to fused() */
    {
        Py_ssize_t cnt = 0, w;
        Py_ssize_t *ends;
        for (e = n; e > 0; e = bstart[e])
            cnt++;
        ends = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(cnt + 1));
        if (ends == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        w = cnt;
        ends[cnt] = n;
        for (e = n; e > 0; e = bstart[e])
            ends[--w] = bstart[e];  /* ends[0..cnt] are the node boundaries, in order */
        out = PyList_New(0);
        if (out == NULL) {
            PyMem_Free(ends);
            goto done;
        }
        w = 0;
        while (w < cnt) {
            Py_ssize_t a = ends[w], b = ends[w + 1];
            if (bid[b] == self->unk_id) {
                PyObject *piece, *tup;
                int rc;
                Py_ssize_t z = w + 1;
                while (z < cnt && bid[ends[z + 1]] == self->unk_id)
                    z++;
                b = ends[z];
                piece = PyUnicode_DecodeUTF8(u + a, b - a, "strict");
                if (piece == NULL) {
                    PyMem_Free(ends);
                    goto done;
                }
                tup = PyObject_CallOneArg(self->fused_fn, piece);
                Py_DECREF(piece);
                if (tup == NULL) {
                    PyMem_Free(ends);
                    goto done;
                }
                rc = extend_ids(out, tup, "fused() must return a sequence of ids");
                Py_DECREF(tup);
                if (rc < 0) {
                    PyMem_Free(ends);
                    goto done;
                }
                w = z;
            } else {
                PyObject *v = PyLong_FromLongLong(bid[b]);
                int rc;
                if (v == NULL) {
                    PyMem_Free(ends);
                    goto done;
                }
                rc = PyList_Append(out, v);
                Py_DECREF(v);
                if (rc < 0) {
                    PyMem_Free(ends);
                    goto done;
                }
                w++;
            }
        }
        PyMem_Free(ends);
        res = PyList_AsTuple(out);
    }
done:
    Py_XDECREF(out);
    PyMem_Free(bscore);
    PyMem_Free(bstart);
    PyMem_Free(bid);
    return res;
}

static int UnigramCore_init(UnigramCore *self, PyObject *args, PyObject *kw)
{
    PyObject *keys, *rows, *ids, *score, *unk, *fused;
    long long unk_id;
    Py_ssize_t nk, nr, i;
    static char *names[] = {"keys", "rows", "ids", "unk_id", "score", "unk_score", "fused", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!O!LOOO", names, &PyList_Type, &keys, &PyList_Type, &rows,
                                     &PyList_Type, &ids, &unk_id, &score, &unk, &fused))
        return -1;
    if (self->nodes != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "UnigramCore is initialised once");
        return -1;
    }
    nk = PyList_GET_SIZE(keys);
    nr = PyList_GET_SIZE(ids);
    if (PyList_GET_SIZE(rows) != nk || nr > 0x7FFFFFFF || nk > 0x7FFFFFFF) {
        PyErr_SetString(PyExc_ValueError, "keys and rows differ in length");
        return -1;
    }
    self->kp = PyMem_Malloc(sizeof(*self->kp) * (size_t)(nk + 1));
    self->klen = PyMem_Malloc(sizeof(uint32_t) * (size_t)(nk + 1));
    self->krow = PyMem_Malloc(sizeof(int32_t) * (size_t)(nk + 1));
    self->ncap = 1024;
    self->nodes = PyMem_Malloc(sizeof(TrieNode) * self->ncap);
    self->ids = PyMem_Malloc(sizeof(int64_t) * (size_t)(nr + 1));
    self->score = PyMem_Malloc(sizeof(double) * (size_t)(nr + 1));
    self->known = PyMem_Calloc((size_t)nr + 1, 1);
    if (!self->kp || !self->klen || !self->krow || !self->nodes || !self->ids || !self->score || !self->known) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < nk; i++) {
        PyObject *b = PyList_GET_ITEM(keys, i);
        long r;
        if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) > 0x7FFFFFFF) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            return -1;
        }
        self->kp[i] = (const unsigned char *)PyBytes_AS_STRING(b);
        self->klen[i] = (uint32_t)PyBytes_GET_SIZE(b);
        if (i > 0) {  /* sorted and distinct: what the runs of the trie rely on */
            uint32_t m = self->klen[i - 1] < self->klen[i] ? self->klen[i - 1] : self->klen[i];
            int c = memcmp(self->kp[i - 1], self->kp[i], m);
            if (c > 0 || (c == 0 && self->klen[i - 1] >= self->klen[i])) {
                PyErr_SetString(PyExc_ValueError, "keys must be sorted and distinct");
                return -1;
            }
        }
        r = PyLong_AsLong(PyList_GET_ITEM(rows, i));
        if (r == -1 && PyErr_Occurred())
            return -1;
        if (r < 0 || r >= nr) {
            PyErr_SetString(PyExc_ValueError, "row out of range");
            return -1;
        }
        self->krow[i] = (int32_t)r;
    }
    for (i = 0; i < nr; i++) {
        long long v = PyLong_AsLongLong(PyList_GET_ITEM(ids, i));
        if (v == -1 && PyErr_Occurred())
            return -1;
        self->ids[i] = v;
    }
    /* the root: every piece; its own (an empty piece) matches no text */
    self->nodes[0].lo = 0;
    self->nodes[0].hi = (uint32_t)nk;
    self->nodes[0].depth = 0;
    self->nodes[0].row = -1;
    self->nodes[0].first = -1;
    self->nodes[0].nchild = 0;
    self->nodes[0].label = 0;
    self->nnodes = 1;
    self->unk_id = unk_id;
    self->unk_known = 0;
    Py_INCREF(keys);
    Py_INCREF(score);
    Py_INCREF(unk);
    Py_INCREF(fused);
    self->keys = keys;
    self->score_fn = score;
    self->unk_fn = unk;
    self->fused_fn = fused;
    return 0;
}

static int UnigramCore_traverse(UnigramCore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->keys);
    Py_VISIT(self->score_fn);
    Py_VISIT(self->unk_fn);
    Py_VISIT(self->fused_fn);
    return 0;
}

static int UnigramCore_clear(UnigramCore *self)
{
    Py_CLEAR(self->score_fn);
    Py_CLEAR(self->unk_fn);
    Py_CLEAR(self->fused_fn);
    return 0;
}

static void UnigramCore_dealloc(UnigramCore *self)
{
    PyObject_GC_UnTrack(self);
    UnigramCore_clear(self);
    Py_CLEAR(self->keys);  /* after the trie: kp points into these */
    PyMem_Free(self->kp);
    PyMem_Free(self->klen);
    PyMem_Free(self->krow);
    PyMem_Free(self->nodes);
    PyMem_Free(self->ids);
    PyMem_Free(self->score);
    PyMem_Free(self->known);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef UnigramCore_methods[] = {
    {"word", (PyCFunction)UnigramCore_word, METH_O,
     "The ids of one piece (a tuple), or None when the piece is not UTF-8 (lone surrogates)."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject UnigramCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.UnigramCore",
    .tp_basicsize = sizeof(UnigramCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The lattice of a Unigram model (see the module's documentation).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)UnigramCore_init,
    .tp_dealloc = (destructor)UnigramCore_dealloc,
    .tp_traverse = (traverseproc)UnigramCore_traverse,
    .tp_clear = (inquiry)UnigramCore_clear,
    .tp_methods = UnigramCore_methods,
};
