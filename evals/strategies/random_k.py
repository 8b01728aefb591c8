"""``random_k``: k earlier turns drawn uniformly at random. The chance floor.

A memory whose recall does not beat this one's, by more than the intervals,
has shown nothing.

A draw is a shuffle of the turns held, seeded by the run's seed, the
question and everything the conversation has said so far (a running digest
of the turns added). So the draw is reproducible without counting
conversations (a conversation played alone, on another machine, draws the
same), each conversation draws independently, asking again gives the same
turns (``context_for`` shows the model exactly the records that were
scored), and the first k of the shuffle are the draw at k: every cutoff
reads off one retrieval (``prefix_stable``).
"""

from __future__ import annotations

import hashlib
import random

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._faults import MAX_INT, MIN_INT
from evals.strategies._turns import RankedTurns
from evals.strategies.base import Message
from evals.strategies.registry import BuildContext, StrategySpec


def drawn(count: int, seed: int, history: str, query: str) -> list[int]:
    """The positions 0..count-1 in the order of one draw: a shuffle seeded by the run's seed, the digest of
    the conversation so far and the question (random_k's turns, random_sessions' sessions)."""
    order = list(range(count))
    random.Random(f"{seed}:{history}:{query}").shuffle(order)
    return order


class RandomK(RankedTurns):
    name = "random_k"

    def __init__(self, *, seed: int = 42) -> None:
        super().__init__()
        self._seed = seed
        self._history = hashlib.blake2b(digest_size=16)

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        super().add(role, content)
        self._history.update(f"{role}\x00{len(content)}\x00{content}".encode("utf-8", "surrogatepass"))

    def _ranked(self, query: str, k: int) -> list[Message]:
        order = drawn(len(self._turns), self._seed, self._history.hexdigest(), query)
        return [self._turns[i] for i in order[:k]]

    def reset(self) -> None:
        super().reset()
        self._history = hashlib.blake2b(digest_size=16)


class RandomKOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int | None = Field(default=None, ge=MIN_INT, le=MAX_INT, description="seed of the draws (default: the run's --seed)")


def seed_of(options: RandomKOptions, context: BuildContext) -> int:
    """The seed of the draws: the option's, else the run's --seed."""
    return context.seed if options.seed is None else options.seed


SPEC = StrategySpec(
    name="random_k",
    build=lambda options, context: RandomK(seed=seed_of(options, context)),
    options=RandomKOptions,
    # "draw" names how draws are made, so runs of the earlier sampler stay a configuration of their own.
    describe=lambda options, context: {"name": "random_k", "seed": seed_of(options, context), "draw": "shuffle_by_history"},
    summary="k earlier turns drawn uniformly at random: the chance floor.",
)
