"""The drill-down of one conversation of a run: every test point's view, and the turns they touched.

Each test point's HIT / MISS is the verdict of the run's headline rule (:mod:`evals.judge.headline`),
handed in: the same rule the leaderboard's figure counts, so a page never re-judges a test point.
Under an evidence rule, "where the answer was" is the corpus's evidence turns, each with the rank
the run gave it; under the keyword rule, the turns holding an expected keyword, as decided by
:mod:`evals.judge.scoring` (``matched_keywords``).
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import operator
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evals.benchmarks import protocol_lexical
from evals.benchmarks.turn_ids import TurnIds
from evals.judge.metrics import answer_scores
from evals.judge.scoring import matched_keywords
from evals.site._fragments import SNIPPET, Fragments
from evals.site._pages import Page, RunHeader, TurnLine, TurnMark
from evals.site._text import Segment, clip, speaker_labels
from evals.views.site_paths import test_point_anchor

__all__ = [
    "AnswerView",
    "ConversationPage",
    "ConversationText",
    "EVIDENCE_CAP",
    "EvidenceView",
    "PointView",
    "RECORD_CAP",
    "RecordView",
    "conversation_views",
    "fragment_key",
    "point_view",
    "runs_of",
]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class RecordView:
    """One retrieved record, in rank order."""

    rank: int
    tokens: int | None  # None: a rank past the records, known by its turn only (see ``PointView.records_more``)
    segments: list[Segment]  # the text (its start, when clipped), expected keywords marked
    matched: list[str]  # expected keywords this record contains
    turn: int | None  # the conversation turn this record is, if it is one
    distance: int | None  # how many turns before the test point that turn is
    long: bool  # fold the text by default
    tail: list[Segment] = field(default_factory=list)  # the text's end, when it is clipped
    omitted: int = 0  # characters left out between ``segments`` and ``tail`` (0: shown whole)
    length: int = 0  # characters of the whole text
    href: str = ""  # the turn in the corpus's transcript, relative to the drill-down ("" when not a turn)
    evidence: bool = False  # the turn is one of the test point's evidence turns
    label: str = ""  # the benchmark's own name of the turn (LoCoMo's D1:12; "" where it has none)
    date: str = ""  # the turn's session date, as the benchmark writes it ("" where it gives none)
    # A record holding several turns (a session, a chunk; Record.turns): its turns as runs of consecutive numbers,
    # (first, last, first's href, last's href) each, in order ([]: one or none). A session is one run, so a page names
    # its two ends, not its 25 turns one link each (docs/site.md, "Keeping the site small").
    holds: list[tuple[int, int, str, str]] = field(default_factory=list)
    # A record that is one turn and carries no text (the drill-down draws it with static/site.js, "Keeping the site
    # small"): the index of its date in the conversation's dates (ConversationText.dates; -1: none), and its link when
    # it is not the turn's line in the conversation's transcript (a passage's line; "": that line).
    date_index: int = -1
    own_href: str = ""
    # A record holding several turns whose text is exactly its first turn's (LoCoMo's session records are stored so):
    # no text on the page; site.js fills it in from that turn's line, which its first link names, as for a turn.
    filled: bool = False


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class EvidenceView:
    """A turn before the test point that holds an expected keyword: where the answer was."""

    turn: int
    distance: int
    role: str
    segments: list[Segment]  # the turn (its start, when clipped), keywords marked
    retrieved_rank: int | None  # its rank among the retrieved records, if it was retrieved
    ranked_past_k: int | None = None  # not retrieved, but ranked this far down the ranking the run kept past k
    tail: list[Segment] = field(default_factory=list)  # the turn's end, when it is clipped
    omitted: int = 0  # characters left out (0: shown whole); the whole turn is in the transcript
    length: int = 0
    href: str = ""  # the turn in the corpus's transcript, relative to the drill-down
    label: str = ""  # the benchmark's own name of the turn ("" where it has none)
    date: str = ""  # its session date ("" where the benchmark gives none)
    long: bool = False  # fold the text by default, as a long retrieved record is (BEAM's messages run to pages)


@dataclass(slots=True)
class AnswerView:
    """What the answer model said at a test point and, with a judge, the verdict."""

    text: str
    correct: bool | None  # None: not judged
    reason: str | None
    keyword_hit: bool
    tokens: int  # prompt + completion of the answer request
    latency_s: float
    f1: float  # token F1 against the expected fact (evals.judge.answer_scores)
    bleu1: float  # BLEU-1 against the expected fact
    verdict: str | None = None  # the judge's: "correct", "wrong", "partial" or "unparsed" (its reply gave none); None: not judged
    graded: float | None = None  # a graded judge's score of the answer (BEAM, LoCoMo-Plus); None: not graded


@dataclass(frozen=True, slots=True)
class PointView:
    """One test point, everything about it; frozen, so its section's cache key (``evals.site._drilldown.fragment_key``)
    is a digest of what it holds."""

    number: int  # 1-based within the conversation
    anchor: str
    turn_index: int
    question: str
    expected_fact: str
    keywords: list[str]
    hit: bool
    strict_hit: bool  # every expected keyword retrieved
    rank: int | None  # of the first record holding the answer
    context_tokens: int
    record_count: int
    records: list[RecordView]  # the first k records, in full; empty when ``all_history``
    records_hidden: int  # records not listed (beyond the cap)
    records_hidden_tokens: int
    all_history: bool  # the records are every earlier turn in order (full_history)
    evidence: list[EvidenceView]
    evidence_hidden: int
    answerable: bool = True  # False: neither hit nor miss, badge "unanswerable"
    category: str | None = None
    evidence_turns: list[int] = field(default_factory=list)  # the corpus's evidence turns for this point
    evidence_retrieved: list[int] = field(default_factory=list)  # those of them among the retrieved records
    evidence_ranked_past_k: dict[int, int] = field(default_factory=dict)  # the others the run ranked past k: turn -> rank
    evidence_missed: list[int] = field(default_factory=list)  # evidence turns not among the retrieved records
    evidence_ranks: dict[int, int | None] = field(
        default_factory=dict
    )  # each evidence turn's rank among the records (None: not one)
    answer: AnswerView | None = None  # with --with-answers
    html: str = ""  # this section as the ``point`` macro in _partials.html renders it (once per distinct point)
    k: int = 0  # the run's k: records up to it are shown in full, the rest (kept for deeper cutoffs) briefly
    # Ranks past k up to the cap, briefly: records beyond k (with tokens and a snippet), or the ranking a
    # run measured at deeper cutoffs keeps (ranked_turns: the turn only).
    records_more: list[RecordView] = field(default_factory=list)
    evidence_hrefs: list[str] = field(default_factory=list)  # each evidence turn in the transcript (aligned with evidence_turns)
    context_href: str = ""  # the transcript at the test point's turn, relative to the drill-down
    # The headline rule's verdict (evals.judge.headline): hit, miss, unanswerable or unscored; what the badge,
    # data-verdict and the run's hits / total all say.
    verdict: str = "hit"
    verdict_note: str = ""  # the dataset's own words for a question it marks unanswerable ("" otherwise)
    by_evidence: bool = False  # the rule judges by evidence turns (else by expected keywords)
    records_more_hidden: int = 0  # ranks past k summarised, not listed (neither evidence nor a keyword match)
    suspect: str = ""  # why the label audit flags this test point's evidence label ("" when it does not)
    evidence_names: dict[int, str] = field(default_factory=dict)  # each evidence turn's name in its benchmark ("" where none)
    evidence_dates: dict[int, str] = field(default_factory=dict)  # each evidence turn's session date ("" where none)
    kept: int = 0  # ranks the run kept for this point (its records, or its ranking past k): "not in the top N kept"


@dataclass(frozen=True)
class ConversationPage(Page):
    template: ClassVar[str] = "conversation.html"

    run: RunHeader
    conversation_id: str
    description: str
    turn_count: int
    headline_label: str  # the rule's figure, e.g. recall_any@k (evals.judge.headline)
    population: str  # which test points it counts
    hits: int
    total: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    context_tokens: int
    points: list[PointView]  # in turn order
    toc: list[PointView]  # the same, misses first (the misses alone on a page of very many test points)
    toc_hrefs: list[str]  # where each ``toc`` entry is: "#anchor" on this page, "PAGE.html#anchor" on another
    toc_unlisted: int  # test points left out of ``toc`` (hits and the uncounted, on such a page)
    transcript: list[TurnLine]  # the turns some test point touched (retrieved, asked, evidence, answer), tagged, as snippets
    transcript_open: bool  # short enough to show unfolded
    touched_unlisted: int  # turns touched but not listed (a conversation with very many test points)
    previous_href: str  # neighbouring conversations of the same run ("" at the ends)
    next_href: str
    transcript_href: str  # the whole conversation, in the corpus's transcripts (site-root relative)
    pages: list[tuple[str, str]] = field(default_factory=list)  # (test points it holds, file) per page; empty: one page
    page: int = 0  # which of ``pages`` this is
    withheld: str = ""  # why the benchmark's text is not shown (its licence, evals.site._withheld); "" when it is
    # The conversation's session dates as a JSON array (ConversationText.dates): site.js dates each record it draws from
    # its index there (RecordView.date_index).
    dates: str = "[]"

RECORD_CAP = 50  # records listed per test point; the rest are counted
EVIDENCE_CAP = 20  # turns holding a keyword quoted per test point
LONG_RECORD = 600  # characters beyond which a record's text is folded
# Ranks past k listed per test point: only those that are evidence (or hold a keyword), at most this
# many; the rest are summarised in one line, since a LoCoMo page repeated 45 of them per question.
PAST_K_CAP = 10
SUMMARY_HEAD, SUMMARY_TAIL = 300, 200  # characters quoted of a record that is not a turn


class ConversationText:
    """One conversation's turns, with what every test point needs computed once."""

    def __init__(self, transcript: list[tuple[str, str]], ids: TurnIds | None = None) -> None:
        self.ids = ids or TurnIds(None)  # each turn's name in its benchmark (LoCoMo's D1:3) and session date
        self.roles = [role for role, _ in transcript]
        self.contents = [content for _, content in transcript]
        self.speakers = speaker_labels(self.roles, self.contents)  # the names shown (LoCoMo's speakers)
        # The conversation's session dates, each once, in turn order: a drill-down writes them once and its records
        # name theirs by index (RecordView.date_index).
        self.dates: list[str] = []
        self._date_index: dict[str, int] = {}
        for turn in range(len(self.contents)):
            date = self.ids.date(turn)
            if date and date not in self._date_index:
                self._date_index[date] = len(self.dates)
                self.dates.append(date)
        lowered = [c.lower() for c in self.contents]
        # One string for all turns, so finding a keyword is one C-level scan, not a loop over turns.
        self._haystack = "\x00".join(lowered)
        self._starts = []
        offset = 0
        for text in lowered:
            self._starts.append(offset)
            offset += len(text) + 1

    def date_index(self, turn: int | None) -> int:
        """Where ``turn``'s date is in :attr:`dates` (-1: it has none)."""
        return -1 if turn is None else self._date_index.get(self.ids.date(turn), -1)

    def turns_holding(self, needles: list[str], before: int) -> list[int]:
        """Indices of the turns before ``before`` that hold a needle, by :func:`evals.judge.scoring.matched_keywords`.

        The scan only finds candidates fast; the metric decides, so evidence
        on the page never disagrees with the rule that scores a record.
        """
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
        return [turn for turn in sorted(found) if matched_keywords(needles, self.contents[turn])]


