"""How lenient is a protocol's judge? Canned answers of known quality, sent to it, counted by kind.

For a sample of a corpus's test points the protocol judges, each kind of canned answer that applies
to the point is graded by the protocol's own judge (its template, model and verdict rule), and the
share it accepts is reported per kind. A strict judge accepts the gold answer and little else; a
lenient one also takes a wrong date, an off-by-one count, one item of a list, or a hedge naming
several candidates. LoCoMo's protocol has no judge: its F1 score of each canned answer is reported. A graded
judge (BEAM's rubric, LoCoMo-Plus's labels) is asked as a run asks it (BEAM: once per rubric item), and the
mean of its scores is reported, its full-credit share (accepted) beside it.

The kinds (each built here from the point's expected answer; a kind that does not apply to a
point, such as an off-by-one count on an answer holding no count, is not sent for it):

- ``gold``: the expected answer itself;
- ``wrong_date``: the expected answer with its date changed (a day moved by three, else the month
  moved by one, else the year moved back by one);
- ``off_by_one``: a count of days, weeks, months, years, hours or times moved up by one;
- ``one_item``: the first item of an answer that lists several (split at commas, semicolons, "and");
- ``dont_know``: "I don't know.";
- ``hedge``: the expected answer among two other points' answers, "one of A, B or C";
- ``old_and_new``: on a knowledge-update question, another answer given as the old value beside the
  expected one as the new value.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from evals.benchmarks.kit import CORRECT, UNPARSED, AskedPoint, Protocol
from evals.judge.stats import wilson_interval
from evals.model.corpus import Conversation

__all__ = ["KINDS", "KindResult", "Probe", "canned", "probe_judge", "probe_points"]

KINDS = ("gold", "wrong_date", "off_by_one", "one_item", "dont_know", "hedge", "old_and_new")
KNOWLEDGE_UPDATE = "knowledge-update"

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?=(?:of\s+)?(?:" + "|".join(_MONTHS) + r")\b)", re.IGNORECASE)
_MONTH_DAY = re.compile(r"\b(?:" + "|".join(_MONTHS) + r")\s+(\d{1,2})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_COUNT = re.compile(r"\b(\d+)(\s*(?:days?|weeks?|months?|years?|hours?|minutes?|times?))\b", re.IGNORECASE)
_ITEMS = re.compile(r"\s*(?:,|;|\band\b)\s*")


@dataclass(frozen=True)
class Probe:
    kind: str
    point: AskedPoint
    answer: str


def _moved_day(match: re.Match[str]) -> str:
    day = int(match.group(1))
    return match.group(0).replace(match.group(1), str((day + 2) % 28 + 1), 1)


def wrong_date(gold: str) -> str | None:
    """The answer with its date changed, or None when it holds no date."""
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        if pattern.search(gold):
            return pattern.sub(_moved_day, gold, count=1)
    month = _MONTH.search(gold)
    if month:
        following = _MONTHS[(_MONTHS.index(month.group(1).capitalize()) + 1) % 12]
        return gold[: month.start()] + following + gold[month.end() :]
    year = _YEAR.search(gold)
    if year:
        return gold[: year.start()] + str(int(year.group(1)) - 1) + gold[year.end() :]
    return None


def off_by_one(gold: str) -> str | None:
    count = _COUNT.search(gold)
    if count is None:
        return None
    return gold[: count.start()] + str(int(count.group(1)) + 1) + count.group(2) + gold[count.end() :]


def one_item(gold: str) -> str | None:
    items = [item for item in _ITEMS.split(gold.strip().rstrip(".")) if item]
    return items[0] if len(items) >= 2 else None


def canned(point: AskedPoint, others: list[str]) -> list[Probe]:
    """Every kind of canned answer that applies to ``point``; ``others`` are other points' answers
    (the hedge's distractors and the old value of a knowledge update)."""
    gold = point.expected_fact
    distractors = [o for o in others if o.strip().lower() != gold.strip().lower()][:2]
    answers: dict[str, str | None] = {
        "gold": gold,
        "wrong_date": wrong_date(gold),
        "off_by_one": off_by_one(gold),
        "one_item": one_item(gold),
        "dont_know": "I don't know.",
        "hedge": f"It is one of {distractors[0]}, {gold} or {distractors[1]}." if len(distractors) == 2 else None,
        "old_and_new": (
            f"It used to be {distractors[0]}; now it is {gold}." if distractors and point.category == KNOWLEDGE_UPDATE else None
        ),
    }
    return [Probe(kind, point, answer) for kind, answer in answers.items() if answer is not None]


def probe_points(conversations: Iterable[Conversation], protocol: Protocol, sample: int, seed: int) -> list[AskedPoint]:
    """A seeded sample of ``sample`` answerable test points the protocol judges (or scores)."""
    points = []
    for conversation in conversations:
        for index, turn in enumerate(conversation.turns):
            test = turn.test_at
            if test is None or not test.answerable:
                continue
            point = AskedPoint(
                conversation_id=conversation.id,
                turn_index=index,
                question=test.question,
                expected_fact=test.expected_fact,
                expected_keywords=list(test.expected_keywords),
                context=[],
                category=test.category,
                question_date=turn.date,
                seed=seed,
                rubric=tuple(test.rubric),
            )
            if protocol.counted(point):
                protocol.check(point)  # BEAM's judge without a rubric: refused, as a run refuses it
                points.append(point)
    return sorted(random.Random(seed).sample(points, min(sample, len(points))), key=lambda p: (p.conversation_id, p.turn_index))


@dataclass(frozen=True)
class KindResult:
    """How the protocol graded one kind of canned answer: accepted (judged correct) of sent, unparsed
    apart; for a protocol without a judge, the mean of its score instead."""

    kind: str
    sent: int
    accepted: int
    unparsed: int
    mean_score: float | None = None  # a protocol that scores without a judge (LoCoMo's F1), or a graded judge's
    undefined: int = 0  # a graded judge's points whose score is undefined (BEAM's tau-b): out of the mean, not 0
    graded: bool = False  # the rate is the mean score (None when every score is undefined), never the share accepted

    @property
    def rate(self) -> float | None:
        if self.mean_score is not None or self.graded:
            return self.mean_score
        return self.accepted / self.sent if self.sent else None

    @property
    def interval(self) -> tuple[float, float] | None:
        scored = self.mean_score is not None or self.graded
        return wilson_interval(self.accepted, self.sent) if not scored and self.sent else None

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval or (None, None)
        return {
            "kind": self.kind,
            "sent": self.sent,
            "accepted": self.accepted,
            "unparsed": self.unparsed,
            "acceptance": self.rate if self.mean_score is None else None,
            "acceptance_low": low,
            "acceptance_high": high,
            "mean_score": self.mean_score,
            "undefined_scores": self.undefined,
        }


def probe_judge(
    probes: list[Probe],
    protocol: Protocol,
    *,
    judge: Callable[[list[dict[str, Any]], list[str]], list[str]] | None,
) -> list[KindResult]:
    """Grade every probe as ``protocol`` grades answers. ``judge(bodies, wheres)`` sends the judge
    requests and gives the replies' texts (None for a protocol without a judge: its score instead)."""
    verdicts: list[str] = []
    scores: list[float | None] = []
    if protocol.judges:
        if judge is None:
            raise ValueError("a protocol with a judge needs a judge to send its requests")
        asks = [protocol.judge_requests(p.point, p.answer) for p in probes]
        wheres = [
            f"conversation {p.point.conversation_id!r}, turn {p.point.turn_index} ({p.kind}{nth})"
            for p, many in zip(probes, asks, strict=True)
            for nth in ([f", {j + 1}/{len(many)}" for j in range(len(many))] if len(many) > 1 else [""])
        ]
        replies = judge([{"messages": a.messages, **a.settings} for many in asks for a in many], wheres)
        start = 0
        for probe, many in zip(probes, asks, strict=True):
            grade = protocol.grade(probe.point, probe.answer, replies[start : start + len(many)])
            start += len(many)
            verdicts.append(grade.label)
            # A graded judge's (BEAM, LoCoMo-Plus) mean score is reported beside its full-credit share; a score the
            # protocol leaves undefined (BEAM's tau-b of one item) is left out of it, as the run's figures leave it out.
            scores.append(grade.score)
    else:
        scores = [protocol.score(p.point, p.answer) or 0.0 for p in probes]
    results = []
    for kind in KINDS:
        chosen = [i for i, p in enumerate(probes) if p.kind == kind]
        if not chosen:
            results.append(KindResult(kind, 0, 0, 0))
            continue
        if protocol.judges:
            labels = [verdicts[i] for i in chosen]
            defined = [score for i in chosen if (score := scores[i]) is not None]
            mean = (sum(defined) / len(defined) if defined else None) if protocol.graded else None
            undefined = len(chosen) - len(defined) if protocol.graded else 0
            counts = (labels.count(CORRECT), labels.count(UNPARSED))
            results.append(KindResult(kind, len(chosen), *counts, mean, undefined, graded=protocol.graded))
        else:
            mean = sum(scores[i] or 0.0 for i in chosen) / len(chosen)
            results.append(KindResult(kind, len(chosen), 0, 0, mean))
    return results


def run_probe(
    config: Any, *, sample: int, cache: Any = None, api_key: str | None = None, backoff: float = 1.0
) -> tuple[Protocol, list[AskedPoint], list[KindResult]]:
    """The probe of ``config``'s protocol (a :class:`evals.run.config.RunConfig`: the corpus, protocol,
    judge model, endpoint and request settings) over ``sample`` of its test points; judge replies
    go through ``cache`` as a run's do. Gives the protocol, the sampled points and a result per kind."""
    import os

    from evals.model.corpus import load_corpus
    from evals.run.llm import ChatClient, RetryPolicy

    protocol, _ = config.load_protocols()
    corpus = load_corpus(config.corpus)
    points = probe_points(corpus.conversations, protocol, sample, config.seed)
    golds = [p.expected_fact for p in points]
    probes = [
        probe
        for position, point in enumerate(points)
        for probe in canned(point, [golds[(position + step) % len(golds)] for step in range(1, len(golds))])
    ]
    if not protocol.judges:
        return protocol, points, probe_judge(probes, protocol, judge=None)
    client = ChatClient(
        base_url=config.endpoint(),
        api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        cache=cache,
        concurrency=config.concurrency,
        policy=RetryPolicy(timeout=config.request_timeout, retries=config.max_retries, backoff=backoff),
    )
    try:

        def judge(bodies: list[dict[str, Any]], wheres: list[str]) -> list[str]:
            sent = [ChatClient.body(config.judge_model, b.pop("messages"), **b) for b in bodies]
            return [reply.content for reply in client.complete_many(sent, wheres, label="verdicts")]

        return protocol, points, probe_judge(probes, protocol, judge=judge)
    finally:
        client.close()
