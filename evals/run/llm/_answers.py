"""End-to-end answers: answer each test point from the memory's context, then judge it.

The play-through collects, at each test point, the messages the strategy would
put in front of a model (``context_for(question, k=k)``, with the run's k) and
the records it retrieved with their turns' dates and speakers;
:func:`answer_run` asks the answer model as the run's protocol says
(:mod:`evals.benchmarks.protocols`; by default the harness's own prompts: the context, then
the question) and, with a judge, asks the judge model as the judge protocol says.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from evals.benchmarks.kit import AskedPoint
from evals.benchmarks.protocols.prompts import prompt_digests, summary_messages
from evals.judge.scoring import match
from evals.model.results import ANSWER, JUDGE, MEMORY_WRITE, AnswerRun, PointAnswer, RequestTally, answer_identity
from evals.run.llm._client import SEED, ChatClient, LLMError, Progress, Reply
from evals.strategies.base import Message

if TYPE_CHECKING:
    from evals.benchmarks.protocols import Protocol

__all__ = ["AnswerRun", "AskedPoint", "ChatSummarizer", "PointAnswer", "answer_identity", "answer_run"]


def _nth(index: int, count: int) -> str:
    """`` 2/4`` for the second of four judge requests of one point; "" for a point's only one."""
    return f" {index + 1}/{count}" if count > 1 else ""


class ChatSummarizer:
    """summary_buffer's ``summarize_fn`` backed by the answer model (client None: only named,
    for working out a run's configuration without making requests)."""

    def __init__(self, client: ChatClient | None, model: str) -> None:
        self.client = client
        self.model = model
        self.__name__ = f"chat:{model}"
        self.calls = 0

    def __call__(self, messages: list[Message]) -> str:
        if self.client is None:
            raise LLMError("this summariser only names the configuration; it has no client")
        self.calls += 1
        body = ChatClient.body(self.model, summary_messages(messages))
        return self.client.complete(body, f"summary_buffer summary request #{self.calls}", kind=MEMORY_WRITE).content


def _graded(
    grader: Protocol, point: AskedPoint, answer: str, rounds: list[list[Reply]], seconds: float | None, where: str
) -> list[Any]:
    """The grade of each repeat's replies, each within ``seconds`` (``--call-timeout``) when given."""
    from evals.strategies._deadline import call_limit
    from evals.strategies._faults import CallTimeout

    grades = []
    with call_limit(seconds) as limit:
        for round_ in rounds:
            try:
                with limit:
                    grades.append(grader.grade(point, answer, [reply.content for reply in round_]))
            except CallTimeout:
                raise LLMError(
                    f"{where}: scoring by protocol {grader.name} gave no result within --call-timeout {seconds:g} s "
                    "(it was stopped)"
                ) from None
    return grades


