"""What a run produces, as plain data: the play-through and its answers.

These types sit below everything that reads a run (scoring, the store, the
reports and the site) and above only the corpus, so data flows one way:
corpus -> play-through -> results -> scores -> store -> site.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, SerializationInfo, SerializerFunctionWrapHandler, field_serializer

# The longest served model name or system fingerprint a reply may give: decided where replies are read.
from evals.io.endpoints import MAX_SERVED_NAME

__all__ = [
    "CUTOFF_RULES",
    "DEFAULT_CUTOFFS",
    "PER_CUTOFF",
    "PREFIX",
    "WHOLE_LIST",
    "MAX_K",
    "MAX_SEED",
    "MIN_SEED",
    "AnswerRun",
    "CallTimings",
    "ConversationResult",
    "ANSWER",
    "CORRECT",
    "JUDGE",
    "PARTIAL",
    "UNPARSED",
    "VERDICTS",
    "WRONG",
    "MEMORY_WRITE",
    "MAX_SERVED_NAME",
    "REQUEST_KINDS",
    "PointAnswer",
    "RequestTally",
    "RunResult",
    "TestPointResult",
    "answer_identity",
    "summed_costs",
    "merge_usage",
    "usage_from_json",
    "usage_json",
]


# What the store's columns hold (k INTEGER, seed BIGINT): the CLI, RunConfig and imports check
# against these before any work, so an out-of-range value is refused at once, not at the append.
MAX_K = 2**31 - 1
MIN_SEED, MAX_SEED = -(2**63), 2**63 - 1

# The cutoffs the field reports retrieval at (LoCoMo 5/10/25/50, LongMemEval 1/3/5/10/30/50).
DEFAULT_CUTOFFS = (1, 3, 5, 10, 25, 50)
PREFIX, WHOLE_LIST, PER_CUTOFF = "prefix", "whole_list", "per_cutoff"
CUTOFF_RULES = (PREFIX, WHOLE_LIST, PER_CUTOFF)


class TestPointResult(BaseModel):
    __test__ = False

    turn_index: int
    question: str
    expected_fact: str
    expected_keywords: list[str]
    retrieved_records: list[str]
    # Added after the original harness; its JSON shows them only where they are not these defaults.
    evidence_turns: list[int] = Field(default_factory=list)
    category: str | None = None
    answerable: bool = True
    # Per record, the turn it is (evals.model.turn_refs), or None; set exactly when evidence_turns is not empty.
    retrieved_turns: list[int | None] | None = None
    # Sessions holding the answer: the test point's own list, else the sessions of its evidence turns.
    evidence_sessions: list[str] = Field(default_factory=list)
    # The criteria a graded judge checks the answer against (BEAM's rubric), as the corpus gives them.
    rubric: list[str] = Field(default_factory=list)
    # The ranking every cutoff reads (evals.run.playthrough), for test points with evidence: per rank, the
    # turn the record is (or None) and that turn's session (or None). Its length is the deepest cutoff's.
    ranked_turns: list[int | None] | None = None
    ranked_sessions: list[str | None] | None = None
    # Per cutoff, the token count of the records at that cutoff (context tokens as --k measures them).
    cutoff_tokens: dict[int, int] | None = None
    # A strategy asked once per cutoff (not prefix-stable): each cutoff's own ranking of turns and sessions.
    cutoff_rankings: dict[int, tuple[list[int | None], list[str | None]]] | None = None
    # Records that hold several turns (a session, a chunk, a fact citing its sources; Record.turns): per rank of
    # ranked_turns, every turn the record holds and their sessions (first seen first). None when no record of the
    # point names more than one turn: then ranked_turns says it all, and every figure reads it as before.
    ranked_held: list[list[int]] | None = None
    ranked_held_sessions: list[list[str]] | None = None
    # Per rank of ranked_turns, the record's tokens, where the run kept a ranking deep enough to fill the largest
    # context budget (evals.run.playthrough: asked deeper than the deepest cutoff until its tokens reach it): the
    # budget figures read the ranking up to each budget, not the first k records. None: not kept (a run without
    # a token counter or cutoffs, a strategy asked once per cutoff, a run stored before).
    ranked_tokens: list[int] | None = None
    # The same per cutoff, for a strategy asked once per cutoff (cutoff_rankings).
    cutoff_held: dict[int, tuple[list[list[int]], list[list[str]]]] | None = None

    @field_serializer("retrieved_records", mode="wrap")
    def _records(self, records: Any, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        # A run keeps long summaries as the turns they fold (evals.strategies.summary_buffer.FoldedRecords,
        # a sequence of the same texts): a Python dump passes it on as it is, so a document of a whole run
        # holds no summary's text; JSON is written from its texts.
        if isinstance(records, list):
            return handler(records)
        return records if info.mode == "python" else handler(list(records))


class ConversationResult(BaseModel):
    conversation_id: str
    description: str
    turn_count: int
    test_points: list[TestPointResult] = Field(default_factory=list)
    # What the memory held when the conversation ended (a strategy with evals.strategies.Footprint).
    held_records: int | None = None
    held_tokens: int | None = None
    # How many sessions (else turns) the memory was given: a k that reaches it returns everything, bypassing retrieval.
    session_count: int | None = None


class CallTimings(BaseModel):
    """How long each call into the strategy took (``perf_counter_ns``), in call order.

    Wall-clock times differ from run to run, so they never go into the
    original harness's JSON (``python -m evals`` stays deterministic); the
    store keeps their percentiles as metrics (:mod:`evals.judge.metrics`)."""

    add_ns: list[int] = Field(default_factory=list)
    retrieve_ns: list[int] = Field(default_factory=list)
    # Per retrieve call, the records the memory held (evals.strategies.Footprint; else the turns added).
    retrieve_held: list[int] = Field(default_factory=list)
    # Per retrieve call, the time the calling thread spent ready but waiting for a processor (the kernel's
    # run-queue delay, /proc/thread-self/schedstat): other processes' doing, not the strategy's. Empty where
    # the system does not say it.
    retrieve_queued_ns: list[int] = Field(default_factory=list)
    # Embedding every text up front (evals.strategies.Prefetching), apart from the calls it speeds up.
    prefetch_ns: int | None = None
    # Ingestion: the CPU time (of the thread playing the memory, time.thread_time_ns) of every add call and every
    # flush (evals.strategies.Flushes: a buffered write made before the next test point), summed over every
    # player of the run, and the turns added. None: a run made before they were measured.
    ingest_cpu_ns: int | None = None
    turns_added: int | None = None
    # The peak resident memory of the process playing the memory, in KiB (Linux's VmHWM, its high-water mark reset
    # as the play-through starts where the system allows): the largest over a run's players. None: not measured.
    peak_rss_kib: int | None = None

    @field_serializer("add_ns", "retrieve_ns", "retrieve_held", "retrieve_queued_ns")
    def _calls(self, values: Any) -> list[int]:
        return list(values)  # a play-through keeps them as array("q"): a machine integer per call


def summed_costs(parts: list[CallTimings | None]) -> dict[str, int | None]:
    """The costs of a run played in parts (forked players, Ray tasks): ingestion CPU and turns summed, the peak
    resident memory the largest any player reached; each None where some part did not measure it."""
    out: dict[str, int | None] = {}
    for name, combine in (("ingest_cpu_ns", sum), ("turns_added", sum), ("peak_rss_kib", max)):
        values = [getattr(part, name) if part is not None else None for part in parts]
        out[name] = combine(values) if values and None not in values else None
    return out


class RunResult(BaseModel):
    """The raw play-through: what each test point retrieved, plus how the run was made."""

    strategy: dict[str, Any]
    model: str
    k: int = Field(ge=1, le=MAX_K)
    seed: int = Field(ge=MIN_SEED, le=MAX_SEED)
    corpus_dir: str
    corpus_digest: str
    started_at: datetime
    duration_s: float = Field(ge=0, allow_inf_nan=False)
    conversations: list[ConversationResult]
    # Where the strategy came from (evals.strategies.registry): built-in, a distribution and version, or module:attr.
    strategy_source: str | None = None
    # Per-call latency; None for a run read back from the store or an export (its percentiles are stored).
    timings: CallTimings | None = None
    # The cutoffs the retrieval metrics are measured at (k among them), and how each reads the ranking:
    # PREFIX (the first c of one retrieval), WHOLE_LIST (a strategy that ignores k) or PER_CUTOFF.
    cutoffs: list[int] = Field(default_factory=list)
    cutoff_rule: str = "prefix"
    # The published benchmark the corpus declares (benchmark.json): which headline rule judges the run.
    benchmark: str | None = None
    # The corpus's source (benchmark.json): the pinned release whose bytes it was imported from, else the file
    # imported by hand; both None where the corpus recorded neither. Only a release is shown under its pin.
    corpus_release: str | None = None
    corpus_file: str | None = None
    # Retrievals that returned more records than asked for (cut to the depth asked; never scored past it).
    # None: not counted (a run read back from the store keeps it as the metric retrievals_over_k).
    long_retrievals: int | None = None


def answer_identity(
    answer_model: str,
    judge_model: str | None,
    base_url: str,
    judge_repeats: int = 1,
    protocols: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What makes runs with answers a configuration of their own (in configuration and reuse keys).

    ``judge_repeats`` is named only above 1, and ``protocols`` (the answer and judge protocols with the
    digests of their templates, :func:`evals.benchmarks.protocols.protocols_block`) only for a published protocol
    (None under the harness's own prompts), so a run judged once with the harness's prompts keeps the
    key it always had."""
    identity: dict[str, Any] = {"answer_model": answer_model, "judge_model": judge_model, "base_url": base_url}
    if judge_repeats > 1:
        identity["judge_repeats"] = judge_repeats
    if protocols is not None:
        identity["protocols"] = protocols
    return identity


