/* mtokspec._speedups, the mnn semantics' stages (registered by module.c through speedups.h): the
 * per-character loops of MNN's normalizers and pre-tokenizers and the special-token split.
 *
 * The pure-Python stages (mtokspec/runtime/mnn/normalizers.py, pre_tokenizers.py, tokenizer.py,
 * unicode.py) are the reference.  These functions redo their loops in the same order over the same
 * bytes; every table they read (MNN's Unicode 15.0 categories and lower-case map, the ASCII white
 * space and punctuation sets, the Chinese ranges, the table normalizer's control characters, the
 * byte-level map) is handed over by Python once (mnn_stages_init, see runtime/mnn/_compiled.py),
 * never restated here.  The size bounds stay in Python: it checks them before it calls in, as the
 * pure path does.
 *
 *   mnn_stages_init(starts, categories, folds, lower, space, punct, chinese, to_space, byte_map)
 *       starts/categories: CATEGORY_STARTS and CATEGORIES (two-letter str); folds: bytes, the byte
 *       the regex engine folds the range's characters from U+0080 on to (unicode.fold); lower: sorted
 *       (cp, lower cp) pairs; space/punct: bytes, the ASCII sets; chinese: ((lo, hi), ...) inclusive;
 *       to_space: sorted code points; byte_map: 256 bytes objects (the GPT-2 character of each byte)
 *   mnn_table(rows) -> capsule      rows: (cp, bytes) in the file's order (MNN's binary search)
 *   mnn_bert_normalize(text, clean, chinese, lowercase, nfd) -> bytes   nfd: a table capsule or None
 *   mnn_table_normalize(text, table) -> bytes
 *   mnn_bert_pre_tokenize(splits) -> list
 *   mnn_byte_level_map(splits) -> list
 *   mnn_split_specials(b, specials, firsts) -> list of (piece, id or None)
 *       specials: list of (text, id) tried in order; firsts: 256 bytes, non-zero at a first byte
 *   mnn_added_matcher(tokens, space) -> capsule
 *       tokens: (content, id, lstrip, rstrip) of the added tokens, the first of each content, in
 *       order, contents not empty; space: bytes, the ASCII white space lstrip/rstrip eat
 *   mnn_added_split(text, matcher) -> list of (piece, id or None)   (pipeline.added_split)
 *   mnn_fold(text) -> bytes          regex._fold_text's folded text (one byte per character)
 *   mnn_scan_pieces(text, spans) -> list        regex.scan's pieces for the matches' spans
 *   mnn_scan_byte_level(text, program, steps, window) -> (pieces, steps) or None
 *       ByteLevel with use_regex on one split: fold, MNN's matcher (mnn_regex.c), cut, byte map
 *   mnn_split_pieces(text, spans, invert, behavior) -> list   regex.split's (behavior 0 Removed,
 *       1 MergedWithPrevious, 2 Isolated); spans: (start, end) character indices, as _spans gives
 *   mnn_metaspace_size(splits, replacement) -> int   the bound pre_tokenizers.Metaspace checks
 *   mnn_metaspace(splits, replacement, add_prefix_space) -> list
 */
#include "speedups.h"

#include <limits.h>

#define MAX_CP 0x110000
#define REPLACEMENT 0xFFFD

/* --- the tables Python hands over -------------------------------------------------------------- */

static uint8_t *cat_of;          /* MAX_CP entries: an index into cat_name */
static char cat_name[64][2];
static uint8_t cat_fold[64];     /* the folded byte of a category's characters from U+0080 on */
static uint32_t *lower_key, *lower_val;
static Py_ssize_t n_lower;
static uint8_t ascii_space[128], ascii_punct[128];
static uint32_t (*chinese)[2];
static Py_ssize_t n_chinese;
static uint32_t *to_space;
static Py_ssize_t n_to_space;
static PyObject *byte_map[256];
static int ready;

static inline char cat0(uint32_t cp) { return cp < MAX_CP ? cat_name[cat_of[cp]][0] : 'C'; }
static inline int cat_is(uint32_t cp, char a, char b)
{
    const char *c = cp < MAX_CP ? cat_name[cat_of[cp]] : "Cn";
    return c[0] == a && c[1] == b;
}
static inline int is_whitespace(uint32_t cp) { return (cp < 128 && ascii_space[cp]) || cat_is(cp, 'Z', 's'); }
static inline int is_chinese(uint32_t cp)
{
    for (Py_ssize_t k = 0; k < n_chinese; k++)
        if (chinese[k][0] <= cp && cp <= chinese[k][1])
            return 1;
    return 0;
}
/* the index of cp in the ascending array a, or -1 */
static inline Py_ssize_t sorted_index(const uint32_t *a, Py_ssize_t n, uint32_t cp)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (a[mid] < cp)
            lo = mid + 1;
        else if (a[mid] > cp)
            hi = mid;
        else
            return mid;
    }
    return -1;
}
static inline int in_sorted(const uint32_t *a, Py_ssize_t n, uint32_t cp)
{
    return sorted_index(a, n, cp) >= 0;
}
static inline uint32_t to_lower(uint32_t cp)
{
    Py_ssize_t k = sorted_index(lower_key, n_lower, cp);
    return k < 0 ? cp : lower_val[k];
}

/* MNN's Unicode::utf8_decode: the code point at s[i] and its length in *r (U+FFFD of length 1 for
 * a byte that does not start a well-formed sequence). */
