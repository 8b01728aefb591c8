"""``random_k``: k earlier turns drawn uniformly at random. The chance floor.

A memory whose recall does not beat this one's, by more than the intervals,
has shown nothing. Draws are seeded by the run's seed and the conversation's
id (``begin_conversation``), so a run is reproducible, each conversation
independent, and a conversation draws the same wherever it is played: alone on
a worker (``--executor ray``) or in a corpus of others.

``context_for`` gives the turns the last ``retrieve`` drew for the same
question and k, without drawing again: the answer model sees exactly the
records that were scored, and asking for context (``--with-answers``) leaves
the generator, and so every later retrieval, as it was.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies.base import Message
from evals.strategies.registry import BuildContext, StrategySpec


class RandomK:
    name = "random_k"

    def __init__(self, *, seed: int = 42) -> None:
        self._seed = seed
        self._turns: list[Message] = []
        self._rng = random.Random(f"{seed}:")
        self._last: dict[tuple[str, int], list[Message]] = {}  # (query, k) -> its latest draw

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        self._turns.append({"role": role, "content": content})

    def _pick(self, k: int) -> list[Message]:
        chosen = sorted(self._rng.sample(range(len(self._turns)), min(k, len(self._turns))))
        return [self._turns[i] for i in chosen]

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        last = self._last.get((query, k))
        return list(last) if last is not None else self._pick(k)

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        picked = self._last[query, k] = self._pick(k)
        return [t["content"] for t in picked]

    def reset(self) -> None:
        self._turns.clear()
        self._last.clear()
        self._rng.seed(f"{self._seed}:")

    def begin_conversation(self, conversation_id: str) -> None:
        """Seed the draws by the conversation's id (the play-through calls this after reset)."""
        self._rng.seed(f"{self._seed}:{conversation_id}")


class RandomKOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int | None = Field(default=None, description="seed of the draws (default: the run's --seed)")


def _seed(options: RandomKOptions, context: BuildContext) -> int:
    return context.seed if options.seed is None else options.seed


SPEC = StrategySpec(
    name="random_k",
    build=lambda options, context: RandomK(seed=_seed(options, context)),
    options=RandomKOptions,
    describe=lambda options, context: {"name": "random_k", "seed": _seed(options, context)},
    summary="k earlier turns drawn uniformly at random: the chance floor.",
)
