"""The regression gate: did the head's runs lose to the base's by more than chance, or get slower?

``gate(store, base, head)`` resolves each ref to stored runs, pairs the latest
run of every (corpus, configuration) present on both sides, and for each pair
runs the paired exact McNemar test on the headline metric's test points:
evidence recall where both runs measured it (the corpus labels evidence turns),
keyword recall otherwise. The p-values are adjusted with Holm's method across
the configurations compared, so seven configurations do not make seven chances
of a false alarm. A configuration **regresses** when its adjusted p is below
``alpha`` and it lost more test points than it gained, or when its retrieve p95
latency grew past ``latency_factor`` times the base's, or when, with judged answers on both
sides, some question type (category) lost more verdicts than it gained with a
McNemar p below ``alpha`` after Holm's adjustment across every question type of
every configuration compared. An improvement is reported and never fails the
gate.

Latency is judged on evidence that survives a busy machine: each retrieve call's
wall time less the time its thread waited for a processor (:data:`LATENCY_METRIC`,
``retrieve_latency_unqueued_p95_s``; :func:`evals.run.playthrough.run_queue_clock`). Load
on the machine lengthens the wait, not the call; a strategy that works, sleeps or
waits on I/O for twice as long doubles it. The base is usually made on another
runner at another time than the head, so the plain wall-clock p95
(:data:`WALL_LATENCY_METRIC`) of two runs says more about the two machines than
about the code: where either run lacks the fair figure (a run stored before it
was recorded, a system that does not say), the wall-clock ratio is shown and never
fails the gate.

A ref is, in this order: a run id (that one run); a prefix of a commit some
stored runs were made at; a git ref (branch, tag, ``HEAD``) resolved in
``repo``. For the base, a git ref whose commit has no runs falls back to the
nearest first-parent ancestor that has some (within :data:`BASE_LOOKBACK`
commits): the published store lags the branch while its workflow runs. The head
never falls back. When both refs are run ids, those two runs are compared
directly, whatever their configurations, as long as they share a corpus.

Problems with what was asked (an unknown ref, nothing comparable, an
``allow`` that matches nothing) raise :class:`GateError`, which the CLI turns
into exit code 2; exit code 1 is kept for a regression.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.analysis.compare import Flip, compare_runs
from evals.benchmarks import category_names
from evals.errors import EvalsError
from evals.judge import answer_metrics as qa
from evals.judge.metrics import MetricValue
from evals.judge.stats import holm, mcnemar_exact
from evals.model.formatting import commit_text, short_commit
from evals.model.provenance import first_parents, resolve_commit
from evals.store import RunSummary, Store, StoredRun, StoreError

# A flipped test point's address on the published site: (the base's stored run, conversation, turn) -> URL.
TestPointLink = Callable[[StoredRun, str, int], str]

__all__ = [
    "BASE_LOOKBACK",
    "DEFAULT_ALPHA",
    "DEFAULT_LATENCY_FACTOR",
    "IMPROVEMENT",
    "LATENCY_METRIC",
    "WALL_LATENCY_METRIC",
    "NOISE",
    "NO_CHANGE",
    "REGRESSION",
    "FlippedPoint",
    "GateError",
    "GateResult",
    "GateRow",
    "Side",
    "TypeTest",
    "gate",
    "resolve_side",
]

DEFAULT_ALPHA = 0.05
DEFAULT_LATENCY_FACTOR = 1.5
# A head whose retrieve p95 stays under this never fails on latency: below a millisecond the
# ratio of two small corpora's timings is scheduler noise, not a slower library.
DEFAULT_LATENCY_FLOOR_S = 0.001
# Nor does one whose p95 rests on fewer calls than this, on either side: over a handful of
# test points the p95 is simply the slowest call, and one busy moment of the machine moves it.
LATENCY_MIN_CALLS = 20
LATENCY_METRIC = "retrieve_latency_unqueued_p95_s"  # seconds; what the latency verdict reads (see the module docstring)
WALL_LATENCY_METRIC = "retrieve_latency_p95_s"  # seconds; shown, never judged, where a run lacks LATENCY_METRIC
BASE_LOOKBACK = 20  # commits a base branch may be ahead of its newest stored runs

# What the paired test found, before the latency and --allow are considered.
REGRESSION = "regression"
IMPROVEMENT = "improvement"
NOISE = "within noise"
NO_CHANGE = "no change"

_HEX_PREFIX = re.compile(r"[0-9a-fA-F]{4,40}")


class GateError(EvalsError):
    """The gate cannot compare what was asked: an unknown ref, nothing comparable, an ``allow`` matching nothing."""


@dataclass(frozen=True)
class Side:
    """One side of the gate: what the ref was read as, and the runs it stands for."""

    ref: str  # as given
    kind: str  # "run" (a run id), "commit" (a prefix of a stored commit) or "git" (a ref git resolved)
    commit: str  # the commit its runs were made at
    runs: tuple[RunSummary, ...]  # the latest run of each (corpus, configuration), or the one run
    named: str | None = None  # "git": the commit the ref names
    back: int = 0  # "git": how many first-parent commits before ``named`` the runs were found

    @property
    def is_run(self) -> bool:
        return self.kind == "run"

    @property
    def resolved(self) -> str:
        """How the ref was read, in words: "run 1a2b…", "main → commit 1a2b3c4 (…)"."""
        if self.kind == "run":
            return f"run {self.ref} (commit {commit_text(self.commit, self.runs[0].dirty)})"
        if self.kind == "commit":
            return f"commit {short_commit(self.commit)}"
        text = f"{self.ref} → commit {short_commit(self.commit)}"
        if self.back:
            text += (
                f" ({self.back} commit{'s' if self.back > 1 else ''} before {short_commit(self.named or '')}: "
                "the nearest with stored runs)"
            )
        return text


@dataclass(frozen=True)
class FlippedPoint:
    """A test point that succeeded in the base run and failed in the head run."""

    conversation_id: str
    turn_index: int
    question: str
    expected_fact: str
    href: str | None = None  # the base run's drill-down on the published site, when its URL was given


@dataclass(frozen=True)
class TypeTest:
    """One question type (category) of a configuration: the judge's verdicts on the test points both runs had
    judged, paired in McNemar's exact test, its p adjusted by Holm across every type test of the gate."""

    category: str | None
    label: str  # as tables show it (a LoCoMo category by number first)
    shared: int  # test points of this type judged in both runs
    base_correct: int
    head_correct: int
    lost: int  # correct in base, not in head
    gained: int
    p: float
    p_holm: float
    paired: str  # REGRESSION, IMPROVEMENT, NOISE or NO_CHANGE

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class GateRow:
    """One configuration on one corpus: the base run against the head run."""

    base: RunSummary
    head: RunSummary
    metric: str  # the headline metric the paired test is on
    lost: tuple[FlippedPoint, ...]  # success in base, failure in head
    gained: int  # failure in base, success in head
    shared: int  # test points both runs have an outcome for
    p: float  # exact McNemar, two-sided
    p_holm: float  # adjusted across the rows of the gate
    paired: str  # REGRESSION, IMPROVEMENT, NOISE or NO_CHANGE
    latency_base: float | None  # latency_metric of each run, None when not recorded
    latency_head: float | None
    latency_ratio: float | None  # head / base, None unless both were recorded
    slower: bool  # latency_ratio above the gate's factor, on the fair figure
    latency_metric: str = LATENCY_METRIC  # WALL_LATENCY_METRIC where a run lacks the fair one: shown, not judged
    allowed_by: str | None = None  # the --allow entry that accepts this row's regression
    # With judged answers on both sides: per question type, the paired test of the verdicts.
    types: tuple[TypeTest, ...] = ()
    max_unparsed: float | None = None  # the share of the head's verdicts that may be unparsed (None: no limit)

    @property
    def types_regressed(self) -> tuple[TypeTest, ...]:
        return tuple(t for t in self.types if t.paired == REGRESSION)

    @property
    def base_value(self) -> MetricValue | None:
        return self.base.metric(self.metric)

    @property
    def head_value(self) -> MetricValue | None:
        return self.head.metric(self.metric)

    @property
    def regressed(self) -> bool:
        return self.paired == REGRESSION or self.slower or bool(self.types_regressed)

    @property
    def unparsed(self) -> MetricValue | None:
        """The head run's unparsed verdicts (of those counted); None without judged answers."""
        return self.head.metric("answer_unparsed")

    @property
    def too_unparsed(self) -> bool:
        """More of the head's verdicts unparsed than ``max_unparsed`` allows: its accuracy says little."""
        value = self.unparsed
        if self.max_unparsed is None or value is None or value.n == 0:
            return False
        return value.successes / value.n > self.max_unparsed

    @property
    def failed(self) -> bool:
        """Regressed and not accepted with --allow, or too many unparsed verdicts (which --allow does not accept)."""
        return (self.regressed and self.allowed_by is None) or self.too_unparsed

    @property
    def same_configuration(self) -> bool:
        return self.base.config_key == self.head.config_key

    def as_dict(self) -> dict[str, Any]:
        def value(mv: MetricValue | None) -> dict[str, Any] | None:
            return None if mv is None else dataclasses.asdict(mv)

        return {
            "corpus_name": self.base.corpus_name,
            "corpus_digest": self.base.corpus_digest,
            "strategy": self.head.strategy,
            "config_key": self.head.config_key,
            "base_config_key": self.base.config_key,
            "base_run_id": self.base.run_id,
            "head_run_id": self.head.run_id,
            "metric": self.metric,
            "base": value(self.base_value),
            "head": value(self.head_value),
            "hit_to_miss": len(self.lost),
            "miss_to_hit": self.gained,
            "shared": self.shared,
            "p": self.p,
            "p_holm": self.p_holm,
            "paired": self.paired,
            "latency": {
                "metric": self.latency_metric,
                "judged": self.latency_metric == LATENCY_METRIC,
                "base_s": self.latency_base,
                "head_s": self.latency_head,
                "ratio": self.latency_ratio,
                "slower": self.slower,
            },
            "allowed_by": self.allowed_by,
            "regressed": self.regressed,
            "failed": self.failed,
            "hit_to_miss_points": [dataclasses.asdict(point) for point in self.lost],
            "answer_types": [t.as_dict() for t in self.types],
            "unparsed": None
            if self.unparsed is None
            else {"count": self.unparsed.successes, "of": self.unparsed.n, "too_many": self.too_unparsed},
        }


