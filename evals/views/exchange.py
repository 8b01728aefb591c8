"""Export a stored run to a file, and read such a file back for import.

An export is the original harness's JSON document (every original key as it is,
so ``jq`` recipes keep working) plus one ``run`` block holding what the original
shape lacks: the run id, provenance, each conversation's turns (with their
sessions and dates) and each test point's hit, per-record token counts and the
corpus's own evidence sessions. With the original keys that is all the corpus
digest covers, so an import recomputes the digest the run was stored under, and
appends the run to another store exactly as it was; importing is idempotent by run id.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from evals.benchmarks import ProtocolName
from evals.io import jsonfile
from evals.judge.metrics import LatencyBucket, MetricValue, declared, measured_only, parse_retrieval_key
from evals.judge.retrieval import held_sessions, sessions_of
from evals.judge.scoring import PointScore, Scores, score_point
from evals.model.corpus import Conversation, Label, Reference, corpus_digest, known_benchmark
from evals.model.costs import MAX_PRICE
from evals.model.provenance import NO_GIT, Provenance
from evals.model.results import (
    MAX_K,
    MAX_SEED,
    MAX_SERVED_NAME,
    MIN_SEED,
    PER_CUTOFF,
    PREFIX,
    AnswerRun,
    ConversationResult,
    PointAnswer,
    RunResult,
    TestPointResult,
    usage_from_json,
)
from evals.model.turn_refs import TurnLookup, record_turns
from evals.store import RunRecord, StoredRun, StoreError, make_summary
from evals.views.report import legacy_json

__all__ = ["EXPORT_FORMAT", "EXPORT_FORMAT_VERSION", "export_document", "read_export"]

EXPORT_FORMAT = "mneme-evals-run"
EXPORT_FORMAT_VERSION = 1


_RUN_ID = re.compile(r"[0-9a-f]{12}")  # evals.store's new_run_id
_COMMIT = re.compile(rf"[0-9a-f]{{40}}|[0-9a-f]{{64}}|{NO_GIT}")  # git's SHA-1 or SHA-256, or outside git
_DIGEST = re.compile(r"[0-9a-f]{64}")
CLOCK_SKEW = timedelta(minutes=10)  # how far in the future an imported run's timestamp may be
# The earliest timestamp an imported run may have. Any real one is later; and a moment at the edge of
# what datetime holds (year 1 at +14:00) cannot even be turned into UTC, which the store does.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def _shaped(pattern: re.Pattern[str], what: str):
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            shown = value if len(value) <= 60 else value[:60] + "…"
            raise PydanticCustomError("shape", "{text}", {"text": f"expected {what}, got {shown!r}"})
        return value

    return AfterValidator(check)


RunId = Annotated[str, _shaped(_RUN_ID, "a run id (12 lower-case hex digits)")]
Commit = Annotated[str, _shaped(_COMMIT, f"a git commit (40 or 64 lower-case hex digits) or {NO_GIT!r}")]
Digest = Annotated[str, _shaped(_DIGEST, "a sha256 (64 lower-case hex digits)")]
Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
_Served = Annotated[str, Field(max_length=MAX_SERVED_NAME)]  # a served model's name or fingerprint


def _when_a_run_could_be(moment: datetime) -> datetime:
    """``moment`` when a run can have been made then: from :data:`EARLIEST` to now (give or take the clock's skew)."""
    now = datetime.now(UTC)
    if moment < EARLIEST:  # compared without converting, which is what overflows
        text = f"{moment.isoformat()} is before {EARLIEST.isoformat()}; no run was made then"
        raise PydanticCustomError("too_early", "{text}", {"text": text})
    if moment > now + CLOCK_SKEW:
        text = (
            f"{moment.isoformat()} is in the future (it is {now.isoformat(timespec='seconds')} now); "
            "a run cannot have been made later than it is imported"
        )
        raise PydanticCustomError("future", "{text}", {"text": text})
    return moment


class _Closed(BaseModel):
    """The export format is ours: a key it does not define is an error, never dropped unread."""

    model_config = ConfigDict(extra="forbid")


# The corpus digest covers every field of the corpus, so the run block carries each one the original
# keys lack; those added to the corpus later are written only where set, as the corpus writes them,
# and absent from exports written before them.
class _Turn(_Closed):
    role: str
    content: str
    record: bool = True
    session: Label | None = None
    date: Label | None = None


class _Point(_Closed):
    hit: bool
    record_tokens: list[Count]
    # The corpus's own list; the original keys' evidence_sessions may be derived from the evidence turns.
    evidence_sessions: list[Label] = Field(default_factory=list)
    # The corpus's rubric of the point (BEAM), which its digest covers; absent: none.
    rubric: list[str] = Field(default_factory=list)


class _Conversation(_Closed):
    conversation_id: str
    turns: list[_Turn] = Field(min_length=1)
    test_points: list[_Point]


class _Bucket(_Closed):
    """One bucket of retrieve latency by records held, as measured."""

    held_low: Count
    held_high: Count
    n: Count
    p50_s: Seconds
    p95_s: Seconds
    mean_s: Seconds


def _metric_name(name: str) -> str:
    if declared(name) is None:
        raise PydanticCustomError("unknown_metric", "{text}", {"text": f"{name!r} is not a metric this evals knows"})
    return name


class _Measured(_Closed):
    """One measured metric's value, as :class:`evals.judge.metrics.MetricValue` holds it."""

    value: float | None
    n: Count
    low: float | None = None
    high: float | None = None


class _RunBlock(_Closed):
    format: Literal["mneme-evals-run"]
    format_version: int = Field(ge=1)
    run_id: RunId
    commit: Commit
    dirty: bool
    timestamp: Annotated[AwareDatetime, AfterValidator(_when_a_run_could_be)]
    duration_s: Seconds
    corpus_name: str
    corpus_digest: Digest
    package_version: str
    mneme_version: str | None
    python_version: str
    strategy_source: str | None = None  # absent from exports written before it was recorded
    # The retrieval metrics' cutoffs and rule (evals.model.results); absent from exports written before them.
    cutoffs: list[Annotated[int, Field(ge=1, le=MAX_K)]] = Field(default_factory=list)
    cutoff_rule: Literal["prefix", "whole_list", "per_cutoff"] | None = None
    # The benchmark the corpus declared (in its digest); absent from exports of corpora declaring none.
    benchmark: Annotated[str, AfterValidator(known_benchmark)] | None = None  # a registered unit's name
    # Where the corpus came from (evals.model.results.RunResult); absent from exports written before it was recorded.
    corpus_release: str | None = None
    corpus_file: str | None = None
    # What the run declares about its system (absent: nothing declared, or written before they were recorded).
    tuned_on: list[str] | None = None
    writes_with_llm: bool | None = None
    # Who ran it (evals.judge.origin), where the store it came from recorded one: a run imported there from a board
    # file. Absent: the harness's own run, which an export moves between stores as it is.
    origin: dict[str, Any] | None = None
    latency_by_size: list[_Bucket] = Field(default_factory=list)  # measured: retrieve latency by records held
    references: list[Reference] = Field(default_factory=list)  # the corpus's published figures
    measured: dict[Annotated[str, AfterValidator(_metric_name)], _Measured] = Field(default_factory=dict)
    cache_hits: Count | None = None  # absent from exports written before they were recorded
    cache_misses: Count | None = None
    conversations: list[_Conversation]


class _Answer(_Closed):
    """One test point's ``answer`` in an export made with --with-answers: a PointAnswer's fields."""

    answer: str
    prompt_tokens: Count
    completion_tokens: Count
    latency_s: Seconds
    keyword_hit: bool
    correct: bool | None = None
    reason: str | None = None
    judge_prompt_tokens: Count | None = None
    judge_completion_tokens: Count | None = None
    answerable: bool = True
    # costs and served models (absent from exports written before they were recorded)
    answer_cached: bool | None = None
    judge_cached: bool | None = None
    served_model: _Served | None = None
    fingerprint: _Served | None = None
    judge_served_model: _Served | None = None
    repeat_verdicts: list[Literal["correct", "wrong", "unparsed", "partial"]] | None = None
    # the protocol's reading (absent from exports written before protocols)
    category: str | None = None
    counted: bool | None = None
    verdict: Literal["correct", "wrong", "unparsed", "partial"] | None = None
    score: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    # A graded judge's reading of each request (absent from exports written before them)
    grades: list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None] | None = None
    # Recomputed from the answer and the expected fact (absent from exports written before them);
    # the import checks them against the recomputed values like every other key.
    f1: float | None = None
    bleu1: float | None = None


