"""Two runs side by side: ``compare/<A>-vs-<B>.html`` for any two runs of one corpus.

A reviewer asks whether memory A beats memory B on a benchmark, by how much, whether the difference is
real, and on which questions. For every two latest runs of a corpus (in leaderboard order: A ranks above
B), and for every configuration's two latest commits (A the older), a page shows both headlines with
their intervals, McNemar's exact test on the headline rule (:func:`evals.analysis.compare.compare_runs`),
the flips per category, and every flipped question: a ``<section data-flip="a|b" id="tp-<conversation>-<turn>">``
holding its question; with JavaScript, its gold answer, its evidence turns named as the benchmark names
them (LoCoMo's ``D1:12``) with their dates, and both runs' first k records side by side.

So that a pair costs its flips and not its texts, the rest is drawn in the browser from data files: each
run's verdicts, top-k record references and answers (``runs/<run>.data.js``, made with the run's pages
and reused with them) and each corpus's test points with their evidence turns
(``transcripts/<corpus>/points.js``, made once per corpus, which also names every turn of the corpus, so a run's
records are turn numbers). They are scripts that set a global, not JSON
fetched, so a page works from ``file://`` as well as on GitHub Pages and from ``evals serve``;
``static/compare.js`` draws them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from evals.analysis.compare import Comparison, compare_runs
from evals.benchmarks.turn_ids import TurnIds
from evals.judge.headline import Verdict, run_verdicts
from evals.judge.metrics import ScoredRun
from evals.model.formatting import is_estimated, p_value_text, short_commit
from evals.site._drilldown import runs_of
from evals.site._output import Output
from evals.site._pages import Page
from evals.site._publisher import CorpusSource, Publisher, RunSource, Site
from evals.site._views import settings_text
from evals.store import RunSummary, StoredRun
from evals.views.names import row_name
from evals.views.site_paths import POINTS_PER_PAGE, Paths, corpus_dir
from evals.views.tables import Caveat, board_order, caveats

__all__ = [
    "PairCategory",
    "PairFlip",
    "PairPage",
    "PairRun",
    "PairsPublisher",
    "flip_anchor",
    "pair_href",
    "pairs",
    "points_data",
    "run_data",
]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class PairRun:
    """One side of a comparison: the run, its headline with its interval, where its data file is."""

    letter: str  # "A" or "B"
    run_id: str
    strategy: str
    settings: str
    config_key: str
    model: str
    k: int
    commit_short: str
    dirty: bool
    date: str
    href: str  # its run page
    data_href: str  # its data file for the side-by-side view (evals.site._pairs.run_data)
    label: str  # the headline's name (evals.judge.headline)
    recall: float | None
    low: float | None
    high: float | None
    hits: int
    total: int
    answers: bool  # the run has answers
    caveats: list[Caveat] = field(default_factory=list)
    tokens: float | None = None  # tokens per test point: what its records cost a reader
    approx_tokens: bool = False  # counted by an estimate, not the exact tokenizer


@dataclass(frozen=True)
class PairCategory:
    """One category's flips: test points only A hit, only B hit, and McNemar's p over them."""

    name: str
    only_a: int
    only_b: int
    p_text: str


@dataclass(frozen=True)
class PairFlip:
    """A test point the two runs' headline verdicts disagree on."""

    flip: str  # "a": only A hit; "b": only B hit
    anchor: str  # tp-<conversation>-<turn> (the rest, drawn with JavaScript, comes from the corpus's and runs' data files)
    question: str
    category: str = "(none)"  # the benchmark's category or ability, as "Flips by category" names it


@dataclass(frozen=True)
class PairPage(Page):
    """Two runs of one corpus side by side: headlines, the paired test, flips by category and each flip."""

    template: ClassVar[str] = "pair.html"

    corpus_name: str
    corpus_key: str  # the corpus's key in its data file
    points_href: str  # the corpus's test points and evidence turns (evals.site._pairs.points_data)
    a: PairRun
    b: PairRun
    population: str  # which test points the headline counts
    only_a: int  # hit by A alone
    only_b: int
    both: int
    neither: int
    shared: int  # test points in both runs: the pairs the test compares
    unmatched: int  # test points in only one of them
    p_text: str  # McNemar's exact two-sided p over the shared test points
    categories: list[PairCategory]
    flips: list[PairFlip]  # only A hit first, then only B, each in conversation and turn order
    answers_line: str = ""  # the judged answers compared, where both runs have them
    same_ranking: str = ""  # A and B return the same top-k on >= 99% of test points (evals.analysis.same_ranking)

