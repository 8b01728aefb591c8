"""Records that hold several turns: a memory of whole sessions is credited by the turns each record
names, at turn and session level, stored and read back as it was; text-only records are matched as before.

The strategy is tests/plugins/session_documents.py (one record per session, newest first) over
tests/fixtures/sessions_corpus (s1: turns 0-3, s2: 4-7, s3: 8-11; questions at turns 12, 13, 14, each
added after it is asked, with no session). Its rankings:

* TP1 (turn 12), evidence turns {1, 9} (sessions s1, s3): [s3, s2, s1].
* TP2 (turn 13), evidence turns {4, 6, 11} (sessions s2, s3): [turn 12, s3, s2, s1].
* TP3 (turn 14, unanswerable), evidence turns {0, 2} (s1): [turn 13, turn 12, s3, s2, s1].
"""

from __future__ import annotations

import math
import sys

import pytest
from helpers import FIXTURES, PLUGINS
from helpers.results import as_stored
from helpers.stores import CLEAN
from helpers.strategies import KeepsTurns

from evals.errors import EvalsError
from evals.judge.metrics import retrieval_metrics
from evals.judge.retrieval import point_value
from evals.model.tokens import TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store
from evals.strategies import Record, Registry, StrategySpec
from evals.strategies.contract import check_strategy, run_checks

CORPUS = FIXTURES / "sessions_corpus"
sys.path.insert(0, str(PLUGINS))
import session_documents  # noqa: E402


def dcg(*ranks: int) -> float:
    return sum(1 / math.log2(rank + 1) for rank in ranks)


def run_of(strategy: str = "session_documents", cutoffs=(1, 3), k: int = 3, **options):
    registry = Registry([])
    registry._loaded["session_documents"] = session_documents.SPEC  # noqa: SLF001
    config = RunConfig(strategy=strategy, corpus=CORPUS, cutoffs=cutoffs, k=k, options=options)
    return evaluate(config, registry=registry, cache=None)


def test_a_session_record_is_credited_with_the_evidence_turns_it_holds():
    """At turn level, one session record holding an evidence turn is a hit: recall_any@1 of TP1 is 1."""
    point = run_of().run.conversations[0].test_points[0]
    assert point_value(point, "recall_any", "turn", 1, "prefix") == 1.0
    assert point_value(point, "recall_frac", "turn", 1, "prefix") == 0.5  # turn 9 (s3) of {1, 9}


def test_one_record_can_retrieve_several_evidence_turns():
    """TP2's evidence turns 4 and 6 are both in session s2's record: recall_all@3 is 1."""
    point = run_of().run.conversations[0].test_points[1]
    assert point_value(point, "recall_all", "turn", 3, "prefix") == 1.0


def test_ndcg_credits_each_evidence_turn_at_its_record_rank_and_is_capped_at_1():
    """TP2 at 3: turns 11 at rank 2, 4 and 6 at rank 3 (graded gains) over the ideal of three; TP1's perfect
    session ranking cannot pass 1."""
    points = run_of().run.conversations[0].test_points
    expected = (dcg(2) + 2 * dcg(3)) / dcg(1, 2, 3)
    assert point_value(points[1], "ndcg_any", "turn", 3, "prefix") == pytest.approx(expected, abs=1e-12)
    assert point_value(points[0], "ndcg_any", "session", 3, "prefix") == pytest.approx(dcg(1, 3) / dcg(1, 2), abs=1e-12)


def test_session_level_reads_the_sessions_a_record_holds():
    """At session level a record is its sessions; a record with none (a question's turn) takes no rank."""
    point = run_of().run.conversations[0].test_points[1]
    assert point.ranked_held_sessions[:2] == [[], ["s3"]]
    assert point_value(point, "recall_any", "session", 1, "prefix") == 1.0  # s3 first
    assert point_value(point, "recall_all", "session", 3, "prefix") == 1.0


def test_evidence_hits_count_the_turns_a_record_holds():
    """The run's evidence recall (the headline's evidence_any/all) credits every turn a record holds."""
    scores = run_of().scores.points[0]
    assert (scores[0].evidence_any, scores[0].evidence_all) == (True, True)  # turns 9 (s3) and 1 (s1) at k=3
    assert (scores[1].evidence_any, scores[1].evidence_all) == (True, True)  # 11 in s3, 4 and 6 in s2
    assert (scores[2].evidence_any, scores[2].evidence_all) == (False, False)  # s1 is rank 5, past k


def test_tokens_are_counted_on_the_record_text():
    """A session record costs the tokens of its text, the whole session, not of one turn."""
    evaluation = run_of(cutoffs=(), k=1)
    record = evaluation.run.conversations[0].test_points[0].retrieved_records[0]
    assert evaluation.scores.points[0][0].record_tokens == TokenCounter().counts([record])


