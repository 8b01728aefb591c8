"""The numbers beyond the original harness's: evidence recall, unanswerable test points, per-category recall.

Each block is read from the run's per-point values as aggregated by
:func:`evals.judge.metrics.grouped` (the whole run, or each category), and is
``None`` (its JSON key left out) for a corpus that does not use the field it
needs, so the result of an old corpus is unchanged. Unanswerable test points
never count in recall or evidence recall; they are reported on their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evals.benchmarks import category_names, protocol_lexical, units
from evals.judge import answer_metrics as qa
from evals.judge.answer_scores import category_number
from evals.judge.headline import Rule, headline_by_category
from evals.judge.metrics import ALL, MetricValue, PointValues, answer_values_by_category, grouped
from evals.model.results import AnswerRun, RunResult

__all__ = [
    "ANSWER_FIGURES",
    "answer_category_rows",
    "answer_figures",
    "category_rows",
    "evidence_block",
    "figure",
    "headline_rate",
    "metrics_additions",
    "rate",
    "unanswerable_block",
]

# What these blocks read of the grouped values.
_READ = ("recall", "evidence_recall_any", "evidence_recall_all", "unanswerable_tokens")


def rate(value: MetricValue) -> dict[str, Any]:
    """``{hits, total, recall, interval}`` of a proportion: recall None and no interval when total is 0."""
    return {
        "hits": value.successes or 0,
        "total": value.n,
        "recall": value.value,
        "interval": None if value.low is None else [value.low, value.high],
    }


def _evidence(values: dict[str, MetricValue]) -> dict[str, Any] | None:
    if "evidence_recall_any" not in values:
        return None
    return {"any": rate(values["evidence_recall_any"]), "all": rate(values["evidence_recall_all"])}


def evidence_block(values: PointValues) -> dict[str, Any] | None:
    """Evidence recall@k, ``{any: rate, all: rate}`` over answerable test points with evidence turns."""
    return _evidence(grouped(values, names=_READ)[ALL])


def unanswerable_block(run: RunResult, values: PointValues) -> dict[str, Any] | None:
    """The unanswerable test points: how many, what their retrieval cost, and where they are."""
    spent = grouped(values, names=_READ)[ALL].get("unanswerable_tokens")
    if spent is None:
        return None
    return {
        "count": spent.n,
        "context_tokens": spent.total,
        "tokens_per_test_point": spent.value,
        "points": [
            {
                "conversation_id": conversation.conversation_id,
                "turn_index": point.turn_index,
                "question": point.question,
                "record_count": len(point.retrieved_records),
            }
            for conversation in run.conversations
            for point in conversation.test_points
            if not point.answerable
        ],
    }


def category_rows(values: PointValues, rule: Rule | None = None) -> list[dict[str, Any]] | None:
    """Per category (by name; test points without one last, as ``null``): keyword recall, evidence recall,
    unanswerable count, and with ``rule`` the headline under it (:func:`evals.judge.headline.headline_by_category`:
    the categories add up to the headline). None when no test point has a category."""
    groups = grouped(values, "category", _READ)
    if not any(name is not None for name in groups):
        return None
    headlines = headline_by_category(values, rule) if rule is not None else {}
    return [
        {
            "category": name,
            **rate(found["recall"]),
            "evidence_recall_at_k": _evidence(found),
            "unanswerable": found["unanswerable_tokens"].n if "unanswerable_tokens" in found else 0,
            **({"headline": headline_rate(rule, headlines.get(name))} if rule is not None else {}),
        }
        for name, found in sorted(groups.items(), key=lambda item: (item[0] is None, item[0] or ""))
    ]


def headline_rate(rule: Rule, value: MetricValue | None) -> dict[str, Any]:
    """``{metric, label, hits, total, value, low, high}`` of a headline figure (a category's, or the run's)."""
    value = value or MetricValue(None, 0)
    return {
        "metric": rule.metric,
        "label": rule.label,
        "hits": value.successes or 0,
        "total": value.n,
        "value": value.value,
        "low": value.low,
        "high": value.high,
    }


def metrics_additions(run: RunResult, values: PointValues) -> dict[str, Any]:
    """The keys these add to the result JSON's ``metrics``, only those that apply."""
    out: dict[str, Any] = {}
    for key, value in (
        ("evidence_recall_at_k", evidence_block(values)),
        ("unanswerable", unanswerable_block(run, values)),
        ("by_category", category_rows(values)),
    ):
        if value is not None:
            out[key] = value
    return out


# -- the answers' figures ---------------------------------------------------------------------------

# The per-point answer metrics the figures read (evals.judge.metrics declares them; evals.judge.answer_metrics their rules).
ANSWER_FIGURES = (
    "answer_accuracy",
    "answer_score",
    "answer_abstention_accuracy",
    "answer_false_abstention",
    "answer_correct_abstention",
    "answer_unparsed",
    "answer_accuracy_evidence_found",
    "answer_accuracy_evidence_missed",
    "answer_f1",
    "answer_bleu1",
)


