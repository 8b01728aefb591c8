"""LoCoMo-Plus's protocol (xjtuleeyf/Locomo-Plus ``evaluation_framework/``): its answer input from
``task_eval/utils.py`` and ``evaluate_qa.py``, its graded judge from ``task_eval/prompt.py`` and ``llm_as_judge.py``.

Answer (``evaluate_qa._process_one_sample`` through ``utils.call_llm``): ``CONV_START_PROMPT`` with the speakers
``A`` and ``B`` (``call_llm`` never passes the names), the task instruction (``INSTRUCTION_COGNITIVE`` for a
Cognitive item, ``INSTRUCTION_QA`` otherwise), then the input prompt stripped; one user message, at most 1,024
tokens, the reply stripped (``"(empty)"`` when nothing is left). The input prompt is built as
``data/unified_input.py`` builds it, from the retrieved records instead of the whole stitched conversation: one
line per record in rank order, ``<speaker> said, "<text>"`` (a turn's shared-image caption left out, as the
stitched dialogue has none; a record that is no turn is its text), then for a Cognitive item the trigger query's
turns written the same way (the stitched dialogue ends with them), for any other category a blank line and
``Question: <question>``. The published script samples at temperature 0.3; every request here is at temperature 0.

Judge (``llm_as_judge._judge_one_record``): ``PROMPT_TEMPLATES[category]`` (else ``"default"``), a LoCoMo
category by the name ``data/unified_input.py`` gives its number (``"2 temporal"`` -> ``"temporal"``), filled by
``str.format`` with the gold answer, the prediction and the evidence. An adversarial LoCoMo question (category 5)
has no ``answer`` there, so its gold is empty, as a Cognitive item's. A Cognitive item has no gold answer (empty)
and its evidence is the cue dialogue, each turn ``<speaker>：<text>`` (a full-width colon, as
``_cue_dialogue_to_evidence`` writes it); any other point's evidence is its evidence turns, a line each,
``<speaker>：<text>`` as ``_evidence_to_text`` writes LoCoMo's (the text as the file has it, no image
caption). The judge is called as ``call_llm`` calls it without a category, so the prompt goes after
``CONV_START_PROMPT`` (A and B) too, stripped; one user message, at most 512 tokens (``judge.sh``: gpt-4o-mini).
The label is read as ``_parse_judge_response`` reads it (a ``{"label": …, "reason": …}`` pattern, else the reply as
JSON, else the first of "correct", "wrong", "partial" the reply holds, so "incorrect" reads as correct, as there)
and scored by ``LABEL_TO_SCORE`` (correct 1, partial 0.5, wrong 0). A label that is none of those scores 0, as the
script scores it, and is counted as unparsed here. Every point is judged and counted; the figures are the mean
score overall (``overall_avg``) and per category (``by_category``).
"""

from __future__ import annotations

import ast
import json
import re

from evals.benchmarks.kit import (
    CORRECT,
    PARTIAL,
    UNPARSED,
    WRONG,
    AnswerRequest,
    AskedPoint,
    ContextRecord,
    Grade,
    JudgeReply,
    JudgeRequest,
    Protocol,
    PythonSource,
    Sources,
    literal,
)
from evals.benchmarks.locomo_plus import JUDGE as JUDGE_MODEL

__all__ = ["COGNITIVE", "JUDGE", "PROMPT", "UTILS", "LoCoMoPlusProtocol", "extract", "parse_judge_response"]

