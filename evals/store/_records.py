"""A run as the store writes it (with every metric the judge computes of it), and the compact encoding of retrieved records.

A retrieved record that is the content of an earlier turn of its conversation
is stored as that turn's index; any other record (a summary, say) is stored
as text. full_history over long conversations returns every earlier turn at
every test point, so this keeps such a run to a list of small integers per
test point instead of a quadratic pile of copies.
"""

from __future__ import annotations

import gc
import hashlib
import secrets
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from evals.benchmarks import protocol_lexical, rule_of
from evals.judge.headline import headline_of
from evals.judge.metrics import LatencyBucket, MetricValue, ScoredRun, compute_metrics, over_headline
from evals.judge.scoring import Evaluation, Scores
from evals.model.corpus import Conversation, Reference
from evals.model.provenance import Provenance
from evals.model.results import RunResult, TestPointResult, usage_json
from evals.model.turn_refs import Encoded, TurnLookup, encode_records
from evals.store._errors import StoreError
from evals.store._keys import config_key, reuse_key
from evals.store._models import RunSummary

if TYPE_CHECKING:
    from evals.model.results import AnswerRun

__all__ = [
    "RunRecord",
    "TurnLookup",
    "TurnTokens",
    "decode_records",
    "gc_paused",
    "encode_records",
    "make_summary",
    "new_run_id",
    "run_tables",
    "decode_tokens",
    "record_from_evaluation",
    "CORPUS_BATCH",
    "CORPUS_BATCH_CHARS",
    "RUN_BATCH",
    "RUN_BATCH_CHARS",
    "run_batches",
    "content_digest",
    "corpus_batches",
    "corpus_points",
    "corpus_rows",
    "metrics_table",
    "latency_table",
    "references_table",
    "answers_table",
]


def new_run_id() -> str:
    """12 hex characters: short enough to type, random enough never to collide in one store."""
    return secrets.token_hex(6)


@dataclass(frozen=True)
class RunRecord:
    """Everything one run writes: its summary row, its play-through, its scores, its conversations."""

    summary: RunSummary
    run: RunResult
    scores: Scores
    conversations: Sequence[Conversation]  # the corpus's, in the run's order
    answers: AnswerRun | None = None
    references: Sequence[Reference] = ()  # the corpus folder's published figures (references.json)
    latency: Sequence[LatencyBucket] | None = None  # retrieve latency by size as measured (an import); None: from timings


