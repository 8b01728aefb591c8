"""The figure with errata on the site's pages: a run's headline recomputed with an errata file
(:mod:`evals.analysis.errata`), shown beside the published one on the leaderboard and the run page, never in its place."""

from __future__ import annotations

from pathlib import Path

from evals.analysis.errata import ErrataFigure
from evals.benchmarks.errata import Errata
from evals.site._pages import ErrataView

__all__ = ["errata_note", "errata_view"]


def errata_view(figure: ErrataFigure | None) -> ErrataView | None:
    if figure is None:
        return None
    head = figure.headline
    return ErrataView(
        label=figure.label,
        recall=head.recall,
        low=head.low,
        high=head.high,
        hits=head.hits,
        total=head.total,
        corrected=figure.corrected,
        excluded=figure.excluded,
        changed=len(figure.changed),
        note=errata_note(figure.errata),
        problem=figure.problem,
    )


def errata_note(errata: Errata) -> str:
    """Where the corrections come from, as the site says it: the file by name (not the builder's path) and digest."""
    excluded = f" ({errata.excluded} leaving an invalid question out)" if errata.excluded else ""
    return (
        f"{len(errata.entries)} correction{'s' if len(errata.entries) != 1 else ''}{excluded}, "
        f"from {errata.source} (file {Path(errata.path).name}, "
        f"sha256 {errata.sha256})"
    )
