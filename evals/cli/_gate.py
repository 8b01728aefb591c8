"""``evals gate``: the regression gate for pull requests."""

from __future__ import annotations

import os
from pathlib import Path

import click

from evals.cli._base import (
    Finite,
    UsageProblem,
    cli,
    format_choice,
    max_unparsed_option,
    open_store,
    repo_option,
    store_option,
    store_path,
)
from evals.errors import EvalsError
from evals.model.formatting import json_text


@cli.command("gate")
@click.option(
    "--base",
    required=True,
    metavar="REF",
    help="What the head is compared against: a run id, a commit (prefix) or a git branch/tag.",
)
@click.option(
    "--head", required=True, metavar="REF", help="What is checked: a run id, a commit (prefix) or a git branch/tag (HEAD, say)."
)
@store_option
@click.option(
    "--alpha",
    type=Finite(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="A configuration regresses when its Holm-adjusted McNemar p is below this and it lost more test points than it gained.",
)
@click.option(
    "--latency-factor",
    type=Finite(min=1),
    default=1.5,
    show_default=True,
    help="A configuration regresses when its retrieve p95 latency grows past this many times the base's "
    "(where both runs recorded it).",
)
@click.option(
    "--latency-floor-ms",
    type=Finite(min=0),
    default=1.0,
    show_default=True,
    help="A head whose retrieve p95 stays below this many milliseconds never fails on latency "
    "(sub-millisecond ratios are noise).",
)
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="CONFIG",
    help="Accept a known regression of this configuration key or strategy: reported, not failed. Repeatable.",
)
@click.option(
    "--site-url",
    default=None,
    help="The published site's root URL: each lost test point links to the base run's drill-down there.",
)
@repo_option("that resolves branch and tag names")
@format_choice("markdown", "json", help="Print the Markdown report or the same as JSON.")
@max_unparsed_option
def gate_command(
    base: str,
    head: str,
    store: Path | None,
    alpha: float,
    latency_factor: float,
    latency_floor_ms: float,
    allow: tuple[str, ...],
    site_url: str | None,
    repo: Path | None,
    fmt: str,
    max_unparsed: float | None,
) -> None:
    """Fail when the head's runs regressed from the base's: exit 0 when nothing regressed, 1 when a
    configuration did, 2 when the refs cannot be compared (unknown ref, nothing comparable).

    For every configuration and corpus with runs on both sides, the latest run
    of each is compared: McNemar's exact test on the paired test points (keyword
    recall, or evidence recall where the corpus labels evidence turns), Holm-adjusted
    across the configurations, and the ratio of retrieve p95 latency where both runs
    recorded it. When --base and --head are both run ids, those two runs are compared.
    A significant improvement is reported and never fails.

    A REF is a run id, a prefix of a commit with stored runs, or a git ref resolved in
    --repo; a base branch whose tip has no runs yet falls back to its nearest
    first-parent ancestor with runs. The report (Markdown) is also appended to
    $GITHUB_STEP_SUMMARY when that is set.

    \b
    Examples:
      evals gate --base main --head HEAD
      evals gate --base 1a2b3c4d5e6f --head 6f5e4d3c2b1a --format json
    """
    from evals.analysis.gate import gate
    from evals.io.outputs import OutputError, append_output, check_appendable, check_not_an_input
    from evals.views.gate_report import gate_markdown
    from evals.views.site_paths import links_to_test_points

    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    try:
        if summary_file:  # the report is appended to it: never to the store, nor to a FIFO that would block
            check_not_an_input(summary_file, store=store_path(store)[0], option="$GITHUB_STEP_SUMMARY")
            check_appendable(summary_file, option="$GITHUB_STEP_SUMMARY")
        with open_store(store) as opened:
            result = gate(
                opened,
                base,
                head,
                alpha=alpha,
                latency_factor=latency_factor,
                latency_floor_s=latency_floor_ms / 1000,
                allow=allow,
                repo=repo,
                link=links_to_test_points(opened, site_url) if site_url else None,
                max_unparsed=max_unparsed,
            )
    except EvalsError as exc:
        raise UsageProblem(str(exc)) from exc
    report = gate_markdown(result)
    click.echo(json_text(result.as_dict(), indent=2) if fmt == "json" else report, nl=fmt == "json")
    if summary_file:
        try:
            append_output(summary_file, report + "\n", option="$GITHUB_STEP_SUMMARY")
        except OutputError as exc:
            click.echo(f"warning: the report was not appended: {exc}", err=True)
    if result.failed:
        raise click.exceptions.Exit(1)
