"""mem0's protocol on LoCoMo (mem0ai/mem0 ``evaluation/``, at the last commit that held it): its
answer prompt from ``evaluation/prompts.py`` and its LLM judge from ``evaluation/metrics/llm_judge.py``.

Answer (``evaluation/src/memzero/search.py``): ``ANSWER_PROMPT`` rendered as a Jinja template with
each speaker's name and memories, the memories a JSON list (indent 4) of ``"<timestamp>: <memory>"``
strings, the timestamp being the record's session date; sent as one system message, temperature 0.
The records are split by speaker: a turn goes to its speaker (the dataset's name, else its role); a
record that is no turn (a summary, a mem0 fact) has neither speaker nor date, so it is listed under
the first speaker, as its text alone.

Judge: ``ACCURACY_PROMPT`` filled with the question, the gold answer and the answer; one user message,
``response_format`` json_object, temperature 0; the verdict is ``label == "CORRECT"`` in the JSON the
reply holds (mem0's ``extract_json``: a fenced block, else from the first ``{`` to the last ``}``). A
reply without that JSON, or without a label, is unparsed. Category 5 (LoCoMo's adversarial questions)
is neither judged nor counted, as the script skips it.
"""

from __future__ import annotations

import json
import re

from jinja2 import Template

from evals.benchmarks.kit import (
    CORRECT,
    UNPARSED,
    WRONG,
    AnswerRequest,
    AskedPoint,
    JudgeReply,
    JudgeRequest,
    Protocol,
    PythonSource,
    Sources,
    category_number,
    strict_json,
)
from evals.benchmarks.locomo import JUDGES

__all__ = ["Mem0Protocol", "extract", "extract_json"]

JUDGE = "evaluation/metrics/llm_judge.py"
PROMPTS = "evaluation/prompts.py"
SKIPPED_CATEGORY = 5
_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def extract(sources: Sources) -> dict[str, str]:
    prompts = PythonSource(sources.texts[PROMPTS], sources.paths[PROMPTS])
    judge = PythonSource(sources.texts[JUDGE], sources.paths[JUDGE])
    return {"answer": prompts.constant("ANSWER_PROMPT"), "judge": judge.constant("ACCURACY_PROMPT")}


def extract_json(text: str) -> str:
    """The JSON part of a reply, as mem0's ``extract_json`` finds it: a fenced block's body, else
    from the first ``{`` to the last ``}``, else the whole text."""
    text = text.strip()
    fenced = _FENCED.search(text)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text


class Mem0Protocol(Protocol):
    extract = staticmethod(extract)
    name = "mem0"
    judge_model = JUDGES["mem0"]
    judge_settings = {"response_format": {"type": "json_object"}}

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        first, second = point.speakers
        memories: dict[str, list[str]] = {first: [], second: []}
        for record in point.records:
            speaker = record.speaker or record.role
            memory = f"{record.date}: {record.text}" if record.date is not None else record.text
            memories[speaker if speaker in memories else first].append(memory)
        text = Template(self.templates["answer"]).render(
            speaker_1_user_id=first,
            speaker_2_user_id=second,
            speaker_1_memories=json.dumps(memories[first], indent=4),
            speaker_2_memories=json.dumps(memories[second], indent=4),
            question=point.question,
        )
        return AnswerRequest([{"role": "system", "content": text}])

    def counted(self, point: AskedPoint) -> bool:
        return category_number(point.category) != SKIPPED_CATEGORY

    def judge_request(self, point: AskedPoint, answer: str) -> JudgeRequest:
        text = self.templates["judge"].format(question=point.question, gold_answer=point.expected_fact, generated_answer=answer)
        return JudgeRequest([{"role": "user", "content": text}], dict(self.judge_settings))

    def read_verdict(self, content: str) -> JudgeReply:
        try:
            data = strict_json(extract_json(content), "the judge's reply")
        except ValueError:
            return JudgeReply(UNPARSED, content[:300])
        if not isinstance(data, dict) or "label" not in data:
            return JudgeReply(UNPARSED, content[:300])
        return JudgeReply(CORRECT if data["label"] == "CORRECT" else WRONG, None)
