/* The codec's tables: tables of strings and the legacy text formats' line tables. */
#include "speedups.h"

/* string_table(b, p, end, n, before, after, widths) -> (strings, fixed, size) or None
 * The n rows at b[p:end]: each row's string as bytes, the rows' fixed fields (before and after
 * the string; ``widths`` are their sizes in row order, summing to before + after) column by
 * column (every row's first field, then every row's second, ...), and the rows' total size; None
 * when a row runs past end (the caller's exact walk then reports where).
 *
 * string_index(...) -> (index, fixed, size) or None: the same walk, but each row's string is
 * given as two native uint32 in ``index`` (its offset from p, its length) instead of a bytes
 * object: no object per row (None too when the rows span 2^32 bytes or more).  strings_at(raw,
 * index) then cuts the strings out of raw = b[p:p + size]. */
static PyObject *string_walk(PyObject *args, int as_index)
{
    Py_buffer view;
    Py_ssize_t p, end, n, before, after, i, q, nw, j, off;
    Py_ssize_t width[16], colstart[16];
    PyObject *strings = NULL, *fixed = NULL, *res = NULL, *widths;
    const unsigned char *b;
    uint32_t *ix = NULL;
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
    if (as_index && (uint64_t)(q - p) > UINT32_MAX)
        goto none;
    if (n > PY_SSIZE_T_MAX / 8)
        goto none;
    if (as_index) {
        strings = PyBytes_FromStringAndSize(NULL, n * 8);
        if (strings != NULL)
            ix = (uint32_t *)PyBytes_AS_STRING(strings);
    } else {
        strings = PyTuple_New(n);  /* a tuple, as the struct unpack of the pure walk gives */
    }
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
        for (j = 0; j < nw; j++) {
            /* fields before the string lie at q + at; those after it, past the string */
            Py_ssize_t src = at < before ? q + at : q + 2 + len + at;
            memcpy(f + colstart[j] + i * width[j], b + src, (size_t)width[j]);
            at += width[j];
        }
        if (as_index) {
            ix[2 * i] = (uint32_t)(q + before + 2 - p);
            ix[2 * i + 1] = (uint32_t)len;
        } else {
            PyObject *str = PyBytes_FromStringAndSize((const char *)b + q + before + 2, len);
            if (str == NULL)
                goto done;
            PyTuple_SET_ITEM(strings, i, str);
        }
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

PyObject *string_table(PyObject *mod, PyObject *args)
{
    return string_walk(args, 0);
}

PyObject *string_index(PyObject *mod, PyObject *args)
{
    return string_walk(args, 1);
}

/* strings_at(raw, index) -> tuple of bytes: raw[off:off + len] for each (off, len) of index (native
 * uint32 pairs, as string_index gives them); ValueError when one runs past raw. */
PyObject *strings_at(PyObject *mod, PyObject *args)
{
    Py_buffer raw, index;
    Py_ssize_t n, i;
    const uint32_t *ix;
    PyObject *out = NULL;
    if (!PyArg_ParseTuple(args, "y*y*", &raw, &index))
        return NULL;
    if (index.len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "an index is (offset, length) pairs of uint32");
        goto done;
    }
    n = index.len / 8;
    ix = (const uint32_t *)index.buf;
    for (i = 0; i < n; i++)
        if ((uint64_t)ix[2 * i] + ix[2 * i + 1] > (uint64_t)raw.len) {
            PyErr_SetString(PyExc_ValueError, "an index entry runs past the table's bytes");
            goto done;
        }
    out = PyTuple_New(n);
    for (i = 0; out != NULL && i < n; i++) {
        PyObject *s = PyBytes_FromStringAndSize((const char *)raw.buf + ix[2 * i], ix[2 * i + 1]);
        if (s == NULL)
            Py_CLEAR(out);
        else
            PyTuple_SET_ITEM(out, i, s);
    }
done:
    PyBuffer_Release(&raw);
    PyBuffer_Release(&index);
    return out;
}

/* dict_zip(keys, values) -> dict(zip(keys, values)) for two sequences of one length, the dict
 * sized once (a vocabulary of 30k tokens: half the time of growing it). */
PyObject *dict_zip(PyObject *mod, PyObject *args)
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

/* rows(columns) -> list(zip(*columns)) for lists of one length, a row of values that hold no
 * others (line_table's bytes, str and int) untracked by the cycle collector, which would otherwise
 * walk every row of a loaded file once before untracking it itself. */
PyObject *rows(PyObject *mod, PyObject *columns)
{
    PyObject *cols, *out = NULL;
    Py_ssize_t k, nk, n, i;
    (void)mod;
    cols = PySequence_Fast(columns, "rows() expects a sequence of columns");
    if (cols == NULL)
        return NULL;
    nk = PySequence_Fast_GET_SIZE(cols);
    for (k = 0; k < nk; k++)
        if (!PyList_Check(PySequence_Fast_GET_ITEM(cols, k))) {
            PyErr_SetString(PyExc_TypeError, "rows() expects lists");
            goto done;
        }
    n = nk ? PyList_GET_SIZE(PySequence_Fast_GET_ITEM(cols, 0)) : 0;
    for (k = 1; k < nk; k++)
        if (PyList_GET_SIZE(PySequence_Fast_GET_ITEM(cols, k)) != n) {
            PyErr_SetString(PyExc_ValueError, "rows() expects columns of one length");
            goto done;
        }
    if ((out = PyList_New(n)) == NULL)
        goto done;
    for (i = 0; i < n; i++) {
        PyObject *row = PyTuple_New(nk);
        int atomic = 1;
        if (row == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        for (k = 0; k < nk; k++) {
            PyObject *v = PyList_GET_ITEM(PySequence_Fast_GET_ITEM(cols, k), i);
            Py_INCREF(v);
            PyTuple_SET_ITEM(row, k, v);
            if (PyObject_IS_GC(v) && PyObject_GC_IsTracked(v))
                atomic = 0;  /* (a value that can hold others: the row stays tracked) */
        }
        if (atomic)
            PyObject_GC_UnTrack(row);
        PyList_SET_ITEM(out, i, row);
    }
done:
    Py_DECREF(cols);
    return out;
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

/* The int of s[0:n) when it matches 0|-?[1-9][0-9]{0,DECIMAL_DIGITS-1} (the codec's decimal), else NULL
 * (no error). */
#define DECIMAL_DIGITS 10  /* spec/_dsl.py DIGITS; tests/test_speedups.py checks the two agree */
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
    if (n - i > DECIMAL_DIGITS)
        return NULL;
    {
        long long v = 0;
        for (Py_ssize_t j = i; j < n; j++)
            v = v * 10 + (s[j] - '0');
        return PyLong_FromLongLong(i ? -v : v);
    }
}

/* line_table(b, p, end, n, kinds, open_end) -> (columns, p, final_newline) or None
 * The n lines at b[p:end], each ended by a newline (with open_end the last may end at end
 * instead), split at spaces into one value per kind: "b" canonical base64 (bytes), "i" decimal
 * (int), "w" UTF-8 text (str), "r" the raw bytes; one column (a list) per kind.  None when any
 * line is missing or any value is not what its kind accepts: the caller's exact loop then says
 * where. */
PyObject *line_table(PyObject *mod, PyObject *args)
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