# A judge's verdict on an answer as PointAnswer.verdict holds it: the reply read as correct or wrong, or not readable;
# a graded judge's (BEAM's rubric, LoCoMo-Plus's labels) also partial: some credit, neither full nor none.
CORRECT, WRONG, UNPARSED, PARTIAL = "correct", "wrong", "unparsed", "partial"
VERDICTS = (CORRECT, WRONG, UNPARSED, PARTIAL)

# The kinds of LLM request a run makes, each reported apart over its own denominator: answers per
# test point answered, verdicts per test point judged, memory writes (summary_buffer's summaries) per conversation.
ANSWER, JUDGE, MEMORY_WRITE = "answer", "judge", "memory_write"
REQUEST_KINDS = (ANSWER, JUDGE, MEMORY_WRITE)
PER = {ANSWER: "test point answered", JUDGE: "test point judged", MEMORY_WRITE: "conversation"}


@dataclass
class RequestTally:
    """The requests of one kind a run used, sent to the endpoint or served from the cache, their tokens
    kept apart (a reply from the cache was paid for by an earlier run, not this one), and the models and
    system fingerprints the endpoint said answered them."""

    model: str  # the model asked for
    sent: int = 0
    cached: int = 0
    prompt_tokens: int = 0  # of the requests sent: what this run spent
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of the replies served from the cache
    cached_completion_tokens: int = 0
    # (served model, system_fingerprint) -> requests; None where the reply did not say. Cached replies keep theirs.
    served: dict[tuple[str | None, str | None], int] = field(default_factory=dict)
    per: int = 0  # the denominator's count (PER names its unit)
    # The price the run was costed at (evals.model.costs: input, output in $ per 1M tokens, date, source); None: unknown.
    price: dict[str, Any] | None = None

    @property
    def requests(self) -> int:
        return self.sent + self.cached

    @property
    def tokens(self) -> int:
        """Every token of the kind, sent or served from the cache: what it costs at list price."""
        return self.prompt_tokens + self.completion_tokens + self.cached_prompt_tokens + self.cached_completion_tokens

    def add(self, prompt_tokens: int, completion_tokens: int, cached: bool, served: str | None, fingerprint: str | None) -> None:
        if cached:
            self.cached += 1
            self.cached_prompt_tokens += prompt_tokens
            self.cached_completion_tokens += completion_tokens
        else:
            self.sent += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
        self.served[served, fingerprint] = self.served.get((served, fingerprint), 0) + 1

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in ("model", *TALLY_COUNTS)}
        out["served"] = [
            {"model": model, "fingerprint": fingerprint, "requests": count}
            for (model, fingerprint), count in sorted(self.served.items(), key=lambda item: (-item[1], str(item[0])))
        ]
        out["price"] = self.price
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RequestTally:
        served = {(s["model"], s["fingerprint"]): s["requests"] for s in data.get("served", [])}
        fields = {k: v for k, v in data.items() if k not in ("served",)}
        return cls(**fields, served=served)