def figure(value: MetricValue | None, interval: str) -> dict[str, Any] | None:
    """``{value, n, low, high, interval}`` of one figure (``interval``: "wilson" or "bootstrap"); None when absent."""
    if value is None:
        return None
    return {"value": value.value, "n": value.n, "low": value.low, "high": value.high, "interval": interval}


def _accuracy(found: dict[str, MetricValue]) -> dict[str, Any] | None:
    """A group's accuracy: the judge's verdicts (Wilson) or, for a protocol that scores, its mean score (bootstrap)."""
    return figure(found.get("answer_accuracy"), "wilson") or figure(found.get("answer_score"), "bootstrap")


def answer_category_rows(values: PointValues, benchmark: str | None = None) -> list[dict[str, Any]]:
    """Per category (by name; points without one last): the answers' accuracy over the protocol's counted points,
    its interval and n, labelled by number on LoCoMo (:func:`evals.judge.answer_metrics.category_label`). [] when no test
    point has a category or the run has no counted answer."""
    if not any(c is not None for c in values.categories):
        return []
    groups = grouped(values, "category", ("answer_accuracy", "answer_score"))
    rows = []
    for name, found in sorted(groups.items(), key=lambda item: (item[0] is None, category_number(item[0]) or 0, item[0] or "")):
        accuracy = _accuracy(found)
        if accuracy is not None:
            rows.append({"category": name, "label": qa.category_label(name, category_names(benchmark)), **accuracy})
    return rows


def _left_out(values: PointValues, by_category: Mapping[str | None, Sequence[float]], benchmark: str | None) -> list[str]:
    """The categories the run asked about whose points are all left out of the figures (BEAM's event ordering when
    every tau-b is undefined, a category of unanswerable points only), by label: the task average does not weigh them."""
    asked = dict.fromkeys(c for c in values.categories if c is not None)
    return [qa.category_label(c, category_names(benchmark)) for c in asked if not by_category.get(c)]


def answer_figures(values: PointValues, answers: AnswerRun, benchmark: str | None = None) -> dict[str, Any]:
    """``metrics.answers.figures`` of the result JSON: the run's answers as its protocol counts them.

    ``overall`` and ``by_category`` are accuracy (judged) or the protocol's score (LoCoMo), with n and a 95%
    interval; ``task_averaged`` the mean of the category figures with a stratified bootstrap interval;
    ``abstention`` the abstention accuracy (LongMemEval's), false abstention on answerable points and correct
    abstention on unanswerable ones; ``unparsed`` the verdicts the judge's replies did not yield, flagged above
    1%; ``by_evidence`` accuracy where the evidence was retrieved and where it was not; ``lexical`` which
    protocol's F1 and BLEU-1 ``metrics.answers.f1``/``bleu1`` are."""
    whole = grouped(values, names=ANSWER_FIGURES)[ALL]
    by_category = answer_values_by_category(values)
    averaged = qa.task_averaged(by_category) if by_category else None
    unparsed = whole.get("answer_unparsed")
    share = unparsed.value if unparsed is not None else None
    scorer = protocol_lexical(answers.protocol)
    numbered = any(qa.category_label(c, category_names(benchmark)) != (c or "(none)") for c in values.categories if c is not None)
    return {
        "protocol": answers.protocol,
        "overall": _accuracy(whole),
        "by_category": answer_category_rows(values, benchmark),
        "task_averaged": None
        if averaged is None
        else {
            "value": averaged[0],
            "n": averaged[1],
            "low": averaged[2],
            "high": averaged[3],
            "interval": "bootstrap",
            "categories": len([v for v in by_category.values() if v]),
            "left_out": _left_out(values, by_category, benchmark),
        },  # type: ignore[union-attr]
        "abstention": {
            "accuracy": figure(whole.get("answer_abstention_accuracy"), "wilson"),
            "false_abstention": figure(whole.get("answer_false_abstention"), "wilson"),
            "correct_abstention": figure(whole.get("answer_correct_abstention"), "wilson"),
            "lexical_rule": list(qa.ABSTAIN_PHRASES),
        },
        "unparsed": {
            "count": unparsed.successes if unparsed is not None else 0,
            "of": unparsed.n if unparsed is not None else 0,
            "share": share,
            "flagged": share is not None and share > qa.UNPARSED_LIMIT,
        },
        "by_evidence": {
            "retrieved": figure(whole.get("answer_accuracy_evidence_found"), "bootstrap"),
            "missed": figure(whole.get("answer_accuracy_evidence_missed"), "bootstrap"),
        },
        "lexical": {"f1": scorer.f1_name, "bleu1": scorer.bleu1_name},
        "category_note": units()[benchmark].category_note if numbered else None,  # type: ignore[index]
    }
