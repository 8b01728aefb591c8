"""The context of every page, as dataclasses: what each template may use, and nothing else.

Each page class names its template. A page is rendered with its fields as the
top-level template variables (``root``, ``title``, ``rows``…), so a test can
check that a template refers only to the fields documented here, and Jinja's
``StrictUndefined`` fails the build if a template reaches for anything else.

Every link a model carries is relative to the site root (``runs/abc.html``);
templates put the page's ``root`` (``""``, ``"../"``, ``"../../"``) in front,
so the site works from ``file://`` and under any URL prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from evals.site._charts import Chart
from evals.site._text import Segment
from evals.views.tables import Caveat

if TYPE_CHECKING:
    from evals.site._retrieval import CutoffTable

__all__ = [
    "AboutPage",
    "AnswerView",
    "AnswersBlock",
    "CostRow",
    "ServedRow",
    "PromptView",
    "BenchmarkInfo",
    "BoardRow",
    "ConfigRow",
    "CategoryRow",
    "CompareSection",
    "ComparePage",
    "ConfigInfo",
    "ConversationPage",
    "ConversationRow",
    "CorpusBoard",
    "EvidenceView",
    "FlipRow",
    "FrontPage",
    "FrontRow",
    "LeaderView",
    "HistoryIndexPage",
    "HistoryPage",
    "HistoryRow",
    "IndexPage",
    "MissRow",
    "NavEntry",
    "Page",
    "PassageBlock",
    "PassagePage",
    "PassageUse",
    "ReferenceRow",
    "ClaimRow",
    "PairCategory",
    "PairFlip",
    "PairPage",
    "PairRun",
    "PointView",
    "RecordView",
    "RunHeader",
    "RunPage",
    "RunRef",
    "SuspectRow",
    "SuspectSection",
    "SuspectsPage",
    "TranscriptPage",
    "TranscriptPoint",
    "TurnLine",
    "TurnMark",
    "VerdictLink",
]


@dataclass(frozen=True)
class NavEntry:
    """One link of the site navigation; the build derives the list from its publishers."""

    key: str  # the publisher's name, which its pages give as ``nav``
    label: str
    href: str


@dataclass(frozen=True)
class Page:
    """Fields every page has; ``base.html`` uses exactly these."""

    template: ClassVar[str] = ""

    title: str
    root: str  # relative path from this page back to the site root: "", "../", "../../"
    nav: str  # the active navigation entry's key ("leaderboard", "history", …); "" for none
    store_note: str  # footer: how many runs the site was built from and the newest run's time (pages of one run: that run)
    navigation: list[NavEntry]  # every navigation entry, in order
    # The published store (site-root relative), linked from the footer; "" when the site does not carry it, and
    # on pages of one run or one corpus, which later builds reuse as they are (see evals/site/_manifest.py).
    store_href: str


# -- shared pieces -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigInfo:
    """One configuration on one corpus: the unit the leaderboard and history follow."""

    strategy: str
    settings: str  # the strategy's configuration other than its name, "key=value, …"
    config_key: str
    model: str
    k: int
    corpus_name: str
    corpus_digest_short: str
    history_href: str
    caveats: list[Caveat] = field(default_factory=list)  # of its latest run (evals.views.tables.caveats): ceiling, hash embedder


@dataclass(frozen=True)
class RunHeader:
    """The few facts about a run that head its drill-down pages."""

    run_id: str
    href: str
    strategy: str
    settings: str
    model: str
    k: int
    commit_short: str
    dirty: bool
    date: str
    corpus_name: str
    approx_tokens: bool  # tokens were estimated (~4 characters per token), not counted
    # What to know before reading its figures (evals.views.tables.caveats: ceiling, hash embedder); every page that
    # heads with the run shows them with p.caveats(run.caveats).
    caveats: list[Caveat] = field(default_factory=list)


# -- index: the leaderboard --------------------------------------------------------------------


@dataclass(frozen=True)
class MetricColumn:
    """A declared metric (evals.judge.metrics) as a leaderboard column."""

    name: str
    label: str
    description: str
    kind: str  # proportion, mean, tokens, count or seconds
    higher_is_better: bool
    integral: bool = False  # a largest count (records or tokens held): a whole number, shown without decimals
    extra: bool = False  # on the leaderboard, behind the "every column" toggle (not in the default set)


@dataclass(frozen=True)
class MetricCell:
    """One run's value of one metric column."""

    present: bool  # False: the run has no such value (not measured, or stored before it was): "—"
    value: float | None  # None with present: measured without data (no test point): "—" too, never 0
    low: float | None = None  # 95% interval: Wilson for proportions, bootstrap for means that have one
    high: float | None = None
    approx: bool = False  # tokens estimated at ~4 characters per token
    n: int | None = None  # observations the value is over


