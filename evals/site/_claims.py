"""Published claims on a corpus's board: :func:`evals.views.claims.board_claims` as page rows."""

from __future__ import annotations

from collections.abc import Sequence

from evals.site._pages import ClaimRow
from evals.store import RunSummary
from evals.views.claims import board_claims
from evals.views.site_paths import Paths

__all__ = ["claim_rows"]


def claim_rows(runs: Sequence[RunSummary], paths: Paths) -> list[ClaimRow]:
    """The claims on the board of one corpus's latest ``runs``, each with the run beside it where one measures
    the same figure the same way."""
    rows = []
    for view in board_claims(runs):
        c = view.claim
        at = f"@{c.k}" if c.k is not None else (f" within {c.budget:,} tokens" if c.budget is not None else "")
        rows.append(
            ClaimRow(
                system=c.system,
                version=c.version,
                figure=c.figure,
                measure=f"{c.metric}{at}" + (f" ({c.level})" if c.level else ""),
                population=c.population
                + (f" ({c.questions:,})" if c.questions and f"{c.questions:,}" not in c.population else ""),
                judge=c.judge or "",
                measured_by=c.measured_by,
                value=c.value,
                source=c.source.text,
                source_href=c.source.href,
                note=c.note or "",
                run_label=view.run_label,
                run_href=paths.run(view.run_id) if view.run_id else "",
                run_value=view.run_value,
                difference=view.difference,
                why_not=view.why_not,
                retrieval=c.level is not None,
            )
        )
    return rows
