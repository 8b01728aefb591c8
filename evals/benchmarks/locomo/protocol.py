"""LoCoMo's own protocol (snap-research/LoCoMo ``task_eval/``): its QA prompts and context formats
from ``gpt_utils.py``, its scores from ``evaluation.py``; no judge.

Answer (``get_gpt_answers`` with batch size 1): the context, a blank line, then ``QA_PROMPT`` filled
with the question; one user message, temperature 0, at most 32 tokens. A category-2 question gets the
script's date hint appended. A category-5 question is posed as the script poses it, a choice between
the answer on offer and the script's "not mentioned" option, and the reply's letter mapped back
(``get_cat_5_answer``) under ``QA_PROMPT_CAT_5``. The script reads the offered answer from the
question's ``answer``, which the released locomo10.json does not give for 444 of its 446 category-5
questions; their ``adversarial_answer`` (kept by the importer in the expected fact) is offered instead.
The script draws the order of the two options at random; here it is drawn from a digest of the run's
seed, the conversation and the turn, so a rerun asks the same, and the order is recorded with the
answer.

Context: a strategy that gives the whole history in order gets the script's full-conversation form
(``CONV_START_PROMPT`` naming the two speakers, then each session as its date and its turns written
``<speaker> said, "<text>"``, built the way ``get_input_context`` builds it: the sessions end up
newest first); any other retrieval gets its retrieval form (``get_rag_context``, dialog mode): one
line per record, ``<session date>: <speaker> said, "<text>"``, in rank order. The script cuts the
full conversation to the model's context window; nothing is cut here. A record that is no turn has
no date: its line is its text alone.

Score (``eval_question_answering``): :func:`evals.benchmarks.locomo.scores.locomo_score`, LoCoMo's F1 by
category; category 5 scores 1 when the answer says "not mentioned" or "no information available".
Every point is counted.
"""

from __future__ import annotations

import ast
import hashlib
import re

from evals.benchmarks.kit import (
    AnswerRequest,
    AskedPoint,
    ContextRecord,
    Glued,
    Protocol,
    PythonSource,
    Sources,
    category_number,
    glued,
)
from evals.benchmarks.locomo import JUDGES
from evals.benchmarks.locomo.scores import locomo_score

__all__ = ["LoCoMoProtocol", "extract", "letter_answer"]

GPT_UTILS = "task_eval/gpt_utils.py"
EVALUATION = "task_eval/evaluation.py"
TEMPORAL, ADVERSARIAL = 2, 5
_CAPTION = re.compile(r"^(.*) \[shares (.*)\]$", re.DOTALL)  # how evals/benchmarks/locomo/importer.py writes a shared image
_OFFERED = re.compile(r"\(adversarial answer: (.*)\)$", re.DOTALL)


def _glue(source: PythonSource, node: ast.AST, what: str, literals: int, slots: int) -> str:
    """A chain of that shape, stored as JSON-free text: its parts joined by NUL (a value's place is empty)."""
    chain = source.glued(node, what, literals, slots)
    return "\0".join(p if p is not None else "" for p in chain.parts)


def _unglue(stored: str) -> Glued:
    return Glued(tuple(p if p else None for p in stored.split("\0")))


