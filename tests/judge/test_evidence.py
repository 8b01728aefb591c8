"""Evidence turns, categories, unanswerable test points and unrecorded turns.

Numbers on tests/fixtures/evidence_corpus, worked out by hand. 01_family has a
six-turn history (turns 0-5) and three questions at turns 6, 7, 8 with
``record: false``; 02_door plants a code at turn 0, repeats the keyword in turn
3 (not the evidence) and asks at turn 4.

recency, k=2: every question of 01_family sees turns 4, 5 (the questions are
never recorded). Turn 6 (single-hop, evidence [0], keyword Biscuit): miss,
evidence none. Turn 7 (multi-hop, evidence [2, 4], keywords Porto/Lyon): hit
on "Lyon", evidence any but not all. Turn 8: unanswerable, kept apart.
02_door turn 4 retrieves turns 2, 3: a hit through turn 3's "7781", but the
evidence turn 0 is not retrieved. So recall 2/3, evidence any 1/3, all 0/3.
"""

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.results import categories

from evals.cli import cli
from evals.model.corpus import Conversation, check_corpus, load_corpus
from evals.model.provenance import Provenance
from evals.model.turn_refs import TurnLookup, record_turns
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store
from evals.views.exchange import export_document, read_export
from evals.views.report import legacy_json, stored_legacy_json

EVIDENCE = FIXTURES / "evidence_corpus"
CLEAN = Provenance(commit="a" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")


def run(runner: str, k: int = 2):
    return evaluate(RunConfig(strategy=runner, corpus=EVIDENCE, k=k))


def metrics(runner: str) -> dict:
    result = run(runner)
    return legacy_json(result.run, result.scores)["metrics"]


# -- old corpora are untouched ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "digest"),
    [
        ("corpus_small", "5768ebba5097e2045d6d4d364ffd5c0a27d27fc3d3781f1f8300118179aaa7c4"),
        ("golden", "68d741bbec4e1883a740359d23cdd63337d876f6d94cc286ee2277344d99447a"),
    ],
)
def test_old_corpus_digest_is_unchanged(folder, digest):
    """Corpora that do not use the new fields keep the digest they had before the fields existed."""
    assert load_corpus(FIXTURES / folder).digest == digest


def test_old_corpus_json_has_no_evidence_keys():
    """Without the new corpus fields, the result JSON has no evidence, category or unanswerable
    blocks, and its test points have exactly the seed's keys."""
    result = evaluate(RunConfig(strategy="full_history", corpus=FIXTURES / "golden"))
    document = legacy_json(result.run, result.scores)
    assert {"recall_at_k", "tokens"} <= set(document["metrics"])
    assert not {"evidence_recall_at_k", "unanswerable", "by_category"} & set(document["metrics"])
    keys = {key for c in document["conversations"] for tp in c["test_points"] for key in tp}
    assert keys == {"turn_index", "question", "expected_fact", "expected_keywords", "retrieved_records"}


# -- validation ------------------------------------------------------------------------------


def problems_for(tmp_path: Path, mutate) -> list[str]:
    data = json.loads((EVIDENCE / "01_family.json").read_text())
    mutate(data)
    (tmp_path / f"{data['id']}.json").write_text(json.dumps(data))
    return [str(p) for p in check_corpus(tmp_path)[1]]


def test_evidence_turn_at_or_after_the_test_point_is_refused(tmp_path):
    """An evidence turn must come before its test point; the error names file and JSON path."""
    got = problems_for(tmp_path, lambda d: d["turns"][6]["test_at"].update(evidence_turns=[0, 6]))
    assert got == [
        f"{tmp_path / '01_family.json'}: turns[6].test_at.evidence_turns[1]: "
        "turn 6 is not an earlier turn; evidence must be one of turns 0..5"
    ]


def test_negative_evidence_turn_is_refused(tmp_path):
    """A negative index is not a turn."""
    got = problems_for(tmp_path, lambda d: d["turns"][7]["test_at"].update(evidence_turns=[-1]))
    assert got == [
        f"{tmp_path / '01_family.json'}: turns[7].test_at.evidence_turns[0]: "
        "turn -1 is not an earlier turn; evidence must be one of turns 0..6"
    ]


