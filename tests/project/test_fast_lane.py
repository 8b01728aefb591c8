"""The fast lane (tests/conftest.py): plain `pytest` leaves out the tests marked slow, browser or llm_memory,
`--run-slow` or an explicit `-m` brings them back, and every test folder keeps tests that run in it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

TESTS = ROOT / "tests"
OPT_IN = {"slow", "browser", "llm_memory"}
SAMPLE = '''
import pytest

def test_fast():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.browser
def test_browser():
    pass

@pytest.mark.llm_memory
def test_llm_memory():
    pass
'''


def collected(tmp_path: Path, *args: str) -> set[str]:
    """The names pytest collects from a sample of one test per marker, with the project's conftest and settings."""
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path)]
    command += ["-p", "conftest", "-p", "no:cacheprovider", "--collect-only", "-q", str(tmp_path / "test_sample.py"), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.split("::")[1] for line in done.stdout.splitlines() if "::" in line}


def test_plain_pytest_leaves_out_the_opt_in_markers(tmp_path: Path):
    """Plain `pytest` deselects the tests marked slow, browser or llm_memory."""
    assert collected(tmp_path) == {"test_fast"}


def test_run_slow_runs_every_test(tmp_path: Path):
    """`--run-slow` (what `python3 tasks.py test` and CI pass) deselects nothing."""
    assert collected(tmp_path, "--run-slow") == {"test_fast", "test_slow", "test_browser", "test_llm_memory"}


def test_an_explicit_mark_expression_chooses_for_itself(tmp_path: Path):
    """With `-m EXPR` the expression alone decides, so `-m slow` runs the slow tests without --run-slow."""
    assert collected(tmp_path, "-m", "slow or llm_memory") == {"test_slow", "test_llm_memory"}


def opt_in_marks(node: ast.AST) -> set[str]:
    """The opt-in marker names in a decorator list or a `pytestmark = ...` value (`pytest.mark.NAME`)."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in OPT_IN}


def fast_tests(path: Path) -> list[str]:
    """The test functions of a file that carry no opt-in mark, on themselves or through the module's pytestmark."""
    module = ast.parse(path.read_text())
    for statement in module.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and opt_in_marks(statement.value):
            return []
    return [
        f.name
        for f in module.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test") and not any(opt_in_marks(d) for d in f.decorator_list)
    ]


@pytest.mark.parametrize("folder", sorted(p.name for p in TESTS.iterdir() if any(p.glob("test_*.py"))))
def test_every_test_folder_keeps_fast_tests(folder: str):
    """Each test folder (one per package folder) has tests the fast lane runs, so it covers every layer."""
    assert any(fast_tests(path) for path in (TESTS / folder).glob("test_*.py"))
