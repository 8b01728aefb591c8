"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus): the unit, listed and not importable yet."""

from __future__ import annotations

from evals.benchmarks._registry import Benchmark, Unit

__all__ = ["UNIT"]

UNIT = Unit(
    order=40,
    name="locomo_plus",
    title="LoCoMo-Plus",
    releases=(
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
    ),
)
