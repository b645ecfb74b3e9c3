/* mtokspec._speedups: the optional compiled hot loops of the hf runtime and the codec, one extension
 * built from the files of mtokspec/_csrc (bpe.c, unigram.c, tables.c, pieces.c, mnn_regex.c,
 * mnn_models.c, mnn_stages.c, mnn_legacy.c; speedups.h).
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
 *   string_index(b, p, end, n, before, after, widths)   the same walk, strings as (offset, length) pairs
 *   strings_at(raw, index)   the strings of such an index, cut out of the table's bytes
 *   dict_zip(keys, values)   dict(zip(keys, values)), sized once (the models' vocabularies)
 *   rows(columns)   list(zip(*columns)), rows of plain values untracked (line_table's rows)
 *   sp_crossing(tokens)      BPE._sp_crossing over the vocabulary's bytes
 *   encode_pieces(pieces, cache, tokenize, out)   the tokenizer's loop over pre-tokenized pieces
 *   line_table(b, p, end, n, kinds, open_end)   the legacy text formats' line tables (the codec)
 *
 * The mnn semantics' parts are documented in their files: mnn_regex.c (MNN's regex matcher),
 * mnn_models.c (MnnVocab, MnnBPE, MnnWordPiece, MnnUnigram: MNN's models over bytes) and
 * mnn_stages.c (the loops of its normalizers, pre-tokenizers and special-token split) and
 * mnn_legacy.c (the legacy tokenizer.txt types 0 and 3: SentencePiece's score merge, type 3's merges).
 */
#include "speedups.h"

static PyMethodDef module_methods[] = {
    {"string_table", string_table, METH_VARARGS,
     "string_table(b, p, end, n, before, after, widths) -> (strings, fixed, size) or None: the n rows "
     "[before bytes][u16 length][string][after bytes] at b[p:end], the fixed fields column by column."},
    {"string_index", string_index, METH_VARARGS,
     "string_index(b, p, end, n, before, after, widths) -> (index, fixed, size) or None: string_table's "
     "walk, each string given as native uint32 (offset from p, length) in index instead of as bytes."},
    {"strings_at", strings_at, METH_VARARGS,
     "strings_at(raw, index) -> tuple of bytes: raw[off:off + len] for each (off, len) pair of index."},
    {"dict_zip", dict_zip, METH_VARARGS, "dict_zip(keys, values) -> dict(zip(keys, values)), sized once."},
    {"rows", rows, METH_O, "rows(columns) -> list(zip(*columns)), rows of plain values untracked by the cycle collector."},
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
    if (mnn_speedups_register(m) < 0 || mnn_models_register(m) < 0 || mnn_stages_register(m) < 0 ||
        mnn_legacy_register(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
