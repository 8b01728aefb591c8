"""The store under real failure and contention: killed writers and concurrent `evals run`s."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store
from evals.views.report import stored_legacy_json

PROVENANCE = Provenance(commit="a" * 40, dirty=False, package_version="0.1.0", mneme_version=None, python_version="3")

# Appends a run whose rows are all inserted, then stalls inside the still-open
# transaction until it is killed. argv: store, ready-file, conversations, turns.
# It restores Python's SIGINT handler first: a shell starts background jobs with
# SIGINT ignored, the child inherits that, and Ctrl-C would then never arrive.
STALLING_WRITER = r"""
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import sys, time
from pathlib import Path
from evals.model.corpus import Conversation, Corpus, corpus_digest
from evals.judge.scoring import Evaluation, score_run
from evals.model.provenance import Provenance
from evals.run.playthrough import play_corpus
from evals.store import Store
from evals.strategies import FullHistory
from evals.model.tokens import TokenCounter

store, ready, conversations, turns = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
convs = [
    Conversation(
        id=f"killed_{c:04d}",
        description="written by a writer that is killed",
        turns=[{"role": "user", "content": f"conversation {c} turn {t} never lands"} for t in range(turns - 1)]
        + [{"role": "user", "content": "q?",
            "test_at": {"question": "q", "expected_fact": "f", "expected_keywords": ["turn 1 "]}}],
    )
    for c in range(conversations)
]
corpus = Corpus(directory=Path("synthetic"), conversations=convs, digest=corpus_digest(convs))
run = play_corpus(corpus, FullHistory(), ignores_k=True)
evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))

original = Store._insert_run
def stall(self, *args):
    original(self, *args)
    ready.touch()
    time.sleep(120)
Store._insert_run = stall

with Store.open(store) as s:
    s.append(evaluation, Provenance("b" * 40, False, "0.1.0", None, "3"))
"""


def table_counts(path: Path) -> dict[str, int]:
    con = duckdb.connect(str(path), read_only=True)
    tables = ("runs", "conversations", "corpus_test_points", "test_points", "run_turn_tokens")
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    con.close()
    return counts


def interrupt_mid_append(store: Path, tmp_path: Path, sig: signal.Signals, conversations: int, turns: int) -> int:
    """Start the stalling writer, wait until its rows are in, send ``sig``; return its exit code."""
    ready = tmp_path / "ready"
    proc = subprocess.Popen(
        [sys.executable, "-c", STALLING_WRITER, str(store), str(ready), str(conversations), str(turns)],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "writer never reached the middle of its transaction"
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    return proc.returncode


@pytest.fixture
def store_with_one_run(store_path, corpus_small) -> Path:
    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="summary_buffer", corpus=corpus_small)), PROVENANCE)
    return store_path


@pytest.mark.parametrize(
    "conversations, turns",
    [(3, 20), (260, 500)],
    ids=["small-run", "run-larger-than-a-row-group"],
)
def test_sigkill_mid_append_leaves_only_whole_runs(store_with_one_run, tmp_path, conversations, turns):
    """A writer SIGKILLed inside its transaction leaves the earlier run intact and none of its own."""
    before = table_counts(store_with_one_run)
    with Store.open(store_with_one_run, read_only=True) as store:
        seed_before = stored_legacy_json(store.get_run(store.runs()[0].run_id))
    returncode = interrupt_mid_append(store_with_one_run, tmp_path, signal.SIGKILL, conversations, turns)
    assert returncode == -signal.SIGKILL
    assert table_counts(store_with_one_run) == before
    with Store.open(store_with_one_run) as store:
        assert stored_legacy_json(store.get_run(store.runs()[0].run_id)) == seed_before


def test_ctrl_c_mid_append_rolls_back(store_with_one_run, tmp_path):
    """Ctrl-C (SIGINT) inside the transaction rolls the run back; the store stays readable."""
    before = table_counts(store_with_one_run)
    assert interrupt_mid_append(store_with_one_run, tmp_path, signal.SIGINT, 3, 20) != 0
    assert table_counts(store_with_one_run) == before


def test_killed_writer_does_not_block_the_next(store_with_one_run, tmp_path, corpus_small):
    """After a SIGKILLed writer, the next append succeeds and both whole runs are there."""
    interrupt_mid_append(store_with_one_run, tmp_path, signal.SIGKILL, 3, 20)
    with Store.open(store_with_one_run) as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus_small)), PROVENANCE)
        assert store.run_count() == 2


HOLD_LOCK = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(1.5)"


def test_concurrent_runs_both_land(store_path, corpus_small):
    """Two `evals run` processes on one store, started while a third holds its lock, both append."""
    with Store.open(store_path):
        pass
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(store_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    env = {k: v for k, v in os.environ.items() if k != "EVALS_STORE"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "evals", "run", "--runner", runner, "--corpus", str(corpus_small), "--store", str(store_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for runner in ("no_memory", "full_history")
    ]
    outputs = [proc.communicate(timeout=120) for proc in runs]
    holder.wait()
    assert [proc.returncode for proc in runs] == [0, 0], outputs
    with Store.open(store_path, read_only=True) as store:
        assert sorted(s.strategy for s in store.runs()) == ["full_history", "no_memory"]


def locked_out(path: Path) -> bool:
    """Whether another process is refused the store at ``path`` at once (this one holds DuckDB's lock)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1]).close()", str(path)],
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0 or "lock" in probe.stderr.lower(), probe.stderr
    return probe.returncode != 0


def test_an_append_keeps_the_lock_until_the_store_closes(store_path, corpus_small):
    """After an append (which copies the file beside itself first), the store is still locked against other
    processes until it is closed: reading the file never drops DuckDB's lock (closing any descriptor of it would)."""
    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus_small)), PROVENANCE)
        assert locked_out(store_path)
    assert not locked_out(store_path)


def test_a_second_open_in_one_process_keeps_the_first_ones_lock(store_path, corpus_small):
    """Opening and closing the store again in the same process (as the site build does) leaves the first
    open's lock in place: the header check reads the file the process already holds, not a new descriptor."""
    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus_small)), PROVENANCE)
    with Store.open(store_path, read_only=True):
        with Store.open(store_path, read_only=True) as second:
            assert second.run_count() == 1
        assert locked_out(store_path)


def test_the_sites_copy_of_the_store_is_read_under_the_builds_lock(store_path, corpus_small):
    """Store.copy_into (the site's data/results.duckdb) gives the file byte for byte and keeps the read
    lock: no append from another process can land while the copy is made, so it is never torn."""
    import io

    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus_small)), PROVENANCE)
    with Store.open(store_path, read_only=True) as store:
        copy = io.BytesIO()
        assert store.copy_into(copy) == store_path.stat().st_size
        assert locked_out(store_path)
    assert copy.getvalue() == store_path.read_bytes()
