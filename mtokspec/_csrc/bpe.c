/* BPE: the merge loop, the U+2581 chunking and the loop over pieces with the model's cache. */
#include "speedups.h"

/* 16 bytes a slot: the table of a 60k-merge vocabulary is 2 MB, and building it is bound by
 * the cache misses of its random writes. */
#define EMPTY_KEY UINT64_MAX  /* ids 0xFFFFFFFF on both sides: such a table stays on the pure path */
#define NO_MID UINT32_MAX     /* not resolved yet (an output id 0xFFFFFFFF is only asked again) */
typedef struct {
    uint64_t key;  /* left | right << 32 */
    uint32_t rank;
    uint32_t mid;  /* the merge's output id, NO_MID until resolved */
} MergeSlot;

typedef struct {
    uint32_t cp;
    int32_t len;   /* -1: empty slot; else 0..4 symbols */
    uint32_t ids[4];
} SpellSlot;

typedef struct {
    PyObject_HEAD
    MergeSlot *merges;
    size_t mcap;
    SpellSlot *spell;
    size_t scap, sused;
    PyObject *spell_fn;
    PyObject *resolve_fn;
    uint32_t bytemap[256];  /* byte -> its GPT-2 character (words() with mapped=True) */
} BPECore;

static MergeSlot *merge_find(BPECore *self, uint64_t key)
{
    size_t mask = self->mcap - 1, i = (size_t)mix64(key) & mask;
    for (;;) {
        MergeSlot *s = &self->merges[i];
        if (s->key == EMPTY_KEY)
            return NULL;
        if (s->key == key)
            return s;
        i = (i + 1) & mask;
    }
}

static SpellSlot *spell_find(SpellSlot *tab, size_t cap, uint32_t cp)
{
    size_t mask = cap - 1, i = (size_t)mix64(cp) & mask;
    for (;;) {
        SpellSlot *s = &tab[i];
        if (s->len < 0 || s->cp == cp)
            return s;
        i = (i + 1) & mask;
    }
}

static int spell_grow(BPECore *self)
{
    size_t ncap = self->scap * 2, i;
    SpellSlot *n = PyMem_Malloc(ncap * sizeof(SpellSlot));
    if (n == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < ncap; i++)
        n[i].len = -1;
    for (i = 0; i < self->scap; i++) {
        SpellSlot *s = &self->spell[i];
        if (s->len >= 0)
            *spell_find(n, ncap, s->cp) = *s;
    }
    PyMem_Free(self->spell);
    self->spell = n;
    self->scap = ncap;
    return 0;
}

/* The symbols of code point cp, asked of spell() the first time (written to out, count returned;
 * -1 on error). */
static int bpe_spell(BPECore *self, uint32_t cp, uint32_t *out)
{
    SpellSlot *s = spell_find(self->spell, self->scap, cp);
    PyObject *c, *r;
    Py_ssize_t n, k;
    uint32_t ids[4];
    if (s->len >= 0) {
        memcpy(out, s->ids, sizeof(uint32_t) * (size_t)s->len);
        return s->len;
    }
    c = PyUnicode_FromOrdinal((int)cp);
    if (c == NULL)
        return -1;
    r = PyObject_CallOneArg(self->spell_fn, c);
    Py_DECREF(c);
    if (r == NULL)
        return -1;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) > 4) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "spell() must return a tuple of at most 4 ids");
        return -1;
    }
    n = PyTuple_GET_SIZE(r);
    for (k = 0; k < n; k++) {
        int64_t v = read_id(PyTuple_GET_ITEM(r, k));
        if (v < 0) {
            Py_DECREF(r);
            return -1;
        }
        ids[k] = (uint32_t)v;
    }
    Py_DECREF(r);
    /* the callback may have run other threads that filled the table: look again */
    if ((self->sused + 1) * 2 > self->scap && spell_grow(self) < 0)
        return -1;
    s = spell_find(self->spell, self->scap, cp);
    if (s->len < 0) {
        s->cp = cp;
        s->len = (int32_t)n;
        memcpy(s->ids, ids, sizeof(uint32_t) * (size_t)n);
        self->sused++;
    }
    memcpy(out, ids, sizeof(uint32_t) * (size_t)n);
    return (int)n;
}

