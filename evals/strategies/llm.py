"""What a memory that writes with an LLM (mem0 with infer=true, graphiti, cognee) asks its LLM through: the one
cached chat call (:class:`evals.io.chat.CachedChat`), as the harness asks for answers. So its requests are
keyed, cached, scrubbed of the key and checked as every other (a body over the reply cap, absurd token
counts: errors, never cached), under the run's deadline and retries (``--request-timeout``,
``--max-retries``: :attr:`BuildContext.llm_policy`), and every reply is tallied as a memory write
(:attr:`MemoryLLM.usage`, which the strategy gives the run as its ``write_usage``). That such a memory
wrote nothing fails the run: :func:`evals.run.executors.refuse_unwritten_memory`."""

from __future__ import annotations

from typing import Any

from evals.io.chat import CachedChat, Check
from evals.io.endpoints import endpoint_key, endpoint_url
from evals.model.results import MEMORY_WRITE, RequestTally
from evals.strategies.registry import BuildContext

__all__ = ["MemoryLLM"]


class MemoryLLM:
    """A memory's LLM at ``base_url`` (else $OPENAI_BASE_URL, else OpenAI's; ``asks`` says what for, in the
    error when OpenAI's endpoint has no key), through the run's cache."""

    def __init__(self, *, model: str, base_url: str | None, api_key: str | None, context: BuildContext, asks: str) -> None:
        url = endpoint_url(base_url)
        self.model = model
        self.chat = CachedChat(
            base_url=url,
            api_key=endpoint_key(url, api_key, asks),
            cache=context.cache,
            concurrency=1,
            policy=context.llm_policy,
            tally=RequestTally,
        )
        self.base_url = self.chat.base_url
        self.usage = self.chat.usage.tallies[MEMORY_WRITE] = RequestTally(model)

    def ask(self, body: dict[str, Any], where: str, *, keep: Check | None = None) -> str:
        """The reply's text to ``body``, sent as it is (from the cache, else asked); an
        :class:`evals.io.chat.LLMError` naming ``where`` when it cannot be had."""
        return self.chat.complete(body, where, kind=MEMORY_WRITE, keep=keep).content

    @property
    def requests_made(self) -> int:
        return self.usage.sent

    @property
    def requests_cached(self) -> int:
        return self.usage.cached

    def close(self) -> None:
        self.chat.close()
