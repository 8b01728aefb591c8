"""The original harness's JSON result document (``--output``), and its one-line summary.

"Legacy" names the original harness's formats throughout the code (its CLI
is ``legacy_cli``); the run's random seed is just "seed".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from evals.benchmarks import protocol_lexical, rule_of
from evals.judge.headline import Headline, at_k, headline_of, run_verdicts
from evals.judge.metrics import (
    ALL,
    MetricValue,
    PointValues,
    ScoredRun,
    answer_scores,
    grouped,
    latency_block,
    point_values,
    proportion,
    ranking_depth,
    retrieval_by_category,
    retrieval_rows,
    turn2session_block,
)
from evals.judge.scoring import Scores
from evals.judge.stats import wilson_interval
from evals.model.results import ConversationResult, RunResult, TestPointResult, usage_json
from evals.model.tokens import EXACT
from evals.views.breakdown import answer_figures, category_rows, metrics_additions

if TYPE_CHECKING:
    from evals.model.results import AnswerRun, PointAnswer
    from evals.store import StoredOutcome, StoredRun

__all__ = [
    "conversation_json",
    "dump_json",
    "legacy_json",
    "legacy_json_parts",
    "outcome_json",
    "lexical_block",
    "point_json",
    "recall_block",
    "run_line",
    "stored_legacy_json",
    "summary_line",
    "tokens_block",
]


def dump_json(document: dict[str, Any]) -> bytes:
    """The document as indented UTF-8 JSON, laid out as the original harness wrote it.

    orjson, because the standard library's encoder drops to pure Python when
    indenting, which took most of a second on a 50 MB full_history result.
    """
    return orjson.dumps(document, option=orjson.OPT_INDENT_2, default=_records)


def _records(value: Any) -> list[Any]:
    """What orjson cannot write itself: a run's records with long summaries kept as the turns they fold
    (a sequence of texts, see :meth:`evals.model.results.TestPointResult._records`), written one text at a time."""
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_LEGACY_POINT_KEYS = frozenset({"turn_index", "question", "expected_fact", "expected_keywords", "retrieved_records"})


def point_json(point: TestPointResult) -> dict[str, Any]:
    """A test point as the original harness wrote it, plus the later fields only where the corpus set them."""
    out = point.model_dump(include=_LEGACY_POINT_KEYS)
    if point.evidence_turns:
        out["evidence_turns"] = list(point.evidence_turns)
        out["retrieved_turns"] = point.retrieved_turns
    if point.category is not None:
        out["category"] = point.category
    if not point.answerable:
        out["answerable"] = False
    if point.evidence_sessions:
        out["evidence_sessions"] = list(point.evidence_sessions)
    if point.ranked_turns is not None:  # measured at several cutoffs: the ranking every cutoff reads
        out["ranked_turns"] = list(point.ranked_turns)
        out["ranked_sessions"] = point.ranked_sessions
    if point.ranked_held is not None:  # records holding several turns: per rank, the turns and sessions each holds
        out["ranked_held"] = point.ranked_held
        out["ranked_held_sessions"] = point.ranked_held_sessions
    if point.ranked_tokens is not None:  # kept deep enough to fill the largest budget: per rank, the record's tokens
        out["ranked_tokens"] = list(point.ranked_tokens)
    return out


def legacy_json(
    run: RunResult,
    scores: Scores,
    answers: AnswerRun | None = None,
    metrics: dict[str, MetricValue] | None = None,
    values: PointValues | None = None,
) -> dict[str, Any]:
    """The original harness's output document; keys it never had (``tokenizer``, ``model``, the ``metrics``
    beside ``recall_at_k`` and ``tokens``, the evidence, unanswerable and category blocks of
    corpora that use them, and with answers ``metrics.answers``, ``answers`` and each test
    point's ``answer``, with its token F1 and BLEU-1 against the expected fact) are additions only.

    ``metrics`` (a stored run's values) adds what ``evals run --output`` and ``evals export`` carry and
    the original CLI does not: ``cutoffs``, ``metrics.retrieval`` (and per category),
    ``metrics.latency`` (wall-clock times, which would make ``python -m evals`` output differ run to run),
    ``metrics.headline`` (:mod:`evals.judge.headline`) with each category's in ``metrics.by_category``, and each
    test point's ``verdict`` under it (``hit``, ``miss``, ``unanswerable`` or ``unscored``: the drill-down's).

    ``values`` are the run's :func:`~evals.judge.metrics.point_values`, when the caller has them already."""
    head, tail = legacy_json_parts(run, scores, answers, metrics, values)
    verdicts = None
    if metrics is not None:  # a stored run's document: each test point's verdict under its headline rule
        verdicts = run_verdicts(ScoredRun(run, scores), headline_of(rule_of(run.benchmark), metrics, run.k).rule.metric)
    conversations = [
        conversation_json(
            c,
            answers.points[i] if answers is not None else None,
            answers.protocol if answers is not None else "harness",
            verdicts[i] if verdicts is not None else None,
        )
        for i, c in enumerate(run.conversations)
    ]
    return {**head, "conversations": conversations, **tail}


