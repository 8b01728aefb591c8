"""End-to-end answers: each protocol's accuracy or score, the task average, abstention, unparsed verdicts,
the failure decomposition by evidence, keyword accuracy and the lexical scores (:mod:`evals.judge.answer_metrics`
has the rules each reads)."""

from __future__ import annotations

from collections.abc import Callable

from evals.judge import answer_metrics as qa
from evals.judge.answer_scores import Lexical, lexical
from evals.judge.metrics._registry import (
    MEAN,
    PROPORTION,
    MetricValue,
    Point,
    PointValues,
    ScoredRun,
    metric,
    point_metric,
    point_values,
    proportion,
)
from evals.model.results import PointAnswer, TestPointResult

# -- end-to-end answers ------------------------------------------------------------------------


# Each protocol's population and value of a point (evals.judge.answer_metrics): a verdict (0/1, a Wilson interval)
# or, where the protocol scores without a judge (LoCoMo), its own score (a mean, a bootstrap interval).


def _judged_accuracy(run: ScoredRun) -> MetricValue | None:
    """answer_accuracy from the answers alone: None for a run no judge graded, null without a counted point."""
    answers = run.answers
    if answers is None:
        return None
    values = [v for conversation in answers.points for answer in conversation if (v := qa.judged_value(answer)) is not None]
    scored = any(qa.scored_value(answer) is not None for conversation in answers.points for answer in conversation)
    if not values and (answers.judge_model is None or scored):
        return None  # a run without a judge, or whose protocol scores (LoCoMo's F1, a graded judge): answer_score's
    return proportion(round(sum(values)), len(values))