class _AnswersBlock(_Closed):
    answer_model: str
    judge_model: str | None
    base_url: str
    settings: dict[str, Any]
    protocol: ProtocolName = "harness"  # absent: the harness's prompts
    protocol_source: dict[str, Any] | None = None


class _ServedBy(_Closed):
    model: _Served | None
    fingerprint: _Served | None
    requests: Count


class _Price(_Closed):
    input: Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
    output: Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
    date: str | None
    source: str


class _Tally(_Closed):
    """One kind of request's tally (evals.model.results.RequestTally.as_json)."""

    model: str
    sent: Count
    cached: Count
    prompt_tokens: Count
    completion_tokens: Count
    cached_prompt_tokens: Count
    cached_completion_tokens: Count
    per: Count
    served: list[_ServedBy]
    price: _Price | None


class _AnswerTotals(BaseModel):
    requests_made: Count
    requests_cached: Count
    prompt_tokens: Count
    completion_tokens: Count
    usage: dict[Literal["answer", "judge", "memory_write"], _Tally] | None = None  # absent from exports before costs


class _Exported(BaseModel):
    """The original keys an import needs, plus the ``run`` block."""

    model_config = ConfigDict(extra="allow")

    strategy: dict[str, Any]
    seed: int = Field(ge=MIN_SEED, le=MAX_SEED)
    k: int = Field(ge=1, le=MAX_K)
    corpus_dir: str
    tokenizer: str
    model: str
    conversations: list[ConversationResult]
    run: _RunBlock


