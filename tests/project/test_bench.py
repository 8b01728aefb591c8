"""The bench scripts keep up with the package: every name they import from ``evals`` exists.

They are run by hand, not by the suite, so a moved name would otherwise go unnoticed until
someone wants a figure.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest
from helpers import ROOT

BENCH = ROOT / "bench"


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


# -- bench/_common.py: the one child-process runner every bench script measures with ----------------


@pytest.fixture(scope="module")
def common():
    """bench/_common.py, imported as the scripts import it (bench/ on sys.path)."""
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("_common")
    finally:
        sys.path.remove(str(BENCH))


def test_run_child_keeps_stdout_and_stderr_apart(common):
    """Without ``merged`` the child's stdout and stderr come back separately, with its exit code."""
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    child = common.run_child([sys.executable, "-c", code], timeout=120)
    assert (child.returncode, child.stdout, child.stderr, child.timed_out) == (3, "out\n", "err\n", False)


def test_run_child_merges_output_and_gives_its_last_line(common):
    """With ``merged`` stderr joins stdout, and ``last_line`` is the last line the child printed."""
    code = "import sys; print('first', flush=True); print('last', file=sys.stderr)"
    child = common.run_child([sys.executable, "-c", code], timeout=120, merged=True)
    assert (child.stdout, child.stderr, child.last_line) == ("first\nlast\n", "", "last")


def test_run_child_reports_the_child_s_own_peak_memory(common):
    """The peak is the child's own (os.wait4): a child holding 200 MB reports at least that."""
    child = common.run_child([sys.executable, "-c", "x = b'x' * (200 * 1024 * 1024)"], timeout=120)
    assert child.returncode == 0 and child.peak_mib >= 200


def test_run_checked_raises_the_given_error_naming_a_failed_command(common):
    """A child that exits non-zero raises the error asked for, with its exit code and the end of its stderr."""
    command = [sys.executable, "-c", "import sys; print('gone wrong', file=sys.stderr); sys.exit(4)"]
    with pytest.raises(SystemExit) as raised:
        common.run_checked(command, error=SystemExit, timeout=120)
    assert str(raised.value) == f"failed (exit 4): {' '.join(command)}\ngone wrong\n"
