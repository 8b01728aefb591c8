"""`python -m evals --jobs N`: the one flag the original harness did not have caps the processes that play."""

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Four conversations of 2,000 turns: enough turns for the run to be forked."""
    folder = tmp_path_factory.mktemp("corpus")
    for n in range(4):
        turns = [{"role": ("user", "assistant")[i % 2], "content": f"turn {i} of {n}: note {i * 7 % 13}"} for i in range(2000)]
        for i in (500, 1500, 1999):
            fact = f"note {i % 13}"
            turns[i]["test_at"] = {"question": f"{fact}?", "expected_fact": fact, "expected_keywords": [f"{i % 13}"]}
        conversation = {"schema_version": "1", "id": f"c{n}", "description": "generated", "turns": turns}
        (folder / f"c{n}.json").write_text(json.dumps(conversation), encoding="utf-8")
    return folder


def _legacy(corpus: Path, tmp_path: Path, name: str, *flags: str):
    """`python -m evals` in a fresh interpreter (the test process may hold threads, and then never forks)."""
    out = tmp_path / f"{name}.json"
    command = [sys.executable, "-m", "evals", *flags, "--corpus", str(corpus), "--output", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300), out


@pytest.mark.parametrize("runner", ["full_history", "mneme"])
def test_every_core_writes_the_serial_document(runner: str, corpus: Path, tmp_path: Path):
    """Without --jobs (every core) the document is, byte for byte, the one --jobs 1 writes."""
    serial, serial_out = _legacy(corpus, tmp_path, "serial", "--runner", runner, "--jobs", "1")
    parallel, parallel_out = _legacy(corpus, tmp_path, "parallel", "--runner", runner, "--jobs", "2")
    assert (serial.returncode, parallel.returncode) == (0, 0), parallel.stderr
    assert parallel_out.read_bytes() == serial_out.read_bytes()


def test_jobs_must_be_at_least_one(corpus: Path, tmp_path: Path):
    """--jobs 0 is refused as a usage error, before any work."""
    result, out = _legacy(corpus, tmp_path, "o", "--runner", "no_memory", "--jobs", "0")
    assert result.returncode == 2
    assert "--jobs" in result.stderr
    assert not out.exists()