def outcome_json(outcome: StoredOutcome) -> dict[str, Any]:
    """The document of a run made or reused through the store (:func:`evals.run.workflow.run_with_store`)."""
    return legacy_json(outcome.run, outcome.scores, outcome.answers, outcome.metrics)


def legacy_json_parts(
    run: RunResult,
    scores: Scores,
    answers: AnswerRun | None = None,
    metrics: dict[str, MetricValue] | None = None,
    values: PointValues | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`legacy_json` without its ``conversations``: the keys before them and the keys after them.

    Only counts are read from the records (how many each test point has), so a
    writer that streams a big run can pass a run whose records are placeholders
    of the right number, and write each conversation with :func:`conversation_json`.
    Every number comes from the run's point values (``values``, else worked out here), aggregated by
    :func:`~evals.judge.metrics.grouped`.
    """
    if values is None:
        values = point_values(ScoredRun(run, scores, answers, protocol_lexical(answers and answers.protocol)))
    # The document shows no mean's interval but the answers' F1 and BLEU-1 over the run: only those are drawn.
    overall = grouped(values, names=_BLOCK_METRICS, intervals=answers is not None)[ALL]
    per_conversation = dict(
        zip(
            scores.conversation_ids, grouped(values, "conversation", _CONVERSATION_METRICS, intervals=False).values(), strict=True
        )
    )
    turn_indices = [[tp.turn_index for tp in c.test_points] for c in run.conversations]
    head: dict[str, Any] = {
        "strategy": run.strategy,
        "seed": run.seed,
        "k": run.k,
        "corpus_dir": run.corpus_dir,
        "conversation_count": len(run.conversations),
        "tokenizer": scores.tokenizer,
        "model": run.model,
        "metrics": {
            "recall_at_k": recall_block(scores, overall, per_conversation),
            "tokens": tokens_block(scores, overall, per_conversation),
            **stats_blocks(scores, turn_indices, overall, per_conversation),
            **metrics_additions(run, values),
        },
    }
    tail: dict[str, Any] = {}
    if answers is not None:
        head["metrics"]["answers"] = answers_block(answers) | lexical_block(overall)
        head["metrics"]["answers"]["figures"] = answer_figures(values, answers, run.benchmark)
        tail["answers"] = {
            "answer_model": answers.answer_model,
            "judge_model": answers.judge_model,
            "base_url": answers.base_url,
            "settings": answers.settings,
        }
        if answers.protocol != "harness":  # a published protocol: which, and where its templates were read
            tail["answers"] |= {"protocol": answers.protocol, "protocol_source": answers.protocol_source}
    if metrics is not None:
        _add_measurements(head, tail, run, metrics, values)
    return head, tail


# What the blocks of the original's shape read, per conversation and (with the answers' means) per run.
_CONVERSATION_METRICS = ("recall", "strict_recall", "mrr", "tokens_per_test_point")
_BLOCK_METRICS = (*_CONVERSATION_METRICS, "answer_f1", "answer_bleu1")


def _add_measurements(
    head: dict[str, Any], tail: dict[str, Any], run: RunResult, metrics: dict[str, MetricValue], values: PointValues
) -> None:
    if run.cutoffs:
        tail["cutoffs"] = list(run.cutoffs)
        tail["cutoff_rule"] = run.cutoff_rule
        rows = retrieval_rows(metrics)
        if rows:
            head["metrics"]["retrieval"] = rows
            by_category = retrieval_by_category(values)
            if by_category:
                head["metrics"]["retrieval_by_category"] = by_category
    turn2session = turn2session_block(metrics, run.k, ranking_depth(run))
    if turn2session is not None:
        head["metrics"]["turn2session"] = turn2session
    latency = latency_block(metrics)
    if latency is not None:
        head["metrics"]["latency"] = latency
    headline = headline_of(rule_of(run.benchmark), metrics, run.k)
    head["metrics"]["headline"] = headline.as_dict()
    if "by_category" in head["metrics"]:  # each category under the headline rule too: they add up to it
        head["metrics"]["by_category"] = category_rows(values, headline.rule)


def conversation_json(
    conversation: ConversationResult,
    answers: list[PointAnswer] | None = None,
    protocol: str = "harness",
    verdicts: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One entry of the document's ``conversations``; ``answers`` aligned with its test points, each
    with its F1 and BLEU-1 against the expected fact as ``protocol`` defines them; ``verdicts`` (a stored
    run's, :func:`evals.judge.headline.run_verdicts`) each test point's ``verdict``."""
    points = [point_json(tp) for tp in conversation.test_points]
    if verdicts is not None:
        for point, verdict in zip(points, verdicts, strict=True):
            point["verdict"] = verdict
    if answers is not None:
        for point, result, answer in zip(points, conversation.test_points, answers, strict=True):
            point["answer"] = dataclasses.asdict(answer) | answer_scores(result, answer, protocol_lexical(protocol))
    return {
        "conversation_id": conversation.conversation_id,
        "description": conversation.description,
        "turn_count": conversation.turn_count,
        "test_points": points,
    }


def summary_line(document: dict[str, Any], destination: str | None = None) -> str:
    """The original harness's one-line summary, from its document."""
    metrics = document["metrics"]
    line = (
        f"strategy={document['strategy'].get('name')} "
        f"convs={document['conversation_count']} "
        f"recall@{document['k']}={metrics['recall_at_k']['aggregate']} "
        f"tokens/tp={metrics['tokens']['aggregate_tokens_per_test_point']}"
    )
    answers = metrics.get("answers")
    if answers is not None:
        line += f" keyword_acc={answers['keyword_accuracy']}"
        if answers["judge_model"] is not None:
            line += f" accuracy={answers['accuracy']}"
    if document.get("tokenizer") not in (None, EXACT):
        line += f" (tokens estimated: {document['tokenizer']})"
    return f"{line} -> {destination}" if destination else line


Grouped = dict[str, dict[str, MetricValue]]  # conversation id -> metric -> value


def _by_conversation(scores: Scores) -> tuple[dict[str, MetricValue], Grouped]:
    values = point_values(ScoredRun(None, scores), _CONVERSATION_METRICS)  # type: ignore[arg-type]
    return grouped(values, names=_CONVERSATION_METRICS, intervals=False)[ALL], dict(
        zip(
            scores.conversation_ids, grouped(values, "conversation", _CONVERSATION_METRICS, intervals=False).values(), strict=True
        )
    )


def _rate(value: MetricValue) -> dict[str, Any]:
    """``{hits, total, recall}`` of a proportion."""
    return {"hits": value.successes or 0, "total": value.n, "recall": value.value}


def _interval(value: MetricValue) -> dict[str, Any]:
    """A proportion's 95% Wilson interval as the JSON shows it (``low``/``high`` null without data)."""
    return {"method": "wilson", "level": 0.95, "low": value.low, "high": value.high}


def recall_block(
    scores: Scores, overall: dict[str, MetricValue] | None = None, per_conversation: Grouped | None = None
) -> dict[str, Any]:
    """The original ``metrics.recall_at_k`` block (from the run's grouped values, when given)."""
    if overall is None or per_conversation is None:
        overall, per_conversation = _by_conversation(scores)
    recall = overall["recall"]
    return {
        "aggregate": recall.value,
        "hits": recall.successes or 0,
        "total": recall.n,
        "per_conversation": {cid: _rate(values["recall"]) for cid, values in per_conversation.items()},
    }


def stats_blocks(
    scores: Scores,
    turn_indices: list[list[int]],
    overall: dict[str, MetricValue] | None = None,
    per_conversation: Grouped | None = None,
) -> dict[str, Any]:
    """The ``metrics`` keys added beside the original's: recall's interval, strict recall, MRR,
    and per test point (``turn_indices`` aligned with the points) its strict hit and rank."""
    if overall is None or per_conversation is None:
        overall, per_conversation = _by_conversation(scores)
    per_point = {
        cid: [
            {"turn_index": t, "hit": p.hit, "strict_hit": p.strict_hit, "rank": p.rank} for t, p in zip(turns, conv, strict=True)
        ]
        for cid, conv, turns in zip(scores.conversation_ids, scores.points, turn_indices, strict=True)
    }
    strict = overall["strict_recall"]
    return {
        "recall_at_k_interval": _interval(overall["recall"]),
        "strict_recall_at_k": {
            "aggregate": strict.value,
            "hits": strict.successes or 0,
            "total": strict.n,
            "interval": _interval(strict),
            "per_conversation": {cid: _rate(values["strict_recall"]) for cid, values in per_conversation.items()},
        },
        "mrr": {
            "aggregate": overall["mrr"].value,
            "per_conversation": {cid: values["mrr"].value for cid, values in per_conversation.items()},
        },
        "per_test_point": per_point,
    }


def tokens_block(
    scores: Scores, overall: dict[str, MetricValue] | None = None, per_conversation: Grouped | None = None
) -> dict[str, Any]:
    """The original ``metrics.tokens`` block.

    Where there is no test point the original reported 0 tokens per test
    point, not null; the format keeps that so old readers agree.
    """
    if overall is None or per_conversation is None:
        overall, per_conversation = _by_conversation(scores)
    tokens = overall["tokens_per_test_point"]
    return {
        "aggregate_context_tokens": tokens.total,
        "aggregate_tokens_per_test_point": 0 if tokens.value is None else tokens.value,
        "per_conversation": {
            cid: {
                "context_tokens_sum": (spent := values["tokens_per_test_point"]).total,
                "test_points": spent.n,
                "context_tokens_per_test_point": 0 if spent.value is None else spent.value,
            }
            for cid, values in per_conversation.items()
        },
    }


def answers_block(answers: AnswerRun) -> dict[str, Any]:
    """The result JSON's ``metrics.answers`` block."""
    accuracy = proportion(answers.correct, answers.judged)
    return {
        "answer_model": answers.answer_model,
        "judge_model": answers.judge_model,
        "accuracy": answers.accuracy,
        "accuracy_interval_95": None if accuracy.low is None else [accuracy.low, accuracy.high],
        "correct": answers.correct,
        "judged": answers.judged,
        "keyword_accuracy": answers.keyword_accuracy,
        "keyword_hits": answers.keyword_hits,
        "total": answers.total,
        "mean_latency_s": answers.mean_latency_s,
        "requests_made": answers.requests_made,
        "requests_cached": answers.requests_cached,
        "prompt_tokens": answers.prompt_tokens,
        "completion_tokens": answers.completion_tokens,
    } | _costs_block(answers)


def _costs_block(answers: AnswerRun) -> dict[str, Any]:
    """Per kind of request, sent vs from the cache, tokens, served models, denominator and price
    (``usage``), and with --judge-repeats each repeat's accuracy; nothing for runs made before either."""
    block: dict[str, Any] = {}
    if answers.usage:
        block["usage"] = usage_json(answers.usage)
    accuracies = answers.repeat_accuracies()
    if accuracies is not None:
        block["judge_repeats"] = answers.judge_repeats
        block["repeat_accuracies"] = accuracies
    return block


def lexical_block(overall: dict[str, MetricValue]) -> dict[str, Any]:
    """Mean token F1 and BLEU-1 of the answerable test points' answers, each with its 95% bootstrap
    interval (``null`` without an answerable test point), for ``metrics.answers``."""
    block: dict[str, Any] = {}
    for key, name in (("f1", "answer_f1"), ("bleu1", "answer_bleu1")):
        value = overall[name]
        block[key] = value.value
        block[f"{key}_interval_95"] = None if value.low is None else [value.low, value.high]
    return block


def stored_legacy_json(stored: StoredRun) -> dict[str, Any]:
    """The document ``--output`` wrote for a run read back from the store."""
    return legacy_json(stored.run, stored.scores, stored.answers, stored.summary.metrics)


def _proportion(hits: int, total: int) -> str:
    """``0.381 [0.208, 0.591] (8/21)``: 3 decimals, the 95% Wilson interval, the counts; ``null (0/0)`` without data."""
    interval = wilson_interval(hits, total)
    if interval is None:
        return f"null ({hits}/{total})"
    return f"{hits / total:.3f} [{interval[0]:.3f}, {interval[1]:.3f}] ({hits}/{total})"


def run_line(
    document: dict[str, Any],
    run_id: str,
    destination: str | None = None,
    headline: Headline | None = None,
    tokens: float | None = None,
) -> str:
    """``evals run``'s one-line summary, from a document of the original shape, leading with what the
    leaderboard leads with. On a corpus with evidence that is turn-level recall_any at k:
    ``run <id>: bm25 recall_any@5 0.493 [0.452, 0.534] (98/199) keyword hit@5 0.282 […] (56/199) tokens/tp 110.3``;
    elsewhere keyword hits: ``run <id>: mneme keyword hit@5 0.381 [0.208, 0.591] (8/21) tokens/tp 1393.5``.
    Tokens per test point carry a leading ``~`` when counted with the ~4-characters estimate;
    with answers, accuracy (judged), the protocol's own score where it scores (BEAM, LoCoMo-Plus, LoCoMo's F1: the
    figure the leaderboard's QA column shows) and keyword accuracy follow. ``null``: no test point. ``headline``
    (the stored run's, evals.judge.headline) is what leads; a document alone (None) leads with keyword hits. ``tokens``
    (the stored run's tokens per test point, over the headline's test points) is shown where given, else the
    document's own aggregate (over its answerable test points)."""
    metrics = document["metrics"]
    recall = metrics["recall_at_k"]
    if tokens is None:
        tokens = metrics["tokens"]["aggregate_tokens_per_test_point"] if recall["total"] else None
    mark = "" if document.get("tokenizer", EXACT) == EXACT else "~"
    k = document["k"]
    lead = (
        f"{at_k(headline.rule.label, k)} {_proportion(headline.hits, headline.total)} "
        if headline is not None and headline.rule.by_evidence
        else ""
    )
    strategy = document["strategy"]
    # Which embedder, for a strategy that has one (Mneme's hash embedder has no semantics: say so in the line).
    embedder = f"(embedder {strategy.get('model') or strategy['embedder']}) " if strategy.get("embedder") else ""
    line = (
        f"run {run_id}: {strategy.get('name')} "
        + embedder
        + lead
        + f"keyword hit@{document['k']} {_proportion(recall['hits'], recall['total'])} "
        f"tokens/tp {'null' if tokens is None else f'{mark}{tokens:.1f}'}"
    )
    answers = metrics.get("answers")
    if answers is not None:
        if answers["judge_model"] is not None:
            line += f" accuracy {_proportion(answers['correct'], answers['judged'])}"
        overall = (answers.get("figures") or {}).get("overall") or {}
        if overall.get("interval") == "bootstrap":  # the protocol's own score: what the leaderboard leads its QA with
            line += f" score {overall['value']:.3f} ({overall['n']})"
        keyword = answers["keyword_accuracy"]
        line += f" kw acc {'null' if keyword is None else f'{keyword:.3f}'}"
        unparsed = (answers.get("figures") or {}).get("unparsed") or {}
        if unparsed.get("count"):
            line += f" unparsed {unparsed['count']}/{unparsed['of']}"
    return f"{line} -> {destination}" if destination else line


def unparsed_excess(document: dict[str, Any], limit: float | None) -> str | None:
    """What to say when more than ``limit`` (a share, --max-unparsed) of a run's counted verdicts were
    unparsed (the judge's replies could not be read); None when within it, or without a limit."""
    answers = document["metrics"].get("answers") or {}
    unparsed = (answers.get("figures") or {}).get("unparsed") or {}
    count, of = unparsed.get("count") or 0, unparsed.get("of") or 0
    if limit is None or not of or count / of <= limit:
        return None
    return (
        f"{count} of {of} verdicts unparsed ({count / of:.1%}), above --max-unparsed {limit:g}: the judge's replies "
        "could not be read, so its accuracy says little about the answers (the run is stored)"
    )
