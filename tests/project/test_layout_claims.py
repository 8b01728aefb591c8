"""What docs/layout.md says of the code holds: the packages it says import nothing import nothing, only the
subpackages it names gather their modules, and the store declares no figure of its own.

Each check reads its list from the sentence of the doc that makes the claim, so the doc and the code
cannot drift apart without one of these failing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "evals"
LAYOUT = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
# The decorators and scope that declare a metric (evals/judge/metrics/_registry.py).
DECLARING = {"metric", "point_metric", "declaring"}


def claimed_folders(pattern: str) -> list[str]:
    """The backticked folders of the layout doc's sentence that ``pattern`` finds (its first group)."""
    found = re.search(pattern, " ".join(LAYOUT.split()))
    assert found, f"docs/layout.md no longer says: {pattern}"
    return re.findall(r"`([\w/]+)/`", found.group(1))


def imported(path: Path) -> list[str]:
    """What ``path`` imports at any depth, but ``from __future__``."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.append(f"{node.module}:{','.join(alias.name for alias in node.names)}")
    return names


def quiet() -> list[str]:
    """The folders whose __init__.py the doc says imports nothing."""
    return claimed_folders(r"The `__init__.py` of (.*?) imports nothing")


def gathering() -> list[str]:
    """The subpackages the doc says gather their private modules' public names."""
    return claimed_folders(r"below them, only (.*?) gather their private modules' public names")


def test_the_packages_said_to_import_nothing_import_nothing():
    """Each __init__.py docs/layout.md says imports nothing has no import statement."""
    folders = quiet()
    assert folders, "the sentence names no folder"
    assert {f: imported(PACKAGE / f / "__init__.py") for f in folders if imported(PACKAGE / f / "__init__.py")} == {}


def test_only_the_subpackages_named_gather_their_modules():
    """Below those packages, the __init__.py files that import are exactly the subpackages the doc names."""
    below = [p for f in quiet() for p in sorted((PACKAGE / f).rglob("__init__.py")) if p.parent != PACKAGE / f]
    importing = sorted(p.parent.relative_to(PACKAGE).as_posix() for p in below if imported(p))
    assert importing == sorted(gathering())


def test_the_store_declares_no_figure():
    """No module of evals/store/ imports what declares a metric: its figures are the judge's."""
    found = {
        p.relative_to(ROOT).as_posix(): names
        for p in sorted((PACKAGE / "store").rglob("*.py"))
        if (names := [n for n in imported(p) if set(n.partition(":")[2].split(",")) & DECLARING])
    }
    assert found == {}
