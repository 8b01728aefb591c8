"""Label suspects: the test points whose evidence labels the label audit (:mod:`evals.benchmarks.audit`) flags.

The build runs the audit's content-word rule over every corpus it shows, from the stored corpus (the
texts the build reads once, :mod:`evals.site._corpus`, and the store's labels): a test point whose
labelled evidence shares no content word with the answer while another earlier turn holds every one.
The other rule, evidence ids that name no turn, needs the benchmark file the corpus was imported from,
which the store does not hold; ``evals audit-labels --source`` runs it.

The flags mark their test points "label suspect" on the drill-downs and the run page's misses, and a
page per benchmark lists them with each latest run's verdict there. They never change a figure.

Each corpus's flags are written beside its transcripts (:func:`evals.views.site_paths.suspects_json`), in
the corpus's unit: a later build that reuses the corpus's pages reads them back from there instead of
reading the corpus's texts again (hundreds of MB for LongMemEval_s).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from evals.analysis.compare import headline_outcomes
from evals.benchmarks.audit import MISSES, audit_corpus
from evals.io import jsonfile
from evals.judge.ceilings import ceiling
from evals.model.corpus import Conversation, Corpus, TestPoint, Turn
from evals.site._benchmarks import benchmark_infos
from evals.site._corpus import TextsFile
from evals.site._output import Output
from evals.site._pages import BenchmarkInfo, Page
from evals.site._publisher import CorpusSource, Publisher, Site
from evals.store import Store
from evals.views.names import row_names
from evals.views.site_paths import page_of, suspects_json, test_point_anchor
from evals.views.tables import ranked

__all__ = [
    "CorpusSuspects",
    "Suspect",
    "SuspectRow",
    "SuspectSection",
    "SuspectsPage",
    "SuspectsPublisher",
    "VerdictLink",
    "audit_stored",
    "load",
    "suspect_marks",
]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class VerdictLink:
    label: str  # the configuration
    verdict: str  # its run's verdict at the test point: hit, miss, — (not counted), "" (not known)
    href: str  # the test point on the run's drill-down


@dataclass(frozen=True)
class SuspectRow:
    conversation_id: str
    turn: int
    anchor: str
    question: str
    answer: str
    evidence_turns: list[int]  # as labelled
    found_in: list[int]  # the turns holding every content word of the answer (the first few)
    found_more: int
    why: str
    transcript_href: str
    runs: list[VerdictLink]  # each latest run on the corpus, best first


@dataclass(frozen=True)
class SuspectSection:
    corpus_name: str
    corpus_digest_short: str
    test_points: int
    checked: int
    rows: list[SuspectRow]


@dataclass(frozen=True)
class SuspectsPage(Page):
    """A benchmark's test points whose evidence labels the label audit flags."""

    template: ClassVar[str] = "suspects.html"

    benchmark: BenchmarkInfo
    rule: str
    sections: list[SuspectSection]

VERSION = 1
MAX_FILE_BYTES = 64 * 1024**2
FOUND_SHOWN = 5  # turns holding the answer named per suspect; the rest are counted


@dataclass(frozen=True)
class Suspect:
    conversation: str
    turn: int  # the test point's turn
    position: int  # its place among the conversation's test points (which drill-down page holds it)
    question: str
    answer: str
    evidence_turns: tuple[int, ...]  # as labelled
    found_in: tuple[int, ...]  # the other earlier turns that hold every content word of the answer

    @property
    def why(self) -> str:
        """The flag in words, as the mark's explanation shows it."""
        labelled = ", ".join(str(t) for t in self.evidence_turns)
        shown = ", ".join(str(t) for t in self.found_in[:FOUND_SHOWN])
        more = f" and {len(self.found_in) - FOUND_SHOWN} more" if len(self.found_in) > FOUND_SHOWN else ""
        many = len(self.found_in) > 1
        return (
            f"{MISSES}: no labelled evidence turn ({labelled}) shares a content word with the answer, while "
            f"turn{'s' if many else ''} {shown}{more} {'hold' if many else 'holds'} every one of them. "
            "The label audit says where to look, not what is true; the figures count the label as published."
        )


@dataclass(frozen=True)
class CorpusSuspects:
    """One corpus's audit: how many test points it has and checked, and the flags."""

    test_points: int
    checked: int
    suspects: list[Suspect] = field(default_factory=list)

    def of_conversation(self, conversation_id: str) -> dict[int, str]:
        """Test point turn -> why it is suspect, for one conversation."""
        return {s.turn: s.why for s in self.suspects if s.conversation == conversation_id}