def as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def make_summary(
    *,
    run_id: str,
    run: RunResult,
    scores: Scores,
    provenance: Provenance,
    corpus_name: str,
    cache_hits: int | None = None,
    cache_misses: int | None = None,
    answers: AnswerRun | None = None,
    measured: dict[str, MetricValue] | None = None,
    tuned_on: list[str] | None = None,
    writes_with_llm: bool | None = None,
) -> RunSummary:
    """The run's summary row; ``measured`` holds metrics that cannot be recomputed from the
    records (wall-clock latency), for a run that arrives without its timings (an import). ``tuned_on`` and
    ``writes_with_llm``: what the run declares about its system (None: nothing declared)."""
    started = as_utc(run.started_at)
    # Each Scores property walks every record; a long run has millions, so read each once.
    hits, total, context_tokens = scores.hits, scores.total, scores.context_tokens
    identity = answers.identity() if answers is not None else None
    # The runs table's recall and tokens columns are the metrics' values, computed in one place.
    scored = ScoredRun(run, scores, answers, protocol_lexical(answers and answers.protocol))
    metrics = compute_metrics(scored)
    rule = headline_of(rule_of(run.benchmark), {**(measured or {}), **metrics}, run.k).rule
    if "tokens_per_test_point" in metrics:  # over the test points the headline counts
        metrics.update(over_headline(scored, rule.metric))
    extra = {}
    if answers is not None:
        extra = {
            "answer_model": answers.answer_model,
            "judge_model": answers.judge_model,
            "llm_base_url": answers.base_url,
            "llm_settings": answers.settings,
            "answers_total": answers.total,
            "answers_judged": answers.judged,
            "answers_correct": answers.correct if answers.judge_model is not None else None,
            "answers_keyword_hits": answers.keyword_hits,
            "answer_latency_s": answers.mean_latency_s,
            "llm_requests_made": answers.requests_made,
            "llm_requests_cached": answers.requests_cached,
            "llm_prompt_tokens": answers.prompt_tokens,
            "llm_completion_tokens": answers.completion_tokens,
            "llm_usage": usage_json(answers.usage) if answers.usage else None,
            "answer_protocol": answers.protocol,
            "protocol_source": answers.protocol_source,
        }
    return RunSummary(
        run_id=run_id,
        commit=provenance.commit,
        dirty=provenance.dirty,
        model=run.model,
        date=started.date().isoformat(),
        timestamp=started,
        strategy=str(run.strategy.get("name", "unknown")),
        strategy_config=dict(run.strategy),
        config_key=config_key(run.strategy, k=run.k, model=run.model, answers=identity),
        k=run.k,
        seed=run.seed,
        corpus_name=corpus_name,
        corpus_dir=run.corpus_dir,
        corpus_digest=run.corpus_digest,
        tokenizer=scores.tokenizer,
        package_version=provenance.package_version,
        mneme_version=provenance.mneme_version,
        python_version=provenance.python_version,
        duration_s=run.duration_s,
        conversation_count=len(run.conversations),
        hits=hits,
        total=total,
        recall=metrics["recall"].value,
        context_tokens=context_tokens,
        tokens_per_test_point=metrics["tokens_per_test_point"].value,
        reuse_key=reuse_key(
            provenance,
            corpus_digest=run.corpus_digest,
            strategy_config=run.strategy,
            model=run.model,
            k=run.k,
            seed=run.seed,
            tokenizer=scores.tokenizer,
            answers=identity,
            cutoffs=run.cutoffs,
        ),
        metrics={**(measured or {}), **metrics},
        cache_hits=cache_hits,
        cache_misses=cache_misses,
        strategy_source=run.strategy_source,
        cutoffs=list(run.cutoffs),
        cutoff_rule=run.cutoff_rule if run.cutoffs else None,
        benchmark=run.benchmark,
        # Its rule as its benchmark is registered now, kept with it: reading it back never asks the registry again.
        rule=rule,
        corpus_release=run.corpus_release,
        corpus_file=run.corpus_file,
        tuned_on=list(tuned_on) if tuned_on is not None else None,
        writes_with_llm=writes_with_llm,
        **extra,
    )


def metrics_table(record: RunRecord) -> pa.Table:
    """The run's ``run_metrics`` rows: one per metric it has, in declaration order."""
    from evals.judge.metrics import declared

    names = list(record.summary.metrics)
    values = [record.summary.metrics[name] for name in names]
    found = [declared(n) for n in names]
    return pa.table(
        {
            "run_id": pa.array([record.summary.run_id] * len(names), pa.string()),
            "metric": pa.array(names, pa.string()),
            "level": pa.array([m.level if m else None for m in found], pa.string()),
            "cutoff": pa.array([m.cutoff if m else None for m in found], pa.int32()),
            "value": pa.array([v.value for v in values], pa.float64()),
            "n": pa.array([v.n for v in values], pa.int64()),
            "low": pa.array([v.low for v in values], pa.float64()),
            "high": pa.array([v.high for v in values], pa.float64()),
        }
    )


def references_table(record: RunRecord) -> pa.Table:
    """The ``corpus_references`` rows of the run's corpus, in the file's order."""
    found = list(record.references)
    column = lambda name, kind: pa.array([getattr(r, name) for r in found], kind)  # noqa: E731
    return pa.table(
        {
            "corpus_digest": pa.array([record.summary.corpus_digest] * len(found), pa.string()),
            "position": pa.array(range(len(found)), pa.int32()),
            "label": column("label", pa.string()),
            "citation": column("citation", pa.string()),
            "metric": column("metric", pa.string()),
            "level": column("level", pa.string()),
            "k": column("k", pa.int32()),
            "value": column("value", pa.float64()),
            "note": column("note", pa.string()),
        }
    )


