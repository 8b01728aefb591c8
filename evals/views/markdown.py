"""The leaderboard as Markdown: the table the README shows, made from the store.

One table per corpus (content digest), rows as the leaderboard orders them
(best recall first), a column per declared metric that some row has
(:mod:`evals.judge.metrics`). Every proportion carries its 95% Wilson interval, so a
reader can see which differences may be chance; a number the store does not
have (strict recall of a run stored before it was recorded) is "—", never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from evals.judge.ceilings import ceiling
from evals.judge.metrics import PROPORTION
from evals.judge.origin import EXPLANATIONS
from evals.model import formatting
from evals.model.tokens import EXACT
from evals.store import FailedRun, RunSummary
from evals.strategies import NO_MODEL
from evals.views.board_rows import failed_name, origin_marks
from evals.views.names import row_names
from evals.views.reference import REFERENCE_STRATEGY, reference_run, relative_tokens
from evals.views.tables import APPROX_NOTE, MISSING, board_metrics, hash_caveat, metric_text

__all__ = ["leaderboard_markdown"]


def _table(rows: Sequence[RunSummary]) -> list[str]:
    shown = board_metrics(rows)
    reference = reference_run(rows)
    heads = [f"{m.label} [95% CI]" if m.kind == PROPORTION else m.label for m in shown]
    lines = [
        "| " + " | ".join(["strategy", "model", "k", *heads, f"vs {REFERENCE_STRATEGY}", "config"]) + " |",
        "|" + "|".join(["---", "---", "--:", *("--:" if m.kind != PROPORTION else "---" for m in shown), "--:", "---"]) + "|",
    ]
    for label, s in zip(row_names(rows), rows, strict=True):
        marks = (" (ceiling)" if ceiling(s) else "") + (" (hash embedder: no semantics)" if hash_caveat(s) else "")
        marks += " (uncommitted changes)" if s.dirty else ""
        marks += "".join(f" ({mark})" for mark, _ in origin_marks(s.origin))
        cells = [
            label + marks,
            MISSING if s.model == NO_MODEL else s.model,
            str(s.k),
            *(metric_text(m, s.metric(m.name), s.tokenizer) for m in shown),
            formatting.relative(relative_tokens(s, reference)),
            f"`{s.config_key}`",
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return lines


def leaderboard_markdown(summaries: Sequence[RunSummary], failures: Sequence[FailedRun] = ()) -> str:
    """Markdown for the latest run of each configuration, one table per corpus, in the order given; each corpus's
    failed configurations (``failures``: their latest attempt failed) listed under its table, "failed: <reason>"."""
    if not summaries:
        return "_No runs in the store yet._\n"
    blocks: list[str] = []
    for (name, digest), group in groupby(summaries, key=lambda s: (s.corpus_name, s.corpus_digest)):
        rows = list(group)
        conversations = max(s.conversation_count for s in rows)
        lines = [
            f"**Corpus `{name}`** ({conversations} conversations, {rows[0].headline.total} test points counted, "
            f"digest `{digest[:12]}`); "
            f"ranked by {rows[0].headline.rule.label} over {rows[0].headline.rule.population}",
            "",
            *_table(rows),
        ]
        if any(s.tokenizer != EXACT for s in rows):
            lines += ["", APPROX_NOTE]
        failed = [f for f in failures if f.corpus_digest == digest]
        if failed:
            lines += ["", *(f"- {failed_name(f)} (k={f.k}): {f.failure}" for f in failed)]
        blocks.append("\n".join(lines))
    origins = {mark: why for s in summaries for mark, why in origin_marks(s.origin)}
    footer = (
        "The first metric column is each corpus's headline (docs/methodology.md): recall_any@k, an evidence turn among "
        "the first k records, where test points name evidence; else keyword hit@k. (ceiling): reads the evidence labels, "
        "ignores k or holds the whole history. "
        "keyword hit@k: share of test points where a retrieved record held an expected keyword; strict: all of them. "
        f"Brackets: 95% Wilson interval. MRR: mean of 1/rank of the first matching record. vs {REFERENCE_STRATEGY}: "
        f"tokens per test point relative to the latest {REFERENCE_STRATEGY} run on the same corpus."
        + "".join(f" ({mark}): {EXPLANATIONS[mark].split(': ', 1)[1]}." for mark in sorted(origins))
    )
    return "\n\n".join(blocks) + "\n\n" + footer + "\n"
