"""Which published claims a corpus's board shows, and which run measures the same figure the same way.

A claim (:mod:`evals.model.claims`) sits on the board of the corpus it was measured on (or, where the
source names no corpus, on every corpus of its benchmark), greyed and never ranked. A run stands beside
it, with the difference, only where the run has the same metric at the same k, on the same level and
over the same number of questions (where the source counts the questions without evidence, the run's
figure is taken over every question the same way), judged (for a QA figure) by the same model. Otherwise the claim says
why no run stands beside it, naming the nearest figure when there is one.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evals.benchmarks import published_claims
from evals.judge.ceilings import ceiling
from evals.judge.metrics import MetricValue, over_every_point
from evals.model.claims import Claim
from evals.model.corpus import Reference
from evals.model.formatting import percent
from evals.model.provenance import hand_import_warning
from evals.views.names import row_name, row_names
from evals.views.site_paths import benchmark_key

if TYPE_CHECKING:
    from evals.store import RunSummary, Store

__all__ = ["ClaimView", "board_claims", "claim_references", "claims_text", "leaderboard_notes", "source_warning"]


@dataclass(frozen=True)
class ClaimView:
    """A claim as a board shows it: the claim, and the run beside it (None: none measures it the same way)."""

    claim: Claim
    run_id: str | None = None
    run_label: str = ""
    run_value: float | None = None
    why_not: str = ""  # no run beside it: why ("no run measures session.recall_frac@10")

    @property
    def difference(self) -> float | None:
        """The run's figure less the published one (None: no run beside it)."""
        return None if self.run_value is None else self.run_value - self.claim.value

    @property
    def difference_points(self) -> str:
        """The difference in percentage points, as every surface prints it ("+0.04"; "" with no run beside it):
        two places, since a reproduction often lands within a tenth of a point."""
        return "" if self.difference is None else f"{self.difference * 100:+.2f}"


def _on_board(claim: Claim, runs: Sequence[RunSummary]) -> bool:
    first = runs[0]
    if first.benchmark != claim.benchmark:
        return False
    if claim.corpus is None:
        return True
    return claim.corpus in (
        first.corpus_name,
        benchmark_key(first.corpus_name, first.benchmark, first.corpus_digest, first.corpus_release),
    )


def _key(claim: Claim) -> str | None:
    """The run metric a claim is the same figure as, or None (a budget figure: no run key names one yet)."""
    if claim.budget is not None:
        return None
    if claim.level is not None:
        return f"{claim.level}.{claim.metric}@{claim.k}" if claim.k is not None else None
    return claim.metric


def _same_judge(claim: Claim, summary: RunSummary) -> bool:
    if claim.judge is None or summary.judge_model is None:
        return False
    want, have = claim.judge.lower(), summary.judge_model.lower()
    return have == want or have.startswith(want + "-")  # gpt-4o-mini-2024-07-18 is gpt-4o-mini


def _as_claimed(claim: Claim, summary: RunSummary, value: MetricValue | None) -> MetricValue | None:
    """The run's figure over the claim's population: as measured, or, where the claim counts the questions
    without evidence, over every test point the run played (None: the run did not record how many)."""
    if value is None or claim.without_evidence is None:
        return value
    points = summary.metric("test_points")
    return None if points is None else over_every_point(value, points.n, claim.without_evidence)


def _beside(claim: Claim, runs: Sequence[RunSummary]) -> ClaimView:
    key = _key(claim)
    if key is None:
        return ClaimView(claim, why_not="measured at a token budget; no run figure is at one")
    measured = [(s, _as_claimed(claim, s, s.metric(key))) for s in runs if not ceiling(s)]
    measured = [(s, v) for s, v in measured if v is not None and v.value is not None]
    if claim.level is None:  # a QA figure: at the run's own k, judged by the same model
        measured = [(s, v) for s, v in measured if claim.k is None or s.k == claim.k]
        if not measured:
            return ClaimView(
                claim, why_not=f"no memory on this corpus has {claim.metric}" + (f" at k={claim.k}" if claim.k else "")
            )
        judged = [(s, v) for s, v in measured if _same_judge(claim, s)]
        if not judged:
            return ClaimView(claim, why_not=f"judge {claim.judge or 'not stated'}; no run here was judged by it")
        measured = judged
    if not measured:
        return ClaimView(claim, why_not=f"no memory on this corpus measures {key}")
    if claim.questions is None:
        return ClaimView(claim, why_not="its population is not stated as a count, so no run can be shown as the same")
    same = [(s, v) for s, v in measured if v.n == claim.questions]
    if not same:
        s, v = min(measured, key=lambda sv: abs(sv[1].value - claim.value))  # type: ignore[operator]
        return ClaimView(
            claim,
            why_not=(f"over {claim.questions:,} questions; runs here count {v.n:,} (nearest: {row_name(s)} {percent(v.value)})"),
        )
    s, v = min(same, key=lambda sv: abs(sv[1].value - claim.value))  # type: ignore[operator]
    return ClaimView(claim, run_id=s.run_id, run_label=row_name(s), run_value=v.value)