def test_repeated_evidence_turn_is_refused(tmp_path):
    """Each evidence turn is listed once."""
    got = problems_for(tmp_path, lambda d: d["turns"][7]["test_at"].update(evidence_turns=[2, 2]))
    assert got == [f"{tmp_path / '01_family.json'}: turns[7].test_at.evidence_turns[1]: turn 2 is listed twice"]


def test_unrecorded_evidence_turn_is_refused(tmp_path):
    """A turn never added to memory cannot be evidence."""
    got = problems_for(tmp_path, lambda d: d["turns"][7]["test_at"].update(evidence_turns=[6]))
    assert got == [
        f"{tmp_path / '01_family.json'}: turns[7].test_at.evidence_turns[0]: turn 6 has record: false, so memory never holds it"
    ]


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("answerable", "no", "turns[8].test_at.answerable: expected true or false, got string"),
        ("evidence_turns", ["3"], "turns[8].test_at.evidence_turns[0]: expected an integer, got string"),
        ("category", 5, "turns[8].test_at.category: expected a string, got int"),
    ],
)
def test_wrongly_typed_new_fields_are_named(tmp_path, where, value, expected):
    """A new field of the wrong type is reported with its JSON path and what was expected."""
    got = problems_for(tmp_path, lambda d: d["turns"][8]["test_at"].update({where: value}))
    assert got == [f"{tmp_path / '01_family.json'}: {expected}"]


def test_wrongly_typed_record_flag_is_named(tmp_path):
    """``record`` must be a boolean."""
    got = problems_for(tmp_path, lambda d: d["turns"][1].update(record="false"))
    assert got == [f"{tmp_path / '01_family.json'}: turns[1].record: expected true or false, got string"]


# -- play-through and numbers ------------------------------------------------------------------


def test_unrecorded_turns_never_reach_memory():
    """A question with record: false is not in any later question's memory."""
    records = [tp.retrieved_records for tp in run("full_history").run.conversations[0].test_points]
    history = [t.content for t in load_corpus(EVIDENCE).conversations[0].turns[:6]]
    assert records == [history, history, history]


def test_recency_recall_counts_answerable_points_only():
    """recency k=2: 2 hits of 3 answerable test points; the unanswerable one is neither."""
    recall = metrics("recency")["recall_at_k"]
    assert (recall["hits"], recall["total"]) == (2, 3)
    assert recall["per_conversation"]["01_family"] == {"hits": 1, "total": 2, "recall": 0.5}


def test_recency_evidence_recall_by_turn_identity():
    """Evidence recall any 1/3 and all 0/3: 02_door's keyword hit comes from a turn that is not its evidence."""
    evidence = metrics("recency")["evidence_recall_at_k"]
    assert (evidence["any"]["hits"], evidence["any"]["total"]) == (1, 3)
    assert (evidence["all"]["hits"], evidence["all"]["total"]) == (0, 3)


def test_full_history_evidence_recall_is_complete():
    """full_history retrieves every earlier recorded turn, so every evidence turn: 3/3 any and all."""
    evidence = metrics("full_history")["evidence_recall_at_k"]
    assert (evidence["any"]["hits"], evidence["all"]["hits"], evidence["all"]["total"]) == (3, 3, 3)


def test_unanswerable_points_are_reported_apart():
    """The unanswerable block counts them, with what was retrieved and its cost."""
    block = metrics("recency")["unanswerable"]
    assert block["count"] == 1
    assert block["points"] == [
        {"conversation_id": "01_family", "turn_index": 8, "question": "What is my cat called?", "record_count": 2}
    ]


def test_category_breakdown_numbers():
    """Per category: (hits, total, evidence any hits, evidence all hits, unanswerable); null category last."""
    assert categories(metrics("recency")) == [
        ("adversarial", 0, 0, None, None, 1),
        ("multi-hop", 1, 1, 1, 0, 0),
        ("single-hop", 0, 1, 0, 0, 0),
        (None, 1, 1, 0, 0, 0),
    ]


