"""The fixed prompts, kept as files beside this module and shipped with the package.

They are part of the method, so they are published on the site's methodology
page and each run records a digest of the ones it used.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.resources import files
from string import Template

from evals.strategies.base import Message

__all__ = ["PROMPT_NAMES", "answer_messages", "judge_messages", "prompt", "prompt_digests", "summary_messages"]

PROMPT_NAMES = ("answer", "judge", "summarize")
_ROLES = {"system", "user", "assistant"}


@cache
def prompt(name: str) -> str:
    """The text of prompt ``name`` (``answer``, ``judge`` or ``summarize``)."""
    if name not in PROMPT_NAMES:
        raise KeyError(name)
    return files("evals.benchmarks.protocols").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()


def prompt_digests() -> dict[str, str]:
    """The first 12 hex digits of each prompt's sha256: enough to tell which text a run used."""
    return {name: hashlib.sha256(prompt(name).encode("utf-8")).hexdigest()[:12] for name in PROMPT_NAMES}


def _chat_message(message: Message) -> Message:
    """A corpus or memory message as the chat API accepts it: a role it does not
    know (``tool``, a speaker's name) is sent as a user message that names it."""
    role, content = message["role"], message["content"]
    if role in _ROLES:
        return {"role": role, "content": content}
    return {"role": "user", "content": f"{role}: {content}"}


def answer_messages(context: list[Message], question: str) -> list[Message]:
    """The answer request: the fixed instruction, the memory's context, then the question."""
    return [
        {"role": "system", "content": prompt("answer")},
        *(_chat_message(m) for m in context),
        {"role": "user", "content": question},
    ]


def judge_messages(question: str, expected_fact: str, expected_keywords: list[str], answer: str) -> list[Message]:
    """The judge request: one user message, the judge prompt filled in."""
    text = Template(prompt("judge")).substitute(
        question=question,
        expected_fact=expected_fact,
        expected_keywords=json.dumps(expected_keywords, ensure_ascii=False),
        answer=answer,
    )
    return [{"role": "user", "content": text}]


def summary_messages(messages: list[Message]) -> list[Message]:
    """A summary_buffer summary request: the previous summary (a leading system message)
    and the evicted turns, written out in one user message."""
    lines = []
    for m in messages:
        label = "Previous summary" if m["role"] == "system" else m["role"]
        lines.append(f"{label}: {m['content']}")
    return [{"role": "system", "content": prompt("summarize")}, {"role": "user", "content": "\n".join(lines)}]