PROMPT = "evaluation_framework/task_eval/prompt.py"
UTILS = "evaluation_framework/task_eval/utils.py"
JUDGE = "evaluation_framework/task_eval/llm_as_judge.py"
COGNITIVE = "Cognitive"
ADVERSARIAL = "adversarial"
# data/unified_input.py's LOCOMO_CATEGORY_NAMES: a LoCoMo question's category number -> its judge template's name.
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "common-sense", 4: "single-hop", 5: ADVERSARIAL}
_NUMBERED = re.compile(r"([1-5])(?:\s.*)?")
DEFAULT = "default"
NAMES = ("A", "B")  # call_llm builds its prefix with _build_model_input's defaults
_LABELS = {"correct": CORRECT, "partial": PARTIAL, "wrong": WRONG}
_PATTERN = re.compile(r"""\{[^{}]*"label"\s*:\s*["']([^"']+)["'][^{}]*"reason"\s*:\s*["']([^"']*)["']""", re.DOTALL)
_CAPTION = re.compile(r"^(.*) \[shares (.*)\]$", re.DOTALL)  # how the LoCoMo importer writes a shared image
_NAMED = re.compile(r"([^\s:][^:\n]{0,39}): (.*)", re.DOTALL)
SHOWN = 200  # _parse_judge_response keeps raw[:200] as the reason of a reply it reads by its words


def extract(sources: Sources) -> dict[str, str]:
    """The judge templates by category (prompt.py), the answer's prefix and instructions (utils.py), and the
    label scores (llm_as_judge.py), each a string: a template by ``judge:<category>``, the scores as JSON."""
    prompt = PythonSource(sources.texts[PROMPT], sources.paths[PROMPT])
    templates = None
    for node in prompt.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROMPT_TEMPLATES" for t in node.targets):
            templates = literal(node.value)
    if (
        not isinstance(templates, dict)
        or DEFAULT not in templates
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in templates.items())
    ):
        raise prompt.missing("a dict PROMPT_TEMPLATES of category -> template with a 'default'")
    utils = PythonSource(sources.texts[UTILS], sources.paths[UTILS])
    out = {f"judge:{category}": text for category, text in templates.items()}
    out |= {name: utils.constant(name) for name in ("CONV_START_PROMPT", "INSTRUCTION_QA", "INSTRUCTION_COGNITIVE")}
    judge = PythonSource(sources.texts[JUDGE], sources.paths[JUDGE])
    scores = None
    for node in judge.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LABEL_TO_SCORE" for t in node.targets):
            scores = literal(node.value)
    numbers = isinstance(scores, dict) and all(isinstance(v, int | float) for v in scores.values())
    if not numbers or set(scores) != set(_LABELS):  # type: ignore[arg-type]
        raise judge.missing("a dict LABEL_TO_SCORE of correct, partial and wrong to numbers")
    out["label_scores"] = json.dumps({k: float(v) for k, v in sorted(scores.items())})
    return out


def parse_judge_response(raw: str) -> tuple[str, str]:
    """``_parse_judge_response``: (label, reason) of a judge's reply, label "" when it gives none."""
    label, reason = "", ""
    raw = (raw or "").strip()
    try:
        found = _PATTERN.search(raw)
        if found:
            label, reason = found.group(1).strip(), (found.group(2) or "").strip()
        else:
            data = json.loads(raw)
            label = (data.get("label") or "").strip()
            reason = (data.get("reason") or "").strip()
    except Exception:  # noqa: BLE001 - the script's own catch-all: any failure reads the reply by its words
        low = raw.lower()
        label = "correct" if "correct" in low else "wrong" if "wrong" in low else "partial" if "partial" in low else ""
        reason = raw[:SHOWN] if raw else ""
    return label, reason


def _said(speaker: str, text: str) -> str:
    return f'{speaker} said, "{text.strip()}"'


def _line(record: ContextRecord) -> str:
    if record.turn is None:
        return record.text
    text = record.utterance
    shared = _CAPTION.match(text)
    return _said(record.speaker or record.role or "?", shared.group(1) if shared else text)


def _evidence_line(record: ContextRecord) -> str:
    """An evidence turn as ``_evidence_to_text`` writes it: the speaker, a full-width colon, the turn's text as the
    file has it (not stripped; a shared image's caption is no part of it)."""
    text = record.utterance
    speaker = record.speaker
    if speaker is None and (named := _NAMED.fullmatch(text)):
        speaker, text = named.group(1), named.group(2)
    shared = _CAPTION.match(text)
    return f"{speaker or 'Unknown'}：{shared.group(1) if shared else text}"


