"""Board files: `evals export --board` writes a run as ids and figures with no benchmark text, `evals verify`
recomputes every retrieval figure from the file's rankings and the corpus's labels, and `evals import` takes
the file back. A run of bm25 on tests/fixtures/sessions_corpus (evidence turns and sessions) is the fixture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import evals, evals_output, run_id_of

from evals.benchmarks import FETCHED_NOTE
from evals.model.corpus import load_corpus
from evals.store import Store

CORPUS = FIXTURES / "sessions_corpus"


@pytest.fixture
def downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty downloads folder of `evals fetch` ($EVALS_DOWNLOADS), so no real download is found."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    monkeypatch.setenv("EVALS_DOWNLOADS", str(folder))
    return folder


@pytest.fixture
def exported(tmp_path: Path, downloads: Path) -> tuple[Path, str, Path]:
    """(store, run id, board file) of one bm25 run on sessions_corpus, exported with --board."""
    store = tmp_path / "results.duckdb"
    run_id = run_id_of(evals_output("run", "--runner", "bm25", "--corpus", CORPUS, "--store", store))
    evals_output("export", run_id, "--store", store, "--board", tmp_path / "board")
    return store, run_id, tmp_path / "board" / "sessions_corpus" / "bm25" / f"{run_id}.json"


def corpus_texts() -> set[str]:
    texts = set()
    for conversation in load_corpus(CORPUS).conversations:
        for turn in conversation.turns:
            texts.add(turn.content)
            if turn.test_at is not None:
                texts.update((turn.test_at.question, turn.test_at.expected_fact, *turn.test_at.expected_keywords))
    return texts


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def tampered(path: Path, change) -> Path:
    """The board file at ``path`` after ``change(document)``, written back in place."""
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def fetched_as(downloads: Path, release: str) -> None:
    """sessions_corpus where `evals fetch RELEASE` leaves its corpus (corpora/RELEASE, with the fetch's note)."""
    shutil.copytree(CORPUS, downloads / "corpora" / release)
    (downloads / "corpora" / release / FETCHED_NOTE).write_text("fetched\n", encoding="utf-8")


def test_board_file_is_under_benchmark_and_system_and_holds_no_benchmark_text(exported):
    """The file is DIR/<corpus>/<system>/<run id>.json, with ids and figures and no turn, question or keyword."""
    store, run_id, path = exported
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "mneme-evals-board" and document["version"] == 2
    assert not set(strings(document)) & corpus_texts()
    assert {(p["conversation"], p["turn"]) for p in document["points"]} == {
        (c.id, index) for c in load_corpus(CORPUS).conversations for index, _ in c.test_points()
    }
    with Store.open(store, read_only=True) as opened:
        metrics = opened.get_summary(run_id).metrics
    assert document["figures"]["session.recall_all@5"]["value"] == metrics["session.recall_all@5"].value


def test_board_file_has_a_line_per_test_point_and_per_figure(exported):
    """Each test point and each figure is one line of the file, so a change to the board diffs by line."""
    lines = exported[2].read_text(encoding="utf-8").splitlines()
    document = json.loads("\n".join(lines))
    assert sum(line.startswith('    {"conversation": ') for line in lines) == len(document["points"])
    assert sum(any(line.startswith(f'    "{name}": {{') for name in document["figures"]) for line in lines) == len(
        document["figures"]
    )


def test_verify_passes_a_board_file_of_a_fetched_benchmark(exported, downloads):
    """With the benchmark's corpus where `evals fetch` puts it, every figure recomputes and the file is verified."""
    fetched_as(downloads, "locomo")
    result = evals("verify", exported[2].parent.parent.parent)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"verified: {exported[2]}: locomo: ") and "figures recomputed" in result.output


def test_verify_without_the_corpus_says_what_it_could_not_check(exported):
    """With the corpus nowhere at hand the file is unverified, not bad, and the line names the checks not run."""
    result = evals("verify", exported[2])
    assert result.exit_code == 0, result.output
    assert "unverified:" in result.output and "not found; schema ok" in result.output and "figures" in result.output


def test_verify_warns_that_a_given_corpus_is_no_pinned_benchmark(exported):
    """A corpus given with --corpus supplies the labels, the figures are checked, and the file stays unverified."""
    result = evals("verify", exported[2], "--corpus", CORPUS)
    assert result.exit_code == 0, result.output
    assert "unverified:" in result.output and "is not a pinned benchmark" in result.output
    assert "figures recomputed" in result.output


def test_verify_rejects_a_digest_that_is_not_its_pinned_benchmarks(exported, downloads):
    """A file naming a fetched release whose corpus has another digest is bad, the digest named."""
    fetched_as(downloads, "locomo")
    path = tampered(exported[2], lambda d: d["corpus"].update(pin="locomo", digest="0" * 64))
    result = evals("verify", path)
    assert result.exit_code == 1
    assert f"bad: {path}: corpus.digest: 000000000000… is not 'locomo'" in result.output


