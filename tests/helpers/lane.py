"""The fast lane's markers, and what a test file says about them without being imported.

Plain ``pytest`` leaves out the tests marked with one of ``OPT_IN`` (tests/conftest.py). A module whose
``pytestmark`` carries one is not even imported then: importing mem0, graphiti, sentence-transformers or ray
is most of what such a module costs a run that deselects all of its tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

OPT_IN = ("slow", "browser", "llm_memory")


def _opt_in_marks(node: ast.AST) -> set[str]:
    """The opt-in marker names written in ``node`` as ``pytest.mark.NAME``."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in OPT_IN}


def module_opts_in(path: Path) -> bool:
    """Whether the test file's module-level ``pytestmark`` carries an opt-in marker, so all its tests do."""
    source = path.read_text()
    if "pytestmark" not in source:
        return False
    for statement in ast.parse(source).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and _opt_in_marks(statement.value):
            return True
    return False


def fast_tests(path: Path) -> list[str]:
    """The test functions of a file the fast lane runs: none of the module's or their own marks opts in."""
    if module_opts_in(path):
        return []
    module = ast.parse(path.read_text())
    return [
        f.name
        for f in module.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test") and not any(_opt_in_marks(d) for d in f.decorator_list)
    ]
