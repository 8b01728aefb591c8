"""Transcripts, once per corpus: each conversation's turns on one page, and each passage (turns that recur
across conversations, see :mod:`evals.site._layout`) on a page of its own.

They depend on the corpus alone, never on a run, so every run's drill-downs
link into the same pages and a run adds only what it retrieved. The tags show
what the corpus says about each turn: the test point asked there, its evidence
turns, and the turns holding an expected keyword; what a run retrieved is
tagged on that run's drill-downs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

from evals.benchmarks.turn_ids import TurnIds
from evals.site._drilldown import EVIDENCE_CAP, ConversationText
from evals.site._fragments import Fragments, turn_line
from evals.site._layout import CorpusLayout
from evals.site._output import Output
from evals.site._pages import Page, TurnLine, TurnMark
from evals.site._publisher import CorpusSource, Publisher, Site
from evals.site._text import CLIP_LIMIT
from evals.views.site_paths import Paths, passage, passage_turn_text, root_of, test_point_anchor

__all__ = ["PassageBlock", "PassagePage", "PassageUse", "TranscriptPage", "TranscriptPoint", "TranscriptPublisher"]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(slots=True)
class PassageBlock:
    """A run of turns that recurs in other conversations of the corpus: one line of a conversation's
    transcript, linking the passage's own page, where its turns are shown once for every conversation."""

    first: int  # the block's first and last turn in this conversation
    last: int
    href: str  # the passage page, relative to this page
    elsewhere: int  # other places in the corpus the passage occurs
    preview: str  # the start of its first turn
    marks: list[TurnMark]  # tags of turns inside it, labelled with the turn
    html: str = ""  # as the ``passage_block`` macro renders it


@dataclass(frozen=True)
class TranscriptPoint:
    """A test point as the corpus defines it (no run): where it is asked and where its answer is."""

    number: int
    turn: int
    question: str
    expected_fact: str
    keywords: list[str]
    answerable: bool
    category: str | None
    evidence: list[tuple[int, str, str]]  # (turn, href, the benchmark's name for it or "") of the corpus's evidence turns
    answer_turns: list[tuple[int, str]]  # (turn, href) of the turns before it holding an expected keyword (capped)
    answer_turns_hidden: int


@dataclass(frozen=True)
class TranscriptPage(Page):
    """A conversation's turns, once per corpus: every run's drill-down links here."""

    template: ClassVar[str] = "transcript.html"

    corpus_name: str
    corpus_digest_short: str
    conversation_id: str
    description: str
    turn_count: int
    shared_turns: int  # turns shown as passage blocks
    points: list[TranscriptPoint]
    lines: list[TurnLine | PassageBlock]  # in turn order
    previous_href: str  # neighbouring conversations of the corpus ("" at the ends), site-root relative
    next_href: str
    withheld: str = ""  # why the benchmark's text is not shown (its licence, evals.site._withheld); "" when it is


@dataclass(frozen=True)
class PassageUse:
    conversation_id: str
    first: int
    last: int
    href: str  # that conversation's transcript at the passage, site-root relative


@dataclass(frozen=True)
class PassagePage(Page):
    """Turns that recur, in this order, in several conversations of a corpus: shown once for all of them."""

    template: ClassVar[str] = "passage.html"

    corpus_name: str
    corpus_digest_short: str
    passage_id: str
    uses: list[PassageUse]  # every place it occurs, in corpus order
    lines: list[TurnLine]  # numbered by offset in the passage
    withheld: str = ""  # why the benchmark's text is not shown (its licence, evals.site._withheld); "" when it is

PREVIEW = 160  # characters of a passage's first turn shown on its line in a transcript