def test_verify_rejects_a_changed_figure(exported):
    """A figure edited in the file no longer matches its recomputation: bad, the figure named."""
    path = tampered(exported[2], lambda d: d["figures"]["turn.recall_any@1"].update(value=0.123))
    result = evals("verify", path, "--corpus", CORPUS)
    assert result.exit_code == 1
    assert f"bad: {path}: figure turn.recall_any@1: value is 0.123 in the file" in result.output


def test_verify_rejects_a_ranking_naming_a_turn_outside_the_conversation(exported):
    """A ranked turn that is no earlier turn of its conversation is bad, the point named."""

    def change(document):
        next(p for p in document["points"] if p["turns"])["turns"][0] = 999

    path = tampered(exported[2], change)
    result = evals("verify", path, "--corpus", CORPUS)
    assert result.exit_code == 1
    assert "turn 999 is not an earlier turn of the conversation" in result.output


def test_verify_rejects_benchmark_text_inside_a_file(exported):
    """A question of the corpus carried in any field of the file is bad, the field named."""
    question = next(t.test_at.question for c in load_corpus(CORPUS).conversations for t in c.turns if t.test_at)
    path = tampered(exported[2], lambda d: d["system"]["configuration"].update(note=question))
    result = evals("verify", path, "--corpus", CORPUS)
    assert result.exit_code == 1
    assert f"bad: {path}: system.configuration.note: benchmark text" in result.output


def test_verify_names_the_field_a_file_breaks_the_schema_in(exported):
    """A field of the wrong type is bad, its path named by the schema check."""
    path = tampered(exported[2], lambda d: d.update(k="ten"))
    result = evals("verify", path)
    assert result.exit_code == 1
    assert f"bad: {path}: schema: k:" in result.output


def test_import_of_a_board_file_gives_back_the_same_figures(exported, tmp_path):
    """A board file imported with its corpus gives a run with every figure of the original run."""
    store, run_id, path = exported
    other = tmp_path / "other.duckdb"
    assert f"imported run {run_id}" in evals_output("import", path, "--corpus", CORPUS, "--store", other)
    with Store.open(store, read_only=True) as a, Store.open(other, read_only=True) as b:
        original, imported = a.get_summary(run_id).metrics, b.get_summary(run_id).metrics
    assert original.keys() == imported.keys()
    for name, value in original.items():
        assert imported[name].n == value.n, name
        assert imported[name].value == pytest.approx(value.value, abs=1e-9), name


def test_import_refuses_a_board_file_whose_corpus_is_not_at_hand(exported, tmp_path):
    """Without the corpus the digest names, the import says how to get it and stores nothing."""
    result = evals("import", exported[2], "--store", tmp_path / "other.duckdb")
    assert result.exit_code == 1
    assert "is not among the fetched benchmarks" in result.output and "--corpus DIR" in result.output


@pytest.mark.slow
def test_board_file_of_a_run_with_answers_holds_verdicts_and_no_answer_text(answers_store, downloads, tmp_path):
    """A judged run's board file has each point's verdict but no answer, verifies, and imports with its figures."""
    from helpers.stores import SITE_CORPUS

    with Store.open(answers_store, read_only=True) as opened:
        run = opened.runs(strategy="recency")[0]
        answers = [a.answer for c in opened.get_run(run.run_id).answers.points for a in c]
    evals_output("export", run.run_id, "--store", answers_store, "--board", tmp_path / "board")
    path = next((tmp_path / "board").rglob("*.json"))
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["answers"]["protocol"] == "harness"
    assert all(p["answer"]["verdict"] in ("correct", "wrong", "unparsed") for p in document["points"])
    assert not set(strings(document)) & set(answers)
    result = evals("verify", path, "--corpus", SITE_CORPUS)
    assert result.exit_code == 0 and "not a pinned benchmark" in result.output, result.output
    other = tmp_path / "other.duckdb"
    evals_output("import", path, "--corpus", SITE_CORPUS, "--store", other)
    with Store.open(other, read_only=True) as opened:
        imported = opened.get_summary(run.run_id).metrics
    assert imported.keys() == run.metrics.keys()
    for name, value in run.metrics.items():
        assert (imported[name].n, imported[name].value) == (value.n, pytest.approx(value.value, abs=1e-9)), name


def test_board_file_of_a_run_on_a_fetched_corpus_names_its_release(downloads, tmp_path):
    """A run on the corpus `evals fetch` imported records that release as the file's pin, and verifies against it."""
    fetched_as(downloads, "locomo")
    store = tmp_path / "results.duckdb"
    run_id = run_id_of(evals_output("run", "--runner", "recency", "--corpus", downloads / "corpora" / "locomo", "--store", store))
    evals_output("export", run_id, "--store", store, "--board", tmp_path / "board")
    path = tmp_path / "board" / "locomo" / "recency" / f"{run_id}.json"
    assert json.loads(path.read_text(encoding="utf-8"))["corpus"]["pin"] == "locomo"
    assert evals_output("verify", path).startswith(f"verified: {path}: locomo: ")


# -- a failed run and declared facts ------------------------------------------------------------------


