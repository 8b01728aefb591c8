"""Suites and price files: read as strictly as a corpus, bounded, and checked whole before any run.

Each test is named for what must hold. A bad suite is one line
naming the suite file and the key, and nothing is run or stored. A command that could hang runs in a
subprocess with a timeout, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.cli import cli
from evals.run.suite import SuiteError, plan_runs, read_suite

CORPUS_SMALL = FIXTURES / "corpus_small"


def evals(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def evals_process(*args: object, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real `evals` in a process of its own; a hang is a test failure, not a stuck suite."""
    try:
        return subprocess.run(
            [sys.executable, "-c", "from evals.cli import cli; cli()", *map(str, args)],
            cwd=cwd, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"evals {' '.join(map(str, args))} did not finish: it blocked or read without end")


def suite_file(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- blocking inputs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_device_as_suite_is_refused_not_read(tmp_path, kind):
    """--suite naming a FIFO or /dev/zero is refused in one line; it neither blocks nor reads without end."""
    path = tmp_path / "suite.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    done = evals_process("run-suite", "--suite", path, "--store", tmp_path / "s.duckdb", cwd=tmp_path)
    assert done.returncode == 1 and "not a regular file" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("command", ["leaderboard", "run"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_device_as_prices_is_refused_not_read(tmp_path, kind, command):
    """--prices naming a FIFO or /dev/zero (run, leaderboard) is refused in one line; it neither blocks nor reads without end."""
    path = tmp_path / "prices.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    extra = ["--runner", "no_memory", "--corpus", CORPUS_SMALL] if command == "run" else []
    done = evals_process(command, *extra, "--prices", path, "--store", tmp_path / "s.duckdb", cwd=tmp_path)
    assert done.returncode != 0 and "not a regular file" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "s.duckdb").exists()


# -- unbounded work ------------------------------------------------------------------------------------------------


def test_a_matrix_of_too_many_runs_is_refused_before_expanding(tmp_path):
    """Three option lists of 1,000 values (10^9 runs) are refused at once, naming the file and the key."""
    values = "[" + ", ".join(str(i) for i in range(1000)) + "]"
    options = f"k1 = {values}\nb = {values}\nx = {values}\n"
    path = suite_file(tmp_path, f'[[matrix]]\ncorpora = ["c"]\nstrategies = ["bm25"]\n[matrix.options.bm25]\n{options}')
    with pytest.raises(SuiteError) as raised:
        read_suite(path)
    assert str(raised.value).startswith(f"{path}: matrix[0].options.bm25: ") and "1,000,000,000 runs" in str(raised.value)


def test_the_plan_is_counted_before_it_is_expanded(tmp_path, monkeypatch):
    """A plan over the limit, counted with the strategies it would run, is refused before one run is planned."""
    import evals.run.suite as suite

    monkeypatch.setattr(suite, "MAX_SUITE_RUNS", 5)
    path = suite_file(tmp_path, '[[matrix]]\ncorpora = ["a", "b", "c"]\nstrategies = ["bm25", "recency"]\n')
    with pytest.raises(SuiteError) as raised:
        plan_runs(read_suite(path), {})
    assert str(raised.value).startswith(f"{path}: matrix") and "6 runs" in str(raised.value)


# -- silently wrong ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("k = true", "k"),
        ('k = "5"', "k"),
        ("k = 5.0", "k"),
        ('cutoffs = [1, "2"]', "cutoffs"),
        ('with_answers = "yes"', "with_answers"),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused_not_coerced(tmp_path, setting, key):
    """A suite is read as strictly as a corpus: k = true, "5" or 5.0 and cutoffs = [1, "2"] are refused, naming the key."""
    path = suite_file(tmp_path, f'[[matrix]]\ncorpora = ["c"]\n{setting}\n')
    with pytest.raises(SuiteError) as raised:
        read_suite(path)
    assert str(raised.value).startswith(f"{path}: matrix[0].{key}")


def test_downloads_resolves_against_the_suite_file(tmp_path, monkeypatch):
    """A suite's `downloads` is relative to the suite file, as its corpora and protocol_source are."""
    (tmp_path / "suites").mkdir()
    path = suite_file(tmp_path / "suites", '[[matrix]]\ncorpora = ["c"]\nstrategies = ["bm25"]\ndownloads = "dl"\n')
    monkeypatch.chdir(tmp_path)
    (planned,) = plan_runs(read_suite(path), {})
    assert planned.config.downloads == tmp_path / "suites" / "dl"


def test_a_suite_cannot_set_the_internal_corpus_as_given(tmp_path):
    """corpus_as_given is the CLI's record of --corpus as typed, not a setting: a suite naming it is refused."""
    path = suite_file(tmp_path, '[[matrix]]\ncorpora = ["c"]\ncorpus_as_given = "elsewhere"\n')
    with pytest.raises(SuiteError) as raised:
        read_suite(path)
    assert str(raised.value).startswith(f"{path}: matrix[0].corpus_as_given: unknown key")


# -- unclear errors -------------------------------------------------------------------------------------------------------


def test_a_bad_option_in_a_later_matrix_is_found_before_the_first_run(tmp_path):
    """An unknown option in matrix[1] stops run-suite before matrix[0] runs, naming the suite file and key in its terms."""
    (tmp_path / "c").symlink_to(CORPUS_SMALL)
    path = suite_file(
        tmp_path,
        '[[matrix]]\ncorpora = ["c"]\nstrategies = ["no_memory"]\n'
        '[[matrix]]\ncorpora = ["c"]\nstrategies = ["bm25"]\n[matrix.options.bm25]\nbogus = 1\n',
    )
    store = tmp_path / "s.duckdb"
    result = evals("run-suite", "--suite", path, "--store", store, "--repo", tmp_path)
    line = one_line_error(result)
    assert line.startswith(f"Error: {path}: matrix[1].options.bm25.bogus: ") and "--option" not in line
    assert not store.exists()


def test_an_unknown_strategy_in_a_later_matrix_is_found_before_the_first_run(tmp_path):
    """An unknown strategy in matrix[1] stops run-suite before matrix[0] runs, naming the suite file and key."""
    (tmp_path / "c").symlink_to(CORPUS_SMALL)
    path = suite_file(
        tmp_path, '[[matrix]]\ncorpora = ["c"]\nstrategies = ["no_memory"]\n[[matrix]]\ncorpora = ["c"]\nstrategies = ["nope"]\n'
    )
    store = tmp_path / "s.duckdb"
    line = one_line_error(evals("run-suite", "--suite", path, "--store", store, "--repo", tmp_path))
    assert line.startswith(f"Error: {path}: matrix[1].strategies[0]: ") and "nope" in line
    assert not store.exists()