def latency_table(record: RunRecord) -> pa.Table:
    """The run's ``run_latency`` rows: retrieve latency per bucket of records held (none without timings)."""
    from evals.judge.metrics import latency_by_size

    if record.latency is not None:
        buckets = list(record.latency)
    else:
        buckets = latency_by_size(record.run.timings) if record.run.timings is not None else []
    return pa.table(
        {
            "run_id": pa.array([record.summary.run_id] * len(buckets), pa.string()),
            "call": pa.array(["retrieve"] * len(buckets), pa.string()),
            "held_low": pa.array([b.held_low for b in buckets], pa.int64()),
            "held_high": pa.array([b.held_high for b in buckets], pa.int64()),
            "n": pa.array([b.n for b in buckets], pa.int64()),
            "p50_s": pa.array([b.p50_s for b in buckets], pa.float64()),
            "p95_s": pa.array([b.p95_s for b in buckets], pa.float64()),
            "mean_s": pa.array([b.mean_s for b in buckets], pa.float64()),
        }
    )


def answers_table(record: RunRecord) -> pa.Table | None:
    """The run's ``test_point_answers`` rows, or None for a run without answers."""
    answers = record.answers
    if answers is None:
        return None
    rows: dict[str, list[Any]] = {
        name: []
        for name in (
            "conversation_id",
            "turn_index",
            "answer",
            "prompt_tokens",
            "completion_tokens",
            "latency_s",
            "keyword_hit",
            "correct",
            "reason",
            "judge_prompt_tokens",
            "judge_completion_tokens",
            "answerable",
            "answer_cached",
            "judge_cached",
            "served_model",
            "fingerprint",
            "judge_served_model",
            "repeat_verdicts",
            "category",
            "counted",
            "verdict",
            "score",
            "grades",
        )
    }
    for result, points in zip(record.run.conversations, answers.points, strict=True):
        for point, answer in zip(result.test_points, points, strict=True):
            rows["conversation_id"].append(result.conversation_id)
            rows["turn_index"].append(point.turn_index)
            for name in list(rows)[2:]:
                rows[name].append(getattr(answer, name))
    types = {
        "conversation_id": pa.string(),
        "turn_index": pa.int32(),
        "answer": pa.string(),
        "prompt_tokens": pa.int32(),
        "completion_tokens": pa.int32(),
        "latency_s": pa.float64(),
        "keyword_hit": pa.bool_(),
        "correct": pa.bool_(),
        "reason": pa.string(),
        "judge_prompt_tokens": pa.int32(),
        "judge_completion_tokens": pa.int32(),
        "answerable": pa.bool_(),
        "answer_cached": pa.bool_(),
        "judge_cached": pa.bool_(),
        "served_model": pa.string(),
        "fingerprint": pa.string(),
        "judge_served_model": pa.string(),
        "repeat_verdicts": pa.list_(pa.string()),
        "category": pa.string(),
        "counted": pa.bool_(),
        "verdict": pa.string(),
        "score": pa.float64(),
        "grades": pa.list_(pa.float64()),
    }
    count = len(rows["conversation_id"])
    return pa.table(
        {"run_id": pa.array([record.summary.run_id] * count, pa.string())}
        | {name: pa.array(values, types[name]) for name, values in rows.items()}
    )


def record_from_evaluation(
    evaluation: Evaluation,
    provenance: Provenance,
    *,
    run_id: str | None = None,
    cache_hits: int | None = None,
    cache_misses: int | None = None,
    tuned_on: list[str] | None = None,
    writes_with_llm: bool | None = None,
) -> RunRecord:
    summary = make_summary(
        run_id=run_id or new_run_id(),
        run=evaluation.run,
        scores=evaluation.scores,
        provenance=provenance,
        corpus_name=evaluation.corpus.name,
        cache_hits=cache_hits,
        cache_misses=cache_misses,
        answers=evaluation.answers,
        tuned_on=tuned_on,
        writes_with_llm=writes_with_llm,
    )
    return RunRecord(
        summary,
        evaluation.run,
        evaluation.scores,
        evaluation.corpus.conversations,
        evaluation.answers,
        references=evaluation.corpus.references,
    )


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector during a bulk encode.

    Encoding a long run allocates hundreds of thousands of short-lived objects
    next to the millions the run itself holds; without this, repeated full
    collections over that heap cost more than the encoding. Nothing made here
    is cyclic, so reference counting frees it all the same.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- records <-> turn references (the mapping itself is evals.model.turn_refs) -----------------------


