"""Facts about the published benchmarks' labels, each written once: LoCoMo's category names, LongMemEval's
question types, and the names of the QA protocols.

This module imports nothing of the package, so a run's configuration can check a protocol name and an importer can
name a category without loading anything else. The judge sits below the benchmarks and may not import
them: where it labels a category it is handed these names (:func:`category_names`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

__all__ = [
    "LOCOMO_CATEGORY_NAMES",
    "LOCOMO_CATEGORY_NOTE",
    "LOCOMO_UNANSWERABLE_CATEGORY",
    "LONGMEMEVAL_QUESTION_TYPES",
    "PROTOCOL_JUDGES",
    "PROTOCOL_NAMES",
    "ProtocolName",
    "category_names",
]

# The names this harness gives LoCoMo's category numbers: the comments of LoCoMo's evaluation code and its
# issue #29. Other published mappings name 1 and 3 the other way round, so a LoCoMo category is always shown
# by its number first.
LOCOMO_CATEGORY_NAMES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LOCOMO_CATEGORY_NOTE = (
    "LoCoMo categories are shown by number: published mappings of the numbers to names disagree (1 and 3 above all); "
    "the names here follow the comments in LoCoMo's evaluation code."
)
LOCOMO_UNANSWERABLE_CATEGORY = 5  # adversarial: the question's premise is not in the conversation

# LongMemEval's question types (its `question_type` field), in the order its papers list them.
LONGMEMEVAL_QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)

# The QA protocols (evals.benchmarks.protocols): the harness's own prompts, then each benchmark's.
PROTOCOL_NAMES = ("harness", "longmemeval", "mem0", "locomo", "beam", "locomo_plus")
ProtocolName = Literal[PROTOCOL_NAMES]  # type: ignore[valid-type]  # the same names, as a type for pydantic
# The judge model each protocol's published code uses (None: it has no judge; it scores answers itself), named
# here so that a run's settings are checked without loading any protocol (their classes read it from here).
PROTOCOL_JUDGES: Mapping[str, str | None] = {
    "harness": "gpt-4o-mini",
    "longmemeval": "gpt-4o-2024-08-06",
    "mem0": "gpt-4o-mini",
    "locomo": None,  # LoCoMo scores answers by F1
    "beam": "gpt-4.1-mini",  # BEAM's src/llm.py (gpt_llm), temperature 0
    "locomo_plus": "gpt-4o-mini",  # LoCoMo-Plus's evaluation_framework/scripts/judge.sh default
}

_CATEGORY_NAMES: dict[str, Mapping[int, str]] = {"locomo": LOCOMO_CATEGORY_NAMES}


def category_names(benchmark: str | None) -> Mapping[int, str] | None:
    """The names of a benchmark's numbered categories (LoCoMo's), or None: its categories are names already."""
    return _CATEGORY_NAMES.get(benchmark or "")
