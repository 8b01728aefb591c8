"""The one cached chat call: every request this harness sends to an OpenAI-compatible chat endpoint, the
harness's own (answers, judges, summaries: :class:`evals.run.llm.ChatClient`) and the memories' that write
with an LLM (mem0 with infer=true, graphiti, cognee), goes through :class:`CachedChat`.

Requests go through the official ``openai`` package over :mod:`evals.io.bounded_http`: each attempt
must bring its whole response within the policy's timeout (``--request-timeout``; not each read), at most
``--max-retries`` more attempts follow a timeout, a lost connection or HTTP 408/409/429/5xx, a body
larger than :data:`MAX_REPLY_BYTES` once decompressed is malformed, and Ctrl-C abandons the
requests in flight at once. Every response is kept in the cache beside the store (namespace
``chat:<base url>``, key = digest of the model and the exact request body as canonical JSON, and
for a judge's repeat beyond the first its index), written as soon as it arrives, so a rerun asks
nothing and a run that fails half-way (a dead endpoint, Ctrl-C, a crash) keeps what it paid for:
the same command again sends only what is missing. The whole response body is cached, so a reply
from the cache keeps the ``model`` and ``system_fingerprint`` the endpoint served it with. Only a reply
that passed :func:`parse_reply` (strict JSON, a string answer, token counts from 0 to
:data:`MAX_REPLY_TOKENS`: an absurd count is refused here, at the reply, never cached and never stored)
and the caller's check is cached; a cached one is checked again when read, and asked afresh if it fails.

The API key is handed to the ``openai`` client and to nothing else: it is not part of any key,
record or message. A server may echo it back, in any field and in many encodings: the body is
scrubbed of it (:func:`evals.io.endpoints.scrubber`, ``***``), as text and in its decoded strings
(:func:`evals.io.endpoints.scrub_json`), before it is parsed or cached, the decoded answer again after
parsing, and every error message too.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.io.cache import Cache, digest
from evals.io.endpoints import MAX_SERVED_NAME, RetryPolicy, canonical_body, check_base_url, scrub_json, scrubber
from evals.io.jsonfile import strict_json

if TYPE_CHECKING:
    import openai

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_TOKENS",
    "MAX_SERVED_NAME",
    "CachedChat",
    "Check",
    "LLMError",
    "Progress",
    "Reply",
    "RetryPolicy",
    "Usage",
    "parse_reply",
]

# progress(done, total, what): the CLI's progress line.
Progress = Callable[[int, int, str], None]
# check(content) raises ValueError for a reply that is well-formed but unusable (a judge reply that is no verdict).
Check = Callable[[str], object]

_RETRY_STATUSES = {408, 409, 429}

# A chat reply is a few thousand tokens: 8 MiB is room for the longest, JSON-escaped, many times over.
MAX_REPLY_BYTES = 8 * 1024**2
# Token counts one reply may report: far beyond any context window, and small enough that the
# store's per-answer columns (32-bit) hold the sum of an answer's and its verdict's.
MAX_REPLY_TOKENS = 100_000_000


class LLMError(EvalsError):
    """A request that could not be completed, or a response that cannot be used."""


@dataclass(frozen=True)
class Reply:
    """One chat completion: its text, its usage and how long the request took when it was made."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    model: str | None = None  # the model the endpoint says answered (its `model`); None: not said
    fingerprint: str | None = None  # its `system_fingerprint`


@dataclass
class Usage:
    """What a client did."""

    requests_made: int = 0  # answered by the endpoint (retries not counted)
    requests_cached: int = 0  # answered from the cache
    attempts_retried: int = 0
    prompt_tokens: int = 0  # over every reply used, cached or not: the run's cost at list price
    completion_tokens: int = 0
    # Per kind of request (evals.model.results.REQUEST_KINDS: a RequestTally each), sent and cached apart,
    # with the served models; made by the client's ``tally`` factory.
    tallies: dict[str, Any] = dataclasses.field(default_factory=dict)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _tokens(usage: dict[str, Any], name: str) -> int:
    value = usage.get(name, 0)
    # bool is an int to Python, not a count to anyone else.
    if type(value) is not int or not 0 <= value <= MAX_REPLY_TOKENS:
        raise ValueError(f"usage.{name} is {json.dumps(value)[:40]}, not a whole number from 0 to {MAX_REPLY_TOKENS:,}")
    return value


