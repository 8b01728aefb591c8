"""Names and comments say what holds, not which ticket asked for it: no test named ``test_item12_…``, no file
named for an issue, and no issue number in the source of evals/, tests/, bench/ or tools/.

An issue number tells a reader nothing without the tracker open, and the number goes stale the day the issue
closes; the behaviour a test checks, or the reason a line of code is there, stays true until it changes. A
benchmark's own tracker is cited by its address (``github.com/snap-research/locomo/issues/34``), which these
checks let through.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

FOLDERS = (ROOT / "evals", ROOT / "tests", ROOT / "bench", ROOT / "tools")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".json", ".html", ".js", ".css"}
ITEM_TEST = re.compile(r"^test_item\d+")
# "issue 25", "Issue #34", "issues 13 and 20", "issue41" (in a name); not "issues/34" (an address).
ISSUE_REFERENCE = re.compile(r"\b[Ii]ssues?(?: ?#?\d+\b|\d+)")
ISSUE_IN_NAME = re.compile(r"issue_?\d+|item_?\d+", re.IGNORECASE)


def files_under(*folders: Path) -> list[Path]:
    """Every file under ``folders``, skipping caches and what git ignores there (bench/.data, bench/.results)."""
    return sorted(
        p for f in folders for p in f.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not any(part.startswith(".") for part in p.relative_to(f).parts)
    )  # fmt: skip


def item_named_tests(path: Path) -> list[str]:
    """The test functions in ``path`` whose name starts with ``test_item`` and a number."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and ITEM_TEST.match(node.name)
    ]


def issue_references(path: Path) -> list[str]:
    """Each line of ``path`` that cites an issue by number, as ``path:line: text``."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if ISSUE_REFERENCE.search(line):
            found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_test_is_named_for_an_item():
    """No test function under tests/ is named test_itemNN_…; its name says the behaviour it checks."""
    named = {p.relative_to(ROOT).as_posix(): item_named_tests(p) for p in sorted((ROOT / "tests").rglob("test_*.py"))}
    assert {path: names for path, names in named.items() if names} == {}


def test_no_file_is_named_for_an_issue():
    """No file or folder under evals/ or tests/ carries an issue or item number in its name."""
    paths = [p.relative_to(ROOT).as_posix() for p in files_under(*FOLDERS)]
    named = [path for path in paths if ISSUE_IN_NAME.search(path)]
    assert named == []


def test_no_source_cites_an_issue_number():
    """No text file under evals/ or tests/ cites an issue by number; comments and docstrings say the why instead."""
    # This file spells the references out as examples of what the check finds.
    sources = [p for p in files_under(*FOLDERS) if p.suffix in TEXT_SUFFIXES and p != Path(__file__).resolve()]
    found = [line for p in sources for line in issue_references(p)]
    assert found == []


def test_the_checks_see_each_form_of_a_reference(tmp_path: Path):
    """A test named for an item, and issue numbers in each spelling, are what the checks above find; an address is not."""
    source = tmp_path / "test_example.py"
    source.write_text(
        "def test_item7_refused():\n    pass\n\n\ndef test_refused():\n    pass\n",
        encoding="utf-8",
    )
    assert item_named_tests(source) == ["test_item7_refused"]
    cited = ["(issue 25)", "Issue #34 says", "issues 13 and 20", "name = 'issue20_x'"]
    assert [bool(ISSUE_REFERENCE.search(text)) for text in cited] == [True] * 4
    assert ISSUE_REFERENCE.search("github.com/snap-research/locomo/issues/34") is None
    assert ISSUE_IN_NAME.search("tests/run/test_hostile_issue41.py") and ISSUE_IN_NAME.search("rankings-issue12.tar.gz")
