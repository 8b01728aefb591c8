"""With --judge-repeats N: how much the judge's verdicts vary when asked again."""

from __future__ import annotations

import math
from collections.abc import Callable

from evals.judge.metrics._registry import MEAN, MetricValue, ScoredRun, metric


def repeat_stats(accuracies: list[float]) -> tuple[float, float]:
    """The mean and sample standard deviation of the repeats' accuracies (at least two): decided here once, for the
    stored metrics and the line `evals run` prints."""
    mean = sum(accuracies) / len(accuracies)
    return mean, math.sqrt(sum((a - mean) ** 2 for a in accuracies) / (len(accuracies) - 1))


def _repeats(which: str) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        accuracies = run.answers.repeat_accuracies() if run.answers is not None else None
        if accuracies is None:
            return None
        mean, sd = repeat_stats(accuracies)
        return MetricValue(mean if which == "mean" else sd, len(accuracies))

    return compute


metric(
    "judge_repeat_accuracy_mean",
    label="accuracy, mean over judge repeats",
    kind=MEAN,
    higher_is_better=True,
    answers=True,
    leaderboard=False,
    description="With --judge-repeats N: the mean over the N repeats of each repeat's answer accuracy (n: repeats).",
)(_repeats("mean"))
metric(
    "judge_repeat_accuracy_sd",
    label="accuracy, sd over judge repeats",
    kind=MEAN,
    higher_is_better=False,
    answers=True,
    leaderboard=False,
    description="With --judge-repeats N: the sample standard deviation over the N repeats of each repeat's answer "
    "accuracy: how much the judge's verdicts vary when asked again (n: repeats).",
)(_repeats("sd"))
