"""The local executor's ``jobs``: conversations played by forked processes give the serial run.

Each run is made in a fresh interpreter: the test process may hold other threads (a test's HTTP server, tqdm's
monitor), and the executor never forks a process that does (it would play serially here, unseen).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, PLUGINS, ROOT

from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig
from evals.run.executors import LocalExecutor, PlayJob

GOLDEN = FIXTURES / "golden"

# Plays a configuration (argv[1], JSON) with argv[2] jobs, forking whatever the corpus's size, and prints what
# the test compares: the document's bytes, whether it forked, the run's counts, or the error it raised.
PROBE = """
import hashlib, json, sys
from evals.run.evaluate import RunConfig, evaluate
from evals.run.executors import LocalExecutor
from evals.views.report import dump_json, legacy_json

config = RunConfig.model_validate_json(sys.argv[1])
executor = LocalExecutor(int(sys.argv[2]), fork_above=0)
try:
    result = evaluate(config, cache=None, held_tokens=False, executor=executor)
except Exception as exc:
    print(json.dumps({"raised": type(exc).__name__, "message": str(exc)}))
    sys.exit(0)
timings = result.run.timings
print(json.dumps({
    "document": hashlib.sha256(dump_json(legacy_json(result.run, result.scores, result.answers))).hexdigest(),
    "calls": [len(timings.add_ns), len(timings.retrieve_ns)],
    "long_retrievals": result.run.long_retrievals,
}))
"""


def played(config: RunConfig, jobs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PLUGINS), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, config.model_dump_json(), str(jobs)], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("strategy", ["full_history", "summary_buffer", "mneme", "random_k", "recency"])
def test_two_processes_write_the_serial_document(strategy: str):
    """A run played by two forked processes writes, byte for byte, the document a serial run writes."""
    config = RunConfig(strategy=strategy, corpus=ROOT / "corpus", cutoffs=())
    assert played(config, 2)["document"] == played(config, 1)["document"]


def test_forked_runs_keep_every_call_timing():
    """A forked run keeps one timing per add and per retrieve, as many as a serial run."""
    config = RunConfig(strategy="recency", corpus=GOLDEN, cutoffs=())
    assert played(config, 2)["calls"] == played(config, 1)["calls"]


def test_forked_runs_count_long_retrievals_as_a_serial_run():
    """Retrievals longer than asked for are counted over every process, as a serial run counts them."""
    config = RunConfig(strategy="greedy_strategy:SPEC", corpus=ROOT / "corpus", cutoffs=())
    forked, serial = played(config, 2), played(config, 1)
    assert forked["long_retrievals"] == serial["long_retrievals"] > 0


def test_a_strategy_error_in_a_child_is_the_serial_error(tmp_path: Path):
    """What a strategy raises in a forked process is raised in the run, with the serial run's message."""
    options = {"seconds": 0.0, "marker": str(tmp_path / "no such folder" / "marker")}  # retrieve() raises
    config = RunConfig(strategy="sleepy_strategy:SPEC", options=options, corpus=ROOT / "corpus", cutoffs=())
    forked, serial = played(config, 2), played(config, 1)
    assert forked == serial and serial["raised"] == "StrategyError"


def test_a_child_that_dies_fails_the_run(corpus_small: Path, tmp_path: Path):
    """A forked process that dies mid-play fails the run with one line saying so."""
    victim = sorted(p.stem for p in corpus_small.glob("*.json"))[0]
    options = {"marker": str(tmp_path / "died"), "victim": victim, "always": True}
    config = RunConfig(strategy="dying_strategy:SPEC", options=options, corpus=corpus_small, cutoffs=())
    outcome = played(config, 2)
    assert outcome["raised"] == "EvalsError"
    assert outcome["message"].endswith("ended without a result (exit code 1)")


def test_a_small_corpus_is_played_in_one_process():
    """A corpus of fewer turns than forking pays for is played in the calling process, whatever jobs says."""
    config = RunConfig(strategy="no_memory", corpus=ROOT / "corpus", cutoffs=())
    planned = config.plan()
    job = PlayJob(config, load_corpus(config.corpus), planned, planned.build())
    assert not LocalExecutor(2).forks(job, prefetched=False)


# Plays the starter corpus with 2 jobs and a score function that names the process it ran in.
WHERE_SCORED = """
import json, os
from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig
from evals.run.executors import LocalExecutor, PlayJob

config = RunConfig(strategy="full_history", corpus=os.environ["CORPUS"], cutoffs=())
planned = config.plan()
job = PlayJob(config, load_corpus(config.corpus), planned, planned.build(),
              score=lambda run: (os.getpid(), [c.conversation_id for c in run.conversations]))
executor = LocalExecutor(2, fork_above=0)
played = executor.play(job)
print(json.dumps({"here": os.getpid(), "where": executor.scores_where_played(job), "scored": played.scored,
                  "ids": [c.conversation_id for c in played.run.conversations]}))
"""


def test_each_share_is_scored_in_the_process_that_played_it():
    """With a score function, each forked process scores its own share; the shares come back in corpus order."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "CORPUS": str(ROOT / "corpus")}
    proc = subprocess.run([sys.executable, "-c", WHERE_SCORED], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["where"] is True
    processes = [pid for pid, _ in out["scored"]]
    assert len(out["scored"]) == 2 and out["here"] not in processes and len(set(processes)) == 2
    assert [i for _, ids in out["scored"] for i in ids] == out["ids"]


def test_without_a_score_function_nothing_is_scored_where_played():
    """A job with no score function is scored after the play, by the caller, however many processes play it."""
    config = RunConfig(strategy="full_history", corpus=ROOT / "corpus", cutoffs=())
    planned = config.plan()
    job = PlayJob(config, load_corpus(config.corpus), planned, planned.build())
    assert not LocalExecutor(2, fork_above=0).scores_where_played(job)
