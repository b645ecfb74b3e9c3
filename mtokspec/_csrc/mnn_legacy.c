/* The mnn semantics' legacy tokenizer.txt types 0, 2 and 3: the loops of runtime/mnn/legacy.py's
 * Sentencepiece and HuggingFace classes (the pure classes are the reference; these redo their loops
 * in the same order and hand back to them on any doubt).
 *
 *   mnn_legacy_sp(pieces) -> (pieces, normal, reserved, unk_id, core) or None
 *       pieces: the tree's (bytes, score text, kind) rows.  Gives what Sentencepiece.__init__ builds
 *       (each score through legacy.strtof: the regex's number, Python's float(), rounded to float32)
 *       and the core; None when a score is NaN (Python's heap order with NaN is not a total order:
 *       the pure class runs then).
 *     core.encode(text, out) -> bool   Sentencepiece._encode_piece: the ids appended to out, or False
 *       (out untouched) where the pure code raises (a piece id past the pieces).
 *
 *   MnnLegacyHF(tokens, merges, byte_map)
 *       tokens: the vocabulary's bytes (line = id); merges: merges.txt's lines; byte_map: the 256
 *       GPT-2 characters' UTF-8.  The merges' strings (legacy.wide of each half, and their
 *       concatenations) are interned as ints: a merge is (left, right) -> (rank, result), the first
 *       line of a pair keeping it; each interned string knows its token id (its UTF-8 with surrogates
 *       as three bytes = the token's bytes, first line), or none.
 *     .encode(splits, cache, cache_max, out) -> int   HuggingFace._encode_piece's loop over the
 *       regex's splits: each split's ids from cache or merged here (the heap loop of
 *       runtime/shared/merge.py, which gives MNN's merges), cached while the cache is below cache_max,
 *       appended to out; -1 when all are done, else the index of the first split not done (a piece
 *       without a token, on which the pure code raises): the pure loop goes on from there.
 *
 *   MnnLegacyBert(tokens, unk, alnum, space, prefix)
 *       tokens: the vocabulary's bytes (line = id; the first line of a token keeps it); unk: the id
 *       a word that cannot be covered ends with; alnum, space: the ASCII sets of Bert's splitter;
 *       prefix: the continuation prefix.
 *     .encode(text, out) -> None   Bert._encode_piece (its words, each through _word_piece), the
 *       ids appended to out.
 */
#include "speedups.h"
#include <math.h>

/* ---------------------------------------------------------------------------------------------- */
/* a table of byte strings (first occurrence kept), pointing into bytes objects kept alive          */

typedef struct {
    const char *p;     /* NULL: empty slot */
    Py_ssize_t n;
    int32_t a, b;
} BEntry;

typedef struct {
    BEntry *slots;
    size_t mask;
} BTable;

