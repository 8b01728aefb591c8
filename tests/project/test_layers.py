"""The package's layers only point down, and no import forms a cycle: a module imports its own layer and the ones below.

Data flows one way (corpus -> play-through -> results -> scores -> store ->
reports and site -> CLI); this test reads every module's imports, those made
only for type hints (under ``if TYPE_CHECKING:``) and those inside functions
included, and fails on any that points up, naming the module and the import.
A type hint that points up is a dependency all the same: the module's meaning
rests on the higher one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGE = ROOT / "evals"

# Lowest first: each layer is a folder of evals/ (docs/layout.md says what each may hold), and a
# module belongs to the folder it is in. errors.py is the one module beside the folders: the one
# error type, which every layer raises.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("errors", ("evals.errors",)),
    ("io", ("evals.io",)),
    ("model", ("evals.model",)),
    ("strategies", ("evals.strategies",)),
    ("judge", ("evals.judge",)),
    ("benchmarks", ("evals.benchmarks",)),
    ("store", ("evals.store",)),
    ("run", ("evals.run",)),
    ("analysis", ("evals.analysis",)),
    ("views", ("evals.views",)),
    ("site", ("evals.site",)),
    ("cli", ("evals.cli", "evals.__main__")),
]


def layer_of(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/project/test_layers.py")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[str]:
    """Every ``evals`` module ``path`` imports: at run time, inside functions and for type hints alike."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("evals"):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names if alias.name.startswith("evals"))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "site_templates" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_point_down(path: Path):
    """No module imports one from a higher layer."""
    name = module_name(path)
    if name == "evals":
        return  # the package's own __init__: its public names, each imported lazily from its layer
    mine = layer_of(name)
    upward = [m for m in imports(path) if m != "evals" and layer_of(m) > mine]
    assert not upward, f"{name} ({LAYERS[mine][0]}) imports from higher layers: {upward}"


def test_store_reads_results_not_the_play_loop():
    """The store imports no orchestration: not evaluate, the strategies, the play loop or the reports."""
    forbidden = (
        "evals.run.evaluate",
        "evals.strategies",
        "evals.run.playthrough",
        "evals.views.report",
        "evals.run.workflow",
        "evals.run.llm",
    )
    for path in (PACKAGE / "store").glob("*.py"):
        assert not [m for m in imports(path) if m.startswith(forbidden)], path.name


def _top_level_imports(path: Path, known: set[str]) -> set[str]:
    """The ``evals`` modules ``path`` imports as it is imported (its top level, type-hint imports included): each
    ``from package import module`` names the module itself, not its package."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [n for top in tree.body for n in ([top] if not isinstance(top, ast.If) else [*top.body, *top.orelse])]
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("evals"):
            modules = {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known}
            found |= modules or {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("evals")}
    return {m if m in known else m.rpartition(".")[0] for m in found} - {"evals"}


def test_no_import_forms_a_cycle():
    """No module imports, as it is imported, one that imports it back, directly or round a circle (a package's
    ``__init__`` gathering its own modules is not a circle: it is how a package is made)."""
    known = {module_name(p) for p in MODULES}
    graph = {}
    for path in MODULES:
        name = module_name(path)
        own = name + "." if path.name == "__init__.py" else None
        graph[name] = {m for m in _top_level_imports(path, known) if m != name and not (own and m.startswith(own))}
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> None:
        if module in trail:
            raise AssertionError("import cycle: " + " -> ".join([*trail[trail.index(module) :], module]))
        if module in done:
            return
        for target in sorted(graph.get(module, ())):
            visit(target, [*trail, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
