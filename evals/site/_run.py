"""Run pages: each run's summary page, its JSON, and one drill-down page per conversation.

These are the only pages made from one run alone, so they are what worker
processes render in parallel (see :mod:`evals.site._workers`), and what a later
build reuses as they are (:mod:`evals.site._manifest`). A run is read a slice
of conversations at a time, so memory holds one slice, not the whole run.
"""

from __future__ import annotations

import dataclasses
import gzip
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from evals.benchmarks import protocol_lexical
from evals.benchmarks.turn_ids import TurnIds
from evals.judge.headline import KEYWORD, MISS, Verdict, at_k, headline_by_category, verdicts
from evals.judge.metrics import METRICS, MetricValue, ScoredRun, grouped, point_values
from evals.judge.scoring import PointScore, Scores
from evals.model import costs
from evals.model.formatting import visible
from evals.model.results import PER, AnswerRun, ConversationResult, RunResult, TestPointResult
from evals.site._charts import Chart
from evals.site._drilldown import ConversationPage, ConversationText, conversation_views
from evals.site._errata import errata_view
from evals.site._fragments import Fragments
from evals.site._leaderboard import metric_cell, metric_column
from evals.site._output import Output
from evals.site._pages import ErrataView, MetricCell, MetricColumn, Page, RunHeader
from evals.site._provenance import cache_note, provenance_rows
from evals.site._publisher import Publisher, RunSource, Site
from evals.site._retrieval import CutoffTable, cutoff_chart, cutoff_tables, latency_chart, retrieval_absence
from evals.site._suspects import suspect_marks
from evals.site._views import run_header
from evals.store import RunSummary, StoredRun
from evals.views.breakdown import answer_figures, category_rows, evidence_block, unanswerable_block
from evals.views.names import row_name
from evals.views.report import conversation_json, legacy_json_parts
from evals.views.site_paths import POINTS_PER_PAGE, Paths, config_id, root_of
from evals.views.tables import KIND_LABELS, price_text

__all__ = [
    "AnswersBlock",
    "CategoryRow",
    "ConversationRow",
    "CostRow",
    "JSON_LIMIT",
    "MissRow",
    "RunMetric",
    "RunPage",
    "RunPublisher",
    "ServedRow",
    "run_note",
]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class RunMetric:
    column: MetricColumn
    cell: MetricCell


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
    # The protocols: which asked (and which judged), the published files their templates were read
    # from, (label "owner/repo@commit/path", link, sha256), and each template's digest, ("protocol: name", digest).
    protocol: str = "harness"
    judge_protocol: str = "harness"
    source_files: list[tuple[str, str, str]] = field(default_factory=list)
    templates: list[tuple[str, str]] = field(default_factory=list)
    # Costs: per kind of request and per model served; empty for runs stored before.
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
    headline_at_k: str  # the same with the run's k filled in (evals.judge.headline.at_k): recall_any@10
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
    errata_at_k: str = ""  # its label with the run's k filled in (evals.judge.headline.at_k)

OPEN_TRANSCRIPT = 30  # lists of touched turns up to this long are shown unfolded
# A conversation with more test points than this gets no list of the turns they touched (each test
# point links its own turns, and the transcript is a click away): on LoCoMo that list alone was a
# third of a page's elements.
TOUCHED_LIST_POINTS = 40
# A run's JSON is published (gzipped) when it is at most this many bytes uncompressed; a bigger one
# (full_history over long conversations repeats every earlier turn at every test point) is left to
# `evals export`, which writes it from the store.
JSON_LIMIT = 40_000_000
JSON_GZIP_LEVEL = 6


class RunPublisher(Publisher):
    """Each run's page, its JSON in the original harness's shape, and a drill-down per conversation."""

    name = "runs"
    pages = (RunPage, ConversationPage)

    def __init__(self) -> None:
        self._fragments: Fragments | None = None  # one per process: made from the first run's environment

    def publish_run(self, run: RunSource, site: Site, output: Output) -> None:
        if self._fragments is None:
            self._fragments = Fragments(site.env)
        _run_pages(run, site, output, self._fragments)


