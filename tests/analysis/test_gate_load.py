"""The gate's latency verdict under load: identical code timed on a busy machine passes, a slower strategy fails.

The base run is made on the machine as it is, the head beside ten busy processes (load 10 on 2 cores), as
when the base comes from a store another runner made at another time. The strategy is tests/plugins'
``paced_strategy``: a fixed amount of hashing per retrieve, and a sleep injected through the environment.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import PLUGINS, ROOT
from helpers.stores import provenance

from evals.analysis.gate import LATENCY_METRIC
from evals.cli import cli
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store

pytestmark = pytest.mark.slow

BUSY = 10  # processes spinning while the head runs
CONFIG = {"strategy": "paced_strategy:SPEC", "options": {"work": 4000}, "corpus": ROOT / "corpus"}


@pytest.fixture
def paced(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.delenv("PACED_STRATEGY_SLEEP_S", raising=False)


@pytest.fixture
def busy() -> Iterator[None]:
    """Ten processes that spin for as long as the test runs."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BUSY)]
    time.sleep(0.5)  # until they are all running
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def append(store_path: Path, commit: str) -> float:
    """A run of the paced strategy at ``commit``; its judged latency (seconds)."""
    result = evaluate(RunConfig(**CONFIG), cache=None)
    with Store.open(store_path) as store:
        run_id = store.append(result, provenance(commit))
        return store.get_run(run_id).summary.metric(LATENCY_METRIC).value


def gate(store_path: Path):
    return CliRunner().invoke(cli, ["gate", "--base", "aaaaaaa", "--head", "bbbbbbb", "--store", str(store_path)])


def test_identical_code_timed_under_load_passes(store_path, paced, request):
    """Base on the machine as it is, head at load 10: the same code passes the gate."""
    append(store_path, "a" * 40)
    request.getfixturevalue("busy")
    append(store_path, "b" * 40)
    result = gate(store_path)
    assert result.exit_code == 0, result.output


def test_a_strategy_twice_as_slow_fails_under_load(store_path, paced, request, monkeypatch):
    """A sleep as long as the base's retrieve injected at the head (x2) fails the gate, though the head ran at load 10."""
    base = append(store_path, "a" * 40)
    monkeypatch.setenv("PACED_STRATEGY_SLEEP_S", str(base))
    request.getfixturevalue("busy")
    append(store_path, "b" * 40)
    result = gate(store_path)
    assert result.exit_code == 1, result.output
    assert "slower (latency past ×1.5)" in result.output
