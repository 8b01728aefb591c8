"""board/, the published board's runs as files: every one passes `evals verify` offline (the checks that need a
benchmark's labels are named as not run, never failed), so a bad file never reaches the Pages workflow."""

from __future__ import annotations

import pytest
from helpers import ROOT
from helpers.cli import evals

BOARD = ROOT / "board"


@pytest.mark.slow  # reads every file of the published board
def test_every_board_file_passes_verify_offline(tmp_path):
    files = sorted(f for f in BOARD.rglob("*.json") if not f.name.endswith(".reproduced.json"))
    assert files, "board/ holds no board file"
    result = evals("verify", BOARD, "--downloads", tmp_path)  # an empty downloads folder: offline, no labels
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert not [line for line in lines if line.startswith("bad")], result.output
    assert sum(str(f.relative_to(BOARD)) in result.output for f in files) == len(files)
