"""The benchmark kit: the one API a benchmark unit is written against, built-in or plug-in.

::

    from evals.benchmarks.kit import Benchmark, ImportReport, Rule, Unit, write_corpus

A unit (``evals/benchmarks/NAME/``, or a plug-in's module named by an entry point of ``mneme_evals.benchmarks``)
imports these names and nothing else of the harness: its releases and pins (:class:`Unit`, :class:`Benchmark`,
:class:`RemoteFile`, :class:`SourceFile`), its headline rule (:class:`Rule`), its importer's helpers
(:mod:`.importing`: reading the input, locating problems, a test point's turn, writing the corpus), its label
audit's (:class:`Flag`, :func:`beside_conversations`) and errata formats' (:class:`ErrataFormat`), and its QA protocols
(:mod:`.protocol`: the base class and its requests and replies, :mod:`.points`: what a protocol is asked about,
:mod:`.sources`: the pinned files it reads its templates from, :mod:`.extract`: templates parsed out of published
Python). docs/layout.md ("Add a benchmark") shows a whole unit.

Each name is imported from its module on first use, so a unit that only declares its releases and rule loads
neither the importer's helpers nor the protocol base.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.benchmarks._registry import RAW_GITHUB, Audit, Benchmark, ErrataFormat, ProtocolSpec, RemoteFile, SourceFile, Unit
    from evals.benchmarks.audit import DANGLING, Flag, beside_conversations, by_position, file_sha256
    from evals.benchmarks.errata import check_errata_document
    from evals.benchmarks.kit.extract import Branch, Condition, Glued, PythonSource, glued, literal
    from evals.benchmarks.kit.importing import (
        ANSWER_KINDS,
        Archive,
        ImportFormatError,
        ImportReport,
        Source,
        answer_keywords,
        answer_text,
        build,
        conversation_id,
        question_turn,
        session_ids,
        write_corpus,
    )
    from evals.benchmarks.kit.points import AskedPoint, ContextRecord, speaker_names
    from evals.benchmarks.kit.protocol import (
        CORRECT,
        PARTIAL,
        UNPARSED,
        VERDICTS,
        WRONG,
        AnswerRequest,
        Grade,
        JudgeReply,
        JudgeRequest,
        Protocol,
        template_digest,
    )
    from evals.benchmarks.kit.sources import ProtocolError, Sources
    from evals.errors import EvalsError
    from evals.io.jsonfile import parse as parse_json
    from evals.io.jsonfile import read_bytes, strict_json
    from evals.judge.answer_scores import (
        HARNESS_LEXICAL,
        Lexical,
        bleu1,
        category_number,
        normalize_answer,
        token_f1,
        tokens,
    )
    from evals.judge.headline import EVIDENCE, Rule
    from evals.judge.metrics import HEADLINE
    from evals.model.claims import claims_in
    from evals.model.corpus import Conversation, Corpus, Reference
    from evals.strategies.embedders import MiniLMEmbedder, minilm_installed

_HOMES = {
    "evals.benchmarks._registry": (
        "RAW_GITHUB", "Audit", "Benchmark", "ErrataFormat", "ProtocolSpec", "RemoteFile", "SourceFile", "Unit",
    ),
    "evals.judge.answer_scores": (
        "HARNESS_LEXICAL", "Lexical", "bleu1", "category_number", "normalize_answer", "token_f1", "tokens",
    ),
    "evals.benchmarks.audit": ("DANGLING", "Flag", "beside_conversations", "by_position", "file_sha256"),
    "evals.benchmarks.errata": ("check_errata_document",),
    "evals.errors": ("EvalsError",),
    "evals.io.jsonfile": ("parse_json", "read_bytes", "strict_json"),
    "evals.judge.metrics": ("HEADLINE",),
    "evals.strategies.embedders": ("MiniLMEmbedder", "minilm_installed"),
    "evals.benchmarks.kit.extract": ("Branch", "Condition", "Glued", "PythonSource", "glued", "literal"),
    "evals.benchmarks.kit.importing": (
        "ANSWER_KINDS", "Archive", "ImportFormatError", "ImportReport", "Source", "answer_keywords", "answer_text",
        "build", "conversation_id", "question_turn", "session_ids", "write_corpus",
    ),
    "evals.benchmarks.kit.points": ("AskedPoint", "ContextRecord", "speaker_names"),
    "evals.benchmarks.kit.protocol": (
        "CORRECT", "PARTIAL", "UNPARSED", "VERDICTS", "WRONG", "AnswerRequest", "Grade", "JudgeReply", "JudgeRequest",
        "Protocol", "template_digest",
    ),
    "evals.benchmarks.kit.sources": ("ProtocolError", "Sources"),
    "evals.judge.headline": ("EVIDENCE", "Rule"),
    "evals.model.claims": ("claims_in",),
    "evals.model.corpus": ("Conversation", "Corpus", "Reference"),
}  # fmt: skip
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "ANSWER_KINDS",
    "AnswerRequest",
    "Archive",
    "AskedPoint",
    "Audit",
    "Benchmark",
    "Branch",
    "CORRECT",
    "Condition",
    "ContextRecord",
    "Conversation",
    "Corpus",
    "DANGLING",
    "EVIDENCE",
    "ErrataFormat",
    "EvalsError",
    "Flag",
    "Glued",
    "Grade",
    "HARNESS_LEXICAL",
    "HEADLINE",
    "ImportFormatError",
    "ImportReport",
    "JudgeReply",
    "JudgeRequest",
    "Lexical",
    "MiniLMEmbedder",
    "PARTIAL",
    "Protocol",
    "ProtocolError",
    "ProtocolSpec",
    "PythonSource",
    "RAW_GITHUB",
    "Reference",
    "RemoteFile",
    "Rule",
    "Source",
    "SourceFile",
    "Sources",
    "UNPARSED",
    "Unit",
    "VERDICTS",
    "WRONG",
    "answer_keywords",
    "answer_text",
    "bleu1",
    "build",
    "beside_conversations",
    "claims_in",
    "by_position",
    "category_number",
    "check_errata_document",
    "conversation_id",
    "question_turn",
    "file_sha256",
    "glued",
    "literal",
    "minilm_installed",
    "normalize_answer",
    "parse_json",
    "read_bytes",
    "session_ids",
    "speaker_names",
    "strict_json",
    "template_digest",
    "token_f1",
    "tokens",
    "write_corpus",
]


_RENAMED = {"parse_json": "parse"}  # a kit name whose home calls it otherwise


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(_HOME[name]), _RENAMED.get(name, name))
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
