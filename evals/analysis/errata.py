"""The headline "with errata": a run's headline recomputed from the store with an errata file's corrections.

A published answer key has errors (LoCoMo's github.com/snap-research/locomo/issues/34 cites an audit with 99
score-corrupting ones), and a reader may want the figure with them corrected; a leaderboard that silently changed its figures
would no longer be the benchmark everyone else reports. So an errata file (:mod:`evals.benchmarks.errata`: test point ->
corrected evidence, corrected answer, or left out as invalid; with a reason and a source) gives a
*second* figure, labelled "with errata", beside the published one and never over it:

* it is computed at read time from what the store holds of each run (each test point's ranked turns
  and retrieved records), by the same rule and metric as the published headline (:mod:`evals.judge.headline`),
  and never written to the store;
* the published figure is recomputed the same way first, and must come out as stored: where it does
  not (a run whose rankings were not kept), there is no figure with errata rather than one that
  mixes two computations;
* it is recorded by the errata file's path, SHA-256, source and origin.

An errata file corrects one corpus: the one corpus of the runs shown whose conversations include every one
it names (and that declares its ``benchmark``, if it names one); a file that more than one corpus matches
is refused. A test point published without evidence
that an erratum gives evidence is ranked by the turns of its stored records (down to k).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.benchmarks.errata import (
    Errata,
    ErrataFile,
    ErrataTarget,
    TargetConversation,
    corrected_fields,
    parse_errata,
    resolve_errata,
)
from evals.errors import EvalsError
from evals.judge.headline import Headline, Verdict, verdict_of
from evals.judge.metrics import METRICS, PROPORTION, MetricValue, ScoredRun, point_values, proportion
from evals.judge.scoring import PointScore, Scores, score_point
from evals.model.results import ConversationResult, TestPointResult
from evals.store import RunSummary, Store, StoredRun

__all__ = ["EXCLUDED", "ErrataFigure", "Figures", "errata_figures", "errata_files", "figure_of", "load_errata", "stored_target"]

EXCLUDED = "excluded"  # a test point's verdict with errata that leave it out as invalid


@dataclass(frozen=True)
class ErrataFigure:
    """One run's headline with errata, beside its published one."""

    run_id: str
    corpus_digest: str
    errata: Errata
    published: Headline  # as stored
    value: MetricValue | None  # with errata; None where it cannot be recomputed (``problem`` says why)
    corrected: int = 0  # test points of the run that an erratum names (excluded ones included)
    excluded: int = 0
    changed: tuple[tuple[str, int, str, str], ...] = ()  # (conversation, turn, verdict as published, with errata)
    problem: str = ""

    @property
    def headline(self) -> Headline:
        return Headline(self.published.rule, self.value)

    @property
    def label(self) -> str:
        return f"{self.published.rule.label} with errata"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``--format json``/``csv`` and the site's downloads."""
        head = self.headline
        return {
            "run_id": self.run_id,
            "label": self.label,
            "metric": head.rule.metric,
            "rule": head.rule.name,
            "value": head.recall,
            "hits": head.hits,
            "total": head.total,
            "low": head.low,
            "high": head.high,
            "corrected": self.corrected,
            "excluded": self.excluded,
            "verdicts_changed": [
                {"conversation": c, "turn": t, "published": before, "with_errata": after} for c, t, before, after in self.changed
            ],
            "problem": self.problem or None,
            "errata": self.errata.record(),
        }


@dataclass(frozen=True)
class Figures:
    """The errata of each corpus (by digest) and each run's figure with them (by run id)."""

    errata: dict[str, Errata]
    runs: dict[str, ErrataFigure]

    def of(self, run_id: str) -> ErrataFigure | None:
        return self.runs.get(run_id)


# -- which files, which corpora ----------------------------------------------------------------------------


def errata_files(paths: Iterable[Path]) -> list[Path]:
    """The errata files ``paths`` give: each an errata JSON file, or a suite file (``*.toml``) whose
    ``[errata]`` table names them (none when it has no such table)."""
    from evals.run.suite import read_suite

    out: list[Path] = []
    for path in paths:
        out.extend(read_suite(Path(path)).errata.values() if Path(path).suffix == ".toml" else [Path(path)])
    return out


