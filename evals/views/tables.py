"""Runs as rows: the tables ``evals runs`` and ``evals leaderboard`` print, and their JSON and CSV.

The metric columns come from the declarations in :mod:`evals.judge.metrics`: a
metric appears wherever some run in the table has a value for it (so answer
accuracy shows only beside runs with answers), in declaration order, as
"value [95% interval]" for proportions and for means that carry one. "—" is a metric the run does not
have (not measured, or stored before it was); "null", one it has without
data (no test point).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evals.benchmarks import category_notes, protocol_lexical
from evals.errors import EvalsError
from evals.judge.ceilings import ceiling
from evals.judge.headline import KEYWORD
from evals.judge.metrics import (
    HEADLINE,
    MEAN,
    METRICS,
    PROPORTION,
    RETRIEVAL,
    SECONDS,
    TOKENS,
    USD,
    Metric,
    MetricValue,
    ScoredRun,
    cost_values,
    declared,
    metric_order,
    point_values,
    repeat_stats,
)
from evals.judge.origin import EXPLANATIONS, REPRODUCED, SUBMITTED
from evals.model import costs, formatting
from evals.model.corpus import MAX_CUTOFF
from evals.model.tokens import EXACT
from evals.store import FailedRun, RunSummary, StoredRun
from evals.strategies.embedders import HASH_CAVEAT, recorded_embedder
from evals.views.board_rows import Spread, failed_name, failed_record, origin_marks
from evals.views.breakdown import answer_category_rows, category_rows
from evals.views.names import row_name, row_names

if TYPE_CHECKING:
    from evals.analysis.errata import ErrataFigure, Figures

__all__ = [
    "APPROX_NOTE",
    "Table",
    "category_table",
    "commit_text",
    "CEILING",
    "HASH_EMBEDDER",
    "Caveat",
    "board_metrics",
    "caveats",
    "compact_leaderboard",
    "hash_caveat",
    "headline",
    "KIND_LABELS",
    "leaderboard_metric",
    "price_text",
    "repeats_line",
    "repriced",
    "served_caveat",
    "SERVED_MODEL",
    "usage_lines",
    "measured_somewhere",
    "ranked",
    "metric_text",
    "number_text",
    "qa_figure",
    "summaries_csv",
    "summaries_json",
    "summary_table",
]

APPROX_NOTE = "~ tokens estimated at ~4 characters per token (cl100k_base was not available)"
MISSING = formatting.DASH  # the run has no such value (not measured, or stored before it was)
NULL = formatting.NULL  # measured, without data


def number_text(value: float | None, digits: int = 3) -> str:
    return formatting.decimal(value, digits, empty=NULL)


def commit_text(summary: RunSummary) -> str:
    return formatting.commit_text(summary.commit, summary.dirty)


def metric_text(declared: Metric, value: MetricValue | None, tokenizer: str) -> str:
    """One metric of one run as a table cell: "—" when the run lacks it, "null" when it has no data."""
    if value is None:
        return MISSING
    if declared.kind == TOKENS:
        # An LLM's tokens are the endpoint's own counts, never the ~4-characters estimate of context tokens.
        return formatting.tokens(value.value, EXACT if declared.answers else tokenizer, empty=NULL)
    if declared.kind == USD:
        return formatting.usd(value.value, empty=NULL)
    if declared.kind == SECONDS:
        return formatting.milliseconds(value.value, empty=NULL)
    if declared.kind in (PROPORTION, MEAN):  # a mean shows its (bootstrap) interval where it has one
        return formatting.with_interval(value.value, value.low, value.high, empty=NULL)
    if declared.name in WHOLE_COUNTS:
        return formatting.number(value.value, digits=0, empty=NULL)
    return formatting.decimal(value.value, empty=NULL)


# Counts that are whole numbers at every run (a peak in whole MB), shown without decimals.
WHOLE_COUNTS = frozenset({"peak_rss_mb"})


def shown_metrics(summaries: Sequence[RunSummary], names: Iterable[str] | None = None) -> list[Metric]:
    """The declared metrics (or those of ``names``) to show for ``summaries``: every one that is
    not optional, and the optional ones (answers, evidence) that some run has."""
    wanted = [declared(n) for n in ([n for n, m in METRICS.items() if m.leaderboard] if names is None else names)]
    return [m for m in wanted if m is not None and (not m.optional or any(s.metric(m.name) is not None for s in summaries))]


def leaderboard_metric(name: str) -> Metric:
    """The metric ``evals leaderboard --metric`` names: a declared one, or ``[LEVEL.]NAME@K`` of the
    retrieval metrics (``recall_frac@25``, ``session.recall_all@k``); an EvalsError says what exists."""
    found = declared(name)
    if found is None:
        retrieval = ", ".join(RETRIEVAL)
        raise EvalsError(
            f"unknown metric {name!r}: name a declared metric ({', '.join(METRICS)}) or [turn.|session.]NAME@K "
            f"with NAME one of {retrieval} and K a cutoff or k (e.g. recall_frac@25, session.recall_all@k)"
        )
    if found.cutoff is not None and not 1 <= found.cutoff <= MAX_CUTOFF:
        raise EvalsError(f"metric {name!r}: K is k or a cutoff from 1 to {MAX_CUTOFF}")
    return found


def measured_somewhere(metric: Metric, summaries: Sequence[RunSummary]) -> None:
    """Refuses to rank by ``metric`` when no run in ``summaries`` has it (a cutoff no run was measured
    at, answers no run made): its column would be left out and the rows ranked by tokens, silently."""
    if not summaries or any(s.metric(metric.name) is not None for s in summaries):
        return
    problem = f"no run in the store has {metric.name}"
    cutoffs = sorted({c for s in summaries for c in s.cutoffs})
    if metric.cutoff is not None and cutoffs:
        problem += f"; its runs were measured at cutoffs {', '.join(map(str, cutoffs))} (evals run --cutoffs adds others)"
    raise EvalsError(problem)


def headline(summaries: Sequence[RunSummary]) -> str:
    """The metric a corpus's rows are ranked by: its headline rule's (evals.judge.headline), which every run on
    one corpus shares; the run that has evidence metrics decides, should an old one lack them."""
    rules = [s.headline.rule for s in summaries]
    return next((r.metric for r in rules if r.by_evidence), KEYWORD.metric)


def board_metrics(summaries: Sequence[RunSummary]) -> list[Metric]:
    """The leaderboard's metric columns for one corpus: the headline first, then the others some run has
    (less turn.recall_any@k where the headline is its answerable twin, which would read as a second figure)."""
    first = headline(summaries)
    rest = [
        m for m in shown_metrics(summaries) if m.name != first and not (first == "evidence_recall_any" and m.name == HEADLINE)
    ]
    return [declared(first), *rest]  # type: ignore[list-item]


# What a reader must know before trusting a run's figure, decided here once from what the store
# recorded; the CLI's tables, the Markdown tables and every page of the site (leaderboard rows, cutoff
# tables, charts, run pages, drill-downs, history, compare) read it.
#
# Which runs are ceilings is the judge's rule (evals.judge.ceilings), asked here for the caveat and the board order.

# An embedder whose runs carry a caveat (the hash embedder: no semantics) says so in the embedder table
# (evals.strategies.embedders.EMBEDDERS), read here by the model a run recorded.
HASH_LABEL = HASH_CAVEAT.label
# A run whose endpoint said another model answered than the one asked for (evals.model.costs.same_model: a
# dated snapshot of the undated name asked is the same model): its figures are that other model's.
SERVED_LABEL = "served model differs"
CEILING, HASH_EMBEDDER, SERVED_MODEL = "ceiling", "hash_embedder", "served_model"  # the kinds of Caveat
# Fair play: a k that reaches every session of a conversation bypasses retrieval; a strategy that
# returned more records than asked for was cut to the depth asked (records past k are never scored).
K_REACHES_ALL, OVER_K = "k_reaches_all", "over_k"


@dataclass(frozen=True)
class Caveat:
    """One caveat of a run: its ``kind`` (CEILING or HASH_EMBEDDER), a short ``label`` for a badge, the
    ``explanation`` a reader opens."""

    kind: str  # CEILING, HASH_EMBEDDER or SERVED_MODEL
    label: str
    explanation: str


def hash_caveat(summary: RunSummary) -> str:
    """Why a run's embedder makes its figure say nothing about retrieval quality (Mneme's hash embedder), from the
    embedder table's caveat; "" for any other run."""
    kind = recorded_embedder(summary.model, summary.strategy_config.get("embedder"))
    return kind.caveat.explanation if kind is not None and kind.caveat is not None else ""


