"""HF model folders written by transformers' converters and classes (:mod:`tools.public_pipelines`).

``public_pipelines`` is a session-scoped factory: ``public_pipelines(["t5", "llama-v5"])`` builds those
folders once per session (each name at most once, into one temporary directory) and returns
``{name: folder}``; ``public_pipelines()`` builds every folder.  A folder whose converter cannot build it
fails the call (ask only for the names ``tools.public_pipelines`` builds).  Tests use it with
``from tests._support.public_pipelines import public_pipelines  # noqa: F401``.

It skips, loudly, when ``sentencepiece``, ``protobuf``, ``tokenizers`` or ``transformers`` is missing,
or when the corpus's training text is not there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._support import corpus_path

__all__ = ["NEEDS", "public_pipelines"]

NEEDS = ("sentencepiece", "google.protobuf", "tokenizers", "transformers")


def _missing() -> list[str]:
    out = []
    for name in NEEDS:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            out.append(name)
    return out


@pytest.fixture(scope="session")
def public_pipelines(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, Path]]:
    missing = _missing()
    if missing:
        pytest.skip(f"public pipeline folders NOT BUILT: {', '.join(missing)} not installed "
                    "(pip install sentencepiece protobuf transformers)")
    corpus = corpus_path()
    from tools import public_pipelines as pp
    from tools.public_pipelines.training import TEXT_BUDGET

    if not all((corpus / "text" / name).is_file() for name, _ in TEXT_BUDGET):
        pytest.skip(f"public pipeline folders NOT BUILT: the training text is not under {corpus / 'text'}")
    root = tmp_path_factory.mktemp("public_pipelines")
    built: dict[str, Path] = {}

    def build(names: list[str] | None = None) -> dict[str, Path]:
        wanted = list(names) if names is not None else [s.name for s in pp.all_specs()]
        todo = [n for n in wanted if n not in built]
        if todo:
            results = pp.build(root, todo, corpus, log=lambda line: None)
            skipped = {n: r for n, r in results.items() if r.startswith("SKIP")}
            if skipped and names is not None:
                raise AssertionError(f"public_pipelines could not build {skipped}")
            built.update({n: root / n for n in results if n not in skipped})
        return {n: built[n] for n in wanted if n in built}

    return build
