"""Run pages: each run's summary page, its JSON, and one drill-down page per conversation.

These are the only pages made from one run alone, so they are what worker
processes render in parallel (see :mod:`evals.site._workers`).
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from evals.breakdown import category_rows, evidence_block, unanswerable_block
from evals.metrics import METRICS
from evals.report import legacy_json
from evals.stats import wilson_interval
from evals.site._drilldown import ConversationText, conversation_views
from evals.site._fragments import Fragments
from evals.site._text import CLIP_LIMIT
from evals.site._output import Output
from evals.site._leaderboard import metric_cell, metric_column
from evals.site._pages import (
    AnswersBlock,
    CategoryRow,
    ConversationPage,
    ConversationRow,
    MissRow,
    RunPage,
    RunMetric,
)
from evals.site_paths import config_id, root_of, test_point_anchor
from evals.site._provenance import cache_note, provenance_rows
from evals.site._retrieval import cutoff_chart, cutoff_tables, latency_chart
from evals.site._publisher import Publisher, Site
from evals.site._views import run_header
from evals.store import RunSummary, StoredRun

__all__ = ["RunPublisher"]

OPEN_TRANSCRIPT = 30  # transcripts up to this many turns are shown unfolded


class RunPublisher(Publisher):
    """Each run's page, its JSON in the original harness's shape, and a drill-down per conversation."""

    name = "runs"
    pages = (RunPage, ConversationPage)

    def __init__(self) -> None:
        self._fragments: Fragments | None = None  # one per process: made from the first run's environment

    def publish_run(self, stored: StoredRun, site: Site, output: Output) -> None:
        if self._fragments is None:
            self._fragments = Fragments(site.env)
        _run_pages(stored, site, output, self._fragments)


def _run_pages(stored: StoredRun, site: Site, output: Output, cache: Fragments) -> None:
    """The run page, its seed-shaped JSON, and one drill-down per conversation."""
    env, paths, note = site.env, site.paths, site.note
    s = stored.summary
    header = run_header(s, paths)
    conversations = stored.run.conversations
    hrefs = [paths.conversation(s.run_id, c.conversation_id) for c in conversations]
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
            MissRow(conversation_id=cid, turn_index=p.turn_index, question=p.question, href=f"{href}#{test_point_anchor(p.turn_index)}")
            for p, score in zip(conversation.test_points, scores, strict=True)
            if not score.hit and score.answerable
        )
        if point_answers is not None:
            wrong.extend(
                MissRow(conversation_id=cid, turn_index=p.turn_index, question=p.question, href=f"{href}#{test_point_anchor(p.turn_index)}")
                for p, answer in zip(conversation.test_points, point_answers, strict=True)
                if answer.correct is False
            )
        text = ConversationText(stored.transcripts.get(cid, []))
        points, transcript = conversation_views(
            conversation,
            scores,
            stored.record_turns.get(cid, []),
            text,
            cache,
            header.approx_tokens,
            point_answers,
            _whole_turns(text, s.corpus_digest, href, output),
        )
        output.page(
            env,
            href,
            ConversationPage(
                title=f"{cid} \u00b7 {s.strategy} \u00b7 run {s.run_id}",
                root=root_of(href),
                nav="",
                store_note=note,
                navigation=site.navigation,
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
    recall = s.metric("recall")
    run_href = paths.run(s.run_id)
    output.page(
        env,
        run_href,
        RunPage(
            title=f"Run {s.run_id}: {s.strategy} on {s.corpus_name}",
            root=root_of(run_href),
            nav="",
            store_note=note,
            navigation=site.navigation,
            run=header,
            recall=s.recall,
            recall_low=recall.low if recall else None,
            recall_high=recall.high if recall else None,
            metrics=[RunMetric(metric_column(m), metric_cell(m, s)) for m in METRICS.values() if m.name in s.metrics],
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
            **_retrieval_views(stored, run_href),
            unanswerable=(unanswerable_block(stored.run, stored.scores) or {"count": 0})["count"],
            answers=answers_block(s, wrong) if answers is not None else None,
        ),
    )
    document = legacy_json(stored.run, stored.scores, answers, s.metrics)
    # Compact: json's C encoder only runs without indent, and full_history documents are large.
    output.text(paths.run_json(s.run_id), json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")


def _retrieval_views(stored: StoredRun, run_href: str) -> dict[str, Any]:
    """The run page's retrieval table over cutoffs (published figures greyed below), recall against
    cutoff, and retrieve latency against records held."""
    s = stored.summary
    tables = cutoff_tables([(s.strategy, run_href, s)], stored.references)
    return {
        "retrieval": tables,
        "retrieval_cutoffs": sorted({c for t in tables for c in t.cutoffs}),
        "cutoff_chart": cutoff_chart(s, stored.references, run_href),
        "latency_chart": latency_chart([(f"{s.strategy} ({s.config_key})", run_href, stored.latency)], f"Retrieve latency against memory size: run {s.run_id}"),
    }


def _whole_turns(text: ConversationText, digest: str, href: str, output: Output) -> dict[int, str]:
    """Each turn too long for a page as a plain-text file, once per corpus (every run on it links the
    same file); returns the link to each, relative to the drill-down at ``href``."""
    links = {}
    for index, content in enumerate(text.contents):
        if len(content) > CLIP_LIMIT:
            path = f"texts/{digest[:16]}/{PurePosixPath(href).stem}/turn-{index}.txt"
            output.text_once(path, content)
            links[index] = root_of(href) + path
    return links


def answers_block(s: RunSummary, wrong: list[MissRow]) -> AnswersBlock:
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
    )


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
