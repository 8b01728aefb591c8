"""The test tree as a toolkit: what tests share lives in ``conftest.py`` or ``tests/helpers/``, never in a test module;
and the tree mirrors the package: each test module lives in the folder of the layer it tests.

A test module that imports another one runs that module's fixtures and tests under a second name, and
hides where a helper lives; pytest finds fixtures in ``conftest.py`` without an import at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

TESTS = ROOT / "tests"
SOURCES = sorted([*TESTS.rglob("*.py"), *(ROOT / "bench").glob("*.py")])


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports by absolute name, at any depth (inside functions too)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def is_test_module(module: str) -> bool:
    """Whether ``module`` names a test module or a conftest (``test_x``, ``tests.test_x``, ``conftest``)."""
    parts = module.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    return bool(parts) and (parts[0].startswith("test_") or parts[0] == "conftest")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_imports_a_test_module(path: Path):
    """No file under tests/ or bench/ imports a test module or a conftest; shared code comes from tests/helpers/."""
    assert [m for m in imported_modules(path) if is_test_module(m)] == []


def test_the_check_sees_an_import_of_a_test_module(tmp_path: Path):
    """An import of a test module, even one inside a function, is what the check above finds."""
    source = tmp_path / "test_example.py"
    source.write_text("import json\nfrom helpers.html import parse\n\ndef f():\n    from test_site import parse\n")
    assert [m for m in imported_modules(source) if is_test_module(m)] == ["test_site"]


# Folders of tests/ that hold no test module: what tests share, the data they read, the plug-ins they install.
SHARED = {"helpers", "fixtures", "plugins"}
# The one folder not named after a layer: checks on the repository as a whole (docs, layers, packaging, tasks).
PROJECT = "project"


def test_every_test_module_is_in_a_layer_folder():
    """Each test module sits one folder down, in a folder named after a layer of evals/ (or tests/project/)."""
    layers = {p.parent.name for p in (ROOT / "evals").glob("*/__init__.py")}
    misplaced = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("test_*.py")
        if not p.is_relative_to(TESTS / "fixtures") and (p.parent.parent != TESTS or p.parent.name not in layers | {PROJECT})
    ]
    assert misplaced == []


def test_every_layer_has_a_test_folder():
    """Each layer of evals/ has its folder of tests, and tests/ holds no folder but those, the project's and the shared."""
    layers = {p.parent.name for p in (ROOT / "evals").glob("*/__init__.py")}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders == layers | {PROJECT} | SHARED


def test_test_module_names_are_unique_across_folders():
    """No two test modules share a file name: pytest imports each by its bare name (no __init__.py in tests/)."""
    names = sorted(p.name for p in TESTS.rglob("test_*.py") if not p.is_relative_to(TESTS / "fixtures"))
    assert sorted({n for n in names if names.count(n) > 1}) == []
