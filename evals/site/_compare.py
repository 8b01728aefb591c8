"""Compare: for each configuration, its latest run at the newest commit against its latest at the commit before.

Lists the test points that flipped, each linked to both drill-downs, with
McNemar's exact test over the paired test points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from evals.analysis.compare import compare_runs
from evals.model.formatting import p_value_text, short_commit
from evals.site._output import Output
from evals.site._pages import ConfigInfo, Page
from evals.site._pairs import pair_href, pairs
from evals.site._publisher import Publisher, Site
from evals.site._views import config_info, config_order, recall_high, recall_low
from evals.store import RunSummary
from evals.views.names import row_name
from evals.views.site_paths import Paths

__all__ = ["ComparePage", "ComparePublisher", "CompareSection", "FlipRow", "PairGroup", "PairLink", "RunRef"]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class RunRef:
    run_id: str
    href: str
    commit_short: str
    dirty: bool
    date: str
    hits: int
    total: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None


@dataclass(frozen=True)
class FlipRow:
    conversation_id: str
    turn_index: int
    question: str
    became: str  # "miss" (hit → miss) or "hit" (miss → hit)
    older_href: str
    newer_href: str


@dataclass(frozen=True)
class CompareSection:
    anchor: str
    config: ConfigInfo
    older: RunRef
    newer: RunRef
    flips: list[FlipRow]  # hit → miss first
    to_miss: int
    to_hit: int
    unmatched: int  # test points present in only one of the two runs
    shared: int  # test points in both: the pairs McNemar's test compares
    p_value: float  # McNemar's exact two-sided p over the shared test points
    p_text: str
    pair_href: str = ""  # the two runs side by side (compare/<older>-vs-<newer>.html)


@dataclass(frozen=True)
class PairLink:
    """One compare page (compare/<A>-vs-<B>.html) as compare.html lists it: both runs named, A ranked above B."""

    href: str
    a: str  # "bm25 k=5 · 14.4%"
    b: str


@dataclass(frozen=True)
class PairGroup:
    """The compare pages of one corpus."""

    corpus_name: str
    digest_short: str
    pairs: list[PairLink]


@dataclass(frozen=True)
class ComparePage(Page):
    template: ClassVar[str] = "compare.html"

    sections: list[CompareSection]
    single_commit: list[ConfigInfo] = field(default_factory=list)  # configurations with one commit only
    pair_groups: list[PairGroup] = field(default_factory=list)  # every compare page the site has, by corpus


class ComparePublisher(Publisher):
    """compare.html: what changed between the two latest commits of every configuration."""

    name = "compare"
    pages = (ComparePage,)
    nav_label = "Compare"
    nav_href = "compare.html"
    nav_order = 30

    def runs_needed(self, site: Site) -> set[str]:
        return {run.run_id for pair in _pairs(site).values() if pair for run in pair}

    def publish(self, site: Site, output: Output) -> None:
        output.page(site.env, "compare.html", _compare_page(site, _pairs(site)))


def _pairs(site: Site) -> dict[tuple[str, str], tuple[RunSummary, RunSummary] | None]:
    return {cid: _two_latest_commits(runs) for cid, runs in site.by_config.items()}


def _two_latest_commits(runs: list[RunSummary]) -> tuple[RunSummary, RunSummary] | None:
    """The latest run at the newest commit and the latest run at the commit before it (runs newest first)."""
    newer = runs[0]
    older = next((r for r in runs[1:] if r.commit != newer.commit), None)
    return (older, newer) if older is not None else None


def _pair_groups(site: Site) -> list[PairGroup]:
    """Every compare page the site makes (:func:`evals.site._pairs.pairs`), grouped by corpus in the order it lists them."""
    groups: dict[str, list[PairLink]] = {}
    names: dict[str, str] = {}

    def name(s: RunSummary) -> str:
        head = s.headline
        figure = "—" if head.recall is None else f"{100 * head.recall:.1f}%"
        return f"{row_name(s)} k={s.k} · {head.rule.label} {figure} · {short_commit(s.commit)}"

    for a, b in pairs(site):
        names[a.corpus_digest] = a.corpus_name
        groups.setdefault(a.corpus_digest, []).append(PairLink(pair_href(site.paths, a.run_id, b.run_id), name(a), name(b)))
    return [PairGroup(names[d], d[:12], links) for d, links in groups.items()]


def _run_ref(s: RunSummary, paths: Paths) -> RunRef:
    return RunRef(
        run_id=s.run_id,
        href=paths.run(s.run_id),
        commit_short=short_commit(s.commit),
        dirty=s.dirty,
        date=s.date,
        hits=s.headline.hits,
        total=s.headline.total,
        recall=s.headline.recall,
        recall_low=recall_low(s),
        recall_high=recall_high(s),
    )


def _compare_page(site: Site, pairs: dict[tuple[str, str], tuple[RunSummary, RunSummary] | None]) -> ComparePage:
    by_config, held, paths = site.by_config, site.stored, site.paths
    sections = []
    single = []
    for cid in sorted(pairs, key=lambda c: config_order(by_config[c][0])):
        pair = pairs[cid]
        info = config_info(by_config[cid][0], paths)
        if pair is None:
            single.append(info)
            continue
        older, newer = pair
        comparison = compare_runs(held[older.run_id], held[newer.run_id], verdicts=site.computed.verdicts)
        for stored in (held[older.run_id], held[newer.run_id]):
            paths.place_run(stored.summary.run_id, stored.run.conversations)  # which drill-down page holds each point
        flips = [
            FlipRow(
                conversation_id=flip.conversation_id,
                turn_index=flip.turn_index,
                question=flip.question,
                became=became,
                older_href=paths.test_point(older.run_id, flip.conversation_id, flip.turn_index),
                newer_href=paths.test_point(newer.run_id, flip.conversation_id, flip.turn_index),
            )
            for became, group in (("miss", comparison.lost), ("hit", comparison.gained))
            for flip in group
        ]
        sections.append(
            CompareSection(
                anchor=paths.compare_section(*cid).partition("#")[2],  # benchmark pages link here
                config=info,
                older=_run_ref(older, paths),
                newer=_run_ref(newer, paths),
                flips=flips,
                to_miss=len(comparison.lost),
                to_hit=len(comparison.gained),
                unmatched=comparison.only_in_a + comparison.only_in_b,
                shared=comparison.shared,
                p_value=comparison.mcnemar_p,
                p_text=p_value_text(comparison.mcnemar_p),
                pair_href=pair_href(paths, older.run_id, newer.run_id),
            )
        )
    return ComparePage(
        **site.frame("Compare runs", ComparePublisher.name),
        sections=sections,
        single_commit=single,
        pair_groups=_pair_groups(site),
    )