static inline uint32_t decode(const uint8_t *s, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *r)
{
    Py_ssize_t left = n - i;
    uint8_t b0 = s[i];
    uint32_t cp;
    *r = 1;
    if (b0 < 0x80)
        return b0;
    if ((b0 & 0xE0) == 0xC0 && left >= 2 && (s[i + 1] & 0xC0) == 0x80) {
        cp = (uint32_t)(b0 & 0x1F) << 6 | (s[i + 1] & 0x3F);
        if (cp >= 0x80) {
            *r = 2;
            return cp;
        }
        return REPLACEMENT;
    }
    if ((b0 & 0xF0) == 0xE0 && left >= 3 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
        cp = (uint32_t)(b0 & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
        if (cp >= 0x800 && !(cp >= 0xD800 && cp <= 0xDFFF)) {
            *r = 3;
            return cp;
        }
        return REPLACEMENT;
    }
    if ((b0 & 0xF8) == 0xF0 && left >= 4 && (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80
        && (s[i + 3] & 0xC0) == 0x80) {
        cp = (uint32_t)(b0 & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 | (uint32_t)(s[i + 2] & 0x3F) << 6
             | (s[i + 3] & 0x3F);
        if (cp >= 0x10000 && cp <= 0x10FFFF) {
            *r = 4;
            return cp;
        }
        return REPLACEMENT;
    }
    return REPLACEMENT;
}

/* chr(cp).encode("utf-8", "surrogatepass") (MNN's utf8_encode): its length, written at out. */
static inline Py_ssize_t encode_cp(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* --- a growing byte buffer ----------------------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    Py_ssize_t n, cap;
    uint8_t small[512];
} Buf;

static void buf_init(Buf *b)
{
    b->p = b->small;
    b->n = 0;
    b->cap = (Py_ssize_t)sizeof b->small;
}
static void buf_free(Buf *b)
{
    if (b->p != b->small)
        PyMem_Free(b->p);
}
static int buf_reserve(Buf *b, Py_ssize_t more)
{
    Py_ssize_t want = b->n + more, cap = b->cap;
    uint8_t *p;
    if (want <= cap)
        return 0;
    while (cap < want)
        cap *= 2;
    if (b->p == b->small) {
        p = PyMem_Malloc((size_t)cap);
        if (p != NULL)
            memcpy(p, b->small, (size_t)b->n);
    } else {
        p = PyMem_Realloc(b->p, (size_t)cap);
    }
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}
static inline int buf_put(Buf *b, const void *s, Py_ssize_t k)
{
    if (b->n + k > b->cap && buf_reserve(b, k) < 0)
        return -1;
    memcpy(b->p + b->n, s, (size_t)k);
    b->n += k;
    return 0;
}
static inline int buf_byte(Buf *b, uint8_t c)
{
    if (b->n + 1 > b->cap && buf_reserve(b, 1) < 0)
        return -1;
    b->p[b->n++] = c;
    return 0;
}

/* --- mnn_stages_init ----------------------------------------------------------------------------- */

static int read_u32(PyObject *o, uint32_t *v)
{
    unsigned long long x = PyLong_AsUnsignedLongLong(o);
    if (x == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    if (x > 0xFFFFFFFFULL) {
        PyErr_SetString(PyExc_OverflowError, "a code point past u32");
        return -1;
    }
    *v = (uint32_t)x;
    return 0;
}


/* a sorted tuple of ints into a new array (strictly ascending, else ValueError) */
static int read_sorted(PyObject *seq, uint32_t **out, Py_ssize_t *n)
{
    PyObject *fast = PySequence_Fast(seq, "a sequence of code points");
    Py_ssize_t k, m;
    uint32_t *a;
    if (fast == NULL)
        return -1;
    m = PySequence_Fast_GET_SIZE(fast);
    a = PyMem_Malloc(sizeof(uint32_t) * (size_t)(m ? m : 1));
    if (a == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (k = 0; k < m; k++) {
        if (read_u32(PySequence_Fast_GET_ITEM(fast, k), &a[k]) < 0 || (k && a[k] <= a[k - 1])) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "code points not strictly ascending");
            PyMem_Free(a);
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    *out = a;
    *n = m;
    return 0;
}

static void free_tables(void)
{
    PyMem_Free(cat_of);
    PyMem_Free(lower_key);
    PyMem_Free(lower_val);
    PyMem_Free(chinese);
    PyMem_Free(to_space);
    cat_of = NULL;
    lower_key = lower_val = to_space = NULL;
    chinese = NULL;
    n_lower = n_chinese = n_to_space = 0;
    for (int k = 0; k < 256; k++)
        Py_CLEAR(byte_map[k]);
    ready = 0;
}

static PyObject *mnn_stages_init(PyObject *mod, PyObject *args)
{
    PyObject *starts, *cats, *folds, *lower, *space, *punct, *chin, *tospace, *bmap;
    PyObject *fs = NULL, *fc = NULL, *fl = NULL, *fch = NULL, *fb = NULL;
    Py_ssize_t n, k;
    int nnames = 0;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOSOOOOOO", &starts, &cats, &folds, &lower, &space, &punct, &chin, &tospace, &bmap))
        return NULL;
    free_tables();
    if (read_set128(space, ascii_space) < 0 || read_set128(punct, ascii_punct) < 0)
        goto fail;
    fs = PySequence_Fast(starts, "starts");
    fc = PySequence_Fast(cats, "categories");
    if (fs == NULL || fc == NULL)
        goto fail;
    n = PySequence_Fast_GET_SIZE(fs);
    if (n != PySequence_Fast_GET_SIZE(fc) || n != PyBytes_GET_SIZE(folds) || n == 0) {
        PyErr_SetString(PyExc_ValueError, "starts, categories and folds differ in length");
        goto fail;
    }
    cat_of = PyMem_Malloc(MAX_CP);
    if (cat_of == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    {
        uint32_t prev = 0;
        int prev_code = -1;
        uint8_t fold_set[64] = {0};
        for (k = 0; k <= n; k++) {
            uint32_t start = MAX_CP;
            int code = 0;
            if (k < n) {
                PyObject *c = PySequence_Fast_GET_ITEM(fc, k);
                const char *name;
                Py_ssize_t len;
                if (read_u32(PySequence_Fast_GET_ITEM(fs, k), &start) < 0)
                    goto fail;
                name = PyUnicode_Check(c) ? PyUnicode_AsUTF8AndSize(c, &len) : NULL;
                if (name == NULL || len != 2) {
                    if (!PyErr_Occurred())
                        PyErr_SetString(PyExc_ValueError, "a category is two letters");
                    goto fail;
                }
                for (code = 0; code < nnames; code++)
                    if (cat_name[code][0] == name[0] && cat_name[code][1] == name[1])
                        break;
                if (code == nnames) {
                    if (nnames == 64) {
                        PyErr_SetString(PyExc_ValueError, "too many categories");
                        goto fail;
                    }
                    cat_name[nnames][0] = name[0];
                    cat_name[nnames][1] = name[1];
                    nnames++;
                }
                if ((k == 0 && start != 0) || (k > 0 && start <= prev) || start > MAX_CP) {
                    PyErr_SetString(PyExc_ValueError, "category starts from 0, strictly ascending");
                    goto fail;
                }
            }
            if (k > 0) {
                memset(cat_of + prev, prev_code, start - prev);
                if (start > 0x80) {  /* the range folds characters from U+0080 on: its category's byte */
                    uint8_t f = (uint8_t)PyBytes_AS_STRING(folds)[k - 1];
                    if (fold_set[prev_code] && cat_fold[prev_code] != f) {
                        PyErr_SetString(PyExc_ValueError, "a category folds to two bytes");
                        goto fail;
                    }
                    cat_fold[prev_code] = f;
                    fold_set[prev_code] = 1;
                }
            }
            prev = start;
            prev_code = code;
            if (start == MAX_CP)
                break;
        }
    }
    fl = PySequence_Fast(lower, "lower");
    if (fl == NULL)
        goto fail;
    n_lower = PySequence_Fast_GET_SIZE(fl);
    lower_key = PyMem_Malloc(sizeof(uint32_t) * (size_t)(n_lower + 1));
    lower_val = PyMem_Malloc(sizeof(uint32_t) * (size_t)(n_lower + 1));
    if (lower_key == NULL || lower_val == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (k = 0; k < n_lower; k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fl, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || read_u32(PyTuple_GET_ITEM(pair, 0), &lower_key[k]) < 0
            || read_u32(PyTuple_GET_ITEM(pair, 1), &lower_val[k]) < 0 || lower_val[k] >= MAX_CP
            || (k && lower_key[k] <= lower_key[k - 1])) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "lower: sorted (cp, cp) pairs below 0x110000");
            goto fail;
        }
    }
    fch = PySequence_Fast(chin, "chinese");
    if (fch == NULL)
        goto fail;
    n_chinese = PySequence_Fast_GET_SIZE(fch);
    chinese = PyMem_Malloc(sizeof(uint32_t[2]) * (size_t)(n_chinese + 1));
    if (chinese == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (k = 0; k < n_chinese; k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fch, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || read_u32(PyTuple_GET_ITEM(pair, 0), &chinese[k][0]) < 0
            || read_u32(PyTuple_GET_ITEM(pair, 1), &chinese[k][1]) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "chinese: (lo, hi) pairs");
            goto fail;
        }
    }
    if (read_sorted(tospace, &to_space, &n_to_space) < 0)
        goto fail;
    fb = PySequence_Fast(bmap, "byte_map");
    if (fb == NULL)
        goto fail;
    if (PySequence_Fast_GET_SIZE(fb) != 256) {
        PyErr_SetString(PyExc_ValueError, "byte_map has 256 entries");
        goto fail;
    }
    for (k = 0; k < 256; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fb, k);
        if (!PyBytes_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "byte_map holds bytes");
            goto fail;
        }
        Py_INCREF(o);
        byte_map[k] = o;
    }
    Py_DECREF(fs);
    Py_DECREF(fc);
    Py_DECREF(fl);
    Py_DECREF(fch);
    Py_DECREF(fb);
    ready = 1;
    Py_RETURN_NONE;
fail:
    Py_XDECREF(fs);
    Py_XDECREF(fc);
    Py_XDECREF(fl);
    Py_XDECREF(fch);
    Py_XDECREF(fb);
    free_tables();
    return NULL;
}

static int check_ready(void)
{
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "mnn_stages_init was not called");
        return -1;
    }
    return 0;
}