def test_test_point_json_carries_the_new_fields():
    """A test point with evidence shows its evidence and retrieved turns; an unanswerable one says so."""
    result = run("recency")
    points = legacy_json(result.run, result.scores)["conversations"][0]["test_points"]
    assert (points[1]["evidence_turns"], points[1]["retrieved_turns"], points[1]["category"]) == ([2, 4], [5, 4], "multi-hop")
    assert points[2]["answerable"] is False and "evidence_turns" not in points[2]


# -- the mapping from records to turns ---------------------------------------------------------


def lookup(*contents: str, unrecorded: tuple[int, ...] = ()) -> TurnLookup:
    turns = [{"role": "user", "content": c, "record": i not in unrecorded} for i, c in enumerate(contents)]
    return TurnLookup(Conversation(id="c", description="d", turns=turns))


def test_duplicate_text_is_the_most_recent_turn():
    """A record whose text several turns share is the most recent of them."""
    assert record_turns(["A"], lookup("A", "B", "A", "C", "D"), 5) == [2]


def test_two_equal_records_are_two_turns():
    """Equal records at one test point are given distinct turns, newest first."""
    assert record_turns(["A", "A"], lookup("A", "B", "A", "C"), 4) == [2, 0]


def test_turns_at_or_after_the_test_point_are_not_candidates():
    """Only turns before the test point can be a record."""
    assert record_turns(["A"], lookup("A", "B", "A"), 2) == [0]


def test_unrecorded_turns_are_not_candidates():
    """A record equal to an unrecorded turn's text is that text's recorded turn, or no turn."""
    turns = lookup("A", "B", "A", "Q", unrecorded=(2, 3))
    assert record_turns(["A", "Q"], turns, 4) == [0, None]


def test_a_window_of_the_last_turns_is_those_turns():
    """Records equal to the last n turns in order are those turns, even when earlier turns read the same."""
    assert record_turns(["A", "B"], lookup("A", "B", "A", "B"), 4) == [2, 3]


# -- the store ---------------------------------------------------------------------------------


def test_stored_run_gives_the_same_json(store_path):
    """A run read back from the store has the same evidence, category and unanswerable blocks."""
    result = run("recency")
    with Store.open(store_path) as store:
        run_id = store.append(result, CLEAN)
        stored = store.get_run(run_id)
        assert stored_legacy_json(stored) == legacy_json(result.run, result.scores, None, stored.summary.metrics)


def test_category_results_view(store_path):
    """The category_results view gives per-category numbers for ad-hoc SQL."""
    with Store.open(store_path) as store:
        run_id = store.append(run("recency"), CLEAN)
    con = duckdb.connect(str(store_path), read_only=True)
    rows = con.execute(
        "SELECT category, hits, total, evidence_any_hits, evidence_all_hits, evidence_total, unanswerable "
        "FROM category_results WHERE run_id = ? ORDER BY category NULLS LAST",
        [run_id],
    ).fetchall()
    con.close()
    assert rows == [
        ("adversarial", 0, 0, 0, 0, 0, 1),
        ("multi-hop", 1, 1, 1, 0, 1, 0),
        ("single-hop", 0, 1, 0, 0, 1, 0),
        (None, 1, 1, 0, 0, 1, 0),
    ]


def test_summary_counts_answerable_points(store_path):
    """The runs row holds recall over answerable test points."""
    with Store.open(store_path) as store:
        run_id = store.append(run("recency"), CLEAN)
        summary = store.get_summary(run_id)
    assert (summary.hits, summary.total) == (2, 3)


def test_export_import_round_trip_keeps_unrecorded_turns(store_path, tmp_path):
    """An exported run with unrecorded turns and evidence imports into another store unchanged."""
    with Store.open(store_path) as store:
        run_id = store.append(run("recency"), CLEAN)
        document = export_document(store.get_run(run_id))
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))
    other = tmp_path / "other.duckdb"
    with Store.open(other) as store:
        store.write_records([read_export(path)])
        assert stored_legacy_json(store.get_run(run_id)) == {k: v for k, v in document.items() if k != "run"}
        assert store.get_run(run_id).unrecorded == {"01_family": [6, 7, 8]}


