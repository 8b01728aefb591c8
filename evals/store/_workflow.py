"""``evals run`` with a store: look in the cache, compute, append. One function for CLI and tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.cache import Cache, cache_path_for
from evals.corpus import load_corpus
from evals.evaluate import RunConfig, evaluate
from evals.provenance import Provenance, collect_provenance
from evals.report import seed_json
from evals.strategies import build_strategy, model_of
from evals.store._keys import cache_key
from evals.store._store import DEFAULT_LOCK_TIMEOUT, Store, check_writable
from evals.tokens import TokenCounter

__all__ = ["StoredOutcome", "planned_cache_key", "run_with_store"]


@dataclass(frozen=True)
class StoredOutcome:
    run_id: str
    cached: bool
    document: dict[str, Any]  # the seed JSON of the run
    provenance: Provenance
    cache_hits: int = 0  # embeddings found in the cache
    cache_misses: int = 0  # ... and computed or requested by this run


def planned_cache_key(config: RunConfig, provenance: Provenance, tokenizer: str) -> str | None:
    """The cache key the run ``config`` would be stored under, found without running it."""
    if not provenance.is_clean_commit:
        return None
    corpus = load_corpus(config.corpus)
    strategy = build_strategy(
        config.runner,
        backend=config.backend,
        embedder=config.embedder,
        seed=config.seed,
        summarize_fn=config.summarize_fn(),
    )
    return cache_key(
        provenance,
        corpus_digest=corpus.digest,
        strategy_config=strategy.config_summary(),
        model=model_of(strategy),
        k=config.k,
        seed=config.seed,
        tokenizer=tokenizer,
        answers=config.answer_identity(),
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
) -> StoredOutcome:
    """Reuse a cached run for ``config`` or compute and append a new one.

    The store is held only briefly: once (read-only) to check it and look up
    the cache before any work, and once to append after the work, so other
    processes can use it meanwhile. A store at an older schema is upgraded
    first. ``not_code`` names files, such as an
    ``--output`` file, whose changes must not make the tree count as dirty.

    Embeddings and LLM requests go through the cache beside the store
    (:func:`~evals.cache.cache_path_for`); ``use_cache=False`` neither reads nor
    writes it, so everything is computed afresh (and a cached run is not reused).
    ``api_key`` is for the chat endpoint (answers); it is passed on, never kept.
    """
    store_path = Path(store_path)
    counter = counter or TokenCounter()
    provenance = collect_provenance(repo, ignore=[store_path, cache_path_for(store_path), *not_code])
    check_writable(store_path, create_parent=create_parent)
    if store_path.exists():
        Store.upgrade(store_path, lock_timeout=lock_timeout)  # as the append would; the read below may not
        key = None if force or not use_cache else planned_cache_key(config, provenance, counter.tokenizer)
        with Store.open(store_path, read_only=True, lock_timeout=lock_timeout) as store:
            cached = store.find_cached(key)
            if cached is not None:
                return StoredOutcome(cached, True, store.seed_json(cached), provenance)
    cache = Cache.open(cache_path_for(store_path)) if use_cache else None
    try:
        evaluation = evaluate(config, counter=counter, progress=progress, cache=cache, api_key=api_key)
    finally:
        if cache is not None:
            cache.close()
    # The embeddings' share of the cache (LLM requests are counted with the answers).
    hits, misses = cache.counts("embedding") if cache is not None else (None, None)
    with Store.open(store_path, lock_timeout=lock_timeout, create_parent=create_parent) as store:
        run_id = store.append(evaluation, provenance, cache_hits=hits, cache_misses=misses)
    document = seed_json(evaluation.run, evaluation.scores, evaluation.answers)
    return StoredOutcome(run_id, False, document, provenance, hits or 0, misses or 0)