typedef struct {
    int64_t rank;
    Py_ssize_t pos;
} HeapItem;

static inline int heap_less(const HeapItem *a, const HeapItem *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(HeapItem *h, Py_ssize_t *n, int64_t rank, Py_ssize_t pos)
{
    Py_ssize_t i = (*n)++;
    HeapItem it = {rank, pos};
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!heap_less(&it, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = it;
}

static HeapItem heap_pop(HeapItem *h, Py_ssize_t *n)
{
    HeapItem top = h[0], last = h[--(*n)];
    Py_ssize_t i = 0, m = *n;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && heap_less(&h[c + 1], &h[c]))
            c++;
        if (!heap_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (m > 0)
        h[i] = last;
    return top;
}

/* BPE over syms[0..n) in place (HF word.rs order: lowest rank, then leftmost); the result count,
 * or -1 with an error set.  A merge's output is asked of resolve() the first time it is applied. */
static Py_ssize_t bpe_merge(BPECore *self, uint32_t *syms, Py_ssize_t n)
{
    Py_ssize_t *prv, *nxt, hn = 0, i, out;
    HeapItem *heap;
    char *dead;
    void *block;
    if (n < 2)
        return n;
    block = PyMem_Malloc((size_t)n * (2 * sizeof(Py_ssize_t) + 1) + (size_t)(3 * n) * sizeof(HeapItem));
    if (block == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    heap = (HeapItem *)block;
    prv = (Py_ssize_t *)(heap + 3 * n);
    nxt = prv + n;
    dead = (char *)(nxt + n);
    for (i = 0; i < n; i++) {
        prv[i] = i - 1;
        nxt[i] = i + 1 < n ? i + 1 : -1;
        dead[i] = 0;
    }
    for (i = 0; i + 1 < n; i++) {
        MergeSlot *s = merge_find(self, (uint64_t)syms[i] | (uint64_t)syms[i + 1] << 32);
        if (s != NULL)
            heap_push(heap, &hn, s->rank, i);
    }
    while (hn > 0) {
        HeapItem top = heap_pop(heap, &hn);
        Py_ssize_t p = top.pos, q;
        MergeSlot *s;
        uint64_t key;
        int64_t mid;
        if (dead[p] || (q = nxt[p]) < 0)
            continue;
        key = (uint64_t)syms[p] | (uint64_t)syms[q] << 32;
        s = merge_find(self, key);
        if (s == NULL || s->rank != top.rank)
            continue;  /* stale: the pair there has changed */
        mid = s->mid;
        if (s->mid == NO_MID) {
            PyObject *k = PyLong_FromUnsignedLongLong(key), *r;
            if (k == NULL)
                goto fail;
            r = PyObject_CallOneArg(self->resolve_fn, k);
            Py_DECREF(k);
            if (r == NULL)
                goto fail;
            mid = read_id(r);
            Py_DECREF(r);
            if (mid < 0)
                goto fail;
            s = merge_find(self, key);  /* the table never moves; found again for clarity */
            s->mid = (uint32_t)mid;
        }
        syms[p] = (uint32_t)mid;
        dead[q] = 1;
        nxt[p] = nxt[q];
        if (nxt[q] >= 0)
            prv[nxt[q]] = p;
        if (prv[p] >= 0) {
            s = merge_find(self, (uint64_t)syms[prv[p]] | (uint64_t)syms[p] << 32);
            if (s != NULL)
                heap_push(heap, &hn, s->rank, prv[p]);
        }
        if (nxt[p] >= 0) {
            s = merge_find(self, (uint64_t)syms[p] | (uint64_t)syms[nxt[p]] << 32);
            if (s != NULL)
                heap_push(heap, &hn, s->rank, p);
        }
    }
    out = 0;
    for (i = 0; i >= 0; i = nxt[i])
        syms[out++] = syms[i];
    PyMem_Free(block);
    return out;
fail:
    PyMem_Free(block);
    return -1;
}

/* The merged ids of the n symbols in syms (a buffer of 4 * n) as a tuple; frees syms unless it is
 * stack.  NULL on error. */
static PyObject *bpe_finish(BPECore *self, uint32_t *syms, uint32_t *stack, Py_ssize_t m)
{
    PyObject *tup = NULL;
    Py_ssize_t i;
    m = bpe_merge(self, syms, m);
    if (m >= 0 && (tup = PyTuple_New(m)) != NULL) {
        for (i = 0; i < m; i++) {
            PyObject *v = PyLong_FromUnsignedLong(syms[i]);
            if (v == NULL) {
                Py_CLEAR(tup);
                break;
            }
            PyTuple_SET_ITEM(tup, i, v);
        }
    }
    if (syms != stack)
        PyMem_Free(syms);
    return tup;
}

#define STACK_SYMS 256

/* The ids of the piece s (its characters spelled) as a tuple (new reference), NULL on error. */
static PyObject *bpe_word_text(BPECore *self, PyObject *s)
{
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), m = 0, i;
    uint32_t stack[STACK_SYMS], *syms = stack;
    if (n * 4 > STACK_SYMS && (syms = PyMem_Malloc(sizeof(uint32_t) * (size_t)n * 4)) == NULL)
        return PyErr_NoMemory();
    for (i = 0; i < n; i++) {
        int k = bpe_spell(self, PyUnicode_READ(kind, data, i), syms + m);
        if (k < 0) {
            if (syms != stack)
                PyMem_Free(syms);
            return NULL;
        }
        m += k;
    }
    return bpe_finish(self, syms, stack, m);
}

/* The ids of a byte-level piece: its UTF-8 bytes u[0:n), each spelled as its GPT-2 character. */
static PyObject *bpe_word_bytes(BPECore *self, const unsigned char *u, Py_ssize_t n)
{
    Py_ssize_t m = 0, i;
    uint32_t stack[STACK_SYMS], *syms = stack;
    if (n * 4 > STACK_SYMS && (syms = PyMem_Malloc(sizeof(uint32_t) * (size_t)n * 4)) == NULL)
        return PyErr_NoMemory();
    for (i = 0; i < n; i++) {
        int k = bpe_spell(self, self->bytemap[u[i]], syms + m);
        if (k < 0) {
            if (syms != stack)
                PyMem_Free(syms);
            return NULL;
        }
        m += k;
    }
    return bpe_finish(self, syms, stack, m);
}

/* The ids of a raw piece of a byte-level model (mapped here). */
static PyObject *bpe_word_mapped(BPECore *self, PyObject *p)
{
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(p, &n);
    PyObject *b, *r;
    if (u != NULL)
        return bpe_word_bytes(self, (const unsigned char *)u, n);
    PyErr_Clear();  /* lone surrogates: their surrogatepass bytes, as byte_level_map */
    b = PyUnicode_AsEncodedString(p, "utf-8", "surrogatepass");
    if (b == NULL)
        return NULL;
    r = bpe_word_bytes(self, (const unsigned char *)PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return r;
}

static PyObject *BPECore_word(BPECore *self, PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "word() expects str");
        return NULL;
    }
    return bpe_word_text(self, s);
}

/* cache[key] or a fresh result of word(key), cached (the cache cleared when full); then appended
 * to out.  0, or -1 on error. */
static int cached_extend(BPECore *self, PyObject *key, int mapped, PyObject *cache, Py_ssize_t cache_max,
                         PyObject *out)
{
    PyObject *r = PyDict_GetItemWithError(cache, key);
    int rc;
    if (r != NULL) {
        Py_INCREF(r);
    } else {
        if (PyErr_Occurred())
            return -1;
        r = mapped ? bpe_word_mapped(self, key) : bpe_word_text(self, key);
        if (r == NULL)
            return -1;
        if (PyDict_GET_SIZE(cache) >= cache_max)
            PyDict_Clear(cache);
        if (PyDict_SetItem(cache, key, r) < 0) {
            Py_DECREF(r);
            return -1;
        }
    }
    rc = extend_ids(out, r, "a cached result must be a sequence of ids");
    Py_DECREF(r);
    return rc;
}

#define SP 0x2581

static PyObject *BPECore_text(BPECore *self, PyObject *args)
{
    PyObject *s, *cache, *out;
    Py_ssize_t cache_max, n, i, start;
    int kind;
    const void *data;
    if (!PyArg_ParseTuple(args, "UO!nO!", &s, &PyDict_Type, &cache, &cache_max, &PyList_Type, &out))
        return NULL;
    n = PyUnicode_GET_LENGTH(s);
    kind = PyUnicode_KIND(s);
    data = PyUnicode_DATA(s);
    start = 0;
    for (i = 1; i <= n; i++) {
        if (i == n || (PyUnicode_READ(kind, data, i) == SP && PyUnicode_READ(kind, data, i - 1) != SP)) {
            PyObject *chunk = PyUnicode_Substring(s, start, i);
            int rc;
            if (chunk == NULL)
                return NULL;
            rc = cached_extend(self, chunk, 0, cache, cache_max, out);
            Py_DECREF(chunk);
            if (rc < 0)
                return NULL;
            start = i;
        }
    }
    Py_RETURN_NONE;
}

static PyObject *BPECore_words(BPECore *self, PyObject *args)
{
    PyObject *pieces, *cache, *out, *seq;
    Py_ssize_t cache_max, n, i;
    int mapped;
    if (!PyArg_ParseTuple(args, "OO!nO!p", &pieces, &PyDict_Type, &cache, &cache_max, &PyList_Type, &out, &mapped))
        return NULL;
    seq = PySequence_Fast(pieces, "words() expects a sequence of str");
    if (seq == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    for (i = 0; i < n; i++) {
        PyObject *p = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(p)) {
            PyErr_SetString(PyExc_TypeError, "words() expects a sequence of str");
            goto fail;
        }
        if (cached_extend(self, p, mapped, cache, cache_max, out) < 0)
            goto fail;
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    return NULL;
}

static inline uint32_t load_u32le(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One merge into the table; a repeated pair keeps its highest rank (HF keeps the later entry). */
static int merge_put(BPECore *self, uint64_t key, long long rank)
{
    size_t mask = self->mcap - 1, j;
    if (key == EMPTY_KEY || rank < 0 || rank > 0xFFFFFFFFLL) {
        PyErr_SetString(PyExc_OverflowError, "a merge this table cannot hold");
        return -1;
    }
    j = (size_t)mix64(key) & mask;
    while (self->merges[j].key != EMPTY_KEY && self->merges[j].key != key)
        j = (j + 1) & mask;
    if (self->merges[j].key == key) {
        if ((uint32_t)rank > self->merges[j].rank)
            self->merges[j].rank = (uint32_t)rank;
        return 0;
    }
    self->merges[j].key = key;
    self->merges[j].rank = (uint32_t)rank;
    self->merges[j].mid = NO_MID;
    return 0;
}

static int merge_insert(BPECore *self, PyObject *k, PyObject *v)
{
    unsigned long long key;
    long long rank;
    if (!PyLong_Check(k) || !PyLong_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "ranks must map int to int");
        return -1;
    }
    key = PyLong_AsUnsignedLongLong(k);
    if (key == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    rank = PyLong_AsLongLong(v);
    if (rank == -1 && PyErr_Occurred())
        return -1;
    return merge_put(self, key, rank);
}

static int BPECore_init(BPECore *self, PyObject *args, PyObject *kw)
{
    PyObject *ranks, *spell, *resolve, *k, *v, *bytemap = Py_None, *keys = NULL, *vals = NULL;
    Py_ssize_t pos = 0, i, count;
    Py_buffer rowbuf;
    int have_buf = 0;
    static char *names[] = {"ranks", "spell", "resolve", "byte_map", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|O", names, &ranks, &spell, &resolve, &bytemap))
        return -1;
    for (i = 0; i < 256; i++)
        self->bytemap[i] = (uint32_t)i;
    if (bytemap != Py_None) {
        if (!PyList_Check(bytemap) || PyList_GET_SIZE(bytemap) != 256) {
            PyErr_SetString(PyExc_TypeError, "byte_map must be a list of 256 one-character str");
            return -1;
        }
        for (i = 0; i < 256; i++) {
            PyObject *c = PyList_GET_ITEM(bytemap, i);
            if (!PyUnicode_Check(c) || PyUnicode_GET_LENGTH(c) != 1) {
                PyErr_SetString(PyExc_TypeError, "byte_map must be a list of 256 one-character str");
                return -1;
            }
            self->bytemap[i] = PyUnicode_READ_CHAR(c, 0);
        }
    }
    if (self->merges != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "BPECore is initialised once");
        return -1;
    }
    if (PyTuple_Check(ranks) && PyTuple_GET_SIZE(ranks) == 2 && PyUnicode_Check(PyTuple_GET_ITEM(ranks, 1))) {
        /* (encoding, "<III"): the merge rows as the codec stored them, left, right, rank */
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(ranks, 1), "<III") != 0) {
            PyErr_SetString(PyExc_TypeError, "merge rows must be \"<III\" (left, right, rank)");
            return -1;
        }
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(ranks, 0), &rowbuf, PyBUF_SIMPLE) < 0)
            return -1;
        if (rowbuf.len % 12 != 0) {
            PyBuffer_Release(&rowbuf);
            PyErr_SetString(PyExc_ValueError, "merge rows are 12 bytes each");
            return -1;
        }
        have_buf = 1;
        count = rowbuf.len / 12;
    } else if (PyDict_Check(ranks)) {
        count = PyDict_GET_SIZE(ranks);
    } else {
        if (!PyTuple_Check(ranks) || PyTuple_GET_SIZE(ranks) != 2) {
            PyErr_SetString(PyExc_TypeError, "ranks must be a dict or (keys, ranks)");
            return -1;
        }
        keys = PyTuple_GET_ITEM(ranks, 0);
        vals = PyTuple_GET_ITEM(ranks, 1);
        count = PyObject_Length(keys);
        if (count < 0)
            return -1;
    }
    self->mcap = pow2_at_least((size_t)count * 2 + 1);
    self->merges = PyMem_Malloc(self->mcap * sizeof(MergeSlot));
    self->scap = 1024;
    self->sused = 0;
    self->spell = PyMem_Malloc(self->scap * sizeof(SpellSlot));
    if (self->merges == NULL || self->spell == NULL) {
        if (have_buf)
            PyBuffer_Release(&rowbuf);
        PyErr_NoMemory();
        return -1;
    }
    for (i = 0; i < (Py_ssize_t)self->scap; i++)
        self->spell[i].len = -1;
    for (i = 0; i < (Py_ssize_t)self->mcap; i++)
        self->merges[i].key = EMPTY_KEY;
    if (have_buf) {
        const unsigned char *r = rowbuf.buf;
        int rc = 0;
        for (i = 0; i < count && rc == 0; i++, r += 12) {
            uint64_t key = (uint64_t)load_u32le(r) | (uint64_t)load_u32le(r + 4) << 32;
            rc = merge_put(self, key, load_u32le(r + 8));
        }
        PyBuffer_Release(&rowbuf);
        if (rc < 0)
            return -1;
    } else if (PyDict_Check(ranks)) {
        while (PyDict_Next(ranks, &pos, &k, &v))
            if (merge_insert(self, k, v) < 0)
                return -1;
    } else {
        PyObject *ks = PySequence_Fast(keys, "ranks must be a dict or (keys, ranks)");
        PyObject *vs = ks == NULL ? NULL : PySequence_Fast(vals, "ranks must be a dict or (keys, ranks)");
        int rc = 0;
        if (vs != NULL && PySequence_Fast_GET_SIZE(ks) != PySequence_Fast_GET_SIZE(vs)) {
            PyErr_SetString(PyExc_ValueError, "keys and ranks differ in length");
            rc = -1;
        }
        for (i = 0; vs != NULL && rc == 0 && i < PySequence_Fast_GET_SIZE(ks); i++)
            rc = merge_insert(self, PySequence_Fast_GET_ITEM(ks, i), PySequence_Fast_GET_ITEM(vs, i));
        Py_XDECREF(ks);
        Py_XDECREF(vs);
        if (vs == NULL || rc < 0)
            return -1;
    }
    Py_INCREF(spell);
    Py_INCREF(resolve);
    self->spell_fn = spell;
    self->resolve_fn = resolve;
    return 0;
}