@dataclass(frozen=True)
class RunMetric:
    column: MetricColumn
    cell: MetricCell


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
    same_ranking: str = ""  # "same ranking as X": runs whose top-k equals this one's on >= 99% of test points


@dataclass(frozen=True)
class ErrataView:
    """A run's headline with errata (evals.analysis.errata): a second figure beside the published one, never in its place."""

    label: str  # "recall_any@k with errata"
    recall: float | None  # None: not computed (``problem`` says why)
    low: float | None
    high: float | None
    hits: int
    total: int
    corrected: int  # test points of the run the errata name
    excluded: int  # ... of which left out as invalid
    changed: int  # verdicts that differ from the published ones
    note: str  # the errata's source, file name and SHA-256
    problem: str = ""


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


@dataclass(frozen=True)
class ClaimRow:
    """A published claim on a board (evals/model/claims.toml), greyed, with the run measuring it the same way."""

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
class BenchmarkInfo:
    """A benchmark as the site lists it: its corpora, and what the registry (evals.benchmarks) says of it."""

    key: str  # evals.views.site_paths.benchmark_key
    title: str
    href: str  # its leaderboard
    known: bool  # in the registry (fetched by name); else imported by hand, or a corpus of its own
    license: str  # "" when not known
    non_commercial: bool
    homepage: str
    source: str  # where its data file is published ("" when not known)
    version: str
    pin: str  # how its data file is pinned, in words ("" when not known)
    trust_on_first_use: bool  # pinned by the lock file's record of the first download, not a published digest
    evidence: str  # the labels it carries
    note: str  # how a corpus not in the registry came to be shown here
    corpora: list[tuple[str, str, str]]  # (name, digest short, anchor), newest run first
    suspects: int  # test points the label audit flags
    checked: int  # test points it could check
    suspects_href: str
    runs: int  # runs in the store on its corpora
    configurations: int  # configurations on its leaderboard


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


# -- run page ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversationRow:
    conversation_id: str
    description: str
    href: str
    turn_count: int
    hits: int
    total: int
    misses: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    context_tokens: int
    tokens: float | None  # per test point


@dataclass(frozen=True)
class MissRow:
    conversation_id: str
    turn_index: int
    question: str
    href: str  # the drill-down, at this test point
    suspect: str = ""  # why the label audit flags this test point's evidence label ("" when it does not)
    category: str = ""  # the benchmark's category or ability ("" for none), as the by-category table names it


@dataclass(frozen=True)
class AnswersBlock:
    """A run's end-to-end answers: how they were made, how good, at what cost."""

    answer_model: str
    judge_model: str | None
    base_url: str
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    correct: int | None
    judged: int
    keyword_accuracy: float | None
    keyword_hits: int
    total: int
    # Mean token F1 and BLEU-1 against the expected facts, with 95% bootstrap intervals; None: not recorded.
    f1: float | None
    f1_low: float | None
    f1_high: float | None
    bleu1: float | None
    bleu1_low: float | None
    bleu1_high: float | None
    mean_latency_s: float | None
    requests_made: int
    requests_cached: int
    prompt_tokens: int
    completion_tokens: int
    tokens_per_test_point: float | None
    prompts: str  # "answer 1a2b…, judge …": digests of the prompts used
    wrong: list[MissRow]  # test points the judge graded incorrect (or, a graded judge, less than fully correct)
    # The answers as the run's protocol counts them: evals.views.breakdown.answer_figures (the result JSON's block).
    figures: dict[str, Any] | None = None
    # issue 25, protocols: which asked (and which judged), the published files their templates were read
    # from, (label "owner/repo@commit/path", link, sha256), and each template's digest, ("protocol: name", digest).
    protocol: str = "harness"
    judge_protocol: str = "harness"
    source_files: list[tuple[str, str, str]] = field(default_factory=list)
    templates: list[tuple[str, str]] = field(default_factory=list)
    # issue 25, costs (h25cost): per kind of request and per model served; empty for runs stored before.
    costs: list[CostRow] = field(default_factory=list)
    served: list[ServedRow] = field(default_factory=list)
    usd_spent: float | None = None
    usd_per_correct: float | None = None
    tokens_per_correct: float | None = None
    unpriced: list[str] = field(default_factory=list)  # models that used tokens and have no price
    repeats: str = ""  # with --judge-repeats: "0.750 ± 0.020 (mean ± sd over 3 repeats)"

    @property
    def score(self) -> dict[str, Any] | None:
        """The protocol's own mean score where it scores rather than counts verdicts (LoCoMo's F1 without a judge, a
        graded judge's grades): the figures' overall figure, the one the protocol's table shows; None otherwise."""
        overall = (self.figures or {}).get("overall")
        return overall if overall is not None and overall.get("interval") == "bootstrap" else None


