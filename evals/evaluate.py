"""One run, end to end: load the corpus, build the strategy, play it, score it.

This is the function the CLI calls and the tests call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evals.cache import Cache
from evals.corpus import Corpus, load_corpus
from evals.metrics import Scores, score_run
from evals.runner import RunResult, likely_records, run_corpus
from evals.strategies import build_strategy
from evals.tokens import TokenCounter

__all__ = ["Evaluation", "RunConfig", "evaluate"]


class RunConfig(BaseModel):
    """Everything that decides a run's numbers, in one place."""

    model_config = ConfigDict(frozen=True)

    runner: str = "mneme"
    backend: str = "memory"
    embedder: str = "hash"
    corpus: Path = Path("corpus")
    k: int = Field(default=5, ge=1)
    seed: int = 42


@dataclass(frozen=True)
class Evaluation:
    corpus: Corpus
    run: RunResult
    scores: Scores


def evaluate(
    config: RunConfig,
    *,
    counter: TokenCounter | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: Cache | None = None,
) -> Evaluation:
    """Play ``config`` and score it. ``cache`` holds slow or paid work (embeddings,
    LLM requests) across runs; None computes everything afresh and keeps nothing."""
    # The corpus is checked before the strategy is built, so a bad corpus is
    # reported even when, say, an OpenAI key is missing too.
    corpus = load_corpus(config.corpus)
    strategy = build_strategy(
        config.runner, backend=config.backend, embedder=config.embedder, seed=config.seed, cache=cache
    )
    counter = counter or TokenCounter()
    counter.count_ahead(likely_records(corpus, strategy))  # on the second core, while the turns play
    prefetch = getattr(strategy, "prefetch", None)
    clock = time.perf_counter()
    if prefetch is not None:  # batch the slow embeddings up front, through the cache
        prefetch(t for c in corpus.conversations for turn in c.turns for t in _texts_of(turn))
    prefetched = time.perf_counter() - clock
    run = run_corpus(corpus, strategy, k=config.k, seed=config.seed, corpus_dir=str(config.corpus), progress=progress)
    if prefetch is not None:  # the embedding up front is part of the run's time
        run = run.model_copy(update={"duration_s": run.duration_s + prefetched})
    return Evaluation(corpus=corpus, run=run, scores=score_run(run, counter))


def _texts_of(turn) -> tuple[str, ...]:
    """What a play-through embeds for a turn: its question (if a test point) and its content."""
    return (turn.test_at.question, turn.content) if turn.test_at is not None else (turn.content,)