def run_note(s: RunSummary) -> str:
    """The footer of a run's pages: about the run alone, so the pages stay as they are when runs are added."""
    return f"Run {s.run_id}, made {s.timestamp.strftime('%Y-%m-%d %H:%M UTC')}."


class _Json:
    """The run's document, written as its conversations come, if it stays under :data:`JSON_LIMIT`."""

    def __init__(self, over: bool = False) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.over = over  # known too big from the start

    def add(self, conversation: dict[str, Any]) -> None:
        if self.over:
            return
        chunk = orjson.dumps(conversation)
        self.size += len(chunk) + 1
        if self.size > JSON_LIMIT:
            self.over, self.chunks = True, []
        else:
            self.chunks.append(chunk)

    def finish(self, head: dict[str, Any], tail: dict[str, Any]) -> bytes | None:
        """The gzipped document (deterministic: no name, time 0), or None when it was too big."""
        if self.over:
            return None
        items = [
            *(orjson.dumps(k) + b":" + orjson.dumps(v) for k, v in head.items()),
            b'"conversations":[' + b",".join(self.chunks) + b"]",
        ]
        items += [orjson.dumps(k) + b":" + orjson.dumps(v) for k, v in tail.items()]
        body = b"{" + b",".join(items) + b"}\n"
        if len(body) > JSON_LIMIT:
            return None
        return gzip.compress(body, compresslevel=JSON_GZIP_LEVEL, mtime=0)