/* --- normalizer tables (MNN's binary search, which stops at the first probe equal) --------------- */

typedef struct {
    Py_ssize_t n;
    int64_t *keys;
    PyObject **reps;    /* bytes */
} Table;

static void table_free(PyObject *cap)
{
    Table *t = PyCapsule_GetPointer(cap, "mnn_table");
    if (t == NULL)
        return;
    for (Py_ssize_t k = 0; k < t->n; k++)
        Py_XDECREF(t->reps[k]);
    PyMem_Free(t->keys);
    PyMem_Free(t->reps);
    PyMem_Free(t);
}

static PyObject *mnn_table(PyObject *mod, PyObject *rows)
{
    PyObject *fast = PySequence_Fast(rows, "rows"), *cap;
    Table *t;
    Py_ssize_t k, n;
    (void)mod;
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    t = PyMem_Calloc(1, sizeof(Table));
    if (t != NULL) {
        t->keys = PyMem_Calloc((size_t)(n ? n : 1), sizeof(int64_t));
        t->reps = PyMem_Calloc((size_t)(n ? n : 1), sizeof(PyObject *));
    }
    if (t == NULL || t->keys == NULL || t->reps == NULL) {
        if (t != NULL) {
            PyMem_Free(t->keys);
            PyMem_Free(t->reps);
            PyMem_Free(t);
        }
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    cap = PyCapsule_New(t, "mnn_table", table_free);
    if (cap == NULL) {
        PyMem_Free(t->keys);
        PyMem_Free(t->reps);
        PyMem_Free(t);
        Py_DECREF(fast);
        return NULL;
    }
    for (k = 0; k < n; k++) {
        PyObject *row = PySequence_Fast_GET_ITEM(fast, k), *rep;
        long long key;
        int overflow;
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(row, 1))) {
            PyErr_SetString(PyExc_TypeError, "a table row is (int, bytes)");
            goto fail;
        }
        /* a key past int64 compares with every code point as the bound it is clamped to */
        key = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(row, 0), &overflow);
        if (key == -1 && PyErr_Occurred())
            goto fail;
        if (overflow)
            key = overflow > 0 ? LLONG_MAX : LLONG_MIN;
        rep = PyTuple_GET_ITEM(row, 1);
        Py_INCREF(rep);
        t->keys[k] = key;
        t->reps[k] = rep;
        t->n = k + 1;
    }
    Py_DECREF(fast);
    return cap;
fail:
    Py_DECREF(fast);
    Py_DECREF(cap);
    return NULL;
}

static inline PyObject *table_find(const Table *t, uint32_t cp)
{
    Py_ssize_t lo = 0, hi = t->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if ((int64_t)cp > t->keys[mid])
            lo = mid + 1;
        else if ((int64_t)cp < t->keys[mid])
            hi = mid;
        else
            return t->reps[mid];
    }
    return NULL;
}

static Table *get_table(PyObject *cap)
{
    return PyCapsule_GetPointer(cap, "mnn_table");
}

/* --- normalizers --------------------------------------------------------------------------------- */

static PyObject *buf_bytes(Buf *b)
{
    PyObject *r = PyBytes_FromStringAndSize((const char *)b->p, b->n);
    buf_free(b);
    return r;
}