def export_document(stored: StoredRun) -> dict[str, Any]:
    """The original JSON document of a stored run plus the ``run`` block that lets it be imported elsewhere."""
    summary = stored.summary
    document = legacy_json(stored.run, stored.scores, stored.answers, stored.summary.metrics)
    document["run"] = {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "run_id": summary.run_id,
        "commit": summary.commit,
        "dirty": summary.dirty,
        "timestamp": summary.timestamp.isoformat(),
        "duration_s": summary.duration_s,
        "corpus_name": summary.corpus_name,
        "corpus_digest": summary.corpus_digest,
        "package_version": summary.package_version,
        "mneme_version": summary.mneme_version,
        "python_version": summary.python_version,
        "strategy_source": summary.strategy_source,
        # Wall-clock metrics cannot be recomputed from the records, so they travel as measured.
        "measured": {
            name: dataclasses.asdict(value) for name, value in summary.metrics.items() if _measured(name, summary.cutoff_rule)
        },
        "cutoffs": summary.cutoffs,
        "cutoff_rule": summary.cutoff_rule,
        **({"benchmark": summary.benchmark} if summary.benchmark is not None else {}),
        **{name: getattr(summary, name) for name in ("corpus_release", "corpus_file") if getattr(summary, name) is not None},
        **{
            name: getattr(summary, name)
            for name in ("tuned_on", "writes_with_llm", "origin")
            if getattr(summary, name) is not None
        },
        "latency_by_size": [dataclasses.asdict(bucket) for bucket in stored.latency],
        "references": [reference.model_dump() for reference in stored.references],
        "cache_hits": summary.cache_hits,
        "cache_misses": summary.cache_misses,
        "conversations": [
            {
                "conversation_id": result.conversation_id,
                "turns": _turns(stored, result.conversation_id),
                "test_points": _points(
                    points, stored.listed_sessions.get(result.conversation_id), stored.rubrics.get(result.conversation_id)
                ),
            }
            for result, points in zip(stored.run.conversations, stored.scores.points, strict=True)
        ],
    }
    return document


