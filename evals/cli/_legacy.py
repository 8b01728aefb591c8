"""``python -m evals``: the original harness's interface, flag for flag (no store)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from evals.cli._base import (
    OUTPUT_FILE,
    EvalsCommand,
    Whole,
    absolute,
    echo,
    echo_llm_usage,
    mneme_flags,
    progress_reporter,
    run_options,
    store_api,
    store_path,
    warn_about_the_key,
    write_json,
)
from evals.io.cache import Cache, user_cache_path
from evals.run.config import legacy_flag_options
from evals.run.evaluate import (
    RunConfig,
    evaluate,
)
from evals.run.executors import LocalExecutor
from evals.views.report import legacy_json, summary_line

MAX_JOBS = 1024  # --jobs: more processes than this would be a typing slip


def _run_and_report(
    *,
    corpus: Path,
    strategy: str,
    backend: str | None,
    embedder: str | None,
    seed: int,
    k: int,
    with_answers: bool,
    judge: bool,
    output: Path | None,
    no_cache: bool = False,
    jobs: int | None = None,
) -> None:
    """The original CLI's run: no store. Embeddings of a slow model are kept in the user's cache
    (:func:`evals.io.cache.user_cache_path`), so a rerun computes none of them again; ``--no-cache``
    keeps nothing. With answers, the model, endpoint and key come from
    the defaults and $OPENAI_BASE_URL/$OPENAI_API_KEY (the original's flags stay exactly its
    own), and responses are cached beside the default store ($EVALS_STORE, else results/),
    which is checked as `evals run` checks its store: $EVALS_STORE must be a file in an existing
    folder, outside the corpus. Paths are made absolute before any plug-in code runs. ``jobs`` caps the
    processes that play the conversations (None: one per core; :class:`LocalExecutor`)."""
    written = absolute(output)
    config = RunConfig(
        strategy=strategy,
        corpus=absolute(corpus),
        corpus_as_given=str(corpus),  # the document records --corpus as given, as the original did
        k=k,
        seed=seed,
        cutoffs=(),  # the original measured at k only; its JSON has no cutoffs
        with_answers=with_answers,
        judge=judge,
    )
    named = os.environ.get("EVALS_STORE") or None
    shown, create_parent = store_path(Path(named) if named else None)
    store = absolute(shown)
    cache: Cache | None = None
    if output is not None:
        from evals.io.outputs import check_output

        check_output(output, store=store, corpus=config.corpus)  # as given: no plug-in code has run yet
    # Mneme's options, given as the original's flags (after the paths are checked: the lookup may load plug-in code).
    options, ignored = legacy_flag_options(strategy, {"backend": backend, "embedder": embedder})
    config = config.model_copy(update={"options": options})
    if ignored:
        flags = " and ".join(ignored)
        echo(f"note: {flags} ignored, as the original harness did: strategy {config.strategy} has no such option", err=True)
    warn_about_the_key(config, None)
    if config.answers_on:
        from evals.io.cache import cache_path_for
        from evals.io.outputs import check_store_place

        api = store_api()
        api.check_writable(store, create_parent=create_parent)
        api.writable_file(cache_path_for(store), "cache", "set $EVALS_STORE to another store")
        check_store_place(store, corpus=config.corpus, option="$EVALS_STORE" if named else "the default store")
        cache = Cache.open(cache_path_for(store))
    elif not no_cache and (path := user_cache_path()) is not None:
        cache = Cache.open(path)  # opened only if an embedder that caches is used
    if no_cache and cache is not None:
        cache.close()
        cache = None
    try:
        # The original's document shows no footprint: the tokens each memory holds go uncounted.
        executor = LocalExecutor(jobs)
        result = evaluate(config, progress=progress_reporter(), cache=cache, held_tokens=False, executor=executor)
        hits, misses = cache.counts("embedding") if cache is not None else (0, 0)
        if hits or misses:  # on stderr, as `evals run` says it: the document and the summary line are the original's
            echo(f"cache: {misses} computed, {hits} from cache", err=True)
    finally:
        if cache is not None:
            cache.close()
    document = legacy_json(result.run, result.scores, result.answers)
    if written is not None:
        from evals.views.compact import check_texts_size

        # Not the original's behaviour, only past its reach: a document over 1 GB (a ceiling run on a
        # 10M-token benchmark: about 12 GB) is refused before it is built into bytes in memory.
        check_texts_size(
            result.run,
            instead=f"`evals run --runner {config.strategy} --corpus {corpus} --output {output} --output-records turns` "
            "writes each record as the turn it is",
        )
        write_json(written, document)
    echo_llm_usage(document)
    echo(summary_line(document, str(output) if output else None))


@click.command(
    "python -m evals",
    cls=EvalsCommand,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="The full tool is the `evals` command (evals --help); `python -m evals run ...` reaches it too.",
)
@run_options
@mneme_flags
@click.option(
    "--output",
    type=OUTPUT_FILE,
    required=True,
    help="Where to write the JSON result.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Compute every embedding afresh and keep none (by default they are kept in ~/.cache/mneme-evals/cache.duckdb, "
    "or $EVALS_CACHE).",
)
@click.option(
    "--jobs",
    type=Whole(1, MAX_JOBS),
    default=None,
    help="Processes that play the conversations at once. Default: one per core; 1 plays them in this process. "
    "The document is the same either way, apart from timings.",
)
def legacy_cli(**options: Any) -> None:
    """Run a corpus through a memory strategy and write the JSON result (the original harness's CLI)."""
    _run_and_report(**options)
