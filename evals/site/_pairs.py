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
(``transcripts/<corpus>/points.js``, made once per corpus). They are scripts that set a global, not JSON
fetched, so a page works from ``file://`` as well as on GitHub Pages and from ``evals serve``;
``static/compare.js`` draws them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import orjson

from evals.analysis.compare import Comparison, compare_runs
from evals.judge.headline import Verdict, run_verdicts
from evals.judge.metrics import ScoredRun
from evals.judge.stats import mcnemar_exact
from evals.model.formatting import p_value_text, short_commit
from evals.site._output import Output
from evals.site._pages import PairCategory, PairFlip, PairPage, PairRun
from evals.site._publisher import CorpusSource, Publisher, RunSource, Site
from evals.site._turn_ids import TurnIds
from evals.site._views import settings_text
from evals.store import RunSummary, StoredRun
from evals.views.site_paths import POINTS_PER_PAGE, Paths, corpus_dir, root_of
from evals.views.tables import caveats, ceiling, ranked

__all__ = ["PairsPublisher", "board_order", "points_data", "flip_anchor", "pair_href", "pairs", "run_data"]

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


def flip_anchor(conversation_id: str, turn: int) -> str:
    """A flipped question's id on a compare page: ``tp-<conversation>-<turn>`` (whitespace made ``_``)."""
    return "tp-" + "_".join(conversation_id.split()) + f"-{turn}"


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


def board_order(summaries: list[RunSummary]) -> list[RunSummary]:
    """One corpus's runs as its leaderboard lists them: the memories grouped by k (smallest first), each group
    ranked by the headline (:func:`evals.views.tables.ranked`), then the ceilings, which are never ranked."""
    order = ranked(summaries)
    memories = [s for s in order if not ceiling(s)]
    return [s for k in sorted({s.k for s in memories}) for s in memories if s.k == k] + [s for s in order if ceiling(s)]


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
        for cid, _, _, contents, points in corpus.conversations():
            ids = TurnIds(*sessions.get(cid, (None, None)))
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
        output.raw(points_data(corpus.digest), _script("evalsPoints", corpus.digest[:16], found))

    def publish_run(self, run: RunSource, site: Site, output: Output) -> None:
        output.raw(run_data(site.paths, run.summary.run_id), _script("evalsRuns", run.summary.run_id, _run_data(run, site)))

    def publish(self, site: Site, output: Output) -> None:
        for a, b in pairs(site):
            href = pair_href(site.paths, a.run_id, b.run_id)
            output.page(site.env, href, pair_page(site, site.stored[a.run_id], site.stored[b.run_id], href))


def _run_data(run: RunSource, site: Site) -> dict[str, Any]:
    """What the compare pages need of one run: per conversation its drill-down pages, and per test point
    (in turn order) its verdict, its first k records (a turn's number, or a record's start when it is no
    turn; "all" for a whole history), its answer and the judge's verdict; and the turns those records are,
    each with the benchmark's name for it, its date and its start."""
    s = run.summary
    rule = s.headline.rule
    paths = site.paths
    conversations: dict[str, Any] = {}
    turns: dict[str, dict[int, list[str]]] = {}
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
            contents = [text for _, text in part.transcripts.get(cid, [])]
            ids = TurnIds(part.sessions.get(cid), part.dates.get(cid))
            refs_of = part.record_turns.get(cid, [])
            answers = part.answers.points[index] if part.answers is not None else None
            seen = turns.setdefault(cid, {})
            points = []
            for i, point in enumerate(conversation.test_points):
                records = point.retrieved_records
                refs = refs_of[i] if i < len(refs_of) and len(refs_of[i]) == len(records) else [None] * len(records)
                whole = len(refs) == point.turn_index > 0 and all(ref == t for t, ref in enumerate(refs))
                shown: Any = "all"
                if not whole:
                    shown = []
                    for record, ref in zip(records[: s.k], refs[: s.k], strict=True):
                        if ref is None:
                            shown.append(_clip(record))
                            continue
                        shown.append(ref)
                        if ref not in seen and ref < len(contents):
                            seen[ref] = [ids.label(ref), ids.date(ref), _clip(contents[ref])]
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
        "turns": {cid: {str(t): row for t, row in sorted(rows.items())} for cid, rows in turns.items() if rows},
    }


def _verdicts_of(part: StoredRun, metric: str) -> list[list[Verdict]]:
    """A slice's verdicts, per conversation (:func:`evals.judge.headline.run_verdicts`)."""
    return run_verdicts(ScoredRun(part.run, part.scores), metric)


@dataclass(frozen=True)
class _Point:
    category: str | None


def _points(stored: StoredRun) -> dict[tuple[str, int], _Point]:
    return {
        (result.conversation_id, point.turn_index): _Point(point.category)
        for result in stored.run.conversations
        for point in result.test_points
    }


def _pair_run(s: RunSummary, paths: Paths, letter: str) -> PairRun:
    head = s.headline
    return PairRun(
        letter=letter,
        run_id=s.run_id,
        strategy=s.strategy,
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
    )


def pair_page(site: Site, a: StoredRun, b: StoredRun, href: str) -> PairPage:
    """The page of runs ``a`` and ``b``: their headlines, the paired test and every flipped question."""
    paths = site.paths
    comparison: Comparison = compare_runs(a, b, verdicts=site.computed.verdicts)
    facts = _points(a)
    order = {c.conversation_id: n for n, c in enumerate(a.run.conversations)}
    flips = []
    by_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for letter, group in (("a", comparison.lost), ("b", comparison.gained)):
        for flip in sorted(group, key=lambda f: (order.get(f.conversation_id, 0), f.turn_index)):
            fact = facts[flip.conversation_id, flip.turn_index]
            category = fact.category if fact.category is not None else "(none)"
            by_category[category][0 if letter == "a" else 1] += 1
            flips.append(PairFlip(flip=letter, anchor=flip_anchor(flip.conversation_id, flip.turn_index), question=flip.question))
    categories = [
        PairCategory(name, only_a, only_b, p_value_text(mcnemar_exact(only_a, only_b)))
        for name, (only_a, only_b) in sorted(by_category.items(), key=lambda item: _category_key(item[0]))
    ]
    answers = comparison.answers
    root = root_of(href)
    return PairPage(
        title=f"{a.summary.strategy} vs {b.summary.strategy} on {a.summary.corpus_name}",
        root=root,
        nav="compare",
        store_note=site.note,
        store_href=site.store_href,
        navigation=site.navigation,
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


def _category_key(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)