def _turns(stored: StoredRun, cid: str) -> list[dict[str, Any]]:
    """A conversation's turns as the corpus gives them (the fields it leaves unset left out)."""
    turns: list[dict[str, Any]] = [{"role": r, "content": c} for r, c in stored.transcripts[cid]]
    for index in stored.unrecorded.get(cid, ()):
        turns[index]["record"] = False
    for name, labels in (("session", stored.sessions), ("date", stored.dates)):
        for turn, value in zip(turns, labels.get(cid, [None] * len(turns)), strict=True):
            if value is not None:
                turn[name] = value
    return turns


def _points(
    points: Sequence[PointScore], listed: Sequence[Sequence[str]] | None, rubrics: Sequence[Sequence[str]] | None = None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"hit": p.hit, "record_tokens": list(p.record_tokens)} for p in points]
    for point, sessions, rubric in zip(out, listed or [[]] * len(out), rubrics or [[]] * len(out), strict=True):
        if sessions:
            point["evidence_sessions"] = list(sessions)
        if rubric:
            point["rubric"] = list(rubric)
    return out


def _first_problem(exc: ValidationError, prefix: tuple[int | str, ...] = ()) -> str:
    error = exc.errors()[0]
    loc = error["loc"][:-1] if error["loc"][-1:] == ("[key]",) else error["loc"]  # pydantic's mark of a bad dict key
    where = jsonfile.json_path((*prefix, *loc))
    extra = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return f"{where}: {_message(error)}{extra}"