def served_caveat(summary: RunSummary) -> str:
    """What the endpoint served instead of the models asked for ("" when it served them, or did not say)."""
    found = costs.served_elsewhere(summary.llm_usage or {})
    if not found:
        return ""
    parts = [
        f"{KIND_LABELS.get(kind, kind)} requests asked for {asked} were answered by {served} ({n} of {total})"
        for kind, asked, served, n, total in found
    ]
    return (
        "The endpoint's replies name another model than the one asked for (a dated snapshot of the name asked counts as "
        f"the same): {'; '.join(parts)}. The figures are that model's."
    )


def caveats(summary: RunSummary) -> list[Caveat]:
    """Every caveat of the run, ceiling first; [] for most runs."""
    out = []
    if reason := ceiling(summary):
        out.append(Caveat(CEILING, "ceiling", reason))
    if why := hash_caveat(summary):
        out.append(Caveat(HASH_EMBEDDER, HASH_LABEL, why))
    if why := served_caveat(summary):
        out.append(Caveat(SERVED_MODEL, SERVED_LABEL, why))
    if why := reach_caveat(summary):
        found = summary.metrics["points_returning_all"]
        out.append(Caveat(K_REACHES_ALL, f"returns all at {round(found.value):,} of {found.n:,}", why))
    if why := over_k_caveat(summary):
        out.append(Caveat(OVER_K, "returned more than k", why))
    return out


