"""ConvoMem (Salesforce): the unit, listed and not importable yet."""

from __future__ import annotations

from evals.benchmarks.kit import Benchmark, Unit

__all__ = ["UNIT"]

UNIT = Unit(
    order=50,
    name="convomem",
    title="ConvoMem",
    releases=(
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
    ),
)
