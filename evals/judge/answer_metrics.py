"""What one answer counts for in a protocol's figures: its population, its value, whether it abstains.

Every answer figure (accuracy per category and overall, the task-averaged
score, abstention, unparsed verdicts, the failure decomposition) is declared in
:mod:`evals.judge.metrics` as the value of one test point, read through these rules,
and aggregated there; :mod:`evals.views.breakdown` assembles the result JSON's block.
The rules read a :class:`~evals.model.results.PointAnswer`'s protocol fields alone:

- **population**: ``counted`` where the protocol set it; for a run made before
  protocols, the answerable points the judge gave a verdict.
- **value**: the protocol's own ``score`` where it scores without a judge
  (LoCoMo's per-category F1) or its judge grades (BEAM's rubric, LoCoMo-Plus's
  1 / 0.5 / 0), else 1 for a ``"correct"`` verdict and 0 for ``"wrong"`` or
  ``"unparsed"``: an unparsed verdict stays in the denominator as not correct
  (a graded one scores what its protocol gives it, 0 on both), and is counted
  apart (:data:`UNPARSED_LIMIT`).
- **abstains**: on a point the corpus marks unanswerable, the protocol's own
  decision where it makes one (the verdict of LongMemEval's abstention
  template; LoCoMo's category-5 rule, which is its score); everywhere else the
  lexical rule :func:`says_abstain` (:data:`ABSTAIN_PHRASES`).

No module here imports :mod:`evals.judge.metrics`: the metrics import these rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from evals.judge.answer_scores import category_number
from evals.judge.stats import bootstrap_mean_of_means_interval
from evals.model.results import CORRECT, UNPARSED, WRONG, AnswerRun, PointAnswer, RunResult

__all__ = [
    "ABSTAIN_PHRASES",
    "CORRECT",
    "UNPARSED",
    "UNPARSED_LIMIT",
    "WRONG",
    "PointKey",
    "abstains",
    "answer_outcomes",
    "category_label",
    "is_counted",
    "judged_value",
    "point_value",
    "says_abstain",
    "scored_value",
    "task_averaged",
    "unparsed_value",
]


# A run with more than this share of its counted verdicts unparsed is flagged wherever its figures show:
# its accuracy then says as much about the judge's replies as about the answers.
UNPARSED_LIMIT = 0.01

# The lexical abstention rule: an answer abstains when, lower-cased (curly apostrophes made straight), it holds
# one of these. LoCoMo's two category-5 phrases first, then the usual ways a model declines.
ABSTAIN_PHRASES = (
    "no information available",
    "not mentioned",
    "not enough information",
    "no information",
    "don't know",
    "do not know",
    "cannot be determined",
    "can't be determined",
    "cannot determine",
    "can't determine",
    "not specified",
    "not stated",
    "no mention",
    "unanswerable",
    "cannot answer",
    "can't answer",
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})

_NUMBERED = re.compile(r"(\d+)\s+\(?([^()]+?)\)?")


def is_counted(answer: PointAnswer) -> bool:
    """The protocol counts this point in its accuracy (a run before protocols: answerable and judged)."""
    if answer.counted is not None:
        return answer.counted
    return answer.answerable and answer.correct is not None


# A test point as two runs of one corpus both know it: (conversation, turn, question).
PointKey = tuple[str, int, str]


def answer_outcomes(run: RunResult, answers: AnswerRun | None) -> dict[PointKey, tuple[str | None, bool]] | None:
    """The answer population every paired test of verdicts counts (``evals compare``, the gate's question types):
    each point the protocol counts whose value is a judge's verdict (:func:`judged_value`), as (category, correct);
    None for a run without such a point. A protocol that scores instead of judging (LoCoMo's F1) has no verdict to
    pair."""
    if answers is None:
        return None
    found = {}
    for result, given in zip(run.conversations, answers.points, strict=True):
        for point, answer in zip(result.test_points, given, strict=True):
            value = judged_value(answer)
            if value is not None:
                category = answer.category if answer.category is not None else point.category
                found[(result.conversation_id, point.turn_index, point.question)] = (category, value >= 1)
    return found or None


def point_value(answer: PointAnswer) -> float | None:
    """The point's value in the protocol's accuracy (None: not counted, or nothing to count)."""
    if not is_counted(answer):
        return None
    if answer.score is not None:
        return answer.score
    if answer.verdict is not None:
        return 1.0 if answer.verdict == CORRECT else 0.0
    return None if answer.correct is None else float(answer.correct)


def judged_value(answer: PointAnswer) -> float | None:
    """:func:`point_value` where it is a verdict (0 or 1): the judged accuracy's population."""
    return None if answer.score is not None else point_value(answer)


def scored_value(answer: PointAnswer) -> float | None:
    """:func:`point_value` where it is the protocol's own score: the scored protocols' (LoCoMo's) population."""
    return None if answer.score is None else point_value(answer)


def unparsed_value(answer: PointAnswer) -> float | None:
    """1 for a counted point whose verdict could not be parsed, 0 for one with a verdict (a graded judge's
    included); None elsewhere (not judged, or scored without a judge)."""
    if not is_counted(answer) or (answer.verdict is None and answer.correct is None):
        return None
    return float(answer.verdict == UNPARSED)


def says_abstain(text: str) -> bool:
    """The lexical rule: the answer, lower-cased, holds one of :data:`ABSTAIN_PHRASES`."""
    low = text.lower().translate(_APOSTROPHES)
    return any(phrase in low for phrase in ABSTAIN_PHRASES)


def abstains(answer: PointAnswer) -> bool | None:
    """Whether the answer declines to answer; None where the protocol's own decision is an unparsed verdict.

    On an unanswerable point the protocol decides where it judges or scores the point (LongMemEval's
    abstention template: "correct" means the model said it cannot answer; LoCoMo's category 5: its score);
    on an answerable point no protocol asks, so the lexical rule decides, as it does for an unanswerable
    point a protocol leaves out (mem0's category 5, the harness's unanswerable points)."""
    if not answer.answerable and is_counted(answer):
        if answer.score is not None:
            return answer.score >= 1
        if answer.verdict == UNPARSED:
            return None
        if answer.verdict is not None:
            return answer.verdict == CORRECT
        if answer.correct is not None:
            return answer.correct
    return says_abstain(answer.answer)


def category_label(category: str | None, names: Mapping[int, str] | None = None) -> str:
    """A category as tables show it: a numbered category by number, the name beside it in brackets
    (``"4 single-hop"`` or, with LoCoMo's ``names`` (:func:`evals.benchmarks.category_names`),
    ``"4"`` -> ``"4 (single-hop)"``); any other verbatim; "(none)"."""
    if category is None:
        return "(none)"
    found = _NUMBERED.fullmatch(category.strip())
    if found:
        return f"{found.group(1)} ({found.group(2)})"
    number = category_number(category)
    if names and number is not None and category.strip() == str(number) and number in names:
        return f"{number} ({names[number]})"
    return category


def task_averaged(
    by_category: Mapping[str | None, Sequence[float]], *, seed: int = 0, resamples: int = 2000
) -> tuple[float, int, float, float] | None:
    """The task-averaged score: the mean of each category's mean value, every category weighing the same
    (LongMemEval's ``print_qa_metrics.py`` averages its six question types so), with a stratified bootstrap
    interval (:func:`~evals.judge.stats.bootstrap_mean_of_means_interval`, seeded). Returns (value, points, low,
    high); None without a counted point. Categories without a counted point are left out."""
    groups = [list(values) for values in by_category.values() if values]
    if not groups:
        return None
    value = sum(sum(g) / len(g) for g in groups) / len(groups)
    interval = bootstrap_mean_of_means_interval(groups, seed=seed, resamples=resamples)
    assert interval is not None
    return value, sum(len(g) for g in groups), interval[0], interval[1]