def test_import_refuses_altered_retrieved_turns(store_path, tmp_path):
    """retrieved_turns that do not follow from the records make the import fail, naming the point."""
    with Store.open(store_path) as store:
        document = export_document(store.get_run(store.append(run("recency"), CLEAN)))
    document["conversations"][0]["test_points"][0]["retrieved_turns"] = [0, 5]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))
    with pytest.raises(Exception, match="turn 6: retrieved_turns does not match the retrieved records"):
        read_export(path)


def test_leaderboard_by_category(store_path, tmp_path):
    """`evals leaderboard --by-category` prints one row per configuration and category."""
    with Store.open(store_path) as store:
        store.append(run("recency"), CLEAN)
    result = CliRunner().invoke(cli, ["leaderboard", "--by-category", "--store", str(store_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = [(r["category"], r["hits"], r["total"], r["evidence_any"], r["unanswerable"]) for r in json.loads(result.output)]
    assert rows == [
        ("adversarial", 0, 0, None, 1),
        ("multi-hop", 1, 1, 1.0, 0),
        ("single-hop", 0, 1, 0.0, 0),
        (None, 1, 1, 0.0, 0),
    ]


def test_corpus_without_categories_has_no_category_rows(store_path, corpus_small):
    """A run on a corpus without categories adds no --by-category rows."""
    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="recency", corpus=corpus_small)), CLEAN)
    result = CliRunner().invoke(cli, ["leaderboard", "--by-category", "--store", str(store_path), "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.output) == []


def test_copy_of_fixture_validates(tmp_path):
    """The fixture corpus itself is valid (and stays so when copied)."""
    shutil.copytree(EVIDENCE, tmp_path / "c")
    assert check_corpus(tmp_path / "c")[1] == []


def test_whole_recorded_history_is_those_turns():
    """Records that are every recorded turn in order, before unrecorded questions, are those turns."""
    turns = lookup("A", "B", "A", "Q1", "Q2", unrecorded=(3, 4))
    assert record_turns(["A", "B", "A"], turns, 5) == [0, 1, 2]


def test_compare_leaves_unanswerable_points_out(store_path):
    """Compare (paired by keyword hits) counts answerable points only: recency -> full_history gains turn 6, nothing else."""
    from evals.analysis.compare import compare_runs, hit_outcome

    with Store.open(store_path) as store:
        a = store.get_run(store.append(run("recency"), CLEAN))
        b = store.get_run(store.append(run("full_history"), CLEAN))
    comparison = compare_runs(a, b, hit_outcome)
    assert [(f.conversation_id, f.turn_index) for f in comparison.gained] == [("01_family", 6)]
    assert (len(comparison.lost), comparison.still_hit, comparison.still_missed) == (0, 2, 0)


def test_compare_pairs_evidence_when_asked(tmp_path):
    """compare_runs pairs the headline by default, here evidence recall (the corpus names evidence): full_history ->
    recency loses 2 of 3, as evidence_outcome says; paired by keyword hits it loses 1."""
    from evals.analysis.compare import compare_runs, evidence_outcome, hit_outcome

    with Store.open(tmp_path / "results.duckdb") as store:
        full = store.get_run(store.append(run("full_history"), CLEAN))
        recency = store.get_run(store.append(run("recency"), CLEAN))
    by_evidence = compare_runs(full, recency, evidence_outcome)
    assert (len(by_evidence.lost), len(by_evidence.gained), by_evidence.shared) == (2, 0, 3)
    assert all(flip.expected_fact for flip in by_evidence.lost)  # carried for reports
    assert len(compare_runs(full, recency, hit_outcome).lost) == 1
    headline = compare_runs(full, recency)
    assert (headline.lost, headline.gained, headline.shared) == (by_evidence.lost, by_evidence.gained, by_evidence.shared)