# A record that is not a turn is stored as its text, except summary_buffer's default summary of the
# first n recorded turns before its test point: that is f"{SUMMARY} {n}" (6.7 M characters of text a test
# point over a LongMemEval_m haystack, which DuckDB would hold uncompressed until the append commits).
# A text that starts with the mark itself is stored with the mark doubled, so no text reads as a summary.
MARK = "\x00"
SUMMARY = MARK + "summary"
# summary_buffer's default summary of n evicted turns (evals.strategies.summary_buffer; the store sits
# above the strategies and may not import them): the head once per fold, "system: " between, the turns
# joined. A text is kept as a reference only when rebuilding it gives that text exactly, so a change of
# the summariser's format makes summaries stored as text again, never misread.
_SUMMARY_HEAD = "Earlier in the conversation: "
_NEST = _SUMMARY_HEAD + "system: "  # how a summary opens once per earlier summary it nests


def nested_summary(turns: Iterable[dict[str, str]]) -> str:
    """The default summary of ``turns`` (``{"role", "content"}``) evicted one at a time, in order."""
    parts = [f"{turn['role']}: {turn['content']}" for turn in turns]
    return _NEST * (len(parts) - 1) + _SUMMARY_HEAD + " | ".join(parts)


def compact_text(text: str, before: int, roles: Sequence[str], contents: Sequence[str], recorded: Sequence[bool] | None) -> str:
    """How the store keeps ``text``, a record of the test point at turn ``before`` that is no turn."""
    if text.startswith(MARK):
        return MARK + text
    if not text.startswith(_SUMMARY_HEAD):
        return text
    depth = _nesting(text)  # then the summary of that many turns is rebuilt and compared, exactly
    turns = [i for i in range(before) if recorded is None or recorded[i]]
    if 0 < depth <= len(turns) and text == nested_summary({"role": roles[i], "content": contents[i]} for i in turns[:depth]):
        return f"{SUMMARY} {depth}"
    return text


def _nesting(text: str) -> int:
    """How many turns a default summary folds: one more than the times it opens with the nested head."""
    depth, position = 1, 0
    while text.startswith(_NEST, position):
        depth += 1
        position += len(_NEST)
    return depth


def expand_text(stored: str, before: int, roles: Sequence[str], contents: Sequence[str], unrecorded: Sequence[int] | None) -> str:
    """The record ``stored`` keeps (see :func:`compact_text`)."""
    if not stored.startswith(MARK):
        return stored
    if not stored.startswith(SUMMARY + " "):
        return stored[len(MARK) :]
    depth = int(stored[len(SUMMARY) + 1 :])
    skip = set(unrecorded or ())
    turns = [i for i in range(before) if i not in skip][:depth]
    return nested_summary({"role": roles[i], "content": contents[i]} for i in turns)


def decode_records(
    refs: list[int | None],
    texts: list[str],
    contents: list[str],
    *,
    before: int = 0,
    roles: Sequence[str] = (),
    unrecorded: Sequence[int] | None = None,
) -> list[str]:
    """A test point's records from its stored refs and texts; ``before`` (its turn), ``roles`` and
    ``unrecorded`` (its conversation's) expand a stored summary."""
    pending = (expand_text(text, before, roles, contents, unrecorded) for text in texts)
    return [contents[i] if i is not None else next(pending) for i in refs]


def decode_tokens(refs: list[int | None], text_tokens: list[int], turn_tokens: list[int | None]) -> list[int]:
    pending = iter(text_tokens)
    return [turn_tokens[i] if i is not None else next(pending) for i in refs]


class TurnTokens:
    """The token count of each turn of one conversation, learnt from the records that are turns.

    A turn's count is the same wherever it is retrieved (counts are a function
    of the text), so a run stores it once per turn, not once per retrieval:
    full_history over long conversations retrieves each turn hundreds of times.
    Turns 0..prefix-1 are all known; the common case, a record span inside or
    extending that prefix, is checked and filled with list slices rather than a
    Python loop over every record.
    """

    def __init__(self, turn_count: int) -> None:
        self.counts: list[int | None] = [None] * turn_count
        self._prefix = 0
        self._known_beyond_prefix = False

    def fold(self, encoded: Encoded, tokens: list[int]) -> list[int]:
        """Learn the counts of the records that are turns; return the other records' counts, in order."""
        if encoded.span is not None and encoded.span[0] <= self._prefix and not self._known_beyond_prefix:
            start, stop = encoded.span
            seen = min(stop, self._prefix)
            if self.counts[start:seen] == tokens[: seen - start]:
                if stop > seen:
                    self.counts[seen:stop] = tokens[seen - start :]
                    self._prefix = stop
                return []
        others: list[int] = []
        for ref, count in zip(encoded.refs.tolist(), tokens, strict=True):
            if ref < 0:
                others.append(count)
            elif self.counts[ref] is None:
                self.counts[ref] = count
                self._known_beyond_prefix = True
            elif self.counts[ref] != count:
                raise StoreError(f"turn {ref} is counted as both {self.counts[ref]} and {count} tokens in one run")
        return others