def _holds(ids: set[str], name: str) -> bool:
    """As ErrataTarget.find: an id, or the one id whose part after ``NNN_`` is ``name``."""
    return name in ids or sum(i.split("_", 1)[-1] == name for i in ids) == 1


def _corpora(errata: ErrataFile, store: Store, candidates: dict[str, RunSummary]) -> list[str]:
    """The corpora (digests) ``errata`` corrects among ``candidates``: each declaring its benchmark, if it names
    one, and holding every conversation it names. None is an EvalsError naming the file and the entry."""
    if errata.benchmark is not None:
        candidates = {d: s for d, s in candidates.items() if s.benchmark == errata.benchmark}
    ids = {digest: set(store.conversation_ids(digest)) for digest in candidates}
    names = errata.conversations()
    found = [d for d in candidates if all(_holds(ids[d], name) for name in names)]
    if len(found) > 1:
        corpora = ", ".join(f"{candidates[d].corpus_name} ({d[:12]})" for d in found)
        hint = "" if errata.benchmark else ', and none is named by its "benchmark"'
        where = f"its conversations are in {len(found)} corpora in the store ({corpora}){hint}"
        raise errata.fail("errata", f"{where}; one errata file corrects one corpus")
    if found:
        return found
    among = f"a corpus declaring benchmark {errata.benchmark!r}" if errata.benchmark else "a corpus"
    for number, name in enumerate(names):
        if not any(_holds(held, name) for held in ids.values()):
            raise errata.fail(
                f"errata[{number}].conversation", f"{name!r} names no conversation of {among} with runs in the store"
            )
    raise errata.fail(
        "errata",
        f"no single corpus in the store holds every conversation it names ({among}); one errata file corrects one corpus",
    )


def stored_target(store: Store, run_id: str) -> ErrataTarget:
    """What errata are checked against, from the store's copy of the corpus of run ``run_id``."""
    conversations = []
    for part in store.iter_run(run_id):
        for result in part.run.conversations:
            cid = result.conversation_id
            questions = {p.turn_index: p.question for p in result.test_points}
            conversations.append(TargetConversation(cid, result.turn_count, frozenset(part.unrecorded.get(cid, [])), questions))
    return ErrataTarget(tuple(conversations))


def load_errata(store: Store, files: Sequence[Path], summaries: Sequence[RunSummary]) -> dict[str, Errata]:
    """Each corpus's errata (by digest), the corpora being those of ``summaries``; at most one file per corpus."""
    # The corpus is the same in every run on it: its target is read from the run cheapest to read back
    # (fewest retrieved tokens), not from full_history's.
    cheapest: dict[str, RunSummary] = {}
    for summary in summaries:
        held = cheapest.get(summary.corpus_digest)
        if held is None or (summary.context_tokens, summary.run_id) < (held.context_tokens, held.run_id):
            cheapest[summary.corpus_digest] = summary
    found: dict[str, Errata] = {}
    for path in files:
        parsed = parse_errata(path)
        for digest in _corpora(parsed, store, cheapest):
            if digest in found:
                raise parsed.fail(
                    "(top level)",
                    f"corrects corpus {cheapest[digest].corpus_name} ({digest[:12]}), which {found[digest].path} corrects "
                    "already; give one errata file per corpus",
                )
            found[digest] = resolve_errata(parsed, stored_target(store, cheapest[digest].run_id))
    return found


# -- one run's figure ---------------------------------------------------------------------------------------