def reach_caveat(summary: RunSummary) -> str:
    """Why this run's figure says little about retrieval at some test points ("" at none, for a ceiling, or
    where it was not counted): the points where the memory returned every record it held."""
    found = (getattr(summary, "metrics", None) or {}).get("points_returning_all")
    if found is None or not found.value or ceiling(summary):
        return ""
    return (
        f"At {round(found.value):,} of its {found.n:,} test points the memory returned every record it held (k={summary.k} "
        "records or fewer): there retrieval chose nothing, so the figure says little about the memory."
    )


def over_k_caveat(summary: RunSummary) -> str:
    """How often the strategy returned more records than asked for ("" never, or not counted)."""
    found = (getattr(summary, "metrics", None) or {}).get("retrievals_over_k")
    if found is None or not found.value:
        return ""
    calls = f" of {found.n}" if found.n else ""
    return (
        f"{round(found.value)}{calls} retrievals returned more records than asked for; each was cut to the depth asked, "
        "and records past k are never scored."
    )


# -- costs of the LLM requests (evals.model.costs) ------------------------------------------------------------------

KIND_LABELS = {"answer": "answer", "judge": "judge", "memory_write": "memory-write"}


def price_text(price: dict[str, Any] | None) -> str:
    if price is None:
        return "no price"
    dated = f", {price['date']}" if price.get("date") else ""
    return f"${price['input']:g} in / ${price['output']:g} out per 1M ({price['source']}{dated})"


def usage_lines(usage: dict[str, Any], correct: int | None) -> list[str]:
    """What ``evals run`` says of a run's LLM requests: per kind, sent vs from the cache and the tokens of
    each over its denominator; then dollars spent and per correct answer, and any model served instead."""
    from evals.model.results import PER

    lines = []
    for kind, t in usage.items():
        if kind == "memory_write" and not t["sent"] + t["cached"]:
            continue  # a strategy that writes no summary: nothing to say (the tally, zero, is stored)
        tokens = t["prompt_tokens"] + t["completion_tokens"] + t["cached_prompt_tokens"] + t["cached_completion_tokens"]
        per = (
            f"{tokens / t['per']:,.1f} tokens per {PER.get(kind, 'unit')} ({t['per']})"
            if t["per"]
            else f"no {PER.get(kind, 'unit')}"
        )
        lines.append(
            f"llm {KIND_LABELS.get(kind, kind)} ({t['model']}): {t['sent']} sent ({t['prompt_tokens']:,} prompt + "
            f"{t['completion_tokens']:,} completion tokens), {t['cached']} from cache ({t['cached_prompt_tokens']:,} + "
            f"{t['cached_completion_tokens']:,}); {per}"
        )
    if not usage:
        return lines
    values = cost_values(usage, correct)
    spent, per_correct = values["usd_spent"], values["usd_per_correct"]
    line = (
        f"llm $: {formatting.usd(spent.value) if spent is not None else 'unknown'} spent "
        "(requests sent; the cache's replies cost nothing)"
    )
    if per_correct is not None:
        line += f", {formatting.usd(per_correct.value, empty=NULL)} per correct answer (answers and memory writes at list price)"
    lines.append(line)
    prices = {t["model"]: t.get("price") for t in usage.values()}
    lines.append("llm prices: " + "; ".join(f"{model} {price_text(price)}" for model, price in prices.items()))
    missing = costs.unpriced(usage)
    if missing:
        lines.append(f"llm: no price for {', '.join(missing)}: give one with --prices FILE (docs/cli.md) for a $ figure")
    for kind, asked, served, n, total in costs.served_elsewhere(usage):
        lines.append(
            f"warning: {KIND_LABELS.get(kind, kind)} requests asked for {asked} were answered by {served} ({n} of {total})"
        )
    return lines


def repeats_line(accuracies: list[float]) -> str:
    """--judge-repeats: accuracy's mean ± sd over the repeats, and each repeat's."""
    mean, sd = repeat_stats(accuracies)
    each = ", ".join(f"{a:.3f}" for a in accuracies)
    return (
        f"llm judge repeats: accuracy {mean:.3f} ± {sd:.3f} (mean ± sd over {len(accuracies)} repeats: {each}); "
        "each point's verdict is repeat 0's"
    )


def repriced(summaries: Sequence[RunSummary], table: costs.PriceTable) -> list[RunSummary]:
    """``summaries`` with every run's LLM requests costed at ``table`` instead of the prices recorded with
    it (``--prices``): one table for every row, so their dollars compare."""
    out = []
    for s in summaries:
        if s.llm_usage is None:
            out.append(s)
            continue
        usage = costs.priced_usage(s.llm_usage, table)
        values = cost_values(usage, s.answers_correct if s.judge_model is not None else None)
        metrics = {name: value for name, value in s.metrics.items() if name not in values}
        metrics |= {name: value for name, value in values.items() if value is not None}
        out.append(
            dataclasses.replace(s, llm_usage=usage, metrics=dict(sorted(metrics.items(), key=lambda item: metric_order(item[0]))))
        )
    return out


def board_order(summaries: Sequence[RunSummary], metric: str | None = None) -> list[RunSummary]:
    """One corpus's runs as its leaderboard lists them (the site's and `evals leaderboard`'s): the memories grouped
    by k (smallest first), each group ranked by ``metric`` (default the headline, :func:`ranked`), then the
    ceilings, which are never ranked."""
    order = ranked(summaries, metric)
    memories = [s for s in order if not ceiling(s)]
    return [s for k in sorted({s.k for s in memories}) for s in memories if s.k == k] + [s for s in order if ceiling(s)]


