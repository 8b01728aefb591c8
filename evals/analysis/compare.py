"""Which test points flipped between two stored runs, and whether that is more than chance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals.judge.answer_metrics import answer_outcomes
from evals.judge.headline import EVIDENCE, HIT, KEYWORD, MISS, Rule, Verdict, run_verdicts
from evals.judge.metrics import ScoredRun
from evals.judge.stats import mcnemar_exact
from evals.store import RunSummary, StoredRun

__all__ = [
    "NO_CATEGORY",
    "AnswerComparison",
    "CategoryFlips",
    "Comparison",
    "Flip",
    "Outcome",
    "category_key",
    "compare_runs",
    "evidence_outcome",
    "headline_outcomes",
    "hit_outcome",
]

NO_CATEGORY = "(none)"

# What is paired: the verdicts (evals.judge.headline.verdict_of) of one declared per-point metric, named.
Outcome = str
hit_outcome: Outcome = KEYWORD.metric  # keyword recall: unanswerable test points are neither hit nor miss
evidence_outcome: Outcome = EVIDENCE.metric  # answerable evidence recall: None without evidence turns
# A run's verdicts under a per-point metric, per conversation (evals.judge.headline.run_verdicts, or kept ones).
VerdictsOf = Callable[[StoredRun, str], list[list[Verdict]]]


@dataclass(frozen=True)
class Flip:
    conversation_id: str
    turn_index: int
    question: str
    expected_fact: str = ""
    category: str = NO_CATEGORY  # A's test point's category (or ability), NO_CATEGORY without one


@dataclass(frozen=True)
class CategoryFlips:
    """One category's flips, as the compare page's "Flips by category" and `evals compare` both give them."""

    category: str
    only_a: int  # hit by A only
    only_b: int  # hit by B only

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact(self.only_a, self.only_b)


@dataclass(frozen=True)
class AnswerComparison:
    """The judge's verdicts on the test points both runs' protocols count and had judged
    (:func:`evals.judge.answer_metrics.answer_outcomes`, the gate's population too)."""

    correct_a: int
    correct_b: int
    lost: int  # judged correct in A, incorrect in B
    gained: int  # incorrect in A, correct in B
    shared: int

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact(self.lost, self.gained)


@dataclass(frozen=True)
class Comparison:
    a: RunSummary
    b: RunSummary
    lost: list[Flip]  # hit in A, miss in B
    gained: list[Flip]  # miss in A, hit in B
    still_hit: int
    still_missed: int
    only_in_a: int  # test points B does not have (possible when the corpora differ)
    only_in_b: int
    answers: AnswerComparison | None = None  # when both runs have judged answers

    @property
    def same_corpus(self) -> bool:
        return self.a.corpus_digest == self.b.corpus_digest

    @property
    def shared(self) -> int:
        """Test points present in both runs: the pairs the test compares."""
        return len(self.lost) + len(self.gained) + self.still_hit + self.still_missed

    @property
    def mcnemar_p(self) -> float:
        """Two-sided exact McNemar p-value over the shared test points (1.0 when none flipped)."""
        return mcnemar_exact(len(self.lost), len(self.gained))

    def by_category(self) -> list[CategoryFlips]:
        """The flips per category, categories in order (numbered ones by number, then by name): one place
        for the compare page and `evals compare`, so both say the same."""
        counts: dict[str, list[int]] = {}
        for side, flips in ((0, self.lost), (1, self.gained)):
            for flip in flips:
                counts.setdefault(flip.category, [0, 0])[side] += 1
        return [CategoryFlips(name, a, b) for name, (a, b) in sorted(counts.items(), key=lambda item: category_key(item[0]))]


def category_key(name: str) -> tuple[int, int | str]:
    """Categories in the order pages list them: numbered ones by number, then the rest by name."""
    return (0, int(name)) if name.isdigit() else (1, name)


def _scored(stored: StoredRun, metric: str) -> list[list[Verdict]]:
    return run_verdicts(ScoredRun(stored.run, stored.scores), metric)


def headline_outcomes(stored: StoredRun, rule: Rule | None = None, verdicts: VerdictsOf = _scored) -> list[list[bool | None]]:
    """Each test point's headline verdict (evals.judge.headline) as an outcome: hit True, miss False, None where
    the rule does not count the point; per conversation. ``rule``: the run's own by default. ``verdicts``
    gives a run's verdicts under a metric (a caller that keeps them, as the site build does, passes its own)."""
    return _as_outcomes(stored, (rule or stored.summary.headline.rule).metric, verdicts)


def _as_outcomes(stored: StoredRun, metric: str, verdicts: VerdictsOf = _scored) -> list[list[bool | None]]:
    found = verdicts(stored, metric)
    return [[None if verdict not in (HIT, MISS) else verdict == HIT for verdict in conversation] for conversation in found]


def _outcomes(stored: StoredRun, metric: str, verdicts: VerdictsOf = _scored) -> dict[tuple[str, int, str], bool]:
    """The outcome per test point that has one under ``metric``'s verdicts."""
    found = {
        (result.conversation_id, point.turn_index, point.question): outcome
        for result, conversation in zip(stored.run.conversations, _as_outcomes(stored, metric, verdicts), strict=True)
        for point, outcome in zip(result.test_points, conversation, strict=True)
    }
    return {key: value for key, value in found.items() if value is not None}


def _expected_facts(stored: StoredRun) -> dict[tuple[str, int, str], tuple[str, str]]:
    return {
        (result.conversation_id, point.turn_index, point.question): (
            point.expected_fact,
            point.category if point.category is not None else NO_CATEGORY,
        )
        for result in stored.run.conversations
        for point in result.test_points
    }


def _compare_answers(a: StoredRun, b: StoredRun) -> AnswerComparison | None:
    found_a, found_b = answer_outcomes(a.run, a.answers), answer_outcomes(b.run, b.answers)
    if found_a is None or found_b is None:
        return None
    before = {key: correct for key, (_, correct) in found_a.items()}
    after = {key: correct for key, (_, correct) in found_b.items()}
    shared = [key for key in before if key in after]
    return AnswerComparison(
        correct_a=sum(before[key] for key in shared),
        correct_b=sum(after[key] for key in shared),
        lost=sum(1 for key in shared if before[key] and not after[key]),
        gained=sum(1 for key in shared if not before[key] and after[key]),
        shared=len(shared),
    )


def compare_runs(a: StoredRun, b: StoredRun, outcome: Outcome | None = None, verdicts: VerdictsOf = _scored) -> Comparison:
    """Match test points by (conversation, turn, question) and sort them by what changed.

    By default what is compared is each test point's headline verdict (:mod:`evals.judge.headline`), by A's
    rule on both sides, so the paired test is on the figure the leaderboard shows; ``outcome`` names another
    per-point metric whose verdicts are paired (:data:`hit_outcome`: keyword recall; :data:`evidence_outcome`:
    answerable evidence recall). ``verdicts`` gives a run's verdicts under a metric (by default computed here).
    """
    metric = outcome or a.summary.headline.rule.metric
    before, after = _outcomes(a, metric, verdicts), _outcomes(b, metric, verdicts)
    shared = [key for key in before if key in after]
    facts = _expected_facts(a)
    lost = [Flip(*key, *facts[key]) for key in shared if before[key] and not after[key]]
    gained = [Flip(*key, *facts[key]) for key in shared if not before[key] and after[key]]
    return Comparison(
        a=a.summary,
        b=b.summary,
        lost=lost,
        gained=gained,
        still_hit=sum(1 for key in shared if before[key] and after[key]),
        still_missed=sum(1 for key in shared if not before[key] and not after[key]),
        only_in_a=len(before) - len(shared),
        only_in_b=len(after) - len(shared),
        answers=_compare_answers(a, b),
    )