def runs_of(turns: list[int]) -> list[tuple[int, int]]:
    """``turns`` as runs of consecutive numbers, in order: [8, 9, 10, 14] -> [(8, 10), (14, 14)]."""
    runs: list[tuple[int, int]] = []
    for turn in turns:
        if runs and turn == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], turn)
        else:
            runs.append((turn, turn))
    return runs


def _records_are_history(refs: list[int | None], turn_index: int) -> bool:
    return len(refs) == turn_index and turn_index > 0 and all(ref == i for i, ref in enumerate(refs))


def fragment_key(view: PointView, approx: bool) -> tuple[bool, bytes]:
    """The key a test point's rendered section is cached under: a digest of every field of its frozen view but
    the HTML itself (nested views, segments, lists and maps included), and whether token counts are estimates
    (the one other input of the ``point`` macro). Derived from the view, not listed by hand, so nothing the
    section shows can be left out of its key; a digest, so the cache keeps no record's text."""
    digest = hashlib.blake2b(repr(_fields_of(view)).encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return approx, digest


_PLAIN = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, Callable[[Any], tuple]] = {}  # per view class: its fields' values but the HTML, read at C speed


def _getter(kind: type) -> Callable[[Any], tuple]:
    """A function giving the values of every field of dataclass ``kind`` but ``html``, as a tuple."""
    names = [f.name for f in dataclasses.fields(kind) if f.name != "html"]
    get = operator.attrgetter(*names)
    return get if len(names) > 1 else lambda v: (get(v),)  # attrgetter of one name gives the value, not a tuple


