"""From the results store to page models to files.

The build reads the store (opened read-only), turns runs into the page models
of :mod:`evals.site._pages`, renders them, and writes the site into a fresh
temporary directory beside the output, which then replaces the output in one
swap, so stale pages never survive and a failed build leaves the old site.

Everything is sorted and nothing reads the clock: the same store gives a
byte-identical site.
"""

from __future__ import annotations

import atexit
import bisect
import csv
import dataclasses
import functools
import io
import json
import multiprocessing
import os
import shutil
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from evals.breakdown import category_rows, evidence_block, unanswerable_block
from evals.errors import EvalsError
from evals.metrics import matched_keywords, p_value_text, wilson_interval
from evals.report import legacy_json
from evals.site._charts import CostPoint, SeriesPoint, cost_chart, series_chart
from evals.site._pages import (
    AboutPage,
    AnswersBlock,
    AnswerView,
    PromptView,
    BoardRow,
    CategoryRow,
    CompareSection,
    ComparePage,
    ConfigInfo,
    ConversationPage,
    ConversationRow,
    CorpusBoard,
    EvidenceView,
    FlipRow,
    HistoryIndexPage,
    HistoryPage,
    HistoryRow,
    IndexPage,
    MissRow,
    Page,
    PointView,
    RecordView,
    RunHeader,
    RunPage,
    RunRef,
    TurnLine,
    TurnMark,
)
from evals.site._render import make_environment, pct, render
from evals.site._text import Segment, highlight, unique_slugs
from evals.store import RunSummary, Store, StoredRun, compare_runs
from evals.tokens import APPROXIMATE, EXACT

__all__ = ["BuildReport", "SiteError", "build_site"]

MARKER = ".evals-site"  # names a directory this builder made, so it may replace it
RECORD_CAP = 50  # records listed per test point; the rest are counted
EVIDENCE_CAP = 20  # evidence turns listed per test point
OPEN_TRANSCRIPT = 30  # transcripts up to this many turns are shown unfolded
LONG_RECORD = 600  # characters beyond which a record's text is folded
FULL_HISTORY = "full_history"
PARALLEL_FROM = 8  # runs in a store before the build uses worker processes
FRAGMENT_CACHE = 50_000  # rendered test points / transcript lines remembered per process


class SiteError(EvalsError):
    """The site cannot be built: a bad output directory or a template problem."""


@dataclass(frozen=True)
class BuildReport:
    """What a build wrote."""

    out_dir: Path
    runs: int
    pages: int
    files: int
    bytes: int
    largest_page: str
    largest_page_bytes: int
    seconds: float


# -- small helpers -----------------------------------------------------------------------------


def short_commit(commit: str) -> str:
    return commit[:7] if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit) else commit


def settings_text(config: dict[str, Any]) -> str:
    """A strategy's configuration without its name, ``key=value`` in key order."""
    parts = []
    for key in sorted(config):
        if key == "name":
            continue
        value = config[key]
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
        parts.append(f"{key}={text}")
    return ", ".join(parts)


def is_approx(tokenizer: str) -> bool:
    return tokenizer != EXACT


def config_id(summary: RunSummary) -> tuple[str, str]:
    return summary.corpus_digest, summary.config_key


class _Paths:
    """Every file name of the site, decided once so links and files agree."""

    def __init__(self, summaries: list[RunSummary]) -> None:
        self.run_slug = unique_slugs([s.run_id for s in summaries])
        configs = sorted({config_id(s) for s in summaries})
        self.config_slug = unique_slugs([f"{key}--{digest[:10]}" for digest, key in configs])
        self._config_name = {(digest, key): f"{key}--{digest[:10]}" for digest, key in configs}
        self._conversation_slugs: dict[str, dict[str, str]] = {}

    def run(self, run_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}.html"

    def run_json(self, run_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}.json"

    def set_conversations(self, run_id: str, conversation_ids: list[str]) -> None:
        self._conversation_slugs[run_id] = unique_slugs(conversation_ids)

    def conversation(self, run_id: str, conversation_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}/{self._conversation_slugs[run_id][conversation_id]}.html"

    def history(self, digest: str, key: str) -> str:
        return f"history/{self.config_slug[self._config_name[(digest, key)]]}.html"


def config_info(summary: RunSummary, paths: _Paths) -> ConfigInfo:
    return ConfigInfo(
        strategy=summary.strategy,
        settings=settings_text(summary.strategy_config),
        config_key=summary.config_key,
        model=summary.model,
        k=summary.k,
        corpus_name=summary.corpus_name,
        corpus_digest_short=summary.corpus_digest[:10],
        history_href=paths.history(*config_id(summary)),
    )


def run_header(summary: RunSummary, paths: _Paths) -> RunHeader:
    return RunHeader(
        run_id=summary.run_id,
        href=paths.run(summary.run_id),
        strategy=summary.strategy,
        settings=settings_text(summary.strategy_config),
        model=summary.model,
        k=summary.k,
        commit_short=short_commit(summary.commit),
        dirty=summary.dirty,
        date=summary.date,
        corpus_name=summary.corpus_name,
        approx_tokens=is_approx(summary.tokenizer),
    )


# -- leaderboard -------------------------------------------------------------------------------


def _board_sort_key(s: RunSummary) -> tuple:
    return (
        s.recall is None,
        -(s.recall or 0.0),
        s.tokens_per_test_point is None,
        s.tokens_per_test_point or 0.0,
        s.config_key,
        s.run_id,
    )


def _full_history_reference(rows: list[RunSummary]) -> RunSummary | None:
    candidates = [s for s in rows if s.strategy == FULL_HISTORY and s.tokens_per_test_point]
    return max(candidates, key=lambda s: (s.timestamp, s.run_id)) if candidates else None