class TranscriptPublisher(Publisher):
    """Every conversation's transcript and every passage page, once per corpus."""

    name = "transcripts"
    pages = (TranscriptPage, PassagePage)

    def __init__(self) -> None:
        self._fragments: Fragments | None = None

    def publish_corpus(self, corpus: CorpusSource, site: Site, output: Output) -> None:
        if self._fragments is None:
            self._fragments = Fragments(site.env)
        layout, paths = corpus.layout, site.paths
        ids = list(layout.conversations)
        note = f"Transcripts of corpus {corpus.name} ({corpus.digest[:10]}), the same for every run on it."
        sessions = corpus.sessions()
        benchmark = next((s.benchmark for s in site.latest if s.corpus_digest == corpus.digest), None)
        for position, (cid, description, roles, contents, points) in enumerate(corpus.conversations()):
            href = paths.transcript(corpus.digest, cid)
            names = TurnIds(*sessions.get(cid, (None, None)), benchmark=benchmark)
            text = ConversationText(list(zip(roles, contents, strict=True)), names)
            transcript_points, marks, needles_at = _points(points, text, layout, paths, cid, href)
            lines: list[TurnLine | PassageBlock] = []
            for span in layout.conversations[cid].spans:
                if span.passage is None:
                    for turn in range(span.start, span.end):
                        full = _whole_turn(output, paths.transcript_turn_text(corpus.digest, cid, turn), href, contents[turn])
                        lines.append(
                            self._fragments.render_line(
                                turn_line(
                                    turn,
                                    f"t-{turn}",
                                    text.speakers[turn],
                                    contents[turn],
                                    _css(roles[turn], marks.get(turn, [])),
                                    marks.get(turn, []),
                                    tuple(sorted(needles_at.get(turn, ()))),
                                    full,
                                )
                            )
                        )
                    continue
                inside = [
                    TurnMark(m.kind, m.number, m.anchor, m.rank, m.hit, f"{m.label} (turn {turn})", m.css)
                    for turn in range(span.start, span.end)
                    for m in marks.get(turn, [])
                ]
                first = contents[span.start]
                block = PassageBlock(
                    first=span.start,
                    last=span.end - 1,
                    href=root_of(href) + passage(corpus.digest, span.passage),
                    elsewhere=len(layout.passages[span.passage].uses) - 1,
                    preview=first if len(first) <= PREVIEW else first[:PREVIEW].rstrip(),
                    marks=inside,
                )
                block.html = self._fragments.passage_block(block)
                lines.append(block)
            output.page(
                site.env,
                href,
                TranscriptPage(
                    **site.frame(f"Transcript: {cid}", href=href, note=note),
                    corpus_name=corpus.name,
                    corpus_digest_short=corpus.digest[:10],
                    conversation_id=cid,
                    description=description,
                    turn_count=len(contents),
                    shared_turns=sum(s.end - s.start for s in layout.conversations[cid].spans if s.passage is not None),
                    points=transcript_points,
                    lines=lines,
                    previous_href=paths.transcript(corpus.digest, ids[position - 1]) if position > 0 else "",
                    next_href=paths.transcript(corpus.digest, ids[position + 1]) if position + 1 < len(ids) else "",
                    withheld=site.withheld.get(corpus.digest, ""),
                ),
            )
            for span in layout.first_use(cid):
                self._passage_page(
                    corpus,
                    site,
                    output,
                    span.passage or "",
                    roles[span.start : span.end],
                    contents[span.start : span.end],
                    note,
                )

    def _passage_page(
        self, corpus: CorpusSource, site: Site, output: Output, pid: str, roles: list[str], contents: list[str], note: str
    ) -> None:
        assert self._fragments is not None
        href = passage(corpus.digest, pid)
        lines = [
            self._fragments.render_line(
                turn_line(
                    offset,
                    f"p-{offset}",
                    role,
                    content,
                    f"role-{role.lower()}",
                    [],
                    (),
                    _whole_turn(output, passage_turn_text(corpus.digest, pid, offset), href, content),
                )
            )
            for offset, (role, content) in enumerate(zip(roles, contents, strict=True))
        ]
        uses = [
            PassageUse(cid, start, start + len(contents) - 1, f"{site.paths.transcript(corpus.digest, cid)}#t-{start}")
            for cid, start in corpus.layout.passages[pid].uses
        ]
        output.page(
            site.env,
            href,
            PassagePage(
                **site.frame(f"Passage {pid}", href=href, note=note),
                corpus_name=corpus.name,
                corpus_digest_short=corpus.digest[:10],
                passage_id=pid,
                uses=uses,
                lines=lines,
                withheld=site.withheld.get(corpus.digest, ""),
            ),
        )


def _points(
    points: list[dict], text: ConversationText, layout: CorpusLayout, paths: Paths, cid: str, href: str
) -> tuple[list[TranscriptPoint], dict[int, list[TurnMark]], dict[int, set[str]]]:
    """The corpus's test points of one conversation, with the tags they put on turns and the keywords to mark."""
    marks: dict[int, list[TurnMark]] = defaultdict(list)
    needles_at: dict[int, set[str]] = defaultdict(set)
    out = []

    def link(turn: int) -> str:
        target = layout.turn_href(paths, cid, turn)
        return target[len(href) :] if target.startswith(f"{href}#") else root_of(href) + target

    for number, point in enumerate(points, start=1):
        turn, anchor = point["turn_index"], test_point_anchor(point["turn_index"])
        keywords = list(point["expected_keywords"])
        needles = keywords or ([point["expected_fact"]] if point["expected_fact"] else [])
        holding = text.turns_holding(needles, turn)
        for t in holding:
            marks[t].append(TurnMark("answer", number, anchor, None, True, f"TP{number} answer", " ans"))
            needles_at[t].update(needles)
        for t in point["evidence_turns"]:
            marks[t].append(TurnMark("evidence", number, anchor, None, True, f"TP{number} evidence", " evi"))
        marks[turn].append(TurnMark("asked", number, anchor, None, True, f"TP{number} asked", " ask"))
        out.append(
            TranscriptPoint(
                number=number,
                turn=turn,
                question=point["question"],
                expected_fact=point["expected_fact"],
                keywords=keywords,
                answerable=point["answerable"],
                category=point["category"],
                evidence=[(t, link(t), _label(text, t)) for t in point["evidence_turns"]],
                answer_turns=[(t, link(t)) for t in holding[:EVIDENCE_CAP]],
                answer_turns_hidden=max(0, len(holding) - EVIDENCE_CAP),
            )
        )
    return out, marks, needles_at


def _label(text: ConversationText, turn: int) -> str:
    """The benchmark's own name of ``turn`` (evals.benchmarks.turn_ids), "" where it is just "turn N"."""
    name = text.ids.label(turn)
    return "" if name == f"turn {turn}" else name


def _css(role: str, marks: list[TurnMark]) -> str:
    kinds = {m.kind for m in marks}
    return f"role-{role.lower()}" + bool(kinds & {"answer", "evidence"}) * " evidence" + ("asked" in kinds) * " asked"


def _whole_turn(output: Output, path: str, page: str, content: str) -> str:
    """A turn too long for a page as a plain-text file; the link to it from ``page`` ("" for a short turn)."""
    if len(content) <= CLIP_LIMIT:
        return ""
    output.text(path, content)
    return root_of(page) + path