/* normalizers.Bert.normalize, after its size check */
static PyObject *mnn_bert_normalize(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, i, r;
    int clean, chin, lowercase;
    Table *nfd = NULL;
    Buf out;
    (void)mod;
    if (nargs != 5 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_bert_normalize(text: bytes, clean, chinese, lowercase, nfd)");
        return NULL;
    }
    if (check_ready() < 0)
        return NULL;
    if ((clean = PyObject_IsTrue(args[1])) < 0 || (chin = PyObject_IsTrue(args[2])) < 0
        || (lowercase = PyObject_IsTrue(args[3])) < 0)
        return NULL;
    if (args[4] != Py_None && (nfd = get_table(args[4])) == NULL)
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    buf_init(&out);
    for (i = 0; i < n; i += r) {
        uint32_t cp = decode(s, n, i, &r);
        if (clean) {
            if (cp == 9 || cp == 10 || cp == 13 || cat_is(cp, 'Z', 's')) {
                if (buf_byte(&out, ' ') < 0)
                    goto fail;
                continue;
            }
            if (cp == 0 || cp == REPLACEMENT || cat_is(cp, 'C', 'c'))
                continue;
        }
        if (chin && is_chinese(cp)) {
            if (buf_byte(&out, ' ') < 0 || buf_put(&out, s + i, r) < 0 || buf_byte(&out, ' ') < 0)
                goto fail;
            continue;
        }
        if (nfd != NULL) {
            PyObject *rep = table_find(nfd, cp);
            const uint8_t *d = rep ? (const uint8_t *)PyBytes_AS_STRING(rep) : s + i;
            Py_ssize_t dn = rep ? PyBytes_GET_SIZE(rep) : r, j, dr;
            for (j = 0; j < dn; j += dr) {
                uint32_t dcp = decode(d, dn, j, &dr);
                if (cat0(dcp) != 'M' && buf_put(&out, d + j, dr) < 0)
                    goto fail;
            }
            continue;
        }
        if (buf_put(&out, s + i, r) < 0)
            goto fail;
    }
    if (lowercase) {
        int ascii = 1;
        for (i = 0; i < out.n && ascii; i++)
            ascii = out.p[i] < 0x80;
        if (ascii) {
            for (i = 0; i < out.n; i++)
                if (out.p[i] >= 'A' && out.p[i] <= 'Z')
                    out.p[i] = (uint8_t)(out.p[i] + 32);
        } else {
            Buf low;
            buf_init(&low);
            for (i = 0; i < out.n; i += r) {
                uint8_t enc[4];
                uint32_t cp = to_lower(decode(out.p, out.n, i, &r));
                if (buf_put(&low, enc, encode_cp(cp, enc)) < 0) {
                    buf_free(&low);
                    goto fail;
                }
            }
            buf_free(&out);
            return buf_bytes(&low);
        }
    }
    return buf_bytes(&out);
fail:
    buf_free(&out);
    return NULL;
}

/* normalizers.Table.normalize (a non-empty table), after its size check */
static PyObject *mnn_table_normalize(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, i, r;
    Table *t;
    Buf out;
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_table_normalize(text: bytes, table)");
        return NULL;
    }
    if (check_ready() < 0 || (t = get_table(args[1])) == NULL)
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    buf_init(&out);
    for (i = 0; i < n; i += r) {
        uint32_t cp = decode(s, n, i, &r);
        PyObject *rep;
        int rc;
        if (in_sorted(to_space, n_to_space, cp)) {
            rc = buf_byte(&out, ' ');
        } else if ((rep = table_find(t, cp)) != NULL) {
            rc = buf_put(&out, PyBytes_AS_STRING(rep), PyBytes_GET_SIZE(rep));
        } else {
            rc = buf_put(&out, s + i, r);
        }
        if (rc < 0) {
            buf_free(&out);
            return NULL;
        }
    }
    return buf_bytes(&out);
}

/* --- pre-tokenizers ------------------------------------------------------------------------------ */

static int append_slice(void *out, const uint8_t *p, Py_ssize_t n)
{
    PyObject *b = PyBytes_FromStringAndSize((const char *)p, n);
    int rc;
    if (b == NULL)
        return -1;
    rc = PyList_Append(out, b);
    Py_DECREF(b);
    return rc;
}

/* each split of splits (a sequence of bytes) given to each(ctx, bytes, size) in turn: 0, or -1 with
 * the error set (a split that is not bytes: TypeError) -- the loop every splits-taking stage runs */
typedef int (*split_fn)(void *ctx, const uint8_t *s, Py_ssize_t n);

static int for_each_split(PyObject *splits, split_fn each, void *ctx)
{
    PyObject *fast = PySequence_Fast(splits, "splits");
    Py_ssize_t k;
    int rc = 0;
    if (fast == NULL)
        return -1;
    for (k = 0; k < PySequence_Fast_GET_SIZE(fast) && rc == 0; k++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, k);
        if (!PyBytes_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "splits are bytes");
            rc = -1;
        } else {
            rc = each(ctx, (const uint8_t *)PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
        }
    }
    Py_DECREF(fast);
    return rc;
}

/* a new list of what each(list, split) appends for each split (NULL with the error set) */
static PyObject *map_splits(PyObject *splits, split_fn each)
{
    PyObject *out;
    if (check_ready() < 0 || (out = PyList_New(0)) == NULL)
        return NULL;
    if (for_each_split(splits, each, out) < 0)
        Py_CLEAR(out);
    return out;
}

/* one split's pieces under pre_tokenizers.Bert, appended to out: cur is the run [start, i) of the
 * current word (MNN copies the characters one by one, contiguously) */
static int bert_split(void *out, const uint8_t *s, Py_ssize_t n)
{
    Py_ssize_t i, r, start = 0;
    for (i = 0; i < n; i += r) {
        uint32_t cp = decode(s, n, i, &r);
        if (is_whitespace(cp)) {
            if (i > start && append_slice(out, s + start, i - start) < 0)
                return -1;
            start = i + r;
        } else if ((cp < 128 && ascii_punct[cp]) || cat0(cp) == 'P') {
            if (i > start && append_slice(out, s + start, i - start) < 0)
                return -1;
            if (append_slice(out, s + i, r) < 0)
                return -1;
            start = i + r;
        }
    }
    return n > start ? append_slice(out, s + start, n - start) : 0;
}

