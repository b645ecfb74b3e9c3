/* mtokspec._speedups: the optional compiled hot loops of the hf runtime and the codec.
 *
 * The pure-Python models (mtokspec/runtime/hf/models/bpe.py, unigram.py) are the reference; this
 * module redoes only their inner loops, with the same order of operations, and asks them (through
 * callbacks) for everything else: a character's symbols, a merge's output id, a piece's score, the
 * ids of a fused unknown run.  Those answers are computed once and kept here.  Nothing here reads
 * the file or knows its layout.
 *
 *   BPECore(ranks, spell, resolve, byte_map=None)
 *       ranks:   {left id | right id << 32: rank}, (keys, ranks) sequences, or (encoding, "<III"):
 *                the merge rows as stored, told their layout by the codec (Table.fixed_rows); a
 *                repeated pair keeps its highest rank, as HF
 *       spell:   callable(str of one character) -> tuple of ids (its symbols; () drops it)
 *       resolve: callable(pair key) -> the id the merge produces (raises when it has none)
 *     .word(s) -> tuple   BPE of one piece: lowest rank first, leftmost among equal ranks
 *     .text(s, cache, cache_max, out) -> None
 *                        a whole segment cut before every U+2581 that follows another character
 *                        (the caller checked that no merge crosses such a cut); each chunk's
 *                        ids come from ``cache`` or .word (then cached; cleared when full) and are
 *                        appended to the list ``out``
 *     .words(pieces, cache, cache_max, out, mapped) -> None
 *                        the same for pieces already cut; ``mapped``: the pieces are raw text of a
 *                        byte-level model, merged as the GPT-2 characters of their UTF-8 bytes
 *                        (``byte_map``, given to the constructor)
 *
 *   UnigramCore(keys, rows, ids, unk_id, score, unk_score, fused)
 *       keys/rows: the pieces' bytes, sorted and distinct, and their rows; ids: row -> id
 *       score:     callable(row) -> float, the score the lattice uses (read once per row)
 *       unk_score: callable() -> float, the score of an unknown node (read once, when first needed)
 *       fused:     callable(str) -> tuple of ids of a run of unknown nodes
 *     .word(s) -> tuple or None   Viterbi over the piece (None: not UTF-8, use the pure path)
 *
 *   string_table(b, p, end, n, before, after, widths)   the codec's tables of strings (codec_support.py)
 *   dict_zip(keys, values)   dict(zip(keys, values)), sized once (the models' vocabularies)
 *   sp_crossing(tokens)      BPE._sp_crossing over the vocabulary's bytes
 *   encode_pieces(pieces, cache, tokenize, out)   the tokenizer's loop over pre-tokenized pieces
 *   line_table(b, p, end, n, kinds, open_end)   the legacy text formats' line tables (the codec)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_speedups_mnn.h"
#include <stdint.h>
#include <string.h>

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

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

/* An id read from Python: 0 <= id < 2**32 (the file's ids are u32), else -1 with an error set. */
static int64_t read_id(PyObject *o)
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
static int extend_ids(PyObject *out, PyObject *seq, const char *what)
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

/* ---------------------------------------------------------------------------------------------- */
/* BPE                                                                                             */

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

