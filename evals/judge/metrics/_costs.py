"""What a run's LLM requests cost: tokens per test point, per kind of request and per correct answer, and
dollars at the run's price table (:mod:`evals.model.costs`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evals.judge.metrics._registry import TOKENS, USD, MetricValue, ScoredRun, metric
from evals.model import costs
from evals.model.results import ANSWER, JUDGE, MEMORY_WRITE, usage_json


@metric(
    "llm_tokens_per_test_point",
    label="LLM tokens / test point",
    kind=TOKENS,
    higher_is_better=False,
    answers=True,
    leaderboard=False,
    description="Prompt and completion tokens of every LLM request the run used (answers, verdicts, summaries; sent or "
    "from the cache) over the answerable test points: kept for runs stored before the costs were split; "
    "the answer, judge and memory-write figures below say the same apart, each over its own denominator.",
)
def llm_tokens_per_test_point(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    if answers is None:
        return None
    total = run.scores.total
    spent = answers.prompt_tokens + answers.completion_tokens
    return MetricValue(spent / total if total else None, total)


# -- what the answers cost (evals.model.costs), from the run's tallies per kind of request ---------------------


def _usage(run: ScoredRun) -> dict[str, Any] | None:
    """The run's usage as stored (kind -> tally), or None: no answers, or made before it was tallied."""
    answers = run.answers
    return usage_json(answers.usage) if answers is not None and answers.usage else None


def _per(kind: str) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        usage = _usage(run)
        tally = usage.get(kind) if usage is not None else None
        if tally is None:
            return None
        tokens = (
            tally["prompt_tokens"]
            + tally["completion_tokens"]
            + tally["cached_prompt_tokens"]
            + tally["cached_completion_tokens"]
        )
        return MetricValue(tokens / tally["per"] if tally["per"] else None, tally["per"])

    return compute


for _kind, _label, _per_what in (
    (ANSWER, "answer tokens / answer", "test point answered (unanswerable ones too: each is answered)"),
    (JUDGE, "judge tokens / verdict", "test point judged (every repeat of its verdict counted)"),
    (MEMORY_WRITE, "memory-write tokens / conversation", "conversation (summary_buffer's summary requests)"),
):
    metric(
        f"{_kind}_tokens_per_{'conversation' if _kind == MEMORY_WRITE else 'point'}",
        label=_label,
        kind=TOKENS,
        higher_is_better=False,
        answers=True,
        leaderboard=False,
        description=f"Prompt and completion tokens of the {_kind.replace('_', '-')} requests, sent or served from the "
        f"cache, per {_per_what}.",
    )(_per(_kind))


@metric(
    "tokens_per_correct",
    label="tokens / correct",
    kind=TOKENS,
    higher_is_better=False,
    answers=True,
    description="Prompt and completion tokens of the answer and memory-write requests (sent or from the cache) per "
    "answer the judge graded correct; the judge's own tokens are the evaluation's cost and left out.",
)
def tokens_per_correct(run: ScoredRun) -> MetricValue | None:
    usage = _usage(run)
    if usage is None or run.answers is None or run.answers.judge_model is None:
        return None
    return MetricValue(costs.tokens_per_correct(usage, run.answers.correct), run.answers.correct)


@metric(
    "usd_per_correct",
    label="$ / correct",
    kind=USD,
    higher_is_better=False,
    answers=True,
    description="Dollars of the answer and memory-write requests at list price (sent or from the cache) per answer "
    "the judge graded correct, at the run's price table; — where a model has no price.",
)
def usd_per_correct(run: ScoredRun) -> MetricValue | None:
    answers = run.answers
    return cost_values(_usage(run), answers.correct if answers is not None and answers.judge_model else None)["usd_per_correct"]


@metric(
    "usd_spent",
    label="$ spent",
    kind=USD,
    higher_is_better=False,
    answers=True,
    description="Dollars of every LLM request this run sent (answers, verdicts, summaries) at the run's price table; "
    "replies served from the cache cost nothing, so a rerun from the cache spent $0; — where a model has no price.",
)
def usd_spent(run: ScoredRun) -> MetricValue | None:
    return cost_values(_usage(run), None)["usd_spent"]


def cost_values(usage: dict[str, Any] | None, correct: int | None) -> dict[str, MetricValue | None]:
    """The dollar metrics of a run's usage at the prices it holds: what the metrics store, and what a table
    repriced at another price table (evals leaderboard --prices) shows. None where a model has no price, or
    (per correct answer) the run has no judge (``correct`` None)."""
    if usage is None:
        return {"usd_spent": None, "usd_per_correct": None}
    spent = costs.usd_spent(usage)
    per_correct = None
    if correct is not None:
        value = costs.usd_per_correct(usage, correct)
        per_correct = None if value is None and correct and costs.unpriced(usage) else MetricValue(value, correct)
    return {
        "usd_spent": None if spent is None else MetricValue(spent, sum(t["sent"] for t in usage.values())),
        "usd_per_correct": per_correct,
    }
