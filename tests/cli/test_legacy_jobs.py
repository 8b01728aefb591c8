"""`python -m evals --jobs N`: the one flag the original harness did not have caps the processes that play."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from evals.cli import legacy_cli

CORPUS = ROOT / "corpus"


def _legacy(tmp_path: Path, name: str, *flags: str):
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(legacy_cli, [*flags, "--corpus", str(CORPUS), "--output", str(out)])
    return result, out


@pytest.mark.parametrize("runner", ["full_history", "mneme"])
def test_every_core_writes_the_serial_document(runner: str, tmp_path: Path):
    """Without --jobs (every core) the document is, byte for byte, the one --jobs 1 writes."""
    serial, serial_out = _legacy(tmp_path, "serial", "--runner", runner, "--jobs", "1")
    parallel, parallel_out = _legacy(tmp_path, "parallel", "--runner", runner)
    assert (serial.exit_code, parallel.exit_code) == (0, 0), parallel.output
    assert parallel_out.read_bytes() == serial_out.read_bytes()


def test_jobs_must_be_at_least_one(tmp_path: Path):
    """--jobs 0 is refused as a usage error, before any work."""
    result, out = _legacy(tmp_path, "o", "--runner", "no_memory", "--jobs", "0")
    assert result.exit_code == 2
    assert "--jobs" in result.output
    assert not out.exists()
