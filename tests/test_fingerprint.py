"""``mtokspec.fingerprint``: equal across rebuilds, different after any one-row edit (Hypothesis on
the example file and a trained fixture; one-token edits of a corpus file), and a change llama.cpp's
``chkhsh`` (the ids of one fixed text) cannot see (``docs/design/fingerprint.md``)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mtokspec
from mtokspec.fingerprinting import PROBE_SET, fingerprint
from mtokspec.format import tree as t
from tests._support import CORPUS

TINY = Path(__file__).resolve().parents[1] / "examples" / "tiny.mtok"


def tiny() -> t.MtokFile:
    tree = mtokspec.parse(TINY.read_bytes())
    assert isinstance(tree, t.MtokFile)
    return tree


@lru_cache(maxsize=None)
def base_tiny():
    return fingerprint(TINY)


def test_equal_across_rebuilds():
    fp = base_tiny()
    tree = tiny()
    assert fingerprint(mtokspec.build(tree)) == fp
    assert fingerprint(mtokspec.from_dict(json.loads(json.dumps(mtokspec.to_dict(tree))))) == fp
    assert fp.probe_set == PROBE_SET and all(len(h) == 16 for h in (fp.behaviour, fp.structure, fp.hf, fp.mnn, fp.chat))


def _edit(tree: t.MtokFile, kind: str, data) -> str:
    """Apply one edit of ``kind``; return what it did."""
    m = tree.model
    assert isinstance(m, t.BPEModel)
    vocab = list(m.vocab)
    if kind == "vocab-token":
        r = data.draw(st.integers(0, len(vocab) - 1))
        taken = {tok for tok, _ in vocab}
        new = data.draw(st.binary(min_size=1, max_size=4).filter(lambda b: b not in taken))
        vocab[r] = (new, vocab[r][1])
        m.vocab = sorted(vocab)
        return f"row {r} -> {new!r}"
    if kind == "vocab-id":
        a, b = data.draw(st.lists(st.integers(0, len(vocab) - 1), min_size=2, max_size=2, unique=True))
        vocab[a], vocab[b] = (vocab[a][0], vocab[b][1]), (vocab[b][0], vocab[a][1])
        m.vocab = vocab
        return f"ids of rows {a}, {b} swapped"
    if kind == "merge":
        merges = list(m.merges)
        r = data.draw(st.integers(0, len(merges) - 1))
        del merges[r]
        m.merges = merges
        return f"merge {r} dropped"
    if kind == "added":
        added = list(tree.added_tokens)
        r = data.draw(st.integers(0, len(added) - 1))
        how = data.draw(st.sampled_from(["content", "special", "drop"]))
        if how == "content":
            added[r] = dataclasses.replace(added[r], content=added[r].content + data.draw(st.sampled_from(["x", "|", "é"])))
        elif how == "special":
            # the header's special ids are special whatever the row says: that toggle changes nothing
            assume(added[r].id not in t.header_roles(tree.header)[0])
            added[r] = dataclasses.replace(added[r], special=not added[r].special)
        else:
            del added[r]
        tree.added_tokens = added
        return f"added token {r}: {how}"
    if kind == "flag":
        tree.flags = 1 - (tree.flags or 0)
        return "clean_up_tokenization_spaces toggled"
    raise AssertionError(kind)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["vocab-token", "vocab-id", "merge", "added", "flag"]), data=st.data())
def test_every_single_row_edit_changes_the_fingerprint(kind, data):
    """One vocabulary row's token or id, one merge, one added token (content, special flag, the row
    itself) or one flag changed: the structure hash and the behaviour fingerprint both change."""
    tree = tiny()
    what = _edit(tree, kind, data)
    fp = fingerprint(tree)
    base = base_tiny()
    assert fp.structure != base.structure, what
    assert fp.behaviour != base.behaviour, what


def test_every_merge_dropped_changes_the_behaviour():
    """Each of tiny.mtok's merges, dropped alone, changes the behaviour fingerprint: the probe of the
    merged token's id completes its bytes into letters, so a merge across a character boundary
    (rank 146: A1 + E3 81) is asked in one piece of the GPT-2 split."""
    base = base_tiny()
    same = []
    for r in range(len(tiny().model.merges)):
        tree = tiny()
        merges = list(tree.model.merges)
        del merges[r]
        tree.model.merges = merges
        if fingerprint(tree).behaviour == base.behaviour:
            same.append(r)
    assert same == []


@pytest.mark.skipif(not (CORPUS / "tok").is_dir(), reason="the reference corpus is absent")
def test_corpus_one_token_changes():
    """bert-base-cased-derived's exporter file: one vocabulary row renamed, one added token's text
    changed: each shows; the file rebuilt does not; another corpus file differs."""
    path = CORPUS / "tok" / "bert-base-cased-derived" / "mnn.mtok"
    data = path.read_bytes()
    base = fingerprint(data)
    tree = mtokspec.parse(data)
    assert fingerprint(mtokspec.build(tree)) == base
    vocab = list(tree.model.vocab)
    r = next(k for k, (tok, _) in enumerate(vocab) if tok == b"##ing")
    vocab[r] = (b"##ingz", vocab[r][1])
    tree.model.vocab = sorted(vocab)
    assert fingerprint(tree).hf != base.hf
    tree = mtokspec.parse(data)
    tree.added_tokens = [dataclasses.replace(a, content="[MASKX]") if a.content == "[MASK]" else a
                         for a in tree.added_tokens]
    changed = fingerprint(tree)
    assert changed.hf != base.hf and changed.behaviour != base.behaviour
    assert fingerprint(CORPUS / "tok" / "t5-small" / "mnn.mtok").behaviour != base.behaviour


def chkhsh_like(tree) -> str:
    """llama.cpp's ``chkhsh``: sha256 of ``str(ids)`` of one fixed text (its chktxt, abridged)."""
    chktxt = "\n \n\n \t 🚀 (normal) ✅ 3 33 333 3.3 我想在apple工作 нещо I've been 'told he's there, 'RE you sure?"
    ids = mtokspec.Tokenizer.from_tree(tree).encode(chktxt)
    return hashlib.sha256(str(ids).encode()).hexdigest()