def _corrected(part: StoredRun, errata: Errata) -> tuple[ScoredRun, int, int]:
    """``part`` with ``errata`` applied (excluded test points taken out, the others corrected and scored
    again), and how many test points the errata named and excluded."""
    conversations: list[ConversationResult] = []
    score_lists: list[list[PointScore]] = []
    named = excluded = 0
    for result, scores in zip(part.run.conversations, part.scores.points, strict=True):
        cid = result.conversation_id
        sessions: list[str | None] = list(part.sessions.get(cid) or [None] * result.turn_count)
        refs = part.record_turns.get(cid, [])
        points: list[TestPointResult] = []
        kept: list[PointScore] = []
        for index, (point, score) in enumerate(zip(result.test_points, scores, strict=True)):
            erratum = errata.entries.get((cid, point.turn_index))
            if erratum is None:
                points.append(point)
                kept.append(score)
                continue
            named += 1
            if erratum.exclude:
                excluded += 1
                continue
            fields = corrected_fields(erratum, sessions)
            if erratum.evidence_turns is not None and point.retrieved_turns is None:
                # Published without evidence, so no ranking was kept: its stored records' turns are the ranking to k.
                turns = list(refs[index]) if index < len(refs) else []
                fields |= {
                    "retrieved_turns": turns,
                    "ranked_turns": turns,
                    "ranked_sessions": [sessions[t] if t is not None else None for t in turns],
                }
            fixed = point.model_copy(update=fields)
            points.append(fixed)
            # The published hit stands unless the answer changed: then the records are matched against the new one.
            kept.append(score_point(fixed, score.record_tokens, hit=None if erratum.corrects_answer else score.hit))
        conversations.append(result.model_copy(update={"test_points": points}))
        score_lists.append(kept)
    run = part.run.model_copy(update={"conversations": conversations})
    return ScoredRun(run, Scores(part.scores.tokenizer, part.scores.conversation_ids, score_lists)), named, excluded


def _verdicts(scored: ScoredRun, metric: str) -> dict[tuple[str, int], tuple[float | None, Verdict]]:
    """Each test point's value of the rule metric, and its verdict."""
    values = point_values(scored, [metric]).columns[metric]
    points = [(c.conversation_id, p) for c in scored.run.conversations for p in c.test_points]
    return {(cid, p.turn_index): (v, verdict_of(v, p.answerable)) for (cid, p), v in zip(points, values, strict=True)}


def _aggregate(values: Iterable[float | None]) -> MetricValue | None:
    """As :func:`evals.judge.metrics.grouped` aggregates a proportion (None where no test point counts)."""
    counted = [v for v in values if v is not None]
    return proportion(round(sum(counted)), len(counted)) if counted else None


def figure_of(store: Store, summary: RunSummary, errata: Errata) -> ErrataFigure:
    """Run ``summary``'s headline with ``errata``, read from ``store`` a slice of conversations at a time."""
    published = summary.headline
    metric = published.rule.metric
    ids = (summary.run_id, summary.corpus_digest)
    if metric not in METRICS or METRICS[metric].kind != PROPORTION:
        return ErrataFigure(*ids, errata, published, None, problem=f"the headline {metric} is not a proportion of test points")
    before: dict[tuple[str, int], tuple[float | None, Verdict]] = {}
    after: dict[tuple[str, int], tuple[float | None, Verdict]] = {}
    named = excluded = 0
    for part in store.iter_run(summary.run_id):
        fixed, in_part, out_part = _corrected(part, errata)
        named, excluded = named + in_part, excluded + out_part
        before |= _verdicts(ScoredRun(part.run, part.scores), metric)
        after |= _verdicts(fixed, metric)
    again = _aggregate(v for v, _ in before.values())
    stored = published.value
    if stored is None or again is None or (again.successes, again.n) != (stored.successes, stored.n):
        return ErrataFigure(
            *ids, errata, published, None, named, excluded,
            problem="the store's rankings of this run do not give its published figure again "
            f"({'none' if again is None else f'{again.successes}/{again.n}'} against {published.hits}/{published.total}), "
            "so no figure with errata is computed from them",
        )  # fmt: skip
    changed = tuple(
        (cid, turn, verdict, after[cid, turn][1] if (cid, turn) in after else EXCLUDED)
        for (cid, turn), (_, verdict) in sorted(before.items())
        if after.get((cid, turn), (None, EXCLUDED))[1] != verdict
    )
    return ErrataFigure(*ids, errata, published, _aggregate(v for v, _ in after.values()), named, excluded, changed)


def errata_figures(store: Store, files: Sequence[Path], summaries: Sequence[RunSummary]) -> Figures:
    """The errata ``files`` (errata JSON or suite files) give for the corpora of ``summaries``, and each of
    those runs' figure with them. An errata file that corrects no corpus there is an EvalsError."""
    paths = errata_files(files)
    if not paths:
        return Figures({}, {})
    if not summaries:
        raise EvalsError(f"{paths[0]}: no run in the store to correct")
    errata = load_errata(store, paths, summaries)
    runs = {s.run_id: figure_of(store, s, errata[s.corpus_digest]) for s in summaries if s.corpus_digest in errata}
    return Figures(errata, runs)