static PyTypeObject BPECoreType = {
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

/* ---------------------------------------------------------------------------------------------- */
/* Unigram                                                                                         */

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

static PyTypeObject UnigramCoreType = {
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

/* ---------------------------------------------------------------------------------------------- */
/* the codec: tables of rows [before bytes][u16 length][string][after bytes]                      */

/* string_table(b, p, end, n, before, after, widths) -> (strings, fixed, size) or None
 * The n rows at b[p:end]: each row's string as bytes, the rows' fixed fields (before and after
 * the string; ``widths`` are their sizes in row order, summing to before + after) column by
 * column (every row's first field, then every row's second, ...), and the rows' total size; None
 * when a row runs past end (the caller's exact walk then reports where). */
static PyObject *string_table(PyObject *mod, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t p, end, n, before, after, i, q, nw, j, off;
    Py_ssize_t width[16], colstart[16];
    PyObject *strings = NULL, *fixed = NULL, *res = NULL, *widths;
    const unsigned char *b;
    char *f;
    if (!PyArg_ParseTuple(args, "y*nnnnnO!", &view, &p, &end, &n, &before, &after, &PyTuple_Type, &widths))
        return NULL;
    b = (const unsigned char *)view.buf;
    nw = PyTuple_GET_SIZE(widths);
    off = 0;
    for (j = 0; j < nw && j < 16; j++) {
        width[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(widths, j));
        if (width[j] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "widths must be sizes");
            PyBuffer_Release(&view);
            return NULL;
        }
        off += width[j];
    }
    if (nw > 16 || off != before + after) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "widths must be at most 16 sizes summing to before + after");
        return NULL;
    }
    if (p < 0 || end > view.len || n < 0 || before < 0 || after < 0 || p > end)
        goto none;
    /* first pass: the rows fit (no object made for a table that does not) */
    q = p;
    for (i = 0; i < n; i++) {
        Py_ssize_t len;
        if (end - q < before + 2)
            goto none;
        len = b[q + before] | (Py_ssize_t)b[q + before + 1] << 8;
        if (end - q - before - 2 < len + after)
            goto none;
        q += before + 2 + len + after;
    }
    strings = PyTuple_New(n);  /* a tuple, as the struct unpack of the pure walk gives */
    fixed = PyBytes_FromStringAndSize(NULL, n * (before + after));
    if (strings == NULL || fixed == NULL)
        goto done;
    f = PyBytes_AS_STRING(fixed);
    for (j = 0, off = 0; j < nw; j++) {
        colstart[j] = off;
        off += n * width[j];
    }
    q = p;
    for (i = 0; i < n; i++) {
        Py_ssize_t len = b[q + before] | (Py_ssize_t)b[q + before + 1] << 8, at = 0;
        PyObject *str;
        for (j = 0; j < nw; j++) {
            /* fields before the string lie at q + at; those after it, past the string */
            Py_ssize_t src = at < before ? q + at : q + 2 + len + at;
            memcpy(f + colstart[j] + i * width[j], b + src, (size_t)width[j]);
            at += width[j];
        }
        str = PyBytes_FromStringAndSize((const char *)b + q + before + 2, len);
        if (str == NULL)
            goto done;
        PyTuple_SET_ITEM(strings, i, str);
        q += before + 2 + len + after;
    }
    res = Py_BuildValue("(OOn)", strings, fixed, q - p);
done:
    Py_XDECREF(strings);
    Py_XDECREF(fixed);
    PyBuffer_Release(&view);
    return res;
none:
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* dict_zip(keys, values) -> dict(zip(keys, values)) for two sequences of one length, the dict
 * sized once (a vocabulary of 30k tokens: half the time of growing it). */
static PyObject *dict_zip(PyObject *mod, PyObject *args)
{
    PyObject *keys, *values, *ks, *vs, *d = NULL;
    Py_ssize_t n, i;
    if (!PyArg_ParseTuple(args, "OO", &keys, &values))
        return NULL;
    ks = PySequence_Fast(keys, "dict_zip() expects sequences");
    if (ks == NULL)
        return NULL;
    vs = PySequence_Fast(values, "dict_zip() expects sequences");
    if (vs == NULL) {
        Py_DECREF(ks);
        return NULL;
    }
    n = PySequence_Fast_GET_SIZE(ks);
    if (PySequence_Fast_GET_SIZE(vs) != n) {
        PyErr_SetString(PyExc_ValueError, "dict_zip() expects sequences of one length");
        goto done;
    }
#if PY_VERSION_HEX < 0x030D0000
    d = _PyDict_NewPresized(n);
#else
    d = PyDict_New();
#endif
    if (d == NULL)
        goto done;
    for (i = 0; i < n; i++)
        if (PyDict_SetItem(d, PySequence_Fast_GET_ITEM(ks, i), PySequence_Fast_GET_ITEM(vs, i)) < 0) {
            Py_CLEAR(d);
            break;
        }
done:
    Py_DECREF(ks);
    Py_DECREF(vs);
    return d;
}

/* encode_pieces(pieces, cache, tokenize, out): for each piece, cache[piece] or tokenize(piece)
 * (which fills the cache), its ids appended to out: the tokenizer's loop over pre-tokenized pieces
 * for the models without a core of their own (WordPiece; Unigram's cache misses go to its core). */