# -- arrow tables for the bulk inserts ----------------------------------------------------------


def _list_array(lengths: list[int], values: pa.Array, present: list[bool] | None = None) -> pa.Array:
    """``values`` cut into consecutive lists of ``lengths``; ``present``: False where the list is NULL."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    mask = None if present is None else pa.array([not p for p in present], pa.bool_())
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)


def run_tables(record: RunRecord, start: int = 0, stop: int | None = None, *, compact: bool = True) -> tuple[pa.Table, pa.Table]:
    """The run's ``test_points`` rows (records as turn references) and ``run_turn_tokens`` rows,
    of its conversations ``start:stop`` (all by default). ``compact``: default summaries as
    references (:func:`compact_text`); False for a store at a schema before 11, which keeps texts."""
    run_id = record.summary.run_id
    conversation_ids: list[str] = []
    turn_indices: list[int] = []
    hits: list[bool] = []
    strict_hits: list[bool] = []
    ranks: list[int | None] = []
    context_tokens: list[int] = []
    ref_parts: list[np.ndarray] = []
    text_values: list[str] = []
    text_tokens: list[int] = []
    text_lengths: list[int] = []
    per_conversation: list[tuple[str, list[int | None]]] = []
    source_turns: list[list[int | None] | None] = []  # only where the strategy named other turns than the texts are
    ranked_turns: list[list[int | None] | None] = []  # down to the deepest cutoff, for test points with evidence
    ranked_held: list[list[list[int]] | None] = []  # per rank, the turns its record holds, where one holds several
    ranked_tokens: list[list[int] | None] = []  # per rank, the record's tokens, where the ranking fills the budgets
    chosen = slice(start, stop)
    for result, conversation, scored in zip(
        record.run.conversations[chosen], record.conversations[chosen], record.scores.points[chosen], strict=True
    ):
        turns = TurnLookup(conversation)
        roles = [turn.role for turn in conversation.turns]
        turn_tokens = TurnTokens(len(turns.contents))
        for point, score in zip(result.test_points, scored, strict=True):
            encoded = encode_records(point.retrieved_records, turns, point.turn_index)
            conversation_ids.append(result.conversation_id)
            turn_indices.append(point.turn_index)
            hits.append(score.hit)
            strict_hits.append(score.strict_hit)
            ranks.append(score.rank)
            context_tokens.append(sum(score.record_tokens))
            ref_parts.append(encoded.refs)
            text_values.extend(
                compact_text(text, point.turn_index, roles, turns.contents, turns.recorded) if compact else text
                for text in encoded.texts
            )
            text_tokens.extend(turn_tokens.fold(encoded, score.record_tokens))
            text_lengths.append(len(encoded.texts))
            declared = point.retrieved_turns
            refs = [None if r < 0 else int(r) for r in encoded.refs.tolist()] if declared is not None else None
            source_turns.append(list(declared) if declared is not None and declared != refs else None)
            ranked_turns.append(_deepest_ranking(point))
            ranked_held.append(point.ranked_held)
            ranked_tokens.append(point.ranked_tokens if point.cutoff_rankings is None else None)
        per_conversation.append((result.conversation_id, turn_tokens.counts))
    lengths = [len(part) for part in ref_parts]
    flat_refs = np.concatenate(ref_parts) if ref_parts else np.zeros(0, dtype=np.int32)
    points = pa.table(
        {
            "run_id": pa.array([run_id] * len(conversation_ids), pa.string()),
            "conversation_id": pa.array(conversation_ids, pa.string()),
            "turn_index": pa.array(turn_indices, pa.int32()),
            "hit": pa.array(hits, pa.bool_()),
            "strict_hit": pa.array(strict_hits, pa.bool_()),
            "rank": pa.array(ranks, pa.int32()),
            "context_tokens": pa.array(context_tokens, pa.int64()),
            "record_turns": _list_array(lengths, pa.array(flat_refs, pa.int32(), mask=flat_refs < 0)),
            "record_texts": _list_array(text_lengths, pa.array(text_values, pa.string())),
            "text_tokens": _list_array(text_lengths, pa.array(text_tokens, pa.int32())),
            "source_turns": pa.array(source_turns, pa.list_(pa.int32())),
            "ranked_turns": pa.array(ranked_turns, pa.list_(pa.int32())),
            "ranked_held": pa.array(ranked_held, pa.list_(pa.list_(pa.int32()))),
            "ranked_tokens": pa.array(ranked_tokens, pa.list_(pa.int32())),
        }
    )
    tokens = pa.table(
        {
            "run_id": pa.array([run_id] * len(per_conversation), pa.string()),
            "conversation_id": pa.array([cid for cid, _ in per_conversation], pa.string()),
            "turn_tokens": pa.array([counts for _, counts in per_conversation], pa.list_(pa.int32())),
        }
    )
    return points, tokens


def _deepest_ranking(point: TestPointResult) -> list[int | None] | None:
    if point.cutoff_rankings:
        return list(point.cutoff_rankings[max(point.cutoff_rankings)][0])
    return list(point.ranked_turns) if point.ranked_turns is not None else None


# Conversations per batch when a corpus is written to or compared with the store, at most: a batch
# holds at most CORPUS_BATCH_CHARS characters of turn text too (one LongMemEval_m haystack is 6.5 M),
# so a batch is a few tens of megabytes however long the conversations are.
CORPUS_BATCH = 25
CORPUS_BATCH_CHARS = 32 * 1024**2
# Conversations per batch of a run's rows (test points, turn tokens) as the store writes them, at most;
# and at most RUN_BATCH_CHARS characters of retrieved text (summary_buffer's records over a
# LongMemEval_m haystack are 6.7 M characters a test point), unless one conversation has more.
RUN_BATCH = 50
RUN_BATCH_CHARS = 32 * 1024**2


def run_batches(run: RunResult) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each batch of the run's conversations whose rows the store writes together."""
    start, chars = 0, 0
    for index, conversation in enumerate(run.conversations):
        size = sum(len(record) for point in conversation.test_points for record in point.retrieved_records)
        if index > start and (index - start >= RUN_BATCH or chars + size > RUN_BATCH_CHARS):
            yield start, index
            start, chars = index, 0
        chars += size
    if start < len(run.conversations):
        yield start, len(run.conversations)


