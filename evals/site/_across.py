"""across.html: the field across benchmarks, one table: each system's headline and rank on every benchmark.

A system here is a configuration by name (the strategy and its options), whatever corpus it ran on; a
benchmark is what the leaderboard pages are per (:meth:`evals.views.site_paths.Paths.benchmark`). Each
benchmark's column reads the latest run of each memory at the table's k, ranked as its own leaderboard ranks
them (ties share a rank). A system not run on a benchmark says so in its cell: a gap is never silent.

Where two systems' order flips between two benchmarks and both orders survive the paired test (McNemar's
exact test over the test points both runs of a benchmark hold, p < 0.05 on each), a note says so: the order
of the field is a property of the benchmark as much as of the memories.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import ClassVar

from evals.analysis.across import FLIP_P, flip_notes
from evals.judge.ceilings import ceiling
from evals.judge.headline import HIT, MISS
from evals.judge.stats import mcnemar_exact
from evals.site._output import Output
from evals.site._pages import Page
from evals.site._publisher import Publisher, Site
from evals.store import RunSummary
from evals.views.names import row_name
from evals.views.tables import board_order, ranks_at_k

__all__ = ["ACROSS_JSON", "AcrossCell", "AcrossPage", "AcrossPublisher", "AcrossRow"]

ACROSS_JSON = "data/across.json"  # the page's tables as data, beside it in the site

@dataclass(frozen=True)
class AcrossCell:
    """One system on one benchmark: its headline with its interval and rank, or why there is none."""

    recall: float | None = None
    low: float | None = None
    high: float | None = None
    rank: int | None = None
    href: str = ""  # its run page
    missing: str = ""  # "not run at k=10", say: why the cell is empty


@dataclass(frozen=True)
class AcrossRow:
    system: str
    cells: list[AcrossCell]


@dataclass(frozen=True)
class AcrossTable:
    """Every memory at one k, across the benchmarks that have runs at that k."""

    k: int
    benchmarks: list[tuple[str, str]]  # (title, leaderboard href), in column order
    labels: list[str]  # each benchmark's headline name
    rows: list[AcrossRow]
    flips: list[str] = field(default_factory=list)  # pairs whose order flips between two benchmarks, each p < FLIP_P


@dataclass(frozen=True)
class AcrossPage(Page):
    template: ClassVar[str] = "across.html"

    tables: list[AcrossTable]
    flip_p: float = FLIP_P


def system_name(summary: RunSummary) -> str:
    """The name a system goes by across benchmarks: its library and its non-default options, as every board names it."""
    return row_name(summary)


def _memories_by_benchmark(site: Site) -> dict[int, dict[str, list[RunSummary]]]:
    """k -> benchmark key -> the latest runs of memories (no ceilings) at that k, in board order."""
    found: dict[int, dict[str, list[RunSummary]]] = defaultdict(lambda: defaultdict(list))
    for s in site.latest:
        if not ceiling(s):
            found[s.k][site.paths.benchmark(s.corpus_digest)].append(s)
    return {k: {b: board_order(runs) for b, runs in by.items()} for k, by in found.items() if len(by) >= 2}


def _flat(site: Site, summary: RunSummary) -> list[str]:
    stored = site.stored[summary.run_id]
    return [v for conversation in site.computed.verdicts(stored, summary.headline.rule.metric) for v in conversation]


def _order(site: Site, a: RunSummary, b: RunSummary) -> tuple[int, float]:
    """Which of two runs on one corpus is ahead (1: a, -1: b, 0: level) and McNemar's exact p over their shared points."""
    only_a = only_b = 0
    for va, vb in zip(_flat(site, a), _flat(site, b), strict=False):
        if {va, vb} == {HIT, MISS}:
            only_a += va == HIT
            only_b += vb == HIT
    return (only_a > only_b) - (only_a < only_b), mcnemar_exact(only_a, only_b)


def _flips(site: Site, by_benchmark: dict[str, list[RunSummary]], titles: dict[str, str]) -> list[str]:
    """Every pair of systems whose order on one benchmark is the reverse of its order on another, each with p < FLIP_P."""
    named = {b: {system_name(s): s for s in runs} for b, runs in by_benchmark.items()}
    systems = sorted({name for runs in named.values() for name in runs})
    orders: dict[tuple[str, str], dict[str, tuple[int, float]]] = {}
    for x, y in combinations(systems, 2):
        for benchmark, runs in named.items():
            if x in runs and y in runs and runs[x].corpus_digest == runs[y].corpus_digest:
                orders.setdefault((x, y), {})[benchmark] = _order(site, runs[x], runs[y])
    return flip_notes(orders, titles)


def _row_order(name: str, runs: dict[str, RunSummary], ranks: dict[str, dict[str, int]]) -> tuple[int, int, str]:
    """Systems on more benchmarks first, then by their best rank on any, then by name."""
    best = min((ranks[b].get(s.run_id, 10**9) for b, s in runs.items()), default=10**9)
    return -len(runs), best, name


def across_tables(site: Site) -> list[AcrossTable]:
    """One table per k that two or more benchmarks have memories at."""
    from evals.site._benchmarks import benchmark_infos

    infos = benchmark_infos(site)
    tables = []
    for k, by_benchmark in sorted(_memories_by_benchmark(site).items()):
        keys = sorted(by_benchmark, key=lambda b: infos[b].title if b in infos else b)
        titles = {b: infos[b].title if b in infos else b for b in keys}
        ranks = {b: ranks_at_k(by_benchmark[b]) for b in keys}
        systems: dict[str, dict[str, RunSummary]] = defaultdict(dict)
        for b in keys:
            for s in by_benchmark[b]:
                systems[system_name(s)].setdefault(b, s)  # board order: the better run of a name, if two
        rows = []
        for name in sorted(systems, key=lambda n: _row_order(n, systems[n], ranks)):
            cells = []
            for b in keys:
                s = systems[name].get(b)
                if s is None:
                    cells.append(AcrossCell(missing=f"not run at k={k}"))
                    continue
                head = s.headline
                cells.append(AcrossCell(head.recall, head.low, head.high, ranks[b].get(s.run_id), site.paths.run(s.run_id)))
            rows.append(AcrossRow(name, cells))
        labels = [by_benchmark[b][0].headline.rule.label for b in keys]
        tables.append(
            AcrossTable(
                k=k,
                benchmarks=[(titles[b], site.paths.leaderboard(b)) for b in keys],
                labels=labels,
                rows=rows,
                flips=_flips(site, by_benchmark, titles),
            )
        )
    return tables


class AcrossPublisher(Publisher):
    """across.html: each system's headline and rank on every benchmark, and where the order flips."""

    name = "across"
    pages = (AcrossPage,)
    nav_label = "Across benchmarks"
    nav_href = "across.html"
    nav_order = 15

    def runs_needed(self, site: Site) -> set[str]:
        return {s.run_id for by in _memories_by_benchmark(site).values() for runs in by.values() for s in runs}

    def publish(self, site: Site, output: Output) -> None:
        tables = across_tables(site)
        page = AcrossPage(**site.frame("Across benchmarks", self.name), tables=tables)
        output.page(site.env, "across.html", page)
        # The same tables as data (tools/across_markdown.py prints them as docs/strategies.md's table).
        output.json(ACROSS_JSON, {"flip_p": FLIP_P, "tables": [asdict(table) for table in tables]})