SNIPPET = 200  # characters of a record or evidence turn the side-by-side view quotes (the whole turn is linked)
ANSWER = 400  # characters of an answer quoted
VERDICT_CODES = {"hit": "h", "miss": "m", "unanswerable": "u", "unscored": "s"}


def pair_href(paths: Paths, a: str, b: str) -> str:
    """The page comparing runs ``a`` and ``b`` (site-root relative)."""
    return f"compare/{paths.run_slug[a]}-vs-{paths.run_slug[b]}.html"


def run_data(paths: Paths, run_id: str) -> str:
    """A run's data for the compare pages: made with its pages, reused with them."""
    return f"runs/{paths.run_slug[run_id]}.data.js"


def points_data(digest: str) -> str:
    """A corpus's test points and evidence turns for the compare pages: made once per corpus."""
    return f"{corpus_dir(digest)}/points.js"


# What counts as a space in an id, spelt out so static/compare.js splits the same way: Python's str.isspace()
# and JavaScript's \s disagree on \x1c-\x1f, \x85 (Python's) and U+FEFF (JavaScript's), so each takes both.
ID_SPACES = "\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_ID_SPACE = re.compile(f"[{ID_SPACES}]+")


def flip_anchor(conversation_id: str, turn: int) -> str:
    """A flipped question's id on a compare page: ``tp-<conversation>-<turn>`` (each run of spaces made ``_``)."""
    return "tp-" + "_".join(part for part in _ID_SPACE.split(conversation_id) if part) + f"-{turn}"


def _clip(text: str, size: int = SNIPPET) -> str:
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _script(variable: str, key: str, value: Any) -> bytes:
    """A data file: ``value`` under ``key`` of the global ``variable`` (standard JSON inside)."""
    head = f"(window.{variable} = window.{variable} || {{}})[".encode()
    return head + orjson.dumps(key) + b"] = " + orjson.dumps(value) + b";\n"


def pairs(site: Site) -> list[tuple[RunSummary, RunSummary]]:
    """Every pair a compare page is made for: any two latest runs of one corpus, the one ranked higher
    first (memories by the headline, then ceilings), and each configuration's two latest commits, older first."""
    found: dict[tuple[str, str], tuple[RunSummary, RunSummary]] = {}
    by_corpus: dict[str, list[RunSummary]] = defaultdict(list)
    for summary in site.latest:
        by_corpus[summary.corpus_digest].append(summary)
    for digest in sorted(by_corpus):
        order = board_order(by_corpus[digest])
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                found[a.run_id, b.run_id] = (a, b)
    for runs in site.by_config.values():  # newest first
        newer = runs[0]
        older = next((r for r in runs[1:] if r.commit != newer.commit), None)
        if older is not None and (newer.run_id, older.run_id) not in found:
            found[older.run_id, newer.run_id] = (older, newer)
    return list(found.values())


