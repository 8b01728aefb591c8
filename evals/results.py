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
    "PointAnswer",
    "RunResult",
    "TestPointResult",
    "answer_identity",
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
    # Per record, the turn it is (evals.turn_refs), or None; set exactly when evidence_turns is not empty.
    retrieved_turns: list[int | None] | None = None
    # Sessions holding the answer: the test point's own list, else the sessions of its evidence turns.
    evidence_sessions: list[str] = Field(default_factory=list)
    # The ranking every cutoff reads (evals.playthrough), for test points with evidence: per rank, the
    # turn the record is (or None) and that turn's session (or None). Its length is the deepest cutoff's.
    ranked_turns: list[int | None] | None = None
    ranked_sessions: list[str | None] | None = None
    # Per cutoff, the token count of the records at that cutoff (context tokens as --k measures them).
    cutoff_tokens: dict[int, int] | None = None
    # A strategy asked once per cutoff (not prefix-stable): each cutoff's own ranking of turns and sessions.
    cutoff_rankings: dict[int, tuple[list[int | None], list[str | None]]] | None = None

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


class CallTimings(BaseModel):
    """How long each call into the strategy took (``perf_counter_ns``), in call order.

    Wall-clock times differ from run to run, so they never go into the
    original harness's JSON (``python -m evals`` stays deterministic); the
    store keeps their percentiles as metrics (:mod:`evals.metrics`)."""

    add_ns: list[int] = Field(default_factory=list)
    retrieve_ns: list[int] = Field(default_factory=list)
    # Per retrieve call, the records the memory held (evals.strategies.Footprint; else the turns added).
    retrieve_held: list[int] = Field(default_factory=list)
    # Embedding every text up front (evals.strategies.Prefetching), apart from the calls it speeds up.
    prefetch_ns: int | None = None

    @field_serializer("add_ns", "retrieve_ns", "retrieve_held")
    def _calls(self, values: Any) -> list[int]:
        return list(values)  # a play-through keeps them as array("q"): a machine integer per call


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

    def as_stored(self) -> RunResult:
        """This run as the store gives it back: what was measured rather than retrieved (call timings,
        the footprint, each cutoff's tokens) lives on only as the run's metrics."""
        conversations = [
            c.model_copy(
                update={
                    "held_records": None,
                    "held_tokens": None,
                    "test_points": [p.model_copy(update={"cutoff_tokens": None}) for p in c.test_points],
                }
            )
            for c in self.conversations
        ]
        return self.model_copy(update={"timings": None, "conversations": conversations})


def answer_identity(answer_model: str, judge_model: str | None, base_url: str) -> dict[str, Any]:
    """What makes runs with answers a configuration of their own (in configuration and reuse keys)."""
    return {"answer_model": answer_model, "judge_model": judge_model, "base_url": base_url}


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


@dataclass
class AnswerRun:
    """A run's answers, per conversation and test point, with how they were made and what they cost."""

    answer_model: str
    judge_model: str | None
    base_url: str
    points: list[list[PointAnswer]]
    settings: dict[str, Any] = field(default_factory=dict)  # temperature, seed, prompt digests
    requests_made: int = 0
    requests_cached: int = 0
    prompt_tokens: int = 0  # every request of the run: answers, verdicts, summaries
    completion_tokens: int = 0

    def identity(self) -> dict[str, Any]:
        return answer_identity(self.answer_model, self.judge_model, self.base_url)

    def _all(self) -> list[PointAnswer]:
        """The answerable test points' answers: the ones the numbers count."""
        return [p for conv in self.points for p in conv if p.answerable]

    @property
    def total(self) -> int:
        return len(self._all())

    @property
    def judged(self) -> int:
        return sum(p.correct is not None for p in self._all())

    @property
    def correct(self) -> int:
        return sum(p.correct is True for p in self._all())

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
