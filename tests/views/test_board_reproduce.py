"""Reproduced or submitted (evals.judge.origin): `evals verify --reproduce` reruns a board file's offline system and
compares its rankings point by point; the same rankings write RUN_ID.reproduced.json beside the file, which must name
the file's exact bytes; every board (the leaderboard's table, JSON and Markdown, the site's rows) marks a run from a
board file reproduced or submitted, and the harness's own run neither. bm25 and recency on sessions_corpus, fetched
as locomo, are the fixtures."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import evals, evals_output, run_id_of

from evals.benchmarks import FETCHED_NOTE
from evals.judge.origin import REPRODUCED, SUBMITTED, first_difference, origin
from evals.views.board_rows import origin_marks

CORPUS = FIXTURES / "sessions_corpus"


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A board folder of one bm25 and one recency run on sessions_corpus, fetched as locomo: strategy -> its file."""
    downloads = tmp_path / "downloads"
    shutil.copytree(CORPUS, downloads / "corpora" / "locomo")
    (downloads / "corpora" / "locomo" / FETCHED_NOTE).write_text("fetched\n", encoding="utf-8")
    monkeypatch.setenv("EVALS_DOWNLOADS", str(downloads))
    store = tmp_path / "made.duckdb"
    files = {}
    for runner in ("bm25", "recency"):
        run_id = run_id_of(evals_output("run", "--runner", runner, "--corpus", CORPUS, "--store", store))
        evals_output("export", run_id, "--store", store, "--board", tmp_path / "board")
        files[runner] = tmp_path / "board" / "sessions_corpus" / runner / f"{run_id}.json"
    return files


def beside(path: Path) -> Path:
    return path.with_name(path.stem + ".reproduced.json")


def test_the_same_rankings_make_a_file_reproduced(board):
    """A rerun of bm25 at the file's k and seed gives its rankings: the record beside it names the file's sha256, the
    harness's commit, the date and the points compared, and plain `evals verify` then says reproduced."""
    path = board["bm25"]
    result = evals("verify", path.parent, "--reproduce")
    assert result.exit_code == 0, result.output
    points = len(json.loads(path.read_text(encoding="utf-8"))["points"])
    assert f"reproduced: {path}: {points} points, the same rankings (wrote {beside(path).name})" in result.output
    record = json.loads(beside(path).read_text(encoding="utf-8"))
    assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (record["board_file"], record["points"], len(record["commit"])) == (path.name, points, 40)
    again = evals_output("verify", path.parent)
    assert again.startswith(f"verified: {path}: locomo: ") and "; reproduced (" in again


def test_a_file_without_a_record_is_submitted(board):
    """Without a rerun's record a verified file's line says submitted."""
    assert "; submitted (its system run by its submitter)" in evals_output("verify", board["bm25"])


def test_another_systems_rankings_are_not_reproduced(board):
    """bm25's file carrying recency's rankings (and their figures, so it verifies) is not reproduced: the line names
    the first point whose ranking differs (its rank, or its length), the command exits 1, and no record is written."""
    path, other = board["bm25"], json.loads(board["recency"].read_text(encoding="utf-8"))
    document = json.loads(path.read_text(encoding="utf-8"))
    document |= {"points": other["points"], "figures": other["figures"]}
    path.write_text(json.dumps(document), encoding="utf-8")
    assert evals_output("verify", path).startswith(f"verified: {path}")
    result = evals("verify", path, "--reproduce")
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if line.startswith("not reproduced:"))
    assert line.startswith(f"not reproduced: {path}: point 'sessions' turn ") and " in the file, " in line, line
    assert not beside(path).exists()


def test_a_record_of_other_bytes_is_refused(board):
    """A record made for one file, put beside another (or left after its file changed), is bad: verify names the
    record and its sha256, and import refuses the file."""
    evals_output("verify", board["bm25"].parent, "--reproduce")
    record = json.loads(beside(board["bm25"]).read_text(encoding="utf-8"))
    record["board_file"] = board["recency"].name
    beside(board["recency"]).write_text(json.dumps(record), encoding="utf-8")
    result = evals("verify", board["recency"])
    assert result.exit_code == 1
    assert f"bad: {board['recency']}: {beside(board['recency'])}: sha256: {record['sha256'][:12]}… is not the bytes of" in (
        result.output
    )
    refused = evals("import", board["recency"], "--store", board["recency"].parent / "other.duckdb")
    assert refused.exit_code == 1 and "sha256" in refused.output


