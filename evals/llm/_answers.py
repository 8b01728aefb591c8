"""End-to-end answers: answer each test point from the memory's context, then judge it.

The play-through collects, at each test point, the messages the strategy would
put in front of a model (``context_for(question, k=k)``, with the run's k);
:func:`answer_run` sends them, followed by the question, to the answer model
and, with a judge, sends each answer to the judge model with the fixed judge prompt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from evals.llm._client import SEED, ChatClient, LLMError, Progress, Reply, strict_json
from evals.llm._prompts import answer_messages, judge_messages, prompt_digests, summary_messages
from evals.results import AnswerRun, PointAnswer, answer_identity
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
        return self.client.complete(body, f"summary_buffer summary request #{self.calls}").content


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
) -> AnswerRun:
    """Answer every test point; with a ``judge_model``, judge every answer to an answerable one.

    A test point marked unanswerable (the conversation holds no answer) is answered and
    shown, but neither judged nor counted in the accuracies, as it is kept out of recall."""
    flat = [p for conv in asked for p in conv]
    wheres = [f"conversation {p.conversation_id!r}, turn {p.turn_index}" for p in flat]
    answers: list[Reply] = client.complete_many(
        [ChatClient.body(answer_model, answer_messages(p.context, p.question)) for p in flat],
        [f"{w} (answer)" for w in wheres],
        progress=progress,
        label="answers",
    )
    results = [
        PointAnswer(
            answer=reply.content,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=reply.latency_s,
            keyword_hit=p.answerable and match(p.expected_keywords, p.expected_fact, [reply.content]).hit,
            answerable=p.answerable,
        )
        for p, reply in zip(flat, answers, strict=True)
    ]
    if judge_model is not None:
        judged = [i for i, p in enumerate(flat) if p.answerable]
        verdicts = client.complete_many(
            [
                ChatClient.body(
                    judge_model,
                    judge_messages(flat[i].question, flat[i].expected_fact, flat[i].expected_keywords, results[i].answer),
                    response_format={"type": "json_object"},
                )
                for i in judged
            ],
            [f"{wheres[i]} (judge)" for i in judged],
            check=parse_verdict,
            progress=progress,
            label="verdicts",
        )
        for result, reply in zip([results[i] for i in judged], verdicts, strict=True):
            result.correct, reason = parse_verdict(reply.content)
            result.reason = client.scrub(reason)  # decoded from the reply's own JSON: escapes undone, so scrubbed again
            result.judge_prompt_tokens, result.judge_completion_tokens = reply.prompt_tokens, reply.completion_tokens
    points: list[list[PointAnswer]] = []
    position = 0
    for conv in asked:
        points.append(results[position : position + len(conv)])
        position += len(conv)
    usage = client.usage
    return AnswerRun(
        answer_model=answer_model,
        judge_model=judge_model,
        base_url=client.base_url,
        points=points,
        settings={"temperature": 0, "seed": SEED, "prompts": prompt_digests()},
        requests_made=usage.requests_made,
        requests_cached=usage.requests_cached,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