def suspect_marks(site: Site, digest: str, conversation_id: str) -> dict[int, str]:
    """The suspect test points of a conversation (turn -> why); {} for a corpus the build did not audit."""
    found = site.suspects.get(digest)
    return found.of_conversation(conversation_id) if found is not None else {}


# -- the audit over a stored corpus ------------------------------------------------------------


def _conversation(row: dict[str, Any], shape: dict[str, Any], points: list[dict[str, Any]]) -> Conversation:
    """The stored conversation as the corpus models hold it (built without validation: the store checked it)."""
    contents = row["contents"]
    unrecorded = set(shape["unrecorded"] or ())
    sessions = shape["sessions"] or [None] * len(contents)
    dates = shape["dates"] or [None] * len(contents)
    at = {
        p["turn_index"]: TestPoint.model_construct(
            question=p["question"],
            expected_fact=p["expected_fact"],
            expected_keywords=list(p["expected_keywords"]),
            evidence_turns=list(p["evidence_turns"]),
            category=p["category"],
            answerable=p["answerable"],
            evidence_sessions=[],
        )
        for p in points
    }
    turns = [
        Turn.model_construct(
            role=role, content=content, test_at=at.get(i), record=i not in unrecorded, session=sessions[i], date=dates[i]
        )
        for i, (role, content) in enumerate(zip(row["roles"], contents, strict=True))
    ]
    return Conversation.model_construct(id=row["conversation_id"], description=row["description"], turns=turns)


def audit_stored(store: Store, digest: str, name: str, texts: TextsFile) -> CorpusSuspects:
    """The label audit's content-word rule over a stored corpus, a conversation at a time (its texts from
    the build's texts file, its labels from ``store``)."""
    shapes = {row["conversation_id"]: row for row in store.conversation_shapes(digest)}
    points = store.corpus_test_points(digest)
    total = checked = 0
    suspects: list[Suspect] = []
    for row in texts.rows():
        cid = row["conversation_id"]
        conversation = _conversation(row, shapes[cid], points.get(cid, []))
        audit = audit_corpus(Corpus(Path(name or "corpus"), [conversation], digest))
        total += audit.test_points
        checked += audit.checked
        position = {turn: n for n, (turn, _) in enumerate(conversation.test_points())}
        suspects.extend(
            Suspect(cid, f.turn, position[f.turn], f.question, f.answer, tuple(f.evidence_turns), tuple(f.found_in))
            for f in audit.flags
            if f.kind == MISSES
        )
    return CorpusSuspects(total, checked, suspects)


def without_text(found: CorpusSuspects) -> CorpusSuspects:
    """The audit's flags with no question or answer: of a benchmark whose licence withholds its text
    (evals.site._withheld); the flags name turns by number, which stay."""
    return dataclasses.replace(found, suspects=[dataclasses.replace(s, question="", answer="") for s in found.suspects])


# -- kept with the corpus's pages ----------------------------------------------------------------


def _document(digest: str, found: CorpusSuspects) -> dict[str, Any]:
    return {
        "version": VERSION,
        "corpus_digest": digest,
        "rule": MISSES,
        "test_points": found.test_points,
        "checked": found.checked,
        "suspects": [
            {
                "conversation": s.conversation,
                "turn": s.turn,
                "position": s.position,
                "question": s.question,
                "answer": s.answer,
                "evidence_turns": list(s.evidence_turns),
                "found_in": list(s.found_in),
            }
            for s in found.suspects
        ],
    }


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


def load(root: Path, digest: str) -> CorpusSuspects | None:
    """A corpus's flags as an earlier build wrote them into ``root`` (its reused files), or None when the
    file is missing or not exactly what a build writes: then the build audits the corpus again."""
    try:
        data = jsonfile.load(root / suspects_json(digest), MAX_FILE_BYTES)
    except (jsonfile.JSONFileError, OSError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or data.get("corpus_digest") != digest
        or data.get("rule") != MISSES
    ):
        return None
    if not _whole(data.get("test_points")) or not _whole(data.get("checked")) or not isinstance(data.get("suspects"), list):
        return None
    suspects = []
    for item in data["suspects"]:
        if not isinstance(item, dict):
            return None
        texts = [item.get(k) for k in ("conversation", "question", "answer")]
        numbers = [item.get("turn"), item.get("position")]
        lists = [item.get("evidence_turns"), item.get("found_in")]
        if not all(isinstance(t, str) for t in texts) or not all(_whole(n) for n in numbers):
            return None
        if not all(isinstance(v, list) and all(_whole(t) for t in v) for v in lists):
            return None
        suspects.append(Suspect(texts[0], numbers[0], numbers[1], texts[1], texts[2], tuple(lists[0]), tuple(lists[1])))
    return CorpusSuspects(data["test_points"], data["checked"], suspects)