def test_catches_what_an_encode_checksum_misses():
    """A decoder fix and a one-token vocabulary change that the fixed text's ids never reach: the
    chkhsh-like hash stays, the fingerprint moves."""
    base = tiny()
    decoder_fixed = tiny()
    decoder_fixed.decoder = t.SequenceDecoder([t.ByteLevelDecoder(), t.StripDecoder(" ", 1, 0)])
    assert chkhsh_like(decoder_fixed) == chkhsh_like(base)
    assert fingerprint(decoder_fixed).hf != base_tiny().hf
    unused = tiny()
    ids_used = set(mtokspec.Tokenizer.from_tree(base).encode("\n \n\n \t 🚀 (normal) ✅ 3 33 333 3.3 我想在apple工作 нещо I've been 'told he's there, 'RE you sure?"))
    vocab = list(unused.model.vocab)
    r = next(k for k, (tok, i) in enumerate(vocab) if i not in ids_used and len(tok) > 1)
    vocab[r] = (vocab[r][0] + b"q", vocab[r][1])
    unused.model.vocab = sorted(vocab)
    assert chkhsh_like(unused) == chkhsh_like(base)
    assert fingerprint(unused).behaviour != base_tiny().behaviour


def test_cli(capsys):
    from mtokspec.cli import main

    assert main(["fingerprint", str(TINY), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["behaviour"] == base_tiny().behaviour and doc["probe_set"] == PROBE_SET
    assert main(["fingerprint", str(TINY)]) == 0
    assert capsys.readouterr().out.startswith(f"{TINY}: {base_tiny().behaviour} (structure ")
    assert main(["fingerprint", "/nonexistent.mtok"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nonexistent" in err


def test_chat_probes_read_a_fixed_clock():
    from mtokspec.fingerprinting import CHAT_CLOCK, CONVERSATIONS, render_probe

    tree = tiny()
    tree.chat_template = "{{ strftime_now('%Y-%m-%d') }}|{{ messages[0]['content'] }}"
    for semantics in ("hf", "mnn"):
        tok = mtokspec.Tokenizer.from_tree(tree, semantics=semantics)
        assert render_probe(tok, CONVERSATIONS[0], True) == CHAT_CLOCK[:10] + "|Hi"
    assert fingerprint(tree).chat != base_tiny().chat


# --- generated trees ---------------------------------------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tree=mtokspec.strategies.mtok_files(), data=st.data())
def test_generated_trees(tree, data):
    """Any valid tree: its rebuild has the same fingerprint; one vocabulary row respelled, or one
    added token's text changed, changes the behaviour fingerprint."""
    fp = fingerprint(tree)
    assert fingerprint(mtokspec.build(tree)) == fp
    edited = mtokspec.parse(mtokspec.build(tree))
    rows = list(edited.model.vocab)
    added = list(edited.added_tokens)
    if rows and data.draw(st.booleans()):
        r = data.draw(st.integers(0, len(rows) - 1))
        taken = {row[0] for row in rows}
        new = data.draw(st.binary(min_size=1, max_size=4).filter(lambda b: b not in taken))
        rows[r] = (new, *rows[r][1:])
        edited.model.vocab = sorted(rows) if isinstance(edited.model, t.BPEModel) else rows
    elif added:
        r = data.draw(st.integers(0, len(added) - 1))
        added[r] = dataclasses.replace(added[r], content=added[r].content + "\u00e9x")
        assume(all(a.content != added[r].content for k, a in enumerate(added) if k != r))
        edited.added_tokens = added
    else:
        assume(False)
    assert fingerprint(edited).behaviour != fp.behaviour


def test_probe_set_is_pinned():
    """The texts are borrowed from convert.mnn_target.reference: changing them (or the
    conversations, or the clock) is a new probe set, so PROBE_SET and PROBE_SET_DIGEST change together."""
    from mtokspec.fingerprinting import PROBE_SET_DIGEST, probe_digest

    assert probe_digest() == PROBE_SET_DIGEST, f"the probes changed: bump PROBE_SET (now {PROBE_SET})"