@dataclass(frozen=True)
class GateResult:
    base: Side
    head: Side
    rows: tuple[GateRow, ...]
    only_base: tuple[RunSummary, ...]  # configurations not compared: on the base side only
    only_head: tuple[RunSummary, ...]
    alpha: float
    latency_factor: float
    latency_floor_s: float
    allow: tuple[str, ...]

    @property
    def direct(self) -> bool:
        """Two run ids compared as they are, whatever their configurations."""
        return self.base.is_run and self.head.is_run

    @property
    def failed(self) -> bool:
        return any(row.failed for row in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def as_dict(self) -> dict[str, Any]:
        def side(s: Side) -> dict[str, Any]:
            return {
                "ref": s.ref,
                "kind": s.kind,
                "resolved": s.resolved,
                "commit": s.commit,
                "named": s.named,
                "back": s.back,
                "run_ids": [r.run_id for r in s.runs],
            }

        def config(s: RunSummary) -> dict[str, str]:
            return {
                "corpus_name": s.corpus_name,
                "corpus_digest": s.corpus_digest,
                "config_key": s.config_key,
                "run_id": s.run_id,
            }

        return {
            "passed": not self.failed,
            "exit_code": self.exit_code,
            "alpha": self.alpha,
            "latency_factor": self.latency_factor,
            "latency_floor_s": self.latency_floor_s,
            "latency_metric": LATENCY_METRIC,
            "allow": list(self.allow),
            "direct": self.direct,
            "base": side(self.base),
            "head": side(self.head),
            "rows": [row.as_dict() for row in self.rows],
            "not_compared": {
                "base_only": [config(s) for s in self.only_base],
                "head_only": [config(s) for s in self.only_head],
            },
        }


# -- refs ----------------------------------------------------------------------------------------


def _latest(runs: Iterable[RunSummary]) -> tuple[RunSummary, ...]:
    """The first (newest) run of each (corpus, configuration), from runs listed newest first."""
    seen: dict[tuple[str, str], RunSummary] = {}
    for run in runs:
        seen.setdefault((run.corpus_digest, run.config_key), run)
    return tuple(seen.values())


def resolve_side(store: Store, ref: str, repo: Path | None = None, *, lookback: int = 1) -> Side:
    """The runs ``ref`` stands for: a run id, a commit prefix in the store, or a git ref in ``repo``.

    A git ref whose commit has no runs is followed back along first parents,
    ``lookback`` commits at most (1: the commit itself only).
    """
    ref = ref.strip()
    if not ref:
        raise GateError("an empty ref: give a run id, a commit or a branch name")
    try:
        run = store.get_summary(ref)
    except StoreError:
        run = None
    if run is not None:
        return Side(ref, "run", run.commit, (run,))
    if _HEX_PREFIX.fullmatch(ref):
        runs = store.runs(commit=ref.lower())
        commits = sorted({r.commit for r in runs})
        if len(commits) > 1:
            raise GateError(
                f"{ref!r} starts {len(commits)} commits in the store ({', '.join(short_commit(c) for c in commits)}): "
                "give more of the hash"
            )
        if runs:
            return Side(ref, "commit", commits[0], _latest(runs))
    where = repo or "the current directory"
    commit = resolve_commit(ref, repo)
    if commit is None:
        raise GateError(
            f"unknown ref {ref!r}: not a run id or a commit with runs in {store.path}, nor a git ref in {where} "
            "(list the stored runs with: evals runs)"
        )
    for back, candidate in enumerate(first_parents(commit, repo, lookback) or [commit]):
        runs = store.runs(commit=candidate)
        if runs:
            return Side(ref, "git", candidate, _latest(runs), named=commit, back=back)
    searched = f" or the {lookback - 1} commits before it" if lookback > 1 else ""
    raise GateError(f"no runs in {store.path} at {ref} (commit {short_commit(commit)}){searched}: run `evals run` there first")


# -- the comparison ------------------------------------------------------------------------------


def _label(summary: RunSummary) -> str:
    return f"{summary.config_key} on {summary.corpus_name}"


def _pairs(base: Side, head: Side) -> tuple[list[tuple[RunSummary, RunSummary]], tuple[RunSummary, ...], tuple[RunSummary, ...]]:
    """(base, head) runs to compare, then the configurations only the base or only the head has."""
    if base.is_run and head.is_run:
        b, h = base.runs[0], head.runs[0]
        if b.corpus_digest != h.corpus_digest:
            raise GateError(
                f"runs {b.run_id} and {h.run_id} are on different corpora ({b.corpus_name} {b.corpus_digest[:12]}, "
                f"{h.corpus_name} {h.corpus_digest[:12]}): the gate pairs test points of one corpus"
            )
        return [(b, h)], (), ()

    def key(s: RunSummary) -> tuple[str, str]:
        return s.corpus_digest, s.config_key

    heads = {key(s): s for s in head.runs}
    bases = {key(s): s for s in base.runs}
    pairs = [(b, heads[key(b)]) for b in base.runs if key(b) in heads]
    if not pairs:

        def listed(side: Side) -> str:
            return ", ".join(sorted(_label(s) for s in side.runs))

        raise GateError(
            f"nothing comparable: no configuration and corpus has runs on both sides "
            f"(base {base.resolved}: {listed(base)}; head {head.resolved}: {listed(head)})"
        )
    only_base = tuple(s for s in base.runs if key(s) not in heads)
    only_head = tuple(s for s in head.runs if key(s) not in bases)
    return pairs, only_base, only_head


def _latency(summary: RunSummary, metric: str = LATENCY_METRIC) -> float | None:
    value = summary.metric(metric)
    return None if value is None else value.value


def _latency_calls(summary: RunSummary, metric: str = LATENCY_METRIC) -> int:
    value = summary.metric(metric)
    return 0 if value is None else value.n


def _paired_verdict(lost: int, gained: int, p_holm: float, alpha: float) -> str:
    if lost == gained == 0:
        return NO_CHANGE
    if p_holm < alpha:
        return REGRESSION if lost > gained else IMPROVEMENT
    return NOISE


def _allowed(entry: str, base: RunSummary, head: RunSummary) -> bool:
    """An --allow entry names a configuration key, or a strategy (all its configurations)."""
    return entry in {base.config_key, head.config_key, base.strategy, head.strategy}


def _measure(
    store: Store,
    base: RunSummary,
    head: RunSummary,
    latency_factor: float,
    latency_floor_s: float,
    link: TestPointLink | None,
) -> GateRow:
    """One pair's paired test and latency ratio; its Holm-adjusted p and verdict are set once every pair is measured."""
    metric = base.headline.rule.metric  # the figure the leaderboard shows (evals.judge.headline), as compare pairs it
    stored_base, stored_head = store.get_run(base.run_id), store.get_run(head.run_id)
    comparison = compare_runs(stored_base, stored_head)

    def href(flip: Flip) -> str | None:
        return None if link is None else link(stored_base, flip.conversation_id, flip.turn_index)

    fair = _latency(base) is not None and _latency(head) is not None
    latency_metric = LATENCY_METRIC if fair else WALL_LATENCY_METRIC
    latency_base, latency_head = _latency(base, latency_metric), _latency(head, latency_metric)
    ratio = latency_head / latency_base if latency_base and latency_head is not None and latency_base > 0 else None
    return GateRow(
        base=base,
        head=head,
        metric=metric,
        lost=tuple(FlippedPoint(f.conversation_id, f.turn_index, f.question, f.expected_fact, href(f)) for f in comparison.lost),
        gained=len(comparison.gained),
        shared=comparison.shared,
        p=comparison.mcnemar_p,
        p_holm=comparison.mcnemar_p,
        paired=NO_CHANGE,
        latency_base=latency_base,
        latency_head=latency_head,
        latency_ratio=ratio,
        latency_metric=latency_metric,
        slower=(
            fair
            and ratio is not None
            and ratio > latency_factor
            and latency_head >= latency_floor_s
            and min(_latency_calls(base), _latency_calls(head)) >= LATENCY_MIN_CALLS
        ),
        types=_type_tests(stored_base, stored_head),
    )


def _type_tests(base: StoredRun, head: StoredRun) -> tuple[TypeTest, ...]:
    """Per question type, McNemar's exact test of the verdicts on the points both runs had judged (p not yet
    adjusted: :func:`gate` adjusts across every type of every configuration). () without judged answers on
    both sides or without categories."""
    before, after = qa.answer_outcomes(base.run, base.answers), qa.answer_outcomes(head.run, head.answers)
    if before is None or after is None:
        return ()
    by_type: dict[str | None, list[tuple[bool, bool]]] = {}
    for key, (category, was) in before.items():
        if key in after:
            by_type.setdefault(category, []).append((was, after[key][1]))
    if set(by_type) <= {None}:
        return ()  # no categories: the answers' overall test is evals compare's
    tests = []
    for category in sorted(by_type, key=lambda c: (c is None, qa.category_label(c))):
        pairs = by_type[category]
        lost = sum(1 for a, b in pairs if a and not b)
        gained = sum(1 for a, b in pairs if b and not a)
        p = mcnemar_exact(lost, gained)
        tests.append(
            TypeTest(
                category,
                qa.category_label(category, category_names(base.summary.benchmark)),
                len(pairs),
                sum(a for a, _ in pairs),
                sum(b for _, b in pairs),
                lost,
                gained,
                p,
                p,
                NO_CHANGE,
            )
        )
    return tuple(tests)


def _adjust_types(rows: list[GateRow], alpha: float) -> list[GateRow]:
    """Holm's adjustment across every question type of every configuration, then each type's verdict."""
    flat = [t.p for row in rows for t in row.types]
    adjusted = iter(holm(flat))
    out = []
    for row in rows:
        types = []
        for t in row.types:
            p_holm = next(adjusted)
            types.append(dataclasses.replace(t, p_holm=p_holm, paired=_paired_verdict(t.lost, t.gained, p_holm, alpha)))
        out.append(dataclasses.replace(row, types=tuple(types)))
    return out


def gate(
    store: Store,
    base: str,
    head: str,
    *,
    alpha: float = DEFAULT_ALPHA,
    latency_factor: float = DEFAULT_LATENCY_FACTOR,
    latency_floor_s: float = DEFAULT_LATENCY_FLOOR_S,
    allow: Sequence[str] = (),
    repo: Path | None = None,
    link: TestPointLink | None = None,
    max_unparsed: float | None = None,
) -> GateResult:
    """Compare the head's runs with the base's; see the module docstring for the rules.

    ``allow`` lists configuration keys or strategy names whose regression is
    accepted (reported, not failed); each must match a compared configuration.
    ``link`` gives a flipped test point's address on the published site
    (:func:`evals.views.site_paths.links_to_test_points`): each then links to the base run's drill-down.
    ``max_unparsed``: a head run with a larger share of its verdicts unparsed fails its configuration.
    """
    if not 0 < alpha < 1:
        raise GateError(f"alpha must be between 0 and 1, not {alpha}")
    if latency_factor < 1:
        raise GateError(f"the latency factor must be at least 1, not {latency_factor}")
    base_side = resolve_side(store, base, repo, lookback=BASE_LOOKBACK)
    head_side = resolve_side(store, head, repo)
    pairs, only_base, only_head = _pairs(base_side, head_side)
    unmatched = [entry for entry in allow if not any(_allowed(entry, b, h) for b, h in pairs)]
    if unmatched:
        compared = ", ".join(sorted({h.config_key for _, h in pairs} | {h.strategy for _, h in pairs}))
        raise GateError(f"--allow {unmatched[0]} matches no configuration compared (compared: {compared})")
    measured = _adjust_types([_measure(store, b, h, latency_factor, latency_floor_s, link) for b, h in pairs], alpha)
    rows = []
    for row, p_holm in zip(measured, holm([row.p for row in measured]), strict=True):
        row = dataclasses.replace(
            row, p_holm=p_holm, paired=_paired_verdict(len(row.lost), row.gained, p_holm, alpha), max_unparsed=max_unparsed
        )
        if row.regressed:
            row = dataclasses.replace(row, allowed_by=next((e for e in allow if _allowed(e, row.base, row.head)), None))
        rows.append(row)
    rows.sort(key=lambda r: (r.base.corpus_name, r.base.corpus_digest, r.head.strategy, r.head.config_key))
    return GateResult(
        base=base_side,
        head=head_side,
        rows=tuple(rows),
        only_base=only_base,
        only_head=only_head,
        alpha=alpha,
        latency_factor=latency_factor,
        latency_floor_s=latency_floor_s,
        allow=tuple(allow),
    )
