"""Names mean one thing (docs/layout.md, "Names"): no two public classes of evals/ share a name, and
``Protocol`` is only a benchmark's QA protocol (the kit's), never ``typing.Protocol`` imported bare.

A reader who meets ``Unit`` or ``Audit`` in one module should not have to check which of two it is; a grep
for a class's name should find one definition.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "evals"


def public_classes(path: Path) -> list[str]:
    """The classes ``path`` defines at module level whose names do not start with an underscore."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [n.name for n in tree.body if isinstance(n, ast.ClassDef) and not n.name.startswith("_")]


def bare_typing_names(path: Path, name: str) -> bool:
    """Whether ``path`` imports ``name`` from :mod:`typing` under that bare name, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module in {"typing", "typing_extensions"}
        and any(alias.name == name and alias.asname in (None, name) for alias in node.names)
        for node in ast.walk(tree)
    )


def test_each_public_class_name_is_defined_once():
    """No two modules of evals/ define a public class of the same name."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in public_classes(path):
            where[name].append(path.relative_to(ROOT).as_posix())
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}


def test_protocol_is_only_the_benchmark_protocol():
    """No module of evals/ imports typing's Protocol as ``Protocol``; structural types write ``typing.Protocol``."""
    bare = [p.relative_to(ROOT).as_posix() for p in sorted(PACKAGE.rglob("*.py")) if bare_typing_names(p, "Protocol")]
    assert bare == []


def test_the_checks_see_a_second_meaning(tmp_path: Path):
    """A bare ``from typing import Protocol`` and a public class are what the checks above find."""
    source = tmp_path / "example.py"
    source.write_text("from typing import Any, Protocol\n\n\nclass Unit(Protocol):\n    pass\n\n\nclass _Own:\n    pass\n")
    assert public_classes(source) == ["Unit"] and bare_typing_names(source, "Protocol")