def extract(sources: Sources) -> dict[str, str]:
    """Every template and every piece of format text the protocol uses, read from gpt_utils.py."""
    source = PythonSource(sources.texts[GPT_UTILS], sources.paths[GPT_UTILS])
    out = {name: source.constant(name) for name in ("QA_PROMPT", "QA_PROMPT_CAT_5", "CONV_START_PROMPT")}
    # get_gpt_answers: the date hint of category 2, the two-choice question of category 5 and its option.
    temporal = [b for b in source.calls("get_gpt_answers", "append") if b.under("qa['category'] == 2")]
    node = source.one(temporal, "the category-2 question in get_gpt_answers").node
    out["temporal_question"] = _glue(source, node.args[0], "the category-2 question", 1, 1)  # type: ignore[attr-defined]
    adversarial = [
        b for b in source.assigned("get_gpt_answers", "question") if b.under("qa['category'] == 5") and glued(b.node).literals
    ]
    node = source.one(adversarial, "the category-5 question in get_gpt_answers").node
    out["adversarial_question"] = _glue(source, node, "the category-5 question", 1, 1)
    options = {
        arg.value
        for b in source.calls("get_gpt_answers", "format")
        if b.under("qa['category'] == 5") and isinstance(b.node.func.value, ast.Name)  # type: ignore[attr-defined]
        for arg in b.node.args  # type: ignore[attr-defined]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    }
    if len(options) != 1:
        raise source.missing("the fixed option of the category-5 question", len(options))
    out["adversarial_option"] = options.pop()
    queries = [b for b in source.assigned("get_gpt_answers", "query") if isinstance(b.node, ast.IfExp)]
    node = source.one(queries, "the query of batch size 1 in get_gpt_answers").node
    out["query"] = _glue(source, node.body, "the query", 1, 2)  # type: ignore[attr-defined]
    # get_input_context: the whole conversation, session by session.
    turns = [b for b in source.assigned("get_input_context", "turn") if glued(b.node).slots]
    out["turn"] = _glue(source, source.one(turns, "a turn's line in get_input_context").node, "a turn's line", 3, 2)
    added = source.assigned("get_input_context", "turn", augmented=True)
    captions = [
        b.node for b in added if b.under("blip_caption") and isinstance(b.node, ast.BinOp) and isinstance(b.node.op, ast.Mod)
    ]
    if len(captions) != 1:
        raise source.missing("the shared-image text of a turn in get_input_context", len(captions))
    out["turn_caption"] = source.string(captions[0].left, "the shared-image text")
    ends = [b for b in added if not b.under("blip_caption") and isinstance(b.node, ast.Constant)]
    out["turn_end"] = source.text(source.one(ends, "a turn's ending in get_input_context"), "a turn's ending")
    gaps = [b for b in source.assigned("get_input_context", "query_conv", augmented=True) if isinstance(b.node, ast.Constant)]
    out["session_gap"] = source.text(source.one(gaps, "the gap before a session in get_input_context"), "the gap")
    headers = [b for b in source.assigned("get_input_context", "query_conv") if glued(b.node).literals and glued(b.node).slots]
    out["session"] = _glue(
        source, source.one(headers, "a session's header in get_input_context").node, "a session's header", 3, 2
    )
    # get_rag_context and prepare_for_rag (dialog mode): one line per retrieved turn.
    joins = [
        b for b in source.calls("get_rag_context", "join") if b.under("'dialog'") and isinstance(b.node.func.value, ast.Constant)
    ]  # type: ignore[attr-defined]
    node = source.one(joins, "the dialog-mode join in get_rag_context").node
    if not node.args or not isinstance(node.args[0], ast.ListComp):  # type: ignore[attr-defined]
        raise source.missing("the dialog-mode lines in get_rag_context")
    out["rag_separator"] = node.func.value.value  # type: ignore[attr-defined]
    out["rag_line"] = _glue(source, node.args[0].elt, "a retrieved line", 1, 2)  # type: ignore[attr-defined]
    dialogs = [
        b
        for b in source.calls("prepare_for_rag", "append")
        if isinstance(b.node.func.value, ast.Name) and b.node.func.value.id == "dialogs"
    ]  # type: ignore[attr-defined]
    shared = source.one([b for b in dialogs if b.under("blip_caption")], "a dialog with a shared image in prepare_for_rag")
    plain = source.one([b for b in dialogs if b.under("blip_caption", holds=False)], "a dialog in prepare_for_rag")
    out["rag_turn_caption"] = _glue(source, shared.node.args[0], "a dialog with a shared image", 3, 3)  # type: ignore[attr-defined]
    out["rag_turn"] = _glue(source, plain.node.args[0], "a dialog", 2, 2)  # type: ignore[attr-defined]
    return out


def letter_answer(reply: str, choices: dict[str, str]) -> str:
    """``get_cat_5_answer``: a one-letter reply (or ``(x)``) names an option, ``a`` or else ``b``;
    any other reply is the answer itself, lower-cased and stripped, as the script keeps it."""
    prediction = reply.strip().lower()
    if len(prediction) == 1:
        return choices["a"] if "a" in prediction else choices["b"]
    if len(prediction) == 3:
        return choices["a"] if "(a)" in prediction else choices["b"]
    return prediction


def _split(record: ContextRecord) -> tuple[str, str, str | None]:
    """(speaker, text, shared image caption) of a turn as the LoCoMo importer writes it."""
    speaker = record.speaker or record.role or ""
    text = record.utterance
    shared = _CAPTION.match(text)
    return (speaker, shared.group(1), shared.group(2)) if shared else (speaker, text, None)


class LoCoMoProtocol(Protocol):
    extract = staticmethod(extract)
    name = "locomo"
    judge_model = JUDGES["locomo"]
    answer_settings = {"max_tokens": 32}

    def _part(self, name: str) -> Glued:
        return _unglue(self.templates[name])

    def _whole(self, point: AskedPoint) -> str:
        """get_input_context's conversation (no cut), after CONV_START_PROMPT."""
        sessions: list[tuple[str, list[ContextRecord]]] = []
        for record in point.records:
            if not sessions or sessions[-1][0] != (record.session or ""):
                sessions.append((record.session or "", []))
            sessions[-1][1].append(record)
        turn, header = self._part("turn"), self._part("session")
        conversation = ""
        for _, records in sessions:
            conversation += self.templates["session_gap"]
            for record in reversed(records):  # each turn put before the ones after it, as the script does
                speaker, text, caption = _split(record)
                line = turn.render(speaker, text)
                if caption is not None:
                    line += self.templates["turn_caption"] % caption
                line += self.templates["turn_end"]
                conversation = line + conversation
            conversation = header.render(records[0].date or "", conversation)
        return self.templates["CONV_START_PROMPT"].format(*point.speakers) + conversation

    def _retrieved(self, point: AskedPoint) -> str:
        """get_rag_context's dialog-mode context: one dated line per record, in rank order."""
        line, plain, shared = self._part("rag_line"), self._part("rag_turn"), self._part("rag_turn_caption")
        lines = []
        for record in point.records:
            if record.turn is None:
                lines.append(record.text)
                continue
            speaker, text, caption = _split(record)
            said = shared.render(speaker, text, caption) if caption is not None else plain.render(speaker, text)
            lines.append(line.render(record.date or "", said))
        return self.templates["rag_separator"].join(lines)

    def choices(self, point: AskedPoint) -> dict[str, str]:
        """The two options of a category-5 question, in an order drawn from the run's seed and the point."""
        offered = _OFFERED.search(point.expected_fact)
        answer = offered.group(1) if offered else point.expected_fact
        option = self.templates["adversarial_option"]
        draw = hashlib.sha256(f"{point.seed}\0{point.conversation_id}\0{point.turn_index}".encode()).digest()[0]
        return {"a": option, "b": answer} if draw < 128 else {"a": answer, "b": option}

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        context = self._whole(point) if point.whole_history and point.records else self._retrieved(point)
        category = category_number(point.category)
        choices = None
        if category == ADVERSARIAL:
            choices = self.choices(point)
            question = self._part("adversarial_question").render(point.question).format(choices["a"], choices["b"])
            prompt = self.templates["QA_PROMPT_CAT_5"].format(question)
        else:
            question = self._part("temporal_question").render(point.question) if category == TEMPORAL else point.question
            prompt = self.templates["QA_PROMPT"].format(question)
        text = self._part("query").render(context, prompt)
        return AnswerRequest([{"role": "user", "content": text}], dict(self.answer_settings), choices)

    def answer_of(self, request: AnswerRequest, reply: str) -> tuple[str, str | None]:
        if request.choices is None:
            return reply.strip(), None
        answer = letter_answer(reply, request.choices)
        note = f"options (a) {request.choices['a']!r}, (b) {request.choices['b']!r}; the model replied {reply.strip()[:80]!r}"
        return answer, note

    def score(self, point: AskedPoint, answer: str) -> float | None:
        return locomo_score(answer, point.expected_fact, point.category)