def _served(data: dict[str, Any], name: str, scrub: Callable[[str], str]) -> str | None:
    """The reply's ``model`` or ``system_fingerprint``: a string of at most MAX_SERVED_NAME characters, or
    None where the endpoint does not say (absent or null, as many local servers leave the fingerprint)."""
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_SERVED_NAME:
        raise ValueError(f"{name} is {json.dumps(value)[:40]}, not a name of at most {MAX_SERVED_NAME} characters")
    return scrub(value)


def _utf8(data: bytes) -> str:
    """A response body as text: strict UTF-8, or a ValueError saying where it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the body is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse_reply(text: str, latency_s: float, cached: bool, scrub: Callable[[str], str] = lambda t: t) -> Reply:
    """A reply from a response body; ValueError saying what is wrong when it is not a chat completion.

    The one place a reply is validated, fresh or from the cache: strict JSON, a string answer
    (text, no lone surrogate), token counts that are whole numbers from 0 to MAX_REPLY_TOKENS,
    the served ``model`` and ``system_fingerprint`` strings when given.
    ``scrub`` masks the key in the answer as decoded (escapes cannot hide it)."""
    data = strict_json(text, "the body")
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("the body has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise ValueError("choices[0].message.content is not a string")
    usage = data.get("usage") if isinstance(data, dict) else None
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise ValueError("usage is not an object")
    prompt_tokens, completion_tokens = _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens")
    model, fingerprint = _served(data, "model", scrub), _served(data, "system_fingerprint", scrub)
    return Reply(scrub(content).strip(), prompt_tokens, completion_tokens, latency_s, cached, model, fingerprint)


# One request as the workers take it: body, cache key, where (for messages), check, kind, keep.
_Job = tuple[dict[str, Any], str, str, "Check | None", "str | None", "Check | None"]


class CachedChat:
    """Chat completions against one endpoint, cached, retried, at most ``concurrency`` at a time.

    ``tally(model)`` makes the per-kind tally of :attr:`Usage.tallies` (``evals.model.results.RequestTally``:
    the layer above hands it in); without one, requests are counted in :attr:`usage` only."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        cache: Cache | None = None,
        concurrency: int = 4,
        policy: RetryPolicy | None = None,
        tally: Callable[[str], Any] | None = None,
    ) -> None:
        from evals.io.bounded_http import openai_client

        try:
            self.base_url = check_base_url(base_url)
        except EvalsError as exc:
            raise LLMError(str(exc)) from None
        self.namespace = f"chat:{self.base_url}"
        self.concurrency = max(1, concurrency)
        self.policy = policy or RetryPolicy()
        self.usage = Usage()
        self._cache = cache
        self._tally = tally
        self._scrub = scrubber(api_key)
        if api_key and not api_key.isascii():  # an HTTP header carries ASCII only; said as the key's problem, never quoted
            raise LLMError(
                "the API key holds a character that is not ASCII, which no HTTP header can carry; "
                "check OPENAI_API_KEY or --api-key"
            )
        # Local servers often want no key, but the client insists on one. Retries are ours (below).
        self._openai, self._transport = openai_client(
            self.base_url, api_key or "none", deadline=self.policy.timeout, max_body=MAX_REPLY_BYTES
        )
        self._lock = threading.Lock()

    def scrub(self, text: str) -> str:
        """``text`` with the API key masked, also where it is JSON-escaped."""
        return self._scrub(text)

    def abandon(self) -> None:
        """Give up every request in flight (Ctrl-C): each ends within a fraction of a second,
        uncached; this client makes no more."""
        self._transport.abandon()

    def key(self, body: dict[str, Any], repeat: int = 0) -> str:
        """The cache key of ``body``; the ``repeat``-th asking of the same request (--judge-repeats) has
        its own, and the first keeps the key it had before repeats existed, so old caches still serve."""
        if repeat:
            return digest(body["model"], canonical_body(body), f"repeat {repeat}")
        return digest(body["model"], canonical_body(body))

    # -- requests ------------------------------------------------------------------------------

    def complete(
        self,
        body: dict[str, Any],
        where: str,
        check: Check | None = None,
        kind: str | None = None,
        *,
        keep: Check | None = None,
    ) -> Reply:
        """The reply to ``body``: from the cache, else asked. ``keep(content)`` raises ValueError for a reply
        that is handed back but not cached (a library that retries a reply it cannot read asks afresh)."""
        return self.complete_many([body], [where], check, kind=kind, keep=keep)[0]

    def complete_many(
        self,
        bodies: Sequence[dict[str, Any]],
        wheres: Sequence[str],
        check: Check | None = None,
        progress: Progress | None = None,
        label: str = "requests",
        *,
        kind: str | None = None,
        repeats: Sequence[int] | None = None,
        keep: Check | None = None,
    ) -> list[Reply]:
        """Replies for ``bodies`` in order: from the cache where it has them, the rest
        requested concurrently. The first failure cancels what has not started and is
        raised (an :class:`LLMError` naming its ``where``); what completed stays cached.

        ``check(content)`` raises ValueError for a reply that is well-formed JSON but
        unusable (a judge reply that is no verdict): such a reply is an error, never cached.
        ``progress(done, total, label)`` is called as each request that was not cached ends.
        ``kind`` (evals.model.results.REQUEST_KINDS) is the tally the requests count in; ``repeats[i]``
        the index of body i's repeat (0: the first asking), part of its cache key."""
        keys = [self.key(b, repeats[i] if repeats else 0) for i, b in enumerate(bodies)]
        found = self._cache.get_many(self.namespace, keys) if self._cache is not None else {}
        replies: list[Reply | None] = [None] * len(bodies)
        missing: list[int] = []
        for i, key in enumerate(keys):
            reply = self._cached(found.get(key), key, check)
            if reply is None:
                missing.append(i)
                continue
            replies[i] = reply
            self._count(reply, kind, bodies[i]["model"])
        if missing:
            unique: dict[str, int] = {}
            for i in missing:
                unique.setdefault(keys[i], i)
            jobs: list[_Job] = [(bodies[i], keys[i], wheres[i], check, kind, keep) for i in unique.values()]
            fetched = self._fetch_all(jobs, progress, label)
            by_key = dict(zip(unique, fetched, strict=True))
            for i in missing:
                reply = by_key[keys[i]]
                if unique[keys[i]] != i:
                    # The same request twice in one batch is sent once; the repeat counts as cached,
                    # so a run's counts and tokens do not depend on what the cache held before.
                    reply = dataclasses.replace(reply, cached=True)
                    self._count(reply, kind, bodies[i]["model"])
                replies[i] = reply
        return [r for r in replies if r is not None]

    def _cached(self, entry: bytes | None, key: str, check: Check | None) -> Reply | None:
        """The cached reply, validated as a fresh one is; None (asked afresh) when there is none or
        it fails, as one cached by an older version that checked less may."""
        if entry is None:
            return None
        try:
            stored = json.loads(entry)
            body = scrub_json(self._scrub(stored["body"]), self._scrub)
            reply = parse_reply(body, float(stored["latency_s"]), cached=True, scrub=self._scrub)
            if check is not None:
                check(reply.content)
        except (ValueError, KeyError, TypeError, RecursionError):
            # Entries are never updated in place: this one goes, so the fresh reply can take its key.
            discard = getattr(self._cache, "discard", None)  # a Ray worker's snapshot has none; its run asks afresh
            if discard is not None:
                discard(self.namespace, [key])
            return None
        return reply

    def _fetch_all(self, jobs: list[_Job], progress: Progress | None, label: str) -> list[Reply]:
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
            try:
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException:
                # Ctrl-C lands here, in the main thread: give up the requests in flight, or leaving
                # this block would wait for each of them to end (a slow server: minutes; a dripping one: never).
                self.abandon()
                for future in futures:
                    future.cancel()
                raise
            failed = next((f for f in futures if f in done and f.exception() is not None), None)
            if failed is not None:
                for future in futures:
                    future.cancel()
                raise failed.exception()  # type: ignore[misc]
            return [f.result() for f in futures]

    def _fetch(
        self,
        body: dict[str, Any],
        key: str,
        where: str,
        check: Check | None,
        kind: str | None = None,
        keep: Check | None = None,
    ) -> Reply:
        import openai

        from evals.io.bounded_http import MalformedBody

        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                raw = self._openai.chat.completions.with_raw_response.create(**body)
                data = raw.http_response.content
                break
            except openai.APITimeoutError:
                reason, retry_after = f"no complete response within {self.policy.timeout:g} s", None
            except openai.APIConnectionError as exc:
                if self._transport.abandoned.is_set():
                    raise LLMError(f"{where}: abandoned (interrupted)") from None
                if isinstance(exc.__cause__, MalformedBody):  # too large, or an encoding it cannot decode
                    raise self._error(f"{where}: malformed response from {self.base_url}: {exc.__cause__}") from None
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
                attempts = f"{attempt + 1} attempt{'s' if attempt else ''}"
                raise self._error(f"{where}: {body['model']} request to {self.base_url} failed after {attempts}: {reason}")
            with self._lock:
                self.usage.attempts_retried += 1
            # Waits on the abandon flag, so Ctrl-C does not wait out a backoff either.
            if self._transport.abandoned.wait(self.policy.delay(attempt, retry_after)):
                raise LLMError(f"{where}: abandoned (interrupted)")
            attempt += 1
        latency = time.perf_counter() - started
        try:
            # Strictly UTF-8, as files are read: bytes that are not would be stored as U+FFFD, silently.
            text = scrub_json(self._scrub(_utf8(data)), self._scrub)  # before it is parsed, cached or stored
            reply = parse_reply(text, latency, cached=False, scrub=self._scrub)
        except ValueError as exc:
            raise self._error(f"{where}: malformed response from {self.base_url}: {exc}") from None
        self._check(reply, check, where)  # an unusable reply is an error here, and never cached
        if self._transport.abandoned.is_set():
            raise LLMError(f"{where}: abandoned (interrupted)")
        if self._cache is not None and _passes(keep, reply.content):
            # Committed now, as it arrives: a run that dies after this reply (a dead endpoint, Ctrl-C,
            # a crash) finds it here when the same command runs again.
            self._cache.put(self.namespace, key, json.dumps({"body": text, "latency_s": latency}).encode("utf-8"))
        with self._lock:
            self.usage.requests_made += 1
        self._count(reply, kind, body["model"])
        return reply

    def _check(self, reply: Reply, check: Check | None, where: str) -> None:
        if check is None:
            return
        try:
            check(reply.content)
        except ValueError as exc:
            raise self._error(f"{where}: malformed reply from {self.base_url}: {exc}") from None

    def _count(self, reply: Reply, kind: str | None, model: str) -> None:
        with self._lock:
            if reply.cached:
                self.usage.requests_cached += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            if kind is not None and self._tally is not None:
                tally = self.usage.tallies.get(kind)
                if tally is None:
                    tally = self.usage.tallies[kind] = self._tally(model)
                tally.add(reply.prompt_tokens, reply.completion_tokens, reply.cached, reply.model, reply.fingerprint)

    def _error(self, message: str) -> LLMError:
        """An LLMError whose message cannot hold the key, whatever the server sent."""
        return LLMError(self._scrub(message))

    def close(self) -> None:
        self._openai.close()  # and its HTTP client, and the transport's connections


def _passes(keep: Check | None, content: str) -> bool:
    if keep is None:
        return True
    try:
        keep(content)
    except (ValueError, RecursionError):
        return False
    return True
