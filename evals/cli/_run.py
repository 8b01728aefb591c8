"""``evals run``: one strategy over a corpus, appended to the store."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from evals.cli._base import (
    BASE_URL,
    CUTOFFS,
    MODEL_NAME,
    OUTPUT_FILE,
    Finite,
    FiniteSeconds,
    RegistryChoice,
    Whole,
    absolute,
    cli,
    downloads_option,
    echo,
    echo_llm_usage,
    format_choice,
    llm_options,
    max_unparsed_option,
    moved_to_option,
    option_pairs,
    price_table,
    prices_option,
    progress_reporter,
    repo_option,
    run_options,
    store_option,
    store_path,
    warn_about_the_key,
    write_json,
)
from evals.model.results import DEFAULT_CUTOFFS, MAX_SEED, MIN_SEED
from evals.run.config import MAX_CONCURRENCY
from evals.run.evaluate import RunConfig
from evals.strategies._deadline import MAX_CALL_TIMEOUT
from evals.views.report import outcome_json, run_line, unparsed_excess


def _protocol_names() -> tuple[str, ...]:
    from evals.benchmarks import protocol_names

    return protocol_names()


class ProtocolChoice(RegistryChoice):
    """``--protocol``'s choices: the registered units' protocols (a plug-in's among them)."""

    def __init__(self) -> None:
        super().__init__(_protocol_names)


def protocol_settings(protocol: str, judge_protocol: str | None, source: Path | None, options: dict[str, Any]) -> dict[str, Any]:
    """The RunConfig settings of --protocol, --judge-protocol and --protocol-source. --judge-model left
    at its default gives way to the judge protocol's own judge model; --judge beside a judge protocol
    that has no judge is refused."""
    from evals.benchmarks import no_judge_refusal, protocol_judges

    grader = judge_protocol or protocol
    if protocol_judges()[grader] is None and options.get("judge"):
        raise click.UsageError(no_judge_refusal(grader))  # RunConfig says the same; said here as a usage error
    if source is not None and protocol == "harness" and grader == "harness":
        raise click.UsageError("--protocol-source goes with a published --protocol or --judge-protocol")
    settings: dict[str, Any] = {"protocol": protocol, "judge_protocol": judge_protocol, "protocol_source": absolute(source)}
    context = click.get_current_context()
    if context.get_parameter_source("judge_model") == click.core.ParameterSource.DEFAULT:
        settings["judge_model"] = None  # the judge protocol's own
    return settings


@cli.command("run")
@run_options
@moved_to_option
@llm_options
@store_option
@click.option("--force", is_flag=True, help="Compute and append a new run even if the store already has one for these inputs.")
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Compute every embedding and LLM request afresh: neither read nor write the cache beside the store "
    "(<store>.cache.duckdb). Implies --force.",
)
@repo_option("whose HEAD commit (and dirty flag) is recorded with the run")
@click.option(
    "--output",
    type=OUTPUT_FILE,
    default=None,
    help="Also write the result as JSON in the original harness's shape.",
)
@click.option(
    "--output-records",
    type=click.Choice(["texts", "turns"]),
    default=None,
    help="How --output writes each test point's retrieved records: their texts, as the original harness did, or "
    "(turns) each as the number of the corpus turn it is (its text where it is no turn), a compact form for "
    "ceiling runs that retrieve whole histories. Default: texts, but a document that would pass 1 GB so is "
    "refused, in one line naming its size, before anything is written.",
)
@click.option(
    "--cutoffs",
    type=CUTOFFS,
    default=",".join(map(str, DEFAULT_CUTOFFS)),
    show_default=True,
    help="Depths the retrieval metrics (recall_any, recall_all, recall_frac, ndcg_any, ndcg_any_lme at turn and session level) "
    "are measured at, beside --k; a prefix-stable strategy is asked at --k (timed) and again, untimed, at the deepest. "
    "Comma-separated.",
)
@click.option(
    "--option",
    "strategy_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the strategy, validated by it (repeatable); `evals strategies` lists each one's options. "
    "Mneme's: --option backend=memory|sqlite, --option embedder=hash|minilm|minilm-bf16|openai.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where conversations are played: in this process, or as tasks on a Ray cluster (needs the 'ray' extra). "
    "The run is the same either way, apart from timings.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDRESS",
    help="The Ray cluster to use with --executor ray, e.g. 10.0.0.5:6379. Default: $RAY_ADDRESS, else a new "
    "local instance for this run.",
)
@click.option(
    "--ray-gpus",
    type=Finite(0, 64),
    default=0.0,
    show_default=True,
    help="GPUs each embedding task asks for with --executor ray (0: CPU only; a fraction shares a GPU).",
)
@click.option(
    "--protocol",
    type=ProtocolChoice(),
    default="harness",
    show_default=True,
    help="How answers are asked for, judged and counted: the harness's own prompts, or a published benchmark's "
    "protocol as a whole (prompts, context format with dates and speaker names, settings, judge templates, "
    "verdict rule, counted points), its templates read from the benchmark's pinned files. A published protocol "
    "implies --with-answers, and a judge where it has one (its judge model unless --judge-model).",
)
@click.option(
    "--judge-protocol",
    type=ProtocolChoice(),
    default=None,
    help="Judge and count the answers under this protocol instead (default: --protocol's own): e.g. answers asked "
    "one benchmark's way, re-judged by another's judge; the answers come from the cache, not the answer model.",
)
@click.option(
    "--protocol-source",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    metavar="DIR",
    help="Root of the benchmark repository's tree at the pinned commit, holding the files the protocol reads at "
    "their repository paths (for --protocol; a --judge-protocol of another repository is read from --downloads). "
    "Default: the copies `evals fetch` downloaded, in --downloads.",
)
@downloads_option(
    help="The folder `evals fetch` downloads into, where a published protocol's files are read from "
    "(sources/OWNER/REPO/COMMIT/PATH). Default: $XDG_CACHE_HOME/mneme-evals, else ~/.cache/mneme-evals."
)
@click.option(
    "--call-timeout",
    type=FiniteSeconds(0, MAX_CALL_TIMEOUT, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Stop the run when any one call into the strategy (reset, add, retrieve, context_for...) takes longer, "
    "as a fault naming the call; the run is kept as a failed run saying so. Default: no limit.",
)
@prices_option
@max_unparsed_option
def run_command(
    *,
    store: Path | None,
    force: bool,
    no_cache: bool,
    repo: Path | None,
    output: Path | None,
    output_records: str | None,
    strategy_options: tuple[str, ...],
    executor: str,
    ray_address: str | None,
    ray_gpus: float,
    prices_file: Path | None,
    protocol: str,
    judge_protocol: str | None,
    protocol_source: Path | None,
    downloads: Path | None,
    max_unparsed: float | None,
    **options: Any,
) -> None:
    """Run one strategy over a corpus, append the run to the store, print a one-line summary.

    A run made before from the same inputs (clean git commit, corpus content,
    strategy configuration, model, k, seed, package and library versions,
    tokenizer) is not recomputed: the command prints `cached: run <id>`
    instead, unless --force. A dirty working tree is never cached.

    Slow or paid work (embeddings, LLM requests) is kept in a cache file beside
    the store, so a rerun computes none of it again; the command prints how
    many were computed and how many came from the cache. --no-cache skips it.

    --with-answers answers every test point with an LLM from the strategy's
    context, --judge grades the answers, against OpenAI or any
    OpenAI-compatible server (--base-url); every response is cached, as it
    arrives: a run stopped half-way (a dead endpoint, Ctrl-C) resumes by
    running the same command again, sending only what is missing. The run
    reports answer, judge and memory-write tokens apart, sent vs from the
    cache, and $ at the shipped prices (or --prices FILE), recorded with it.

    \b
    Examples:
      evals run --runner mneme
      evals run --runner mneme --with-answers --judge --base-url http://127.0.0.1:8080/v1
      evals run --runner full_history --corpus corpus/ --output out/full.json
      evals run --runner mneme --option backend=sqlite --option embedder=minilm --k 10 --store /tmp/results.duckdb
    """
    api_key = options.pop("api_key")
    if options["judge_repeats"] > 1 and not options["judge"]:
        raise click.UsageError("--judge-repeats repeats the judge's verdicts: it goes with --judge")
    prices = price_table(prices_file)  # a bad price file is refused before any work
    options["options"] = option_pairs(strategy_options)
    options.update(protocol_settings(protocol, judge_protocol, protocol_source, options), downloads=absolute(downloads))
    shown, create_parent = store_path(store)
    # Absolute before any plug-in code runs (a plug-in may change the working directory); printed as given.
    path, written, repo = absolute(shown), absolute(output), absolute(repo)
    config = RunConfig(**{**options, "corpus": absolute(options["corpus"])}, corpus_as_given=str(options["corpus"]))
    if output is not None:
        from evals.io.outputs import check_output

        check_output(output, store=path, corpus=config.corpus)  # as given: no plug-in code has run yet
    warn_about_the_key(config, api_key)
    if output_records is not None and output is None:
        raise click.UsageError("--output-records says how --output writes records: it goes with --output")
    if executor != "ray" and (ray_address is not None or ray_gpus):
        raise click.UsageError("--ray-address and --ray-gpus go with --executor ray")
    if executor == "ray" and config.answers_on and api_key is not None and api_key != os.environ.get("OPENAI_API_KEY"):
        # The key never travels with a task: each worker reads it from its own environment.
        raise click.UsageError("with --executor ray, give the key as OPENAI_API_KEY in the workers' environment, not --api-key")
    from evals.run.executors import make_executor
    from evals.run.workflow import run_with_store

    progress = progress_reporter(heartbeat=True)
    try:
        outcome = run_with_store(
            config,
            path,
            force=force,
            repo=repo,
            create_parent=create_parent,
            not_code=[written] if written else [],
            progress=progress,
            use_cache=not no_cache,
            api_key=api_key,
            executor=make_executor(executor, address=ray_address, gpus=ray_gpus),
            prices=prices,
            # Said where the folder was not chosen: a --repo outside git is the user's own choice.
            warn=lambda text: echo(f"warning: {text}", err=True),
        )
    finally:
        getattr(progress, "stop", lambda: None)()
    document = outcome_json(outcome)
    if written is not None:
        from evals.views.compact import output_document

        write_json(written, output_document(document, outcome, config.corpus, output_records))
    if not outcome.reused:
        echo_llm_usage(document)
    if outcome.cache_hits or outcome.cache_misses:
        echo(f"cache: {outcome.cache_misses} computed, {outcome.cache_hits} from cache", err=True)  # embeddings
    headline = outcome.summary.headline if outcome.summary is not None else None
    tokens = outcome.summary.tokens_per_test_point if outcome.summary is not None else None  # over the headline's points
    if outcome.reused:
        echo(f"cached: {run_line(document, outcome.run_id, str(output) if output else None, headline, tokens)}")
    else:
        echo(run_line(document, outcome.run_id, f"{shown}{', ' + str(output) if output else ''}", headline, tokens))
        if outcome.summary is not None:  # fair play: how often the strategy returned more than asked
            from evals.views.tables import over_k_caveat

            if said := over_k_caveat(outcome.summary):
                echo(f"note: {said}", err=True)
    if (excess := unparsed_excess(document, max_unparsed)) is not None:
        raise click.ClickException(excess)


@cli.command("probe-judge")
@click.option("--protocol", type=ProtocolChoice(), required=True, help="The protocol whose judge is probed.")
@click.option(
    "--corpus",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("corpus"),
    show_default=True,
    help="The corpus whose test points the canned answers are for.",
)
@click.option("--sample", type=Whole(1, 100_000), default=20, show_default=True, help="How many test points to sample.")
@click.option("--seed", type=Whole(MIN_SEED, MAX_SEED), default=42, show_default=True, help="Seed of the sample.")
@click.option("--judge-model", type=MODEL_NAME, default=None, help="The judge model. Default: the protocol's own.")
@click.option(
    "--base-url",
    type=BASE_URL,
    envvar="OPENAI_BASE_URL",
    show_envvar=True,
    default=None,
    help="The OpenAI-compatible endpoint. Default: OpenAI's.",
)
@click.option(
    "--api-key",
    envvar="OPENAI_API_KEY",
    show_envvar=True,
    default=None,
    help="Key for the endpoint; never stored, cached or printed.",
)
@click.option("--concurrency", type=Whole(1, MAX_CONCURRENCY), default=4, show_default=True, help="Requests in flight at once.")
@click.option(
    "--protocol-source",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    metavar="DIR",
    help="As for `evals run`.",
)
@downloads_option(help="As for `evals run`.")
@store_option
@format_choice("table", "json", help="Print a table or JSON.")
def probe_judge_command(
    *,
    protocol: str,
    corpus: Path,
    sample: int,
    seed: int,
    judge_model: str | None,
    base_url: str | None,
    api_key: str | None,
    concurrency: int,
    protocol_source: Path | None,
    downloads: Path | None,
    store: Path | None,
    fmt: str,
) -> None:
    """Send canned answers of known quality to a protocol's judge and print how often it accepts each kind.

    For a seeded sample of the corpus's test points the protocol judges: the gold answer, the gold with
    a wrong date, an off-by-one count, one item of a listed answer, "I don't know", a hedge naming three
    candidates, and old beside new value on a knowledge-update question, each where it applies. The
    judge's replies are cached beside the store, as a run's are. LoCoMo has no judge: its F1 per kind.

    \b
    Examples:
      evals probe-judge --protocol longmemeval --corpus ~/.cache/mneme-evals/corpora/longmemeval_oracle
      evals probe-judge --protocol mem0 --corpus ~/.cache/mneme-evals/corpora/locomo --format json
    """
    from evals.analysis.probe import run_probe
    from evals.benchmarks import protocol_specs
    from evals.io.cache import Cache, cache_path_for
    from evals.run.evaluate import llm_backoff

    config = RunConfig(
        corpus=absolute(corpus),
        protocol=protocol,
        judge_model=judge_model,
        base_url=base_url,
        concurrency=concurrency,
        protocol_source=absolute(protocol_source),
        downloads=absolute(downloads),
        seed=seed,
    )
    warn_about_the_key(config, api_key)
    shown, _ = store_path(store)
    with Cache.open(cache_path_for(absolute(shown))) as cache:
        loaded, points, results = run_probe(config, sample=sample, cache=cache, api_key=api_key, backoff=llm_backoff())
    judge = config.judge_model if loaded.judges else None
    if fmt == "json":
        document = {
            "protocol": protocol,
            "judge_model": judge,
            "test_points": len(points),
            "kinds": [r.as_dict() for r in results],
        }
        click.echo(json.dumps(document, indent=2))
        return
    scores = spec.scores if (spec := protocol_specs().get(protocol)) else ""
    judged_by = f"judge {judge}" if judge is not None else "no judge" + (f" ({scores})" if scores else "")
    echo(f"protocol {protocol}, {judged_by}, {len(points)} test points of {corpus}")
    rows = [["kind", "sent", "accepted", "rate", "95% CI", "unparsed"]]
    for r in results:
        low, high = r.interval or (None, None)
        rate = "—" if r.rate is None else f"{r.rate:.3f}"
        interval = "—" if low is None else f"[{low:.3f}, {high:.3f}]"
        accepted = "—" if r.mean_score is not None and judge is None else str(r.accepted)
        mean = "" if r.mean_score is None else " (mean F1)" if judge is None else " (mean score)"
        mean = " (mean score)" if r.graded else mean
        rows.append([r.kind, str(r.sent), accepted, rate + mean, interval, str(r.unparsed)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    if undefined := sum(r.undefined for r in results):
        plural = "s" if undefined > 1 else ""
        echo(f"{undefined} score{plural} undefined (as BEAM's tau-b of a single event), left out of the mean score")