def _fields_of(value: Any) -> Any:
    """``value`` as plain, comparable data: a dataclass as its type name and every field (all of them, whether
    shown in its repr or not; a view's ``html`` left out), lists and maps in order."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list or kind is tuple:
        return tuple([_fields_of(item) for item in value])
    if kind is dict:
        return tuple([(key, _fields_of(item)) for key, item in value.items()])
    getter = _FIELDS.get(kind)
    if getter is None:
        if not dataclasses.is_dataclass(kind):
            return value  # anything else a view may hold compares by its own repr
        getter = _FIELDS[kind] = _getter(kind)
    return (kind.__name__, *[_fields_of(item) for item in getter(value)])


def point_view(
    number: int,
    point: Any,
    score: Any,
    refs: list[int | None],
    text: ConversationText,
    cache: Fragments,
    approx: bool,
    answer: Any = None,
    *,
    k: int | None = None,
    link: Callable[[int], str] = lambda turn: f"#t-{turn}",
    context: str = "",
    verdict: str,
    verdict_note: str = "",
    by_evidence: bool = False,
    suspect: str = "",
    protocol: str,
) -> tuple[PointView, list[int], dict[int, int]]:
    """One test point's view (rendered), plus what the turn list needs: its listed evidence turns and each retrieved turn's rank.

    The first ``k`` records are shown in full, the rest up to the cap briefly.
    ``link(turn)`` is where a turn's whole text is (relative to the page),
    ``context`` the transcript at the test point. The rendered section is cached under a key derived from
    the view itself (:func:`fragment_key`), so the same view in another conversation is rendered once.
    ``verdict`` is the headline rule's (evals.judge.headline), ``verdict_note`` the dataset's words for an
    unanswerable question, and ``by_evidence``
    says the rule judges by evidence turns, so "where the answer was" lists them. ``suspect``: why the
    label audit flags the point's evidence label ("" when it does not; evals.site._suspects). ``protocol``
    is the run's answers' protocol: the answer's F1 and BLEU-1 are scored as the run's figures score them.
    """
    ti = point.turn_index
    keywords = list(point.expected_keywords)
    needles = keywords or ([point.expected_fact] if point.expected_fact else [])
    records = point.retrieved_records
    k = len(records) if k is None else k
    tokens = list(score.record_tokens)
    refs = list(refs) if len(refs) == len(records) else [None] * len(records)
    all_history = _records_are_history(refs, ti)

    # A record holding several turns (Record.turns) holds each of them at its rank.
    held = [list(group) if len(group) > 1 else [] for group in (point.ranked_held or [])[: len(records)]]
    held += [[] for _ in range(len(records) - len(held))]
    rank_of_turn: dict[int, int] = {}
    if not all_history:
        for rank, (ref, group) in enumerate(zip(refs, held, strict=True), start=1):
            for turn in group or ([ref] if ref is not None else []):
                if turn not in rank_of_turn:
                    rank_of_turn[turn] = rank
    # Under an evidence rule the answer's place is what the corpus labels, not where a keyword occurs
    # (a keyword scan there calls hundreds of answerable LoCoMo questions unanswerable).
    evidence_turns = sorted(t for t in point.evidence_turns if 0 <= t < ti) if by_evidence else text.turns_holding(needles, ti)
    # Under an evidence rule the records already show the evidence they hold: only what they missed is quoted.
    shown_at = {turn for turn, rank in rank_of_turn.items() if rank <= k} if by_evidence else set()
    unshown = [t for t in evidence_turns if t not in shown_at]
    # Every labelled evidence turn the records missed is quoted (a LoCoMo question has at most a few); turns that
    # merely hold a keyword are capped.
    listed = unshown if by_evidence else unshown[:EVIDENCE_CAP]
    transcript = context.partition("#")[0]  # a turn's own line there is f"{transcript}#t-{turn}"

    views = []
    # Past k, only what explains the verdict is listed (evidence turns, and records holding a keyword unless the rule
    # judges by evidence), at most PAST_K_CAP of them: the rest are only counted, so their views are never made.
    more: list[RecordView] = []
    past_k = 0
    evidence_set = set(point.evidence_turns)
    if not all_history:
        for rank, (record, count, ref) in enumerate(zip(records[:RECORD_CAP], tokens, refs, strict=False), start=1):
            if rank > k:  # beyond the run's k: a line, not the text
                past_k += 1
                evident = ref is not None and ref in evidence_set
                if by_evidence and not evident:
                    continue
                matched = matched_keywords(needles, record)
                if (evident or matched) and len(more) < PAST_K_CAP:
                    start = record[: SNIPPET + 1]
                    more.append(
                        RecordView(rank, count, [Segment(start, False)], matched, ref, ti - ref if ref is not None else None,
                                   False, href=link(ref) if ref is not None else "", evidence=evident,
                                   label=_name(text, ref), date=_date(text, ref))
                    )  # fmt: skip
                continue
            # Without keywords the needle is the expected fact, which one record must hold, as in evals.judge.scoring.match.
            matched = matched_keywords(needles, record)
            # A record that is not a turn (a summary of the whole history) is quoted short: the page
            # repeats it at every test point; its whole text is in the run's JSON.
            shown = (
                clip(record, tuple(needles) if matched else ())
                if ref is not None
                else clip(record, tuple(needles) if matched else (), SUMMARY_HEAD, SUMMARY_TAIL)
            )
            views.append(
                RecordView(
                    rank=rank,
                    tokens=count,
                    segments=shown.head,
                    matched=matched,
                    turn=ref,
                    distance=ti - ref if ref is not None else None,
                    long=len(record) > LONG_RECORD,
                    tail=shown.tail,
                    omitted=shown.omitted,
                    length=shown.length,
                    href=link(ref) if ref is not None else "",
                    evidence=(ref is not None and ref in evidence_set) or any(t in evidence_set for t in held[rank - 1]),
                    label=_name(text, ref),
                    date=_date(text, ref),
                    holds=[(a, b, link(a), link(b)) for a, b in runs_of(held[rank - 1])],
                    filled=bool(held[rank - 1])
                    and not matched
                    and 0 <= held[rank - 1][0] < len(text.contents)
                    and record == text.contents[held[rank - 1][0]],
                    date_index=text.date_index(ref),
                    own_href="" if ref is None or link(ref) == f"{transcript}#t-{ref}" else link(ref),
                )
            )
        # A run measured at deeper cutoffs than k keeps its ranking that deep (ranked_turns): the ranks past its records.
        ranked = point.ranked_turns or []
        for rank in range(max(len(records), k) + 1, min(len(ranked), RECORD_CAP) + 1):
            past_k += 1
            turn = ranked[rank - 1]
            evident = turn in evidence_set
            if by_evidence and not evident:
                continue
            matched = matched_keywords(needles, text.contents[turn]) if turn is not None and turn < len(text.contents) else []
            if (evident or matched) and len(more) < PAST_K_CAP:
                more.append(
                    RecordView(rank, None, [], matched, turn, ti - turn if turn is not None else None, False,
                               href=link(turn) if turn is not None else "", evidence=evident,
                               label=_name(text, turn), date=_date(text, turn))
                )  # fmt: skip
    # Where the ranking a run kept past its records put each turn (ranked_turns): an evidence turn
    # found there was ranked, just not within k, which is not the same as never ranked.
    ranked_past: dict[int, int] = {}
    if not all_history:
        for rank, turn in enumerate((point.ranked_turns or [])[len(records) :], start=len(records) + 1):
            if turn is not None and turn not in ranked_past and turn not in rank_of_turn:
                ranked_past[turn] = rank
    more_hidden = past_k - len(more)
    hidden = 0 if all_history else max(0, len(records) - RECORD_CAP)
    retrieved_turns = {r for r in refs if r is not None} if point.evidence_turns else set()
    evidence = []
    for turn in listed:
        shown = clip(text.contents[turn], tuple(needles))
        evidence.append(
            EvidenceView(
                turn=turn,
                distance=ti - turn,
                role=text.speakers[turn],
                segments=shown.head,
                retrieved_rank=rank_of_turn.get(turn),
                ranked_past_k=ranked_past.get(turn),
                tail=shown.tail,
                omitted=shown.omitted,
                length=shown.length,
                href=link(turn),
                label=_name(text, turn),
                date=_date(text, turn),
                long=len(text.contents[turn]) > LONG_RECORD if turn < len(text.contents) else False,
            )
        )
    view = PointView(
        number=number,
        anchor=test_point_anchor(ti),
        turn_index=ti,
        question=point.question,
        expected_fact=point.expected_fact,
        keywords=keywords,
        hit=verdict == "hit",
        strict_hit=score.strict_hit,
        rank=score.rank,
        context_tokens=sum(tokens),
        record_count=len(records),
        records=views,
        records_hidden=hidden,
        records_hidden_tokens=sum(tokens[RECORD_CAP:]) if hidden else 0,
        all_history=all_history,
        evidence=evidence,
        evidence_hidden=len(unshown) - len(listed),
        answerable=point.answerable,
        category=point.category,
        evidence_turns=list(point.evidence_turns),
        evidence_retrieved=[t for t in point.evidence_turns if t in retrieved_turns],
        evidence_ranks={t: rank_of_turn.get(t) for t in point.evidence_turns},
        evidence_missed=[t for t in point.evidence_turns if t not in retrieved_turns],
        evidence_ranked_past_k={t: ranked_past[t] for t in point.evidence_turns if t not in retrieved_turns and t in ranked_past},
        answer=None
        if answer is None
        else AnswerView(
            text=answer.answer,
            correct=answer.correct,
            reason=answer.reason,
            keyword_hit=answer.keyword_hit,
            tokens=answer.prompt_tokens + answer.completion_tokens,
            latency_s=answer.latency_s,
            verdict=answer.verdict,
            graded=answer.score if answer.verdict is not None else None,
            **answer_scores(point, answer, protocol_lexical(protocol)),
        ),
        k=k,
        records_more=more,
        evidence_hrefs=[link(t) for t in point.evidence_turns],
        context_href=context,
        verdict=verdict,
        verdict_note=verdict_note,
        by_evidence=by_evidence,
        records_more_hidden=more_hidden,
        suspect=suspect,
        evidence_names={t: _name(text, t) for t in point.evidence_turns},
        evidence_dates={t: _date(text, t) for t in point.evidence_turns},
        kept=max(len(records), len(point.ranked_turns or ())),
    )
    key = fragment_key(view, approx)
    cached = cache.points.get(key)
    if cached is not None:
        return cached, listed, rank_of_turn
    return cache.point(key, view, approx), listed, rank_of_turn


def _name(text: ConversationText, turn: int | None) -> str:
    """The benchmark's name of ``turn`` where it differs from the harness's ("" for none, or "turn N")."""
    if turn is None:
        return ""
    name = text.ids.label(turn)
    return "" if name == f"turn {turn}" else name


def _date(text: ConversationText, turn: int | None) -> str:
    return "" if turn is None else text.ids.date(turn)


def conversation_views(
    conversation: Any,
    scores: list[Any],
    refs: list[list[int | None]],
    text: ConversationText,
    cache: Fragments,
    approx: bool,
    answers: list[Any] | None = None,
    *,
    k: int | None = None,
    link: Callable[[int], str] = lambda turn: f"#t-{turn}",
    context: Callable[[int], str] = lambda turn: f"#t-{turn}",
    verdicts: list[str],
    unanswerable_words: str = "",
    by_evidence: bool = False,
    suspects: dict[int, str] | None = None,
    protocol: str,
) -> tuple[list[PointView], list[TurnLine]]:
    """Every test point's view, and the turns they touched (retrieved, asked, evidence, answer) in
    conversation order, tagged with the test points they served, each a snippet linked to its whole
    text (``link``). ``context(turn)`` links the transcript at a test point's turn. ``verdicts`` are the
    headline rule's, per test point; ``unanswerable_words`` how the dataset
    describes a question it marks unanswerable; ``suspects`` the test points (by turn) the label audit
    flags, with why; ``protocol`` the run's answers' protocol."""
    marks: dict[int, list[TurnMark]] = defaultdict(list)
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
            k=k,
            link=link,
            context=context(point.turn_index),
            verdict=verdicts[number - 1],
            verdict_note="" if point.answerable else unanswerable_words,
            by_evidence=by_evidence,
            suspect=(suspects or {}).get(point.turn_index, ""),
            protocol=protocol,
        )
        points.append(view)
        for turn, rank in rank_of_turn.items():
            if k is None or rank <= k:
                marks[turn].append(TurnMark("retrieved", number, view.anchor, rank, view.hit, f"TP{number} #{rank}", ""))
        for turn in evidence_turns if not by_evidence else ():
            marks[turn].append(TurnMark("answer", number, view.anchor, None, view.hit, f"TP{number} answer", " ans"))
        for turn in view.evidence_turns:
            marks[turn].append(TurnMark("evidence", number, view.anchor, None, view.hit, f"TP{number} evidence", " evi"))
        asked_css = " ask miss" if view.verdict == "miss" else " ask"
        marks[point.turn_index].append(TurnMark("asked", number, view.anchor, None, view.hit, f"TP{number} asked", asked_css))
    lines = []
    for turn in sorted(t for t in marks if 0 <= t < len(text.contents)):
        tags = marks[turn]
        role = text.roles[turn]
        kinds = {m.kind for m in tags}
        css = (
            f"role-{role.lower()}"
            + ("retrieved" in kinds) * " retrieved"
            + bool(kinds & {"answer", "evidence"}) * " evidence"
            + ("asked" in kinds) * " asked"
        )
        lines.append(cache.line(turn, f"t-{turn}", text.speakers[turn], text.contents[turn], css, tags, (), href=link(turn)))
    return points, lines