class PairsPublisher(Publisher):
    """compare/<A>-vs-<B>.html for every pair of runs the leaderboard lets a reader pick, and the data they draw from."""

    name = "pairs"
    pages = (PairPage,)

    def runs_needed(self, site: Site) -> set[str]:
        return {run.run_id for pair in pairs(site) for run in pair}

    def publish_corpus(self, corpus: CorpusSource, site: Site, output: Output) -> None:
        """Every test point of the corpus: ``{conversation: {turn: [question, gold answer, category, [[evidence turn,
        its name, its date, its start], …]]}}``."""
        found: dict[str, dict[str, Any]] = {}
        sessions = corpus.sessions()
        benchmark = next((s.benchmark for s in site.latest if s.corpus_digest == corpus.digest), None)
        # Every turn's name, date and start, once per corpus: what a run's records are (a run names its turns by number).
        every: dict[str, list[list[str]]] = {}
        for cid, _, _, contents, points in corpus.conversations():
            ids = TurnIds(*sessions.get(cid, (None, None)), benchmark=benchmark)
            every[cid] = [[ids.label(t), ids.date(t), _clip(text)] for t, text in enumerate(contents)]
            found[cid] = {
                str(p["turn_index"]): [
                    p["question"],
                    p["expected_fact"],
                    p.get("category"),
                    [
                        [t, ids.label(t), ids.date(t), _clip(contents[t])]
                        for t in p.get("evidence_turns") or ()
                        if 0 <= t < len(contents)
                    ],
                ]
                for p in points
            }
        output.raw(
            points_data(corpus.digest),
            _script("evalsPoints", corpus.digest[:16], found) + _script("evalsTurns", corpus.digest[:16], every),
        )

    def publish_run(self, run: RunSource, site: Site, output: Output) -> None:
        output.raw(run_data(site.paths, run.summary.run_id), _script("evalsRuns", run.summary.run_id, _run_data(run, site)))

    def publish(self, site: Site, output: Output) -> None:
        for a, b in pairs(site):
            href = pair_href(site.paths, a.run_id, b.run_id)
            output.page(site.env, href, pair_page(site, site.stored[a.run_id], site.stored[b.run_id], href))


