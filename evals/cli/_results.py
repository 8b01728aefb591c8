"""Reading and moving stored runs: ``runs``, ``leaderboard``, ``export``, ``import``, ``verify``, ``migrate``, ``compare``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from evals.errors import EvalsError
from evals.model.formatting import json_text

if TYPE_CHECKING:
    from evals.store import RunSummary

from evals.cli._base import (
    OutputFile,
    cli,
    downloads_option,
    echo,
    echo_summaries,
    errata_option,
    format_choice,
    format_option,
    leaderboard_format_option,
    open_store,
    price_table,
    prices_option,
    store_api,
    store_option,
    store_path,
    write_json,
)


@cli.command("runs")
@store_option
@click.option("--strategy", default=None, help="Only runs of this strategy (e.g. mneme).")
@click.option("--commit", default=None, help="Only runs made at this commit (a prefix of the hash is enough).")
@format_option
def runs_command(store: Path | None, strategy: str | None, commit: str | None, fmt: str) -> None:
    """List the stored runs, newest first."""
    with open_store(store) as opened:
        summaries = opened.runs(strategy=strategy, commit=commit)
        failures = opened.failed_runs(strategy=strategy, commit=commit)
    answers = any(s.llm_usage is not None for s in summaries)  # which model served the answers, where any run has them
    echo_summaries(
        summaries,
        fmt,
        ["run", "date", "commit", "strategy", "model", "k", "corpus", "headline", "hits"],
        ["emb new/cached", *(["llm served"] if answers else [])],
        metrics=["tokens_per_test_point"],
        failures=failures,
    )


@cli.command("leaderboard")
@store_option
@leaderboard_format_option
@click.option(
    "--by-category",
    is_flag=True,
    help="One row per configuration and test point category (corpora with categories only): recall, "
    "evidence recall (any/all evidence turns retrieved) and the unanswerable test points kept apart; for runs "
    "with answers, the answer accuracy over the points the run's protocol counts, its 95% interval and n "
    "(numbered categories, whose names are this harness's reading, by number first).",
)
@click.option(
    "--metric",
    "metric",
    default=None,
    metavar="NAME[@K]",
    help="Rank by this metric and show it first: a column's key (recall, mrr, retrieve_latency_p95_s...) or a "
    "retrieval metric at a cutoff, [turn.|session.]NAME@K with NAME recall_any, recall_all, recall_frac, ndcg_any "
    "(trec_eval's) or ndcg_any_lme (ranks 1 and 2 counting fully) "
    "and K a cutoff or k (recall_frac@25, session.recall_all@k). Default: turn.recall_any@k on corpora with "
    "evidence, else recall.",
)
@click.option("--wide", is_flag=True, help="Every metric column (the default table fits 100 columns).")
@errata_option(
    "each run on the corpus it corrects gets its headline with errata beside the published one (a column; "
    "headline_with_errata in JSON and CSV)"
)
@prices_option
def leaderboard_command(
    store: Path | None,
    fmt: str,
    by_category: bool,
    metric: str | None,
    wide: bool,
    errata_files: tuple[Path, ...],
    prices_file: Path | None,
) -> None:
    """The latest run of each configuration on each corpus, best headline first.

    Each corpus is ranked by its headline (docs/methodology.md, "The headline"): turn-level
    recall_any@k over the test points its benchmark's published code counts where the test
    points name evidence turns, else keyword recall@k over answerable test points; each with
    its 95% Wilson interval and hits / total. The default table fits 100 columns (* marks a
    ceiling, ! the hash embedder); --wide shows every metric. --format markdown prints the
    README's table. Runs with answers show $ spent and $ / correct answer at the prices recorded with
    each run; --prices FILE costs every run at one table instead.
    """
    if by_category and fmt == "markdown":
        raise click.UsageError("--by-category prints a table, JSON or CSV, not markdown")
    if errata_files and (by_category or fmt == "markdown"):
        raise click.UsageError("--errata goes with the leaderboard's table, JSON or CSV, not --by-category or markdown")
    from evals.views import tables

    chosen = tables.leaderboard_metric(metric) if metric is not None else None
    table = price_table(prices_file) if prices_file is not None else None  # a bad file is refused before the store is read
    with open_store(store) as opened:
        summaries = opened.latest_per_configuration()
        failures = opened.latest_failures()
        from evals.views.board_rows import spreads

        spread = spreads(opened.runs(), summaries)
        if table is not None:
            summaries = tables.repriced(summaries, table)
        # As the site's leaderboard: per corpus, memories ranked at each k, then the ceilings, unranked.
        summaries, ranks = tables.boards(summaries, chosen.name if chosen else None)
        if chosen is not None:
            tables.measured_somewhere(chosen, summaries)
        stored = [opened.get_run(s.run_id) for s in summaries] if by_category else []
        errata = None
        if errata_files:
            from evals.analysis.errata import errata_figures

            errata = errata_figures(opened, errata_files, summaries)
        notes = ""
        if fmt == "table" and not by_category:
            from evals.views.claims import leaderboard_notes

            notes = leaderboard_notes(opened, summaries)
    if by_category:
        from evals.views import tables

        records = tables.category_records(stored)
        if fmt == "json":
            click.echo(json_text(records, indent=2))
        elif fmt == "csv":
            click.echo(tables.records_csv(records), nl=False)
        else:
            echo(tables.category_table(records).text(), nl=False)
        return
    if fmt == "markdown":
        from evals.views.markdown import leaderboard_markdown

        echo(leaderboard_markdown(summaries, failures), nl=False)
        return
    if fmt == "table" and not wide and chosen is None:
        echo(tables.compact_leaderboard(summaries, errata, ranks, failures, spread) + notes, nl=False)
        return
    columns = None
    if chosen is not None:
        columns = [chosen.name, *(n for n, m in tables.METRICS.items() if m.leaderboard and n != chosen.name)]
    elif summaries:
        columns = [m.name for m in tables.board_metrics(summaries)]
    echo_summaries(
        summaries,
        fmt,
        ["strategy", "config", "model", "k", "corpus", "hits"],
        ["run", "commit", "date"],
        columns,
        errata,
        ranks,
        failures=failures if not by_category else (),
        spread=spread,
    )
    if notes:
        echo(notes, nl=False)


@cli.command("export")
@click.argument("run_id")
@store_option
@click.option(
    "--output",
    type=OutputFile(allow_dash=True),
    default=None,
    help="File to write (default: standard output).",
)
@click.option(
    "--board",
    "board",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write a board file instead, under DIR/<benchmark>/<system>/<run id>.json: the run's ids, rankings, token "
    "counts and figures, no benchmark text (docs/board.md).",
)
def export_command(run_id: str, store: Path | None, output: Path | None, board: Path | None) -> None:
    """Write a stored run as JSON: the original harness's document plus a `run` block.

    The original harness's keys are what `evals run --output` wrote for the run; the `run`
    block (run id, provenance, transcripts, per-record token counts) lets
    `evals import` add the run to another store unchanged. With --board, a board file:
    no benchmark text, for the published board (`evals verify` checks it).
    """
    if board is not None and output is not None:
        raise click.UsageError("--board writes its own file; give --board or --output, not both")
    if board is not None:
        from evals.io.outputs import write_output
        from evals.views.board_files import board_bytes, board_document, board_path, failed_document, pin_of

        with open_store(store) as opened:
            failed = opened.get_failed(run_id)
            stored = opened.get_run(run_id) if failed is None else None
        if failed is not None:  # a failed run's file: its reason, no figure
            document = failed_document(failed, pin_of(failed.corpus_name, failed.corpus_digest, failed.benchmark))
        else:
            assert stored is not None
            summary = stored.summary
            document = board_document(stored, pin_of(summary.corpus_name, summary.corpus_digest, summary.benchmark))
        target = board_path(board, document)
        from evals.io.outputs import check_output

        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EvalsError(f"--board: cannot make the folder {target.parent}: {exc.strerror or exc}") from None
        check_output(target, store=store_path(store)[0], option="--board")
        write_output(target, board_bytes(document), option="--board")
        echo(f"exported run {run_id} -> {target}", err=True)
        return
    from evals.views.exchange import export_document

    output = output if output is not None else Path("-")
    if str(output) != "-":
        from evals.io.outputs import check_output

        check_output(output, store=store_path(store)[0])
    with open_store(store) as opened:
        document = export_document(opened.get_run(run_id))
    if str(output) == "-":
        click.echo(json_text(document, indent=2))
    else:
        write_json(output, document)
        echo(f"exported run {run_id} -> {output}", err=True)


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@store_option
@click.option(
    "--corpus",
    "corpus",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="For board files: the corpus their digest names, where `evals fetch` has not brought it.",
)
@downloads_option(help="For board files: the folder `evals fetch` downloads into, searched for their corpus.")
def import_command(files: tuple[Path, ...], store: Path | None, corpus: Path | None, downloads: Path | None) -> None:
    """Append the runs in exported FILEs (or board files) to the store; runs already there are skipped.

    Every file is checked before anything is written, and all are written in
    one transaction: one bad file leaves the store unchanged. A board file's run is
    stored on its corpus (found by digest among `evals fetch`'s downloads, else --corpus),
    every figure recomputed and held to the file's.
    """
    from evals.views.board_files import is_board_file, read_board
    from evals.views.exchange import read_export

    store_api().writable_file(store_path(store)[0])  # before reading what may be large files
    records = [read_board(file, corpus, downloads) if is_board_file(file) else read_export(file) for file in files]
    with open_store(store, read_only=False) as opened:
        try:
            added = opened.write_records(records)
        except store_api().CorpusConflict as exc:
            source = next(
                path
                for path, record in zip(files, records, strict=True)
                if not isinstance(record, store_api().FailedRun) and record.summary.run_id == exc.run_id
            )
            raise EvalsError(f"{source}: {exc}") from None
    for path, record, new in zip(files, records, added, strict=True):
        state = "imported" if new else "already in store:"
        if isinstance(record, store_api().FailedRun):
            echo(f"{state} failed run {record.run_id} ({path})")
        else:
            echo(f"{state} run {record.summary.run_id} ({path})")


@cli.command("verify")
@click.argument("folder", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--corpus",
    "corpus",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="A corpus to check files against where no fetched benchmark has their digest (the file stays unverified: "
    "not a pinned benchmark).",
)
@downloads_option(help="The folder `evals fetch` downloads into, searched for the benchmarks the files name.")
@click.option(
    "--reproduce",
    is_flag=True,
    help="Rerun the system of each verified file whose strategy is registered here and runs offline, at the file's "
    "k, seed and options; the same rankings at every test point write RUN_ID.reproduced.json beside the file.",
)
def verify_command(folder: Path, corpus: Path | None, downloads: Path | None, reproduce: bool) -> None:
    """Check every board file under FOLDER: one line per file, exit 1 if any is bad.

    verified: the schema holds, the corpus digest is a fetched benchmark's, every test point and
    ranked turn exists, no benchmark text is in the file, and every figure the judge computes from
    rankings and labels is the file's (within 1e-9). unverified: a check could not run (the corpus
    is not downloaded, or given with --corpus and no pinned benchmark); the line says which.
    bad: the line names the field or the figure. Each line ends with reproduced (a record beside
    the file says the harness reran its system with the same rankings, and names the file's exact
    bytes) or submitted (its system was run by its submitter).

    With --reproduce, each verified file's system is rerun where it can be offline: reproduced
    (the record written), not reproduced (the first point and rank that differ; exit 1), or not
    rerun (why: a plug-in not installed, an LLM or endpoint, another library version).
    """
    from evals.run.reproduce import rerun
    from evals.views.board_reproduce import NOT_REPRODUCED
    from evals.views.board_verify import BAD, verify_folder

    verdicts = verify_folder(folder, corpus, downloads, reproduce=rerun if reproduce else None)
    for verdict in verdicts:
        echo(verdict.line)
        if verdict.rerun is not None:
            echo(verdict.rerun.line)
    if not verdicts:
        echo(f"no board files under {folder}")
    if any(v.status == BAD or (v.rerun is not None and v.rerun.status == NOT_REPRODUCED) for v in verdicts):
        raise SystemExit(1)


@cli.command("migrate")
@store_option
def migrate_command(store: Path | None) -> None:
    """Upgrade the store to this evals' schema, keeping every run.

    Commands that only read the store (runs, leaderboard, export, compare,
    build-site) refuse a store at an older schema rather than write to it;
    this command, or any run or import, upgrades it. A store already at the
    current schema is left as it is.
    """
    path = store_path(store)[0]
    before, after = store_api().Store.upgrade(path)
    if before == after:
        echo(f"store {path}: already at schema {after}")
    else:
        echo(f"store {path}: schema {before} -> {after}")


@cli.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@store_option
@format_choice("text", "json", help="Print lines, or one JSON object with the same figures (the compare page's).")
def compare_command(run_a: str, run_b: str, store: Path | None, fmt: str) -> None:
    """List the test points that flipped between RUN_A and RUN_B (hit by A only, hit by B only), with
    counts, the flips per category with McNemar's p as the compare page gives them, and McNemar's
    exact test of whether the runs' recalls differ (and, when both runs have judged answers,
    whether their answer accuracies differ).

    The test pairs each test point's two outcomes: only the flipped points
    count, and under "no difference" they would split evenly. p is two-sided;
    a small p (say below 0.05) says the difference is unlikely to be chance.
    """
    from evals.analysis.compare import compare_runs
    from evals.judge.metrics import METRICS
    from evals.model import formatting
    from evals.views import tables
    from evals.views.names import row_name

    def metric(name: str, summary: RunSummary) -> str:
        return tables.metric_text(METRICS[name], summary.metric(name), summary.tokenizer)

    with open_store(store) as opened:
        stored_a = opened.get_run(run_a)
        comparison = compare_runs(stored_a, opened.get_run(run_b))
    evidence = _evidence_labels(stored_a)
    if fmt == "json":
        click.echo(json_text(_comparison_json(comparison, evidence), indent=2))
        return
    for label, summary in (("A", comparison.a), ("B", comparison.b)):
        echo(
            f"{label}: run {summary.run_id}  {row_name(summary)} k={summary.k}  config {summary.config_key}  "
            f"commit {tables.commit_text(summary)}  {summary.date}  "
            f"corpus {summary.corpus_name}  {summary.headline.rule.label} {summary.headline.hits}/{summary.headline.total} = "
            f"{tables.metric_text(METRICS[summary.headline.rule.metric], summary.headline.value, summary.tokenizer)}  "
            + (f"keyword hit@k {metric('recall', summary)}  " if summary.headline.rule.by_evidence else "")
            + f"strict {metric('strict_recall', summary)}  MRR {metric('mrr', summary)}"
        )
    if not comparison.same_corpus:
        echo(
            f"note: the runs are on different corpora (A {comparison.a.corpus_digest[:12]}, "
            f"B {comparison.b.corpus_digest[:12]}); only test points present in both are compared "
            f"({comparison.only_in_a} only in A, {comparison.only_in_b} only in B)"
        )
    for title, flips in (("hit by A only", comparison.lost), ("hit by B only", comparison.gained)):
        echo(f"{title}: {len(flips)}")
        for flip in flips:
            named = evidence.get((flip.conversation_id, flip.turn_index))
            shown = f"  evidence {', '.join(named)}" if named else ""
            echo(f"  {flip.conversation_id} turn {flip.turn_index}: {flip.question}  [{flip.category}]{shown}")
    echo(f"unchanged: {comparison.still_hit} hit by both, {comparison.still_missed} by neither")
    categories = comparison.by_category()
    if categories:
        echo("flips by category (as the compare page gives them):")
        width = max(len(c.category) for c in categories)
        for c in categories:
            echo(
                f"  {c.category:<{width}}  {c.only_a} by A only, {c.only_b} by B only, "
                f"McNemar p = {formatting.p_value_text(c.mcnemar_p)}"
            )
    echo(
        f"McNemar exact test (paired, two-sided) over {comparison.shared} shared test points: "
        f"{len(comparison.lost)} by A only vs {len(comparison.gained)} by B only, "
        f"p = {formatting.p_value_text(comparison.mcnemar_p)}"
    )
    answers = comparison.answers
    if answers is not None:
        echo(
            f"answers judged correct over {answers.shared} shared test points: A {answers.correct_a}, B {answers.correct_b}; "
            f"McNemar: {answers.lost} correct->incorrect vs {answers.gained} incorrect->correct, "
            f"p = {formatting.p_value_text(answers.mcnemar_p)}"
        )


def _evidence_labels(stored) -> dict[tuple[str, int], list[str]]:
    """Each test point's evidence turns as the benchmark names them (evals.benchmarks.turn_ids, as every page does)."""
    from evals.benchmarks.turn_ids import TurnIds

    out = {}
    for conversation in stored.run.conversations:
        cid = conversation.conversation_id
        ids = TurnIds(stored.sessions.get(cid), stored.dates.get(cid), stored.summary.benchmark)
        for point in conversation.test_points:
            out[cid, point.turn_index] = [ids.label(t) for t in point.evidence_turns]
    return out