# -- the pages -----------------------------------------------------------------------------------


class SuspectsPublisher(Publisher):
    """Each corpus's flags (JSON, beside its transcripts) and a page per benchmark listing them."""

    name = "suspects"
    pages = (SuspectsPage,)

    def runs_needed(self, site: Site) -> set[str]:
        """The latest runs on corpora with suspects: their verdicts at each suspect."""
        return {s.run_id for s in site.latest if site.suspects.get(s.corpus_digest) and site.suspects[s.corpus_digest].suspects}

    def publish_corpus(self, corpus: CorpusSource, site: Site, output: Output) -> None:
        found = site.suspects.get(corpus.digest)
        if found is not None:
            output.json(suspects_json(corpus.digest), _document(corpus.digest, found))

    def publish(self, site: Site, output: Output) -> None:
        for key, info in benchmark_infos(site).items():
            output.page(site.env, site.paths.suspects(key), suspects_page(site, info, key))


def _verdicts(site: Site, digest: str) -> tuple[list[tuple[str, str]], dict[str, dict[tuple[str, int], str]]]:
    """The latest runs on a corpus (label, run id), as its board lists them (memories best first, then the
    ceilings), and each one's verdict per test point."""
    order = ranked([s for s in site.latest if s.corpus_digest == digest])
    runs = [s for s in order if not ceiling(s)] + [s for s in order if ceiling(s)]
    labels = list(zip(row_names(runs), (s.run_id for s in runs), strict=True))
    verdicts: dict[str, dict[tuple[str, int], str]] = {}
    for s in runs:
        stored = site.stored.get(s.run_id)
        if stored is None:
            continue
        outcomes = headline_outcomes(stored, verdicts=site.computed.verdicts)
        verdicts[s.run_id] = {
            (result.conversation_id, point.turn_index): "—" if outcome is None else ("hit" if outcome else "miss")
            for result, conversation in zip(stored.run.conversations, outcomes, strict=True)
            for point, outcome in zip(result.test_points, conversation, strict=True)
        }
    return labels, verdicts


def suspects_page(site: Site, info: BenchmarkInfo, key: str) -> SuspectsPage:
    paths = site.paths
    sections = []
    for name, digest in _corpora(site, key):
        found = site.suspects.get(digest)
        if found is None:
            continue
        labels, verdicts = _verdicts(site, digest)
        rows = []
        for s in found.suspects:
            links = []
            for label, run_id in labels:
                page = paths.conversation(run_id, s.conversation, page_of(s.position))
                verdict = verdicts.get(run_id, {}).get((s.conversation, s.turn), "")
                links.append(VerdictLink(label, verdict, f"{page}#{test_point_anchor(s.turn)}"))
            rows.append(
                SuspectRow(
                    conversation_id=s.conversation,
                    turn=s.turn,
                    anchor=f"s-{digest[:10]}-{s.conversation}-{s.turn}",
                    question=s.question,
                    answer=s.answer,
                    evidence_turns=list(s.evidence_turns),
                    found_in=list(s.found_in[:FOUND_SHOWN]),
                    found_more=max(0, len(s.found_in) - FOUND_SHOWN),
                    why=s.why,
                    transcript_href=paths.transcript(digest, s.conversation),
                    runs=links,
                )
            )
        sections.append(SuspectSection(name, digest[:10], found.test_points, found.checked, rows))
    return SuspectsPage(
        **site.frame(f"Label suspects: {info.title}", "leaderboard"),
        benchmark=info,
        rule=MISSES,
        sections=sections,
    )


def _corpora(site: Site, key: str) -> Iterable[tuple[str, str]]:
    """(name, digest) of the corpora shown under benchmark ``key``, newest run first."""
    seen: dict[str, str] = {}
    for s in site.summaries:
        if site.paths.benchmark(s.corpus_digest) == key:
            seen.setdefault(s.corpus_digest, s.corpus_name)
    return [(name, digest) for digest, name in seen.items()]
