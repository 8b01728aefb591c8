"""`evals build-site --from DIR`: a site built from board files (docs/board.md), each imported into a temporary
store with its benchmark's texts; a bad file is one line naming it, exit 1, and nothing built."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import evals, evals_output, run_id_of

from evals.benchmarks import FETCHED_NOTE

CORPUS = FIXTURES / "sessions_corpus"


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """(board folder, run id): one bm25 run on sessions_corpus exported with --board, its corpus fetched as locomo."""
    downloads = tmp_path / "downloads"
    shutil.copytree(CORPUS, downloads / "corpora" / "locomo")
    (downloads / "corpora" / "locomo" / FETCHED_NOTE).write_text("fetched\n", encoding="utf-8")
    monkeypatch.setenv("EVALS_DOWNLOADS", str(downloads))
    store = tmp_path / "results.duckdb"
    run_id = run_id_of(evals_output("run", "--runner", "bm25", "--corpus", CORPUS, "--store", store))
    evals_output("export", run_id, "--store", store, "--board", tmp_path / "board")
    return tmp_path / "board", run_id


@pytest.mark.slow
def test_a_site_is_built_from_the_board_files_with_the_benchmarks_texts(board, tmp_path: Path):
    folder, run_id = board
    out = tmp_path / "site"
    result = evals("build-site", "--from", folder, "--out", out)
    assert result.exit_code == 0, result.output
    assert "from 1 runs" in result.output
    assert (out / "runs" / f"{run_id}.html").is_file()
    drilldowns = list((out / "runs" / run_id).glob("*.html"))
    assert drilldowns
    first_turn = json.loads(next(CORPUS.glob("*.json")).read_text(encoding="utf-8"))["turns"][0]["content"]
    assert any(first_turn[:30] in p.read_text(encoding="utf-8") for p in out.rglob("*.html"))


@pytest.mark.slow
def test_a_bad_board_file_is_named_in_one_line_and_nothing_is_built(board, tmp_path: Path):
    folder, run_id = board
    path = next(folder.rglob("*.json"))
    document = json.loads(path.read_text(encoding="utf-8"))
    document["figures"]["turn.recall_any@1"]["value"] = 0.123
    path.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "site"
    result = evals("build-site", "--from", folder, "--out", out)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "turn.recall_any@1" in lines[0], result.output
    assert not out.exists()


def test_corpus_without_from_is_refused(tmp_path: Path):
    result = evals("build-site", "--corpus", CORPUS, "--out", tmp_path / "site")
    assert result.exit_code == 2 and "--corpus goes with --from" in result.output


@pytest.mark.slow
def test_a_reproduced_file_is_marked_reproduced_on_the_sites_leaderboard(board, tmp_path: Path):
    """After `evals verify --reproduce` writes its record beside the file, the site built from the folder marks the
    run reproduced (the mark's title says what it means); without the record it is marked submitted."""
    folder, run_id = board
    out = tmp_path / "site"
    evals_output("build-site", "--from", folder, "--out", out)
    pages = " ".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html"))
    assert 'title="submitted: ' in pages and 'title="reproduced: ' not in pages
    evals_output("verify", folder, "--reproduce")
    evals_output("build-site", "--from", folder, "--out", out, "--full")
    pages = " ".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html"))
    assert 'title="reproduced: the harness reran this system' in pages and 'title="submitted: ' not in pages