def test_text_only_session_records_are_matched_by_text_as_before():
    """The same records naming no turns are matched by their text: a session's text is no turn, so no credit."""
    point = run_of(name_turns=False).run.conversations[0].test_points[0]
    assert point.ranked_held is None
    assert point_value(point, "recall_any", "turn", 3, "prefix") == 0.0


def test_the_store_keeps_the_turns_each_record_holds(tmp_path):
    """A run of session records reads back from the store with every record's turns and the same metrics."""
    evaluation = run_of()
    with Store.open(tmp_path / "s.duckdb") as store:
        run_id = store.append(evaluation, CLEAN)
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        stored = store.get_run(run_id)
    assert stored.run == as_stored(evaluation.run)
    assert retrieval_metrics(stored.run) == retrieval_metrics(evaluation.run)
    assert stored.summary.metric("turn.recall_all@3").value == 2 / 3  # TP1 and TP2; TP3's s1 is past k


class LaterTurn:
    name = "later_turn"

    def add(self, role: str, content: str, *, turn: int) -> None:
        pass

    def retrieve(self, query: str, k: int) -> list[Record]:
        return [Record("x", turns=(0, 99))]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return []

    def reset(self) -> None:
        pass


def test_a_record_naming_a_later_turn_among_its_turns_is_refused():
    """Every turn a record names must be an earlier one, as its one turn must."""
    registry = Registry([])
    registry._loaded["later_turn"] = StrategySpec(name="later_turn", build=lambda o, c: LaterTurn())  # noqa: SLF001
    with pytest.raises(EvalsError, match="source turn 99"):
        evaluate(RunConfig(strategy="later_turn", corpus=CORPUS), registry=registry, cache=None)


# -- evals check-strategy: a record holds the turns it names -------------------------------------


class Mislabelled(KeepsTurns):
    """Records of one turn's text, each naming the turn after it: credit for turns it does not hold."""

    name = "mislabelled"

    def retrieve(self, query: str, k: int) -> list[Record]:
        last = len(self.turns) - 1
        return [Record(text, turns=(i, min(i + 1, last))) for i, text in enumerate(self.turns[:k])]

    def context_for(self, query: str, k: int) -> list[dict[str, str]]:
        return []


def _registry_with(spec: StrategySpec) -> Registry:
    registry = Registry([])
    registry._loaded[spec.name] = spec  # noqa: SLF001
    return registry


def test_check_strategy_passes_session_records_holding_their_turns():
    """A record whose text is the whole session it names keeps the contract."""
    assert check_strategy("session_documents:SPEC") == []


def test_check_strategy_fails_a_record_naming_a_turn_its_text_lacks():
    """A record naming a turn its text does not contain fails "records hold the turns they name"."""
    spec = StrategySpec(name="mislabelled", build=lambda o, c: Mislabelled())
    problems = {c.name: c.problem for c in run_checks("mislabelled", registry=_registry_with(spec)) if c.problem}
    assert "does not contain that turn" in problems["records hold the turns they name"], problems


def test_check_strategy_lets_derived_records_name_turns_they_rewrote():
    """A strategy declaring derived_records=True (rewritten facts) is not held to its texts."""
    spec = StrategySpec(name="mislabelled", build=lambda o, c: Mislabelled(), derived_records=True)
    problems = [c.name for c in run_checks("mislabelled", registry=_registry_with(spec)) if c.problem]
    assert "records hold the turns they name" not in problems


def test_a_run_of_session_records_moves_between_stores(tmp_path):
    """`evals export` then `evals import` keeps the turns each record holds, and the same test point rows."""
    import duckdb
    from helpers.cli import evals_output as evals

    first, second, exported = tmp_path / "a.duckdb", tmp_path / "b.duckdb", tmp_path / "run.json"
    output = evals("run", "--runner", "session_documents:SPEC", "--corpus", CORPUS, "--store", first, "--no-cache")
    run_id = output.split()[1].rstrip(":")
    evals("export", run_id, "--store", first, "--output", exported)
    assert f"imported run {run_id}" in evals("import", exported, "--store", second)
    rows = []
    for store in (first, second):
        with duckdb.connect(str(store), read_only=True) as con:
            rows.append(con.execute("SELECT * FROM test_points WHERE run_id = ? ORDER BY ALL", [run_id]).fetchall())
    assert rows[0] == rows[1]
    with Store.open(second, read_only=True) as store:
        assert store.get_run(run_id).run.conversations[0].test_points[0].ranked_held[0] == [8, 9, 10, 11]


