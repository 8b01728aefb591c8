"""End-to-end answers: answer each test point from the memory's context, then judge it.

The play-through collects, at each test point, the messages the strategy would
put in front of a model (``context_for(question, k=k)``, with the run's k);
:func:`answer_run` sends them, followed by the question, to the answer model
and, with a judge, sends each answer to the judge model with the fixed judge prompt.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass

from evals.llm._client import SEED, ChatClient, LLMError, Progress, Reply, strict_json
from evals.llm._prompts import answer_messages, judge_messages, prompt_digests, summary_messages
from evals.results import ANSWER, JUDGE, MEMORY_WRITE, AnswerRun, PointAnswer, RequestTally, answer_identity
from evals.scoring import match
from evals.strategies.base import Message

__all__ = ["AnswerRun", "ChatSummarizer", "PointAnswer", "answer_identity", "answer_run", "parse_verdict"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_verdict(content: str) -> tuple[bool, str]:
    """``(correct, reason)`` from the judge's reply; ValueError saying what is wrong. Parsed as strictly
    as a server's body: a reply naming ``correct`` twice is refused, not read as its last value."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = strict_json(text, "the judge's reply")
    except ValueError as exc:
        detail = str(exc).removeprefix("the judge's reply")
        if "is not JSON" in detail:
            raise ValueError(f"the judge's reply is not a JSON object: {content[:120]!r}") from None
        raise ValueError(f"the judge's reply{detail}: {content[:120]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("correct"), bool):
        raise ValueError(f"the judge's reply has no boolean 'correct': {content[:120]!r}")
    reason = data.get("reason", "")
    return data["correct"], reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)


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


@dataclass(frozen=True)
class AskedPoint:
    """What a test point needs for its answer: where it is, what was asked and the context."""

    conversation_id: str
    turn_index: int
    question: str
    expected_fact: str
    expected_keywords: list[str]
    context: list[Message]
    answerable: bool = True


def answer_run(
    client: ChatClient,
    asked: list[list[AskedPoint]],
    *,
    answer_model: str,
    judge_model: str | None,
    progress: Progress | None = None,
    judge_repeats: int = 1,
) -> AnswerRun:
    """Answer every test point; with a ``judge_model``, judge every answer to an answerable one.

    A test point marked unanswerable (the conversation holds no answer) is answered and
    shown, but neither judged nor counted in the accuracies, as it is kept out of recall.

    With ``judge_repeats`` N above 1 each verdict is asked N times (the same request; repeat r's
    cache key holds r), every repeat's verdict kept in order in ``repeat_verdicts``; the point's
    own verdict is repeat 0's, so a run judged once and the first repeat of one judged N times agree."""
    flat = [p for conv in asked for p in conv]
    wheres = [f"conversation {p.conversation_id!r}, turn {p.turn_index}" for p in flat]
    answers: list[Reply] = client.complete_many(
        [ChatClient.body(answer_model, answer_messages(p.context, p.question)) for p in flat],
        [f"{w} (answer)" for w in wheres],
        progress=progress,
        label="answers",
        kind=ANSWER,
    )
    results = [
        PointAnswer(
            answer=reply.content,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=reply.latency_s,
            keyword_hit=p.answerable and match(p.expected_keywords, p.expected_fact, [reply.content]).hit,
            answerable=p.answerable,
            answer_cached=reply.cached,
            served_model=reply.model,
            fingerprint=reply.fingerprint,
        )
        for p, reply in zip(flat, answers, strict=True)
    ]
    judged: list[int] = []
    if judge_model is not None:
        judged = [i for i, p in enumerate(flat) if p.answerable]
        bodies = [
            ChatClient.body(
                judge_model,
                judge_messages(flat[i].question, flat[i].expected_fact, flat[i].expected_keywords, results[i].answer),
                response_format={"type": "json_object"},
            )
            for i in judged
        ]
        # Repeat-major: every point's first verdict is asked before any second one.
        verdicts = client.complete_many(
            [body for _ in range(judge_repeats) for body in bodies],
            [f"{wheres[i]} (judge{f', repeat {r}' if r else ''})" for r in range(judge_repeats) for i in judged],
            check=parse_verdict,
            progress=progress,
            label="verdicts",
            kind=JUDGE,
            repeats=[r for r in range(judge_repeats) for _ in judged],
        )
        for n, index in enumerate(judged):
            result = results[index]
            replies = [verdicts[r * len(judged) + n] for r in range(judge_repeats)]
            first = replies[0]
            result.correct, reason = parse_verdict(first.content)
            result.reason = client.scrub(reason)  # decoded from the reply's own JSON: escapes undone, so scrubbed again
            # A point's judge tokens are every repeat's: what judging it cost.
            result.judge_prompt_tokens = sum(r.prompt_tokens for r in replies)
            result.judge_completion_tokens = sum(r.completion_tokens for r in replies)
            result.judge_cached = all(r.cached for r in replies)
            result.judge_served_model = first.model
            if judge_repeats > 1:
                result.repeat_verdicts = ["correct" if parse_verdict(r.content)[0] else "wrong" for r in replies]
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
    if judge_model is not None:
        denominators[JUDGE] = (judge_model, len(judged))
    for kind, (model, per) in denominators.items():
        tallies.setdefault(kind, RequestTally(model)).per = per
    settings = {"temperature": 0, "seed": SEED, "prompts": prompt_digests()}
    if judge_repeats > 1:
        settings["judge_repeats"] = judge_repeats
    return AnswerRun(
        answer_model=answer_model,
        judge_model=judge_model,
        base_url=client.base_url,
        points=points,
        settings=settings,
        requests_made=usage.requests_made,
        requests_cached=usage.requests_cached,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        usage=tallies,
    )
