"""A run says what happened: outside a git checkout it warns once that it is recorded as no-git
and never reused, naming --repo; the run line and the suite's numbered lines name the embedder; a run whose
output is not a terminal says how far it is at least once a minute."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

from helpers import ROOT

from evals.cli._base import Heartbeat
from evals.run.config import RunConfig
from evals.run.suite import PlannedRun

CORPUS = ROOT / "tests" / "fixtures" / "corpus_small"


def _evals(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`evals ARGS` in a process of its own, its output a pipe (not a terminal)."""
    evals = Path(sys.executable).with_name("evals")
    return subprocess.run([str(evals), *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_a_run_outside_git_warns_once_naming_repo(tmp_path: Path):
    """Outside a git checkout, `evals run` says in one line that the run is recorded as no-git, never reused, and names --repo."""
    done = _evals("run", "--runner", "bm25", "--corpus", str(CORPUS), "--store", str(tmp_path / "s.duckdb"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "no-git" in warnings[0] and "never reused" in warnings[0] and "--repo" in warnings[0]


def test_a_run_in_a_checkout_does_not_warn(tmp_path: Path, clean_repo: Path):
    """In a git checkout nothing is said about git."""
    done = _evals("run", "--runner", "bm25", "--corpus", str(CORPUS), "--store", str(tmp_path / "s.duckdb"), cwd=clean_repo)
    assert done.returncode == 0, done.stderr
    assert "no-git" not in done.stderr


def test_the_run_line_names_the_embedder(tmp_path: Path):
    """`evals run --runner mneme` says which embedder it used (the hash one by default) in its run line."""
    done = _evals("run", "--runner", "mneme", "--corpus", str(CORPUS), "--store", str(tmp_path / "s.duckdb"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^run \w+: mneme \(embedder hash-\d+\) ", done.stdout, re.M), done.stdout


def test_the_suites_numbered_lines_name_the_embedder():
    """A suite's "[3/9] mneme" line names Mneme's embedder: the one the suite gives, else its default."""
    default = PlannedRun(RunConfig(strategy="mneme", corpus=CORPUS), None)
    minilm = PlannedRun(RunConfig(strategy="mneme", corpus=CORPUS, options={"embedder": "minilm"}), None)
    assert default.label.startswith("mneme (embedder=hash) on ")
    assert minilm.label.startswith("mneme (embedder=minilm) on ")
    assert PlannedRun(RunConfig(strategy="bm25", corpus=CORPUS), None).label.startswith("bm25 on ")


def test_a_heartbeat_says_what_is_done_out_of_what_and_the_time():
    """Without a terminal, progress is a line per beat: conversations done out of all, and the time so far."""
    lines: list[str] = []
    said = threading.Event()
    beat = Heartbeat(every=0.01, say=lambda text: (lines.append(text), said.set()))
    try:
        beat(3, 20, "conv-3")
        assert said.wait(10)
    finally:
        beat.stop()
    assert any(re.fullmatch(r"progress: 3/20 conversations done, \d+m \d\ds so far", line) for line in lines), lines


def test_a_heartbeat_names_the_step_it_counts():
    """The embeddings a run computes up front are counted as embeddings, not as conversations (a one-conversation
    LoCoMo run said "473/473 conversations done" while it embedded 473 texts)."""
    beat = Heartbeat(every=3600, say=lambda text: None)
    try:
        beat(473, 473, "embeddings")
        assert beat.line().startswith("progress: 473/473 embeddings done, ")
        beat(1, 1, "conv-30")
        assert beat.line().startswith("progress: 1/1 conversations done, ")
    finally:
        beat.stop()