@pytest.fixture
def failed_file(tmp_path: Path, downloads: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """(run id, board file) of the failing plug-in's failed run on sessions_corpus (tests/plugins/declaring_strategy.py)."""
    from helpers import PLUGINS

    monkeypatch.syspath_prepend(str(PLUGINS))
    store = tmp_path / "failed.duckdb"
    line = evals("run", "--runner", "declaring_strategy:FAILING", "--corpus", CORPUS, "--store", store).output
    run_id = line.rstrip().rstrip(")").rsplit(" ", 1)[1]
    evals_output("export", run_id, "--store", store, "--board", tmp_path / "failed-board")
    return run_id, tmp_path / "failed-board" / "sessions_corpus" / "failing" / f"{run_id}.json"


def test_a_failed_run_is_a_board_file_with_its_reason_and_no_figure(failed_file, downloads):
    """A failed run exports as a board file saying why, with its declared facts, no figure and no point; verify
    checks it against the fetched benchmark and calls it a failed run."""
    run_id, path = failed_file
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["failed"].startswith("strategy failing: retrieve(question, k=5) raised RuntimeError")
    assert (document["figures"], document["points"], document["tuned_on"], document["writes_with_llm"]) == (
        {},
        [],
        ["locomo"],
        True,
    )
    fetched_as(downloads, "locomo")
    result = evals("verify", path)
    assert result.exit_code == 0 and result.output.startswith(f"verified: {path}: locomo: a failed run, no figure"), result.output


def test_a_failed_board_file_imports_as_a_failed_run(failed_file, tmp_path):
    """`evals import` of a failed run's file keeps it as a failed run, never a run with figures."""
    run_id, path = failed_file
    other = tmp_path / "other.duckdb"
    assert f"imported failed run {run_id}" in evals_output("import", path, "--corpus", CORPUS, "--store", other)
    with Store.open(other, read_only=True) as store:
        found = store.get_failed(run_id)
        assert store.run_count() == 0 and found is not None
    assert (found.strategy, found.k, found.tuned_on, found.writes_with_llm) == ("failing", 5, ["locomo"], True)


def test_a_failed_board_file_with_a_figure_is_refused(failed_file):
    """A file saying the run failed and carrying a figure is bad: a failure is never a score."""
    _, path = failed_file
    path = tampered(path, lambda d: d["figures"].update({"recall": {"value": 0.0, "n": 4, "low": None, "high": None}}))
    result = evals("verify", path, "--corpus", CORPUS)
    assert result.exit_code == 1 and "a failed run has no figures and no points" in result.output


def test_declared_facts_travel_in_a_board_file(exported, tmp_path):
    """A submitted file declaring tuned_on and writes_with_llm imports with them, and they stay out of the figures."""
    store, run_id, path = exported
    path = tampered(path, lambda d: d.update(tuned_on=["locomo"], writes_with_llm=True))
    assert evals("verify", path, "--corpus", CORPUS).exit_code == 0
    other = tmp_path / "declared.duckdb"
    evals_output("import", path, "--corpus", CORPUS, "--store", other)
    with Store.open(other, read_only=True) as opened:
        summary = opened.get_summary(run_id)
    assert (summary.tuned_on, summary.writes_with_llm) == (["locomo"], True)


# -- a strategy asked once per cutoff, whose records hold several turns (mempalace's drawers) ------------------


def test_a_per_cutoff_run_of_records_holding_several_turns_exports_and_verifies(tmp_path, downloads, monkeypatch):
    """A run of a strategy asked once per cutoff whose records are whole sessions exports, for each point, the
    ranking its records at k come from, with one token count and one group of held turns per rank; the file
    verifies (every figure the judge computes from it is the run's) and imports with the run's figures."""
    from helpers import PLUGINS

    monkeypatch.syspath_prepend(str(PLUGINS))
    store = tmp_path / "results.duckdb"
    # At k=2 its records are the 2 newest sessions; at its deepest cutoff, all 3, oldest first.
    run = evals_output("run", "--runner", "session_documents:PER_CUTOFF", "--k", 2, "--corpus", CORPUS, "--store", store)
    run_id = run_id_of(run)
    evals_output("export", run_id, "--store", store, "--board", tmp_path / "board")
    (path,) = (tmp_path / "board").rglob("*.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["cutoff_rule"] == "per_cutoff"
    held = [p for p in document["points"] if p.get("held")]
    assert held and any(len(group) > 1 for p in held for group in p["held"])
    assert all(len(p["turns"]) == len(p["tokens"]) == len(p["held"]) for p in held)
    result = evals("verify", path, "--corpus", CORPUS)
    assert result.exit_code == 0 and "figures recomputed" in result.output, result.output
    other = tmp_path / "other.duckdb"
    evals_output("import", path, "--corpus", CORPUS, "--store", other)
    with Store.open(store, read_only=True) as a, Store.open(other, read_only=True) as b:
        original, imported = a.get_summary(run_id).metrics, b.get_summary(run_id).metrics
    for name in ("evidence_recall_any", "evidence_recall_all", "tokens_per_test_point"):
        assert imported[name].value == pytest.approx(original[name].value, abs=1e-9), name