def _comparison_json(comparison, evidence: dict[tuple[str, int], list[str]]) -> dict:
    """`evals compare --format json`: the figures the compare page shows, under the same names."""
    from evals.model import formatting
    from evals.views.names import row_name

    def run(summary: RunSummary) -> dict:
        head = summary.headline
        return {
            "run_id": summary.run_id,
            "name": row_name(summary),
            "strategy": summary.strategy,
            "config_key": summary.config_key,
            "k": summary.k,
            "commit": summary.commit,
            "corpus": summary.corpus_name,
            "corpus_digest": summary.corpus_digest,
            "headline": {
                "label": head.rule.label,
                "hits": head.hits,
                "total": head.total,
                "value": head.recall,
                "low": head.low,
                "high": head.high,
            },
        }

    answers = comparison.answers
    return {
        "a": run(comparison.a),
        "b": run(comparison.b),
        "shared": comparison.shared,
        "only_a": len(comparison.lost),
        "only_b": len(comparison.gained),
        "both": comparison.still_hit,
        "neither": comparison.still_missed,
        "unmatched": comparison.only_in_a + comparison.only_in_b,
        "mcnemar_p": comparison.mcnemar_p,
        "p_text": formatting.p_value_text(comparison.mcnemar_p),
        "categories": [
            {
                "category": c.category,
                "only_a": c.only_a,
                "only_b": c.only_b,
                "mcnemar_p": c.mcnemar_p,
                "p_text": formatting.p_value_text(c.mcnemar_p),
            }
            for c in comparison.by_category()
        ],
        "flips": [
            {
                "flip": letter,
                "conversation_id": f.conversation_id,
                "turn_index": f.turn_index,
                "question": f.question,
                "category": f.category,
                "evidence": evidence.get((f.conversation_id, f.turn_index), []),  # as the pages name the turns
            }
            for letter, flips in (("a", comparison.lost), ("b", comparison.gained))
            for f in flips
        ],
        "answers": None
        if answers is None
        else {
            "shared": answers.shared,
            "correct_a": answers.correct_a,
            "correct_b": answers.correct_b,
            "only_a": answers.lost,
            "only_b": answers.gained,
            "mcnemar_p": answers.mcnemar_p,
        },
    }