static PyObject *encode_pieces(PyObject *mod, PyObject *args)
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

/* --- line tables of the legacy text formats ---------------------------------------------------- */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* The bytes of canonical padded base64 s[0:n) (what re-encoding gives back unchanged: the codec's
 * decode_base64 accepts exactly that), or NULL without an error set when it is not. */
static PyObject *b64_canonical(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t pad = 0, i, o = 0, groups;
    PyObject *out;
    unsigned char *d;
    if (n % 4 != 0)
        return NULL;
    if (n >= 1 && s[n - 1] == '=')
        pad = (n >= 2 && s[n - 2] == '=') ? 2 : 1;
    groups = n / 4;
    out = PyBytes_FromStringAndSize(NULL, groups * 3 - pad);
    if (out == NULL)
        return NULL;
    d = (unsigned char *)PyBytes_AS_STRING(out);
    for (i = 0; i < n; i += 4) {
        int a = b64_value(s[i]), b = b64_value(s[i + 1]), c, e;
        int last = i + 4 == n;
        if (a < 0 || b < 0)
            goto bad;
        if (last && pad == 2) {
            if ((b & 0x0F) != 0)
                goto bad;
            d[o++] = (unsigned char)(a << 2 | b >> 4);
            break;
        }
        c = b64_value(s[i + 2]);
        if (c < 0)
            goto bad;
        if (last && pad == 1) {
            if ((c & 0x03) != 0)
                goto bad;
            d[o++] = (unsigned char)(a << 2 | b >> 4);
            d[o++] = (unsigned char)((b & 0x0F) << 4 | c >> 2);
            break;
        }
        e = b64_value(s[i + 3]);
        if (e < 0)
            goto bad;
        d[o++] = (unsigned char)(a << 2 | b >> 4);
        d[o++] = (unsigned char)((b & 0x0F) << 4 | c >> 2);
        d[o++] = (unsigned char)((c & 0x03) << 6 | e);
    }
    return out;
bad:
    Py_DECREF(out);
    return NULL;
}

/* The int of s[0:n) when it matches 0|-?[1-9][0-9]* (the codec's decimal), else NULL (no error). */
static PyObject *decimal_value(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (n == 1 && s[0] == '0')
        return PyLong_FromLong(0);
    if (n > 0 && s[0] == '-')
        i = 1;
    if (i >= n || s[i] < '1' || s[i] > '9')
        return NULL;
    for (Py_ssize_t j = i + 1; j < n; j++)
        if (s[j] < '0' || s[j] > '9')
            return NULL;
    if (n - i <= 18) {
        long long v = 0;
        for (Py_ssize_t j = i; j < n; j++)
            v = v * 10 + (s[j] - '0');
        return PyLong_FromLongLong(i ? -v : v);
    }
    {
        PyObject *t = PyUnicode_FromStringAndSize((const char *)s, n), *v;
        if (t == NULL)
            return NULL;
        v = PyLong_FromUnicodeObject(t, 10);
        Py_DECREF(t);
        return v;
    }
}

/* line_table(b, p, end, n, kinds, open_end) -> (columns, p, final_newline) or None
 * The n lines at b[p:end], each ended by a newline (with open_end the last may end at end
 * instead), split at spaces into one value per kind: "b" canonical base64 (bytes), "i" decimal
 * (int), "w" UTF-8 text (str), "r" the raw bytes; one column (a list) per kind.  None when any
 * line is missing or any value is not what its kind accepts: the caller's exact loop then says
 * where. */
