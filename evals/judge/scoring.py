"""Scoring: the one place that decides whether a test point's records hold the answer.

Definitions (the original harness's, kept exactly):

* A test point is a **hit** when any expected keyword, lower-cased, is a
  substring of the retrieved records joined with ``"\\n"`` and lower-cased;
  with no keywords, when the lower-cased expected fact is a substring of any
  one lower-cased record.
* **context tokens** of a test point is the sum of its records' token counts.
* A test point marked ``answerable: false`` (the conversation holds no answer)
  is kept apart: it is neither a hit nor a miss, and the run's numbers count
  answerable test points only.

Additions (new keys; the definitions above keep their meaning):

* **strict hit**: every expected keyword is in the joined records; with no
  keywords it is the hit itself.
* **rank**: the 1-based position of the first record that holds an expected
  keyword (or, with no keywords, the expected fact); ``None`` when none does.
  (A keyword straddling two records in the joined text makes a hit without a
  rank; the records keep their own boundaries here.)
* **evidence any / all** (test points with ``evidence_turns`` only): at least
  one / every evidence turn is among the retrieved records, matched by turn
  identity (``evals.model.turn_refs``), not by text; a record naming several
  turns (``Record.turns``) holds each of them.

:func:`match` is the rule; :func:`score_point` applies it to a test point,
and everything else (the run's scores, the store reading old rows, an import,
an answer's keyword check, the site's highlighting) goes through these two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evals.errors import EvalsError
from evals.judge.retrieval import POINT_METRICS, evidence_at, held_ranks, relevant_ranks
from evals.model.results import AnswerRun, RunResult, TestPointResult
from evals.model.tokens import TokenCounter

if TYPE_CHECKING:
    from evals.model.corpus import Corpus

__all__ = [
    "Evaluation",
    "Match",
    "PointScore",
    "Scores",
    "evidence_hits",
    "match",
    "matched_keywords",
    "score_point",
    "score_run",
]


@dataclass(frozen=True)
class Match:
    hit: bool
    strict_hit: bool
    rank: int | None  # of the first matching record, 1-based


def _targets(expected_keywords: Sequence[str], expected_fact: str) -> list[str]:
    return [kw.lower() for kw in expected_keywords] or [expected_fact.lower()]


def match(expected_keywords: Sequence[str], expected_fact: str, records: Sequence[str]) -> Match:
    """Hit, strict hit and rank of ``records`` against a test point's expectations.

    One pass over the joined text decides hit and strict hit; the rank is
    searched only when something matched (each record is a piece of the joined
    text) and stops at the first match: full_history's records run into the
    hundreds per point.
    """
    targets = _targets(expected_keywords, expected_fact)
    if expected_keywords:
        haystack = "\n".join(records).lower()
        found = [kw in haystack for kw in targets]
        hit, strict = any(found), all(found)
        rank = _first_rank(targets, records) if hit else None
        return Match(hit, strict, rank)
    rank = _first_rank(targets, records)
    return Match(rank is not None, rank is not None, rank)


def _first_rank(targets: list[str], records: Sequence[str]) -> int | None:
    for rank, record in enumerate(records, start=1):
        low = record.lower()
        if any(t in low for t in targets):
            return rank
    return None


def matched_keywords(expected_keywords: Sequence[str], record: str) -> list[str]:
    """The expected keywords that occur in one record, by the same rule (for highlighting)."""
    low = record.lower()
    return [kw for kw in expected_keywords if kw and kw.lower() in low]


@dataclass(frozen=True)
class PointScore:
    hit: bool
    record_tokens: list[int]
    strict_hit: bool = False
    rank: int | None = None  # of the first matching record, 1-based
    answerable: bool = True
    evidence_any: bool | None = None  # None: the test point lists no evidence turns
    evidence_all: bool | None = None

    @property
    def context_tokens(self) -> int:
        return sum(self.record_tokens)


def evidence_hits(point: TestPointResult) -> tuple[bool | None, bool | None]:
    """(any, all) evidence turns among the retrieved records; (None, None) without evidence turns.

    The rule is :mod:`evals.judge.retrieval`'s turn-level recall_any and recall_all, read on the records the run
    kept (``retrieved_turns``): one code path decides whether evidence was found."""
    if not point.evidence_turns or point.retrieved_turns is None:
        return None, None
    evidence = evidence_at(point, "turn")
    depth = len(point.retrieved_turns)
    held = _held_at_k(point, depth)
    ranks = relevant_ranks(evidence, point.retrieved_turns) if held is None else held_ranks(evidence, held)
    found_any, found_all = (bool(POINT_METRICS[name](ranks, len(evidence), depth)) for name in ("recall_any", "recall_all"))
    return found_any, found_all


def _held_at_k(point: TestPointResult, depth: int) -> list[list[int]] | None:
    """The turns each of the run's records holds, when some record holds several (None: one turn a record)."""
    return None if point.ranked_held is None else point.ranked_held[:depth]