def leaderboard(latest: list[RunSummary], paths: _Paths) -> list[CorpusBoard]:
    by_corpus: dict[str, list[RunSummary]] = defaultdict(list)
    for summary in latest:
        by_corpus[summary.corpus_digest].append(summary)
    # The corpus with the newest run first: that is the one people are working on.
    order = sorted(by_corpus, key=lambda d: (-max(s.timestamp for s in by_corpus[d]).timestamp(), d))
    boards = []
    for digest in order:
        runs = sorted(by_corpus[digest], key=_board_sort_key)
        reference = _full_history_reference(runs)
        if reference is None:
            note = "No full_history run on this corpus, so no relative cost."
        else:
            note = (
                f"Relative to full_history ({num_text(reference.tokens_per_test_point)} tokens per test point, "
                f"run {reference.run_id}); shown only where both runs count tokens the same way."
            )
        rows = []
        for s in runs:
            relative = None
            if reference is not None and s.tokens_per_test_point is not None and s.tokenizer == reference.tokenizer:
                relative = s.tokens_per_test_point / reference.tokens_per_test_point
            rows.append(
                BoardRow(
                    run_id=s.run_id,
                    run_href=paths.run(s.run_id),
                    history_href=paths.history(*config_id(s)),
                    strategy=s.strategy,
                    settings=settings_text(s.strategy_config),
                    config_key=s.config_key,
                    model=s.model,
                    k=s.k,
                    recall=s.recall,
                    recall_low=s.recall_low,
                    recall_high=s.recall_high,
                    strict=s.strict_recall,
                    strict_low=s.strict_low,
                    strict_high=s.strict_high,
                    mrr=s.mrr,
                    hits=s.hits,
                    total=s.total,
                    tokens=s.tokens_per_test_point,
                    relative=relative,
                    approx_tokens=is_approx(s.tokenizer),
                    commit=s.commit,
                    commit_short=short_commit(s.commit),
                    dirty=s.dirty,
                    date=s.date,
                    accuracy=s.accuracy,
                    accuracy_low=s.accuracy_low,
                    accuracy_high=s.accuracy_high,
                    keyword_accuracy=s.keyword_accuracy,
                    llm_tokens=s.llm_tokens_per_test_point,
                    answer_model=s.answer_model,
                )
            )
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
                        label=_chart_label(r, rows),
                        title=(
                            f"{r.strategy} {r.settings} k={r.k}: recall {pct(r.recall)} "
                            f"[{pct(r.recall_low)}, {pct(r.recall_high)}], {num_text(r.tokens)} tokens per test point"
                            + (" (estimated)" if r.approx_tokens else "")
                        ),
                        href=r.run_href,
                    )
                    for r in plotted
                ],
                title=f"Recall against tokens per test point on {runs[0].corpus_name}",
                tokens_label="tokens per test point (log scale)" + (", some estimated" if any_approx else ""),
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
                rows=rows,
                chart=chart,
                unplotted=[f"{r.strategy} ({r.config_key})" for r in rows if r not in plotted],
                relative_note=note,
                answers=any(r.answer_model is not None for r in rows),
            )
        )
    return boards


def _chart_label(row: BoardRow, rows: list[BoardRow]) -> str:
    """The strategy name, or its config key where one strategy has several configurations."""
    same = [r for r in rows if r.strategy == row.strategy]
    return row.strategy if len(same) == 1 else f"{row.strategy} k{row.k}" if len({r.k for r in same}) == len(same) else row.config_key


def num_text(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:,.1f}"


def leaderboard_records(boards: list[CorpusBoard], latest: dict[str, RunSummary]) -> list[dict[str, Any]]:
    """The rows of leaderboard.csv and leaderboard.json, in the order shown on the index."""
    out = []
    for board in boards:
        for row in board.rows:
            s = latest[row.run_id]
            out.append(
                {
                    "corpus_name": s.corpus_name,
                    "corpus_digest": s.corpus_digest,
                    "strategy": s.strategy,
                    "strategy_config": s.strategy_config,
                    "config_key": s.config_key,
                    "model": s.model,
                    "k": s.k,
                    "recall": s.recall,
                    "recall_low": s.recall_low,
                    "recall_high": s.recall_high,
                    "strict_recall": s.strict_recall,
                    "strict_low": s.strict_low,
                    "strict_high": s.strict_high,
                    "mrr": s.mrr,
                    "hits": s.hits,
                    "total": s.total,
                    "tokens_per_test_point": s.tokens_per_test_point,
                    "tokens_relative_to_full_history": row.relative,
                    "tokenizer": s.tokenizer,
                    "answer_model": s.answer_model,
                    "judge_model": s.judge_model,
                    "accuracy": s.accuracy,
                    "accuracy_low": s.accuracy_low,
                    "accuracy_high": s.accuracy_high,
                    "keyword_accuracy": s.keyword_accuracy,
                    "llm_tokens_per_test_point": s.llm_tokens_per_test_point,
                    "commit": s.commit,
                    "dirty": s.dirty,
                    "date": s.date,
                    "timestamp": s.timestamp.isoformat(),
                    "run_id": s.run_id,
                }
            )
    return out