def ranks_at_k(runs: Sequence[RunSummary], metric: str | None = None) -> dict[str, int]:
    """Each memory's rank among the memories at its k (``runs`` in board order); ceilings and runs without a
    figure have none (``rank`` null in leaderboard.json and `evals leaderboard --format json`).

    Ties share a rank, as in sport: memories with the same figure are all ranked 1 + the number of memories
    at their k with a better one (1, 2, 2, 4). Memories returning the same top-k are tied by construction;
    a board that ranked them 1 to 6 would order them by a tie-break that says nothing about memory."""
    ranks: dict[str, int] = {}
    counted: dict[int, int] = {}
    last: dict[int, tuple[float, int]] = {}  # k -> (the previous memory's figure, its rank)
    for s in runs:
        value = s.headline.recall if metric is None else (s.metric(metric).value if s.metric(metric) else None)
        if ceiling(s) or value is None:
            continue
        counted[s.k] = counted.get(s.k, 0) + 1
        previous = last.get(s.k)
        rank = previous[1] if previous is not None and previous[0] == value else counted[s.k]
        ranks[s.run_id] = rank
        last[s.k] = (value, rank)
    return ranks


def boards(summaries: Sequence[RunSummary], metric: str | None = None) -> tuple[list[RunSummary], dict[str, int]]:
    """Every corpus's runs in :func:`board_order` (corpora keep their order) and each memory's rank at its k."""
    corpora: dict[str, list[RunSummary]] = {}
    for summary in summaries:
        corpora.setdefault(summary.corpus_digest, []).append(summary)
    out: list[RunSummary] = []
    ranks: dict[str, int] = {}
    for group in corpora.values():
        order = board_order(group, metric)
        out.extend(order)
        ranks |= ranks_at_k(order, metric)
    return out, ranks


def ranked(summaries: Sequence[RunSummary], metric: str | None = None) -> list[RunSummary]:
    """``summaries`` ranked within each corpus by ``metric`` (default: its :func:`headline`), best first,
    runs without a value last, then fewest tokens per test point; corpora keep their order."""
    corpora: dict[str, list[RunSummary]] = {}
    for summary in summaries:
        corpora.setdefault(summary.corpus_digest, []).append(summary)
    out: list[RunSummary] = []
    for group in corpora.values():
        name = metric or headline(group)
        better = declared(name).higher_is_better if declared(name) else True

        def key(s: RunSummary, name: str = name, better: bool = better) -> tuple:
            value = s.metric(name)
            number = value.value if value is not None else None
            tokens = s.tokens_per_test_point
            return (
                number is None,
                0.0 if number is None else (-number if better else number),
                math.inf if tokens is None else tokens,
                s.config_key,
            )

        out.extend(sorted(group, key=key))
    return out


_IDENTITY: dict[str, Callable[[RunSummary], str]] = {
    "run": lambda s: s.run_id,
    "date": lambda s: s.date,
    "commit": commit_text,
    "strategy": row_name,  # the library plus its non-default options (evals.views.names)
    "config": lambda s: s.config_key,
    "model": lambda s: s.model,
    "k": lambda s: str(s.k),
    "corpus": lambda s: s.corpus_name,
    "hits": lambda s: f"{s.headline.hits}/{s.headline.total}",
    "headline": lambda s: (
        f"{s.headline.rule.label} " + formatting.with_interval(s.headline.recall, s.headline.low, s.headline.high, empty=NULL)
    ),
    # Embeddings the run computed / took from the cache; "—" without a cache (or stored before it was counted).
    "emb new/cached": lambda s: MISSING if s.cache_misses is None else f"{s.cache_misses}/{s.cache_hits}",
    # Whether the endpoint served the models asked for (answers only): "as asked", or the first one it served instead.
    "llm served": lambda s: _served_text(s),
}


def _served_text(summary: RunSummary) -> str:
    if summary.llm_usage is None:
        return MISSING
    found = costs.served_elsewhere(summary.llm_usage)
    if not found:
        return "as asked"
    _, _, served, n, total = found[0]
    return formatting.clip_text(f"{served} ({n}/{total})", 28) + (" +" if len(found) > 1 else "")


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    notes: list[str]

    def text(self) -> str:
        """Left-aligned columns, as wide as their widest cell; control characters in a cell are
        written as escapes (a corpus named with a terminal escape is shown, not acted on)."""
        cells = [[formatting.printable(cell) for cell in line] for line in [self.header, *self.rows]]
        widths = [max(len(line[i]) for line in cells) for i in range(len(self.header))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in cells]
        return "\n".join([*lines, *self.notes]) + "\n"