/* pre_tokenizers.Bert.pre_tokenize */
static PyObject *mnn_bert_pre_tokenize(PyObject *mod, PyObject *splits)
{
    (void)mod;
    return map_splits(splits, bert_split);
}

static int append_mapped(void *out, const uint8_t *p, Py_ssize_t n);

/* pre_tokenizers.byte_level_map of each split */
static PyObject *mnn_byte_level_map(PyObject *mod, PyObject *splits)
{
    (void)mod;
    return map_splits(splits, append_mapped);
}

/* --- the special-token split (tokenizer.py split_specials) --------------------------------------- */

static int append_pair(PyObject *out, PyObject *piece, PyObject *id)
{
    PyObject *t = PyTuple_Pack(2, piece, id);
    int rc;
    if (t == NULL)
        return -1;
    rc = PyList_Append(out, t);
    Py_DECREF(t);
    return rc;
}

static int append_piece(PyObject *out, const uint8_t *p, Py_ssize_t n)
{
    PyObject *b = PyBytes_FromStringAndSize((const char *)p, n);
    int rc;
    if (b == NULL)
        return -1;
    rc = append_pair(out, b, Py_None);
    Py_DECREF(b);
    return rc;
}

/* strncmp(text, token, len) == 0 with len bytes of text available */
static inline int strncmp_equal(const uint8_t *a, const uint8_t *b, Py_ssize_t len)
{
    for (Py_ssize_t k = 0; k < len; k++) {
        if (a[k] != b[k])
            return 0;
        if (a[k] == 0)
            return 1;
    }
    return 1;
}

static PyObject *mnn_split_specials(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *specials, *out;
    const uint8_t *s, *firsts;
    Py_ssize_t n, i, start = 0, m, k;
    (void)mod;
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyList_Check(args[1]) || !PyBytes_Check(args[2])
        || PyBytes_GET_SIZE(args[2]) != 256) {
        PyErr_SetString(PyExc_TypeError, "mnn_split_specials(b: bytes, specials: list, firsts: 256 bytes)");
        return NULL;
    }
    specials = args[1];
    m = PyList_GET_SIZE(specials);
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    firsts = (const uint8_t *)PyBytes_AS_STRING(args[2]);
    out = PyList_New(0);
    if (out == NULL)
        return NULL;
    if (m == 0) {
        if (append_pair(out, args[0], Py_None) < 0)
            goto fail;
        return out;
    }
    for (i = 0; i < n; i++) {
        if (!firsts[s[i]])
            continue;
        for (k = 0; k < m; k++) {
            PyObject *e = PyList_GET_ITEM(specials, k), *tok;
            Py_ssize_t len;
            if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(e, 0))) {
                PyErr_SetString(PyExc_TypeError, "specials are (bytes, id) tuples");
                goto fail;
            }
            tok = PyTuple_GET_ITEM(e, 0);
            len = PyBytes_GET_SIZE(tok);
            if (i + len <= n && strncmp_equal(s + i, (const uint8_t *)PyBytes_AS_STRING(tok), len)) {
                if (i > start && append_piece(out, s + start, i - start) < 0)
                    goto fail;
                if (append_pair(out, tok, PyTuple_GET_ITEM(e, 1)) < 0)
                    goto fail;
                start = i + len;
                i = start - 1;
                break;
            }
        }
    }
    if (start < n) {
        if (start == 0) {
            if (append_pair(out, args[0], Py_None) < 0)
                goto fail;
        } else if (append_piece(out, s + start, n - start) < 0) {
            goto fail;
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* --- the added-token split (pipeline.py added_split) ----------------------------------------------- */

typedef struct {
    Py_ssize_t n;
    PyObject **content;     /* bytes */
    PyObject **id;
    uint8_t *lstrip, *rstrip;
    Py_ssize_t *order;      /* the tokens by first byte, longest first within one first byte */
    Py_ssize_t bucket[257]; /* order[bucket[c]:bucket[c + 1]]: the tokens starting with byte c */
    uint8_t space[256];
} Added;

static void added_free(PyObject *cap)
{
    Added *a = PyCapsule_GetPointer(cap, "mnn_added");
    if (a == NULL)
        return;
    for (Py_ssize_t k = 0; k < a->n; k++) {
        Py_XDECREF(a->content[k]);
        Py_XDECREF(a->id[k]);
    }
    PyMem_Free(a->content);
    PyMem_Free(a->id);
    PyMem_Free(a->lstrip);
    PyMem_Free(a->rstrip);
    PyMem_Free(a->order);
    PyMem_Free(a);
}

static PyObject *mnn_added_matcher(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *fast, *cap;
    Added *a;
    Py_ssize_t n, k, j, c;
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "mnn_added_matcher(tokens, space: bytes)");
        return NULL;
    }
    fast = PySequence_Fast(args[0], "tokens");
    if (fast == NULL)
        return NULL;
    n = PySequence_Fast_GET_SIZE(fast);
    a = PyMem_Calloc(1, sizeof(Added));
    if (a == NULL) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    cap = PyCapsule_New(a, "mnn_added", added_free);
    if (cap == NULL) {
        PyMem_Free(a);
        Py_DECREF(fast);
        return NULL;
    }
    a->content = PyMem_Calloc((size_t)(n + 1), sizeof(PyObject *));
    a->id = PyMem_Calloc((size_t)(n + 1), sizeof(PyObject *));
    a->lstrip = PyMem_Calloc((size_t)(n + 1), 1);
    a->rstrip = PyMem_Calloc((size_t)(n + 1), 1);
    a->order = PyMem_Calloc((size_t)(n + 1), sizeof(Py_ssize_t));
    if (a->content == NULL || a->id == NULL || a->lstrip == NULL || a->rstrip == NULL || a->order == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (k = 0; k < n; k++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, k), *content, *id;
        int l, r;
        if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "SOpp", &content, &id, &l, &r) || PyBytes_GET_SIZE(content) == 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a token is (content: non-empty bytes, id, lstrip, rstrip)");
            goto fail;
        }
        Py_INCREF(content);
        Py_INCREF(id);
        a->content[k] = content;
        a->id[k] = id;
        a->lstrip[k] = (uint8_t)l;
        a->rstrip[k] = (uint8_t)r;
        a->n = k + 1;
    }
    /* counting sort by first byte, then each bucket by length, longest first (insertion sort) */
    for (k = 0; k < n; k++)
        a->bucket[(uint8_t)PyBytes_AS_STRING(a->content[k])[0] + 1]++;
    for (c = 0; c < 256; c++)
        a->bucket[c + 1] += a->bucket[c];
    {
        Py_ssize_t fill[256];
        memcpy(fill, a->bucket, sizeof fill);
        for (k = 0; k < n; k++)
            a->order[fill[(uint8_t)PyBytes_AS_STRING(a->content[k])[0]]++] = k;
    }
    for (c = 0; c < 256; c++)
        for (k = a->bucket[c] + 1; k < a->bucket[c + 1]; k++) {
            Py_ssize_t v = a->order[k], len = PyBytes_GET_SIZE(a->content[v]);
            for (j = k; j > a->bucket[c] && PyBytes_GET_SIZE(a->content[a->order[j - 1]]) < len; j--)
                a->order[j] = a->order[j - 1];
            a->order[j] = v;
        }
    for (k = 0; k < PyBytes_GET_SIZE(args[1]); k++)
        a->space[(uint8_t)PyBytes_AS_STRING(args[1])[k]] = 1;
    Py_DECREF(fast);
    return cap;
