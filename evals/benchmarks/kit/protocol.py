"""What every protocol is: how a test point is asked, whether and how its answer is judged, how a
verdict is read, whether the point is counted, and its own score where it needs no judge."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evals.benchmarks.kit.points import AskedPoint
from evals.benchmarks.kit.sources import Sources
from evals.model.results import CORRECT, PARTIAL, UNPARSED, VERDICTS, WRONG
from evals.strategies.base import Message

__all__ = [
    "CORRECT", "PARTIAL", "UNPARSED", "VERDICTS", "WRONG", "AnswerRequest", "Grade", "JudgeReply", "JudgeRequest", "Protocol",
    "template_digest",
]  # fmt: skip


def template_digest(text: str) -> str:
    """The first 12 hex digits of a template's sha256, as the harness's own prompts are recorded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class AnswerRequest:
    """The answer request of one test point: its messages and the body settings beside them."""

    messages: list[Message]
    settings: dict[str, Any] = field(default_factory=dict)  # max_tokens and the like
    # A two-choice question (LoCoMo's category 5): letter -> option, so the reply's letter maps back.
    choices: dict[str, str] | None = None


@dataclass(frozen=True)
class JudgeRequest:
    messages: list[Message]
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeReply:
    """A judge's reply as read: ``correct``, ``wrong`` or ``unparsed`` (never an exception). Not the headline's
    verdict on a test point's retrieval (:data:`evals.judge.headline.Verdict`)."""

    label: str
    reason: str | None = None

    @property
    def correct(self) -> bool | None:
        """As PointAnswer.correct holds it: None when the reply could not be read."""
        return None if self.label == UNPARSED else self.label == CORRECT


@dataclass(frozen=True)
class Grade:
    """A test point's judgement, read from every reply its judge requests got: the verdict (``correct``,
    ``wrong``, ``partial`` or ``unparsed``) and reason; for a graded judge, the point's score and each reply's
    own grade (None: that reply had none to read). ``counted`` False leaves the point out of the figures after
    all (BEAM's event ordering where Kendall's tau is undefined); None keeps what :meth:`Protocol.counted` said."""

    label: str
    reason: str | None = None
    score: float | None = None
    grades: tuple[float | None, ...] | None = None
    counted: bool | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.label == UNPARSED else self.label == CORRECT


class Protocol:
    """One way to answer and grade test points. Subclasses set the class attributes and override
    the methods their protocol does differently."""

    name: str = ""
    # The judge model its published code uses; None: it scores answers without a judge.
    judge_model: str | None = None
    # Its judge grades (BEAM, LoCoMo-Plus): each judged point gets the protocol's score from the replies, kept in
    # PointAnswer.score and counted by it, as LoCoMo's F1 is; not a correct/wrong share.
    graded: bool = False
    # Beside the run's temperature 0 and seed: what its answer and judge requests add (max_tokens…).
    answer_settings: Mapping[str, Any] = {}
    judge_settings: Mapping[str, Any] = {}

    def __init__(self, templates: Mapping[str, str], sources: Sources | None = None) -> None:
        self.templates = dict(templates)  # every template it uses, by name
        self.sources = sources

    # -- recording ---------------------------------------------------------------------------------

    def digests(self) -> dict[str, str]:
        return {name: template_digest(text) for name, text in sorted(self.templates.items())}

    def identity(self) -> dict[str, Any]:
        """What sets its runs apart: its name and its templates' digests."""
        return {"name": self.name, "templates": self.digests()}

    def source_record(self) -> dict[str, Any] | None:
        return self.sources.record() if self.sources is not None else None

    @property
    def judges(self) -> bool:
        return self.judge_model is not None

    # -- asking --------------------------------------------------------------------------------------

    def answer_request(self, point: AskedPoint) -> AnswerRequest:
        raise NotImplementedError

    def answer_of(self, request: AnswerRequest, reply: str) -> tuple[str, str | None]:
        """The answer a reply gives, and a note on how it was read (None: the reply as it is)."""
        return reply, None

    # -- grading -------------------------------------------------------------------------------------

    def judged(self, point: AskedPoint) -> bool:
        """Whether a judge grades this point's answer."""
        return self.judges and self.counted(point)

    def counted(self, point: AskedPoint) -> bool:
        """Whether the protocol's figures count this point."""
        return True

    def check(self, point: AskedPoint) -> None:
        """Refuse (a :class:`ProtocolError`) a test point this protocol's judge cannot grade, before any request."""

    def judge_request(self, point: AskedPoint, answer: str) -> JudgeRequest:
        raise NotImplementedError

    def judge_requests(self, point: AskedPoint, answer: str) -> list[JudgeRequest]:
        """Every judge request of one answer, in order (BEAM: one per rubric item); most protocols ask one."""
        return [self.judge_request(point, answer)]

    def read_verdict(self, content: str) -> JudgeReply:
        raise NotImplementedError

    def grade(self, point: AskedPoint, answer: str, replies: list[str]) -> Grade:
        """The point's judgement from the replies to :meth:`judge_requests`, in the same order."""
        reply = self.read_verdict(replies[0])
        return Grade(reply.label, reply.reason)

    def score(self, point: AskedPoint, answer: str) -> float | None:
        """The protocol's own score of an answer, where it scores without a judge; else None."""
        return None