def summary_table(
    summaries: Sequence[RunSummary],
    before: Sequence[str],
    after: Sequence[str] = (),
    metrics: Iterable[str] | None = None,
    errata: Figures | None = None,
    failures: Sequence[FailedRun] = (),
) -> Table:
    """Identity columns ``before``, then the metric columns, then identity columns ``after``; with
    ``errata``, the headline with errata and its hits after the identity columns ``before``. ``failures``
    (failed runs) are rows too, newest first among the runs: their headline cell says ``failed: <reason>``,
    every figure of theirs "—"."""
    shown = shown_metrics(summaries, metrics)
    extra = ["with errata [95% CI]", "errata hits"] if errata else []
    header = [*before, *extra, *(m.label for m in shown), *after]
    rows = [
        (
            s.timestamp,
            [
                *(_IDENTITY[c](s) for c in before),
                *(errata_cells(errata.of(s.run_id)) if errata else []),
                *(metric_text(m, s.metric(m.name), s.tokenizer) for m in shown),
                *(_IDENTITY[c](s) for c in after),
            ],
        )
        for s in summaries
    ]
    for f in failures:
        cells = [
            *(_failed_cell(c, f) for c in before),
            *([MISSING, MISSING] if errata else []),
            *(MISSING for _ in shown),
            *(_failed_cell(c, f) for c in after),
        ]
        if "headline" not in before and "headline" not in after:  # the failure where its first figure would be
            at = len(before) + len(extra) if shown else max(len(before) - 1, 0)
            cells[at] = formatting.clip_text(f.failure, 70)
        rows.append((f.timestamp, cells))
    if failures:
        rows.sort(key=lambda row: row[0], reverse=True)
    notes = [APPROX_NOTE] if any(s.tokenizer != EXACT for s in summaries) else []
    return Table(header, [cells for _, cells in rows], notes + (errata_notes(errata) if errata else []))


_FAILED_IDENTITY: dict[str, Callable[[FailedRun], str]] = {
    "run": lambda f: f.run_id,
    "date": lambda f: f.date,
    "commit": lambda f: formatting.commit_text(f.commit, f.dirty),
    "strategy": failed_name,
    "config": lambda f: f.config_key,
    "model": lambda f: f.model,
    "k": lambda f: str(f.k),
    "corpus": lambda f: f.corpus_name,
    "headline": lambda f: formatting.clip_text(f.failure, 70),
}


def _failed_cell(column: str, failed: FailedRun) -> str:
    """A failed run's cell of an identity column ("—" where it has nothing: hits, the cache's counts)."""
    found = _FAILED_IDENTITY.get(column)
    return found(failed) if found is not None else MISSING


def errata_cells(figure: ErrataFigure | None) -> list[str]:
    """A run's headline with errata and its hits / total ("—" on a corpus without errata, or where it cannot be computed)."""
    if figure is None or figure.value is None:
        return [MISSING, MISSING]
    head = figure.headline
    return [formatting.with_interval(head.recall, head.low, head.high, empty=NULL), f"{head.hits}/{head.total}"]


def errata_notes(figures: Figures, digest: str | None = None) -> list[str]:
    """What the figures with errata are recorded by (of one corpus, or of all), and why any is missing."""
    notes = [
        f"with errata ({digest_[:12]}): {errata.describe()}; a second figure beside the published one, which is unchanged"
        for digest_, errata in figures.errata.items()
        if digest is None or digest_ == digest
    ]
    problems = {
        f"{f.run_id}: {f.problem}" for f in figures.runs.values() if f.problem and (digest is None or f.corpus_digest == digest)
    }
    return notes + [f"no figure with errata for run {problem}" for problem in sorted(problems)]


# Who ran a run (evals.judge.origin), as the table's name column marks it; the harness's own runs carry none.
ORIGIN_SIGNS = {REPRODUCED: "↺", SUBMITTED: "‡"}


