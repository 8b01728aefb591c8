"""`--output` of a ceiling run: the compact form (`--output-records turns`) and the refusal of a huge texts document."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers.cli import CORPUS_SMALL, evals

from evals.cli import legacy_cli
from evals.model.corpus import load_corpus
from evals.views import compact as compact_module


def run(tmp_path, runner: str, *extra: object):
    return evals("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", tmp_path / "r.duckdb", *extra)


def written(tmp_path, runner: str, records: str) -> dict:
    out = tmp_path / f"{runner}_{records}.json"
    result = run(tmp_path, runner, "--output", out, "--output-records", records)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_bytes())


def texts_of(document: dict, corpus) -> list[list[str]]:
    """Every test point's records, read back from a compact document through the corpus's turns."""
    contents = {c.id: [t.content for t in c.turns] for c in corpus}
    out = []
    for conversation in document["conversations"]:
        turns = contents[conversation["conversation_id"]]
        for point in conversation["test_points"]:
            refs = point["retrieved_record_turns"]
            if isinstance(refs, dict):
                refs = list(range(refs["from"], refs["to"]))
            out.append([turns[r] if isinstance(r, int) else r for r in refs])
    return out


@pytest.mark.parametrize("runner", ["full_history", "summary_buffer", "bm25"])
def test_the_compact_form_gives_back_every_record(tmp_path, runner):
    """Read through the corpus, the compact form's records are the texts form's, point for point."""
    texts = written(tmp_path, runner, "texts")
    compact = written(tmp_path, runner, "turns")
    assert compact["records"] == "turns" and "records" not in texts
    expected = [p["retrieved_records"] for c in texts["conversations"] for p in c["test_points"]]
    assert texts_of(compact, load_corpus(CORPUS_SMALL).conversations) == expected


def test_the_compact_form_keeps_every_figure(tmp_path):
    """Only the test points' lists change: the metrics (what the original's jq recipe reads) are the same."""
    texts, compact = written(tmp_path, "full_history", "texts"), written(tmp_path, "full_history", "turns")
    assert compact["metrics"]["recall_at_k"] == texts["metrics"]["recall_at_k"]
    assert compact["metrics"]["tokens"] == texts["metrics"]["tokens"]


def test_full_history_records_are_one_span(tmp_path):
    """A ceiling run's records, every turn before the question in order, are written as one span."""
    point = written(tmp_path, "full_history", "turns")["conversations"][0]["test_points"][-1]
    assert point["retrieved_record_turns"] == {"from": 0, "to": point["turn_index"]}


def test_a_texts_document_over_the_limit_is_refused_before_writing(tmp_path, monkeypatch):
    """Past the limit, the default refuses in one line naming the size and --output-records turns, and writes nothing."""
    monkeypatch.setattr(compact_module, "TEXTS_LIMIT", 1000)
    out = tmp_path / "full.json"
    result = run(tmp_path, "full_history", "--output", out)
    assert result.exit_code == 1 and not out.exists()
    (line,) = result.output.strip().splitlines()[-1:]
    assert "the --output document would be about" in line and "--output-records turns" in line


def test_texts_asked_for_by_name_are_written_past_the_limit(tmp_path, monkeypatch):
    """--output-records texts writes the original's shape whatever its size."""
    monkeypatch.setattr(compact_module, "TEXTS_LIMIT", 1000)
    assert "retrieved_records" in written(tmp_path, "full_history", "texts")["conversations"][0]["test_points"][0]


def test_output_records_needs_output(tmp_path):
    """--output-records alone is a usage error: it says how --output writes."""
    result = run(tmp_path, "full_history", "--output-records", "turns")
    assert result.exit_code == 2 and "goes with --output" in result.output


def test_the_original_cli_refuses_only_past_the_limit(tmp_path, monkeypatch):
    """`python -m evals` writes as before under the limit; past it, one line names the `evals run` that writes turns."""
    out = tmp_path / "full.json"
    args = ["--runner", "full_history", "--corpus", str(CORPUS_SMALL), "--output", str(out)]
    assert CliRunner().invoke(legacy_cli, args).exit_code == 0 and out.exists()
    out.unlink()
    monkeypatch.setattr(compact_module, "TEXTS_LIMIT", 1000)
    result = CliRunner().invoke(legacy_cli, args)
    assert result.exit_code == 1 and not out.exists()
    assert "--output-records turns" in result.output and "evals run --runner full_history" in result.output


@pytest.mark.parametrize("runner", ["full_history", "summary_buffer"])
def test_a_reused_run_writes_the_same_compact_document(tmp_path, clean_repo, runner):
    """The compact form of a run reused from the store (its stored turn refs) is the new run's, byte for byte."""
    documents = []
    for attempt in ("new", "reused"):
        out = tmp_path / f"{attempt}.json"
        result = run(tmp_path, runner, "--repo", clean_repo, "--output", out, "--output-records", "turns")
        assert result.exit_code == 0 and result.output.startswith("cached: " if attempt == "reused" else "run "), result.output
        documents.append(out.read_bytes())
    assert documents[0] == documents[1]
