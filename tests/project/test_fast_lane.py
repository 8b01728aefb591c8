"""The fast lane (tests/conftest.py): plain `pytest` leaves out the tests marked slow, browser or llm_memory,
`--run-slow` or an explicit `-m` brings them back, and every test folder keeps tests that run in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.lane import fast_tests

TESTS = ROOT / "tests"
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
# A module all of whose tests opt in, and which cannot be imported: the fast lane must not try.
ALL_SLOW = '''
import pytest

pytestmark = [pytest.mark.slow]
raise RuntimeError("imported")
'''


def collected(folder: Path, *args: str) -> set[str]:
    """The names pytest collects from ``folder`` with the project's conftest and settings."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder)]
    command += ["-p", "conftest", "-p", "no:cacheprovider", "--collect-only", "-q", str(folder), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.split("::")[1] for line in done.stdout.splitlines() if "::" in line}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one test per marker, and one unmarked."""
    folder = tmp_path_factory.mktemp("sample")
    (folder / "test_sample.py").write_text(SAMPLE)
    return folder


@pytest.fixture(scope="module")
def fast_lane(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Plain `pytest` over a folder like ``sample``, beside a module that opts in whole and cannot be imported."""
    folder = tmp_path_factory.mktemp("fast-lane")
    (folder / "test_sample.py").write_text(SAMPLE)
    (folder / "test_all_slow.py").write_text(ALL_SLOW)
    return collected(folder)


def test_plain_pytest_leaves_out_the_opt_in_markers(fast_lane: set[str]):
    """Plain `pytest` deselects the tests marked slow, browser or llm_memory."""
    assert fast_lane == {"test_fast"}


def test_a_module_that_opts_in_whole_is_not_even_imported(fast_lane: set[str]):
    """Plain `pytest` skips importing a module whose pytestmark opts in (its imports are what it would cost)."""
    assert "test_all_slow" not in str(fast_lane)  # collected() fails on a collection error: it was not imported


def test_run_slow_runs_every_test(sample: Path):
    """`--run-slow` (what `python3 tasks.py test` and CI pass) deselects nothing."""
    assert collected(sample, "--run-slow") == {"test_fast", "test_slow", "test_browser", "test_llm_memory"}


def test_an_explicit_mark_expression_chooses_for_itself(sample: Path):
    """With `-m EXPR` the expression alone decides, so `-m slow` runs the slow tests without --run-slow."""
    assert collected(sample, "-m", "slow or llm_memory") == {"test_slow", "test_llm_memory"}


@pytest.mark.parametrize("folder", sorted(p.name for p in TESTS.iterdir() if any(p.glob("test_*.py"))))
def test_every_test_folder_keeps_fast_tests(folder: str):
    """Each test folder (one per package folder) has tests the fast lane runs, so it covers every layer."""
    assert any(fast_tests(path) for path in (TESTS / folder).glob("test_*.py"))