def test_a_record_without_its_file_is_refused(board):
    """A record of a reproduction whose board file is gone is bad, the file it names said."""
    evals_output("verify", board["bm25"].parent, "--reproduce")
    board["bm25"].unlink()
    result = evals("verify", board["bm25"].parent.parent)
    assert result.exit_code == 1
    assert f"bad: {beside(board['bm25'])}: a record of a reproduction with no board file beside it" in result.output


def test_every_board_marks_who_ran_each_run(board, tmp_path):
    """Imported, the reproduced file's run is marked reproduced and the other submitted in the leaderboard's JSON,
    table and Markdown; a run the harness made in the store carries no mark."""
    evals_output("verify", board["bm25"].parent, "--reproduce")
    store = tmp_path / "board.duckdb"
    evals_output("import", board["bm25"], board["recency"], "--store", store)
    evals_output("run", "--runner", "random_k", "--corpus", CORPUS, "--store", store)
    rows = {r["strategy"]: r for r in json.loads(evals_output("leaderboard", "--store", store, "--format", "json"))}
    assert rows["bm25"]["origin"]["mark"] == REPRODUCED and rows["bm25"]["origin"]["points"] > 0
    assert (rows["recency"]["origin"], rows["random_k"]["origin"]) == ({"mark": SUBMITTED}, None)
    table = evals_output("leaderboard", "--store", store)
    names = {line.split()[0].replace("+", "") for line in table.splitlines() if line.strip()}  # +: a dirty tree's
    assert {"bm25↺", "recency‡", "random_k"} <= names, table
    assert "↺ reproduced: the harness reran" in table and "‡ submitted: its figures" in table
    markdown = evals_output("leaderboard", "--store", store, "--format", "markdown")
    rows = {line.split(" |")[0].strip("| "): line for line in markdown.splitlines() if line.startswith("| ")}
    marked = {name.split(" ")[0]: name for name in rows}
    assert marked["bm25"].endswith("(reproduced)") and marked["recency"].endswith("(submitted)")
    assert "reproduced" not in marked["random_k"] and "submitted" not in marked["random_k"]


def test_the_marks_the_boards_show():
    """Every board's mark (evals.views.board_rows.origin_marks, which the site's rows, the table and the Markdown
    read): reproduced with the rerun's points, commit and date, submitted, and none for the harness's own run.
    tests/site/test_site_from_board.py sees it on the built site."""
    rerun = {"commit": "a" * 40, "dirty": False, "date": "2026-12-07", "points": 3}
    ((mark, why),) = origin_marks(origin(True, rerun))
    assert mark == REPRODUCED and why.endswith("(3 points, at commit aaaaaaaaaaaa, 2026-12-07)")
    assert [m for m, _ in origin_marks(origin(True))] == [SUBMITTED] and origin_marks(origin(False)) == []


def test_first_difference_names_the_point_and_rank():
    """Rankings compared point by point, rank by rank: the first differing rank, a shorter ranking, a missing point."""
    assert first_difference({("c", 4): [1, 2]}, {("c", 4): [1, 2]}) is None
    differs = first_difference({("c", 4): [1, 2]}, {("c", 4): [1, None]})
    assert differs == "point 'c' turn 4: rank 2 is turn 2 in the file, no turn in the rerun"
    shorter = first_difference({("c", 4): [1, 2]}, {("c", 4): [1]})
    assert shorter == "point 'c' turn 4: 2 ranked records in the file, 1 in the rerun"
    assert first_difference({("c", 4): [1]}, {}) == "point 'c' turn 4: not in the rerun"


def test_origin_is_none_for_the_harnesss_own_run():
    """Only an imported run has an origin: submitted, or reproduced with the rerun's commit, date and points."""
    rerun = {"commit": "a" * 40, "dirty": False, "date": "2026-12-07", "points": 3, "sha256": "b" * 64}
    assert origin(False) is None and origin(True) == {"mark": SUBMITTED}
    assert origin(True, rerun) == {"mark": REPRODUCED, "commit": "a" * 40, "dirty": False, "date": "2026-12-07", "points": 3}
