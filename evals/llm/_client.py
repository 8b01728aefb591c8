"""A chat-completions client for any OpenAI-compatible endpoint, with a response cache.

Requests go through the official ``openai`` package. Every response is kept in
the cache beside the store (namespace ``chat:<base url>``, key = digest of the
model and the exact request body as canonical JSON), written as soon as it
arrives, so a rerun asks nothing and a run that fails half-way keeps what it
paid for. The API key is handed to the ``openai`` client and to nothing else:
it is not part of any key, record or message. A server may echo it back (in an
error, an answer, a judge's reason): every response body is scrubbed of it
(``***``) before it is parsed, cached or stored, and so is every error message.
:func:`exposed_key_warning` says when the key would travel unencrypted.
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai

from evals.cache import Cache, digest
from evals.errors import EvalsError

# progress(done, total, what): the CLI's progress line.
Progress = Callable[[int, int, str], None]

__all__ = ["DEFAULT_BASE_URL", "ChatClient", "LLMError", "Reply", "RetryPolicy", "Usage", "exposed_key_warning", "scrubber"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
SEED = 42  # sent with every request: with temperature 0, as close to repeatable as the API allows

_RETRY_STATUSES = {408, 409, 429}

Check = Callable[[str], object]

MIN_SECRET = 8  # shorter "keys" ("none", "x") are placeholders for servers that want none: not masked
_LOCAL_HOSTS = {"localhost", "::1"}


def exposed_key_warning(base_url: str, api_key: str | None) -> str | None:
    """A warning when ``api_key`` would be sent unencrypted (plain http) to a host other than this
    machine; None when there is no key, the URL is https, or the host is local."""
    if not api_key:
        return None
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    local = host in _LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")
    if parts.scheme == "https" or (parts.scheme == "http" and local):
        return None
    return f"the API key will be sent unencrypted to {base_url} (plain http); use https, or a server on this machine"


def scrubber(secret: str | None) -> Callable[[str], str]:
    """A function that masks ``secret`` in a text, as written and as JSON escapes it."""
    if not secret or len(secret) < MIN_SECRET:
        return lambda text: text
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}

    def scrub(text: str) -> str:
        for form in forms:
            text = text.replace(form, "***")
        return text

    return scrub


class LLMError(EvalsError):
    """A request that could not be completed, or a response that cannot be used."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``retries`` more attempts after the first, waiting ``backoff``
    seconds, doubling each time (jittered, at most 30 s), or what Retry-After asks."""

    timeout: float = 60.0
    retries: int = 5
    backoff: float = 1.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), 60.0)
        return min(self.backoff * 2**attempt, 30.0) * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class Reply:
    """One chat completion: its text, its usage and how long the request took when it was made."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool


@dataclass
class Usage:
    """What a client did during a run."""

    requests_made: int = 0  # answered by the endpoint (retries not counted)
    requests_cached: int = 0  # answered from the cache
    attempts_retried: int = 0
    prompt_tokens: int = 0  # over every reply used, cached or not: the run's cost at list price
    completion_tokens: int = 0


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def parse_reply(text: str, latency_s: float, cached: bool) -> Reply:
    """A reply from a response body; ValueError saying what is wrong when it is not a chat completion."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the body is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ValueError("the body is JSON nested too deeply") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("the body has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not a string")
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    prompt_tokens, completion_tokens = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    if not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int):
        raise ValueError("usage.prompt_tokens / usage.completion_tokens are not integers")
    return Reply(content.strip(), prompt_tokens, completion_tokens, latency_s, cached)


class ChatClient:
    """Chat completions against one endpoint, cached, retried, at most ``concurrency`` at a time."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: Cache | None = None,
        concurrency: int = 4,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.namespace = f"chat:{self.base_url}"
        self.concurrency = max(1, concurrency)
        self.policy = policy or RetryPolicy()
        self.usage = Usage()
        self._cache = cache
        self._scrub = scrubber(api_key)
        if not api_key and self.base_url == DEFAULT_BASE_URL:
            raise LLMError(
                "--with-answers/--judge against OpenAI need an API key: set OPENAI_API_KEY (or pass --api-key), "
                "or point --base-url / OPENAI_BASE_URL at another OpenAI-compatible server"
            )
        # Local servers often want no key, but the client insists on one.
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=api_key or "none", max_retries=0, timeout=self.policy.timeout)
        self._lock = threading.Lock()

    @staticmethod
    def body(model: str, messages: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
        """The request body: temperature 0 and a fixed seed, always."""
        return {"model": model, "messages": messages, "temperature": 0, "seed": SEED, **extra}

    def key(self, body: dict[str, Any]) -> str:
        return digest(body["model"], _canonical(body))

    # -- requests ------------------------------------------------------------------------------

    def complete(self, body: dict[str, Any], where: str, check: Check | None = None) -> Reply:
        return self.complete_many([body], [where], check)[0]

    def complete_many(
        self,
        bodies: Sequence[dict[str, Any]],
        wheres: Sequence[str],
        check: Check | None = None,
        progress: Progress | None = None,
        label: str = "requests",
    ) -> list[Reply]:
        """Replies for ``bodies`` in order: from the cache where it has them, the rest
        requested concurrently. The first failure cancels what has not started and is
        raised (an :class:`LLMError` naming its ``where``); what completed stays cached.

        ``check(content)`` raises ValueError for a reply that is well-formed JSON but
        unusable (a judge reply that is no verdict): such a reply is an error, never cached.
        ``progress(done, total, label)`` is called as each request that was not cached ends."""
        keys = [self.key(b) for b in bodies]
        found = self._cache.get_many(self.namespace, keys) if self._cache is not None else {}
        replies: list[Reply | None] = [None] * len(bodies)
        missing: list[int] = []
        for i, key in enumerate(keys):
            entry = found.get(key)
            if entry is None:
                missing.append(i)
                continue
            stored = json.loads(entry)
            reply = parse_reply(self._scrub(stored["body"]), stored["latency_s"], cached=True)
            self._check(reply, check, wheres[i])
            replies[i] = reply
            self._count(reply)
        if missing:
            unique: dict[str, int] = {}
            for i in missing:
                unique.setdefault(keys[i], i)
            fetched = self._fetch_all([(bodies[i], keys[i], wheres[i], check) for i in unique.values()], progress, label)
            by_key = dict(zip(unique, fetched, strict=True))
            for i in missing:
                reply = by_key[keys[i]]
                if unique[keys[i]] != i:
                    # The same request twice in one batch is sent once; the repeat counts as cached,
                    # so a run's counts and tokens do not depend on what the cache held before.
                    reply = dataclasses.replace(reply, cached=True)
                    self._count(reply)
                replies[i] = reply
        return [r for r in replies if r is not None]

    def _fetch_all(
        self, jobs: list[tuple[dict[str, Any], str, str, Check | None]], progress: Progress | None, label: str
    ) -> list[Reply]:
        finished = 0
        lock = threading.Lock()

        def report(_: object = None) -> None:
            nonlocal finished
            if progress is not None:
                with lock:  # workers finish concurrently; the counter and the printing stay in step
                    finished += 1
                    progress(finished, len(jobs), label)

        if len(jobs) == 1 or self.concurrency == 1:
            replies = []
            for job in jobs:
                replies.append(self._fetch(*job))
                report()
            return replies
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs)), thread_name_prefix="evals-llm") as pool:
            futures = [pool.submit(self._fetch, *job) for job in jobs]
            for future in futures:
                future.add_done_callback(lambda f: report() if not f.cancelled() and f.exception() is None else None)
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in futures if f in done and f.exception() is not None), None)
            if failed is not None:
                for future in futures:
                    future.cancel()
                raise failed.exception()  # type: ignore[misc]
            return [f.result() for f in futures]

    def _fetch(self, body: dict[str, Any], key: str, where: str, check: Check | None) -> Reply:
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                raw = self._openai.chat.completions.with_raw_response.create(**body)
                text = self._scrub(raw.http_response.text)  # before it is parsed, cached or stored
                break
            except openai.APITimeoutError:
                reason, retry_after = f"no response within {self.policy.timeout:g} s", None
            except openai.APIConnectionError as exc:
                reason, retry_after = f"cannot connect ({self._scrub(str(exc))})", None
            except openai.APIStatusError as exc:
                reason = f"HTTP {exc.status_code}: {self._scrub(exc.message)}"
                if exc.status_code not in _RETRY_STATUSES and exc.status_code < 500:
                    raise self._error(f"{where}: {self.base_url} refused the {body['model']} request: {reason}") from None
                retry_after = _retry_after(exc)
            except openai.APIResponseValidationError as exc:
                raise self._error(f"{where}: malformed response from {self.base_url}: {exc}") from None
            except ValueError as exc:  # the body claimed JSON but was not
                raise self._error(f"{where}: malformed response from {self.base_url}: {exc}") from None
            if attempt >= self.policy.retries:
                raise self._error(
                    f"{where}: {body['model']} request to {self.base_url} failed after {attempt + 1} attempts: {reason}"
                )
            with self._lock:
                self.usage.attempts_retried += 1
            time.sleep(self.policy.delay(attempt, retry_after))
            attempt += 1
        latency = time.perf_counter() - started
        try:
            reply = parse_reply(text, latency, cached=False)
        except ValueError as exc:
            raise self._error(f"{where}: malformed response from {self.base_url}: {exc}") from None
        self._check(reply, check, where)
        if self._cache is not None:
            self._cache.put(self.namespace, key, json.dumps({"body": text, "latency_s": latency}).encode("utf-8"))
        with self._lock:
            self.usage.requests_made += 1
        self._count(reply)
        return reply

    def _check(self, reply: Reply, check: Check | None, where: str) -> None:
        if check is None:
            return
        try:
            check(reply.content)
        except ValueError as exc:
            raise self._error(f"{where}: malformed reply from {self.base_url}: {exc}") from None

    def _count(self, reply: Reply) -> None:
        with self._lock:
            if reply.cached:
                self.usage.requests_cached += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens

    def _error(self, message: str) -> LLMError:
        """An LLMError whose message cannot hold the key, whatever the server sent."""
        return LLMError(self._scrub(message))

    def close(self) -> None:
        self._openai.close()
