"""The harness's chat client: answers, judges and summaries, through the one cached chat call
(:class:`evals.io.chat.CachedChat`: the cache, the key scrubbing, the deadline and retries, the reply
checks and caps, all there), each reply tallied by its kind of request (a :class:`RequestTally` each).
:func:`exposed_key_warning` says when the key would travel unencrypted."""

from __future__ import annotations

from typing import Any

from evals.io.cache import Cache
from evals.io.chat import (
    MAX_REPLY_BYTES,
    MAX_REPLY_TOKENS,
    CachedChat,
    LLMError,
    Progress,
    Reply,
    RetryPolicy,
    Usage,
    parse_reply,
)
from evals.io.endpoints import DEFAULT_BASE_URL, exposed_key_warning, scrubber
from evals.model.results import RequestTally

__all__ = [
    "DEFAULT_BASE_URL",
    "MAX_REPLY_BYTES",
    "MAX_REPLY_TOKENS",
    "ChatClient",
    "LLMError",
    "Progress",
    "Reply",
    "RetryPolicy",
    "Usage",
    "exposed_key_warning",
    "parse_reply",
    "scrubber",
]

SEED = 42  # sent with every request: with temperature 0, as close to repeatable as the API allows


class ChatClient(CachedChat):
    """Chat completions for answers and judges against one endpoint, cached, retried, at most ``concurrency``
    at a time, each kind of request tallied apart (``usage.tallies``)."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: Cache | None = None,
        concurrency: int = 4,
        policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(
            base_url=base_url or DEFAULT_BASE_URL,
            api_key=api_key,
            cache=cache,
            concurrency=concurrency,
            policy=policy,
            tally=RequestTally,
        )
        if not api_key and self.base_url == DEFAULT_BASE_URL:
            self.close()
            raise LLMError(
                "--with-answers/--judge against OpenAI need an API key: set OPENAI_API_KEY (or pass --api-key), "
                "or point --base-url / OPENAI_BASE_URL at another OpenAI-compatible server"
            )

    @staticmethod
    def body(model: str, messages: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
        """The request body: temperature 0 and a fixed seed, always."""
        return {"model": model, "messages": messages, "temperature": 0, "seed": SEED, **extra}