def answer_run(
    client: ChatClient,
    asked: list[list[AskedPoint]],
    *,
    answer_model: str,
    judge_model: str | None,
    progress: Progress | None = None,
    protocol: Protocol | None = None,
    judge_protocol: Protocol | None = None,
    judge_repeats: int = 1,
    call_timeout: float | None = None,
) -> AnswerRun:
    """Answer every test point as ``protocol`` asks (default: the harness's own prompts); with a
    ``judge_model``, judge each answer the ``judge_protocol`` judges (default: the same protocol).

    The judge protocol decides which points are judged and counted, reads each verdict (one it
    cannot read is ``unparsed``: counted, not correct, never an error) and gives the score of a
    protocol that grades without a judge (LoCoMo's F1). Under the harness, a test point marked
    unanswerable is answered and shown, but neither judged nor counted, as it is kept out of recall.

    With ``judge_repeats`` N above 1 each verdict is asked N times (the same request; repeat r's
    cache key holds r), every repeat's verdict kept in order in ``repeat_verdicts``; the point's
    own verdict is repeat 0's, so a run judged once and the first repeat of one judged N times agree.

    ``call_timeout`` (``--call-timeout``) bounds each point's scoring (the protocol's ``grade``: BEAM's event
    ordering embeds and ranks the answer's lines) as it bounds each call into a strategy."""
    from evals.benchmarks.protocols import HarnessProtocol, protocols_block

    protocol = protocol or HarnessProtocol()
    grader = judge_protocol or protocol
    flat = [p for conv in asked for p in conv]
    judging = judge_model is not None and grader.judges
    for p in flat:  # a point the judge cannot grade (BEAM's without a rubric) stops the run before any request
        if judging and grader.judged(p):
            grader.check(p)
    wheres = [f"conversation {p.conversation_id!r}, turn {p.turn_index}" for p in flat]
    requests = [protocol.answer_request(p) for p in flat]
    answers: list[Reply] = client.complete_many(
        [ChatClient.body(answer_model, r.messages, **r.settings) for r in requests],
        [f"{w} (answer)" for w in wheres],
        progress=progress,
        label="answers",
        kind=ANSWER,
    )
    results = []
    for p, request, reply in zip(flat, requests, answers, strict=True):
        answer, note = protocol.answer_of(request, reply.content)
        results.append(
            PointAnswer(
                answer=answer,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                latency_s=reply.latency_s,
                keyword_hit=p.answerable and match(p.expected_keywords, p.expected_fact, [answer]).hit,
                answerable=p.answerable,
                reason=note,
                category=p.category,
                counted=grader.counted(p),
                score=grader.score(p, answer),
                answer_cached=reply.cached,
                served_model=reply.model,
                fingerprint=reply.fingerprint,
            )
        )
    judged: list[int] = []
    if judging:
        judged = [i for i, p in enumerate(flat) if grader.judged(p)]
        asks = [grader.judge_requests(flat[i], results[i].answer) for i in judged]
        # One point may need several requests (BEAM: one per rubric item): each named by its place among them.
        named = [
            (ChatClient.body(judge_model, a.messages, **a.settings), f"{wheres[i]} (judge{_nth(j, len(many))}")
            for i, many in zip(judged, asks, strict=True)
            for j, a in enumerate(many)
        ]
        starts = [sum(len(many) for many in asks[:n]) for n in range(len(asks))]
        # Repeat-major: every point's first verdict is asked before any second one.
        verdicts = client.complete_many(
            [body for _ in range(judge_repeats) for body, _ in named],
            [f"{where}{f', repeat {r}' if r else ''})" for r in range(judge_repeats) for _, where in named],
            progress=progress,
            label="verdicts",
            kind=JUDGE,
            repeats=[r for r in range(judge_repeats) for _ in named],
        )
        for n, index in enumerate(judged):
            result, count = results[index], len(asks[n])
            rounds = [verdicts[r * len(named) + starts[n] : r * len(named) + starts[n] + count] for r in range(judge_repeats)]
            replies = [reply for round_ in rounds for reply in round_]
            grades = _graded(grader, flat[index], result.answer, rounds, call_timeout, wheres[index])
            grade = grades[0]
            result.verdict, result.correct = grade.label, grade.correct
            # Decoded from the reply's own JSON: escapes undone, so scrubbed again.
            result.reason = client.scrub(grade.reason) if grade.reason is not None else None
            if grader.graded:
                result.score = grade.score
                result.grades = list(grade.grades) if grade.grades is not None else None
            if grade.counted is not None:
                result.counted = grade.counted
            # A point's judge tokens are every request's of every repeat: what judging it cost.
            result.judge_prompt_tokens = sum(r.prompt_tokens for r in replies)
            result.judge_completion_tokens = sum(r.completion_tokens for r in replies)
            result.judge_cached = all(r.cached for r in replies)
            result.judge_served_model = rounds[0][0].model
            if judge_repeats > 1:
                result.repeat_verdicts = [g.label for g in grades]
    points: list[list[PointAnswer]] = []
    position = 0
    for conv in asked:
        points.append(results[position : position + len(conv)])
        position += len(conv)
    usage = client.usage
    # Every kind the run made gets its tally and denominator, also with no request (a fully cached
    # rerun, a strategy that writes no summary): zero spent is a figure, not a missing one.
    tallies = {kind: dataclasses.replace(tally, served=dict(tally.served)) for kind, tally in usage.tallies.items()}
    denominators = {ANSWER: (answer_model, len(flat)), MEMORY_WRITE: (answer_model, len(asked))}
    if judging:
        denominators[JUDGE] = (judge_model, len(judged))
    for kind, (model, per) in denominators.items():
        tallies.setdefault(kind, RequestTally(model)).per = per
    settings: dict[str, Any] = {"temperature": 0, "seed": SEED, "prompts": prompt_digests()}
    if judge_repeats > 1:
        settings["judge_repeats"] = judge_repeats
    block = protocols_block(protocol, grader)
    if block is not None:
        settings["protocols"] = block
        settings["answer_settings"] = dict(protocol.answer_settings)
        settings["judge_settings"] = dict(grader.judge_settings) if grader.judges else None
    return AnswerRun(
        answer_model=answer_model,
        judge_model=judge_model if grader.judges else None,
        base_url=client.base_url,
        points=points,
        settings=settings,
        requests_made=usage.requests_made,
        requests_cached=usage.requests_cached,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        usage=tallies,
        protocol=protocol.name,
        protocol_source=protocol.source_record() or grader.source_record(),
    )