def compact_leaderboard(
    summaries: Sequence[RunSummary],
    errata: Figures | None = None,
    ranks: dict[str, int] | None = None,
    failures: Sequence[FailedRun] = (),
    spread: dict[str, Spread] | None = None,
) -> str:
    """The leaderboard in under 100 columns: per corpus, its headline rule, then one line per configuration
    with the headline, its interval and count, keyword recall where evidence leads, and tokens per test point;
    with ``errata``, on a corpus they correct, the headline with errata and its count beside the published one.
    With ``ranks`` (:func:`boards`: runs in board order), a blank line between the memories at one k and the
    next, and before the ceilings, which are never ranked: the site's leaderboard, in lines. ``failures`` (each
    configuration's failed latest attempt) follow their corpus's runs, one line each saying ``failed: <reason>``,
    never ranked; ``spread`` (:func:`evals.views.board_rows.spreads`) adds a column where a configuration has several
    runs on the corpus at its k."""
    corpora: dict[str, list[RunSummary]] = {}
    for summary in summaries:
        corpora.setdefault(summary.corpus_digest, []).append(summary)
    failed: dict[str, list[FailedRun]] = {}
    for failure in failures:
        failed.setdefault(failure.corpus_digest, []).append(failure)
    spread = spread or {}
    out: list[str] = []
    marks: set[str] = set()
    for digest in [d for d in failed if d not in corpora]:  # a corpus whose every configuration failed
        out.extend(_failed_lines(failed[digest], f"corpus {failed[digest][0].corpus_name} ({digest[:12]})"))
    for group in corpora.values():
        rule = group[0].headline.rule
        keyword = rule.by_evidence  # keyword recall is then shown beside the headline
        label = rule.label
        about = f"corpus {group[0].corpus_name} ({group[0].corpus_digest[:12]}), ranked by {label} over {rule.population}"
        out.extend(textwrap.wrap(formatting.printable(about), 99, subsequent_indent="  "))
        corrected = errata is not None and group[0].corpus_digest in errata.errata
        if corrected:
            for note in errata_notes(errata, group[0].corpus_digest):  # type: ignore[union-attr]
                out.extend(textwrap.wrap(formatting.printable(note), 99, initial_indent="  ", subsequent_indent="    "))
        answers = any(qa_figure(s) is not None for s in group)
        header = [
            "strategy", "model", "k", f"{label} [95% CI]", "hits",
            *(["with errata", "hits"] if corrected else []),
            *(["kw recall"] if keyword else []), "tokens/tp", *(["answer accuracy [95% CI]", "$/correct"] if answers else []),
            *(["repeats"] if any(s.run_id in spread for s in group) else []),
        ]  # fmt: skip
        rows = []
        names = dict(zip((s.run_id for s in group), row_names(group), strict=True))
        for s in group:
            at = group.index(s)
            if (
                ranks is not None
                and at
                and (ceiling(s), s.k) != (ceiling(group[at - 1]), group[at - 1].k)
                and not ceiling(group[at - 1])
            ):
                rows.append([""] * len(header))  # each k's memories apart, and the ceilings after them
            head = s.headline
            served = bool(served_caveat(s))
            name = names[s.run_id] + ("*" if ceiling(s) else "") + ("!" if hash_caveat(s) else "") + ("#" if served else "")
            name += "+" if s.dirty else ""
            name += "".join(ORIGIN_SIGNS[mark] for mark, _ in origin_marks(s.origin))
            marks |= {mark for mark, _ in origin_marks(s.origin)}
            marks |= {"+"} if s.dirty else set()
            marks |= {"*"} if ceiling(s) else set()
            marks |= {"!"} if hash_caveat(s) else set()
            marks |= {"#"} if served else set()
            cells = [
                formatting.clip_text(name, 30),
                formatting.clip_text(s.model, 12 if answers else 18),
                str(s.k),
                formatting.with_interval(head.recall, head.low, head.high, empty=NULL),
                f"{head.hits}/{head.total}",
                *(errata_cells(errata.of(s.run_id)) if corrected else []),  # type: ignore[union-attr]
                *([number_text(s.metric(KEYWORD.metric).value if s.metric(KEYWORD.metric) else None)] if keyword else []),
                metric_text(METRICS["tokens_per_test_point"], s.metric("tokens_per_test_point"), s.tokenizer),
                *(
                    [
                        _qa_cell(s),
                        metric_text(METRICS["usd_per_correct"], s.metric("usd_per_correct"), s.tokenizer),
                    ]
                    if answers
                    else []
                ),
                *([spread[s.run_id].text() if s.run_id in spread else ""] if header[-1] == "repeats" else []),
            ]
            marks |= {"†"} if answers and s.metric("answer_accuracy") is None and s.metric("answer_score") is not None else set()
            rows.append(cells)
        out.append(Table(header, rows, []).text().rstrip("\n"))
        for failure in failed.get(group[0].corpus_digest, []):
            line = f"{failed_name(failure)} k={failure.k}: {failure.failure}"
            out.extend(textwrap.wrap(formatting.printable(line), 99, subsequent_indent="    "))
        out.append("")
    if ranks is not None and summaries:
        out.append("memories ranked within each k (a blank line between); the ceilings after them, never ranked")
    if "*" in marks:
        out.append("* ceiling: reads the labels, ignores k or holds the whole history; for scale, not a memory")
    if "!" in marks:
        out.append("! hash embedder: no semantics (a smoke test); use --embedder minilm for a real one")
    if "†" in marks:
        out.append(
            "† the protocol's own mean score in the answer accuracy column (its published F1 rules, no judge; "
            "or a graded judge's)"
        )
    if "#" in marks:
        out.append("# served model differs from the one asked for (evals runs: llm served; the run page says which)")
    if "+" in marks:
        out.append("+ made from a working tree with uncommitted changes: its commit does not name the code that ran")
    for mark in (REPRODUCED, SUBMITTED):
        if mark in marks:
            out.extend(textwrap.wrap(f"{ORIGIN_SIGNS[mark]} {EXPLANATIONS[mark]}", 99, subsequent_indent="  "))
    if failures:
        out.append("failed: the configuration's latest run failed (evals runs lists it); a failure is never a figure")
    if spread:
        out.append("repeats: the configuration's runs on the corpus at its k, and their lowest and highest headline")
    if summaries:
        out.append("--wide: every column; --format json: every metric, and the headline object per run")
    if any(s.tokenizer != EXACT for s in summaries):
        out.append(APPROX_NOTE)
    return "\n".join(out).rstrip("\n") + "\n"


def _failed_lines(failures: Sequence[FailedRun], about: str) -> list[str]:
    """A corpus with failed runs only: what it is, then one line per failure."""
    lines = textwrap.wrap(formatting.printable(f"{about}: no run finished"), 99, subsequent_indent="  ")
    for failure in failures:
        line = f"{failed_name(failure)} k={failure.k}: {failure.failure}"
        lines.extend(textwrap.wrap(formatting.printable(line), 99, subsequent_indent="    "))
    return [*lines, ""]