def _message(error: dict[str, Any]) -> str:
    """pydantic's message, said as this tool says it where a bound was crossed."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in ("greater_than_equal", "less_than_equal"):
        bound = ctx.get("ge", ctx.get("le"))
        bound = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
        return f"must be at {'least' if kind == 'greater_than_equal' else 'most'} {bound}, got {error['input']!r}"
    if kind == "finite_number":
        return "must be a finite number"
    if kind == "extra_forbidden":
        return "unknown field (an evals export has no such key)"
    return error["msg"]


def _rebuild(doc: _Exported, name: str, raw: dict[str, Any]) -> RunRecord:
    block = doc.run
    if block.format_version > EXPORT_FORMAT_VERSION:
        raise StoreError(
            f"{name}: export format version {block.format_version} is newer than this evals reads ({EXPORT_FORMAT_VERSION})"
        )
    if [c.conversation_id for c in doc.conversations] != [c.conversation_id for c in block.conversations]:
        raise StoreError(f"{name}: run.conversations does not list the same conversations as conversations")
    conversations: list[Conversation] = []
    points: list[list[PointScore]] = []
    for result, stored in zip(doc.conversations, block.conversations, strict=True):
        where = f"{name}: conversation {result.conversation_id!r}"
        if result.turn_count != len(stored.turns):
            raise StoreError(f"{where}: turn_count is {result.turn_count} but run block has {len(stored.turns)} turns")
        if len(result.test_points) != len(stored.test_points):
            raise StoreError(f"{where}: {len(result.test_points)} test points but run block scores {len(stored.test_points)}")
        tests = {}
        for point, score in zip(result.test_points, stored.test_points, strict=True):
            if not 0 <= point.turn_index < len(stored.turns) or point.turn_index in tests:
                raise StoreError(f"{where}: test point turn_index {point.turn_index} is out of range or repeated")
            if len(score.record_tokens) != len(point.retrieved_records):
                raise StoreError(f"{where}, turn {point.turn_index}: record_tokens and retrieved_records differ in length")
            tests[point.turn_index] = {
                "question": point.question,
                "expected_fact": point.expected_fact,
                "expected_keywords": point.expected_keywords,
                "evidence_turns": point.evidence_turns,
                "category": point.category,
                "answerable": point.answerable,
                "evidence_sessions": score.evidence_sessions,
                "rubric": score.rubric,
            }
        turns = [
            {
                "role": t.role,
                "content": t.content,
                "test_at": tests.get(i),
                "record": t.record,
                "session": t.session,
                "date": t.date,
            }
            for i, t in enumerate(stored.turns)
        ]
        try:
            conversation = Conversation(id=result.conversation_id, description=result.description, turns=turns)
        except ValidationError as exc:
            raise StoreError(f"{where}: {_first_problem(exc)}") from None
        conversations.append(conversation)
        lookup = TurnLookup(conversation)
        scored = []
        for point, score in zip(result.test_points, stored.test_points, strict=True):
            _check_sessions(point, score.evidence_sessions, conversation.sessions, f"{where}, turn {point.turn_index}")
            # Which turns were retrieved follows from the records; the file's own claim is checked
            # against it with the other original keys below.
            if point.evidence_turns:
                claimed = point.retrieved_turns
                point.retrieved_turns = record_turns(point.retrieved_records, lookup, point.turn_index)
                if claimed != point.retrieved_turns and _holds(point, claimed):
                    point.retrieved_turns = claimed  # records naming the turns they hold, checked against them
                if claimed != point.retrieved_turns:
                    raise StoreError(f"{where}, turn {point.turn_index}: retrieved_turns does not match the retrieved records")
            scored.append(score_point(point, score.record_tokens, hit=score.hit))
        points.append(scored)

    # The digest names the corpus in the store, which keeps one copy per digest and shows it in every
    # run on it; so it must be what these conversations give, or an edited transcript would show up
    # in other, genuine runs' pages (or, imported first, be silently dropped).
    digest = corpus_digest(conversations, block.benchmark)
    if digest != block.corpus_digest:
        raise StoreError(
            f"{name}: run.corpus_digest {block.corpus_digest[:12]}… does not match the file's conversations "
            f"(they give {digest[:12]}…); the file was altered, so it is not imported"
        )
    run = RunResult(
        strategy=doc.strategy,
        model=doc.model,
        k=doc.k,
        seed=doc.seed,
        corpus_dir=doc.corpus_dir,
        corpus_digest=block.corpus_digest,
        started_at=block.timestamp,
        duration_s=block.duration_s,
        conversations=doc.conversations,
        strategy_source=block.strategy_source,
        cutoffs=block.cutoffs,
        cutoff_rule=block.cutoff_rule or PREFIX,
        benchmark=block.benchmark,
        corpus_release=block.corpus_release,
        corpus_file=block.corpus_file,
    )
    scores = Scores(tokenizer=doc.tokenizer, conversation_ids=[c.conversation_id for c in doc.conversations], points=points)
    provenance = Provenance(
        commit=block.commit,
        dirty=block.dirty,
        package_version=block.package_version,
        mneme_version=block.mneme_version,
        python_version=block.python_version,
    )
    answers = _answers(raw, name)
    summary = make_summary(
        measured={
            name: MetricValue(**value.model_dump())
            for name, value in block.measured.items()
            if _measured(name, block.cutoff_rule)
        },
        run_id=block.run_id,
        run=run,
        scores=scores,
        provenance=provenance,
        corpus_name=block.corpus_name,
        cache_hits=block.cache_hits,
        cache_misses=block.cache_misses,
        answers=answers,
        tuned_on=block.tuned_on,
        writes_with_llm=block.writes_with_llm,
    )
    if block.origin is not None:
        summary = dataclasses.replace(summary, origin=block.origin)
    return RunRecord(
        summary=summary,
        run=run,
        scores=scores,
        conversations=conversations,
        answers=answers,
        references=block.references,
        latency=[LatencyBucket(**b.model_dump()) for b in block.latency_by_size],
    )


def _holds(point: TestPointResult, claimed: list[int | None] | None) -> bool:
    """Whether each record's claimed turn is one of the turns the point says that record holds (``ranked_held``)."""
    held = point.ranked_held
    if held is None or claimed is None or len(claimed) != len(point.retrieved_records) or len(claimed) > len(held):
        return False
    return all(turn in group if turn is not None else not group for turn, group in zip(claimed, held, strict=False))


