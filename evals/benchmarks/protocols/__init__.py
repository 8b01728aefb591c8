"""Protocols: how a run's answers are asked for, judged and counted, as a published benchmark does it.

::

    protocol = load_protocol("longmemeval")            # templates read from the fetched, pinned files
    request = protocol.answer_request(point)           # messages and settings for one test point
    verdict = protocol.read_verdict(reply)             # correct / wrong / unparsed, never an exception

``harness`` is this project's own prompts (``evals/benchmarks/protocols/prompts``), the one protocol built in.
Every other is its unit's (:class:`evals.benchmarks.ProtocolSpec`, in ``Unit.protocols``: each benchmark's
``protocol.py``), read out of the benchmark's own files at a pinned commit with pinned SHA-256s (:data:`PINS`),
by parsing them: the project holds none of their prompt text. docs/methodology.md says what each does and what
still differs from its code.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from evals.benchmarks import SourceFile, protocol_class, protocol_names, protocol_sources
from evals.benchmarks.kit import (
    CORRECT,
    UNPARSED,
    VERDICTS,
    WRONG,
    AnswerRequest,
    AskedPoint,
    ContextRecord,
    JudgeReply,
    JudgeRequest,
    Protocol,
    category_number,
    speaker_names,
    template_digest,
)
from evals.benchmarks.kit.sources import ProtocolError, Sources, downloads_folder, read_sources
from evals.benchmarks.protocols.harness import HarnessProtocol, read_json_verdict

__all__ = [
    "CORRECT",
    "PINS",
    "UNPARSED",
    "VERDICTS",
    "WRONG",
    "AnswerRequest",
    "AskedPoint",
    "ContextRecord",
    "JudgeReply",
    "JudgeRequest",
    "Protocol",
    "ProtocolError",
    "Sources",
    "category_number",
    "downloads_folder",
    "load_protocol",
    "protocols_block",
    "read_json_verdict",
    "speaker_names",
    "template_digest",
]


class _Pins(MutableMapping[str, tuple[SourceFile, ...]]):
    """The pinned files each published protocol reads, as the units declare them now. A name set here (a test's
    stand-in files of the same shape, with their own digests) is held over the unit's own until deleted."""

    def __init__(self) -> None:
        self._set: dict[str, tuple[SourceFile, ...]] = {}

    def __getitem__(self, name: str) -> tuple[SourceFile, ...]:
        return self._set[name] if name in self._set else protocol_sources()[name]

    def __setitem__(self, name: str, value: tuple[SourceFile, ...]) -> None:
        self._set[name] = value

    def __delitem__(self, name: str) -> None:
        del self._set[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**protocol_sources(), **self._set})

    def __len__(self) -> int:
        return len({**protocol_sources(), **self._set})


PINS: MutableMapping[str, tuple[SourceFile, ...]] = _Pins()


def load_protocol(
    name: str, *, source: Path | None = None, downloads: Path | None = None, pins: Sequence[SourceFile] | None = None
) -> Protocol:
    """Protocol ``name``, its templates read from its pinned files: under ``source`` (the root of the
    benchmark repository's tree at the pinned commit), else in the downloads folder (``evals fetch``)."""
    if name == "harness":
        return HarnessProtocol()
    kind = protocol_class(name)  # its unit's (evals/benchmarks/NAME/protocol.py, …)
    if kind is None or name not in PINS:
        raise ProtocolError(f"no protocol called {name!r}; the protocols are {', '.join(protocol_names())}")
    pinned = pins if pins is not None else PINS[name]
    if not pinned:  # a protocol that holds its own templates (a plug-in's own QA protocol): nothing to read
        return kind(kind.extract(None), None)
    sources = read_sources(name, pinned, source, downloads)
    return kind(kind.extract(sources), sources)


def protocols_block(answer: Protocol, judge: Protocol) -> dict[str, Any] | None:
    """What a run records of its protocols and puts in its keys: each one's name and template digests.
    None when both are the harness's own, so such runs keep the keys they had before protocols."""
    if answer.name == "harness" and judge.name == "harness":
        return None
    return {"answer": answer.identity(), "judge": judge.identity()}