def content_digest(conversation: Conversation) -> str:
    """sha256 of one conversation's canonical content: the JSON the corpus digest hashes for it."""
    return hashlib.sha256(conversation.model_dump_json(exclude_defaults=True).encode("utf-8")).hexdigest()


def corpus_batches(conversations: Iterable[Conversation]) -> Iterator[tuple[int, list[Conversation]]]:
    """``conversations`` in batches of at most CORPUS_BATCH conversations and (unless a single one is
    longer) CORPUS_BATCH_CHARS characters of text, each with the position of its first; walks them once."""
    batch: list[Conversation] = []
    chars = 0
    offset = 0
    for conversation in conversations:
        size = sum(len(turn.content) for turn in conversation.turns)
        if batch and (len(batch) >= CORPUS_BATCH or chars + size > CORPUS_BATCH_CHARS):
            yield offset, batch
            offset += len(batch)
            batch, chars = [], 0
        batch.append(conversation)
        chars += size
    if batch:
        yield offset, batch


def corpus_rows(
    corpus_digest: str, conversations: Sequence[Conversation], *, offset: int = 0, turn_rows: bool = True
) -> tuple[pa.Table, pa.Table | None]:
    """The rows of ``conversations``, the first at position ``offset`` of its corpus: its ``conversations``
    rows (all but the turns, and how many there are) and its ``conversation_turns`` rows (one per turn).
    ``turn_rows=False``: a store before schema 12, whose ``conversations`` rows hold the turns as
    parallel lists, and which has no table of turns (None). Each conversation is walked once (it may be
    read from its file)."""
    meta: dict[str, list[Any]] = {
        name: [] for name in ("conversation_id", "description", "unrecorded", "turn_count", "content_digest")
    }
    turn: dict[str, list[Any]] = {
        name: [] for name in ("position", "conversation_id", "turn_index", "role", "content", "session", "date")
    }
    with_sessions: list[bool] = []  # per conversation: any turn has a session (else its list is NULL before schema 12)
    with_dates: list[bool] = []
    for position, conversation in enumerate(conversations, start=offset):
        turns = conversation.turns
        meta["conversation_id"].append(conversation.id)
        meta["description"].append(conversation.description)
        meta["unrecorded"].append([i for i, t in enumerate(turns) if not t.record] or None)
        meta["turn_count"].append(len(turns))
        meta["content_digest"].append(content_digest(conversation))
        sessions = [getattr(t, "session", None) for t in turns]
        dates = [getattr(t, "date", None) for t in turns]
        with_sessions.append(any(v is not None for v in sessions))
        with_dates.append(any(v is not None for v in dates))
        turn["position"].extend([position] * len(turns))
        turn["conversation_id"].extend([conversation.id] * len(turns))
        turn["turn_index"].extend(range(len(turns)))
        turn["role"].extend(t.role for t in turns)
        turn["content"].extend(t.content for t in turns)
        turn["session"].extend(sessions)
        turn["date"].extend(dates)
    count = len(meta["conversation_id"])
    rows = pa.table(
        {
            "corpus_digest": pa.array([corpus_digest] * count, pa.string()),
            "position": pa.array(range(offset, offset + count), pa.int32()),
            "conversation_id": pa.array(meta["conversation_id"], pa.string()),
            "description": pa.array(meta["description"], pa.string()),
            "unrecorded": pa.array(meta["unrecorded"], pa.list_(pa.int32())),
            "turn_count": pa.array(meta["turn_count"], pa.int32()),
            "content_digest": pa.array(meta["content_digest"], pa.string()),
        }
    )
    del meta
    flat = {
        "position": pa.array(turn.pop("position"), pa.int32()),
        "conversation_id": pa.array(turn.pop("conversation_id"), pa.string()),
        "turn_index": pa.array(turn.pop("turn_index"), pa.int32()),
        "role": pa.array(turn.pop("role"), pa.string()),
        "content": pa.array(turn.pop("content"), pa.string()),
        "session": pa.array(turn.pop("session"), pa.string()),
        "date": pa.array(turn.pop("date"), pa.string()),
    }
    if turn_rows:
        return rows, pa.table({"corpus_digest": pa.array([corpus_digest] * len(flat["content"]), pa.string()), **flat})
    lengths = rows.column("turn_count").to_pylist()
    lists = {
        "roles": _list_array(lengths, flat["role"]),
        "contents": _list_array(lengths, flat["content"]),
        "sessions": _list_array(lengths, flat["session"], present=with_sessions),
        "dates": _list_array(lengths, flat["date"], present=with_dates),
    }
    for name, column in lists.items():
        rows = rows.append_column(name, column)
    return rows, None