def _check_sessions(point: TestPointResult, listed: list[str], sessions: list[str | None], where: str) -> None:
    """The point's evidence and ranked sessions are what the conversation gives, as a run sets them
    (evals.run.playthrough): they decide the session-level metrics, so a file's claim is checked, not taken."""
    evidence = list(listed) or sessions_of(point.evidence_turns, sessions)
    if point.evidence_sessions != evidence:
        raise StoreError(f"{where}: evidence_sessions does not match the conversation's sessions; the file was altered")
    if point.ranked_turns is not None:
        if not all(t is None or 0 <= t < len(sessions) for t in point.ranked_turns):
            raise StoreError(f"{where}: ranked_turns names a turn the conversation does not have")
        if point.ranked_sessions != [sessions[t] if t is not None else None for t in point.ranked_turns]:
            raise StoreError(f"{where}: ranked_sessions does not match the ranked turns' sessions; the file was altered")
    if point.ranked_held is not None:
        if not all(0 <= t < len(sessions) for group in point.ranked_held for t in group):
            raise StoreError(f"{where}: ranked_held names a turn the conversation does not have")
        if point.ranked_held_sessions != held_sessions(point.ranked_held, sessions):
            raise StoreError(f"{where}: ranked_held_sessions does not match the held turns' sessions; the file was altered")
    if point.ranked_tokens is not None and (point.ranked_turns is None or len(point.ranked_tokens) != len(point.ranked_turns)):
        raise StoreError(f"{where}: ranked_tokens must have one entry per rank of ranked_turns")
    if point.ranked_tokens is not None and any(t < 0 for t in point.ranked_tokens):
        raise StoreError(f"{where}: ranked_tokens holds a negative token count")


def _measured(name: str, rule: str | None = None) -> bool:
    """Whether an export carries ``name`` as measured: it cannot be recomputed from the file's records
    (nor can any retrieval metric of a strategy asked once per cutoff, whose rankings are not kept)."""
    return measured_only(name) or (rule == PER_CUTOFF and parse_retrieval_key(name) is not None)


def _answers(raw: dict[str, Any], name: str) -> AnswerRun | None:
    """The run's answers from an export made with --with-answers, or None; each value checked."""
    if "answers" not in raw:
        return None
    try:
        block = _AnswersBlock.model_validate(raw["answers"])
        metrics = raw.get("metrics")
        totals = _AnswerTotals.model_validate(metrics.get("answers") if isinstance(metrics, dict) else None)
    except ValidationError as exc:
        raise StoreError(f"{name}: the answers of this export are incomplete: {_first_problem(exc)}") from None
    points: list[list[PointAnswer]] = []
    for c, conversation in enumerate(raw["conversations"]):
        answers = []
        for t, point in enumerate(conversation["test_points"]):
            try:
                answer = _Answer.model_validate(point.get("answer") if isinstance(point, dict) else None)
            except ValidationError as exc:
                problem = _first_problem(exc, ("conversations", c, "test_points", t, "answer"))
                raise StoreError(f"{name}: not a valid evals export: {problem}") from None
            answers.append(PointAnswer(**answer.model_dump(exclude={"f1", "bleu1"})))
        points.append(answers)
    return AnswerRun(
        answer_model=block.answer_model,
        judge_model=block.judge_model,
        base_url=block.base_url,
        points=points,
        settings=block.settings,
        requests_made=totals.requests_made,
        requests_cached=totals.requests_cached,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        usage=usage_from_json({kind: tally.model_dump() for kind, tally in (totals.usage or {}).items()}),
        protocol=block.protocol,
        protocol_source=block.protocol_source,
    )


