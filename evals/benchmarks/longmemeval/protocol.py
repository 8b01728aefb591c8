"""LongMemEval's protocol (xiaowu0162/LongMemEval): its reading prompt and its judge, read from
``src/generation/run_generation.py`` and ``src/evaluation/evaluate_qa.py`` at the pinned commit.

Answer (``prepare_prompt``, no chain-of-thought, no fact expansion, history format ``json``): the
retrieved records grouped by session, the sessions sorted by their date, each written with the
script's per-session format string (its number, its date, ``'\\n' + json.dumps(turns)``), then the
answer template filled with that history, the question turn's date (``question_date``) and the
question; one user message, temperature 0, at most 500 tokens. A record that is no turn (a summary,
a mem0 fact) has no session or date: each is a session of its own with an empty date, sorted first.

Judge (``get_anscheck_prompt``): one template per question type, the abstention template for an
unanswerable (``_abs``) point; one user message, temperature 0, at most 10 tokens; the verdict is
``'yes' in reply.lower()``. Every point is judged and counted, abstention included. A question type
the script does not know gets its template for single-session-user/-assistant and multi-session
(where the script would stop with NotImplementedError).
"""

from __future__ import annotations

import ast
import json

from evals.benchmarks.kit import (
    CORRECT,
    WRONG,
    AnswerRequest,
    AskedPoint,
    ContextRecord,
    JudgeReply,
    JudgeRequest,
    Protocol,
    PythonSource,
    Sources,
    literal,
)
from evals.benchmarks.longmemeval import JUDGE, QUESTION_TYPE_NAMES

__all__ = ["QUESTION_TYPES", "LongMemEvalProtocol", "extract"]

EVALUATE = "src/evaluation/evaluate_qa.py"
GENERATE = "src/generation/run_generation.py"
QUESTION_TYPES = QUESTION_TYPE_NAMES
ABSTENTION = "abstention"
FALLBACK = "multi-session"  # the general template, for a question type the script does not name


def _judge_templates(source: PythonSource) -> dict[str, str]:
    """``judge:<question type>`` and ``judge:abstention`` from ``get_anscheck_prompt``'s branches."""
    templates: dict[str, str] = {}
    for branch in source.assigned_strings("get_anscheck_prompt", "template"):
        text = source.text(branch, "a judge template")
        if branch.holds("not abstention") is False:
            templates[ABSTENTION] = text
            continue
        for condition in branch.conditions:
            node = condition.node
            if (
                not condition.holds
                or not isinstance(node, ast.Compare)
                or not isinstance(node.left, ast.Name)
                or node.left.id != "task"
            ):
                continue
            named = literal(node.comparators[0])
            for task in [named] if isinstance(named, str) else (named or []):
                templates[task] = text
    missing = [t for t in (*QUESTION_TYPES, ABSTENTION) if t not in templates]
    if missing:
        raise source.missing(f"get_anscheck_prompt's templates for {', '.join(missing)}")
    return templates


def extract(sources: Sources) -> dict[str, str]:
    """Every template the protocol uses, by name, read from the two pinned files."""
    generate = PythonSource(sources.texts[GENERATE], sources.paths[GENERATE])
    # prepare_prompt's template without fact expansion ("none") and without chain-of-thought.
    answers = [
        b
        for b in generate.assigned_strings("prepare_prompt", "answer_prompt_template")
        if b.holds("cot") is False and b.under("== 'none'") and b.holds("retriever_type == 'no-retrieval'") is False
    ]
    answer = generate.text(generate.one(answers, "prepare_prompt's answer template without CoT or fact expansion"), "it")
    # The per-session format string of the session- and turn-level retrievers.
    formats = [
        b.node.func.value  # type: ignore[attr-defined]
        for b in generate.calls("prepare_prompt", "format")
        if b.under("'flat-session'") and isinstance(b.node.func.value, ast.Constant)  # type: ignore[attr-defined]
    ]
    if len(formats) != 1:
        raise generate.missing("the per-session format string of session retrieval in prepare_prompt", len(formats))
    session = formats[0].value
    evaluate = PythonSource(sources.texts[EVALUATE], sources.paths[EVALUATE])
    judges = _judge_templates(evaluate)
    return {"answer": answer, "session": session, **{f"judge:{name}": text for name, text in judges.items()}}


def _history(point: AskedPoint, session_format: str) -> str:
    """prepare_prompt's history string, json format: sessions in date order, each its turns as JSON."""
    chunks: list[tuple[str, object]] = []  # (date, the session's turns, or a lone record's text)
    by_session: dict[str, list[ContextRecord]] = {}
    for record in point.records:
        if record.turn is None:
            chunks.append(("", record.text))
            continue
        key = record.session if record.session is not None else f"\0{record.date}"
        if key not in by_session:
            by_session[key] = []
            chunks.append((record.date or "", by_session[key]))
        by_session[key].append(record)
    written = []
    for date, entry in chunks:
        if isinstance(entry, list):
            entry = [{"role": r.role, "content": r.text} for r in sorted(entry, key=lambda r: r.turn)]
        written.append((date, "\n" + json.dumps(entry)))
    written.sort(key=lambda chunk: chunk[0])  # by date, as the script sorts; stable, like list.sort
    return "".join(session_format.format(i + 1, date, text) for i, (date, text) in enumerate(written))


class LongMemEvalProtocol(Protocol):
    extract = staticmethod(extract)
    name = "longmemeval"
    judge_model = JUDGE
    answer_settings = {"max_tokens": 500}
    judge_settings = {"max_tokens": 10}

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        history = _history(point, self.templates["session"])
        text = self.templates["answer"].format(history, point.question_date or "", point.question)
        return AnswerRequest([{"role": "user", "content": text}], dict(self.answer_settings))

    def template_for(self, point: AskedPoint) -> str:
        """The judge template's name: abstention for an unanswerable point, else its question type's."""
        if not point.answerable:
            return f"judge:{ABSTENTION}"
        name = f"judge:{point.category}"
        return name if name in self.templates and point.category != ABSTENTION else f"judge:{FALLBACK}"

    def judge_request(self, point: AskedPoint, answer: str) -> JudgeRequest:
        text = self.templates[self.template_for(point)].format(point.question, point.expected_fact, answer)
        return JudgeRequest([{"role": "user", "content": text}], dict(self.judge_settings))

    def read_verdict(self, content: str) -> JudgeReply:
        # evaluate_qa.py: the label is whether "yes" occurs anywhere in the reply, lower-cased.
        return JudgeReply(CORRECT if "yes" in content.strip().lower() else WRONG, None)
