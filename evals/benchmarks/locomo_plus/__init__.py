"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus): the unit.

Its release is the repository's ``data/`` folder at :data:`COMMIT`: ``locomo_plus.json`` (401 cue/trigger
items) and the ``locomo10.json`` it is stitched into (the same bytes as LoCoMo's pinned file), both pinned.
Its importer (:mod:`.importer`) stitches each item in as ``data/unified_input.py`` does. Its judge
(correct / partial / wrong = 1 / 0.5 / 0, ``evaluation_framework/task_eval/``) is not implemented: runs
on it measure retrieval, the cue dialogue as the trigger query's evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evals.benchmarks._registry import RAW_GITHUB, Benchmark, RemoteFile, Unit
from evals.judge.headline import Rule

if TYPE_CHECKING:
    from evals.benchmarks.importers._common import ImportReport

__all__ = ["COMMIT", "REPOSITORY", "RULE", "UNIT"]

REPOSITORY = "xjtuleeyf/Locomo-Plus"
COMMIT = "059f4e3d38f7f1f96765e8e2cb7de3097551bffb"
# (path, size, SHA-256), computed from the repository at COMMIT; data/locomo10.json is LoCoMo's pinned file.
_FILES = (
    ("data/locomo10.json", 2_805_274, "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"),
    ("data/locomo_plus.json", 305_737, "af2fc6e5e0e88735e28d8dd1ef474b718861a73beb21779809e3b9e1a4fe3d23"),
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
        ),
    ),
    importer=_import,
    reads="LoCoMo-Plus's data/ folder: locomo_plus.json beside locomo10.json (github.com/xjtuleeyf/Locomo-Plus)",
    rule=RULE,
    categories={"Cognitive": "cognitive memory (cue and trigger)"},
)
