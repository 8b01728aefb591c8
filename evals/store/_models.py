"""What the store hands back: a run's summary row, and a whole run."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evals.benchmarks import rule_of
from evals.judge.headline import Headline, Rule, headline_of, metric_at
from evals.judge.metrics import LatencyBucket, MetricValue
from evals.judge.scoring import Scores
from evals.model.corpus import Corpus, Reference
from evals.model.provenance import Provenance
from evals.model.results import AnswerRun, RunResult

if TYPE_CHECKING:
    from evals.model.results import AnswerRun

__all__ = ["FailedRun", "RecordTurns", "RunSummary", "StoredOutcome", "StoredRun", "Transcript"]

Transcript = list[tuple[str, str]]
# Per test point, per retrieved record: the index of the conversation turn the
# record is, or None when it is not one (a summary, say).
RecordTurns = list[list[int | None]]


@dataclass(frozen=True)
class RunSummary:
    """One run as the ``runs`` table holds it, with its metrics from ``run_metrics``.

    ``hits``, ``total``, ``recall`` and ``context_tokens`` are the original
    harness's numbers, kept as columns of ``runs``; every metric, those
    included, is in ``metrics`` (see :mod:`evals.judge.metrics`), which is what
    tables and pages show.
    """

    run_id: str
    commit: str
    dirty: bool
    model: str
    date: str  # UTC, YYYY-MM-DD
    timestamp: datetime  # when the run started, aware, UTC
    strategy: str
    strategy_config: dict[str, Any]
    config_key: str
    k: int
    seed: int
    corpus_name: str
    corpus_dir: str
    corpus_digest: str
    tokenizer: str
    package_version: str
    mneme_version: str | None
    python_version: str
    duration_s: float
    conversation_count: int
    hits: int
    total: int
    recall: float | None
    context_tokens: int
    tokens_per_test_point: float | None
    # Under which inputs the run may be reused instead of recomputed (None: never; see evals.run.workflow).
    reuse_key: str | None = field(default=None, compare=False)
    metrics: dict[str, MetricValue] = field(default_factory=dict)
    cache_hits: int | None = None  # embeddings this run found in the embedding/LLM cache
    cache_misses: int | None = None  # ... and computed; None when the run used no cache
    # Where the strategy came from: built-in, a plug-in's distribution and version, or module:attr
    # (None: stored before it was recorded).
    strategy_source: str | None = None
    # The cutoffs the retrieval metrics were measured at ([]: at k only, or stored before they were) and
    # how each read the ranking (evals.model.results.CUTOFF_RULES; None: not recorded).
    cutoffs: list[int] = field(default_factory=list)
    cutoff_rule: str | None = None
    # The published benchmark the corpus declared (evals.judge.headline decides the headline by it); None: none.
    benchmark: str | None = None
    # Where the corpus came from (evals.model.results.RunResult): a pinned release, else a file imported by hand.
    corpus_release: str | None = None
    corpus_file: str | None = None
    # End-to-end answers: how they were made and what they cost; all None for a run without them.
    answer_model: str | None = None
    judge_model: str | None = None
    llm_base_url: str | None = None
    llm_settings: dict[str, Any] | None = None  # temperature, seed, digests of the prompts
    answers_total: int | None = None
    answers_judged: int | None = None
    answers_correct: int | None = None
    answers_keyword_hits: int | None = None
    answer_latency_s: float | None = None
    llm_requests_made: int | None = None
    llm_requests_cached: int | None = None
    llm_prompt_tokens: int | None = None
    llm_completion_tokens: int | None = None
    # Per kind of request (answer, judge, memory_write): sent vs cached, tokens, served models, denominator,
    # price (evals.model.results.RequestTally.as_json); None: no answers, or stored before it was recorded.
    llm_usage: dict[str, Any] | None = None
    # The protocol that asked for the answers (evals.benchmarks.protocols; None: made before protocols, the harness's
    # prompts) and where its templates were read: repository, commit, files -> sha256 (None: the harness's).
    answer_protocol: str | None = None
    protocol_source: dict[str, Any] | None = None
    # The rule its headline is judged by, as it was when the run was appended (a run stored before it was recorded is
    # read with the rule of its benchmark as registered now; None only for a summary made by hand).
    rule: Rule | None = None
    # What the run declares about its system (a board file carries it): the benchmarks whose data informed its
    # settings ([]: none) and whether its memory writes with an LLM. None: declared nothing (stored before).
    tuned_on: list[str] | None = None
    writes_with_llm: bool | None = None
    # Who ran it (evals.judge.origin): None for the harness's own run, made in this store; else {"mark": "submitted"}
    # or {"mark": "reproduced", "commit", "dirty", "date", "points"} (the harness's rerun of its board file).
    origin: dict[str, Any] | None = None

    @property
    def headline(self) -> Headline:
        """The one figure this run is judged by, and its population (:mod:`evals.judge.headline`): by the rule
        stored with it, so an uninstalled plug-in's runs keep theirs."""
        if self.rule is not None:
            return Headline(self.rule, metric_at(self.metrics, self.rule.metric, self.k))
        return headline_of(rule_of(self.benchmark), self.metrics, self.k)

    def metric(self, name: str) -> MetricValue | None:
        """The run's value of metric ``name``; None when the run has none (not measured, or not stored then).

        A retrieval metric asked at ``@k`` that is not stored as such is read at the run's own k."""
        return metric_at(self.metrics, name, self.k)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the timestamp as ISO 8601 text."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["timestamp"] = self.timestamp.isoformat()
        out["metrics"] = {name: dataclasses.asdict(value) for name, value in self.metrics.items()}
        out["headline"] = self.headline.as_dict()
        del out["rule"]  # the headline says it: its rule's name, metric, label, population and code
        return out