# A tally's counts: what adding two tallies adds, and what its JSON holds beside its model, what served it and its price.
TALLY_COUNTS = ("sent", "cached", "prompt_tokens", "completion_tokens", "cached_prompt_tokens", "cached_completion_tokens", "per")


def usage_json(usage: dict[str, RequestTally]) -> dict[str, Any]:
    """A run's tallies as the store, the result JSON and exports keep them, kinds in REQUEST_KINDS order."""
    return {kind: usage[kind].as_json() for kind in REQUEST_KINDS if kind in usage}


def usage_from_json(data: dict[str, Any] | None) -> dict[str, RequestTally]:
    return {kind: RequestTally.from_json(value) for kind, value in (data or {}).items()}


def merge_usage(parts: list[dict[str, RequestTally]]) -> dict[str, RequestTally]:
    """Tallies of parts of one run (a Ray task's conversation each) as one."""
    out: dict[str, RequestTally] = {}
    for part in parts:
        for kind, tally in part.items():
            whole = out.setdefault(kind, RequestTally(tally.model, price=tally.price))
            for name in TALLY_COUNTS:
                setattr(whole, name, getattr(whole, name) + getattr(tally, name))
            for key, count in tally.served.items():
                whole.served[key] = whole.served.get(key, 0) + count
    return out


