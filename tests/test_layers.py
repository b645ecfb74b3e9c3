"""The house (``docs/design/README.md``) as data, checked on every import of the package.

``LAYERS`` lists the wings bottom up, each with the modules it holds and the wings directly below
it; a wing may import itself and everything below (the closure).  Every ``import`` and ``from ...
import`` counts, at module level or inside a function (a lazy import is still a dependency), and
``from mtokspec import speedups`` is an import of ``mtokspec.speedups``, not of the package.
Sideways (``runtime.hf`` from ``runtime.mnn``) is as wrong as upwards; a private name
(``_Converter``) is taken only inside its package, and ``PRIVATE`` modules only by their wing.  ``UPWARD`` is the one
exception list, each with its reason in ``docs/design/README.md``; it holds at most two."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mtokspec"

# wing: (the modules it holds, by dotted name: a package holds its submodules unless a longer name
# is listed; "=" before a name holds that module alone), the wings directly below it)
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "errors": (("mtokspec.errors",), ()),
    "args": (("mtokspec.args",), ("errors",)),
    "names": (("mtokspec.names",), ()),
    "reading": (("mtokspec.reading",), ("args",)),
    "parallel": (("mtokspec.parallel",), ("errors",)),
    "speedups": (("mtokspec.speedups", "mtokspec._speedups"), ()),
    "format": (("mtokspec.format", "mtokspec._spec", "mtokspec._generated"),
               ("reading", "parallel", "speedups", "names")),
    "chat": (("mtokspec.chat",), ("format",)),
    "runtime.shared": (("mtokspec.runtime.shared", "=mtokspec.runtime"), ("format",)),
    "runtime.hf": (("mtokspec.runtime.hf",), ("runtime.shared", "chat")),
    "runtime.mnn": (("mtokspec.runtime.mnn",), ("runtime.shared", "chat")),
    "divergences": (("mtokspec.divergences",), ("runtime.hf", "runtime.mnn")),
    "convert.inputs": (("mtokspec.convert.inputs", "mtokspec.convert.loss", "mtokspec.convert.result",
                        "mtokspec.convert.unicode_tables", "mtokspec.convert.upgrade", "mtokspec.convert.to_hf"),
                       ("divergences",)),
    "convert.hf": (("mtokspec.convert.hf",), ("convert.inputs",)),
    "convert.mnn_target": (("mtokspec.convert.mnn_target",), ("convert.hf",)),
    "convert": (("=mtokspec.convert", "mtokspec.convert.targets"), ("convert.mnn_target",)),
    "tokenizer": (("mtokspec.tokenizer",), ("convert",)),
    "compare": (("mtokspec.compare", "mtokspec.behaviour", "mtokspec.fingerprinting", "mtokspec.testing"),
                ("tokenizer",)),
    "mtokspec": (("=mtokspec",), ("compare",)),
    "report_card": (("mtokspec.report_card",), ("mtokspec",)),
    "cli": (("mtokspec.cli", "mtokspec.__main__"), ("report_card",)),
}

#: modules only their own wing imports: the codec and declarations behind ``format``'s public names
#: (``format.files``, ``format.tree``), the compiled module behind ``speedups``
PRIVATE = {"mtokspec._generated": "format", "mtokspec._spec": "format", "mtokspec._speedups": "speedups"}

#: (importer, imported): the imports that go against the house, each justified in docs/design/README.md
UPWARD: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


MODULES = _modules()


def wing_of(module: str) -> str | None:
    """The wing holding ``module`` (the longest name that holds it), None when none does."""
    best, length = None, -1
    for wing, (names, _) in LAYERS.items():
        for name in names:
            exact = name.startswith("=")
            name = name.lstrip("=")
            holds = module == name or (not exact and module.startswith(name + "."))
            if holds and len(name) > length:
                best, length = wing, len(name)
    return best


def _below(wing: str) -> set[str]:
    out, todo = set(), list(LAYERS[wing][1])
    while todo:
        w = todo.pop()
        if w not in out:
            out.add(w)
            todo.extend(LAYERS[w][1])
    return out


def _is_module(name: str) -> bool:
    return name in MODULES or any(name == n or name.startswith(n + ".") for n in
                                  ("mtokspec._speedups", "mtokspec._spec", "mtokspec._generated"))


def imports(module: str, source: str | None = None) -> list[tuple[str, str | None, int]]:
    """``(imported module, name or None, line)`` for every import of the package in ``module`` (its
    file, or ``source``), wherever it is; ``name`` is what a ``from`` import takes from the module
    (None: the module itself)."""
    path = MODULES.get(module)
    is_package = path is not None and path.name == "__init__.py"
    if source is None:
        assert path is not None, module
        source = path.read_text(encoding="utf-8")
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub, None, node.lineno) if _is_module(sub) else (target, a.name, node.lineno))
    return [i for i in out if i[0] == "mtokspec" or i[0].startswith("mtokspec.")]


def _inside(package: str, other: str) -> bool:
    return package == other or package.startswith(other + ".")


def _package(module: str) -> str:
    path = MODULES.get(module)
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def check(module: str, source: str | None = None) -> list[str]:
    """What in ``module`` (its file, or ``source``) breaks the house, one line per import:
    ``path:line: importer (wing) imports imported ...``."""
    wing = wing_of(module)
    allowed = _below(wing) | {wing} if wing else set()
    path = MODULES[module].relative_to(ROOT) if module in MODULES else module
    found = []
    for imported, name, line in imports(module, source):
        other = wing_of(imported)
        where = f"{path}:{line}: {module} ({wing}) imports {imported}"
        if other not in allowed and (module, imported) not in UPWARD:
            found.append(f"{where} ({other}), not below it")
        elif any(_inside(imported, p) and wing != w for p, w in PRIVATE.items()):
            found.append(f"{where}, behind {other}'s public names")
        elif name and name.startswith("_") and not _inside(_package(module), _package(imported)):
            found.append(f"{where}.{name}, a private name of another package")
    return sorted(set(found))


def test_every_module_has_a_wing():
    assert [m for m in MODULES if wing_of(m) is None] == []


def test_the_layers_are_a_house():
    """Each wing's lower wings are listed before it (so the closure has no loop)."""
    order = list(LAYERS)
    for wing, (_, below) in LAYERS.items():
        assert all(order.index(b) < order.index(wing) for b in below), wing


