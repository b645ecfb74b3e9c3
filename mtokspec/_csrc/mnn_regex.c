/* mtokspec._speedups, the mnn semantics' part (registered by module.c through speedups.h): MNN's own regex matcher over folded text.
 *
 * The pure-Python matcher (mtokspec/runtime/mnn/regex.py: _match, _try, _try_at, scan, split) is
 * the reference.  This file redoes the same recursion in the same order, counting the same steps
 * (one per _match call, and one per character a class run reads, which also lowers the window
 * floor) against the same per-call budget, so that it returns the same matches and
 * refuses exactly the inputs the pure path refuses.  Python decides which patterns come here (only
 * those whose recursion depth is known to stay far below Python's limit) and raises the errors.
 *
 *   mnn_regex_program(branches) -> capsule
 *       branches: tuple of branches; a branch is a tuple of nodes (kind, cs, qmin, qmax, alts):
 *       kind 0 = a character set, 1 = a group, 2 = a negative look-ahead; cs: 32 bytes, bit b of
 *       byte b >> 3 for folded byte b; qmax -1 = unlimited; alts: a tuple of branches (groups)
 *   mnn_regex_matches(program, folded, steps, window) -> (spans, steps) or None
 *       the scan of regex.py: at each position from 0, the first alternative that matches (an
 *       end <= the position: no match, go on at the next); spans: the (start, end) of each match
 *       with end > start, in order; steps: the budget's count after the scan; None: the count fell
 *       below max(0, count at the position - window) at some position (the pure path's refusal)
 */
#include "speedups.h"

#include <stdint.h>
#include <string.h>

enum { K_CS = 0, K_GRP = 1, K_NEG = 2 };

struct Branch;

typedef struct {
    int kind;
    uint8_t cs[32];
    Py_ssize_t qmin, qmax;
    Py_ssize_t nalts;
    struct Branch *alts;
} Node;

typedef struct Branch {
    Py_ssize_t n;
    Node *nodes;
} Branch;

typedef struct {
    Py_ssize_t nalts;
    Branch *alts;
} Program;

typedef struct {
    const uint8_t *text;
    Py_ssize_t n;
    long long steps, floor;
    int too_slow;
    int no_memory;
} State;

/* --- building a program from the Python tuples ------------------------------------------------ */

static void free_branches(Branch *alts, Py_ssize_t nalts)
{
    if (alts == NULL)
        return;
    for (Py_ssize_t a = 0; a < nalts; a++) {
        Branch *b = &alts[a];
        if (b->nodes == NULL)
            continue;
        for (Py_ssize_t k = 0; k < b->n; k++)
            free_branches(b->nodes[k].alts, b->nodes[k].nalts);
        PyMem_Free(b->nodes);
    }
    PyMem_Free(alts);
}

static int build_branches(PyObject *seq, Branch **out, Py_ssize_t *count, int depth);

static int build_node(PyObject *t, Node *node, int depth)
{
    PyObject *cs, *alts;
    int kind;
    Py_ssize_t qmin, qmax;
    if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "iSnnO", &kind, &cs, &qmin, &qmax, &alts)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a node is a tuple (kind, cs, qmin, qmax, alts)");
        return -1;
    }
    if (PyBytes_GET_SIZE(cs) != 32 || kind < K_CS || kind > K_NEG) {
        PyErr_SetString(PyExc_ValueError, "a node's set is 32 bytes and its kind 0, 1 or 2");
        return -1;
    }
    node->kind = kind;
    memcpy(node->cs, PyBytes_AS_STRING(cs), 32);
    node->qmin = qmin;
    node->qmax = qmax;
    node->nalts = 0;
    node->alts = NULL;
    if (kind != K_CS)
        return build_branches(alts, &node->alts, &node->nalts, depth + 1);
    return 0;
}