@pytest.fixture(scope="module")
def site_of_sessions(tmp_path_factory):
    """A site built from a store holding one session-document run and one recency run on the same corpus."""
    from evals.site import build_site

    folder = tmp_path_factory.mktemp("held")
    with Store.open(folder / "s.duckdb") as store:
        store.append(run_of(k=3), CLEAN)
        store.append(evaluate(RunConfig(strategy="recency", corpus=CORPUS, k=3, cutoffs=(1, 3)), cache=None), CLEAN)
    build_site(folder / "s.duckdb", folder / "site")
    return folder / "site"


def test_the_drill_down_shows_the_turns_each_record_holds(site_of_sessions):
    """A session record's drill-down entry names the turns it holds as runs (8–11, both ends linked), and is marked evidence."""
    from html.parser import HTMLParser

    pages = [p for p in site_of_sessions.rglob("*.html") if "holds turns" in p.read_text(encoding="utf-8")]
    assert pages, "no drill-down names the turns a record holds"

    class Items(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.items: list[tuple[str, str]] = []
            self.depth = 0

        def handle_starttag(self, tag, attrs):
            if tag == "li" and self.depth == 0 and dict(attrs).get("value"):
                self.items.append((dict(attrs).get("class") or "", ""))
                self.depth = 1
            elif self.depth and tag == "li":
                self.depth += 1

        def handle_endtag(self, tag):
            if tag == "li" and self.depth:
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                cls, text = self.items[-1]
                self.items[-1] = (cls, text + data)

    parser = Items()
    parser.feed(pages[0].read_text(encoding="utf-8"))
    held = [(cls, text) for cls, text in parser.items if text.startswith("holds turns 8\u201311")]
    assert held and "evi" in held[0][0]


def test_the_compare_data_names_the_turns_each_record_holds(site_of_sessions):
    """The compare pages' run data gives a session record as [its start, the turns it holds]: its start's place in
    the run's ``texts`` (each start written once), the turns as runs [first, last]."""
    import json

    for path in (site_of_sessions / "runs").glob("*.data.js"):
        data = json.loads(path.read_text(encoding="utf-8").split("] = ", 1)[1].rstrip(";\n"))
        first = data["conversations"]["sessions"]["points"][0][2][0]
        if isinstance(first, list):
            assert first[1] == [[8, 11]] and data["texts"][first[0]].startswith("turn 8 of session s3")
            assert len(data["texts"]) == len(set(data["texts"]))
            return
    raise AssertionError("no run's compare data holds a record of several turns")


def test_the_site_flags_only_a_run_that_returned_everything_it_held(site_of_sessions):
    """The session-document run at k=3 returned all three sessions it held at its first test point: its leaderboard
    row and run page carry the badge with the count; recency at k=3, which holds more turns than it returns, does not."""
    read = [site_of_sessions / "index.html", *(site_of_sessions / "runs").glob("*.html")]
    pages = {p: p.read_text(encoding="utf-8") for p in read}
    flagged = [p.name for p, text in pages.items() if "returns all at 1 of 3" in text]
    assert "index.html" in flagged and len(flagged) >= 2, flagged
    board = pages[site_of_sessions / "index.html"]
    badges = [board[: at].rsplit("<a ", 1)[-1] for at in range(len(board)) if board.startswith("returns all at", at)]
    assert badges and all("session_" in link and "recency" not in link for link in badges)


def test_the_site_shows_budget_figures_on_leaderboards_and_run_pages(site_of_sessions):
    """The leaderboard and each run page show recall within 1,024 tokens beside recall at k."""
    pages = [site_of_sessions / "index.html", *(site_of_sessions / "runs").glob("*.html")]
    assert all("recall_any @1,024 tokens" in p.read_text(encoding="utf-8") for p in pages)


def _longmemeval_ndcg(relevances: list[int], ideal: list[int], k: int) -> float:
    """LongMemEval's src/retrieval/eval_utils.py (9e0b455f): dcg = rel[0] + sum(rel[i] / log2(i + 1)), i >= 1."""

    def dcg(values: list[int]) -> float:
        values = values[:k]
        return values[0] + sum(v / math.log2(i + 1) for i, v in enumerate(values[1:], start=1)) if values else 0.0

    return dcg(relevances) / dcg(sorted(ideal, reverse=True)) if dcg(sorted(ideal, reverse=True)) else 0.0


def test_session_documents_score_as_longmemevals_session_retrieval():
    """A record per session is LongMemEval's session-granularity unit: ndcg_any_lme at session level equals its
    ndcg over the corpus of sessions (TP1: [s3, s2, s1], evidence s1 and s3)."""
    point = run_of().run.conversations[0].test_points[0]
    published = _longmemeval_ndcg([1, 0, 1], [1, 0, 1], 3)
    assert point_value(point, "ndcg_any_lme", "session", 3, "prefix") == pytest.approx(published, abs=1e-12)