def _run_data(run: RunSource, site: Site) -> dict[str, Any]:
    """What the compare pages need of one run: per conversation its drill-down pages, and per test point
    (in turn order) its verdict, its first k records (a turn's number, or a record's start when it is no
    turn, or [start, turns] for a record holding several turns: its start's place in ``texts``, the turns as runs
    [first, last]; "all" for a whole history), its answer and the
    judge's verdict. The turns those records are (each's name in the benchmark, date and start) are the corpus's,
    written once with its test points (``evalsTurns`` in ``points.js``), not once per run."""
    s = run.summary
    rule = s.headline.rule
    paths = site.paths
    conversations: dict[str, Any] = {}
    # The starts of records holding several turns, each once: a session is retrieved at many test points.
    texts: list[str] = []
    text_of: dict[str, int] = {}
    kept = site.computed.known(s.run_id, rule.metric)  # the run pages' verdicts, when they were made first
    position = 0
    for part in run.parts():
        if kept is not None:
            split = kept[position : position + len(part.run.conversations)]
        else:
            split = _verdicts_of(part, rule.metric)
        position += len(part.run.conversations)
        for index, conversation in enumerate(part.run.conversations):
            cid = conversation.conversation_id
            refs_of = part.record_turns.get(cid, [])
            answers = part.answers.points[index] if part.answers is not None else None
            points = []
            for i, point in enumerate(conversation.test_points):
                records = point.retrieved_records
                refs = refs_of[i] if i < len(refs_of) and len(refs_of[i]) == len(records) else [None] * len(records)
                whole = len(refs) == point.turn_index > 0 and all(ref == t for t, ref in enumerate(refs))
                shown: Any = "all"
                if not whole:
                    shown = []
                    held = point.ranked_held or []
                    for rank, (record, ref) in enumerate(zip(records[: s.k], refs[: s.k], strict=True)):
                        if rank < len(held) and len(held[rank]) > 1:  # a record holding several turns: its text and them
                            start = _clip(record)
                            if start not in text_of:
                                text_of[start] = len(texts)
                                texts.append(start)
                            shown.append([text_of[start], [list(r) for r in runs_of(list(held[rank]))]])
                            continue
                        if ref is None:
                            shown.append(_clip(record))
                            continue
                        shown.append(ref)
                entry: list[Any] = [point.turn_index, VERDICT_CODES[split[index][i]], shown]
                if answers is not None:
                    answer = answers[i]
                    judged = answer.verdict or ("correct" if answer.correct else "wrong" if answer.correct is False else None)
                    entry += [_clip(answer.answer, ANSWER), judged]
                points.append(entry)
            place = [paths.conversation(s.run_id, cid, n) for n in range(max(1, -(-len(points) // POINTS_PER_PAGE)))]
            conversations[cid] = {"pages": place, "points": points}
    return {
        "k": s.k,
        "label": rule.label,
        "perPage": POINTS_PER_PAGE,
        "conversations": conversations,
        "texts": texts,
    }


def _verdicts_of(part: StoredRun, metric: str) -> list[list[Verdict]]:
    """A slice's verdicts, per conversation (:func:`evals.judge.headline.run_verdicts`)."""
    return run_verdicts(ScoredRun(part.run, part.scores), metric)


def _pair_run(s: RunSummary, paths: Paths, letter: str) -> PairRun:
    head = s.headline
    return PairRun(
        letter=letter,
        run_id=s.run_id,
        strategy=row_name(s),
        settings=settings_text(s.strategy_config),
        config_key=s.config_key,
        model=s.model,
        k=s.k,
        commit_short=short_commit(s.commit),
        dirty=s.dirty,
        date=s.date,
        href=paths.run(s.run_id),
        data_href=run_data(paths, s.run_id),
        label=head.rule.label,
        recall=head.recall,
        low=head.low,
        high=head.high,
        hits=head.hits,
        total=head.total,
        answers=s.answer_model is not None,
        caveats=caveats(s),
        tokens=s.tokens_per_test_point,
        approx_tokens=is_estimated(s.tokenizer),
    )


def pair_page(site: Site, a: StoredRun, b: StoredRun, href: str) -> PairPage:
    """The page of runs ``a`` and ``b``: their headlines, the paired test and every flipped question."""
    paths = site.paths
    comparison: Comparison = compare_runs(a, b, verdicts=site.computed.verdicts)
    order = {c.conversation_id: n for n, c in enumerate(a.run.conversations)}
    flips = []
    for letter, group in (("a", comparison.lost), ("b", comparison.gained)):
        for flip in sorted(group, key=lambda f: (order.get(f.conversation_id, 0), f.turn_index)):
            anchor = flip_anchor(flip.conversation_id, flip.turn_index)
            flips.append(PairFlip(flip=letter, anchor=anchor, question=flip.question, category=flip.category))
    categories = [PairCategory(c.category, c.only_a, c.only_b, p_value_text(c.mcnemar_p)) for c in comparison.by_category()]
    answers = comparison.answers
    return PairPage(
        **site.frame(f"{row_name(a.summary)} vs {row_name(b.summary)} on {a.summary.corpus_name}", "compare", href=href),
        corpus_name=a.summary.corpus_name,
        corpus_key=a.summary.corpus_digest[:16],
        points_href=points_data(a.summary.corpus_digest),
        a=_pair_run(a.summary, paths, "A"),
        b=_pair_run(b.summary, paths, "B"),
        population=a.summary.headline.rule.population,
        only_a=len(comparison.lost),
        only_b=len(comparison.gained),
        both=comparison.still_hit,
        neither=comparison.still_missed,
        shared=comparison.shared,
        unmatched=comparison.only_in_a + comparison.only_in_b,
        p_text=p_value_text(comparison.mcnemar_p),
        same_ranking=_same_ranking(site, a.summary.run_id, b.summary.run_id),
        categories=categories,
        flips=flips,
        answers_line=(
            f"Judged answers on the {answers.shared} test points both runs had judged: A correct {answers.correct_a}, "
            f"B correct {answers.correct_b}; {answers.lost} correct in A only, {answers.gained} in B only "
            f"(McNemar p = {p_value_text(answers.mcnemar_p)})."
            if answers is not None
            else ""
        ),
    )


def _same_ranking(site: Site, a: str, b: str) -> str:
    """The line saying A and B return the same top-k (evals.analysis.same_ranking); "" when they do not."""
    twin = next((t for t in site.same_ranking.get(a, []) if t.other == b), None)
    if twin is None:
        return ""
    if twin.everywhere:
        return (
            f"Tied: A and B returned the same top-k records on every one of the {twin.total:,} test points, so they are "
            "one retriever here, whatever their names, and share a rank."
        )
    return (
        f"Same ranking: A and B returned the same top-k records on {twin.same:,} of {twin.total:,} test points "
        f"({twin.share:.1%}), so they are one retriever here, whatever their names."
    )