static int build_branches(PyObject *seq, Branch **out, Py_ssize_t *count, int depth)
{
    if (depth > 200) {
        PyErr_SetString(PyExc_ValueError, "groups nested too deep for the compiled matcher");
        return -1;
    }
    if (!PyTuple_Check(seq)) {
        PyErr_SetString(PyExc_TypeError, "branches are a tuple");
        return -1;
    }
    Py_ssize_t nalts = PyTuple_GET_SIZE(seq);
    Branch *alts = PyMem_Calloc(nalts ? nalts : 1, sizeof(Branch));
    if (alts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t a = 0; a < nalts; a++) {
        PyObject *b = PyTuple_GET_ITEM(seq, a);
        if (!PyTuple_Check(b)) {
            PyErr_SetString(PyExc_TypeError, "a branch is a tuple of nodes");
            free_branches(alts, nalts);
            return -1;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(b);
        alts[a].nodes = PyMem_Calloc(n ? n : 1, sizeof(Node));
        if (alts[a].nodes == NULL) {
            PyErr_NoMemory();
            free_branches(alts, nalts);
            return -1;
        }
        alts[a].n = n;
        for (Py_ssize_t k = 0; k < n; k++) {
            if (build_node(PyTuple_GET_ITEM(b, k), &alts[a].nodes[k], depth) < 0) {
                alts[a].n = k;  /* free only the nodes built */
                free_branches(alts, nalts);
                return -1;
            }
        }
    }
    *out = alts;
    *count = nalts;
    return 0;
}

static void program_free(PyObject *capsule)
{
    Program *p = PyCapsule_GetPointer(capsule, "mtokspec.mnn_regex");
    if (p != NULL) {
        free_branches(p->alts, p->nalts);
        PyMem_Free(p);
    }
}

static PyObject *mnn_regex_program(PyObject *self, PyObject *branches)
{
    Program *p = PyMem_Calloc(1, sizeof(Program));
    if (p == NULL)
        return PyErr_NoMemory();
    if (build_branches(branches, &p->alts, &p->nalts, 0) < 0) {
        PyMem_Free(p);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(p, "mtokspec.mnn_regex", program_free);
    if (capsule == NULL) {
        free_branches(p->alts, p->nalts);
        PyMem_Free(p);
    }
    return capsule;
}

/* --- the matcher: regex.py's _try and _match ----------------------------------------------------- */

static Py_ssize_t match(State *st, Py_ssize_t pos, const Branch *b, Py_ssize_t idx);

static Py_ssize_t try_alts(State *st, Py_ssize_t pos, const Branch *alts, Py_ssize_t nalts)
{
    for (Py_ssize_t a = 0; a < nalts; a++) {
        Py_ssize_t r = match(st, pos, &alts[a], 0);
        if (st->too_slow)
            return -1;
        if (r >= 0)
            return r;
    }
    return -1;
}

static inline int in_set(const uint8_t *cs, uint8_t c)
{
    return (cs[c >> 3] >> (c & 7)) & 1;
}

static Py_ssize_t match(State *st, Py_ssize_t pos, const Branch *b, Py_ssize_t idx)
{
    st->steps -= 1;
    if (st->steps < st->floor) {
        st->too_slow = 1;
        return -1;
    }
    if (idx >= b->n)
        return pos;
    const Node *node = &b->nodes[idx];
    if (node->kind == K_NEG) {
        Py_ssize_t r = try_alts(st, pos, node->alts, node->nalts);
        if (st->too_slow)
            return -1;
        if (r >= 0)
            return -1;
        return match(st, pos, b, idx + 1);
    }
    if (node->kind == K_CS) {
        Py_ssize_t qmax = node->qmax < 0 ? st->n - pos : node->qmax;
        Py_ssize_t count = 0;
        while (count < qmax && pos + count < st->n && in_set(node->cs, st->text[pos + count]))
            count++;
        if (count) { /* each character the class read is work: the call's steps, not the place's */
            st->steps -= count;
            st->floor = st->floor - count > 0 ? st->floor - count : 0;
            if (st->steps < st->floor) {
                st->too_slow = 1;
                return -1;
            }
        }
        for (Py_ssize_t c = count; c >= node->qmin; c--) {
            Py_ssize_t r = match(st, pos + c, b, idx + 1);
            if (st->too_slow)
                return -1;
            if (r >= 0)
                return r;
        }
        return -1;
    }
    /* a group: repeated by its first alternative that matches, then backed off whole repetitions */
    Py_ssize_t qmax = node->qmax < 0 ? 10000 : node->qmax;
    Py_ssize_t small[64];
    Py_ssize_t *positions = small, cap = 64;
    Py_ssize_t p = pos, reps = 0, result = -1;
    positions[0] = pos;
    while (reps < qmax) {
        Py_ssize_t r = try_alts(st, p, node->alts, node->nalts);
        if (st->too_slow)
            goto done;
        if (r <= p)
            break;
        p = r;
        reps++;
        if (reps >= cap) {
            Py_ssize_t ncap = cap * 2;
            Py_ssize_t *grown = PyMem_Malloc(ncap * sizeof(Py_ssize_t));
            if (grown == NULL) {
                st->no_memory = 1;
                st->too_slow = 1;
                goto done;
            }
            memcpy(grown, positions, reps * sizeof(Py_ssize_t));
            if (positions != small)
                PyMem_Free(positions);
            positions = grown;
            cap = ncap;
        }
        positions[reps] = p;
    }
    for (Py_ssize_t c = reps; c >= node->qmin; c--) {
        Py_ssize_t r = match(st, positions[c], b, idx + 1);
        if (st->too_slow)
            goto done;
        if (r >= 0) {
            result = r;
            goto done;
        }
    }
done:
    if (positions != small)
        PyMem_Free(positions);
    return st->too_slow ? -1 : result;
}

int mnn_regex_spans(PyObject *capsule, const unsigned char *folded, Py_ssize_t n, long long *steps,
                    long long window, Py_ssize_t **spans, Py_ssize_t *count)
{
    Program *prog = PyCapsule_GetPointer(capsule, "mtokspec.mnn_regex");
    Py_ssize_t cap = 16, m = 0, *out;
    if (prog == NULL)
        return -1;
    out = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)cap);
    if (out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    State st = {.text = folded, .n = n, .steps = *steps, .floor = 0, .too_slow = 0, .no_memory = 0};
    Py_ssize_t pos = 0;
    while (pos < st.n) {
        st.floor = st.steps - window > 0 ? st.steps - window : 0;
        Py_ssize_t end = try_alts(&st, pos, prog->alts, prog->nalts);
        if (st.too_slow || st.no_memory)
            break;
        if (end > pos) {
            if (m == cap) {
                Py_ssize_t *grown = PyMem_Realloc(out, sizeof(Py_ssize_t) * 4 * (size_t)cap);
                if (grown == NULL) {
                    st.no_memory = 1;
                    break;
                }
                out = grown;
                cap *= 2;
            }
            out[2 * m] = pos;
            out[2 * m + 1] = end;
            m++;
            pos = end;
        }
        else {
            pos++;
        }
    }
    if (st.no_memory) {
        PyMem_Free(out);
        PyErr_NoMemory();
        return -1;
    }
    if (st.too_slow) {
        PyMem_Free(out);
        return 1;
    }
    *steps = st.steps;
    *spans = out;
    *count = m;
    return 0;
}

static PyObject *mnn_regex_matches(PyObject *self, PyObject *args)
{
    PyObject *capsule, *list = NULL;
    Py_buffer text;
    long long steps, window;
    Py_ssize_t *spans, m, k;
    int rc;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*LL", &capsule, &text, &steps, &window))
        return NULL;
    rc = mnn_regex_spans(capsule, text.buf, text.len, &steps, window, &spans, &m);
    PyBuffer_Release(&text);
    if (rc < 0)
        return NULL;
    if (rc > 0)
        Py_RETURN_NONE;
    list = PyList_New(m);
    for (k = 0; list != NULL && k < m; k++) {
        PyObject *span = Py_BuildValue("(nn)", spans[2 * k], spans[2 * k + 1]);
        if (span == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, span);
    }
    PyMem_Free(spans);
    return list == NULL ? NULL : Py_BuildValue("(NL)", list, steps);
}

static PyMethodDef mnn_methods[] = {
    {"mnn_regex_program", mnn_regex_program, METH_O,
     "mnn_regex_program(branches) -> capsule: MNN's compiled pattern (see _speedups_mnn.c)."},
    {"mnn_regex_matches", mnn_regex_matches, METH_VARARGS,
     "mnn_regex_matches(program, folded, steps, window) -> (spans, steps) or None (the budget ran out)."},
    {NULL, NULL, 0, NULL},
};

int mnn_speedups_register(PyObject *module)
{
    return PyModule_AddFunctions(module, mnn_methods);
}
