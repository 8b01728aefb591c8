"""The harness's own protocol: its prompts (``evals/benchmarks/protocols/prompts/*.txt``), the memory's context as
``context_for`` gives it, a JSON verdict. Its numbers are what they were before protocols existed;
only its verdict reader is tolerant now: a reply it cannot read is counted as unparsed, never fatal."""

from __future__ import annotations

import json
import re
from typing import Any

from evals.benchmarks import HARNESS_JUDGE
from evals.benchmarks.kit import CORRECT, UNPARSED, WRONG, AnswerRequest, AskedPoint, JudgeReply, JudgeRequest, Protocol
from evals.benchmarks.protocols.prompts import answer_messages, judge_messages
from evals.io.jsonfile import strict_json
from evals.strategies.base import Message

__all__ = ["HarnessProtocol", "read_json_verdict"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_WORDS = {"yes": True, "true": True, "correct": True, "no": False, "false": False, "wrong": False, "incorrect": False}
SHOWN = 300  # characters of an unreadable reply kept as its reason


def _word(value: Any) -> bool | None:
    """A verdict word (yes/no, true/false, correct/wrong/incorrect), any case, trailing punctuation ignored."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _WORDS.get(value.strip().strip(".!").strip().lower())
    return None


def _from_object(data: Any) -> tuple[bool | None, str | None]:
    if not isinstance(data, dict):
        return None, None
    reason = data.get("reason")
    reason = reason if isinstance(reason, str) else (json.dumps(reason, ensure_ascii=False) if reason is not None else None)
    for key in ("correct", "label", "verdict"):
        if key in data:
            return _word(data[key]), reason
    return None, reason


def _last_object(text: str) -> Any:
    """The last top-level JSON object in ``text`` (prose, then the verdict), parsed as strictly as a
    server's body; None when there is none or it is not acceptable JSON (a key given twice, say)."""
    decoder = json.JSONDecoder()
    last = None
    position = text.find("{")
    while position >= 0:
        try:
            _, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # not JSON here, or nested beyond the decoder's depth
            position = text.find("{", position + 1)
            continue
        last = (position, end)
        position = text.find("{", end)
    if last is None:
        return None
    try:
        return strict_json(text[last[0] : last[1]], "the judge's reply")
    except ValueError:
        return None


def read_json_verdict(content: str) -> JudgeReply:
    """The harness judge's reply: ``{"correct": true|false, "reason": …}``, also fenced, also after
    prose, also ``"true"``/``"yes"`` as text, ``{"label": "CORRECT"}``, or a bare yes/no. Anything
    else (no object, a key given twice, no verdict in it) is unparsed, its text kept as the reason."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    shown = content[:SHOWN]
    word = _word(text)
    if word is not None:
        return JudgeReply(CORRECT if word else WRONG, None)
    try:
        data = strict_json(text, "the judge's reply")
    except ValueError:
        data = _last_object(text)
    correct, reason = _from_object(data)
    if correct is None:
        return JudgeReply(UNPARSED, shown)
    return JudgeReply(CORRECT if correct else WRONG, reason)


def _named(context: list[Message], speakers: tuple[str, str]) -> list[Message]:
    """The context with the second speaker's turns sent as what they are: where the dataset names its
    speakers (LoCoMo: ``"Bob: …"`` under the role assistant), a turn of the second speaker is a user
    message opening with that name, never the assistant's own words. Unnamed speakers: unchanged."""
    second = speakers[1]
    if second == "assistant":
        return context
    return [
        {**m, "role": "user"} if m.get("role") == "assistant" and m.get("content", "").startswith(f"{second}: ") else m
        for m in context
    ]


class HarnessProtocol(Protocol):
    """The harness's prompts over the strategy's own context; answerable points only are judged and counted."""

    name = "harness"
    judge_model = HARNESS_JUDGE
    judge_settings = {"response_format": {"type": "json_object"}}

    def __init__(self) -> None:
        from evals.benchmarks.protocols.prompts import prompt

        super().__init__({"answer": prompt("answer"), "judge": prompt("judge")})

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        return AnswerRequest(answer_messages(_named(point.context, point.speakers), point.question))

    def counted(self, point: AskedPoint) -> bool:
        return point.answerable  # as recall: an unanswerable point is answered and shown, not counted

    def judge_request(self, point: AskedPoint, answer: str) -> JudgeRequest:
        messages = judge_messages(point.question, point.expected_fact, point.expected_keywords, answer)
        return JudgeRequest(messages, dict(self.judge_settings))

    def read_verdict(self, content: str) -> JudgeReply:
        return read_json_verdict(content)