def leaderboard_csv(records: list[dict[str, Any]]) -> str:
    columns = list(records[0]) if records else ["corpus_name", "strategy", "recall", "run_id"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        cells = []
        for column in columns:
            value = record[column]
            if value is None:
                cells.append("")
            elif isinstance(value, dict):
                cells.append(json.dumps(value, sort_keys=True, ensure_ascii=False))
            elif isinstance(value, bool):
                cells.append("true" if value else "false")
            else:
                cells.append(str(value))
        writer.writerow(cells)
    return buffer.getvalue()


# -- run page ----------------------------------------------------------------------------------

_PROVENANCE_LABELS = {
    "run_id": "run id",
    "config_key": "configuration key",
    "strategy_config": "strategy configuration",
    "corpus_dir": "corpus directory",
    "corpus_digest": "corpus digest",
    "package_version": "mneme-evals version",
    "mneme_version": "Mneme (smolAmem) version",
    "python_version": "Python version",
    "duration_s": "duration",
    "tokens_per_test_point": "tokens per test point",
    "context_tokens": "context tokens (sum)",
    "recall_low": "recall, 95% interval low",
    "recall_high": "recall, 95% interval high",
    "strict_hits": "strict hits (every expected keyword retrieved)",
    "strict_recall": "strict recall",
    "strict_low": "strict recall, 95% interval low",
    "strict_high": "strict recall, 95% interval high",
    "mrr": "MRR (mean 1/rank of the first matching record)",
    "cache_hits": "embeddings from the cache",
    "cache_misses": "embeddings computed",
    "conversation_count": "conversations",
    "cache_key": "cache key",
}


def cache_note(summary: RunSummary) -> str:
    """What the embedding cache did for a run, in words; "" when the run used no cache or cached nothing."""
    if summary.cache_hits is None or summary.cache_misses is None or not (summary.cache_hits or summary.cache_misses):
        return ""
    return f"{summary.cache_misses:,} embeddings computed, {summary.cache_hits:,} from the cache"


def provenance_rows(summary: RunSummary) -> list[tuple[str, str]]:
    """Every field of the run's summary, labelled, in the store's field order."""
    rows = []
    for name in summary.__dataclass_fields__:
        value = getattr(summary, name)
        label = _PROVENANCE_LABELS.get(name, name.replace("_", " "))
        if value is None:
            text = "\u2014"
        elif name == "strategy_config":
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        elif name == "timestamp":
            text = value.isoformat()
        elif name == "duration_s":
            text = f"{value:.3f} s"
        elif name in ("recall", "recall_low", "recall_high", "strict_recall", "strict_low", "strict_high"):
            text = f"{pct(value, 2)} ({value:.6f})"
        elif name == "tokens_per_test_point":
            text = f"{value:,.2f}"
        elif name == "tokenizer":
            text = value + (" (estimated: ~4 characters per token, not counted)" if is_approx(value) else "")
        elif name == "cache_key" and not value:
            text = "\u2014 (not reusable: dirty tree or outside git)"
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        else:
            text = str(value)
        rows.append((label, text))
    return rows


# -- drill-down --------------------------------------------------------------------------------


class _ConversationText:
    """One conversation's turns, with what every test point needs computed once."""

    def __init__(self, transcript: list[tuple[str, str]]) -> None:
        self.roles = [role for role, _ in transcript]
        self.contents = [content for _, content in transcript]
        lowered = [c.lower() for c in self.contents]
        # One string for all turns, so finding a keyword is one C-level scan, not a loop over turns.
        self._haystack = "\x00".join(lowered)
        self._starts = []
        offset = 0
        for text in lowered:
            self._starts.append(offset)
            offset += len(text) + 1

    def turns_holding(self, needles: list[str], before: int) -> list[int]:
        """Indices of the turns before ``before`` that contain any needle (case-insensitive)."""
        limit = self._starts[before] if before < len(self._starts) else len(self._haystack) + 1
        found: set[int] = set()
        for needle in {n.lower() for n in needles if n}:
            start = self._haystack.find(needle, 0, limit)
            while start >= 0:
                turn = bisect.bisect_right(self._starts, start) - 1
                found.add(turn)
                # Skip to the next turn: one occurrence per turn is enough.
                nxt = self._starts[turn + 1] if turn + 1 < len(self._starts) else limit
                start = self._haystack.find(needle, nxt, limit) if nxt < limit else -1
        return sorted(found)


def _records_are_history(refs: list[int | None], turn_index: int) -> bool:
    return len(refs) == turn_index and turn_index > 0 and all(ref == i for i, ref in enumerate(refs))


def point_view(
    number: int,
    point: Any,
    score: Any,
    refs: list[int | None],
    text: _ConversationText,
    cache: _Fragments,
    approx: bool,
    answer: Any = None,
) -> tuple[PointView, list[int], dict[int, int]]:
    """One test point's view (rendered), plus what the transcript needs: its listed evidence turns and each retrieved turn's rank."""
    ti = point.turn_index
    keywords = list(point.expected_keywords)
    needles = keywords or ([point.expected_fact] if point.expected_fact else [])
    records = point.retrieved_records
    tokens = list(score.record_tokens)
    refs = list(refs) if len(refs) == len(records) else [None] * len(records)
    all_history = _records_are_history(refs, ti)

    rank_of_turn: dict[int, int] = {}
    if not all_history:
        for rank, ref in enumerate(refs, start=1):
            if ref is not None and ref not in rank_of_turn:
                rank_of_turn[ref] = rank
    evidence_turns = text.turns_holding(needles, ti)
    listed = evidence_turns[:EVIDENCE_CAP]

    # Everything the section shows is a function of this key.
    key = (
        number,
        ti,
        point.question,
        point.expected_fact,
        tuple(keywords),
        score.hit,
        score.strict_hit,
        score.rank,
        all_history,
        len(records) if all_history else tuple(records),
        tuple(tokens),
        tuple(refs),
        tuple((turn, text.roles[turn], text.contents[turn]) for turn in listed),
        len(evidence_turns),
        approx,
        point.answerable,
        point.category,
        tuple(point.evidence_turns),
        None if answer is None else (answer.answer, answer.correct, answer.reason, answer.keyword_hit, answer.prompt_tokens, answer.completion_tokens, answer.latency_s),
    )
    cached = cache.points.get(key)
    if cached is not None:
        return cached, listed, rank_of_turn

    views = []
    if not all_history:
        for rank, (record, count, ref) in enumerate(zip(records[:RECORD_CAP], tokens, refs, strict=False), start=1):
            if keywords:
                matched = matched_keywords(keywords, record)
            else:
                matched = [point.expected_fact] if point.expected_fact and point.expected_fact.lower() in record.lower() else []
            views.append(
                RecordView(
                    rank=rank,
                    tokens=count,
                    segments=_highlight(record, tuple(needles)) if matched else ([Segment(record, False)] if record else []),
                    matched=matched,
                    turn=ref,
                    distance=ti - ref if ref is not None else None,
                    long=len(record) > LONG_RECORD,
                )
            )
    hidden = 0 if all_history else max(0, len(records) - RECORD_CAP)
    retrieved_turns = {r for r in refs if r is not None} if point.evidence_turns else set()
    evidence = [
        EvidenceView(
            turn=turn,
            distance=ti - turn,
            role=text.roles[turn],
            segments=_highlight(text.contents[turn], tuple(needles)),
            retrieved_rank=rank_of_turn.get(turn),
        )
        for turn in listed
    ]
    view = PointView(
        number=number,
        anchor=f"tp-{ti}",
        turn_index=ti,
        question=point.question,
        expected_fact=point.expected_fact,
        keywords=keywords,
        hit=score.hit,
        strict_hit=score.strict_hit,
        rank=score.rank,
        context_tokens=sum(tokens),
        record_count=len(records),
        records=views,
        records_hidden=hidden,
        records_hidden_tokens=sum(tokens[RECORD_CAP:]) if hidden else 0,
        all_history=all_history,
        evidence=evidence,
        evidence_hidden=len(evidence_turns) - len(listed),
        answerable=point.answerable,
        category=point.category,
        evidence_turns=list(point.evidence_turns),
        evidence_retrieved=[t for t in point.evidence_turns if t in retrieved_turns],
        answer=None
        if answer is None
        else AnswerView(
            text=answer.answer,
            correct=answer.correct,
            reason=answer.reason,
            keyword_hit=answer.keyword_hit,
            tokens=answer.prompt_tokens + answer.completion_tokens,
            latency_s=answer.latency_s,
        ),
    )
    return cache.point(key, view, approx), listed, rank_of_turn


class _Fragments:
    """Test point sections and transcript lines, each distinct one rendered once per build.

    They are rendered by the ``point`` and ``turn_line`` macros of
    _partials.html (so markup and escaping stay in the templates) and depend
    only on what their keys hold, which repeats from run to run of one
    configuration: history over many commits mostly retrieves the same
    records. Rendering each distinct fragment once instead of once per page is
    most of what keeps a big build fast. Each table is emptied when it grows
    past ``FRAGMENT_CACHE`` entries, which bounds memory.
    """

    def __init__(self, env: jinja2.Environment) -> None:
        module = env.get_template("_partials.html").module
        self._turn_line = module.turn_line
        self._point = module.point
        self._est = module.est()
        self._lines: dict[tuple, str] = {}
        self.points: dict[tuple, PointView] = {}

    def line(self, turn: int, role: str, content: str, css: str, marks: list[TurnMark], needles: tuple[str, ...]) -> TurnLine:
        key = (turn, role, content, css, needles, tuple((m.label, m.css, m.anchor) for m in marks))
        html = self._lines.get(key)
        segments = _highlight(content, needles) if needles else []
        line = TurnLine(turn, role, content, segments, marks, css, "")
        if html is None:
            if len(self._lines) >= FRAGMENT_CACHE:
                self._lines.clear()
            html = self._lines[key] = self._turn_line(line)
        line.html = html
        return line

    def point(self, key: tuple, view: PointView, approx: bool) -> PointView:
        """Render ``view`` and remember it under ``key``."""
        view.html = self._point(view, self._est if approx else "")
        if len(self.points) >= FRAGMENT_CACHE:
            self.points.clear()
        self.points[key] = view
        return view


@functools.lru_cache(maxsize=1 << 16)
def _highlight(text: str, needles: tuple[str, ...]) -> list[Segment]:
    """:func:`highlight`, remembered: the same answer turns come back in every run over a conversation.

    Callers must not change the returned list.
    """
    return highlight(text, list(needles))


def conversation_views(
    conversation: Any,
    scores: list[Any],
    refs: list[list[int | None]],
    text: _ConversationText,
    cache: _Fragments,
    approx: bool,
    answers: list[Any] | None = None,
) -> tuple[list[PointView], list[TurnLine]]:
    """Every test point's view, and the transcript once, each turn tagged with the test points it served."""
    marks: dict[int, list[TurnMark]] = defaultdict(list)
    needles_at: dict[int, set[str]] = defaultdict(set)
    points = []
    for number, (point, score) in enumerate(zip(conversation.test_points, scores, strict=True), start=1):
        view, evidence_turns, rank_of_turn = point_view(
            number,
            point,
            score,
            refs[number - 1] if number - 1 < len(refs) else [],
            text,
            cache,
            approx,
            answers[number - 1] if answers is not None else None,
        )
        points.append(view)
        needles = view.keywords or ([view.expected_fact] if view.expected_fact else [])
        for turn, rank in rank_of_turn.items():
            marks[turn].append(TurnMark("retrieved", number, view.anchor, rank, view.hit, f"TP{number} #{rank}", ""))
        for turn in evidence_turns:
            marks[turn].append(TurnMark("answer", number, view.anchor, None, view.hit, f"TP{number} answer", " ans"))
            needles_at[turn].update(needles)
        for turn in view.evidence_turns:
            marks[turn].append(TurnMark("evidence", number, view.anchor, None, view.hit, f"TP{number} evidence", " evi"))
        asked_css = " ask" if view.hit or not view.answerable else " ask miss"
        marks[point.turn_index].append(TurnMark("asked", number, view.anchor, None, view.hit, f"TP{number} asked", asked_css))
    role_css = {role: f"role-{role.lower()}" for role in set(text.roles)}
    no_marks: list[TurnMark] = []
    lines = []
    for turn, (role, content) in enumerate(zip(text.roles, text.contents, strict=True)):
        tags = marks.get(turn)
        if tags is None:
            lines.append(cache.line(turn, role, content, role_css[role], no_marks, ()))
            continue
        kinds = {m.kind for m in tags}
        css = (
            role_css[role]
            + ("retrieved" in kinds) * " retrieved"
            + bool(kinds & {"answer", "evidence"}) * " evidence"
            + ("asked" in kinds) * " asked"
        )
        needles = tuple(sorted(needles_at[turn])) if turn in needles_at else ()
        lines.append(cache.line(turn, role, content, css, tags, needles))
    return points, lines


# -- history and compare -----------------------------------------------------------------------


def drop_reason(previous: RunSummary, current: RunSummary) -> str:
    """Why ``current`` counts as a drop from ``previous``; empty when it does not."""
    if current.recall is not None and previous.recall_low is not None and current.recall < previous.recall_low:
        return (
            f"recall {pct(current.recall)} is below the previous run's 95% interval "
            f"[{pct(previous.recall_low)}, {pct(previous.recall_high)}]"
        )
    if current.total == previous.total and current.hits < previous.hits:
        return f"hits fell from {previous.hits} to {current.hits} of {current.total}"
    return ""


def _two_latest_commits(runs: list[RunSummary]) -> tuple[RunSummary, RunSummary] | None:
    """The latest run at the newest commit and the latest run at the commit before it (runs newest first)."""
    newer = runs[0]
    older = next((r for r in runs[1:] if r.commit != newer.commit), None)
    return (older, newer) if older is not None else None


# -- the build ---------------------------------------------------------------------------------


@dataclass
class _Output:
    """Files to write, by site-relative path; written in sorted order at each flush."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)
    pages: int = 0
    written_files: int = 0
    written_bytes: int = 0
    largest: tuple[int, str] = (0, "")

    def text(self, path: str, content: str) -> None:
        self.files[path] = content.encode("utf-8")

    def page(self, env: jinja2.Environment, path: str, page: Page) -> None:
        try:
            self.text(path, render(env, page))
        except jinja2.TemplateError as exc:
            where = f" ({exc.name}, line {exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            raise SiteError(f"cannot render {path} with {page.template}{where}: {exc}") from exc
        self.pages += 1

    def flush(self) -> None:
        made: set[Path] = set()
        for path in sorted(self.files):
            data = self.files[path]
            target = self.root / path
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            target.write_bytes(data)
            self.written_files += 1
            self.written_bytes += len(data)
            if path.endswith(".html"):
                self.largest = max(self.largest, (len(data), path))
        self.files.clear()

    def add(self, stats: tuple[int, int, int, tuple[int, str]]) -> None:
        """Count what a worker process wrote."""
        pages, files, size, largest = stats
        self.pages += pages
        self.written_files += files
        self.written_bytes += size
        self.largest = max(self.largest, largest)

    def stats(self) -> tuple[int, int, int, tuple[int, str]]:
        return self.pages, self.written_files, self.written_bytes, self.largest


def _run_pages(
    stored: StoredRun, env: jinja2.Environment, output: _Output, paths: _Paths, note: str, cache: _Fragments
) -> None:
    """The run page, its seed-shaped JSON, and one drill-down per conversation."""
    s = stored.summary
    header = run_header(s, paths)
    conversations = stored.run.conversations
    ids = [c.conversation_id for c in conversations]
    paths.set_conversations(s.run_id, ids)
    hrefs = [paths.conversation(s.run_id, cid) for cid in ids]
    rows: list[tuple[int, ConversationRow]] = []
    misses: list[MissRow] = []
    wrong: list[MissRow] = []
    answers = stored.answers
    for position, (conversation, scores) in enumerate(zip(conversations, stored.scores.points, strict=True)):
        point_answers = answers.points[position] if answers is not None else None
        cid = conversation.conversation_id
        href = hrefs[position]
        # Unanswerable test points are neither hits nor misses, and out of the numbers (as in the summary).
        hits = sum(p.hit for p in scores if p.answerable)
        total = sum(p.answerable for p in scores)
        interval = wilson_interval(hits, total)
        context_tokens = sum(p.context_tokens for p in scores if p.answerable)
        rows.append(
            (
                position,
                ConversationRow(
                    conversation_id=cid,
                    description=conversation.description,
                    href=href,
                    turn_count=conversation.turn_count,
                    hits=hits,
                    total=total,
                    misses=total - hits,
                    recall=hits / total if total else None,
                    recall_low=interval[0] if interval else None,
                    recall_high=interval[1] if interval else None,
                    context_tokens=context_tokens,
                    tokens=context_tokens / total if total else None,
                ),
            )
        )
        misses.extend(
            MissRow(conversation_id=cid, turn_index=p.turn_index, question=p.question, href=f"{href}#tp-{p.turn_index}")
            for p, score in zip(conversation.test_points, scores, strict=True)
            if not score.hit and score.answerable
        )
        if point_answers is not None:
            wrong.extend(
                MissRow(conversation_id=cid, turn_index=p.turn_index, question=p.question, href=f"{href}#tp-{p.turn_index}")
                for p, answer in zip(conversation.test_points, point_answers, strict=True)
                if answer.correct is False
            )
        text = _ConversationText(stored.transcripts.get(cid, []))
        points, transcript = conversation_views(
            conversation, scores, stored.record_turns.get(cid, []), text, cache, header.approx_tokens, point_answers
        )
        output.page(
            env,
            href,
            ConversationPage(
                title=f"{cid} \u00b7 {s.strategy} \u00b7 run {s.run_id}",
                root=_root_of(href),
                nav="",
                store_note=note,
                run=header,
                conversation_id=cid,
                description=conversation.description,
                turn_count=len(text.contents),
                hits=hits,
                total=total,
                recall=hits / total if total else None,
                recall_low=interval[0] if interval else None,
                recall_high=interval[1] if interval else None,
                context_tokens=context_tokens,
                points=points,
                toc=[pt for pt in points if pt.answerable and not pt.hit]
                + [pt for pt in points if pt.answerable and pt.hit]
                + [pt for pt in points if not pt.answerable],
                transcript=transcript,
                transcript_open=len(transcript) <= OPEN_TRANSCRIPT,
                previous_href=hrefs[position - 1] if position > 0 else "",
                next_href=hrefs[position + 1] if position + 1 < len(hrefs) else "",
            ),
        )
    ordered = [row for _, row in sorted(rows, key=lambda pr: (pr[1].misses == 0, pr[0]))]
    run_href = paths.run(s.run_id)
    output.page(
        env,
        run_href,
        RunPage(
            title=f"Run {s.run_id}: {s.strategy} on {s.corpus_name}",
            root=_root_of(run_href),
            nav="",
            store_note=note,
            run=header,
            recall=s.recall,
            recall_low=s.recall_low,
            recall_high=s.recall_high,
            strict=s.strict_recall,
            strict_low=s.strict_low,
            strict_high=s.strict_high,
            mrr=s.mrr,
            cache_note=cache_note(s),
            hits=s.hits,
            total=s.total,
            tokens=s.tokens_per_test_point,
            context_tokens=s.context_tokens,
            provenance=provenance_rows(s),
            json_href=paths.run_json(s.run_id),
            history_href=paths.history(*config_id(s)),
            misses=misses,
            conversations=ordered,
            categories=[_category_row(row) for row in category_rows(stored.run, stored.scores) or []],
            evidence=_evidence_row(evidence_block(stored.run, stored.scores)),
            unanswerable=(unanswerable_block(stored.run, stored.scores) or {"count": 0})["count"],
            answers=answers_block(s, wrong) if answers is not None else None,
        ),
    )
    document = legacy_json(stored.run, stored.scores, answers)
    # Compact: json's C encoder only runs without indent, and full_history documents are large.
    output.text(paths.run_json(s.run_id), json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")


def answers_block(s: RunSummary, wrong: list[MissRow]) -> AnswersBlock:
    settings = s.llm_settings or {}
    prompts = ", ".join(f"{name} {digest}" for name, digest in sorted(settings.get("prompts", {}).items()))
    return AnswersBlock(
        answer_model=s.answer_model or "",
        judge_model=s.judge_model,
        base_url=s.llm_base_url or "",
        accuracy=s.accuracy,
        accuracy_low=s.accuracy_low,
        accuracy_high=s.accuracy_high,
        correct=s.answers_correct,
        judged=s.answers_judged or 0,
        keyword_accuracy=s.keyword_accuracy,
        keyword_hits=s.answers_keyword_hits or 0,
        total=s.answers_total or 0,
        mean_latency_s=s.answer_latency_s,
        requests_made=s.llm_requests_made or 0,
        requests_cached=s.llm_requests_cached or 0,
        prompt_tokens=s.llm_prompt_tokens or 0,
        completion_tokens=s.llm_completion_tokens or 0,
        tokens_per_test_point=s.llm_tokens_per_test_point,
        prompts=prompts,
        wrong=wrong,
    )


def prompt_views() -> list[PromptView]:
    """The fixed prompts as this build's package ships them."""
    from evals.llm import PROMPT_NAMES, prompt, prompt_digests

    digests = prompt_digests()
    return [PromptView(name=name, file=f"evals/llm/prompts/{name}.txt", digest=digests[name], text=prompt(name)) for name in PROMPT_NAMES]


def _category_row(row: dict[str, Any]) -> CategoryRow:
    evidence = row["evidence_recall_at_k"]
    interval = row["interval"] or (None, None)
    return CategoryRow(
        category="(none)" if row["category"] is None else row["category"],
        hits=row["hits"],
        total=row["total"],
        recall=row["recall"],
        recall_low=interval[0],
        recall_high=interval[1],
        evidence_total=evidence["any"]["total"] if evidence else 0,
        evidence_any=evidence["any"]["recall"] if evidence else None,
        evidence_all=evidence["all"]["recall"] if evidence else None,
        unanswerable=row["unanswerable"],
    )


def _evidence_row(block: dict[str, Any] | None) -> CategoryRow | None:
    if block is None:
        return None
    any_, all_ = block["any"], block["all"]
    interval = any_["interval"] or (None, None)
    return CategoryRow(
        category="all",
        hits=any_["hits"],
        total=any_["total"],
        recall=any_["recall"],
        recall_low=interval[0],
        recall_high=interval[1],
        evidence_total=any_["total"],
        evidence_any=any_["recall"],
        evidence_all=all_["recall"],
        unanswerable=0,
    )


def _history_pages(
    by_config: dict[tuple[str, str], list[RunSummary]], env: jinja2.Environment, output: _Output, paths: _Paths, note: str
) -> None:
    index_rows = []
    for cid in sorted(by_config, key=lambda c: _config_order(by_config[c][0])):
        runs = list(reversed(by_config[cid]))  # oldest first
        info = config_info(runs[-1], paths)
        reasons = [""] + [drop_reason(prev, cur) for prev, cur in zip(runs, runs[1:], strict=False)]
        approx = any(is_approx(r.tokenizer) for r in runs)
        rows = [
            HistoryRow(
                run_id=r.run_id,
                run_href=paths.run(r.run_id),
                commit=r.commit,
                commit_short=short_commit(r.commit),
                dirty=r.dirty,
                date=r.date,
                recall=r.recall,
                recall_low=r.recall_low,
                recall_high=r.recall_high,
                hits=r.hits,
                total=r.total,
                tokens=r.tokens_per_test_point,
                approx_tokens=is_approx(r.tokenizer),
                drop=reason,
            )
            for r, reason in zip(runs, reasons, strict=True)
        ]
        series = [
            SeriesPoint(
                value=r.recall,
                low=r.recall_low,
                high=r.recall_high,
                label=short_commit(r.commit)[:7] + ("*" if r.dirty else ""),
                title=f"{r.date} {short_commit(r.commit)}{' (dirty)' if r.dirty else ''}: recall {pct(r.recall)} "
                f"[{pct(r.recall_low)}, {pct(r.recall_high)}], {r.hits}/{r.total}" + (f"; drop: {reason}" if reason else ""),
                href=paths.run(r.run_id),
                flagged=bool(reason),
            )
            for r, reason in zip(runs, reasons, strict=True)
        ]
        token_series = [
            SeriesPoint(
                value=r.tokens_per_test_point,
                low=None,
                high=None,
                label=p.label,
                title=f"{r.date} {short_commit(r.commit)}: {num_text(r.tokens_per_test_point)} tokens per test point"
                + (" (estimated)" if is_approx(r.tokenizer) else ""),
                href=p.href,
                flagged=False,
            )
            for r, p in zip(runs, series, strict=True)
        ]
        href = info.history_href
        drops = sum(bool(reason) for reason in reasons)
        output.page(
            env,
            href,
            HistoryPage(
                title=f"History: {info.strategy} ({info.config_key}) on {info.corpus_name}",
                root=_root_of(href),
                nav="history",
                store_note=note,
                config=info,
                recall_chart=series_chart(series, title=f"recall@{info.k} across runs", y_label="recall@k", recall=True),
                tokens_chart=series_chart(
                    token_series,
                    title="tokens per test point across runs",
                    y_label="tokens per test point" + (" (some estimated)" if approx else ""),
                    recall=False,
                ),
                approx_tokens=approx,
                rows=list(reversed(rows)),
                drops=drops,
            ),
        )
        index_rows.append((info, len(runs), drops))
    output.page(
        env,
        "history/index.html",
        HistoryIndexPage(title="History", root="../", nav="history", store_note=note, configs=index_rows),
    )


def _config_order(s: RunSummary) -> tuple:
    return (s.corpus_name, s.corpus_digest, s.strategy, s.config_key)


def _run_ref(s: RunSummary, paths: _Paths) -> RunRef:
    return RunRef(
        run_id=s.run_id,
        href=paths.run(s.run_id),
        commit_short=short_commit(s.commit),
        dirty=s.dirty,
        date=s.date,
        hits=s.hits,
        total=s.total,
        recall=s.recall,
        recall_low=s.recall_low,
        recall_high=s.recall_high,
    )


def _compare_page(
    pairs: dict[tuple[str, str], tuple[RunSummary, RunSummary] | None],
    by_config: dict[tuple[str, str], list[RunSummary]],
    held: dict[str, StoredRun],
    paths: _Paths,
    note: str,
) -> ComparePage:
    sections = []
    single = []
    for cid in sorted(pairs, key=lambda c: _config_order(by_config[c][0])):
        pair = pairs[cid]
        info = config_info(by_config[cid][0], paths)
        if pair is None:
            single.append(info)
            continue
        older, newer = pair
        comparison = compare_runs(held[older.run_id], held[newer.run_id])
        flips = [
            FlipRow(
                conversation_id=flip.conversation_id,
                turn_index=flip.turn_index,
                question=flip.question,
                became=became,
                older_href=f"{paths.conversation(older.run_id, flip.conversation_id)}#tp-{flip.turn_index}",
                newer_href=f"{paths.conversation(newer.run_id, flip.conversation_id)}#tp-{flip.turn_index}",
            )
            for became, group in (("miss", comparison.lost), ("hit", comparison.gained))
            for flip in group
        ]
        sections.append(
            CompareSection(
                anchor=f"cmp-{paths.history(*cid).removeprefix('history/').removesuffix('.html')}",
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
            )
        )
    return ComparePage(
        title="Compare the two latest commits",
        root="",
        nav="compare",
        store_note=note,
        sections=sections,
        single_commit=single,
    )


@dataclass(frozen=True)
class _Job:
    """What a worker process needs to render runs on its own."""

    store_path: Path
    templates_dir: Path
    root: Path
    summaries: list[RunSummary]
    note: str


_worker: tuple[Store, jinja2.Environment, _Paths, str, Path, _Fragments] | None = None


def _worker_start(job: _Job) -> None:
    global _worker
    store = Store.open(job.store_path, read_only=True)
    atexit.register(store.close)
    env = make_environment(job.templates_dir)
    _worker = (store, env, _Paths(job.summaries), job.note, job.root, _Fragments(env))


def _worker_render(run_id: str) -> tuple[int, int, int, tuple[int, str]]:
    """Render one run's pages in a worker process and write them; return what was written."""
    assert _worker is not None
    store, env, paths, note, root, cache = _worker
    output = _Output(root)
    _run_pages(store.get_run(run_id), env, output, paths, note, cache)
    output.flush()
    return output.stats()


def default_workers(runs: int) -> int:
    """Worker processes for a build: one per CPU (at most 4), none for small stores where start-up would dominate."""
    return 1 if runs < PARALLEL_FROM else max(1, min(os.cpu_count() or 1, 4))


def _render_in_process(
    store: Store, env: jinja2.Environment, output: _Output, paths: _Paths, note: str, run_ids: list[str], needed: set[str]
) -> dict[str, StoredRun]:
    """Every run's pages, here; returns the runs the compare page needs."""
    held: dict[str, StoredRun] = {}
    cache = _Fragments(env)
    for run_id in run_ids:
        stored = store.get_run(run_id)
        _run_pages(stored, env, output, paths, note, cache)
        if run_id in needed:
            held[run_id] = stored
        output.flush()
    return held


def _fetch(store: Store, paths: _Paths, run_ids: set[str]) -> dict[str, StoredRun]:
    held = {}
    for run_id in sorted(run_ids):
        stored = held[run_id] = store.get_run(run_id)
        paths.set_conversations(run_id, [c.conversation_id for c in stored.run.conversations])
    return held


def _build_all(store: Store, env: jinja2.Environment, output: _Output, job: _Job, workers: int | None) -> int:
    summaries = store.runs()
    latest = store.latest_per_configuration()
    paths = _Paths(summaries)
    note = _store_note(summaries)
    by_config: dict[tuple[str, str], list[RunSummary]] = defaultdict(list)
    for summary in summaries:  # newest first
        by_config[config_id(summary)].append(summary)
    pairs = {cid: _two_latest_commits(runs) for cid, runs in by_config.items()}
    needed = {run.run_id for pair in pairs.values() if pair for run in pair}
    workers = default_workers(len(summaries)) if workers is None else workers
    if workers <= 1:
        held = _render_in_process(store, env, output, paths, note, sorted(s.run_id for s in summaries), needed)
        _site_pages(summaries, latest, by_config, pairs, held, env, output, paths, note)
        return len(summaries)
    # Runs are independent, so worker processes (spawned, each with its own
    # read-only connection) render them and write their files straight into
    # the build directory, biggest first so no worker is left with a long tail,
    # while this process makes the pages that span runs.
    job = dataclasses.replace(job, summaries=summaries, note=note)
    order = sorted(summaries, key=lambda s: (-s.context_tokens, s.run_id))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start, initargs=(job,)) as pool:
        futures = [pool.submit(_worker_render, s.run_id) for s in order]
        try:
            held = _fetch(store, paths, needed)
            _site_pages(summaries, latest, by_config, pairs, held, env, output, paths, note)
            for future in futures:
                output.add(future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return len(summaries)


def _site_pages(
    summaries: list[RunSummary],
    latest: list[RunSummary],
    by_config: dict[tuple[str, str], list[RunSummary]],
    pairs: dict[tuple[str, str], tuple[RunSummary, RunSummary] | None],
    held: dict[str, StoredRun],
    env: jinja2.Environment,
    output: _Output,
    paths: _Paths,
    note: str,
) -> None:
    """The pages that span runs: leaderboard and its downloads, history, compare, about."""
    boards = leaderboard(latest, paths)
    output.page(
        env,
        "index.html",
        IndexPage(title="Leaderboard", root="", nav="leaderboard", store_note=note, boards=boards, run_count=len(summaries)),
    )
    records = leaderboard_records(boards, {s.run_id: s for s in latest})
    output.text("leaderboard.json", json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    output.text("leaderboard.csv", leaderboard_csv(records))
    _history_pages(by_config, env, output, paths, note)
    output.page(env, "compare.html", _compare_page(pairs, by_config, held, paths, note))
    output.page(
        env,
        "about.html",
        AboutPage(
            title="Methodology",
            root="",
            nav="about",
            store_note=note,
            exact_tokenizer=EXACT,
            approx_tokenizer=APPROXIMATE,
            prompts=prompt_views(),
        ),
    )


def _root_of(path: str) -> str:
    return "../" * path.count("/")


def _store_note(summaries: list[RunSummary]) -> str:
    if not summaries:
        return "Built from an empty results store."
    newest = max(s.timestamp for s in summaries)
    return f"Built from {len(summaries)} run{'s' if len(summaries) != 1 else ''}; newest run {newest.strftime('%Y-%m-%d %H:%M UTC')}."


def _prepare_out_dir(out_dir: Path) -> Path:
    """A fresh sibling directory to build into; refuses to target a directory this builder did not make."""
    out_dir = out_dir.absolute()
    if out_dir.exists():
        if not out_dir.is_dir():
            raise SiteError(f"output {out_dir} exists and is not a directory")
        if any(out_dir.iterdir()) and not (out_dir / MARKER).exists():
            raise SiteError(
                f"output {out_dir} is not empty and was not made by evals build-site (no {MARKER} file); "
                "refusing to replace it: choose an empty or new directory"
            )
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        building = out_dir.parent / f".{out_dir.name}.building-{os.getpid()}"
        if building.exists():
            shutil.rmtree(building)
        building.mkdir()
    except OSError as exc:
        raise SiteError(f"cannot create the output next to {out_dir}: {exc.strerror or exc}") from exc
    return building


def _swap(building: Path, out_dir: Path) -> None:
    out_dir = out_dir.absolute()
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    try:
        if out_dir.exists():
            out_dir.rename(old)
        building.rename(out_dir)
    except OSError as exc:
        raise SiteError(f"cannot move the new site into {out_dir}: {exc.strerror or exc}") from exc
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def _copy_static(templates_dir: Path, output: _Output) -> None:
    static = templates_dir / "static"
    if not static.is_dir():
        return
    for path in sorted(static.rglob("*")):
        if path.is_file():
            output.files[f"static/{path.relative_to(static).as_posix()}"] = path.read_bytes()


def build_site(
    store_path: Path,
    out_dir: Path,
    *,
    templates_dir: Path | None = None,
    workers: int | None = 1,
) -> BuildReport:
    """Render the static site for the store at ``store_path`` into ``out_dir``.

    ``out_dir`` is replaced whole (it must be new, empty, or an earlier
    build's output). The store file itself is published as
    ``data/results.duckdb``, so the next CI run can restore and append to it.
    ``workers`` is the number of processes rendering runs: 1 (the default)
    renders in this process; ``None`` picks one per CPU, up to 4, for stores
    of 8 runs or more. Worker processes are spawned, so a script that asks
    for them must guard its entry point with ``if __name__ == "__main__":``
    (the ``evals`` command does).
    """
    from evals.site._render import DEFAULT_TEMPLATES

    clock = time.perf_counter()
    templates_dir = (Path(templates_dir) if templates_dir is not None else DEFAULT_TEMPLATES).absolute()
    if not (templates_dir / "base.html").is_file():
        raise SiteError(f"no site templates in {templates_dir} (expected base.html there)")
    env = make_environment(templates_dir)
    store_path = Path(store_path).absolute()
    building = _prepare_out_dir(Path(out_dir))
    output = _Output(building)
    try:
        with Store.open(store_path, read_only=True) as store:
            job = _Job(store_path=store_path, templates_dir=templates_dir, root=building, summaries=[], note="")
            run_count = _build_all(store, env, output, job, workers)
        _copy_static(templates_dir, output)
        output.text(MARKER, "Made by `evals build-site`; the next build replaces this whole directory.\n")
        output.files["data/results.duckdb"] = store_path.read_bytes()
        output.flush()
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    _swap(building, Path(out_dir))
    return BuildReport(
        out_dir=Path(out_dir),
        runs=run_count,
        pages=output.pages,
        files=output.written_files,
        bytes=output.written_bytes,
        largest_page=output.largest[1],
        largest_page_bytes=output.largest[0],
        seconds=time.perf_counter() - clock,
    )