fail:
    Py_DECREF(fast);
    Py_DECREF(cap);
    return NULL;
}

/* the earliest place from start where a content matches and the longest content there: its index
 * (the place in *pos), or -1 */
static Py_ssize_t added_find(const Added *a, const uint8_t *s, Py_ssize_t n, Py_ssize_t start, Py_ssize_t *pos)
{
    for (Py_ssize_t i = start; i < n; i++) {
        uint8_t c = s[i];
        for (Py_ssize_t k = a->bucket[c]; k < a->bucket[c + 1]; k++) {
            PyObject *t = a->content[a->order[k]];
            Py_ssize_t len = PyBytes_GET_SIZE(t);
            if (len <= n - i && memcmp(s + i, PyBytes_AS_STRING(t), (size_t)len) == 0) {
                *pos = i;
                return a->order[k];
            }
        }
    }
    return -1;
}

static PyObject *mnn_added_split(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, last = 0;
    Added *a;
    PyObject *out;
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_added_split(text: bytes, matcher)");
        return NULL;
    }
    if ((a = PyCapsule_GetPointer(args[1], "mnn_added")) == NULL)
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    out = PyList_New(0);
    if (out == NULL)
        return NULL;
    while (last < n) {
        Py_ssize_t pos = 0, k = added_find(a, s, n, last, &pos), end, nxt;
        if (k < 0) {
            if ((last == 0 ? append_pair(out, args[0], Py_None) : append_piece(out, s + last, n - last)) < 0)
                goto fail;
            break;
        }
        end = pos;
        nxt = pos + PyBytes_GET_SIZE(a->content[k]);
        if (a->lstrip[k])
            while (end > last && a->space[s[end - 1]])
                end--;
        if (a->rstrip[k])
            while (nxt < n && a->space[s[nxt]])
                nxt++;
        if (end > last && append_piece(out, s + last, end - last) < 0)
            goto fail;
        if (append_pair(out, a->content[k], a->id[k]) < 0)
            goto fail;
        last = nxt;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* --- the regex scan's and split's pieces (regex.py scan, split) ------------------------------------- */

static inline uint8_t fold(uint32_t cp) { return cp < 0x80 ? (uint8_t)cp : cat_fold[cat_of[cp]]; }

static PyObject *mnn_fold(PyObject *mod, PyObject *text)
{
    const uint8_t *s;
    Py_ssize_t n, i, r;
    Buf out;
    (void)mod;
    if (!PyBytes_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "mnn_fold(text: bytes)");
        return NULL;
    }
    if (check_ready() < 0)
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(text);
    n = PyBytes_GET_SIZE(text);
    buf_init(&out);
    for (i = 0; i < n; i += r)
        if (buf_byte(&out, fold(decode(s, n, i, &r))) < 0) {
            buf_free(&out);
            return NULL;
        }
    return buf_bytes(&out);
}

/* the byte offset of each character of text (and its end): a new array of *count + 1 entries */
static Py_ssize_t *char_offsets(const uint8_t *s, Py_ssize_t n, Py_ssize_t *count)
{
    Py_ssize_t *offs = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n + 1)), i, r, k = 0;
    if (offs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (i = 0; i < n; i += r) {
        decode(s, n, i, &r);
        offs[k++] = i;
    }
    offs[k] = n;
    *count = k;
    return offs;
}

/* the spans as a new array of 2 * *count indices, checked: 0 <= a <= b <= chars, ascending */
static Py_ssize_t *read_spans(PyObject *spans, Py_ssize_t chars, Py_ssize_t *count)
{
    PyObject *fast = PySequence_Fast(spans, "spans");
    Py_ssize_t m, k, prev = 0, *out;
    if (fast == NULL)
        return NULL;
    m = PySequence_Fast_GET_SIZE(fast);
    out = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(2 * m + 1));
    if (out == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (k = 0; k < m; k++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, k);
        Py_ssize_t a, b;
        if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "nn", &a, &b) || a < prev || b < a || b > chars) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "spans: ascending (start, end) within the text");
            PyMem_Free(out);
            Py_DECREF(fast);
            return NULL;
        }
        out[2 * k] = a;
        out[2 * k + 1] = b;
        prev = b;
    }
    Py_DECREF(fast);
    *count = m;
    return out;
}

/* regex.scan's pieces of s (chars characters at byte offsets offs) given the m matched spans, each
 * passed to append(out, ...): every match, and every character no alternative matches on its own */
static int append_scanned(PyObject *out, const uint8_t *s, const Py_ssize_t *offs, Py_ssize_t chars,
                          const Py_ssize_t *spans, Py_ssize_t m, split_fn append)
{
    Py_ssize_t k, j, prev = 0;
    for (k = 0; k <= m; k++) {
        Py_ssize_t a = k < m ? spans[2 * k] : chars;
        for (j = prev; j < a; j++)
            if (append(out, s + offs[j], offs[j + 1] - offs[j]) < 0)
                return -1;
        if (k < m) {
            Py_ssize_t b = spans[2 * k + 1];
            if (append(out, s + offs[a], offs[b] - offs[a]) < 0)
                return -1;
            prev = b;
        }
    }
    return 0;
}

