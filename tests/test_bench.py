"""The bench scripts keep up with the package: every name they import from ``evals`` exists.

They are run by hand, not by the suite, so a moved name would otherwise go unnoticed until
someone wants a figure.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def evals_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from evals… import name`` in ``path``, wherever it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evals"
        for alias in node.names
    ]


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_name_a_bench_script_imports_exists(script: Path):
    """Each ``from evals.x import y`` in a bench script names a module and an attribute (or submodule) that exist."""
    missing = []
    for module, name in evals_imports(script):
        found = importlib.import_module(module)
        if not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{module}.{name}")
    assert missing == []