def qa_figure(summary: RunSummary) -> str | None:
    """The run's headline answer figure: judged accuracy, else the score of a protocol that scores without a
    judge; None for a run without either."""
    return next((name for name in ("answer_accuracy", "answer_score") if summary.metric(name) is not None), None)


def _qa_cell(summary: RunSummary) -> str:
    name = qa_figure(summary)
    if name is None:
        return MISSING
    cell = metric_text(METRICS[name], summary.metric(name), summary.tokenizer)
    unparsed = summary.metric("answer_unparsed")
    said = f" ({unparsed.successes} unparsed)" if unparsed is not None and unparsed.successes else ""
    return cell + ("†" if name == "answer_score" else "") + said


# A run's fields no table, JSON or CSV shows: the corpus folder is a path of the machine that ran it (the corpus is
# named by corpus_name and corpus_digest). The original harness's document (`python -m evals --output`) keeps it.
PRIVATE = ("corpus_dir",)


def public(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's fields as published: without :data:`PRIVATE`."""
    return {name: value for name, value in fields.items() if name not in PRIVATE}


def summaries_json(
    summaries: Sequence[RunSummary],
    errata: Figures | None = None,
    ranks: dict[str, int] | None = None,
    failures: Sequence[FailedRun] = (),
    spread: dict[str, Spread] | None = None,
) -> str:
    """A JSON array of the runs; with ``errata``, each with ``headline_with_errata`` (null on a corpus they do not correct);
    with ``ranks`` (the leaderboard's), each with ``rank`` as leaderboard.json gives it (null for a ceiling); with
    ``spread`` (the leaderboard's), each with ``spread``: ``{"n", "min", "max"}`` of its configuration's headlines on
    the corpus at its k, null for a configuration run once. ``failures`` follow, each ``failed`` (``failed: <reason>``)
    with a null headline, no metrics and a null rank; every other row's ``failed`` is null."""
    rows = []
    marked = bool(failures) or spread is not None
    for s, name in zip(summaries, row_names(summaries), strict=True):
        row = {"name": name, **public(s.as_dict())}  # how every surface names the run (evals.views.names)
        if ranks is not None:
            row["rank"] = ranks.get(s.run_id)
        if errata is not None:
            row["headline_with_errata"] = f.as_dict() if (f := errata.of(s.run_id)) else None
        if marked:
            row["spread"] = spread[s.run_id].as_dict() if spread and s.run_id in spread else None
            row["failed"] = None
        rows.append(row)
    rows.extend(failed_record(f) for f in failures)
    return formatting.json_text(rows, indent=2)


def _metric_fields(declared: Metric) -> list[str]:
    fields = [declared.name, f"{declared.name}_n"]
    if declared.kind in (PROPORTION, MEAN):
        fields += [f"{declared.name}_low", f"{declared.name}_high"]
    return fields


_ERRATA_FIELDS = ("value", "hits", "total", "low", "high")


def summaries_csv(summaries: Sequence[RunSummary], errata: Figures | None = None, failures: Sequence[FailedRun] = ()) -> str:
    """One row per run: every field of its summary, then each declared metric's value, n and interval; with
    ``errata``, then the headline with errata (value, hits, total, interval) and the errata file's digest and source.
    ``failures`` follow, with a last column ``failed`` (``failed: <reason>``; empty for every run that finished)
    and no figure."""
    base = ["name", *(name for name in RunSummary.__dataclass_fields__ if name not in ("metrics", *PRIVATE))]
    declared = list(METRICS.values())
    extra = [*(f"headline_with_errata_{k}" for k in _ERRATA_FIELDS), "errata_sha256", "errata_source"] if errata else []
    extra += ["failed"] if failures else []
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=[*base, *(f for m in declared for f in _metric_fields(m)), *extra], lineterminator="\n"
    )
    writer.writeheader()
    for summary, shown in zip(summaries, row_names(summaries), strict=True):
        row = {"name": shown, **{name: getattr(summary, name) for name in base[1:]}}
        row["timestamp"] = summary.timestamp.isoformat()
        row["strategy_config"] = formatting.json_text(summary.strategy_config)
        row["rule"] = summary.headline.rule.name  # its headline's rule, stored with the run
        for name in ("llm_settings", "llm_usage"):
            if getattr(summary, name) is not None:
                row[name] = formatting.json_text(getattr(summary, name), sort_keys=True)
        for m in declared:
            value = summary.metric(m.name)
            if value is not None:
                row.update(zip(_metric_fields(m), (value.value, value.n, value.low, value.high), strict=False))
        figure = errata.of(summary.run_id) if errata else None
        if figure is not None:
            found = figure.as_dict()
            row.update({f"headline_with_errata_{k}": found[k] for k in _ERRATA_FIELDS if figure.value is not None})
            row.update(errata_sha256=figure.errata.sha256, errata_source=figure.errata.source)
        writer.writerow({name: formatting.csv_cell(value) for name, value in row.items()})
    for failure in failures:
        row = {name: getattr(failure, name) for name in base[1:] if hasattr(failure, name)}
        row |= {"name": failed_name(failure), "timestamp": failure.timestamp.isoformat(), "failed": failure.failure}
        row["strategy_config"] = formatting.json_text(failure.strategy_config)
        writer.writerow({name: formatting.csv_cell(value) for name, value in row.items()})
    return buffer.getvalue()


