"""BEAM placeholder."""

from __future__ import annotations

from evals.benchmarks._registry import Benchmark, Unit

__all__ = ["UNIT"]

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


UNIT = Unit(order=30, name="beam", title="BEAM", releases=tuple(_beam(t, t) for t in ("100K", "500K", "1M", "10M")))