@dataclass(frozen=True)
class FailedRun:
    """A run that failed (a strategy raising, a call past --call-timeout, a crash inside the play-through), as the
    ``failed_runs`` table holds it: its configuration, corpus, k, commit, date and a one-line reason, never a figure."""

    run_id: str
    commit: str
    dirty: bool
    model: str
    date: str  # UTC, YYYY-MM-DD
    timestamp: datetime  # when the run started, aware, UTC
    strategy: str
    strategy_config: dict[str, Any]
    config_key: str
    k: int
    seed: int
    corpus_name: str
    corpus_digest: str
    package_version: str
    python_version: str
    duration_s: float  # how long it ran before it failed
    reason: str  # one line
    strategy_source: str | None = None
    benchmark: str | None = None
    tuned_on: list[str] | None = None
    writes_with_llm: bool | None = None

    @property
    def failure(self) -> str:
        """What every board shows in place of a figure."""
        return f"failed: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the timestamp as ISO 8601 text, and ``failed`` saying what it is."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["timestamp"] = self.timestamp.isoformat()
        out["failed"] = self.failure
        return out


@dataclass(frozen=True)
class StoredRun:
    """A run read back in full: enough to rebuild every page and the original JSON document."""

    summary: RunSummary
    run: RunResult
    scores: Scores
    transcripts: dict[str, Transcript]  # conversation id -> (role, content) of every turn
    record_turns: dict[str, RecordTurns]  # conversation id -> per test point, per record
    unrecorded: dict[str, list[int]] = field(default_factory=dict)  # conversation id -> turns with record: false
    answers: AnswerRun | None = None
    references: list[Reference] = field(default_factory=list)  # the corpus's published figures
    latency: list[LatencyBucket] = field(default_factory=list)  # retrieve latency by records held
    # What the corpus digest covers beyond the transcripts, so an export can carry it (absent: none):
    sessions: dict[str, list[str | None]] = field(default_factory=dict)  # conversation id -> each turn's session
    dates: dict[str, list[str | None]] = field(default_factory=dict)  # conversation id -> each turn's date
    # conversation id -> per test point, the corpus's own evidence_sessions (the run's may be derived from turns)
    listed_sessions: dict[str, list[list[str]]] = field(default_factory=dict)
    # conversation id -> per test point, the corpus's rubric (BEAM); absent: no point of the corpus has one
    rubrics: dict[str, list[list[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredOutcome:
    """A run made or reused through the store (:func:`evals.run.workflow.run_with_store`), as the views show it:
    a data type the layers above the store share, so none reaches up into the run layer for it."""

    run_id: str
    reused: bool  # an earlier run of the same inputs, not computed now
    provenance: Provenance
    # What the run's document in the original harness's shape is made of (evals.views.report.outcome_json).
    run: RunResult
    scores: Scores
    answers: AnswerRun | None
    metrics: dict[str, Any]
    cache_hits: int = 0  # embeddings found in the cache
    cache_misses: int = 0  # ... and computed or requested by this run
    summary: RunSummary | None = None  # the stored run's summary row
    # Which turn each record is (--output-records turns): a reused run's, as stored (conversation id -> per
    # test point, per record, the turn or None); a new run's come from the corpus it played, read again
    # (its texts are the strings the run's records already hold, so a walk adds no copy of them).
    record_turns: dict[str, list[list[int | None]]] | None = None
    corpus: Corpus | None = None
