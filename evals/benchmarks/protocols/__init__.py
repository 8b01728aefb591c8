"""Protocols: how a run's answers are asked for, judged and counted, as a published benchmark does it.

::

    protocol = load_protocol("longmemeval")            # templates read from the fetched, pinned files
    request = protocol.answer_request(point)           # messages and settings for one test point
    verdict = protocol.read_verdict(reply)             # correct / wrong / unparsed, never an exception

``harness`` is this project's own prompts (``evals/benchmarks/protocols/prompts``); ``longmemeval``, ``mem0`` and
``locomo`` (here), ``beam`` and ``locomo_plus`` (their units' ``protocol.py``, named by ``Unit.protocol_classes``)
read their templates out of the benchmark's own files at a pinned commit with pinned
SHA-256s (:data:`PINS`, from :mod:`evals.benchmarks`), by parsing them: the project holds none of
their prompt text. docs/methodology.md says what each does and what still differs from its code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evals.benchmarks import SourceFile, protocol_class, protocol_sources
from evals.benchmarks.facts import PROTOCOL_JUDGES, PROTOCOL_NAMES
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
from evals.benchmarks.protocols import locomo, longmemeval, mem0
from evals.benchmarks.protocols.harness import HarnessProtocol, read_json_verdict

__all__ = [
    "CORRECT",
    "DEFAULT_JUDGES",
    "PINS",
    "PROTOCOLS",
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

PROTOCOLS = PROTOCOL_NAMES
# The judge model each protocol's published code uses (None: it has no judge), from the facts every layer reads.
DEFAULT_JUDGES: dict[str, str | None] = dict(PROTOCOL_JUDGES)
# The pinned files each published protocol reads. Production pins are the registry's; a test may put
# stand-in files of the same shape, with their own digests, in their place.
PINS: dict[str, tuple[SourceFile, ...]] = protocol_sources()

_PUBLISHED: dict[str, tuple[Callable[[Sources], dict[str, str]], type[Protocol]]] = {
    "longmemeval": (longmemeval.extract, longmemeval.LongMemEvalProtocol),
    "mem0": (mem0.extract, mem0.Mem0Protocol),
    "locomo": (locomo.extract, locomo.LoCoMoProtocol),
}


def load_protocol(
    name: str, *, source: Path | None = None, downloads: Path | None = None, pins: Sequence[SourceFile] | None = None
) -> Protocol:
    """Protocol ``name``, its templates read from its pinned files: under ``source`` (the root of the
    benchmark repository's tree at the pinned commit), else in the downloads folder (``evals fetch``)."""
    if name == "harness":
        return HarnessProtocol()
    if name in _PUBLISHED:
        extract, kind = _PUBLISHED[name]
    else:
        found = protocol_class(name)  # a unit's own (evals/benchmarks/beam/protocol.py, …)
        if found is None or name not in PINS:
            raise ProtocolError(f"no protocol called {name!r}; the protocols are {', '.join(PROTOCOLS)}")
        extract, kind = found.extract, found
    sources = read_sources(name, pins if pins is not None else PINS[name], source, downloads)
    return kind(extract(sources), sources)


def protocols_block(answer: Protocol, judge: Protocol) -> dict[str, Any] | None:
    """What a run records of its protocols and puts in its keys: each one's name and template digests.
    None when both are the harness's own, so such runs keep the keys they had before protocols."""
    if answer.name == "harness" and judge.name == "harness":
        return None
    return {"answer": answer.identity(), "judge": judge.identity()}