def test_no_import_runs_up_or_sideways():
    found = [line for module in sorted(MODULES) for line in check(module)]
    assert not found, "\n".join(found)


def test_at_most_two_justified_exceptions():
    design = (ROOT / "docs" / "design" / "README.md").read_text(encoding="utf-8")
    assert len(UPWARD) <= 2
    for importer, imported in UPWARD:
        assert f"`{importer}` → `{imported}`" in design, (importer, imported)
        assert any(i == imported for i, _, _ in imports(importer)), f"{importer} no longer imports {imported}"


@pytest.mark.parametrize("module, wing", [("mtokspec.format.validate", "format"), ("mtokspec.runtime", "runtime.shared"),
                                          ("mtokspec", "mtokspec"), ("mtokspec._generated.codec", "format"),
                                          ("mtokspec.convert", "convert"), ("mtokspec.convert.hf.body", "convert.hf")])
def test_wing_of(module, wing):
    assert wing_of(module) == wing


@pytest.mark.parametrize("module, source, found", [
    ("mtokspec.chat.render", "import os\ndef f():\n    from mtokspec.runtime.hf import tokenizer\n",
     "mtokspec/chat/render.py:3: mtokspec.chat.render (chat) imports mtokspec.runtime.hf.tokenizer (runtime.hf), not below it"),
    ("mtokspec.format.validate", "def f():\n    from mtokspec import build\n",
     "mtokspec/format/validate.py:2: mtokspec.format.validate (format) imports mtokspec (mtokspec), not below it"),
    ("mtokspec.runtime.mnn.stream", "from . import pipeline\nfrom ..hf import stream\n",
     "mtokspec/runtime/mnn/stream.py:2: mtokspec.runtime.mnn.stream (runtime.mnn) imports mtokspec.runtime.hf.stream "
     "(runtime.hf), not below it"),
    ("mtokspec.convert.mnn_target.fix", "from mtokspec.convert.hf import _Converter\n",
     "mtokspec/convert/mnn_target/fix.py:1: mtokspec.convert.mnn_target.fix (convert.mnn_target) imports "
     "mtokspec.convert.hf._Converter, a private name of another package"),
    ("mtokspec.runtime.mnn.tokenizer", "from mtokspec._generated.codec import build_node\n",
     "mtokspec/runtime/mnn/tokenizer.py:1: mtokspec.runtime.mnn.tokenizer (runtime.mnn) imports "
     "mtokspec._generated.codec.build_node, behind format's public names"),
])
def test_check_names_the_import(module, source, found):
    assert check(module, source) == [found]


def test_check_lets_the_house_be():
    assert check("mtokspec.runtime.hf.models.bpe", "from mtokspec import speedups\nfrom . import _vocab\n"
                 "from mtokspec.format import tree\nfrom mtokspec.chat.render import render_chat_template\n") == []