static PyObject *mnn_scan_pieces(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, chars, m, *offs, *spans = NULL;
    PyObject *out = NULL;
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_scan_pieces(text: bytes, spans)");
        return NULL;
    }
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    offs = char_offsets(s, n, &chars);
    if (offs == NULL || (spans = read_spans(args[1], chars, &m)) == NULL || (out = PyList_New(0)) == NULL)
        goto done;
    if (append_scanned(out, s, offs, chars, spans, m, append_slice) < 0)
        Py_CLEAR(out);
done:
    PyMem_Free(offs);
    PyMem_Free(spans);
    return out;
}

/* one piece's bytes as GPT-2 characters (pre_tokenizers.byte_level_map), appended to out */
static int append_mapped(void *out, const uint8_t *p, Py_ssize_t n)
{
    Py_ssize_t size = 0, i;
    PyObject *b;
    char *w;
    for (i = 0; i < n; i++)
        size += PyBytes_GET_SIZE(byte_map[p[i]]);
    b = PyBytes_FromStringAndSize(NULL, size);
    if (b == NULL)
        return -1;
    w = PyBytes_AS_STRING(b);
    for (i = 0; i < n; i++) {
        PyObject *c = byte_map[p[i]];
        memcpy(w, PyBytes_AS_STRING(c), (size_t)PyBytes_GET_SIZE(c));
        w += PyBytes_GET_SIZE(c);
    }
    if (PyList_Append(out, b) < 0) {
        Py_DECREF(b);
        return -1;
    }
    Py_DECREF(b);
    return 0;
}

/* ByteLevel with use_regex on one split: regex.scan's pieces of text under the compiled pattern
 * (fold, MNN's matcher, cut), each mapped by byte_level_map -- (pieces, steps left), or None when
 * the budget ran out (the pure path then refuses the same input) */
static PyObject *mnn_scan_byte_level(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, i, r, chars = 0, m = 0, *offs = NULL, *spans = NULL;
    long long steps, window;
    uint8_t *folded = NULL;
    PyObject *out = NULL;
    int rc;
    (void)mod;
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_scan_byte_level(text: bytes, program, steps, window)");
        return NULL;
    }
    steps = PyLong_AsLongLong(args[2]);
    window = PyLong_AsLongLong(args[3]);
    if (PyErr_Occurred() || check_ready() < 0)
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    offs = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(n + 1));
    folded = PyMem_Malloc((size_t)n + 1);
    if (offs == NULL || folded == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i += r) {
        folded[chars] = fold(decode(s, n, i, &r));
        offs[chars++] = i;
    }
    offs[chars] = n;
    rc = mnn_regex_spans(args[1], folded, chars, &steps, window, &spans, &m);
    if (rc < 0)
        goto done;
    if (rc > 0) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    if ((out = PyList_New(0)) == NULL)
        goto done;
    if (append_scanned(out, s, offs, chars, spans, m, append_mapped) < 0)
        Py_CLEAR(out);
    else
        Py_SETREF(out, Py_BuildValue("(OL)", out, steps));
done:
    PyMem_Free(offs);
    PyMem_Free(folded);
    PyMem_Free(spans);
    return out;
}

static PyObject *mnn_split_pieces(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    const uint8_t *s;
    Py_ssize_t n, chars, m, k, prev = 0, *offs, *spans = NULL, nseg = 0, *seg = NULL;
    PyObject *out = NULL;
    int invert, behavior;
    (void)mod;
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "mnn_split_pieces(text: bytes, spans, invert, behavior)");
        return NULL;
    }
    if ((invert = PyObject_IsTrue(args[2])) < 0)
        return NULL;
    behavior = (int)PyLong_AsLong(args[3]);
    if (behavior == -1 && PyErr_Occurred())
        return NULL;
    s = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    n = PyBytes_GET_SIZE(args[0]);
    offs = char_offsets(s, n, &chars);
    if (offs == NULL || (spans = read_spans(args[1], chars, &m)) == NULL)
        goto done;
    /* the segments (byte start, byte end, matched) as regex.split makes them */
    seg = PyMem_Malloc(sizeof(Py_ssize_t) * 3 * (size_t)(2 * m + 1));
    if (seg == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (k = 0; k < m; k++) {
        Py_ssize_t a = spans[2 * k], b = spans[2 * k + 1];
        if (a > prev) {
            seg[3 * nseg] = offs[prev], seg[3 * nseg + 1] = offs[a], seg[3 * nseg + 2] = 0;
            nseg++;
        }
        seg[3 * nseg] = offs[a], seg[3 * nseg + 1] = offs[b], seg[3 * nseg + 2] = 1;
        nseg++;
        prev = b;
    }
    if (prev < chars) {
        seg[3 * nseg] = offs[prev], seg[3 * nseg + 1] = n, seg[3 * nseg + 2] = 0;
        nseg++;
    }
    if ((out = PyList_New(0)) == NULL)
        goto done;
    for (k = 0; k < nseg; k++) {
        Py_ssize_t a = seg[3 * k], b = seg[3 * k + 1];
        int matched = (int)seg[3 * k + 2] ^ invert;
        if (behavior == 0) {                      /* Removed */
            if (matched || b == a)
                continue;
        } else if (behavior == 1 && matched && PyList_GET_SIZE(out) > 0) {   /* MergedWithPrevious */
            Py_ssize_t last = PyList_GET_SIZE(out) - 1;
            PyObject *prev_piece = PyList_GET_ITEM(out, last), *joined;
            Py_ssize_t pn = PyBytes_GET_SIZE(prev_piece);
            joined = PyBytes_FromStringAndSize(NULL, pn + (b - a));
            if (joined == NULL)
                goto fail;
            memcpy(PyBytes_AS_STRING(joined), PyBytes_AS_STRING(prev_piece), (size_t)pn);
            memcpy(PyBytes_AS_STRING(joined) + pn, s + a, (size_t)(b - a));
            if (PyList_SetItem(out, last, joined) < 0)
                goto fail;
            continue;
        } else if (b == a) {
            continue;
        }
        if (append_slice(out, s + a, b - a) < 0)
            goto fail;
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(offs);
    PyMem_Free(spans);
    PyMem_Free(seg);
    return out;
}

/* --- Metaspace (pre_tokenizers.Metaspace) ---------------------------------------------------------- */

typedef struct {
    PyObject *out;      /* mnn_metaspace: the list the pieces go to */
    const char *rep;    /* the replacement */
    Py_ssize_t nrep;
    int prefix;         /* add_prefix_space */
    Py_ssize_t total;   /* mnn_metaspace_size: the size so far */
} Meta;

/* n + len(rep) + (spaces * (len(rep) - 1) where len(rep) > 1) for one split */
static int meta_size(void *ctx, const uint8_t *p, Py_ssize_t n)
{
    Meta *m = ctx;
    Py_ssize_t i, spaces = 0;
    for (i = 0; i < n; i++)
        spaces += p[i] == ' ';
    m->total += n + m->nrep + (m->nrep > 1 ? spaces * (m->nrep - 1) : 0);
    return 0;
}

static PyObject *mnn_metaspace_size(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    Meta m = {NULL, NULL, 0, 0, 0};
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "mnn_metaspace_size(splits, replacement: bytes)");
        return NULL;
    }
    m.nrep = PyBytes_GET_SIZE(args[1]);
    /* n + len(splits) * len(rep) + sum(grown(s, b" ", rep) - len(s)) */
    if (for_each_split(args[0], meta_size, &m) < 0)
        return NULL;
    return PyLong_FromSsize_t(m.total);
}

