"""LoCoMo (Maharana et al. 2024, snap-research/LoCoMo): the unit.

Its release and pins, its importer (:mod:`.importer`), its headline rule, its five categories, the two
protocols that follow published code on it (LoCoMo's own and mem0's), and how the label audit knows its
file (:mod:`.audit`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.benchmarks.kit import HEADLINE as EVIDENCE_ANY_AT_K
from evals.benchmarks.kit import (
    RAW_GITHUB,
    Audit,
    Benchmark,
    ErrataFormat,
    ProtocolSpec,
    RemoteFile,
    Rule,
    SourceFile,
    Unit,
    claims_in,
)
from evals.benchmarks.locomo.scores import LOCOMO_LEXICAL, MEM0_LEXICAL

if TYPE_CHECKING:
    from evals.benchmarks.kit import Corpus, ImportReport, Source

__all__ = ["CATEGORY_NAMES", "RULE", "UNIT"]

COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
# LoCoMo's own QA prompts and context formats (gpt_utils.py) and scores (evaluation.py); digests
# computed from the repository at that commit.
LOCOMO_SOURCES = (
    SourceFile(
        "snap-research/LoCoMo",
        COMMIT,
        "task_eval/gpt_utils.py",
        "5fc977375878199735acd28fba5ae6f4d657fa0e000c0d2918a90c07b6035793",
    ),
    SourceFile(
        "snap-research/LoCoMo",
        COMMIT,
        "task_eval/evaluation.py",
        "8e3be5d57ff2ff9ec5cd05939592f468c5f3f1fd95d13e431932bdf6bf0fd6fd",
    ),
)
# mem0's LLM judge on LoCoMo, at the last commit that held its evaluation/ folder.
MEM0_COMMIT = "b3ede5b7c0ac0e847b03786a603c107ac943b3ee"
MEM0_SOURCES = (
    SourceFile(
        "mem0ai/mem0",
        MEM0_COMMIT,
        "evaluation/metrics/llm_judge.py",
        "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c",
    ),
    SourceFile(
        "mem0ai/mem0", MEM0_COMMIT, "evaluation/prompts.py", "407bea1c1453dc6832c234bb1ed936d401d796fabcc0b28337a47ba63517d3ba"
    ),
)

# The names this harness gives LoCoMo's category numbers: the numbering is not documented in the paper or README;
# the names follow the comments in LoCoMo's evaluation code (task_eval/evaluation.py) and the thread
# github.com/snap-research/locomo/issues/29. Other published mappings name 1 and 3 the other way round, so a LoCoMo
# category is always shown by its number first.
CATEGORY_NAMES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
CATEGORY_NOTE = (
    "LoCoMo categories are shown by number: published mappings of the numbers to names disagree (1 and 3 above all); "
    "the names here follow the comments in LoCoMo's evaluation code."
)
UNANSWERABLE_CATEGORY = 5  # adversarial: the question's premise is not in the conversation
# The judge model each protocol's published code uses: mem0's LLM judge; LoCoMo scores answers by F1, no judge.
JUDGES: Mapping[str, str | None] = {"mem0": "gpt-4o-mini", "locomo": None}

RULE = Rule(
    name="locomo",
    metric=EVIDENCE_ANY_AT_K,
    label="recall_any@k",
    population="every question with evidence, adversarial ones (category 5) included",
    counts_unanswerable=True,
    corpora="LoCoMo (evals import-corpus locomo; benchmark.json names it)",
    follows="the population of LoCoMo task_eval/evaluation.py (eval_question_answering), whose retrieval recall covers every "
    "category; the figure is recall_any@k, not the paper's fraction (recall_frac@k, shown beside it)",
    note="LoCoMo's script averages the fraction of a question's evidence found (recall_frac@k here, shown beside "
    "with the paper's figures) and counts a question without evidence as 1; here a question needs an evidence "
    "turn among the first k (a paired test needs a yes or no), and the few without evidence are left out.",
    unanswerable_words="LoCoMo category 5 (adversarial): the question's premise is not in the conversation; "
    "its evidence turns are still scored, as LoCoMo's retrieval evaluation does",
)


def _import(file: Path, out: Path) -> ImportReport:
    from evals.benchmarks.locomo.importer import import_locomo

    return import_locomo(file, out)


def _mem0() -> type:
    from evals.benchmarks.locomo.mem0 import Mem0Protocol

    return Mem0Protocol


def _locomo() -> type:
    from evals.benchmarks.locomo.protocol import LoCoMoProtocol

    return LoCoMoProtocol


def _sniff(first: Any) -> bool:
    return isinstance(first, dict) and "qa" in first


def _dangling(source: Source, corpus: Corpus) -> list[Any]:
    from evals.benchmarks.locomo.audit import dangling_ids

    return dangling_ids(source, corpus)


def _convert_audit(source: Path, locomo: Path, commit: str | None, exclude_kinds: frozenset[str]) -> Any:
    from evals.benchmarks.locomo.errata import convert_locomo_audit

    return convert_locomo_audit(source, locomo, commit=commit, exclude_kinds=exclude_kinds)


# dial481/locomo-audit, for `evals import-errata locomo-audit SOURCE`.
LOCOMO_AUDIT = ErrataFormat(
    help="github.com/dial481/locomo-audit (audit/errors_conv_N.json): a copy of\nthe repository, or its audit/ folder",
    corrects="one LoCoMo test point",
    option="--locomo",
    option_help="The LoCoMo file the audit audited (locomo10.json), whose turns and dia ids the corrections are "
    "resolved in. Default: SOURCE/data/locomo10.json.",
    default="data/locomo10.json",
    convert=_convert_audit,
)

# What LoCoMo's figures are, beside the harness's metrics.
METRIC_NOTES: Mapping[str, str] = {
    "answer_score": "LoCoMo: Porter-stemmed F1 with its per-category rules, category 5 by its 'not mentioned' rule.",
    "answer_abstention_accuracy": "LoCoMo: category 5, by its rule.",
    "answer_f1": "LoCoMo's protocol: stemmed, per-category rules; mem0's: token sets.",
    "answer_bleu1": "mem0's protocol on LoCoMo: NLTK word tokens, smoothing method1.",
    "recall_frac": "LoCoMo's retrieval recall.",
}


def turn_name(turn: int, session: str | None, place: int) -> str:
    """LoCoMo's dia_id: ``D<session>:<place>`` for a turn of ``session_<N>`` (the importer keeps LoCoMo's keys)."""
    found = re.fullmatch(r"session_(\d+)", session or "")
    return f"D{found.group(1)}:{place}" if found else f"turn {turn}"


UNIT = Unit(
    claims=claims_in(__name__, "locomo"),
    order=10,
    name="locomo",
    title="LoCoMo",
    releases=(
        Benchmark(
            name="locomo",
            title="LoCoMo (Maharana et al. 2024)",
            homepage="https://github.com/snap-research/LoCoMo",
            version=f"commit {COMMIT}",
            license="CC BY-NC 4.0 (non-commercial)",
            non_commercial=True,
            test_points="1,986 questions in 10 conversations (446 unanswerable, category 5)",
            evidence="turns (dia_id) and sessions",
            data=RemoteFile(
                "locomo10.json",
                f"{RAW_GITHUB}/snap-research/LoCoMo/{COMMIT}/data/locomo10.json",
                sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
                size=2_805_274,
                listed_size="2.8 MB",
            ),
            importer="locomo",
            sources=MEM0_SOURCES + LOCOMO_SOURCES,
        ),
    ),
    importer=_import,
    reads="LoCoMo's data/locomo10.json, or data/locomo10.zip as the repository ships it (github.com/snap-research/locomo)",
    rule=RULE,
    categories={str(number): name for number, name in CATEGORY_NAMES.items()},
    category_note=CATEGORY_NOTE,
    protocols={
        "mem0": ProtocolSpec(_mem0, JUDGES["mem0"], MEM0_SOURCES, MEM0_LEXICAL),
        "locomo": ProtocolSpec(_locomo, JUDGES["locomo"], LOCOMO_SOURCES, LOCOMO_LEXICAL, scores="LoCoMo's F1"),
    },
    audit=Audit("LoCoMo's locomo10.json", _sniff, _dangling),
    turn_name=turn_name,
    metric_notes=METRIC_NOTES,
    errata={"locomo-audit": LOCOMO_AUDIT},
)