static int BPECore_traverse(BPECore *self, visitproc visit, void *arg)
{
    Py_VISIT(self->spell_fn);
    Py_VISIT(self->resolve_fn);
    return 0;
}

static int BPECore_clear(BPECore *self)
{
    Py_CLEAR(self->spell_fn);
    Py_CLEAR(self->resolve_fn);
    return 0;
}

static void BPECore_dealloc(BPECore *self)
{
    PyObject_GC_UnTrack(self);
    BPECore_clear(self);
    PyMem_Free(self->merges);
    PyMem_Free(self->spell);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef BPECore_methods[] = {
    {"word", (PyCFunction)BPECore_word, METH_O, "BPE of one piece: a tuple of ids."},
    {"text", (PyCFunction)BPECore_text, METH_VARARGS,
     "text(s, cache, cache_max, out): a whole segment, cut before every U+2581 that follows another "
     "character, each chunk's ids (cached) appended to out."},
    {"words", (PyCFunction)BPECore_words, METH_VARARGS,
     "words(pieces, cache, cache_max, out, mapped): each piece's ids (cached by piece; with mapped, "
     "the piece's UTF-8 bytes as byte_map characters) appended to out."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject BPECoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.BPECore",
    .tp_basicsize = sizeof(BPECore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The merge loop of a BPE model (see the module's documentation).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)BPECore_init,
    .tp_dealloc = (destructor)BPECore_dealloc,
    .tp_traverse = (traverseproc)BPECore_traverse,
    .tp_clear = (inquiry)BPECore_clear,
    .tp_methods = BPECore_methods,
};

/* sp_crossing(tokens) -> bool: whether some token (bytes) has a U+2581 (E2 96 81) right after a
 * byte that is not the end of another U+2581: BPE._sp_crossing's answer, token by token. */
PyObject *sp_crossing(PyObject *mod, PyObject *tokens)
{
    PyObject *it = PyObject_GetIter(tokens), *t;
    int found = 0;
    if (it == NULL)
        return NULL;
    while (!found && (t = PyIter_Next(it)) != NULL) {
        const unsigned char *b;
        Py_ssize_t n, k, pos = 0;
        if (!PyBytes_Check(t)) {
            Py_DECREF(t);
            Py_DECREF(it);
            PyErr_SetString(PyExc_TypeError, "sp_crossing() expects bytes");
            return NULL;
        }
        b = (const unsigned char *)PyBytes_AS_STRING(t);
        n = PyBytes_GET_SIZE(t);
        for (k = 0; k + 3 <= n; k++) {
            if (b[k] == 0xE2 && b[k + 1] == 0x96 && b[k + 2] == 0x81) {
                if (k > pos) {  /* something other than a U+2581 before this one */
                    found = 1;
                    break;
                }
                pos = k + 3;
                k += 2;
            }
        }
        Py_DECREF(t);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    return PyBool_FromLong(found);
}
