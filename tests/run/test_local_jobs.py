"""The local executor's ``jobs``: conversations played by forked processes give the serial run."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES, PLUGINS, ROOT

from evals.errors import EvalsError
from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig, evaluate
from evals.run.executors import LocalExecutor, PlayJob
from evals.strategies import StrategyError
from evals.views.report import dump_json, legacy_json

GOLDEN = FIXTURES / "golden"


def document(config: RunConfig, jobs: int) -> bytes:
    result = evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(jobs, fork_above=0))
    return dump_json(legacy_json(result.run, result.scores, result.answers))


@pytest.mark.parametrize("strategy", ["full_history", "summary_buffer", "mneme", "random_k", "recency"])
def test_two_processes_write_the_serial_document(strategy: str):
    """A run played by two forked processes writes, byte for byte, the document a serial run writes."""
    config = RunConfig(strategy=strategy, corpus=ROOT / "corpus", cutoffs=())
    assert document(config, 2) == document(config, 1)


def test_forked_runs_keep_every_call_timing():
    """A forked run keeps one timing per add and per retrieve, as many as a serial run."""
    config = RunConfig(strategy="recency", corpus=GOLDEN, cutoffs=())
    serial = evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(1, fork_above=0)).run.timings
    forked = evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(2, fork_above=0)).run.timings
    assert (len(forked.add_ns), len(forked.retrieve_ns)) == (len(serial.add_ns), len(serial.retrieve_ns))


def test_forked_runs_count_long_retrievals_as_a_serial_run(monkeypatch):
    """Retrievals longer than asked for are counted over every process, as a serial run counts them."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    config = RunConfig(strategy="greedy_strategy:SPEC", corpus=ROOT / "corpus", cutoffs=())
    run = lambda jobs: evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(jobs, fork_above=0)).run  # noqa: E731
    assert run(2).long_retrievals == run(1).long_retrievals > 0


def test_a_strategy_error_in_a_child_is_the_serial_error(monkeypatch, corpus_small: Path, tmp_path: Path):
    """What a strategy raises in a forked process is raised in the run, with the serial run's message."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    options = {"seconds": 0.0, "marker": str(tmp_path / "no such folder" / "marker")}  # retrieve() raises
    config = RunConfig(strategy="sleepy_strategy:SPEC", options=options, corpus=corpus_small, cutoffs=())
    messages = []
    for jobs in (1, 2):
        with pytest.raises(StrategyError) as raised:
            evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(jobs, fork_above=0))
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


def test_a_child_that_dies_fails_the_run(monkeypatch, corpus_small: Path, tmp_path: Path):
    """A forked process that dies mid-play fails the run with one line saying so."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    victim = sorted(p.stem for p in corpus_small.glob("*.json"))[0]
    options = {"marker": str(tmp_path / "died"), "victim": victim, "always": True}
    config = RunConfig(strategy="dying_strategy:SPEC", options=options, corpus=corpus_small, cutoffs=())
    with pytest.raises(EvalsError, match=r"ended without a result \(exit code 1\)"):
        evaluate(config, cache=None, held_tokens=False, executor=LocalExecutor(2, fork_above=0))


def test_a_small_corpus_is_played_in_one_process():
    """A corpus of fewer turns than forking pays for is played in the calling process, whatever jobs says."""
    config = RunConfig(strategy="no_memory", corpus=ROOT / "corpus", cutoffs=())
    planned = config.plan()
    job = PlayJob(config, load_corpus(config.corpus), planned, planned.build())
    assert not LocalExecutor(2).forks(job, prefetched=False)
    assert LocalExecutor(2, fork_above=0).forks(job, prefetched=False)