def corpus_points(corpus_digest: str, conversations: Iterable[Conversation], digests: list[str] | None = None) -> pa.Table:
    """The ``corpus_test_points`` rows of a corpus; with ``digests`` (a list), each conversation's
    :func:`content_digest` appended to it in the same walk (a corpus read from its files as walked costs
    a read of every file per walk: a third of a run's time on BEAM-10M, 611 MB of files)."""
    texts = pa.list_(pa.string())
    tests = []
    for c in conversations:
        tests.extend((c.id, index, test) for index, test in c.test_points())
        if digests is not None:
            digests.append(content_digest(c))
    return pa.table(
        {
            "corpus_digest": pa.array([corpus_digest] * len(tests), pa.string()),
            "conversation_id": pa.array([cid for cid, _, _ in tests], pa.string()),
            "turn_index": pa.array([index for _, index, _ in tests], pa.int32()),
            "question": pa.array([t.question for _, _, t in tests], pa.string()),
            "expected_fact": pa.array([t.expected_fact for _, _, t in tests], pa.string()),
            "expected_keywords": pa.array([list(t.expected_keywords) for _, _, t in tests], texts),
            "evidence_turns": pa.array([list(t.evidence_turns) or None for _, _, t in tests], pa.list_(pa.int32())),
            "category": pa.array([t.category for _, _, t in tests], pa.string()),
            "answerable": pa.array([t.answerable for _, _, t in tests], pa.bool_()),
            "evidence_sessions": pa.array([list(t.evidence_sessions) or None for _, _, t in tests], texts),
            "rubric": pa.array([list(t.rubric) or None for _, _, t in tests], texts),
        }
    )
