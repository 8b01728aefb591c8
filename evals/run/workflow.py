"""``evals run`` with a store: reuse an earlier run of the same inputs, or compute and append.

One function for the CLI and the tests. Two different things are reused here,
and the names keep them apart: a whole **run** is *reused* when the store holds
one made from the same inputs (its reuse key); single **embeddings and LLM
replies** come from the *cache* file beside the store (:mod:`evals.io.cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC
from pathlib import Path

from evals.errors import EvalsError
from evals.io.cache import Cache, cache_path_for
from evals.io.outputs import check_store_place
from evals.model.corpus import load_corpus
from evals.model.costs import PriceTable
from evals.model.provenance import NO_GIT, Provenance, collect_provenance, dirty_warning, strategy_code
from evals.model.tokens import TokenCounter
from evals.run.evaluate import PlayFailure, RunConfig, evaluate, play_failure
from evals.run.executors import Executor
from evals.run.playthrough import recorded_cutoffs
from evals.store import (
    DEFAULT_LOCK_TIMEOUT,
    FailedRun,
    Store,
    StoredOutcome,
    check_writable,
    config_key,
    new_run_id,
    reuse_key,
    writable_file,
)
from evals.strategies import Registry, StrategySpec

__all__ = ["StoredOutcome", "failed_run", "no_git_warning", "planned_reuse_key", "run_with_store"]


def no_git_warning(repo: Path | None) -> str:
    """What a run made outside a git checkout is told: it is recorded as ``no-git`` and never reused."""
    where = Path(repo) if repo is not None else Path.cwd()
    return (
        f"{where} is not in a git checkout: this run is recorded as commit {NO_GIT} and is never reused; "
        "run from the clone, or name it with --repo PATH"
    )


def planned_reuse_key(config: RunConfig, provenance: Provenance, tokenizer: str) -> str | None:
    """The reuse key the run ``config`` would be stored under, found without running it."""
    if not provenance.is_clean_commit:
        return None
    corpus = load_corpus(config.corpus)
    planned = config.plan()
    return reuse_key(
        provenance,
        corpus_digest=corpus.digest,
        strategy_config=planned.configuration,
        model=planned.model,
        k=config.k,
        seed=config.seed,
        tokenizer=tokenizer,
        answers=config.answer_identity(),
        cutoffs=recorded_cutoffs(config.k, config.cutoffs),
    )


def failed_run(failed: PlayFailure, reason: str, config: RunConfig, provenance: Provenance, spec: StrategySpec) -> FailedRun:
    """The failed run a :class:`PlayFailure` is stored as: its configuration, corpus, k, commit, date, ``reason`` in
    one line, and what its strategy declares."""
    started = failed.started_at.astimezone(UTC)
    tuned_on, writes_with_llm = spec.declared(failed.configuration)
    return FailedRun(
        run_id=new_run_id(),
        commit=provenance.commit,
        dirty=provenance.dirty,
        model=failed.model,
        date=started.date().isoformat(),
        timestamp=started,
        strategy=str(failed.configuration.get("name", spec.name)),
        strategy_config=dict(failed.configuration),
        config_key=config_key(failed.configuration, k=config.k, model=failed.model, answers=config.answer_identity()),
        k=config.k,
        seed=config.seed,
        corpus_name=failed.corpus.name,
        corpus_digest=failed.corpus.digest,
        package_version=provenance.package_version,
        python_version=provenance.python_version,
        duration_s=failed.duration_s,
        reason=" ".join(reason.split()),
        strategy_source=failed.source,
        benchmark=failed.corpus.benchmark,
        tuned_on=tuned_on,
        writes_with_llm=writes_with_llm,
    )


def run_with_store(
    config: RunConfig,
    store_path: Path,
    *,
    force: bool = False,
    repo: Path | None = None,
    create_parent: bool = False,
    not_code: Iterable[Path] = (),
    counter: TokenCounter | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    use_cache: bool = True,
    api_key: str | None = None,
    executor: Executor | None = None,
    prices: PriceTable | None = None,
    warn: Callable[[str], None] | None = None,
) -> StoredOutcome:
    """Reuse an earlier run of ``config`` or compute and append a new one.

    The store is held only briefly: once (read-only) to check it and look for
    a reusable run before any work, and once to append after the work, so other
    processes can use it meanwhile. A store at an older schema is upgraded only
    by that append, once every input has been checked and the run made: a run
    that fails (a bad corpus, an unknown option, a plug-in fault) leaves it as
    it was; no earlier run is looked up in it (nothing in it was stored by this
    schema). ``not_code`` names files, such as an
    ``--output`` file, whose changes must not make the tree count as dirty.
    The store may not be in the corpus folder (:func:`evals.io.outputs.check_store_place`).

    Embeddings and LLM requests go through the cache beside the store
    (:func:`~evals.io.cache.cache_path_for`); ``use_cache=False`` neither reads nor
    writes it, so everything is computed afresh (and no earlier run is reused).
    ``api_key`` is for the chat endpoint (answers); it is passed on, never kept.
    ``executor`` plays the conversations (default: in this process; see :mod:`evals.run.executors`):
    whichever plays them, the run is stored, and reused, the same way.
    ``warn`` is told, in one line, when the run is made outside a git checkout (:func:`no_git_warning`; not when the
    folder was named with ``repo``) and when the tree has uncommitted changes (:func:`dirty_warning`), a run that is
    never reused.
    ``prices`` costs the LLM requests (:func:`evals.run.evaluate.evaluate`); it is no input of the run
    (a reused run keeps the prices it was costed at).
    """
    store_path = Path(store_path)
    counter = counter or TokenCounter()
    provenance = collect_provenance(repo, ignore=[store_path, cache_path_for(store_path), *not_code])
    if warn is not None and provenance.commit == NO_GIT and repo is None:
        warn(no_git_warning(repo))  # a folder named with --repo is outside git on purpose (tests, scratch runs)
    if warn is not None and provenance.dirty:
        warn(dirty_warning(provenance))
    check_writable(store_path, create_parent=create_parent)
    check_store_place(store_path, corpus=config.corpus)
    if use_cache:
        writable_file(cache_path_for(store_path), "cache", "run with --no-cache")
    # A plug-in's code, as imported now (before the run), goes into the key the run is looked up and stored under.
    spec = Registry().get(config.strategy)
    provenance = replace(provenance, strategy_code=strategy_code(spec.source, spec.module, spec.imported_with))
    # An older store is read by nothing here: the append upgrades it (a newer one, or a file that is not
    # a store, is refused now, before any work).
    current = True
    if store_path.exists():
        version, newest = Store.schema_versions(store_path, lock_timeout=lock_timeout)
        current = version >= newest
    if store_path.exists() and current:
        key = None if force or not use_cache else planned_reuse_key(config, provenance, counter.tokenizer)
        with Store.open(store_path, read_only=True, lock_timeout=lock_timeout) as store:
            reusable = store.find_reusable(key)
            if reusable is not None:
                stored = store.get_run(reusable)
                return StoredOutcome(
                    reusable,
                    True,
                    provenance,
                    stored.run,
                    stored.scores,
                    stored.answers,
                    stored.summary.metrics,
                    summary=stored.summary,
                    record_turns=stored.record_turns,
                )
    cache = Cache.open(cache_path_for(store_path), lock_timeout=lock_timeout) if use_cache else None
    try:
        evaluation = evaluate(
            config, counter=counter, progress=progress, cache=cache, api_key=api_key, executor=executor, prices=prices
        )
        counter = None  # its counts (and the tokenizer) are not needed past scoring; the append wants the room
    except EvalsError as exc:
        failure = play_failure(exc)
        if failure is None:
            raise
        if cache is not None:
            cache.close()
            cache = None
        record = failed_run(failure, str(exc), config, provenance, spec)
        with Store.open(store_path, lock_timeout=lock_timeout, create_parent=create_parent) as store:
            store.write_failed([record])
        kept = EvalsError(f"{exc} (kept in the store as failed run {record.run_id})")
        kept.failed_run = record  # type: ignore[attr-defined] - what a suite names in its summary
        raise kept from exc
    finally:
        if cache is not None:
            cache.close()
    tuned_on, writes_with_llm = spec.declared(evaluation.run.strategy)
    # The embeddings' share of the cache (LLM requests are counted with the answers).
    hits, misses = cache.counts("embedding") if cache is not None else (None, None)
    with Store.open(store_path, lock_timeout=lock_timeout, create_parent=create_parent) as store:
        run_id = store.append(
            evaluation,
            provenance,
            cache_hits=hits,
            cache_misses=misses,
            tuned_on=tuned_on,
            writes_with_llm=writes_with_llm,
        )
        summary = store.get_summary(run_id)
    return StoredOutcome(
        run_id,
        False,
        provenance,
        evaluation.run,
        evaluation.scores,
        evaluation.answers,
        summary.metrics,
        hits or 0,
        misses or 0,
        summary,
        corpus=evaluation.corpus,
    )