static int btable_init(BTable *t, size_t count)
{
    size_t cap = pow2_at_least(2 * count + 1);
    t->slots = PyMem_Calloc(cap, sizeof(BEntry));
    if (t->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->mask = cap - 1;
    return 0;
}

/* the entry of p[0:n]; with add, a new one (a = b = -1) when absent (the table is sized for them) */
static BEntry *btable_get(BTable *t, const char *p, Py_ssize_t n, int add)
{
    size_t i = (size_t)bytes_hash((const unsigned char *)p, n) & t->mask;
    static const char empty = 0;
    for (;;) {
        BEntry *e = &t->slots[i];
        if (e->p == NULL) {
            if (!add)
                return NULL;
            e->p = n ? p : &empty;
            e->n = n;
            e->a = e->b = -1;
            return e;
        }
        if (e->n == n && memcmp(e->p, p, (size_t)n) == 0)
            return e;
        i = (i + 1) & t->mask;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* legacy.strtof                                                                                    */

static int c_space(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int c_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static Py_UCS4 c_lower(Py_UCS4 c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int match_word(PyObject *s, Py_ssize_t k, Py_ssize_t n, const char *w)
{
    for (; *w; w++, k++)
        if (k >= n || c_lower(PyUnicode_READ_CHAR(s, k)) != (Py_UCS4)*w)
            return 0;
    return 1;
}

/* The float32 value of a score text as legacy.strtof gives it: 0 with *out set, or -1 with an
 * error set.  The scan is _STRTOF's regex (ASCII only: another character ends it). */
static int legacy_strtof(PyObject *s, double *out)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), i = 0, start, k, d;
    char buf[128], *heap = NULL, *text;
    double v;
#define CH(j) ((j) < n ? PyUnicode_READ_CHAR(s, (j)) : (Py_UCS4)0)
    while (i < n && c_space(CH(i)))
        i++;
    start = i;
    k = i;
    if (CH(k) == '+' || CH(k) == '-')
        k++;
    d = k;
    while (c_digit(CH(d)))
        d++;
    if (d > k || (CH(k) == '.' && c_digit(CH(k + 1)))) {
        k = d;
        if (CH(k) == '.') {
            k++;
            while (c_digit(CH(k)))
                k++;
        }
        if (CH(k) == 'e' || CH(k) == 'E') {
            Py_ssize_t e = k + 1;
            if (CH(e) == '+' || CH(e) == '-')
                e++;
            if (c_digit(CH(e))) {
                while (c_digit(CH(e)))
                    e++;
                k = e;
            }
        }
    } else if (match_word(s, k, n, "inf")) {
        k += 3;
        if (match_word(s, k, n, "inity"))
            k += 5;
    } else if (match_word(s, k, n, "nan")) {
        k += 3;
    } else {
        *out = 0.0;
        return 0;
    }
#undef CH
    if (k - start < (Py_ssize_t)sizeof buf)
        text = buf;
    else if ((text = heap = PyMem_Malloc((size_t)(k - start) + 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (i = start; i < k; i++)
        text[i - start] = (char)PyUnicode_READ_CHAR(s, i);
    text[k - start] = 0;
    v = PyOS_string_to_double(text, NULL, NULL);  /* what float() does with the matched text */
    PyMem_Free(heap);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    *out = (double)(float)v;  /* struct's "<f" (an overflow gives the infinity of that sign) */
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* type 0: MnnLegacySP                                                                              */

typedef struct {
    PyObject_HEAD
    PyObject *toks;       /* a list holding the pieces' bytes (the table points into them) */
    BTable table;         /* piece -> a: first normal id, b: first other id */
    double *scores;
    Py_ssize_t npieces;
    int64_t unk_id;
    int64_t byte_ids[256];
} MnnLegacySP;

static int64_t sp_piece_to_id(MnnLegacySP *self, const char *p, Py_ssize_t n)
{
    BEntry *e = btable_get(&self->table, p, n, 0);
    if (e != NULL && e->b >= 0)
        return e->b;
    if (e != NULL && e->a >= 0)
        return e->a;
    return self->unk_id;
}

typedef struct {
    double neg;           /* -score */
    Py_ssize_t left;
    uint64_t counter;
    Py_ssize_t right, size;
} SPItem;

static int sp_before(const SPItem *x, const SPItem *y)
{
    if (x->neg != y->neg)
        return x->neg < y->neg;
    if (x->left != y->left)
        return x->left < y->left;
    return x->counter < y->counter;
}

typedef struct {
    SPItem *v;
    size_t n, cap;
} SPHeap;

static int sp_push(SPHeap *h, SPItem it)
{
    size_t i;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        SPItem *v = PyMem_Realloc(h->v, cap * sizeof(SPItem));
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        h->v = v;
        h->cap = cap;
    }
    i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!sp_before(&it, &h->v[parent]))
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = it;
    return 0;
}

static SPItem sp_pop(SPHeap *h)
{
    SPItem top = h->v[0], last = h->v[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && sp_before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!sp_before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n)
        h->v[i] = last;
    return top;
}

typedef struct {
    int64_t *v;
    size_t n, cap;
} IdVec;

static int ids_push(IdVec *o, int64_t id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        int64_t *v = PyMem_Realloc(o->v, cap * sizeof(int64_t));
        if (v == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = id;
    return 0;
}

static int ids_flush(IdVec *o, PyObject *out)
{
    size_t k;
    for (k = 0; k < o->n; k++) {
        PyObject *x = PyLong_FromLongLong(o->v[k]);
        if (x == NULL || PyList_Append(out, x) < 0) {
            Py_XDECREF(x);
            return -1;
        }
        Py_DECREF(x);
    }
    return 0;
}

/* Sentencepiece._bpe's agenda for the pair (left, right): 0, or -1 with an error set */
static int sp_add(MnnLegacySP *self, const char *text, Py_ssize_t *st, Py_ssize_t *en, Py_ssize_t left,
                  Py_ssize_t right, SPHeap *h, uint64_t *counter, char **tmp, size_t *tmpcap)
{
    const char *p;
    Py_ssize_t size;
    BEntry *e;
    SPItem it;
    if (left == -1 || right == -1)
        return 0;
    size = (en[left] - st[left]) + (en[right] - st[right]);
    if (en[left] == st[right]) {
        p = text + st[left];
    } else {  /* (the spans stay contiguous; kept as the pure code has it) */
        if ((size_t)size > *tmpcap) {
            char *t = PyMem_Realloc(*tmp, (size_t)size);
            if (t == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            *tmp = t;
            *tmpcap = (size_t)size;
        }
        memcpy(*tmp, text + st[left], (size_t)(en[left] - st[left]));
        memcpy(*tmp + (en[left] - st[left]), text + st[right], (size_t)(en[right] - st[right]));
        p = *tmp;
    }
    e = btable_get(&self->table, p, size, 0);
    if (e == NULL || e->a < 0)
        return 0;
    it.neg = -self->scores[e->a];
    it.left = left;
    it.counter = ++*counter;
    it.right = right;
    it.size = size;
    return sp_push(h, it);
}

static const unsigned char META_UTF8[3] = {0xE2, 0x96, 0x81};

static PyObject *MnnLegacySP_encode(MnnLegacySP *self, PyObject *args)
{
    Py_buffer in;
    PyObject *out, *result = NULL;
    char *text = NULL, *tmp = NULL;
    size_t tmpcap = 0;
    Py_ssize_t n = 0, k, m = 0, p;
    Py_ssize_t *st = NULL, *en = NULL, *nxt = NULL, *prv = NULL;
    SPHeap h = {NULL, 0, 0};
    IdVec ids = {NULL, 0, 0};
    uint64_t counter = 0;
    static const unsigned char lens[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};

    if (!PyArg_ParseTuple(args, "y*O!", &in, &PyList_Type, &out))
        return NULL;
    /* META + text with spaces as META */
    text = PyMem_Malloc(3 * (size_t)in.len + 3);
    if (text == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(text, META_UTF8, 3);
    n = 3;
    for (k = 0; k < in.len; k++) {
        char c = ((const char *)in.buf)[k];
        if (c == ' ') {
            memcpy(text + n, META_UTF8, 3);
            n += 3;
        } else {
            text[n++] = c;
        }
    }
    st = PyMem_Malloc(4 * sizeof(Py_ssize_t) * (size_t)n);
    if (st == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    en = st + n;
    nxt = en + n;
    prv = nxt + n;
    for (p = 0; p < n; m++) {
        Py_ssize_t q = p + lens[(unsigned char)text[p] >> 4];
        if (q > n)
            q = n;
        st[m] = p;
        en[m] = q;
        p = q;
    }
    for (k = 0; k < m; k++) {
        nxt[k] = k + 1 < m ? k + 1 : -1;
        prv[k] = k - 1;
    }
    for (k = 1; k < m; k++)
        if (sp_add(self, text, st, en, k - 1, k, &h, &counter, &tmp, &tmpcap) < 0)
            goto done;
    while (h.n) {
        SPItem it = sp_pop(&h);
        Py_ssize_t a = it.left, b = it.right;
        if (st[a] == en[a] || st[b] == en[b] || (en[a] - st[a]) + (en[b] - st[b]) != it.size)
            continue;
        en[a] = st[a] + it.size;
        nxt[a] = nxt[b];
        if (nxt[b] >= 0)
            prv[nxt[b]] = a;
        en[b] = st[b];
        if (sp_add(self, text, st, en, prv[a], a, &h, &counter, &tmp, &tmpcap) < 0 ||
            sp_add(self, text, st, en, a, nxt[a], &h, &counter, &tmp, &tmpcap) < 0)
            goto done;
    }
    for (k = m ? 0 : -1; k != -1; k = nxt[k]) {
        int64_t i = sp_piece_to_id(self, text + st[k], en[k] - st[k]);
        if (i < 0 || i >= self->npieces) {  /* the pure code raises: it runs */
            result = Py_False;
            Py_INCREF(result);
            goto done;
        }
        if (i == self->unk_id) {
            for (p = st[k]; p < en[k]; p++)
                if (ids_push(&ids, self->byte_ids[(unsigned char)text[p]]) < 0)
                    goto done;
        } else if (ids_push(&ids, i) < 0) {
            goto done;
        }
    }
    if (ids_flush(&ids, out) < 0)
        goto done;
    result = Py_True;
    Py_INCREF(result);
done:
    PyBuffer_Release(&in);
    PyMem_Free(text);
    PyMem_Free(tmp);
    PyMem_Free(st);
    PyMem_Free(h.v);
    PyMem_Free(ids.v);
    return result;
}

static void MnnLegacySP_dealloc(MnnLegacySP *self)
{
    Py_XDECREF(self->toks);
    PyMem_Free(self->table.slots);
    PyMem_Free(self->scores);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef MnnLegacySP_methods[] = {
    {"encode", (PyCFunction)MnnLegacySP_encode, METH_VARARGS,
     "encode(text, out) -> bool: Sentencepiece._encode_piece (False: not done, out untouched)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnLegacySPType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnLegacySP",
    .tp_basicsize = sizeof(MnnLegacySP),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The legacy type 0 file's encode (see mnn_legacy.c; made by mnn_legacy_sp).",
    .tp_dealloc = (destructor)MnnLegacySP_dealloc,
    .tp_methods = MnnLegacySP_methods,
};

static PyObject *mnn_legacy_sp(PyObject *mod, PyObject *rows)
{
    MnnLegacySP *core = NULL;
    PyObject *fast = NULL, *pieces = NULL, *normal = NULL, *reserved = NULL, *result = NULL;
    Py_ssize_t n, i;
    int b;
    (void)mod;
    fast = PySequence_Fast(rows, "pieces must be a sequence");
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    core = PyObject_New(MnnLegacySP, &MnnLegacySPType);
    if (core == NULL)
        goto done;
    core->toks = PyList_New(n);
    core->table.slots = NULL;
    core->scores = PyMem_Malloc(sizeof(double) * (size_t)(n ? n : 1));
    core->npieces = n;
    core->unk_id = 0;
    pieces = PyList_New(n);
    normal = PyDict_New();
    reserved = PyDict_New();
    if (core->toks == NULL || core->scores == NULL || pieces == NULL || normal == NULL || reserved == NULL ||
        btable_init(&core->table, (size_t)n + 256) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++) {
        PyObject *row = PySequence_Fast_GET_ITEM(fast, i), *tok, *score, *kind, *f, *id, *triple;
        long kv;
        int overflow;
        double v;
        BEntry *e;
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 3 || !PyBytes_Check(PyTuple_GET_ITEM(row, 0)) ||
            !PyUnicode_Check(PyTuple_GET_ITEM(row, 1)) || !PyLong_Check(PyTuple_GET_ITEM(row, 2)))
            goto pure;
        tok = PyTuple_GET_ITEM(row, 0);
        score = PyTuple_GET_ITEM(row, 1);
        kind = PyTuple_GET_ITEM(row, 2);
        if (legacy_strtof(score, &v) < 0)
            goto done;
        if (isnan(v))
            goto pure;
        kv = PyLong_AsLongAndOverflow(kind, &overflow);
        if (kv == -1 && PyErr_Occurred())
            goto done;
        if (overflow)
            kv = -1;
        core->scores[i] = v;
        Py_INCREF(tok);
        PyList_SET_ITEM(core->toks, i, tok);
        f = PyFloat_FromDouble(v);
        triple = f == NULL ? NULL : PyTuple_Pack(3, tok, f, kind);
        Py_XDECREF(f);
        if (triple == NULL)
            goto done;
        PyObject_GC_UnTrack(triple);  /* bytes, float, int: no cycle (the collector would untrack it too) */
        PyList_SET_ITEM(pieces, i, triple);
        id = PyLong_FromSsize_t(i);
        if (id == NULL)
            goto done;
        if (PyDict_SetDefault(kv == 1 ? normal : reserved, tok, id) == NULL) {
            Py_DECREF(id);
            goto done;
        }
        Py_DECREF(id);
        e = btable_get(&core->table, PyBytes_AS_STRING(tok), PyBytes_GET_SIZE(tok), 1);
        if (kv == 1) {
            if (e->a < 0)
                e->a = (int32_t)i;
        } else {
            if (e->b < 0)
                e->b = (int32_t)i;
            if (kv == 2)
                core->unk_id = i;
        }
    }
    for (b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        core->byte_ids[b] = sp_piece_to_id(core, piece, 6);
    }
    result = Py_BuildValue("(OOOLO)", pieces, normal, reserved, (long long)core->unk_id, (PyObject *)core);
    goto done;
pure:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(fast);
    Py_XDECREF(pieces);
    Py_XDECREF(normal);
    Py_XDECREF(reserved);
    Py_XDECREF(core);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */
/* type 3: MnnLegacyHF                                                                              */

typedef struct {
    uint64_t key;   /* left << 32 | right; UINT64_MAX: empty */
    int32_t rank, result;
} Merge;

typedef struct {
    PyObject_HEAD
    uint32_t *arena;         /* the interned strings' code points */
    size_t arena_n, arena_cap;
    size_t *off;             /* by string id: offset in arena, length, token id (-1: none) */
    uint32_t *len;
    int32_t *tok;
    size_t nstr, str_cap;
    int32_t *slots;          /* string id, -1: empty */
    size_t smask;
    Merge *merges;
    size_t mmask;
    int32_t byte_sym[256];
} MnnLegacyHF;

static uint64_t hash_cps(const uint32_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    size_t k;
    for (k = 0; k < n; k++)
        h = (h ^ p[k]) * 1099511628211ULL;
    return mix64(h ^ n);
}

static int hf_grow_slots(MnnLegacyHF *self)
{
    size_t cap = (self->smask + 1) * 2, k;
    int32_t *slots = PyMem_Malloc(cap * sizeof(int32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0xFF, cap * sizeof(int32_t));
    for (k = 0; k < self->nstr; k++) {
        size_t i = (size_t)hash_cps(self->arena + self->off[k], self->len[k]) & (cap - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (cap - 1);
        slots[i] = (int32_t)k;
    }
    PyMem_Free(self->slots);
    self->slots = slots;
    self->smask = cap - 1;
    return 0;
}

/* the id of the string p[0:n] (p not in the arena), interned when new: >= 0, or -1 with an error */
static int32_t hf_intern(MnnLegacyHF *self, const uint32_t *p, size_t n)
{
    size_t i;
    if (2 * (self->nstr + 1) > self->smask + 1 && hf_grow_slots(self) < 0)
        return -1;
    i = (size_t)hash_cps(p, n) & self->smask;
    while (self->slots[i] >= 0) {
        int32_t s = self->slots[i];
        if (self->len[s] == n && memcmp(self->arena + self->off[s], p, n * sizeof(uint32_t)) == 0)
            return s;
        i = (i + 1) & self->smask;
    }
    if (self->nstr == self->str_cap) {
        size_t cap = self->str_cap ? 2 * self->str_cap : 1024;
        size_t *off = PyMem_Realloc(self->off, cap * sizeof(size_t));
        if (off != NULL)
            self->off = off;
        uint32_t *len = off ? PyMem_Realloc(self->len, cap * sizeof(uint32_t)) : NULL;
        if (len != NULL)
            self->len = len;
        int32_t *tok = len ? PyMem_Realloc(self->tok, cap * sizeof(int32_t)) : NULL;
        if (tok == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->tok = tok;
        self->str_cap = cap;
    }
    if (self->arena_n + n > self->arena_cap) {
        size_t cap = self->arena_cap ? self->arena_cap : 4096;
        uint32_t *a;
        while (cap < self->arena_n + n)
            cap *= 2;
        a = PyMem_Realloc(self->arena, cap * sizeof(uint32_t));
        if (a == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->arena = a;
        self->arena_cap = cap;
    }
    memcpy(self->arena + self->arena_n, p, n * sizeof(uint32_t));
    self->off[self->nstr] = self->arena_n;
    self->len[self->nstr] = (uint32_t)n;
    self->tok[self->nstr] = -1;
    self->arena_n += n;
    self->slots[i] = (int32_t)self->nstr;
    return (int32_t)self->nstr++;
}

/* legacy.wide: UTF-8 with the lead bytes trusted (valid UTF-8 reads as Python decodes it), into
 * out (room for n code points); the count */
static size_t wide_cps(const unsigned char *b, size_t n, uint32_t *out)
{
    size_t p = 0, m = 0;
    while (p < n) {
        unsigned c = b[p];
        uint32_t v;
        if (c < 0x80) {
            out[m++] = c;
            p += 1;
            continue;
        } else if (c < 0xE0) {
            if (p + 1 < n)
                out[m++] = (c & 0x1F) << 6 | (b[p + 1] & 0x3F);
            p += 2;
            continue;
        } else if (c < 0xF0) {
            if (p + 2 < n)
                out[m++] = (c & 0x0F) << 12 | (b[p + 1] & 0x3F) << 6 | (b[p + 2] & 0x3F);
            p += 3;
            continue;
        } else if (c < 0xF8) {
            if (p + 3 < n) {
                v = (c & 0x07) << 18 | (b[p + 1] & 0x3F) << 12 | (b[p + 2] & 0x3F) << 6 | (b[p + 3] & 0x3F);
                out[m++] = v <= 0x10FFFF ? v : 0xFFFF;  /* wide's stand-in */
            }
            p += 4;
            continue;
        }
        p += 1;
    }
    return m;
}

static Merge *hf_merge_slot(MnnLegacyHF *self, uint64_t key)
{
    size_t i = (size_t)mix64(key) & self->mmask;
    while (self->merges[i].key != UINT64_MAX && self->merges[i].key != key)
        i = (i + 1) & self->mmask;
    return &self->merges[i];
}

static void MnnLegacyHF_dealloc(MnnLegacyHF *self)
{
    PyMem_Free(self->arena);
    PyMem_Free(self->off);
    PyMem_Free(self->len);
    PyMem_Free(self->tok);
    PyMem_Free(self->slots);
    PyMem_Free(self->merges);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int MnnLegacyHF_init(MnnLegacyHF *self, PyObject *args, PyObject *kw)
{
    PyObject *tokens, *lines, *byte_map;
    BTable toks = {NULL, 0};
    uint32_t *buf = NULL;
    size_t bufcap = 0, k;
    Py_ssize_t i, nt, nm;
    int rc = -1;
    char *enc = NULL;
    size_t enccap = 0;
    static char *names[] = {"tokens", "merges", "byte_map", NULL};

    if (self->slots != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnLegacyHF is built once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!O!", names, &PyList_Type, &tokens, &PyList_Type, &lines,
                                     &PyList_Type, &byte_map))
        return -1;
    nt = PyList_GET_SIZE(tokens);
    nm = PyList_GET_SIZE(lines);
    if (PyList_GET_SIZE(byte_map) != 256) {
        PyErr_SetString(PyExc_ValueError, "byte_map: 256 entries");
        return -1;
    }
    self->smask = 1023;
    self->slots = PyMem_Malloc(1024 * sizeof(int32_t));
    self->mmask = pow2_at_least(2 * (size_t)nm + 1) - 1;
    self->merges = PyMem_Malloc((self->mmask + 1) * sizeof(Merge));
    if (self->slots == NULL || self->merges == NULL || btable_init(&toks, (size_t)nt) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    memset(self->slots, 0xFF, 1024 * sizeof(int32_t));
    for (k = 0; k <= self->mmask; k++)
        self->merges[k].key = UINT64_MAX;
    for (i = 0; i < nt; i++) {
        PyObject *tok = PyList_GET_ITEM(tokens, i);
        BEntry *e;
        if (!PyBytes_Check(tok)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
            goto done;
        }
        e = btable_get(&toks, PyBytes_AS_STRING(tok), PyBytes_GET_SIZE(tok), 1);
        if (e->a < 0)
            e->a = (int32_t)i;
    }
    for (i = 0; i <= nm; i++) {  /* the merges, then (i == nm) the byte map's characters */
        const unsigned char *b;
        size_t n, d, nl, nr;
        int32_t l, r;
        Merge *slot;
        if (i == nm) {
            int c;
            for (c = 0; c < 256; c++) {
                PyObject *ch = PyList_GET_ITEM(byte_map, c);
                uint32_t cp[8];
                if (!PyBytes_Check(ch) || PyBytes_GET_SIZE(ch) > 8) {
                    PyErr_SetString(PyExc_TypeError, "byte_map: short bytes");
                    goto done;
                }
                n = wide_cps((const unsigned char *)PyBytes_AS_STRING(ch), (size_t)PyBytes_GET_SIZE(ch), cp);
                if (n != 1) {
                    PyErr_SetString(PyExc_ValueError, "byte_map: one character each");
                    goto done;
                }
                if ((self->byte_sym[c] = hf_intern(self, cp, 1)) < 0)
                    goto done;
            }
            break;
        }
        if (!PyBytes_Check(PyList_GET_ITEM(lines, i))) {
            PyErr_SetString(PyExc_TypeError, "merges must be bytes");
            goto done;
        }
        b = (const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(lines, i));
        n = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(lines, i));
        for (d = 0; d < n && b[d] != ' '; d++)
            ;
        if (d == n)
            continue;
        if (n > bufcap) {
            uint32_t *nb = PyMem_Realloc(buf, n * sizeof(uint32_t));
            if (nb == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            buf = nb;
            bufcap = n;
        }
        nl = wide_cps(b, d, buf);
        nr = wide_cps(b + d + 1, n - d - 1, buf + nl);
        if ((l = hf_intern(self, buf, nl)) < 0 || (r = hf_intern(self, buf + nl, nr)) < 0)
            goto done;
        slot = hf_merge_slot(self, (uint64_t)l << 32 | (uint32_t)r);
        if (slot->key == UINT64_MAX) {  /* the first line of a pair keeps it */
            int32_t res = hf_intern(self, buf, nl + nr);
            if (res < 0)
                goto done;
            slot->key = (uint64_t)l << 32 | (uint32_t)r;
            slot->rank = (int32_t)i;
            slot->result = res;
        }
    }
    /* each string's token: its UTF-8 (surrogates as three bytes) is the token's bytes */
    for (k = 0; k < self->nstr; k++) {
        const uint32_t *p = self->arena + self->off[k];
        size_t n = self->len[k], j, m = 0;
        BEntry *e;
        if (4 * n > enccap) {
            char *ne = PyMem_Realloc(enc, 4 * n);
            if (ne == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            enc = ne;
            enccap = 4 * n;
        }
        for (j = 0; j < n; j++) {
            uint32_t c = p[j];
            if (c < 0x80) {
                enc[m++] = (char)c;
            } else if (c < 0x800) {
                enc[m++] = (char)(0xC0 | c >> 6);
                enc[m++] = (char)(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                enc[m++] = (char)(0xE0 | c >> 12);
                enc[m++] = (char)(0x80 | (c >> 6 & 0x3F));
                enc[m++] = (char)(0x80 | (c & 0x3F));
            } else {
                enc[m++] = (char)(0xF0 | c >> 18);
                enc[m++] = (char)(0x80 | (c >> 12 & 0x3F));
                enc[m++] = (char)(0x80 | (c >> 6 & 0x3F));
                enc[m++] = (char)(0x80 | (c & 0x3F));
            }
        }
        e = btable_get(&toks, enc ? enc : "", (Py_ssize_t)m, 0);
        self->tok[k] = e == NULL ? -1 : e->a;
    }
    rc = 0;
done:
    PyMem_Free(toks.slots);
    PyMem_Free(buf);
    PyMem_Free(enc);
    return rc;
}

typedef struct {
    int32_t rank, pos;
} HFItem;

static int hf_before(HFItem x, HFItem y) { return x.rank != y.rank ? x.rank < y.rank : x.pos < y.pos; }

static void hf_push(HFItem *h, size_t *n, HFItem it)
{
    size_t i = (*n)++;
    while (i > 0 && hf_before(it, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = it;
}

static HFItem hf_pop(HFItem *h, size_t *n)
{
    HFItem top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && hf_before(h[c + 1], h[c]))
            c++;
        if (!hf_before(h[c], last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

static int32_t hf_rank(MnnLegacyHF *self, int32_t l, int32_t r, int32_t *result)
{
    Merge *m = hf_merge_slot(self, (uint64_t)l << 32 | (uint32_t)r);
    if (m->key == UINT64_MAX)
        return -1;
    *result = m->result;
    return m->rank;
}

/* one split's ids (HuggingFace._word): a new tuple, Py_None (new reference) when a piece has no
 * token, or NULL with an error set */
static PyObject *hf_word(MnnLegacyHF *self, PyObject *split)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(split), k, cnt = 0;
    int kind = PyUnicode_KIND(split);
    const void *data = PyUnicode_DATA(split);
    int32_t *sym, *nxt, *prv, res;
    char *dead;
    HFItem *heap;
    size_t hn = 0;
    PyObject *out = NULL;
    if (n == 0 || kind != PyUnicode_1BYTE_KIND) {
        Py_INCREF(Py_None);
        return Py_None;
    }
    /* the heap gets n - 1 entries at the start and at most 2 per merge: 3n entries */
    sym = PyMem_Malloc((size_t)n * (3 * sizeof(int32_t) + 1 + 3 * sizeof(HFItem)));
    if (sym == NULL)
        return PyErr_NoMemory();
    nxt = sym + n;
    prv = nxt + n;
    heap = (HFItem *)(prv + n);
    dead = (char *)(heap + 3 * n);
    for (k = 0; k < n; k++) {
        sym[k] = self->byte_sym[PyUnicode_READ(kind, data, k)];
        nxt[k] = k + 1 < n ? (int32_t)k + 1 : -1;
        prv[k] = (int32_t)k - 1;
        dead[k] = 0;
    }
    for (k = 0; k + 1 < n; k++) {
        HFItem it = {hf_rank(self, sym[k], sym[k + 1], &res), (int32_t)k};
        if (it.rank >= 0)
            hf_push(heap, &hn, it);
    }
    while (hn) {
        HFItem it = hf_pop(heap, &hn);
        int32_t p = it.pos, q = nxt[p], r, joined = -1;
        if (dead[p] || q < 0 || hf_rank(self, sym[p], sym[q], &joined) != it.rank)
            continue;
        sym[p] = joined;
        dead[q] = 1;
        r = nxt[p] = nxt[q];
        if (r >= 0) {
            HFItem nx = {hf_rank(self, joined, sym[r], &res), p};
            prv[r] = p;
            if (nx.rank >= 0)
                hf_push(heap, &hn, nx);
        }
        if (prv[p] >= 0) {
            HFItem nx = {hf_rank(self, sym[prv[p]], joined, &res), prv[p]};
            if (nx.rank >= 0)
                hf_push(heap, &hn, nx);
        }
    }
    for (k = 0; k != -1; k = nxt[k]) {
        if (self->tok[sym[k]] < 0) {
            PyMem_Free(sym);
            Py_INCREF(Py_None);
            return Py_None;
        }
        cnt++;
    }
    out = PyTuple_New(cnt);
    if (out != NULL) {
        Py_ssize_t j = 0;
        for (k = 0; k != -1; k = nxt[k]) {
            PyObject *x = PyLong_FromLong(self->tok[sym[k]]);
            if (x == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyTuple_SET_ITEM(out, j++, x);
        }
    }
    PyMem_Free(sym);
    return out;
}

static PyObject *MnnLegacyHF_encode(MnnLegacyHF *self, PyObject *args)
{
    PyObject *splits, *cache, *out;
    Py_ssize_t cache_max, k, n;
    if (self->slots == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnLegacyHF not built");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!nO!", &PyList_Type, &splits, &PyDict_Type, &cache, &cache_max, &PyList_Type,
                          &out))
        return NULL;
    n = PyList_GET_SIZE(splits);
    for (k = 0; k < n; k++) {
        PyObject *split = PyList_GET_ITEM(splits, k), *hit;
        int rc;
        if (!PyUnicode_CheckExact(split))
            return PyLong_FromSsize_t(k);
        hit = PyDict_GetItemWithError(cache, split);
        if (hit != NULL) {
            Py_INCREF(hit);
        } else {
            if (PyErr_Occurred())
                return NULL;
            hit = hf_word(self, split);
            if (hit == NULL)
                return NULL;
            if (hit == Py_None) {
                Py_DECREF(hit);
                return PyLong_FromSsize_t(k);
            }
            if (PyDict_GET_SIZE(cache) < cache_max && PyDict_SetItem(cache, split, hit) < 0) {
                Py_DECREF(hit);
                return NULL;
            }
        }
        rc = extend_ids(out, hit, "cached ids");
        Py_DECREF(hit);
        if (rc < 0)
            return NULL;
    }
    return PyLong_FromLong(-1);
}

static PyMethodDef MnnLegacyHF_methods[] = {
    {"encode", (PyCFunction)MnnLegacyHF_encode, METH_VARARGS,
     "encode(splits, cache, cache_max, out) -> -1 (all done) or the index of the first split not done."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnLegacyHFType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnLegacyHF",
    .tp_basicsize = sizeof(MnnLegacyHF),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The legacy type 3 file's merges as ints and its encode loop (see mnn_legacy.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnLegacyHF_init,
    .tp_dealloc = (destructor)MnnLegacyHF_dealloc,
    .tp_methods = MnnLegacyHF_methods,
};

/* ---------------------------------------------------------------------------------------------- */
/* type 2: MnnLegacyBert                                                                            */

typedef struct {
    PyObject_HEAD
    PyObject *toks;       /* a tuple of the tokens' bytes (the table points into them) */
    BTable table;         /* token -> a: its first id */
    Py_ssize_t longest;   /* the longest token: no longer candidate can match */
    int64_t unk;          /* the id a word that cannot be covered ends with */
    uint8_t alnum[128], space[128];
    PyObject *prefix;     /* the continuation prefix (bytes) */
    char *key;            /* room for prefix + longest bytes: the candidate being looked up */
} MnnLegacyBert;

static void MnnLegacyBert_dealloc(MnnLegacyBert *self)
{
    Py_XDECREF(self->toks);
    Py_XDECREF(self->prefix);
    PyMem_Free(self->table.slots);
    PyMem_Free(self->key);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int MnnLegacyBert_init(MnnLegacyBert *self, PyObject *args, PyObject *kw)
{
    PyObject *tokens, *unk, *alnum, *space, *prefix;
    Py_ssize_t i, n;
    static char *names[] = {"tokens", "unk", "alnum", "space", "prefix", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO!", names, &tokens, &unk, &alnum, &space, &PyBytes_Type,
                                     &prefix))
        return -1;
    if (self->toks != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MnnLegacyBert is initialised once");
        return -1;
    }
    if (read_set128(alnum, self->alnum) < 0 || read_set128(space, self->space) < 0)
        return -1;
    self->unk = PyLong_AsLongLong(unk);
    if (self->unk == -1 && PyErr_Occurred())
        return -1;
    if ((self->toks = PySequence_Tuple(tokens)) == NULL)
        return -1;
    n = PyTuple_GET_SIZE(self->toks);
    if (btable_init(&self->table, (size_t)n) < 0)
        return -1;
    self->longest = 0;
    for (i = 0; i < n; i++) {
        PyObject *b = PyTuple_GET_ITEM(self->toks, i);
        BEntry *e;
        if (!PyBytes_Check(b)) {
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
            return -1;
        }
        e = btable_get(&self->table, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), 1);
        if (e->a < 0)
            e->a = (int32_t)i;  /* the first row of a token keeps it (legacy.first_ids) */
        if (PyBytes_GET_SIZE(b) > self->longest)
            self->longest = PyBytes_GET_SIZE(b);
    }
    self->prefix = Py_NewRef(prefix);
    if ((self->key = PyMem_Malloc((size_t)(self->longest + PyBytes_GET_SIZE(prefix) + 1))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* the first id of the token pre + s[0:n], or -1 */
static int32_t bert_find(MnnLegacyBert *self, int prefixed, const uint8_t *s, Py_ssize_t n)
{
    Py_ssize_t np = prefixed ? PyBytes_GET_SIZE(self->prefix) : 0;
    BEntry *e;
    if (np + n > self->longest)
        return -1;
    memcpy(self->key, PyBytes_AS_STRING(self->prefix), (size_t)np);
    memcpy(self->key + np, s, (size_t)n);
    e = btable_get(&self->table, self->key, np + n, 0);
    return e != NULL ? e->a : -1;
}

/* Bert._word_piece(w[0:n]), pushed to out */
static int bert_word_piece(MnnLegacyBert *self, const uint8_t *w, Py_ssize_t n, IdVec *out)
{
    int32_t id = bert_find(self, 0, w, n);
    Py_ssize_t start = 0;
    if (id >= 0)
        return ids_push(out, id);
    while (start < n) {
        Py_ssize_t k = n - start < self->longest ? n - start : self->longest;
        int32_t match = -1;
        for (; k > 0; k--)
            if ((match = bert_find(self, start != 0, w + start, k)) >= 0)
                break;
        if (match < 0)
            return ids_push(out, self->unk);
        if (ids_push(out, match) < 0)
            return -1;
        start += k;
    }
    return 0;
}

/* Bert._encode_piece: its words (ASCII letter/digit runs lower-cased, a non-ASCII character or an
 * ASCII mark alone, white space dropped), each through _word_piece */
static PyObject *MnnLegacyBert_encode(MnnLegacyBert *self, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    uint8_t sword[64], *word = sword;
    Py_ssize_t n, i = 0, cap = (Py_ssize_t)sizeof(sword);
    IdVec out = {NULL, 0, 0};
    int rc = 0;
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "encode(text: bytes, out: list)");
        return NULL;
    }
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    while (i < n && rc == 0) {
        uint8_t c = s[i];
        if (c & 0x80) {
            Py_ssize_t k = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
            if (i + k <= n)
                rc = bert_word_piece(self, s + i, k, &out);
            i += i + k <= n ? k : 1;
        } else if (self->alnum[c]) {
            Py_ssize_t j = i, m = 0;
            while (j < n && s[j] < 128 && self->alnum[s[j]])
                j++;
            if (j - i > cap) {
                if (word != sword)
                    PyMem_Free(word);
                cap = j - i;
                if ((word = PyMem_Malloc((size_t)cap)) == NULL) {
                    PyErr_NoMemory();
                    rc = -1;
                    break;
                }
            }
            for (; i < j; i++)
                word[m++] = s[i] >= 'A' && s[i] <= 'Z' ? (uint8_t)(s[i] + 32) : s[i];
            rc = bert_word_piece(self, word, m, &out);
        } else {
            if (!self->space[c])
                rc = bert_word_piece(self, s + i, 1, &out);
            i += 1;
        }
    }
    if (word != NULL && word != sword)
        PyMem_Free(word);
    if (rc == 0)
        rc = ids_flush(&out, args[1]);  /* (the ids appended once the text is done) */
    PyMem_Free(out.v);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef MnnLegacyBert_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))MnnLegacyBert_encode, METH_FASTCALL,
     "encode(text, out) -> None: Bert._encode_piece, the ids appended to out."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MnnLegacyBertType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mtokspec._speedups.MnnLegacyBert",
    .tp_basicsize = sizeof(MnnLegacyBert),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The legacy type 2 (Bert) file's encode (see mnn_legacy.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MnnLegacyBert_init,
    .tp_dealloc = (destructor)MnnLegacyBert_dealloc,
    .tp_methods = MnnLegacyBert_methods,
};

/* ---------------------------------------------------------------------------------------------- */

static PyMethodDef legacy_functions[] = {
    {"mnn_legacy_sp", mnn_legacy_sp, METH_O,
     "mnn_legacy_sp(pieces) -> (pieces, normal, reserved, unk_id, core) or None: Sentencepiece's tables and core."},
    {NULL, NULL, 0, NULL},
};

int mnn_legacy_register(PyObject *module)
{
    PyTypeObject *types[] = {&MnnLegacySPType, &MnnLegacyHFType, &MnnLegacyBertType};
    const char *names[] = {"MnnLegacySP", "MnnLegacyHF", "MnnLegacyBert"};
    int k;
    if (PyModule_AddFunctions(module, legacy_functions) < 0)
        return -1;
    for (k = 0; k < 3; k++) {
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