def score_point(
    point: TestPointResult, record_tokens: list[int], *, hit: bool | None = None, stored: Match | None = None
) -> PointScore:
    """Score one test point whose records have these token counts; ``hit`` as stored, when known, and ``stored``:
    the hit, strict hit and rank the run decided and stored (a store reads them back rather than matching the
    records' texts again)."""
    found = stored if stored is not None else match(point.expected_keywords, point.expected_fact, point.retrieved_records)
    evidence_any, evidence_all = evidence_hits(point)
    return PointScore(
        hit=found.hit if hit is None else hit,
        record_tokens=record_tokens,
        strict_hit=found.strict_hit,
        rank=found.rank,
        answerable=point.answerable,
        evidence_any=evidence_any,
        evidence_all=evidence_all,
    )


@dataclass(frozen=True)
class Scores:
    """Every test point's score, per conversation; the aggregates count answerable points only."""

    tokenizer: str
    conversation_ids: list[str]
    points: list[list[PointScore]]  # per conversation, per test point

    @classmethod
    def joined(cls, parts: Sequence[Scores]) -> Scores:
        """One run's scores from its consecutive shares', scored apart (each share in the process that played it)."""
        tokenizers = {part.tokenizer for part in parts}
        if len(tokenizers) > 1:  # never mix two tokenizers' counts in one run
            named = ", ".join(sorted(tokenizers))
            raise EvalsError(f"the processes playing one run counted tokens with different tokenizers ({named}); run again")
        return cls(
            tokenizer=parts[0].tokenizer,
            conversation_ids=[c for part in parts for c in part.conversation_ids],
            points=[conversation for part in parts for conversation in part.points],
        )

    def answerable(self) -> list[PointScore]:
        """The test points that count (unanswerable ones are reported apart)."""
        return [p for conv in self.points for p in conv if p.answerable]

    @property
    def hits(self) -> int:
        return sum(p.hit for p in self.answerable())

    @property
    def total(self) -> int:
        return len(self.answerable())

    @property
    def recall(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def context_tokens(self) -> int:
        return sum(p.context_tokens for p in self.answerable())


def score_run(run: RunResult, counter: TokenCounter | None = None) -> Scores:
    counter = counter or TokenCounter()
    counter.count_all(r for c in run.conversations for p in c.test_points for r in p.retrieved_records)
    return Scores(
        tokenizer=counter.tokenizer,
        conversation_ids=[c.conversation_id for c in run.conversations],
        points=[[score_point(p, counter.counts(p.retrieved_records)) for p in c.test_points] for c in run.conversations],
    )


@dataclass(frozen=True)
class Evaluation:
    """One run, end to end: the corpus it played, what it retrieved, its scores and its answers.

    It sits here, beside :class:`Scores`, not in :mod:`evals.model.results`: the results are below
    scoring, and may not name it even in a type hint."""

    corpus: Corpus
    run: RunResult
    scores: Scores
    answers: AnswerRun | None = None  # with --with-answers / --judge