@dataclass(frozen=True)
class CostRow:
    """One kind of LLM request of a run (answer, judge, memory write): what was sent and what came from
    the cache, its tokens over its own denominator, its price and dollars spent."""

    kind: str
    model: str
    sent: int
    cached: int
    prompt_tokens: int  # sent
    completion_tokens: int
    cached_prompt_tokens: int
    cached_completion_tokens: int
    per_unit: str  # "test point answered", "test point judged", "conversation"
    per_n: int
    tokens_per: float | None
    price: str  # "$0.15 in / $0.6 out per 1M (source, date)" or "no price"
    usd_spent: float | None  # None: no price


@dataclass(frozen=True)
class ServedRow:
    """A model (and system fingerprint) the endpoint said answered some of one kind's requests."""

    kind: str
    asked: str
    served: str  # "(not said)" where the replies named none
    fingerprint: str
    requests: int
    differs: bool  # not the model asked for, nor a dated snapshot of the undated name asked


@dataclass(frozen=True)
class CategoryRow:
    """One test point category of a run: the headline (hits, total, recall: the run's rule, over the
    category's points it counts), evidence recall over its answerable points."""

    category: str  # "(none)" for test points without a category
    hits: int
    total: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    evidence_total: int  # answerable test points with evidence turns
    evidence_any: float | None
    evidence_all: float | None
    unanswerable: int


@dataclass(frozen=True)
class RunPage(Page):
    template: ClassVar[str] = "run.html"

    run: RunHeader
    # The headline (evals.judge.headline): ``recall``, its interval, ``hits`` / ``total`` are the rule's figure.
    headline_label: str
    population: str  # which test points the headline counts
    follows: str  # the published code whose rule it is
    rule_note: str  # what differs from that code ("" when nothing)
    by_evidence: bool  # the rule judges by evidence turns; keyword recall is then shown beside, labelled
    counts_unanswerable: bool  # the rule counts the test points the dataset marks unanswerable
    keyword_recall: float | None
    keyword_hits: int
    keyword_total: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    metrics: list[RunMetric]  # every declared metric the run has, in declaration order
    cache_note: str  # what the embedding cache did for this run; "" when it used none
    hits: int
    total: int
    tokens: float | None
    context_tokens: int
    provenance: list[tuple[str, str]]  # every field the store recorded, as (label, text)
    json_href: str  # the run's JSON, gzipped; "" when too big to publish (then ``json_command`` writes it from the store)
    history_href: str
    misses: list[MissRow]
    conversations: list[ConversationRow]  # conversations with misses first
    categories: list[CategoryRow] = field(default_factory=list)  # empty when no test point has a category
    evidence: CategoryRow | None = None  # the whole run's evidence recall, when test points list evidence turns
    unanswerable: int = 0  # test points kept out of recall (answerable: false)
    answers: AnswersBlock | None = None
    retrieval: list[CutoffTable] = field(default_factory=list)  # per (level, metric): this run, then published figures
    retrieval_cutoffs: list[int] = field(default_factory=list)  # the union of the tables' cutoffs
    cutoff_chart: Chart | None = None
    retrieval_absent: str = ""  # why ``retrieval`` is empty (evals.site._retrieval.retrieval_absence)
    latency_chart: Chart | None = None
    json_command: str = ""  # the `evals export` command that writes the run's JSON, when the site does not carry it
    errata: ErrataView | None = None  # the headline with errata, beside the published one (evals build-site --errata)


# -- conversation drill-down -------------------------------------------------------------------


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
    # A record holding several turns (a session, a chunk; Record.turns): (turn, href) of each, in order ([]: one or none).
    holds: list[tuple[int, str]] = field(default_factory=list)


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


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class TurnMark:
    """A tag on a transcript turn, tying it to one test point."""

    kind: str  # "retrieved" (with its rank), "answer" (holds an expected keyword), "evidence" or "asked" (the test point's turn)
    number: int  # the test point's number
    anchor: str  # the test point's section id on this page ("tp-14")
    rank: int | None  # for "retrieved"
    hit: bool  # for "asked": whether that test point was a hit
    label: str  # the tag's text: "TP1 #3", "TP1 answer", "TP1 asked"
    css: str  # the tag's extra classes: "", " ans", " ask", " ask miss"


