"""The leaderboards: the front page (index.html) listing every benchmark, one page per benchmark with a
board and cost chart per corpus, and their rows as downloads, leaderboard.json and .csv."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evals.analysis.errata import Figures
from evals.analysis.same_ranking import SameRanking, same_ranking_note, tie_groups
from evals.benchmarks import metric_description
from evals.judge.ceilings import ceiling
from evals.judge.headline import KEYWORD
from evals.judge.metrics import (
    COUNT,
    MEAN,
    METRICS,
    PROPORTION,
    TOKENS,
    LatencyBucket,
    Metric,
)
from evals.model.corpus import Reference
from evals.model.formatting import (
    csv_cell,
    is_estimated,
    json_text,
    number,
    percent,
    percent_interval,
    short_commit,
)
from evals.site._benchmarks import benchmark_infos
from evals.site._charts import Chart, CostPoint, cost_chart
from evals.site._errata import errata_note, errata_view
from evals.site._history import drop_reason
from evals.site._output import Output
from evals.site._pages import BenchmarkInfo, ConfigInfo, ErrataView, MetricCell, MetricColumn, Page
from evals.site._pairs import pair_href
from evals.site._publisher import Publisher, Site
from evals.site._qa import qa_caveats, qa_note, twin_note
from evals.site._retrieval import CutoffTable, cutoff_tables, latency_chart
from evals.site._views import config_info, config_order, settings_text
from evals.store import FailedRun, RunSummary
from evals.strategies import REFERENCE_STRATEGY
from evals.views.board_rows import Spread, declared_marks, failed_name, origin_marks, spreads
from evals.views.claims import board_claims, claim_references, source_warning
from evals.views.names import row_names
from evals.views.reference import reference_run, relative_tokens
from evals.views.site_paths import Paths, config_id
from evals.views.tables import HASH_EMBEDDER, WHOLE_COUNTS, Caveat, board_metrics, board_order, caveats, ranks_at_k

__all__ = [
    "BoardRow",
    "ClaimRow",
    "ConfigRow",
    "CorpusBoard",
    "FailedRow",
    "FrontPage",
    "FrontRow",
    "IndexPage",
    "LeaderView",
    "LeaderboardPublisher",
    "ReferenceRow",
    "claim_rows",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_records",
    "metric_cell",
    "metric_column",
]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class BoardRow:
    run_id: str
    run_href: str
    history_href: str
    strategy: str
    settings: str
    config_key: str
    model: str
    k: int
    recall: float | None  # None: no test point; shown as "—", never 0 (also the chart's y)
    recall_low: float | None
    recall_high: float | None
    metrics: list[MetricCell]  # aligned with CorpusBoard.columns
    hits: int
    total: int
    tokens: float | None  # context tokens per test point (the chart's x)
    relative: float | None  # tokens / the reference run's tokens on the same corpus (see CorpusBoard.reference)
    approx_tokens: bool
    commit: str
    commit_short: str
    dirty: bool
    date: str
    answer_model: str | None = None
    source: str | None = None  # a plug-in's distribution and version (or module:attr); None for a built-in
    ceiling: str = ""  # why this strategy is a ceiling (an oracle baseline), not a memory; "" for a memory
    caveats: list[Caveat] = field(
        default_factory=list
    )  # what to know before reading its figure (evals.views.tables.caveats), shown as tappable badges
    with_errata: ErrataView | None = None  # the headline with errata (evals.analysis.errata), beside the published one
    rank: int | None = None  # among the memories on this corpus at the same k (None: a ceiling, or no figure)
    qa: str = ""  # a row with answers: its protocol, judge model and endpoint host (evals.site._qa.qa_note)
    twin: str = ""  # how it differs from rows of the same memory and k (answers, judging), in words
    pick: str = ""  # the run's slug, which names its compare pages (compare/<A>-vs-<B>.html)
    order: int = 0  # its place on the board (memories by k and rank, then ceilings): A of a pair is the one above
    own: MetricCell | None = None  # the benchmark's own retrieval figure at the run's k (CorpusBoard.own_label)
    same_ranking: str = ""  # "same ranking as X": runs whose top-k equals this one's on >= 99% (not all) of test points
    tie: str = ""  # the first row of a tie group: "= b, c: the same top-k on every test point"; the others "= a"
    spread: str = ""  # its configuration's repeated runs on this corpus at its k: "3 runs: 0.612–0.627"; "" for one run
    # Who ran it, then declared facts (evals.views.board_rows.origin_marks, declared_marks): (mark, explanation),
    # each a small mark with its title.
    marks: list[tuple[str, str]] = field(default_factory=list)
    tuned: bool = False  # declares benchmarks it was tuned on (the site's filter hides such rows)
    writes_with_llm: bool = False  # its memory writes with an LLM (the site's filter hides such rows)


@dataclass(frozen=True)
class FailedRow:
    """A configuration whose latest run on this corpus failed: a row saying ``failed: <reason>``, never ranked."""

    run_id: str
    strategy: str
    settings: str
    config_key: str
    model: str
    k: int
    failed: str  # "failed: <reason>"
    commit_short: str
    dirty: bool
    date: str
    marks: list[tuple[str, str]] = field(default_factory=list)
    tuned: bool = False
    writes_with_llm: bool = False


@dataclass(frozen=True)
class CorpusBoard:
    """The leaderboard of one corpus (one content digest)."""

    anchor: str
    corpus_name: str
    corpus_digest: str
    corpus_digest_short: str
    columns: list[MetricColumn]  # the declared metrics some row has (or that are always shown)
    rows: list[BoardRow]
    chart: Chart | None
    unplotted: list[str]  # configurations left off the chart (no test point)
    reference: str  # the strategy relative cost is measured against (evals.strategies.REFERENCE_STRATEGY)
    relative_note: str  # which run of it, and when relative cost is not shown
    answers: bool = False  # some row has answers: say how the answer columns are made
    retrieval: list[CutoffTable] = field(default_factory=list)  # per (level, metric): every configuration at every cutoff
    latency_chart: Chart | None = None  # retrieve latency against records held, one line per configuration
    errata: str = ""  # the errata file correcting this corpus (source, digest): its rows get a column with errata
    ks: list[int] = field(default_factory=list)  # the memories' k, each a group ranked on its own
    own_label: str = ""  # the benchmark's own retrieval figure ("recall_frac@k"); "" when it publishes none
    headline_note: str = ""  # what the headline is not, beside it ("not the paper's fraction"); "" when nothing to say
    own_description: str = ""
    references: list[ReferenceRow] = field(default_factory=list)  # the paper's figures beside the runs, never ranked
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (A vs B, its compare page) for every two rows
    claims: list[ClaimRow] = field(default_factory=list)  # published claims for this corpus (evals.views.claims), never ranked
    failed: list[FailedRow] = field(default_factory=list)  # configurations whose latest run failed, never ranked
    # Some row declares facts the page filters on: its rows carry data-tuned / data-llm (site.js adds the checkboxes).
    declared: bool = False


@dataclass(frozen=True)
class ClaimRow:
    """A published claim on a board (its benchmark unit's claims.toml), greyed, with the run measuring it the same way."""

    system: str
    version: str
    figure: str  # as the source names it
    measure: str  # the harness's metric, k or budget and level: "recall_frac@10 (session)"
    population: str
    judge: str  # "" for a retrieval figure
    measured_by: str
    value: float
    source: str  # repository@commit path, or URL
    source_href: str
    note: str
    run_label: str = ""  # the run measuring the same figure the same way; "" when none does
    run_href: str = ""
    run_value: float | None = None
    difference: float | None = None  # run less published
    difference_points: str = ""  # as every surface prints it (evals.views.claims.ClaimView.difference_points)
    why_not: str = ""  # no run beside it: why
    retrieval: bool = False  # a retrieval figure (a level and k): the kind a run here measures without a judge


@dataclass(frozen=True)
class ReferenceRow:
    """A published figure of the benchmark's own metric at one k, shown in the main table for comparison."""

    label: str
    note: str
    k: int
    value: float


@dataclass(frozen=True)
class LeaderView:
    """A corpus's leader: the memory first by its headline (evals.judge.headline; ceilings are never ranked)."""

    corpus_name: str
    strategy: str
    config_key: str
    label: str  # the headline's name, e.g. recall_any@k
    recall: float | None
    low: float | None
    high: float | None
    hits: int
    total: int
    k: int
    run_href: str
    caveats: list[Caveat] = field(default_factory=list)
    rank: int | None = None  # among the memories at its k
    tied: list[str] = field(default_factory=list)  # the other memories sharing its rank: a tie is never one leader
    tokens: float | None = None  # tokens per test point (what it spent)
    approx_tokens: bool = False  # counted by an estimate, not the exact tokenizer


@dataclass(frozen=True)
class FrontRow:
    benchmark: BenchmarkInfo
    leaders: list[LeaderView]  # one per corpus with a memory run that has a figure
    latest: str  # the date of its newest run
    ranked: list[LeaderView] = field(default_factory=list)  # its memories by k and rank, up to ten (the front page)
    more: int = 0  # memories not in ``ranked``
    ceilings: list[LeaderView] = field(default_factory=list)  # its ceilings with a figure, for scale (never ranked)


@dataclass(frozen=True)
class FrontPage(Page):
    """index.html: every benchmark with its leader, run count and license, each linking its own leaderboard."""

    template: ClassVar[str] = "front.html"

    rows: list[FrontRow]
    run_count: int


@dataclass(frozen=True)
class ConfigRow:
    """A configuration on a benchmark's page: where its history and its last comparison are."""

    config: ConfigInfo
    runs: int
    drops: int
    latest: str  # the date of its newest run
    compare_href: str  # its section of the compare page; "" with runs at one commit only


@dataclass(frozen=True)
class IndexPage(Page):
    """One benchmark's leaderboard (``leaderboard-<benchmark>.html``; the template keeps its first name,
    index.html, from when one page held every corpus)."""

    template: ClassVar[str] = "index.html"

    benchmark: BenchmarkInfo
    boards: list[CorpusBoard]
    run_count: int  # runs on this benchmark
    configs: list[ConfigRow] = field(default_factory=list)
    # On the front page of a store holding this benchmark alone (index.html): its row of the benchmarks table.
    front: list[FrontRow] = field(default_factory=list)


class LeaderboardPublisher(Publisher):
    """The front page (index.html: every benchmark, its leader, run count and license), each benchmark's
    own leaderboard, and every board's rows as leaderboard.json and leaderboard.csv."""

    name = "leaderboard"
    pages = (FrontPage, IndexPage)
    nav_label = "Leaderboard"
    nav_href = "index.html"
    nav_order = 10

    def publish(self, site: Site, output: Output) -> None:
        paths = site.paths
        boards = leaderboard(
            site.latest,
            paths,
            site.references,
            site.latency,
            site.errata,
            site.same_ranking,
            failed=site.failed,
            spread=spreads(site.summaries, site.latest),
        )
        infos = benchmark_infos(site)
        configs = _config_rows(site)
        latest = {s.run_id: s for s in site.latest}
        rows = []
        for key, info in infos.items():
            digests = {s.corpus_digest for s in site.summaries if paths.benchmark(s.corpus_digest) == key}
            own = [b for b in boards if b.corpus_digest in digests]
            output.page(
                site.env,
                info.href,
                IndexPage(
                    **site.frame(f"Leaderboard: {info.title}", self.name),
                    benchmark=info,
                    boards=own,
                    run_count=info.runs,
                    configs=[row for digest, row in configs if digest in digests],
                ),
            )
            memories = [
                _leader_view(board, row, latest)
                for board in own
                for row in board.rows
                if not row.ceiling and row.recall is not None
            ]
            rows.append(
                FrontRow(
                    benchmark=info,
                    leaders=[leader for board in own if (leader := _leader(board, latest)) is not None],
                    latest=max(s.date for s in site.summaries if s.corpus_digest in digests),
                    ranked=memories[:FRONT_RANKED],
                    more=max(0, len(memories) - FRONT_RANKED),
                    ceilings=[
                        _leader_view(board, row, latest)
                        for board in own
                        for row in board.rows
                        if row.ceiling and row.recall is not None
                    ],
                )
            )
        if len(infos) == 1:  # one benchmark: the front page is its leaderboard, with its row of the benchmarks table
            key, info = next(iter(infos.items()))
            digests = {s.corpus_digest for s in site.summaries if paths.benchmark(s.corpus_digest) == key}
            output.page(
                site.env,
                "index.html",
                IndexPage(
                    **site.frame(f"Leaderboard: {info.title}", self.name),
                    benchmark=info,
                    boards=[b for b in boards if b.corpus_digest in digests],
                    run_count=info.runs,
                    configs=[row for digest, row in configs if digest in digests],
                    front=rows,
                ),
            )
        else:
            output.page(
                site.env,
                "index.html",
                FrontPage(
                    **site.frame("Leaderboards", self.name),
                    rows=rows,
                    run_count=len(site.summaries),
                ),
            )
        records = leaderboard_records(boards, latest, paths, {f.run_id: f for f in site.failed})
        output.json("leaderboard.json", records)
        output.text("leaderboard.csv", leaderboard_csv(records))


FRONT_RANKED = 10  # memories a benchmark lists on the front page of a store with several


def _leader(board: CorpusBoard, latest: dict[str, RunSummary]) -> LeaderView | None:
    """The board's first memory with a figure (its rows are ranked by the headline; ceilings never lead)."""
    row = next((r for r in board.rows if not r.ceiling and r.recall is not None), None)
    if row is None:
        return None
    tied = [r.strategy for r in board.rows if r is not row and r.rank == row.rank and r.k == row.k and not r.ceiling]
    return dataclasses.replace(_leader_view(board, row, latest), tied=tied)


def _leader_view(board: CorpusBoard, row: BoardRow, latest: dict[str, RunSummary]) -> LeaderView:
    s = latest[row.run_id]
    return LeaderView(
        corpus_name=board.corpus_name,
        strategy=row.strategy,
        config_key=row.config_key,
        label=s.headline.rule.label,
        recall=row.recall,
        low=row.recall_low,
        high=row.recall_high,
        hits=row.hits,
        total=row.total,
        k=row.k,
        run_href=row.run_href,
        caveats=row.caveats,
        rank=row.rank,
        tokens=row.tokens,
        approx_tokens=row.approx_tokens,
    )


def _tie_notes(runs: list[RunSummary], same: dict[str, list[SameRanking]]) -> dict[str, str]:
    """run id -> its tie note: the first row of each group of runs returning the same top-k on every test point
    names the others, once for the group; each other member names the first."""
    names = dict(zip((s.run_id for s in runs), row_names(runs), strict=True))
    notes = {}
    for group in tie_groups(same, [s.run_id for s in runs]):
        first, *others = group
        notes[first] = f"= {', '.join(names[r] for r in others)}: the same top-k on every test point (one retriever)"
        notes |= {r: f"= {names[first]}" for r in others}
    return notes


def _config_rows(site: Site) -> list[tuple[str, ConfigRow]]:
    """Every configuration (corpus digest, row) with where its history and last comparison are."""
    out = []
    for cid in sorted(site.by_config, key=lambda c: config_order(site.by_config[c][0])):
        runs = site.by_config[cid]  # newest first
        oldest_first = list(reversed(runs))
        drops = sum(bool(drop_reason(a, b)) for a, b in zip(oldest_first, oldest_first[1:], strict=False))
        compared = any(r.commit != runs[0].commit for r in runs[1:])
        out.append(
            (
                cid[0],
                ConfigRow(
                    config=config_info(runs[0], site.paths),
                    runs=len(runs),
                    drops=drops,
                    latest=runs[0].date,
                    compare_href=site.paths.compare_section(*cid) if compared else "",
                ),
            )
        )
    return out


def leaderboard(
    latest: list[RunSummary],
    paths: Paths,
    references: dict[str, list[Reference]] | None = None,
    latency: dict[str, list[LatencyBucket]] | None = None,
    errata: Figures | None = None,
    same: dict[str, list[SameRanking]] | None = None,
    *,
    failed: Sequence[FailedRun] = (),
    spread: dict[str, Spread] | None = None,
) -> list[CorpusBoard]:
    """One board per corpus, ranked by its headline metric (evals.views.tables.headline); with ``references``
    (corpus digest -> published figures) and ``latency`` (run id -> retrieve latency by records held),
    the cutoff tables and the latency chart beside it; with ``same`` (evals.analysis.same_ranking), each row
    names the runs returning its top-k. ``failed`` (each configuration's failed latest attempt) are rows of their
    corpus's board saying ``failed: <reason>``, never ranked; ``spread`` (run id -> its configuration's repeated
    runs, :func:`evals.views.board_rows.spreads`) is said under the row's name."""
    references, latency, same, spread = references or {}, latency or {}, same or {}, spread or {}
    failures: dict[str, list[FailedRun]] = defaultdict(list)
    for failure in failed:
        failures[failure.corpus_digest].append(failure)
    by_corpus: dict[str, list[RunSummary]] = defaultdict(list)
    for summary in latest:
        by_corpus[summary.corpus_digest].append(summary)
    # The corpus with the newest run first: that is the one people are working on.
    order = sorted(by_corpus, key=lambda d: (-max(s.timestamp for s in by_corpus[d]).timestamp(), d))
    boards = []
    for digest in order:
        runs = board_order(by_corpus[digest])
        ranks = ranks_at_k(runs)
        published = references.get(digest, []) + claim_references(runs)  # the paper's figures, then makers' claims
        own = _own_figure(runs, published)
        reference = reference_run(runs)
        if reference is None:
            note = f"No {REFERENCE_STRATEGY} run on this corpus, so no relative cost."
        else:
            note = (
                f"Relative to {REFERENCE_STRATEGY} ({number(reference.tokens_per_test_point)} tokens per test point, "
                f"run {reference.run_id}); shown only where both runs count tokens the same way."
            )
        shown = board_metrics(runs)
        columns = [
            dataclasses.replace(metric_column(m), extra=n > 0 and m.name not in DEFAULT_METRICS) for n, m in enumerate(shown)
        ]
        ties = _tie_notes(runs, same)
        rows = []
        names = dict(zip((s.run_id for s in runs), row_names(runs), strict=True))
        for order_, s in enumerate(runs):
            head = s.headline
            rows.append(
                BoardRow(
                    run_id=s.run_id,
                    run_href=paths.run(s.run_id),
                    history_href=paths.history(*config_id(s)),
                    strategy=names[s.run_id],  # the library plus its non-default options (evals.views.names)
                    source=None if s.strategy_source in (None, "built-in") else s.strategy_source,
                    settings=settings_text(s.strategy_config),
                    config_key=s.config_key,
                    model=s.model,
                    k=s.k,
                    recall=head.recall,
                    recall_low=head.low,
                    recall_high=head.high,
                    metrics=[metric_cell(m, s) for m in shown],
                    hits=head.hits,
                    total=head.total,
                    tokens=s.tokens_per_test_point,
                    relative=relative_tokens(s, reference),
                    approx_tokens=is_estimated(s.tokenizer),
                    commit=s.commit,
                    commit_short=short_commit(s.commit),
                    dirty=s.dirty,
                    date=s.date,
                    answer_model=s.answer_model,
                    ceiling=ceiling(s),
                    caveats=caveats(s) + qa_caveats(s),
                    qa=qa_note(s),
                    twin=twin_note(s, runs),
                    with_errata=errata_view(errata.of(s.run_id)) if errata else None,
                    rank=ranks.get(s.run_id),
                    pick=paths.run_slug[s.run_id],
                    order=order_,
                    own=metric_cell_of(s.metric(f"{own[0]}.{own[1]}@{s.k}"), s) if own else None,
                    same_ranking=same_ranking_note(same.get(s.run_id, []), names),
                    tie=ties.get(s.run_id, ""),
                    spread=spread[s.run_id].text(percent) if s.run_id in spread else "",
                    marks=origin_marks(s.origin) + declared_marks(s.tuned_on, s.writes_with_llm),
                    tuned=bool(s.tuned_on),
                    writes_with_llm=bool(s.writes_with_llm),
                )
            )
        failed_rows = [
            FailedRow(
                run_id=f.run_id,
                strategy=failed_name(f),
                settings=settings_text(f.strategy_config),
                config_key=f.config_key,
                model=f.model,
                k=f.k,
                failed=f.failure,
                commit_short=short_commit(f.commit),
                dirty=f.dirty,
                date=f.date,
                marks=declared_marks(f.tuned_on, f.writes_with_llm),
                tuned=bool(f.tuned_on),
                writes_with_llm=bool(f.writes_with_llm),
            )
            for f in failures.get(digest, [])
        ]
        plotted = [r for r in rows if r.recall is not None and r.tokens is not None]
        any_approx = any(r.approx_tokens for r in plotted)
        chart = (
            cost_chart(
                [
                    CostPoint(
                        tokens=r.tokens,
                        recall=r.recall,
                        low=r.recall_low,
                        high=r.recall_high,
                        label=r.strategy + (" (hash)" if _hashed(r) and "hash" not in r.strategy.lower() else ""),
                        title=(
                            f"{r.strategy} {r.settings} k={r.k}: {runs[0].headline.rule.label} {percent(r.recall)} "
                            f"{percent_interval(r.recall_low, r.recall_high)}, {number(r.tokens)} tokens per test point"
                            + (" (estimated)" if r.approx_tokens else "")
                            + ("; hash embedder: no semantics" if _hashed(r) else "")
                        ),
                        href=r.run_href,
                        ceiling=bool(r.ceiling),
                    )
                    for r in plotted
                ],
                title=f"{runs[0].headline.rule.label} against tokens per test point on {runs[0].corpus_name}",
                y_label=runs[0].headline.rule.label,
                tokens_label="tokens per test point (log scale)" + (", some estimated" if any_approx else ""),
                notes=["hash: Mneme with the hash embedder, which has no semantics (its row says more)."]
                if any(_hashed(r) for r in plotted)
                else [],
            )
            if plotted
            else None
        )
        boards.append(
            CorpusBoard(
                anchor=f"corpus-{digest[:10]}",
                corpus_name=runs[0].corpus_name,
                corpus_digest=digest,
                corpus_digest_short=digest[:10],
                columns=columns,
                rows=rows,
                chart=chart,
                unplotted=[r.strategy for r in rows if r not in plotted],
                reference=REFERENCE_STRATEGY,
                relative_note=note,
                answers=any(r.answer_model is not None for r in rows),
                retrieval=cutoff_tables([(names[s.run_id], paths.run(s.run_id), s) for s in runs], published),
                latency_chart=latency_chart(
                    [(names[s.run_id], paths.run(s.run_id), latency.get(s.run_id, [])) for s in runs],
                    f"Retrieve latency against memory size on {runs[0].corpus_name}",
                ),
                errata=errata_note(errata.errata[digest]) if errata and digest in errata.errata else "",
                ks=sorted({r.k for r in rows if not r.ceiling}),
                own_label=_own_label(own) if own else "",
                headline_note=(
                    ("not the paper's fraction" if own[1] == "recall_frac" else f"not the paper's {_own_label(own)}")
                    if own and (own[0], own[1]) != ("turn", "recall_any")
                    else ""
                ),
                own_description=(
                    f"The benchmark's own retrieval figure: {own[1]}@k at {own[0]} level, at the run's k, as its paper "
                    "reports it (the greyed rows); a mean over the test points with evidence."
                    if own
                    else ""
                ),
                references=[
                    ReferenceRow(r.label, r.note or r.citation, r.k, r.value)
                    for r in published
                    if own and (r.level, r.metric) == own
                ],
                pairs=[
                    (f"{a.strategy} vs {b.strategy}", pair_href(paths, a.run_id, b.run_id))
                    for i, a in enumerate(rows)
                    for b in rows[i + 1 :]
                ],
                claims=claim_rows(runs, paths),
                failed=failed_rows,
                declared=any(r.tuned or r.writes_with_llm for r in [*rows, *failed_rows]),
            )
        )
    return boards


# The leaderboard's default columns besides the identity (strategy, k, model, commit, date): the headline,
# the benchmark's own figure, tokens per test point, what the memory costs to run (ingestion CPU per 1,000 turns,
# retrieve latency p50 and p95 at the run's k, peak resident memory) and, on a board with answers, answer
# accuracy. The rest are behind one toggle ("every column"), so a LoCoMo board fits 1280 px.
DEFAULT_METRICS = (
    "tokens_per_test_point",
    "ingest_cpu_s_per_1k_turns",
    "retrieve_latency_p50_s",
    "retrieve_latency_p95_s",
    "peak_rss_mb",
    "answer_accuracy",
)


def _own_label(own: tuple[str, str]) -> str:
    """The benchmark's own figure as a column heading: ``recall_frac@k``, ``recall_any@k (session)``."""
    level, metric = own
    return f"{metric}@k" + ("" if level == "turn" else f" ({level})")


def _own_figure(runs: list[RunSummary], references: list[Reference]) -> tuple[str, str] | None:
    """The (level, metric) of the retrieval figure the benchmark's paper publishes (its first reference) that
    the runs have at their own k, e.g. LoCoMo's ("turn", "recall_frac"); None when it publishes none."""
    for reference in references:
        if any(s.metric(f"{reference.level}.{reference.metric}@{s.k}") is not None for s in runs):
            return reference.level, reference.metric
    return None


def _hashed(row: BoardRow) -> bool:
    return any(c.kind == HASH_EMBEDDER for c in row.caveats)


def metric_cell_of(value: Any, summary: RunSummary) -> MetricCell:
    """A value of a metric that is not a column (a cutoff metric at the run's own k) as a cell."""
    if value is None:
        return MetricCell(present=False, value=None)
    return MetricCell(present=True, value=value.value, low=value.low, high=value.high, n=value.n)


def metric_cell(declared: Metric, summary: RunSummary) -> MetricCell:
    value = summary.metric(declared.name)
    if value is None:
        return MetricCell(present=False, value=None)
    approx = declared.kind == TOKENS and not declared.answers and is_estimated(summary.tokenizer)  # LLM tokens are the endpoint's
    return MetricCell(present=True, value=value.value, low=value.low, high=value.high, approx=approx, n=value.n)


def metric_column(declared: Metric) -> MetricColumn:
    integral = declared.kind in (COUNT, TOKENS) and (declared.name.endswith("_max") or declared.name in WHOLE_COUNTS)
    description = metric_description(declared.name, declared.description)
    return MetricColumn(declared.name, declared.label, description, declared.kind, declared.higher_is_better, integral)


KEYWORD_FIELD = "keyword_hit_at_k"  # keyword recall's name in the downloads: not "recall", which the headline is


def leaderboard_records(
    boards: list[CorpusBoard],
    latest: dict[str, RunSummary],
    paths: Paths | None = None,
    failed: dict[str, FailedRun] | None = None,
) -> list[dict[str, Any]]:
    """The rows of leaderboard.csv and leaderboard.json, board by board: the run's identity (with
    ``paths``, the benchmark it is shown under first), its headline (``hits``/``total`` are the headline's),
    then for each declared metric its value, n and (for proportions and means) interval. Keyword recall, the
    original harness's recall@k, goes by a name that cannot be read as evidence recall: ``keyword_hit_at_k``
    (with ``_hits``, ``_total``, ``_n``, ``_low``, ``_high``). Then each run's ``spread`` (``"3 runs: 0.612–0.627"``,
    null for a configuration run once), its ``origin`` (``submitted``, ``reproduced``, or null for the harness's own
    run: evals.judge.origin), its declared ``tuned_on`` and ``writes_with_llm``, and ``failed`` (null); each
    board's failed rows (``failed``: ``failed: <reason>``, every figure null) follow its runs, given ``failed`` (run id ->
    the failed run)."""
    out = []
    failed = failed or {}
    for board in boards:
        for row in board.rows:
            s = latest[row.run_id]
            record: dict[str, Any] = {"benchmark": paths.benchmark(s.corpus_digest)} if paths is not None else {}
            record |= {
                "corpus_name": s.corpus_name,
                "corpus_digest": s.corpus_digest,
                "name": row.strategy,  # the row's name: the library plus its non-default options
                "strategy": s.strategy,
                "strategy_config": s.strategy_config,
                "config_key": s.config_key,
                "model": s.model,
                "k": s.k,
                "rank": row.rank,  # among the memories of this benchmark's corpus at the same k; null for a ceiling
                "hits": s.headline.hits,
                "total": s.headline.total,
                **{f"headline_{key}": value for key, value in s.headline.as_dict().items()},
            }
            for declared in METRICS.values():
                value = s.metric(declared.name)
                field = KEYWORD_FIELD if declared.name == KEYWORD.metric else declared.name
                record[field] = value.value if value else None
                if declared.name == KEYWORD.metric:
                    record[f"{field}_hits"] = (value.successes or 0) if value else None
                    record[f"{field}_total"] = value.n if value else None
                record[f"{field}_n"] = value.n if value else None
                if declared.kind in (PROPORTION, MEAN):
                    record[f"{field}_low"] = value.low if value else None
                    record[f"{field}_high"] = value.high if value else None
            record |= {
                f"tokens_relative_to_{REFERENCE_STRATEGY}": row.relative,
                "tokenizer": s.tokenizer,
                "answer_model": s.answer_model,
                "judge_model": s.judge_model,
                "commit": s.commit,
                "dirty": s.dirty,
                "date": s.date,
                "timestamp": s.timestamp.isoformat(),
                "run_id": s.run_id,
            }
            if any(b.errata for b in boards):  # every record the same keys, for the CSV
                shown = row.with_errata
                record |= {
                    f"headline_with_errata_{key}": getattr(shown, name) if shown and shown.recall is not None else None
                    for key, name in (("value", "recall"), ("hits", "hits"), ("total", "total"), ("low", "low"), ("high", "high"))
                }
                record["errata"] = board.errata or None
            record |= {
                "spread": row.spread or None,
                "origin": s.origin["mark"] if s.origin else None,
                "tuned_on": s.tuned_on,
                "writes_with_llm": s.writes_with_llm,
                "failed": None,
            }
            out.append(record)
        template = out[-1] if out else None
        for row in board.failed:
            f = failed.get(row.run_id)
            if f is None or template is None:
                continue
            record = dict.fromkeys(template)  # the same keys as every row (the CSV's columns), every figure null
            record |= {
                "corpus_name": f.corpus_name,
                "corpus_digest": f.corpus_digest,
                "name": row.strategy,
                "strategy": f.strategy,
                "strategy_config": f.strategy_config,
                "config_key": f.config_key,
                "model": f.model,
                "k": f.k,
                "commit": f.commit,
                "dirty": f.dirty,
                "date": f.date,
                "timestamp": f.timestamp.isoformat(),
                "run_id": f.run_id,
                "tuned_on": f.tuned_on,
                "writes_with_llm": f.writes_with_llm,
                "failed": f.failure,
            }
            if paths is not None:
                record["benchmark"] = paths.benchmark(f.corpus_digest)
            out.append(record)
    return out


def leaderboard_csv(records: list[dict[str, Any]]) -> str:
    columns = list(records[0]) if records else ["corpus_name", "strategy", KEYWORD_FIELD, "run_id"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        cells = []
        for column in columns:
            value = record[column]
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                cells.append("")
            elif isinstance(value, dict):
                cells.append(json_text(value, sort_keys=True))
            elif isinstance(value, bool):
                cells.append("true" if value else "false")
            else:
                cells.append(str(csv_cell(value)))
        writer.writerow(cells)
    return buffer.getvalue()


def claim_rows(runs: Sequence[RunSummary], paths: Paths) -> list[ClaimRow]:
    """The claims on the board of one corpus's latest ``runs``, each with the run beside it where one measures
    the same figure the same way."""
    rows = []
    warning = source_warning(runs)
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
                note="; ".join(filter(None, (f"warning: {warning}" if warning else "", c.note or ""))),
                run_label=view.run_label,
                run_href=paths.run(view.run_id) if view.run_id else "",
                run_value=view.run_value,
                difference=view.difference,
                difference_points=view.difference_points,
                why_not=view.why_not,
                retrieval=c.level is not None,
            )
        )
    return rows
