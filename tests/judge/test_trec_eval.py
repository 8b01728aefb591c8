"""Our retrieval metrics against trec_eval (pytrec_eval), test point by test point, and ndcg_any_lme by hand.

How each metric maps to a trec_eval measure, with binary qrels (every evidence
item relevant, grade 1) and the ranking as a run whose scores fall with rank:

* ``recall_any@c`` is ``success_c`` (some relevant document in the top c);
* ``recall_frac@c`` is ``recall_c`` (relevant documents in the top c over all relevant);
* ``recall_all@c`` is ``recall_c == 1``;
* ``ndcg_any@c`` is ``ndcg_cut_c``.

trec_eval takes a run as a set of documents, so the ranks that hold no relevant
item for the first time (a record that is no turn, such as a summary; a turn
listed again) become documents of their own that no qrel names: they keep
their rank and are never relevant, which is our rule. A whole list
(full_history) is measured at its own length.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence

import pytest
import pytrec_eval  # the test extra's; a missing one fails here rather than skipping the comparison
from helpers import FIXTURES

from evals.judge.metrics import ScoredRun, compute_metrics
from evals.judge.retrieval import LEVELS, evidence_at, ndcg_any, ndcg_any_lme, point_values, retrieved_at, sessions_of
from evals.model.results import PREFIX, WHOLE_LIST, TestPointResult
from evals.run.evaluate import RunConfig, evaluate

TREC = {"recall_any": "success", "recall_frac": "recall", "ndcg_any": "ndcg_cut"}


def trec_values(evidence: frozenset[Hashable], items: Sequence[Hashable | None], depth: int) -> dict[str, float]:
    """trec_eval's success, recall and ndcg_cut at ``depth`` of ``items`` in rank order against ``evidence``."""
    qrels = {"q": {f"doc-{item}": 1 for item in evidence}}
    run: dict[str, float] = {}
    seen: set[Hashable] = set()
    for rank, item in enumerate(items, start=1):
        relevant_here = item is not None and item not in seen
        seen.add(item)
        # Scores fall with rank and never tie, so trec_eval's order is ours.
        run[f"doc-{item}" if relevant_here else f"filler-{rank}"] = float(len(items) - rank + 1)
    if not run:
        run["filler-0"] = 1.0  # trec_eval skips a query with no document; one non-relevant one changes nothing
    measures = {f"{measure}.{depth}" for measure in TREC.values()}
    found = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate({"q": run})["q"]
    return {name: found[f"{measure}_{depth}"] for name, measure in TREC.items()}


def assert_point_matches_trec_eval(point: TestPointResult, cutoffs: Sequence[int], rule: str) -> int:
    """Every (level, cutoff) value of the point equals trec_eval's; returns how many were compared."""
    ours = point_values(point, cutoffs, rule)
    compared = 0
    for level in LEVELS:
        evidence = evidence_at(point, level)
        if not evidence:
            assert not [key for key in ours if key[1] == level]
            continue
        for cutoff in cutoffs:
            items = retrieved_at(point, cutoff, rule, level)
            depth = len(items) if rule == WHOLE_LIST else cutoff
            if depth == 0:  # an empty whole list: no cutoff for trec_eval, and ours scores it 0
                assert all(ours[name, level, cutoff] == 0 for name in TREC)
                continue
            expected = trec_values(evidence, items, depth)
            where = (level, cutoff, point.turn_index)
            for name, value in expected.items():
                assert ours[name, level, cutoff] == pytest.approx(value, abs=1e-12), (name, *where)
            assert ours["recall_all", level, cutoff] == float(expected["recall_frac"] == 1.0), where
            compared += 1
    return compared


@pytest.mark.parametrize("corpus", ["sessions_corpus", "evidence_corpus"])
@pytest.mark.parametrize("strategy", ["recency", "bm25", "full_history", "summary_buffer"])
def test_fixture_runs_match_trec_eval_point_by_point(corpus, strategy):
    """On the fixture corpora every test point's recall_any, recall_all, recall_frac and ndcg_any at every level
    and cutoff equal trec_eval's (summary_buffer's summaries hold ranks; full_history is a whole list)."""
    result = evaluate(RunConfig(strategy=strategy, corpus=FIXTURES / corpus, cutoffs=(1, 2, 3, 5, 10)))
    run = result.run
    compared = sum(
        assert_point_matches_trec_eval(p, run.cutoffs, run.cutoff_rule) for c in run.conversations for p in c.test_points
    )
    assert compared > 0