/* one split with each space replaced (and the replacement in front where prefix asks), appended */
static int meta_split(void *ctx, const uint8_t *p, Py_ssize_t n)
{
    Meta *m = ctx;
    Py_ssize_t i, spaces = 0, size;
    int add = m->prefix && n > 0 && p[0] != ' ', rc;
    PyObject *b;
    char *w;
    for (i = 0; i < n; i++)
        spaces += p[i] == ' ';
    size = n - spaces + (spaces + add) * m->nrep;
    b = PyBytes_FromStringAndSize(NULL, size);
    if (b == NULL)
        return -1;
    w = PyBytes_AS_STRING(b);
    if (add) {
        memcpy(w, m->rep, (size_t)m->nrep);
        w += m->nrep;
    }
    for (i = 0; i < n; i++) {
        if (p[i] == ' ') {
            memcpy(w, m->rep, (size_t)m->nrep);
            w += m->nrep;
        } else {
            *w++ = (char)p[i];
        }
    }
    rc = PyList_Append(m->out, b);
    Py_DECREF(b);
    return rc;
}

static PyObject *mnn_metaspace(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    Meta m = {NULL, NULL, 0, 0, 0};
    (void)mod;
    if (nargs != 3 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "mnn_metaspace(splits, replacement: bytes, add_prefix_space)");
        return NULL;
    }
    if ((m.prefix = PyObject_IsTrue(args[2])) < 0)
        return NULL;
    m.rep = PyBytes_AS_STRING(args[1]);
    m.nrep = PyBytes_GET_SIZE(args[1]);
    if ((m.out = PyList_New(0)) == NULL)
        return NULL;
    if (for_each_split(args[0], meta_split, &m) < 0)
        Py_CLEAR(m.out);
    return m.out;
}

static PyMethodDef stage_methods[] = {
    {"mnn_stages_init", mnn_stages_init, METH_VARARGS,
     "mnn_stages_init(starts, categories, lower, space, punct, chinese, to_space, byte_map): MNN's tables, once."},
    {"mnn_table", mnn_table, METH_O, "mnn_table(rows) -> capsule: a normalizer table, searched as MNN searches it."},
    {"mnn_bert_normalize", (PyCFunction)(void (*)(void))mnn_bert_normalize, METH_FASTCALL,
     "mnn_bert_normalize(text, clean, chinese, lowercase, nfd) -> bytes (normalizers.Bert)."},
    {"mnn_table_normalize", (PyCFunction)(void (*)(void))mnn_table_normalize, METH_FASTCALL,
     "mnn_table_normalize(text, table) -> bytes (normalizers.Table)."},
    {"mnn_bert_pre_tokenize", mnn_bert_pre_tokenize, METH_O,
     "mnn_bert_pre_tokenize(splits) -> list (pre_tokenizers.Bert)."},
    {"mnn_byte_level_map", mnn_byte_level_map, METH_O,
     "mnn_byte_level_map(splits) -> list: each split's bytes as GPT-2 characters."},
    {"mnn_split_specials", (PyCFunction)(void (*)(void))mnn_split_specials, METH_FASTCALL,
     "mnn_split_specials(b, specials, firsts) -> list of (piece, id or None) (tokenizer.split_specials)."},
    {"mnn_added_matcher", (PyCFunction)(void (*)(void))mnn_added_matcher, METH_FASTCALL,
     "mnn_added_matcher(tokens, space) -> capsule: the added tokens' contents, found as added_split finds them."},
    {"mnn_added_split", (PyCFunction)(void (*)(void))mnn_added_split, METH_FASTCALL,
     "mnn_added_split(text, matcher) -> list of (piece, id or None) (pipeline.added_split)."},
    {"mnn_fold", mnn_fold, METH_O, "mnn_fold(text) -> bytes: one folded byte per character (regex._fold_text)."},
    {"mnn_scan_byte_level", (PyCFunction)(void (*)(void))mnn_scan_byte_level, METH_FASTCALL,
     "mnn_scan_byte_level(text, program, steps, window) -> (pieces, steps) or None: ByteLevel's regex scan "
     "and byte map of one split."},
    {"mnn_scan_pieces", (PyCFunction)(void (*)(void))mnn_scan_pieces, METH_FASTCALL,
     "mnn_scan_pieces(text, spans) -> list (regex.scan's pieces)."},
    {"mnn_split_pieces", (PyCFunction)(void (*)(void))mnn_split_pieces, METH_FASTCALL,
     "mnn_split_pieces(text, spans, invert, behavior) -> list (regex.split's pieces)."},
    {"mnn_metaspace_size", (PyCFunction)(void (*)(void))mnn_metaspace_size, METH_FASTCALL,
     "mnn_metaspace_size(splits, replacement) -> int: the size pre_tokenizers.Metaspace checks."},
    {"mnn_metaspace", (PyCFunction)(void (*)(void))mnn_metaspace, METH_FASTCALL,
     "mnn_metaspace(splits, replacement, add_prefix_space) -> list (pre_tokenizers.Metaspace)."},
    {NULL, NULL, 0, NULL},
};

int mnn_stages_register(PyObject *module)
{
    return PyModule_AddFunctions(module, stage_methods);
}