def source_warning(runs: Sequence[RunSummary]) -> str:
    """Why published figures beside these runs' corpus may be of other data: it declares a benchmark but was not
    imported from a pinned release's bytes ("" where it was, or declares none)."""
    first = runs[0] if runs else None
    if first is None or first.benchmark is None or first.corpus_release is not None:
        return ""
    return hand_import_warning(first.corpus_file, first.benchmark)


def board_claims(runs: Sequence[RunSummary], claims: Sequence[Claim] | None = None) -> list[ClaimView]:
    """The claims on the board of one corpus's ``runs`` (default: the units' claims), each with the run
    measuring it the same way where there is one: retrieval figures first, then by value, best first."""
    if not runs:
        return []
    chosen = [c for c in (published_claims() if claims is None else claims) if _on_board(c, runs)]
    chosen.sort(key=lambda c: (c.level is None, c.metric, -c.value))
    return [_beside(c, runs) for c in chosen]


_REFERENCE_METRICS = ("recall_any", "recall_all", "recall_frac", "ndcg_any", "ndcg_any_lme")


def claim_references(runs: Sequence[RunSummary], claims: Sequence[Claim] | None = None) -> list[Reference]:
    """The retrieval claims on the board of ``runs`` as published figures (:class:`Reference`), so they join the
    paper's figures where the board already shows those: the main table's published rows and the cutoff tables."""
    out = []
    for c in board_claims(runs, claims):
        claim = c.claim
        if claim.level is None or claim.k is None or claim.metric not in _REFERENCE_METRICS:
            continue
        said = f"published claim, {claim.measured_by}; {claim.population}; not re-run here"
        out.append(
            Reference(
                label=f"{claim.system} ({claim.version}): {claim.figure}",
                citation=claim.source.text,
                metric=claim.metric,  # type: ignore[arg-type]
                level=claim.level,
                k=claim.k,
                value=claim.value,
                note=said,
            )
        )
    return out


WIDTH = 100  # the terminal leaderboard's width (its table fits 100 columns; so do these lines)


def _wrapped(text: str, indent: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False)


def claims_text(runs: Sequence[RunSummary], claims: Sequence[Claim] | None = None) -> str:
    """The claims of one corpus as lines for the terminal, at most :data:`WIDTH` columns ("" when there are
    none): marked published, never ranked; a run beside one where it measures the same figure the same way."""
    views = board_claims(runs, claims)
    if not views:
        return ""
    lines = [f"Published claims on {runs[0].corpus_name} (not re-run here, never ranked):"]
    if warning := source_warning(runs):
        lines.append(_wrapped(f"warning: {warning}", "  "))
    for v in views:
        c = v.claim
        at = f"@{c.k}" if c.k is not None else ""
        level = f", {c.level} level" if c.level else ""
        lines.append(
            _wrapped(f"published {percent(c.value)}  {c.system}: {c.figure} [{c.metric}{at}{level}; {c.measured_by}]", "  ")
        )
        if v.run_value is not None:
            said = f"run {percent(v.run_value)}  {v.run_label}, difference {v.difference_points} points"
            lines.append(_wrapped(said, "      "))
    return "\n".join(lines) + "\n"


def leaderboard_notes(store: Store, summaries: Sequence[RunSummary]) -> str:
    """What ``evals leaderboard`` prints below its table, per corpus: which runs return the same top-k
    (:mod:`evals.analysis.same_ranking`), then the corpus's published claims, greyed by words, never ranked."""
    from evals.analysis.same_ranking import near_twins, same_rankings, tie_groups

    same = same_rankings(store, summaries)
    by_corpus: dict[str, list[RunSummary]] = {}
    for s in summaries:
        by_corpus.setdefault(s.corpus_digest, []).append(s)
    blocks = []
    for runs in by_corpus.values():
        order = {s.run_id: n for n, s in enumerate(runs)}
        names = dict(zip(order, row_names(runs), strict=True))
        lines = [
            _wrapped(
                f"Tied on {runs[0].corpus_name}, one rank: "
                + ", ".join(names[r] for r in group)
                + ": the same top-k on every test point",
                "",
            )
            for group in tie_groups(same, [s.run_id for s in runs])
        ]
        lines += [
            _wrapped(
                f"Same ranking on {s.corpus_name}: {names[s.run_id]} and {names.get(t.other, t.strategy)}, "
                f"top-k equal on {t.same:,} of {t.total:,} test points",
                "",
            )
            for s in runs
            for t in near_twins(same.get(s.run_id, []))
            if order.get(t.other, -1) > order[s.run_id]
        ]
        text = "\n".join(lines) + ("\n" if lines else "") + claims_text(runs)
        if text:
            blocks.append(text)
    return "".join("\n" + block for block in blocks)