def read_export(path: Path) -> RunRecord:
    """Parse and check one exported file; every problem is a one-line :class:`StoreError`."""
    name = str(path)
    try:
        raw = jsonfile.load(path, jsonfile.MAX_EXPORT_FILE_BYTES, name)
    except jsonfile.JSONFileError as exc:
        raise StoreError(str(exc)) from None
    if not isinstance(raw, dict):
        raise StoreError(f"{name}: not an evals export (expected a JSON object, got {type(raw).__name__})")
    if "run" not in raw:
        raise StoreError(f"{name}: not an evals export (no 'run' block); write one with: evals export RUN_ID --output FILE")
    try:
        document = _Exported.model_validate(raw)
    except ValidationError as exc:
        raise StoreError(f"{name}: not a valid evals export: {_first_problem(exc)}") from None
    record = _rebuild(document, name, raw)
    # The original keys must be what this run's data gives, or the file was edited
    # or is inconsistent; importing it would store numbers nobody computed. A key
    # this run's document does not have is refused too: the format is ours, so an
    # unknown key is a mistake or an edit, never something to drop unread.
    expected = legacy_json(record.run, record.scores, record.answers, record.summary.metrics)
    for key, value in raw.items():
        if key == "run":
            continue
        if key not in expected:
            raise StoreError(f"{name}: {jsonfile.json_path((key,))}: unknown field (an export of this run has no such key)")
        unknown = _unknown_key(value, expected[key], (key,))
        if unknown is not None:
            raise StoreError(f"{name}: {jsonfile.json_path(unknown)}: unknown field (an export of this run has no such key)")
        if not _agrees(value, expected[key]):
            raise StoreError(f"{name}: '{key}' does not match the run's test points; the file was altered")
    return record


def _unknown_key(given: Any, expected: Any, where: tuple[int | str, ...]) -> tuple[int | str, ...] | None:
    """The JSON path of the first key in ``given`` that ``expected`` lacks at the same place, or None."""
    if isinstance(given, dict) and isinstance(expected, dict):
        for key, value in given.items():
            if key not in expected:
                return (*where, key)
            found = _unknown_key(value, expected[key], (*where, key))
            if found is not None:
                return found
    elif isinstance(given, list) and isinstance(expected, list):
        for index, (g, e) in enumerate(zip(given, expected, strict=False)):
            found = _unknown_key(g, e, (*where, index))
            if found is not None:
                return found
    return None


def _agrees(given: Any, expected: Any) -> bool:
    """``given`` equals ``expected`` except that objects may lack keys, and a list of retrieval rows
    may lack rows: an export written before a key or a metric was added (strict recall, say, or
    ``ndcg_any_lme``) still imports, and what it lacks is computed on import."""
    if isinstance(given, dict) and isinstance(expected, dict):
        return all(k in expected and _agrees(v, expected[k]) for k, v in given.items())
    if isinstance(given, list) and isinstance(expected, list):
        rows, expected_rows = _retrieval_rows(given), _retrieval_rows(expected)
        if rows is not None and expected_rows is not None:
            return all(key in expected_rows and _agrees(row, expected_rows[key]) for key, row in rows.items())
        return len(given) == len(expected) and all(_agrees(g, e) for g, e in zip(given, expected, strict=True))
    if type(given) is float and type(expected) is float:
        # A mean summed in another order (an older version's plain sum, this one's fsum) differs in the last bits.
        return math.isclose(given, expected, rel_tol=1e-12, abs_tol=1e-15)
    return given == expected


_ROW_KEY = ("level", "metric", "k")


def _retrieval_rows(items: list[Any]) -> dict[tuple, dict] | None:
    """``metrics.retrieval``'s rows by (level, metric, k); None for any other list."""
    if not items or not all(isinstance(row, dict) and all(key in row for key in _ROW_KEY) for row in items):
        return None
    keyed = {tuple(row[key] for key in _ROW_KEY): row for row in items}
    return keyed if len(keyed) == len(items) else None
