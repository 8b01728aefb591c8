"""End-to-end answers: answer each test point from the memory's context, then judge it.

The play-through collects, at each test point, the messages the strategy would
put in front of a model (``context_for(question, k=k)``, with the run's k);
:func:`answer_run` sends them, followed by the question, to the answer model
and, with a judge, sends each answer to the judge model with the fixed judge prompt.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from evals.llm._client import SEED, ChatClient, LLMError, Progress, Reply
from evals.llm._prompts import answer_messages, judge_messages, prompt_digests, summary_messages
from evals.metrics import is_hit, wilson_interval
from evals.strategies.base import Message

__all__ = ["AnswerRun", "ChatSummarizer", "PointAnswer", "answer_identity", "answer_run", "parse_verdict"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def answer_identity(answer_model: str, judge_model: str | None, base_url: str) -> dict[str, Any]:
    """What makes runs with answers a configuration of their own (in config and cache keys)."""
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
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.correct, self.judged)

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

    def metrics_block(self) -> dict[str, Any]:
        """The result JSON's ``metrics.answers`` block."""
        interval = self.interval
        return {
            "answer_model": self.answer_model,
            "judge_model": self.judge_model,
            "accuracy": self.accuracy,
            "accuracy_interval_95": list(interval) if interval else None,
            "correct": self.correct,
            "judged": self.judged,
            "keyword_accuracy": self.keyword_accuracy,
            "keyword_hits": self.keyword_hits,
            "total": self.total,
            "mean_latency_s": self.mean_latency_s,
            "requests_made": self.requests_made,
            "requests_cached": self.requests_cached,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def parse_verdict(content: str) -> tuple[bool, str]:
    """``(correct, reason)`` from the judge's reply; ValueError saying what is wrong."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"the judge's reply is not a JSON object: {content[:120]!r}") from None
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
            keyword_hit=p.answerable and is_hit(p.expected_keywords, p.expected_fact, [reply.content]),
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
            result.correct, result.reason = parse_verdict(reply.content)
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
