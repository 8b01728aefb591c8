"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus): the unit.

Its release is the repository's ``data/`` folder at :data:`COMMIT`: ``locomo_plus.json`` (401 cue/trigger
items) and the ``locomo10.json`` it is stitched into (the same bytes as LoCoMo's pinned file), both pinned.
Its importer (:mod:`.importer`) stitches each item in as ``data/unified_input.py`` does. Runs on it measure
retrieval, the cue dialogue as the trigger query's evidence; with ``--protocol locomo_plus`` (:mod:`.protocol`)
answers are asked and graded as ``evaluation_framework/`` does (correct / partial / wrong = 1 / 0.5 / 0), from
the pinned :data:`SOURCES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evals.benchmarks.kit import RAW_GITHUB, Benchmark, ProtocolSpec, RemoteFile, Rule, SourceFile, Unit

if TYPE_CHECKING:
    from evals.benchmarks.kit import ImportReport

__all__ = ["COMMIT", "REPOSITORY", "RULE", "SOURCES", "UNIT"]

REPOSITORY = "xjtuleeyf/Locomo-Plus"
COMMIT = "059f4e3d38f7f1f96765e8e2cb7de3097551bffb"
JUDGE = "gpt-4o-mini"  # LoCoMo-Plus's evaluation_framework/scripts/judge.sh default
# (path, size, SHA-256), computed from the repository at COMMIT; data/locomo10.json is LoCoMo's pinned file.
_FILES = (
    ("data/locomo10.json", 2_805_274, "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"),
    ("data/locomo_plus.json", 305_737, "af2fc6e5e0e88735e28d8dd1ef474b718861a73beb21779809e3b9e1a4fe3d23"),
)

# What `--protocol locomo_plus` reads (:mod:`.protocol`): the judge's templates, script and default model, and the
# answer's input; digests computed from the repository at COMMIT.
SOURCES = tuple(
    SourceFile(REPOSITORY, COMMIT, f"evaluation_framework/{path}", sha256)
    for path, sha256 in (
        ("task_eval/llm_as_judge.py", "9ca4997392b1e97a03635379ca601ec5fadfe09ead471542f10433f9af071a33"),
        ("task_eval/prompt.py", "e43e3ee7115a30938e727fe0eab16694186c08e3f9619f9d8dd5e603d96fc2b1"),
        ("task_eval/evaluate_qa.py", "2ab1170e007cededdabc6beb9a560ce99ae38b25fd19c8baba8acd6356826df9"),
        ("task_eval/utils.py", "55fb916e46ac10a521670f96594abd117dfc63b1342ca67e81a2fab6780233a5"),
        ("scripts/judge.sh", "02cf6cca2982c231651767bd49b95950c9971bc2cf0284c14ef4a03fb6669180"),
    )
)

RULE = Rule(
    name="locomo_plus",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="every item: its trigger query, with its cue dialogue's turns as evidence",
    corpora="LoCoMo-Plus (evals import-corpus locomo_plus, or evals fetch locomo_plus; benchmark.json names it)",
    follows="no published retrieval figure: LoCoMo-Plus judges answers (evaluation_framework/task_eval/); the items are "
    "stitched into LoCoMo as its data/unified_input.py does (item i into conversation i % 10), and the harness scores "
    "whether a cue turn is among the first k records",
    note="data/build_conv.py's own main draws the conversation at random, unseeded; that choice is not followed.",
)


def _import(folder: Path, out: Path) -> ImportReport:
    from evals.benchmarks.locomo_plus.importer import import_locomo_plus

    return import_locomo_plus(folder, out)


def _protocol() -> type:
    from evals.benchmarks.locomo_plus.protocol import LoCoMoPlusProtocol

    return LoCoMoPlusProtocol


UNIT = Unit(
    order=40,
    name="locomo_plus",
    title="LoCoMo-Plus",
    releases=(
        Benchmark(
            name="locomo_plus",
            title="LoCoMo-Plus (401 cognitive items stitched into LoCoMo)",
            homepage=f"https://github.com/{REPOSITORY}",
            version=f"commit {COMMIT}",
            license="not stated in the repository; its locomo10.json is LoCoMo's (CC BY-NC 4.0, non-commercial)",
            non_commercial=True,
            test_points="401 cue/trigger items, each stitched into one of LoCoMo's 10 conversations",
            evidence="turns (the cue dialogue) and sessions",
            data=None,
            importer="locomo_plus",
            tree=tuple(
                RemoteFile(f"{REPOSITORY}/{COMMIT}/{path}", f"{RAW_GITHUB}/{REPOSITORY}/{COMMIT}/{path}", sha256, size)
                for path, size, sha256 in _FILES
            ),
            import_root=f"{REPOSITORY}/{COMMIT}/data",
            sources=SOURCES,
        ),
    ),
    importer=_import,
    reads="LoCoMo-Plus's data/ folder: locomo_plus.json beside locomo10.json (github.com/xjtuleeyf/Locomo-Plus)",
    rule=RULE,
    categories={"Cognitive": "cognitive memory (cue and trigger)"},
    protocols={"locomo_plus": ProtocolSpec(_protocol, JUDGE, SOURCES)},
    metric_notes={"answer_score": "LoCoMo-Plus: correct 1, partial 0.5, wrong 0."},
)
