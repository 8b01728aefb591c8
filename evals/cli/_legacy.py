"""``python -m evals``: the original harness's interface, flag for flag (no store)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from evals.cli._base import (
    DEFAULT_STORE,
    EvalsCommand,
    echo,
    echo_llm_usage,
    progress_reporter,
    run_options,
    warn_about_the_key,
    write_json,
)
from evals.evaluate import (
    RunConfig,
    evaluate,
)
from evals.report import legacy_json, summary_line


def _run_and_report(
    *,
    corpus: Path,
    strategy: str,
    backend: str,
    embedder: str,
    seed: int,
    k: int,
    with_answers: bool,
    judge: bool,
    output: Path | None,
) -> None:
    """The original CLI's run: no store. With answers, the model, endpoint and key come from
    the defaults and $OPENAI_BASE_URL/$OPENAI_API_KEY (the original's flags stay exactly its
    own), and responses are cached beside the default store ($EVALS_STORE, else results/)."""
    config = RunConfig(
        strategy=strategy,
        backend=backend,
        embedder=embedder,
        corpus=corpus,
        k=k,
        seed=seed,
        cutoffs=(),  # the original measured at k only; its JSON has no cutoffs
        with_answers=with_answers,
        judge=judge,
    )
    cache = None
    if output is not None:
        from evals.outputs import check_output

        check_output(output, store=Path(os.environ.get("EVALS_STORE") or DEFAULT_STORE), corpus=corpus)
    warn_about_the_key(config, None)
    if config.answers_on:
        from evals.cache import Cache, cache_path_for

        cache = Cache.open(cache_path_for(Path(os.environ.get("EVALS_STORE") or DEFAULT_STORE)))
    try:
        # The original's document shows no footprint: the tokens each memory holds go uncounted.
        result = evaluate(config, progress=progress_reporter(), cache=cache, held_tokens=False)
    finally:
        if cache is not None:
            cache.close()
    document = legacy_json(result.run, result.scores, result.answers)
    if output is not None:
        write_json(output, document)
    echo_llm_usage(document)
    echo(summary_line(document, str(output) if output else None))


@click.command(
    "python -m evals",
    cls=EvalsCommand,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="The full tool is the `evals` command (evals --help); `python -m evals run ...` reaches it too.",
)
@run_options
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Where to write the JSON result.",
)
def legacy_cli(**options: Any) -> None:
    """Run a corpus through a memory strategy and write the JSON result (the original harness's CLI)."""
    _run_and_report(**options)