def _run_pages(run: RunSource, site: Site, output: Output, cache: Fragments) -> None:
    """The run page, its seed-shaped JSON, and one drill-down per conversation."""
    env, paths = site.env, site.paths
    s = run.summary
    note = run_note(s)
    layout = site.layouts[s.corpus_digest]
    header = run_header(s, paths)
    hrefs = [paths.conversation(s.run_id, cid) for cid in run.conversation_ids]
    json_href = paths.run_json(s.run_id)
    rows: list[tuple[int, ConversationRow]] = []
    misses: list[MissRow] = []
    wrong: list[MissRow] = []
    document = _Json(over=s.context_tokens > JSON_LIMIT)  # a token is at least a byte of the records' text
    # The whole run without its texts: every record an empty placeholder (the numbers need only how many there are).
    light: list[ConversationResult] = []
    score_lists: list[list[PointScore]] = []
    answer_points: list[list[Any]] = []
    first: RunResult | None = None
    last: StoredRun | None = None
    answers_of_run: AnswerRun | None = None
    position = 0
    rule = s.headline.rule  # one rule judges every test point of the run (evals.judge.headline)
    row_metrics = (rule.metric, "tokens_per_test_point")
    verdicts_of_run: list[list[Verdict]] = []  # kept for the build's other pages (evals.site._computed)
    for part in run.parts():
        first, last = first or part.run, part
        answers = part.answers
        answers_of_run = answers_of_run or answers
        # Each test point's verdict is the rule metric's value there; its conversation's row aggregates them.
        values_here = point_values(ScoredRun(part.run, part.scores), row_metrics)
        per_conversation = grouped(values_here, "conversation")
        answerable = [s_.answerable for conv in part.scores.points for s_ in conv]
        flat = verdicts(rule, values_here.columns.get(rule.metric, [None] * len(answerable)), answerable)
        split: list[list[Verdict]] = [[] for _ in part.run.conversations]
        for where, verdict in zip(values_here.conversations, flat, strict=True):
            split[where].append(verdict)
        verdicts_of_run.extend(split)
        for index, (conversation, scores) in enumerate(zip(part.run.conversations, part.scores.points, strict=True)):
            point_answers = answers.points[index] if answers is not None else None
            cid = conversation.conversation_id
            paths.set_test_points(s.run_id, cid, [p.turn_index for p in conversation.test_points])
            href = hrefs[position]
            recall = per_conversation[index].get(rule.metric) or MetricValue(None, 0)
            spent = per_conversation[index]["tokens_per_test_point"]
            hits, total, context_tokens = recall.successes or 0, recall.n, spent.total
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
                        recall=recall.value,
                        recall_low=recall.low,
                        recall_high=recall.high,
                        context_tokens=context_tokens,
                        tokens=spent.value,
                    ),
                )
            )
            suspects = suspect_marks(site, s.corpus_digest, cid)  # the label audit's flags (evals.site._suspects)
            missed = [p for p, verdict in zip(conversation.test_points, split[index], strict=True) if verdict == MISS]
            misses.extend(_miss_row(paths, s.run_id, cid, p, suspects) for p in missed)
            if point_answers is not None:
                wrong_answers = [p for p, a in zip(conversation.test_points, point_answers, strict=True) if a.correct is False]
                wrong.extend(_miss_row(paths, s.run_id, cid, p, suspects) for p in wrong_answers)
            ids = TurnIds(part.sessions.get(cid), part.dates.get(cid), s.benchmark)
            text = ConversationText(part.transcripts.get(cid, []), ids)
            root = root_of(href)
            points, touched = conversation_views(
                conversation,
                scores,
                part.record_turns.get(cid, []),
                text,
                cache,
                header.approx_tokens,
                point_answers,
                k=s.k,
                link=lambda turn, cid=cid, root=root: root + layout.turn_href(paths, cid, turn),
                context=lambda turn, cid=cid, root=root: root + layout.context_href(paths, cid, turn),
                verdicts=split[index],
                unanswerable_words=rule.unanswerable_words,
                by_evidence=rule.by_evidence,
                suspects=suspects,
                protocol=answers.protocol if answers is not None else "harness",
            )
            # A long conversation's test points go on pages of POINTS_PER_PAGE (paths.test_point knows which);
            # every page carries the header and the misses of the whole conversation.
            chunks = [points[i : i + POINTS_PER_PAGE] for i in range(0, len(points), POINTS_PER_PAGE)] or [[]]
            page_hrefs = [paths.conversation(s.run_id, cid, n) for n in range(len(chunks))]
            many = len(points) > TOUCHED_LIST_POINTS
            toc = [pt for pt in points if pt.verdict == MISS] + ([] if many else [pt for pt in points if pt.verdict != MISS])
            page_of_anchor = {pt.anchor: position_ // POINTS_PER_PAGE for position_, pt in enumerate(points)}
            for number, chunk in enumerate(chunks):
                output.page(
                    env,
                    page_hrefs[number],
                    ConversationPage(
                        **site.frame(
                            f"{cid} \u00b7 {row_name(s)} \u00b7 run {s.run_id}"
                            + (f" \u00b7 page {number + 1}" if number else ""),
                            href=page_hrefs[number],
                            note=note,
                        ),
                        run=header,
                        conversation_id=cid,
                        description=conversation.description,
                        turn_count=len(text.contents),
                        headline_label=rule.label,
                        population=rule.population,
                        hits=hits,
                        total=total,
                        recall=recall.value,
                        recall_low=recall.low,
                        recall_high=recall.high,
                        context_tokens=context_tokens,
                        points=chunk,
                        # Misses first; on a conversation of very many test points, the misses alone (the rest are counted).
                        toc=toc,
                        toc_hrefs=[
                            (
                                ""
                                if page_of_anchor[pt.anchor] == number
                                else page_hrefs[page_of_anchor[pt.anchor]].rsplit("/", 1)[-1]
                            )
                            + f"#{pt.anchor}"
                            for pt in toc
                        ],
                        toc_unlisted=sum(pt.verdict != MISS for pt in points) if many else 0,
                        transcript=[] if many else touched,
                        transcript_open=len(touched) <= OPEN_TRANSCRIPT,
                        touched_unlisted=len(touched) if many else 0,
                        previous_href=hrefs[position - 1] if position > 0 else "",
                        next_href=hrefs[position + 1] if position + 1 < len(hrefs) else "",
                        transcript_href=paths.transcript(s.corpus_digest, cid),
                        pages=[
                            (f"{n * POINTS_PER_PAGE + 1}–{n * POINTS_PER_PAGE + len(c)}", page_hrefs[n].rsplit("/", 1)[-1])
                            for n, c in enumerate(chunks)
                        ]
                        if len(chunks) > 1
                        else [],
                        page=number,
                        withheld=site.withheld.get(s.corpus_digest, ""),
                        dates=orjson.dumps([visible(d) for d in text.dates]).decode(),
                    ),
                )
            if not document.over:
                document.add(
                    conversation_json(
                        conversation, point_answers, answers.protocol if answers is not None else "harness", split[index]
                    )
                )
            light.append(
                conversation.model_copy(
                    update={
                        "test_points": [
                            tp.model_copy(update={"retrieved_records": [""] * len(tp.retrieved_records)})
                            for tp in conversation.test_points
                        ]
                    }
                )
            )
            score_lists.append(scores)
            if point_answers is not None:
                answer_points.append(point_answers)
            position += 1
    assert first is not None and last is not None  # Store.iter_run yields at least one slice
    site.computed.keep(s.run_id, rule.metric, verdicts_of_run)
    # The published document names its corpus, never the folder of the machine that ran it (docs/site.md).
    whole = first.model_copy(update={"conversations": light, "corpus_dir": s.corpus_name})
    scores_of_run = Scores(tokenizer=s.tokenizer, conversation_ids=[c.conversation_id for c in light], points=score_lists)
    answers_whole = dataclasses.replace(answers_of_run, points=answer_points) if answers_of_run is not None else None
    lexical = protocol_lexical(answers_whole and answers_whole.protocol)
    values = point_values(ScoredRun(whole, scores_of_run, answers_whole, lexical))
    head, tail = legacy_json_parts(whole, scores_of_run, answers_whole, s.metrics, values)
    gzipped = document.finish(head, tail)
    if gzipped is not None:
        output.raw(json_href, gzipped)
    ordered = [row for _, row in sorted(rows, key=lambda pr: (pr[1].misses == 0, pr[0]))]
    head, keyword = s.headline, s.metric(KEYWORD.metric)
    by_category = headline_by_category(values, rule) if values.categories and any(values.categories) else {}
    run_href = paths.run(s.run_id)
    errata = errata_view(site.errata.of(s.run_id)) if site.errata else None
    output.page(
        env,
        run_href,
        RunPage(
            **site.frame(f"Run {s.run_id}: {row_name(s)} on {s.corpus_name}", href=run_href, note=note),
            run=header,
            headline_label=rule.label,
            headline_at_k=at_k(rule.label, s.k),
            population=rule.population,
            follows=rule.follows,
            rule_note=rule.note,
            by_evidence=rule.by_evidence,
            counts_unanswerable=rule.counts_unanswerable,
            keyword_recall=keyword.value if keyword else None,
            keyword_hits=(keyword.successes or 0) if keyword else 0,
            keyword_total=keyword.n if keyword else 0,
            recall=head.recall,
            recall_low=head.low,
            recall_high=head.high,
            metrics=[RunMetric(metric_column(m), metric_cell(m, s)) for m in METRICS.values() if m.name in s.metrics],
            cache_note=cache_note(s),
            hits=head.hits,
            total=head.total,
            tokens=s.tokens_per_test_point,
            context_tokens=s.context_tokens,
            provenance=provenance_rows(s),
            json_href=json_href if gzipped is not None else "",
            history_href=paths.history(*config_id(s)),
            misses=misses,
            conversations=ordered,
            categories=[_category_row(row, by_category.get(row["category"])) for row in category_rows(values) or []],
            evidence=_evidence_row(evidence_block(values)),
            **_retrieval_views(s, last.references, last.latency, run_href),
            retrieval_absent=retrieval_absence(
                s, any(tp.evidence_turns or tp.evidence_sessions for c in light for tp in c.test_points)
            ),
            unanswerable=(unanswerable_block(whole, values) or {"count": 0})["count"],
            answers=answers_block(s, wrong, answer_figures(values, answers_whole, s.benchmark))
            if answers_whole is not None
            else None,
            json_command=""
            if gzipped is not None
            else f"evals export {s.run_id} --store results.duckdb --output {s.run_id}.json",
            errata=errata,
            errata_at_k=at_k(errata.label, s.k) if errata else "",
        ),
    )


def _miss_row(paths: Paths, run_id: str, cid: str, p: TestPointResult, suspects: dict[int, str]) -> MissRow:
    """A test point listed among a run's misses or wrong answers, linked to its drill-down."""
    return MissRow(
        conversation_id=cid,
        turn_index=p.turn_index,
        question=p.question,
        href=paths.test_point(run_id, cid, p.turn_index),
        suspect=suspects.get(p.turn_index, ""),
        category=p.category or "",
    )


def _retrieval_views(s: RunSummary, references: list[Any], latency: list[Any], run_href: str) -> dict[str, Any]:
    """The run page's retrieval table over cutoffs (published figures greyed below), recall against
    cutoff, and retrieve latency against records held."""
    tables = cutoff_tables([(row_name(s), run_href, s)], references)
    return {
        "retrieval": tables,
        "retrieval_cutoffs": sorted({c for t in tables for c in t.cutoffs}),
        "cutoff_chart": cutoff_chart(s, references, run_href),
        "latency_chart": latency_chart(
            [(row_name(s), run_href, latency)], f"Retrieve latency against memory size: run {s.run_id}"
        ),
    }


def answers_block(s: RunSummary, wrong: list[MissRow], figures: dict[str, Any] | None = None) -> AnswersBlock:
    settings = s.llm_settings or {}
    prompts = ", ".join(f"{name} {digest}" for name, digest in sorted(settings.get("prompts", {}).items()))
    accuracy, keyword = s.metric("answer_accuracy"), s.metric("keyword_accuracy")
    llm_tokens = s.metric("llm_tokens_per_test_point")
    f1, bleu = s.metric("answer_f1"), s.metric("answer_bleu1")
    return AnswersBlock(
        answer_model=s.answer_model or "",
        judge_model=s.judge_model,
        base_url=s.llm_base_url or "",
        accuracy=accuracy.value if accuracy else None,
        accuracy_low=accuracy.low if accuracy else None,
        accuracy_high=accuracy.high if accuracy else None,
        correct=s.answers_correct,
        judged=s.answers_judged or 0,
        keyword_accuracy=keyword.value if keyword else None,
        keyword_hits=s.answers_keyword_hits or 0,
        total=s.answers_total or 0,
        f1=f1.value if f1 else None,
        f1_low=f1.low if f1 else None,
        f1_high=f1.high if f1 else None,
        bleu1=bleu.value if bleu else None,
        bleu1_low=bleu.low if bleu else None,
        bleu1_high=bleu.high if bleu else None,
        mean_latency_s=s.answer_latency_s,
        requests_made=s.llm_requests_made or 0,
        requests_cached=s.llm_requests_cached or 0,
        prompt_tokens=s.llm_prompt_tokens or 0,
        completion_tokens=s.llm_completion_tokens or 0,
        tokens_per_test_point=llm_tokens.value if llm_tokens else None,
        prompts=prompts,
        wrong=wrong,
        figures=figures,
        **_costs(s),
        **_protocol_views(s),
    )


def _costs(s: RunSummary) -> dict[str, Any]:
    """The run page's cost table and served models, from the usage recorded with the run."""
    usage = s.llm_usage
    if not usage:
        return {}
    rows, served = [], []
    for kind, t in usage.items():
        tokens = t["prompt_tokens"] + t["completion_tokens"] + t["cached_prompt_tokens"] + t["cached_completion_tokens"]
        spent = costs.usd_spent({kind: t})
        rows.append(
            CostRow(
                kind=KIND_LABELS.get(kind, kind),
                model=t["model"],
                sent=t["sent"],
                cached=t["cached"],
                prompt_tokens=t["prompt_tokens"],
                completion_tokens=t["completion_tokens"],
                cached_prompt_tokens=t["cached_prompt_tokens"],
                cached_completion_tokens=t["cached_completion_tokens"],
                per_unit=PER.get(kind, "unit"),
                per_n=t["per"],
                tokens_per=tokens / t["per"] if t["per"] else None,
                price=price_text(t.get("price")),
                usd_spent=spent,
            )
        )
        for by in t.get("served", []):
            served.append(
                ServedRow(
                    kind=KIND_LABELS.get(kind, kind),
                    asked=t["model"],
                    served=by["model"] if by["model"] is not None else "(not said)",
                    fingerprint=by["fingerprint"] or "—",
                    requests=by["requests"],
                    differs=by["model"] is not None and not costs.same_model(t["model"], by["model"]),
                )
            )
    metric = s.metric
    accuracies = [metric("judge_repeat_accuracy_mean"), metric("judge_repeat_accuracy_sd")]
    repeats = ""
    if accuracies[0] is not None and accuracies[1] is not None:
        repeats = f"{accuracies[0].value:.3f} ± {accuracies[1].value:.3f} (mean ± sd over {accuracies[0].n} repeats)"
    return {
        "costs": rows,
        "served": served,
        "usd_spent": metric("usd_spent").value if metric("usd_spent") else None,
        "usd_per_correct": metric("usd_per_correct").value if metric("usd_per_correct") else None,
        "tokens_per_correct": metric("tokens_per_correct").value if metric("tokens_per_correct") else None,
        "unpriced": costs.unpriced(usage),
        "repeats": repeats,
    }


def _protocol_views(s: RunSummary) -> dict[str, Any]:
    """The run's protocols, the published files their templates were read from (linked at the pinned
    commit) and each template's digest; nothing beyond the names for the harness's own prompts."""
    block = (s.llm_settings or {}).get("protocols") or {}
    answer, judge = block.get("answer", {}), block.get("judge", {})
    source = s.protocol_source or {}
    repo, commit = source.get("repository", ""), source.get("commit", "")
    files = [
        (f"{repo}@{commit[:12]}/{path}", f"https://github.com/{repo}/blob/{commit}/{path}", digest)
        for path, digest in sorted((source.get("files") or {}).items())
    ]
    templates = [
        (f"{part['name']}: {name}", digest)
        for part in ([answer] if answer.get("name") == judge.get("name") else [answer, judge])
        if part
        for name, digest in sorted(part.get("templates", {}).items())
    ]
    return {
        "protocol": s.answer_protocol or "harness",
        "judge_protocol": judge.get("name") or s.answer_protocol or "harness",
        "source_files": files,
        "templates": templates,
    }


def _category_row(row: dict[str, Any], headline: MetricValue | None) -> CategoryRow:
    """A category's row: the headline over its counted points, evidence recall over its answerable ones."""
    evidence = row["evidence_recall_at_k"]
    headline = headline or MetricValue(None, 0)
    return CategoryRow(
        category="(none)" if row["category"] is None else row["category"],
        hits=headline.successes or 0,
        total=headline.n,
        recall=headline.value,
        recall_low=headline.low,
        recall_high=headline.high,
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