static PyObject *line_table(PyObject *mod, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t p, end, n, nk, i, k, q;
    const char *kinds;
    int open_end, final_nl = 1;
    PyObject *cols[8] = {NULL}, *res = NULL;
    const unsigned char *b;
    if (!PyArg_ParseTuple(args, "y*nnns#p", &view, &p, &end, &n, &kinds, &nk, &open_end))
        return NULL;
    b = (const unsigned char *)view.buf;
    if (nk < 1 || nk > 8 || p < 0 || end > view.len || p > end || n < 0)
        goto none;
    for (k = 0; k < nk; k++)
        if ((cols[k] = PyList_New(n)) == NULL)
            goto fail;
    q = p;
    for (i = 0; i < n; i++) {
        const unsigned char *nl = q < end ? memchr(b + q, '\n', (size_t)(end - q)) : NULL;
        Py_ssize_t e, f;
        if (nl == NULL) {
            if (open_end && i == n - 1 && q < end) {
                e = end;
                final_nl = 0;
            } else {
                goto none;
            }
        } else {
            e = nl - b;
        }
        f = q;
        for (k = 0; k < nk; k++) {
            Py_ssize_t g = e;
            PyObject *v = NULL;
            if (k < nk - 1) {
                const unsigned char *sp = memchr(b + f, ' ', (size_t)(e - f));
                if (sp == NULL)
                    goto none;
                g = sp - b;
            } else if (nk > 1 && memchr(b + f, ' ', (size_t)(e - f)) != NULL) {
                goto none;  /* more values than columns */
            }
            switch (kinds[k]) {
            case 'b':
                v = b64_canonical(b + f, g - f);
                break;
            case 'i':
                v = decimal_value(b + f, g - f);
                break;
            case 'w':
                v = PyUnicode_DecodeUTF8((const char *)b + f, g - f, "strict");
                break;
            case 'r':
                v = PyBytes_FromStringAndSize((const char *)b + f, g - f);
                break;
            }
            if (v == NULL) {
                if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                    goto fail;
                PyErr_Clear();
                goto none;
            }
            PyList_SET_ITEM(cols[k], i, v);
            f = g + 1;
        }
        q = e + 1;
    }
    {
        PyObject *t = PyTuple_New(nk);
        if (t == NULL)
            goto fail;
        for (k = 0; k < nk; k++) {
            PyTuple_SET_ITEM(t, k, cols[k]);
            cols[k] = NULL;
        }
        res = Py_BuildValue("(Nni)", t, final_nl ? q : end, final_nl);
    }
fail:
    for (k = 0; k < 8; k++)
        Py_XDECREF(cols[k]);
    PyBuffer_Release(&view);
    return res;
none:
    for (k = 0; k < 8; k++)
        Py_XDECREF(cols[k]);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* sp_crossing(tokens) -> bool: whether some token (bytes) has a U+2581 (E2 96 81) right after a
 * byte that is not the end of another U+2581: BPE._sp_crossing's answer, token by token. */
static PyObject *sp_crossing(PyObject *mod, PyObject *tokens)
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

static PyMethodDef module_methods[] = {
    {"string_table", string_table, METH_VARARGS,
     "string_table(b, p, end, n, before, after, widths) -> (strings, fixed, size) or None: the n rows "
     "[before bytes][u16 length][string][after bytes] at b[p:end], the fixed fields column by column."},
    {"dict_zip", dict_zip, METH_VARARGS, "dict_zip(keys, values) -> dict(zip(keys, values)), sized once."},
    {"encode_pieces", encode_pieces, METH_VARARGS,
     "encode_pieces(pieces, cache, tokenize, out): each piece's ids (cache[piece] or tokenize(piece)) appended to out."},
    {"line_table", line_table, METH_VARARGS,
     "line_table(b, p, end, n, kinds, open_end) -> (columns, p, final_newline) or None: the n lines "
     "of a legacy text table, split and decoded per column kind (b base64, i decimal, w word, r raw)."},
    {"sp_crossing", sp_crossing, METH_O,
     "sp_crossing(tokens) -> whether a token has U+2581 right after another character (BPE._sp_crossing)."},
    {NULL, NULL, 0, NULL},
};

/* ---------------------------------------------------------------------------------------------- */

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "mtokspec._speedups",
    .m_doc = "Optional compiled hot loops of mtokspec's hf runtime (the pure-Python models are the reference).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m;
    if (PyType_Ready(&BPECoreType) < 0 || PyType_Ready(&UnigramCoreType) < 0)
        return NULL;
    m = PyModule_Create(&speedups_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&BPECoreType);
    if (PyModule_AddObject(m, "BPECore", (PyObject *)&BPECoreType) < 0) {
        Py_DECREF(&BPECoreType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&UnigramCoreType);
    if (PyModule_AddObject(m, "UnigramCore", (PyObject *)&UnigramCoreType) < 0) {
        Py_DECREF(&UnigramCoreType);
        Py_DECREF(m);
        return NULL;
    }
    if (mnn_speedups_register(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