@point_metric(
    "answer_accuracy",
    label="answer accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    whole_run=_judged_accuracy,
    description="Share of the test points the protocol counts that its judge graded correct (an unparsed verdict counts "
    "as not correct); per category with the same rule.",
)
def answer_accuracy(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.judged_value(answer)


@point_metric(
    "answer_score",
    label="QA score",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    presence="some",
    description="Mean of the protocol's own per-point score where it scores without a judge (its published F1 rules) "
    "or its judge grades (a rubric's mean, graded labels), 95% bootstrap interval.",
)
def answer_score(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.scored_value(answer)


def answer_values_by_category(values: PointValues) -> dict[str | None, list[float]] | None:
    """Each category's counted answer values (verdicts or scores), in order of first appearance; None when
    no test point has a category or the values hold no answers."""
    if not any(c is not None for c in values.categories) or "answer_accuracy" not in values.columns:
        return None
    out: dict[str | None, list[float]] = {}
    for category, judged, scored in zip(
        values.categories, values.columns["answer_accuracy"], values.columns["answer_score"], strict=True
    ):
        value = judged if judged is not None else scored
        if value is not None:
            out.setdefault(category, []).append(value)
    return out


def _values_by_category(run: ScoredRun) -> dict[str | None, list[float]] | None:
    return answer_values_by_category(point_values(run, ["answer_accuracy", "answer_score"]))


@metric(
    "answer_task_averaged",
    label="task-averaged",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean of the per-category answer accuracies (scores), each category weighing the same; "
    "95% stratified bootstrap interval (seed 0).",
)
def answer_task_averaged(run: ScoredRun) -> MetricValue | None:
    if run.answers is None or run.scores is None:
        return None
    groups = _values_by_category(run)
    found = qa.task_averaged(groups) if groups else None
    return None if found is None else MetricValue(*found)


@point_metric(
    "answer_abstention_accuracy",
    label="abstention accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Accuracy over the counted test points the corpus marks unanswerable, each by its protocol's rule.",
)
def answer_abstention_accuracy(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None or answer.answerable else qa.point_value(answer)


@point_metric(
    "answer_false_abstention",
    label="false abstention",
    kind=PROPORTION,
    higher_is_better=False,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of answerable test points whose answer declines to answer (the lexical abstention rule).",
)
def answer_false_abstention(point: Point) -> float | None:
    answer = point.answer
    if answer is None or not answer.answerable:
        return None
    found = qa.abstains(answer)
    return None if found is None else float(found)


@point_metric(
    "answer_correct_abstention",
    label="correct abstention",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of unanswerable test points whose answer declines to answer (the protocol's abstention verdict "
    "or rule where it has one, else the lexical rule).",
)
def answer_correct_abstention(point: Point) -> float | None:
    answer = point.answer
    if answer is None or answer.answerable:
        return None
    found = qa.abstains(answer)
    return None if found is None else float(found)


@point_metric(
    "answer_unparsed",
    label="unparsed verdicts",
    kind=PROPORTION,
    higher_is_better=False,
    answers=True,
    presence="some",
    leaderboard=False,
    description="Share of the counted verdicts the judge's reply could not be parsed into (counted as not correct); "
    "a run above 1% is flagged.",
)
def answer_unparsed(point: Point) -> float | None:
    answer = point.answer
    return None if answer is None else qa.unparsed_value(answer)


def _by_evidence(found: bool) -> Callable[[Point], float | None]:
    def value(point: Point) -> float | None:
        answer = point.answer
        if answer is None or point.score.evidence_any is not found:
            return None
        return qa.point_value(answer)

    return value


for _found, _name, _label, _said in (
    (True, "answer_accuracy_evidence_found", "accuracy, evidence retrieved", "at least one of its evidence turns was retrieved"),
    (False, "answer_accuracy_evidence_missed", "accuracy, evidence missed", "no evidence turn was retrieved (a high "
     "figure here flags guessing or a lenient judge)"),
):  # fmt: skip
    point_metric(
        _name,
        label=_label,
        kind=MEAN,
        higher_is_better=True,
        answers=True,
        presence="some",
        leaderboard=False,
        description=f"Answer accuracy (score) over the counted test points with evidence turns where {_said}; "
        "95% bootstrap interval.",
    )(_by_evidence(_found))


@metric(
    "keyword_accuracy",
    label="keyword accuracy",
    kind=PROPORTION,
    higher_is_better=True,
    answers=True,
    description="Share of answers holding an expected keyword.",
)
def keyword_accuracy(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    return None if answers is None else proportion(answers.keyword_hits, answers.total)


def answer_scores(point: TestPointResult, answer: PointAnswer, scorer: Lexical) -> dict[str, float]:
    """An answer's lexical scores against the expected fact, ``{"f1", "bleu1"}``, as its protocol's ``scorer``
    defines them (its unit's, :func:`evals.benchmarks.protocol_lexical`): the per-point values of answer_f1 and
    answer_bleu1, and what the result JSON and the drill-down show beside each answer. ``scorer`` has no default: a
    caller that forgot the run's protocol would score LoCoMo's answers by the harness's rule."""
    return lexical(scorer, answer.answer, point.expected_fact, answer.category if answer.category is not None else point.category)


def _lexical_population(answer: PointAnswer | None) -> bool:
    """Answerable points the protocol does not leave out: an F1 against an unanswerable point's gold means nothing."""
    return answer is not None and answer.answerable and answer.counted is not False


@point_metric(
    "answer_f1",
    label="answer F1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean token F1 of each answer against the expected fact, as the run's protocol defines it (the "
    "harness's: normalised tokens, no stemming, unless the protocol brings its own); 95% bootstrap interval.",
)
def answer_f1(point: Point) -> float | None:
    answer = point.answer
    return answer_scores(point.result, answer, point.lexical)["f1"] if _lexical_population(answer) else None  # type: ignore[arg-type]


@point_metric(
    "answer_bleu1",
    label="BLEU-1",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    description="Mean sentence BLEU-1 of each answer against the expected fact, as the run's protocol defines it (the "
    "harness's, on normalised tokens, unless the protocol brings its own); 95% bootstrap interval.",
)
def answer_bleu1(point: Point) -> float | None:
    answer = point.answer
    return answer_scores(point.result, answer, point.lexical)["bleu1"] if _lexical_population(answer) else None  # type: ignore[arg-type]