def test_run_means_are_means_of_trec_eval_values():
    """A run's turn-level ndcg_any@3 and recall_frac@5 are the means over its test points of trec_eval's values."""
    result = evaluate(RunConfig(strategy="summary_buffer", corpus=FIXTURES / "sessions_corpus", cutoffs=(3, 5)))
    metrics = compute_metrics(ScoredRun(result.run, result.scores))
    points = [p for c in result.run.conversations for p in c.test_points if p.evidence_turns]
    for name, cutoff in (("ndcg_any", 3), ("recall_frac", 5)):
        values = [trec_values(evidence_at(p, "turn"), retrieved_at(p, cutoff, PREFIX, "turn"), cutoff)[name] for p in points]
        assert metrics[f"turn.{name}@{cutoff}"].value == pytest.approx(sum(values) / len(values), abs=1e-12)


def random_point(rng: random.Random, sessions_given: bool) -> TestPointResult:
    """A test point after ``turns`` turns in a few sessions, ranked with summaries (None) and repeated turns."""
    turns = rng.randint(1, 40)
    session_of = [f"s{t * rng.randint(2, 6) // turns}" for t in range(turns)]
    evidence = sorted(rng.sample(range(turns), rng.randint(1, min(5, turns))))
    ranked: list[int | None] = []
    for _ in range(rng.randint(0, 30)):
        roll = rng.random()
        if roll < 0.15:
            ranked.append(None)  # a summary, or any record that is no turn
        elif roll < 0.3 and ranked:
            ranked.append(rng.choice(ranked))  # a turn listed again
        else:
            ranked.append(rng.randrange(turns))
    own_sessions = sorted({rng.choice(session_of) for _ in range(rng.randint(1, 3))})
    return TestPointResult(
        turn_index=turns,
        question="q",
        expected_fact="f",
        expected_keywords=[],
        retrieved_records=[],
        evidence_turns=evidence,
        evidence_sessions=own_sessions if sessions_given else sessions_of(evidence, session_of),
        ranked_turns=ranked,
        ranked_sessions=[None if t is None else session_of[t] for t in ranked],
    )


@pytest.mark.parametrize("rule", [PREFIX, WHOLE_LIST])
def test_random_rankings_match_trec_eval_point_by_point(rule):
    """On 300 seeded random rankings with summaries and repeated turns, turn and session level, every value equals trec_eval's."""
    rng = random.Random(2101)
    compared = 0
    for number in range(300):
        point = random_point(rng, sessions_given=number % 2 == 0)
        cutoffs = sorted(set(rng.sample(range(1, 35), 4)))
        compared += assert_point_matches_trec_eval(point, cutoffs, rule)
    assert compared > 1000


# -- ndcg_any_lme: LongMemEval's formula, worked by hand ------------------------------------------
# LongMemEval (src/retrieval/eval_utils.py): dcg = rel[0] + sum(rel[i] / log2(i + 1) for i >= 1), zero-based i,
# over the first k; ndcg = dcg / dcg of the relevances sorted best first, cut at the same k.


def test_lme_ndcg_weighs_ranks_one_and_two_the_same():
    """Evidence at rank 2 of 2 scores 1 under LongMemEval (rel[1] / log2(2) = 1), 1/log2(3) under trec_eval."""
    assert ndcg_any_lme(frozenset({"a"}), ["x", "a"], 2) == 1.0
    assert ndcg_any(frozenset({"a"}), ["x", "a"], 2) == pytest.approx(1 / math.log2(3), abs=1e-12)


def test_lme_ndcg_of_two_evidence_items_at_ranks_two_and_four():
    """[x, a, y, b] at k=4: dcg = 0 + 1/log2(2) + 0 + 1/log2(4) = 1.5; ideal [1, 1] = 1 + 1 = 2; 0.75."""
    assert ndcg_any_lme(frozenset({"a", "b"}), ["x", "a", "y", "b"], 4) == 0.75


def test_lme_ndcg_ideal_is_cut_at_k():
    """Three evidence items, one at rank 1 of k=3: dcg 1; ideal 1 + 1 + 1/log2(3); a fourth item past k is cut off."""
    expected = 1 / (2 + 1 / math.log2(3))
    assert ndcg_any_lme(frozenset({"a", "b", "c"}), ["a", "x", "y", "b"], 3) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.380093, abs=1e-6)


def test_lme_ndcg_at_rank_three_and_a_repeat():
    """[x, y, a, a] at k=4, one evidence item: dcg = 1/log2(3) (the repeat is not relevant again); ideal 1."""
    assert ndcg_any_lme(frozenset({"a"}), ["x", "y", "a", "a"], 4) == pytest.approx(1 / math.log2(3), abs=1e-12)


def test_lme_ndcg_with_nothing_retrieved_is_zero():
    """No evidence item in the list scores 0, as does an empty whole list (LongMemEval: ideal 0 gives 0)."""
    assert ndcg_any_lme(frozenset({"a"}), ["x", None], 2) == 0.0
    point = TestPointResult(
        turn_index=1, question="q", expected_fact="f", expected_keywords=[], retrieved_records=[],
        evidence_turns=[0], ranked_turns=[], ranked_sessions=[],
    )
    assert point_values(point, (5,), WHOLE_LIST)["ndcg_any_lme", "turn", 5] == 0.0
