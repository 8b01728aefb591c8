"""The benchmarks this harness knows by name: where each is published, at which version, under which
license, with which pins, and whether the importers can hold it.

Facts only, gathered from the benchmarks' own repositories and hub pages. A file whose host publishes
no digest (the Hugging Face hub files) has ``sha256=None`` here: its size and digest are recorded in the
lock file at its first download (trust on first use, :mod:`evals.benchmarks._lock`), and every later
fetch must match them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.errors import EvalsError

__all__ = [
    "BENCHMARKS", "PROTOCOL_JUDGES", "PROTOCOL_SOURCES", "Benchmark", "RemoteFile", "SourceFile", "UnknownBenchmark", "benchmark",
]  # fmt: skip

RAW_GITHUB = "https://raw.githubusercontent.com"


class UnknownBenchmark(EvalsError):
    """A name that is not in the registry."""


@dataclass(frozen=True)
class RemoteFile:
    """One published data file. ``name`` is its published file name, which a mirror serves it by
    (``aliases``: other names a local copy commonly has, tried on a mirror after ``name``)."""

    name: str
    url: str
    sha256: str | None = None  # None: no published digest; pinned by the lock file on first download
    size: int | None = None  # bytes, pinned with the digest
    listed_size: str = ""  # the size as the host lists it, shown before the first download
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceFile:
    """A file of a benchmark's repository at a pinned commit: an evaluation script whose templates a
    judge protocol reads. Stored in the downloads folder at ``sources/OWNER/REPO/COMMIT/PATH``, so
    that folder is the root of the repository's tree at that commit, and a mirror serves it at the same
    relative path (``OWNER/REPO/COMMIT/PATH``, as raw.githubusercontent.com lays it out)."""

    repo: str  # owner/name on GitHub
    commit: str
    path: str
    sha256: str

    @property
    def relative(self) -> str:
        return f"{self.repo}/{self.commit}/{self.path}"

    @property
    def url(self) -> str:
        return f"{RAW_GITHUB}/{self.relative}"


@dataclass(frozen=True)
class Benchmark:
    name: str  # what `evals fetch NAME` and a suite's `benchmarks` call it
    title: str
    homepage: str
    version: str  # the commit or hub revision the files are taken at
    license: str
    non_commercial: bool
    test_points: str  # as published
    evidence: str  # which labels it carries, so which metrics it supports
    data: RemoteFile | None
    importer: str | None  # a key of evals.benchmarks.importers.FORMATS; None: not importable yet
    not_importable: str = ""  # why, when importer is None
    sources: tuple[SourceFile, ...] = field(default=())

    @property
    def source(self) -> str:
        return self.data.url if self.data is not None else self.homepage

    @property
    def metrics(self) -> str:
        if self.importer is None:
            return "—"
        return "recall@k, turn and session recall/NDCG" if "turn" in self.evidence else "recall@k"


# Evidence labels become each test point's evidence turns and sessions, so every retrieval metric applies.
_TURN_LABELS = "turns and sessions"

# LongMemEval's QA evaluation, whose judge templates its protocol reads (pinned by the end-to-end issue).
_LONGMEMEVAL_COMMIT = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
_LONGMEMEVAL_SOURCES = (
    SourceFile("xiaowu0162/LongMemEval", _LONGMEMEVAL_COMMIT, "src/evaluation/evaluate_qa.py",
               "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251"),
    SourceFile("xiaowu0162/LongMemEval", _LONGMEMEVAL_COMMIT, "src/generation/run_generation.py",
               "4f1eb3c69d7ad40f04065b9c0bc86f6582441018fc6ff751d162d66c95baf672"),
)
# mem0's LLM judge on LoCoMo, at the last commit that held its evaluation/ folder.
_MEM0_COMMIT = "b3ede5b7c0ac0e847b03786a603c107ac943b3ee"
_MEM0_SOURCES = (
    SourceFile("mem0ai/mem0", _MEM0_COMMIT, "evaluation/metrics/llm_judge.py",
               "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c"),
    SourceFile("mem0ai/mem0", _MEM0_COMMIT, "evaluation/prompts.py",
               "407bea1c1453dc6832c234bb1ed936d401d796fabcc0b28337a47ba63517d3ba"),
)

_LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
# LoCoMo's own QA prompts and context formats (gpt_utils.py) and scores (evaluation.py); digests
# computed from the repository at that commit.
_LOCOMO_SOURCES = (
    SourceFile("snap-research/LoCoMo", _LOCOMO_COMMIT, "task_eval/gpt_utils.py",
               "5fc977375878199735acd28fba5ae6f4d657fa0e000c0d2918a90c07b6035793"),
    SourceFile("snap-research/LoCoMo", _LOCOMO_COMMIT, "task_eval/evaluation.py",
               "8e3be5d57ff2ff9ec5cd05939592f468c5f3f1fd95d13e431932bdf6bf0fd6fd"),
)
# The files each published protocol (evals.benchmarks.protocols) reads its templates from.
PROTOCOL_SOURCES = {"longmemeval": _LONGMEMEVAL_SOURCES, "mem0": _MEM0_SOURCES, "locomo": _LOCOMO_SOURCES}
# The judge model each protocol's published code uses (None: it has no judge; it scores answers itself),
# named here so that a run's settings are checked without loading any protocol (their classes read it).
PROTOCOL_JUDGES: dict[str, str | None] = {
    "harness": "gpt-4o-mini",
    "longmemeval": "gpt-4o-2024-08-06",
    "mem0": "gpt-4o-mini",
    "locomo": None,  # LoCoMo scores answers by F1
}
_LME_HUB = "https://huggingface.co/datasets/xiaowu0162"
# The original hub repository, at the revision that uploaded its three files (named without ".json").
_LME_REVISION = "d8673c8819c3e42833f9b1849300ab94c12bbb6a"
_LME_ITEMS = "500 questions (30 abstention), one haystack each"
_LME_EVIDENCE = "turns (has_answer) and sessions (answer_session_ids)"
_LME_NOTES = "https://github.com/xiaowu0162/LongMemEval"

_BEAM_WHY = (
    "no importer yet: each conversation is a folder of files (chat.json, probing_questions/) with "
    "evidence as chat ids on most questions, and its scoring (a rubric judge 0/0.5/1; event ordering "
    "as Kendall tau-b x F1) is not implemented"
)


def _beam(tier: str, folder: str) -> Benchmark:
    return Benchmark(
        name=f"beam_{tier.lower()}",
        title=f"BEAM {tier} (Beyond a Million tokens)",
        homepage=f"https://github.com/mohammadtavakoli78/BEAM/tree/main/chats/{folder}",
        version="—",
        license="not recorded here",
        non_commercial=False,
        test_points="probing questions in 10 abilities (2,000 over the 100 conversations of all tiers)",
        evidence="source_chat_ids on most questions",
        data=None,
        importer=None,
        not_importable=_BEAM_WHY,
    )


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark(
            name="locomo",
            title="LoCoMo (Maharana et al. 2024)",
            homepage="https://github.com/snap-research/LoCoMo",
            version=f"commit {_LOCOMO_COMMIT}",
            license="CC BY-NC 4.0 (non-commercial)",
            non_commercial=True,
            test_points="1,986 questions in 10 conversations (446 unanswerable, category 5)",
            evidence="turns (dia_id) and sessions",
            data=RemoteFile(
                "locomo10.json",
                f"{RAW_GITHUB}/snap-research/LoCoMo/{_LOCOMO_COMMIT}/data/locomo10.json",
                sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
                size=2_805_274,
                listed_size="2.8 MB",
            ),
            importer="locomo",
            sources=_MEM0_SOURCES + _LOCOMO_SOURCES,
        ),
        Benchmark(
            name="longmemeval_oracle",
            title="LongMemEval oracle (evidence sessions only)",
            homepage=_LME_NOTES,
            version="hub xiaowu0162/longmemeval-cleaned, main (digest locked on first download)",
            license="MIT",
            non_commercial=False,
            test_points=_LME_ITEMS,
            evidence=_LME_EVIDENCE,
            data=RemoteFile(
                "longmemeval_oracle.json",
                f"{_LME_HUB}/longmemeval-cleaned/resolve/main/longmemeval_oracle.json",
                listed_size="15 MB",
            ),
            importer="longmemeval",
            sources=_LONGMEMEVAL_SOURCES,
        ),
        Benchmark(
            name="longmemeval_s",
            title="LongMemEval_s (about 40 sessions, 115k tokens per question), as first released",
            homepage=_LME_NOTES,
            version=f"hub xiaowu0162/longmemeval, revision {_LME_REVISION}",
            license="MIT",
            non_commercial=False,
            test_points=_LME_ITEMS,
            evidence=_LME_EVIDENCE,
            data=RemoteFile(
                "longmemeval_s",
                f"{_LME_HUB}/longmemeval/resolve/{_LME_REVISION}/longmemeval_s",
                listed_size="278 MB",
                aliases=("longmemeval_s.json",),
            ),
            importer="longmemeval",
            sources=_LONGMEMEVAL_SOURCES,
        ),
        Benchmark(
            name="longmemeval_s_cleaned",
            title="LongMemEval_s, cleaned history sessions (2025/09)",
            homepage=_LME_NOTES,
            version="hub xiaowu0162/longmemeval-cleaned, main (digest locked on first download)",
            license="MIT",
            non_commercial=False,
            test_points=_LME_ITEMS,
            evidence=_LME_EVIDENCE,
            data=RemoteFile(
                "longmemeval_s_cleaned.json",
                f"{_LME_HUB}/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json",
                listed_size="277 MB",
            ),
            importer="longmemeval",
            sources=_LONGMEMEVAL_SOURCES,
        ),
        Benchmark(
            name="longmemeval_m_cleaned",
            title="LongMemEval_m, cleaned (about 500 sessions per question)",
            homepage=_LME_NOTES,
            version="hub xiaowu0162/longmemeval-cleaned, main",
            license="MIT",
            non_commercial=False,
            test_points=_LME_ITEMS,
            evidence=_LME_EVIDENCE,
            data=RemoteFile(
                "longmemeval_m_cleaned.json",
                f"{_LME_HUB}/longmemeval-cleaned/resolve/main/longmemeval_m_cleaned.json",
                listed_size="2.7 GB",
            ),
            importer=None,
            not_importable="the import holds the whole 2.7 GB file in memory (5-13 GiB); it waits for the streaming import",
            sources=_LONGMEMEVAL_SOURCES,
        ),
        _beam("100K", "100K"),
        _beam("500K", "500K"),
        _beam("1M", "1M"),
        _beam("10M", "10M"),
        Benchmark(
            name="locomo_plus",
            title="LoCoMo-Plus (401 cognitive items stitched into LoCoMo)",
            homepage="https://github.com/xjtuleeyf/Locomo-Plus",
            version="—",
            license="not recorded here",
            non_commercial=False,
            test_points="401 cue/trigger items",
            evidence="an evidence field per item",
            data=None,
            importer=None,
            not_importable=(
                "no importer yet: data/locomo_plus.json holds cue and trigger dialogues that the benchmark's own "
                "script inserts into LoCoMo conversations at randomly chosen places (data/build_conv.py), and its "
                "judge (correct/partial/wrong = 1/0.5/0) is not implemented"
            ),
        ),
        Benchmark(
            name="convomem",
            title="ConvoMem (Salesforce; 75,336 QA in 6 categories)",
            homepage="https://huggingface.co/datasets/Salesforce/ConvoMem",
            version="—",
            license="see the dataset card",
            non_commercial=False,
            test_points="75,336 questions",
            evidence="evidence as message text",
            data=None,
            importer=None,
            not_importable=(
                "no importer yet: its evidence is message text, to be mapped to turns by exact match with "
                "unmatched evidence counted and shown"
            ),
        ),
    )
}


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; an UnknownBenchmark error lists the names there are."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UnknownBenchmark(f"no benchmark called {name!r}; `evals benchmarks` lists them: {', '.join(BENCHMARKS)}") from None