def _turns(text: str) -> list[tuple[str, str]]:
    """The ``Speaker: text`` lines of a question or a cue dialogue, as (speaker, text); a line naming none, ("", line)."""
    out = []
    for line in text.split("\n"):
        named = _NAMED.fullmatch(line)
        out.append((named.group(1), named.group(2)) if named else ("", line))
    return out


def judged_category(category: str | None) -> str | None:
    """The category whose judge template a point gets: a LoCoMo category (``"2 temporal"``, as the LoCoMo importer
    names them, or ``"2"``) by unified_input.py's map of LoCoMo's numbers (``"temporal"``); any other as it is."""
    found = _NUMBERED.fullmatch(category or "")
    return LOCOMO_CATEGORIES[int(found.group(1))] if found else category


class LoCoMoPlusProtocol(Protocol):
    extract = staticmethod(extract)
    name = "locomo_plus"
    judge_model = JUDGE_MODEL
    graded = True
    answer_settings = {"max_tokens": 1024}
    judge_settings = {"max_tokens": 512}

    def _prefix(self) -> str:
        return self.templates["CONV_START_PROMPT"].format(*NAMES)

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        lines = [_line(record) for record in point.records]
        if point.category == COGNITIVE:
            lines += [_said(speaker, text) if speaker else text for speaker, text in _turns(point.question)]
            body, instruction = "\n".join(lines), self.templates["INSTRUCTION_COGNITIVE"]
        else:
            body, instruction = "\n".join(lines).rstrip() + "\n\nQuestion: " + point.question, self.templates["INSTRUCTION_QA"]
        text = self._prefix() + instruction + body.strip()
        return AnswerRequest([{"role": "user", "content": text}], dict(self.answer_settings))

    def answer_of(self, request: AnswerRequest, reply: str) -> tuple[str, str | None]:
        text = reply.strip()
        return (text, None) if text else ("(empty)", "the model's reply was empty; the script records it as (empty)")

    def evidence(self, point: AskedPoint) -> str:
        """The evidence as the judge reads it: a Cognitive item's cue dialogue (``_cue_dialogue_to_evidence``), any
        other point's evidence turns as ``_evidence_to_text`` writes them, ``<speaker>：<text>`` a line."""
        if point.category != COGNITIVE:
            return "\n".join(_evidence_line(record) for record in point.evidence)
        return "\n".join(f"{speaker}：{text.strip()}" for speaker, text in _turns(point.expected_fact) if text)

    def judge_request(self, point: AskedPoint, answer: str) -> JudgeRequest:
        category = judged_category(point.category)
        name = f"judge:{category}"
        template = self.templates[name if name in self.templates else f"judge:{DEFAULT}"]
        # unified_input.py keeps a LoCoMo question's "answer" as the gold; an adversarial one (category 5) has none.
        gold = "" if category in (COGNITIVE, ADVERSARIAL) or not point.answerable else point.expected_fact
        prompt = template.format(gold=gold, pred=answer, evidence=self.evidence(point))
        return JudgeRequest([{"role": "user", "content": self._prefix() + prompt.strip()}], dict(self.judge_settings))

    def read_verdict(self, content: str) -> JudgeReply:
        label, reason = parse_judge_response(content)
        return JudgeReply(_LABELS.get(label.strip().lower(), UNPARSED), reason or None)

    def grade(self, point: AskedPoint, answer: str, replies: list[str]) -> Grade:
        label, reason = parse_judge_response(replies[0])
        scores = json.loads(self.templates["label_scores"])
        key = label.strip().lower()
        score = float(scores.get(key, 0.0))
        if key not in _LABELS:
            shown = replies[0].strip()[:SHOWN]
            return Grade(UNPARSED, f"no label the script scores (read {label!r}), so 0: {shown!r}", score, (None,))
        return Grade(_LABELS[key], reason or None, score, (score,))