def category_records(stored_runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    """``leaderboard --by-category``: one record per run and category, by the same rows the site shows. Each
    leads with the run's headline rule over the category's points (``headline``, ``headline_hits``,
    ``headline_total``: the categories add up to the leaderboard's figure); ``hits``, ``total`` and ``recall``
    are keyword recall over its answerable points."""
    records = []
    for stored in stored_runs:
        s = stored.summary
        rule = s.headline.rule
        values = point_values(
            ScoredRun(stored.run, stored.scores, stored.answers, protocol_lexical(stored.answers and stored.answers.protocol)),
            (
                KEYWORD.metric,
                "evidence_recall_any",
                "evidence_recall_all",
                "unanswerable_tokens",
                "answer_accuracy",
                "answer_score",
                rule.metric,
            ),
        )
        # The answers' accuracy per category (judged verdicts; a scoring protocol's mean score), where the run has answers.
        answered = {row["category"]: row for row in answer_category_rows(values, s.benchmark)}
        for row in category_rows(values, rule) or []:
            evidence = row["evidence_recall_at_k"]
            interval = row["interval"]
            answer = answered.get(row["category"])
            headline = row["headline"]
            records.append(
                {
                    "strategy": s.strategy,
                    "config": s.config_key,
                    "model": s.model,
                    "k": s.k,
                    "corpus": s.corpus_name,
                    "category": row["category"],
                    "headline_metric": headline["metric"],
                    "headline_label": headline["label"],
                    "headline": headline["value"],
                    "headline_low": headline["low"],
                    "headline_high": headline["high"],
                    "headline_hits": headline["hits"],
                    "headline_total": headline["total"],
                    "hits": row["hits"],
                    "total": row["total"],
                    "recall": row["recall"],
                    "recall_low": interval[0] if interval else None,
                    "recall_high": interval[1] if interval else None,
                    "evidence_total": evidence["any"]["total"] if evidence else 0,
                    "evidence_any": evidence["any"]["recall"] if evidence else None,
                    "evidence_all": evidence["all"]["recall"] if evidence else None,
                    "unanswerable": row["unanswerable"],
                    "label": answer["label"] if answer else None,
                    "answer_accuracy": answer["value"] if answer else None,
                    "answer_n": answer["n"] if answer else 0,
                    "answer_low": answer["low"] if answer else None,
                    "answer_high": answer["high"] if answer else None,
                    "answer_interval": answer["interval"] if answer else None,
                    "run_id": s.run_id,
                }
            )
    return records


def category_table(records: list[dict[str, Any]]) -> Table:
    """``leaderboard --by-category`` as text; where some run has answers, each category's answer accuracy
    (or a scoring protocol's score), its 95% interval and n follow."""
    answers = any(r["answer_n"] for r in records)
    header = ["strategy", "config", "corpus", "category", "headline", "95% CI", "hits", "kw hit@k", "kw hits", "evidence any",
              "evidence all", "unanswerable"]  # fmt: skip
    header += ["answer acc", "95% CI", "n"] if answers else []
    rows = [
        [
            r["strategy"],
            r["config"],
            r["corpus"],
            r["label"] or ("(none)" if r["category"] is None else r["category"]),
            number_text(r["headline"]),
            formatting.interval(r["headline_low"], r["headline_high"], empty=NULL),
            f"{r['headline_hits']}/{r['headline_total']}",
            number_text(r["recall"]),
            f"{r['hits']}/{r['total']}",
            number_text(r["evidence_any"]),
            number_text(r["evidence_all"]),
            str(r["unanswerable"]),
            *(
                [
                    MISSING if not r["answer_n"] else number_text(r["answer_accuracy"]),
                    MISSING if not r["answer_n"] else formatting.interval(r["answer_low"], r["answer_high"], empty=NULL),
                    str(r["answer_n"]) if r["answer_n"] else MISSING,
                ]
                if answers
                else []
            ),
        ]
        for r in records
    ]
    notes = [] if records else ["(no run in the store is on a corpus with categories)"]
    labels = sorted({r["headline_label"] for r in records})
    if labels:
        notes.append(
            f"headline: each run's headline rule ({', '.join(labels)}) over the category's points; the categories add up to "
            "the leaderboard's figure. kw hit@k: keyword hits over the answerable points (the original harness's recall@k)"
        )
    if any(r["answer_interval"] == "bootstrap" for r in records):
        notes.append("answer acc: the protocol's own mean score where it scores without a judge, with a bootstrap interval")
    if any(r["label"] and r["label"] != r["category"] for r in records):
        notes.extend(category_notes())
    return Table(header, rows, notes)


def records_csv(records: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]) if records else ["category"], lineterminator="\n")
    writer.writeheader()
    writer.writerows({name: formatting.csv_cell(value) for name, value in record.items()} for record in records)
    return buffer.getvalue()