@dataclass(slots=True)  # built by the thousand per run: slots, not frozen, for speed
class TurnLine:
    """One turn of a transcript (a conversation's, a passage's) or of a drill-down's list of the turns its test points touched."""

    turn: int  # its number in the list: the turn's index (a passage's turns: their offset in it)
    anchor: str  # the line's id: "t-<turn>" (a passage's turns: "p-<offset>")
    role: str
    text: str  # the turn's text, shown as is when ``segments`` is empty
    segments: list[Segment]  # the text with keywords marked, where this turn holds a test point's answer
    marks: list[TurnMark]  # in test point order
    css: str  # classes: "role-<role>" plus "retrieved", "evidence", "asked" as the marks say
    html: str  # this line as the ``turn_line`` macro in _partials.html renders it (once per distinct line)
    tail: list[Segment] = field(default_factory=list)  # a clipped turn's end (``segments`` is then its start)
    omitted: int = 0  # characters left out between start and end (0: the turn is shown whole)
    length: int = 0  # characters of the whole turn
    full_href: str = ""  # a clipped turn's whole text, as a plain-text file (relative to the page)
    href: str = ""  # in a drill-down, where the whole turn is (relative to the page); its text is then a snippet


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


# -- transcripts: once per corpus ----------------------------------------------------------------


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


# -- history -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryRow:
    run_id: str
    run_href: str
    commit: str
    commit_short: str
    dirty: bool
    date: str
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    hits: int
    total: int
    tokens: float | None
    approx_tokens: bool
    drop: str  # why this run is flagged as a drop from the previous one; "" when it is not


@dataclass(frozen=True)
class HistoryPage(Page):
    template: ClassVar[str] = "history.html"

    config: ConfigInfo
    headline_label: str  # the headline's name (evals.judge.headline): the figure every row shows
    recall_chart: Chart
    tokens_chart: Chart
    approx_tokens: bool
    rows: list[HistoryRow]  # newest first
    drops: int
    latency_chart: Chart | None = None  # retrieve p95 across runs, where runs recorded it


@dataclass(frozen=True)
class HistoryIndexPage(Page):
    template: ClassVar[str] = "history_index.html"

    configs: list[tuple[ConfigInfo, int, int]]  # (configuration, number of runs, number of drops)


# -- compare -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRef:
    run_id: str
    href: str
    commit_short: str
    dirty: bool
    date: str
    hits: int
    total: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None


@dataclass(frozen=True)
class FlipRow:
    conversation_id: str
    turn_index: int
    question: str
    became: str  # "miss" (hit → miss) or "hit" (miss → hit)
    older_href: str
    newer_href: str


@dataclass(frozen=True)
class CompareSection:
    anchor: str
    config: ConfigInfo
    older: RunRef
    newer: RunRef
    flips: list[FlipRow]  # hit → miss first
    to_miss: int
    to_hit: int
    unmatched: int  # test points present in only one of the two runs
    shared: int  # test points in both: the pairs McNemar's test compares
    p_value: float  # McNemar's exact two-sided p over the shared test points
    p_text: str
    pair_href: str = ""  # the two runs side by side (compare/<older>-vs-<newer>.html)


@dataclass(frozen=True)
class PairLink:
    """One compare page (compare/<A>-vs-<B>.html) as compare.html lists it: both runs named, A ranked above B."""

    href: str
    a: str  # "bm25 k=5 · 14.4%"
    b: str


@dataclass(frozen=True)
class PairGroup:
    """The compare pages of one corpus."""

    corpus_name: str
    digest_short: str
    pairs: list[PairLink]


@dataclass(frozen=True)
class ComparePage(Page):
    template: ClassVar[str] = "compare.html"

    sections: list[CompareSection]
    single_commit: list[ConfigInfo] = field(default_factory=list)  # configurations with one commit only
    pair_groups: list[PairGroup] = field(default_factory=list)  # every compare page the site has, by corpus


# -- two runs side by side (compare/<A>-vs-<B>.html) ---------------------------------------------


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


# -- label suspects ------------------------------------------------------------------------------


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


# -- about -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AboutPage(Page):
    template: ClassVar[str] = "about.html"

    exact_tokenizer: str
    approx_tokenizer: str
    reference_strategy: str  # what the leaderboard's relative cost is relative to
    metrics: list[MetricColumn] = field(default_factory=list)  # every declared metric (evals.judge.metrics)
    prompts: list[PromptView] = field(default_factory=list)
    rules: list[RuleView] = field(default_factory=list)  # each headline rule (evals.judge.headline)


@dataclass(frozen=True)
class RuleView:
    """One headline rule, as the methodology page states it."""

    corpus: str  # which corpora it judges
    label: str
    population: str
    follows: str
    note: str


@dataclass(frozen=True)
class PromptView:
    """One fixed prompt, as shipped."""

    name: str
    file: str
    digest: str  # what a run records in its LLM settings
    text: str