@dataclass
class PointAnswer:
    """One test point's answer and, with a judge, its verdict."""

    answer: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float  # of the answer request, when it was made (a cached reply keeps its latency)
    keyword_hit: bool  # an expected keyword (or, with none, the expected fact) is in the answer
    correct: bool | None = None  # the judge's verdict; None without a judge
    reason: str | None = None
    judge_prompt_tokens: int | None = None
    judge_completion_tokens: int | None = None
    answerable: bool = True  # False: answered but neither judged nor counted, like recall
    # What each answer's requests cost and who served them (None: a run stored before costs were recorded)
    answer_cached: bool | None = None  # the answer came from the cache, not the endpoint
    judge_cached: bool | None = None  # every repeat of its verdict came from the cache
    served_model: str | None = None  # the `model` the endpoint says answered
    fingerprint: str | None = None  # its `system_fingerprint`
    judge_served_model: str | None = None  # of the verdict (repeat 0's)
    repeat_verdicts: list[str] | None = None  # with --judge-repeats N: every repeat's verdict, in order
    # How the run's protocol read this point (None: a run stored before protocols)
    category: str | None = None  # the test point's category / question type, as the corpus gives it
    counted: bool | None = None  # the protocol counts this point in its accuracy (None: a run made before protocols)
    verdict: str | None = None  # "correct" | "wrong" | "unparsed"; None: not judged
    # The protocol's own per-point score: where it scores without a judge (LoCoMo's F1), or where its judge grades
    # (BEAM's rubric mean or event-ordering tau_norm, LoCoMo-Plus's 1 / 0.5 / 0).
    score: float | None = None
    # A graded judge's reading of each of its requests for the point, in order (BEAM: one per rubric item, as
    # the judge gave it; None: that reply had no readable score). None: one verdict, no grades.
    grades: list[float | None] | None = None

    @property
    def in_population(self) -> bool:
        """Whether the run's figures count this point: as its protocol says; a run made before
        protocols counted the answerable points."""
        return self.counted if self.counted is not None else self.answerable


@dataclass
class AnswerRun:
    """A run's answers, per conversation and test point, with how they were made and what they cost."""

    answer_model: str
    judge_model: str | None
    base_url: str
    points: list[list[PointAnswer]]
    settings: dict[str, Any] = field(default_factory=dict)  # temperature, seed, prompt digests, protocols
    requests_made: int = 0
    requests_cached: int = 0
    prompt_tokens: int = 0  # every request of the run: answers, verdicts, summaries
    completion_tokens: int = 0
    # The answer protocol's name, and where its templates were read
    # (repository, commit, files -> sha256; None for the harness's own prompts).
    protocol: str = "harness"
    protocol_source: dict[str, Any] | None = None
    # Per kind of request (REQUEST_KINDS): sent vs cached, tokens apart, served models; {} for runs stored before.
    usage: dict[str, RequestTally] = field(default_factory=dict)

    @property
    def judge_repeats(self) -> int:
        """How many times each verdict was asked (--judge-repeats); 1 for runs stored before it existed."""
        return int(self.settings.get("judge_repeats", 1))

    def repeat_accuracies(self) -> list[float] | None:
        """Accuracy over the judged points, once per repeat (None without repeats): repeat r's verdicts alone."""
        judged = [p for p in self._all() if p.repeat_verdicts and len(p.repeat_verdicts) == self.judge_repeats]
        if self.judge_repeats < 2 or not judged:
            return None
        return [sum(p.repeat_verdicts[r] == "correct" for p in judged) / len(judged) for r in range(self.judge_repeats)]

    def identity(self) -> dict[str, Any]:
        return answer_identity(
            self.answer_model, self.judge_model, self.base_url, self.judge_repeats, self.settings.get("protocols")
        )

    def _all(self) -> list[PointAnswer]:
        """The answerable test points' answers: the ones keyword accuracy counts."""
        return [p for conv in self.points for p in conv if p.answerable]

    def _counted(self) -> list[PointAnswer]:
        """The answers the judged figures count: as the protocol counts them (before protocols, the answerable ones)."""
        return [p for conv in self.points for p in conv if p.in_population]

    @property
    def total(self) -> int:
        return len(self._all())

    @property
    def judged(self) -> int:
        """Counted answers with a verdict; an unparsed verdict is one (in the denominator, not correct)."""
        return sum(p.correct is not None or p.verdict is not None for p in self._counted())

    @property
    def correct(self) -> int:
        return sum(p.correct is True for p in self._counted())

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def keyword_hits(self) -> int:
        return sum(p.keyword_hit for p in self._all())

    @property
    def keyword_accuracy(self) -> float | None:
        return self.keyword_hits / self.total if self.total else None

    @property
    def mean_latency_s(self) -> float | None:
        points = [p for conv in self.points for p in conv]
        return sum(p.latency_s for p in points) / len(points) if points else None
