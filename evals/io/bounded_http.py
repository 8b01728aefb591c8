"""The HTTP under every request to an OpenAI-compatible endpoint (chat and embeddings): bounded in
time, in size, and abandoned on Ctrl-C.

The official ``openai`` client is kept (its errors, its request building); only its HTTP client
is ours, :func:`openai_client`, with a transport that adds what httpx does not:

* **A whole-response deadline.** httpx's timeout bounds each socket read, so a server that drips
  a byte every half second holds a request forever. Here connecting, sending, the status line,
  the headers and the last byte of the body must all happen within ``deadline`` seconds of the
  request's start: every socket operation waits at most what is left. The deadline is per
  attempt; a retry starts a new one.
* **A cap on the decoded body.** The transport reads the whole body itself, decompressing gzip
  or deflate as it goes, and stops at ``max_body`` bytes (the compressed bytes count too): a
  200 KB gzip that expands to 200 MB costs ``max_body``, not 200 MB. A larger body is
  :class:`BodyTooLarge`, a malformed response. It asks for gzip or deflate only, and refuses
  other encodings.
* **Abandonment.** :meth:`BoundedTransport.abandon` (on Ctrl-C) makes every request in flight on
  other threads fail within :data:`POLL_S` seconds, so the run can exit at once instead of
  waiting for slow replies. A connection still being opened is the exception: it ends at its
  deadline.

The request's own thread does all of a request's socket work (httpx's sync client), so the
deadline is kept per thread.
"""

from __future__ import annotations

import threading
import time
import urllib.request
import zlib
from typing import Any
from urllib.parse import urlsplit

try:
    import httpcore2
    import httpx2
except ImportError:  # an openai that speaks httpx's first line (cognee's environment pins one): the same API, first names
    import httpcore as httpcore2  # type: ignore[no-redef]
    import httpx as httpx2  # type: ignore[no-redef]

__all__ = ["POLL_S", "BadEncoding", "BodyTooLarge", "BoundedTransport", "MalformedBody", "openai_client"]

POLL_S = 0.25  # how often a waiting read looks whether its request was abandoned
_CHUNK = 64 * 1024
# The most connections kept: more than --concurrency can ask for, so no request waits for a slot.
_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


class MalformedBody(httpx2.DecodingError):
    """A response body that cannot be used: a malformed response, not worth retrying."""


class BodyTooLarge(MalformedBody):
    """A response body over the cap, decoded or as sent."""


class BadEncoding(MalformedBody):
    """A body in a Content-Encoding this transport does not decode, or that does not decode."""


class _Clock:
    """The deadline of the request this thread is making, and whether requests were abandoned."""

    def __init__(self) -> None:
        self.abandoned = threading.Event()
        self._local = threading.local()

    def start(self, seconds: float) -> None:
        self._local.deadline = time.monotonic() + seconds

    def stop(self) -> None:
        self._local.deadline = None

    def left(self, timeout: float | None, expired: type[Exception]) -> float:
        """Seconds this operation may wait: at most ``timeout`` (httpx's per-operation limit) and
        what is left of the deadline; ``expired`` when nothing is, ReadError when abandoned."""
        if self.abandoned.is_set():
            raise httpcore2.ReadError("the request was abandoned (interrupted)")
        deadline = getattr(self._local, "deadline", None)
        wait = float("inf") if timeout is None else timeout
        if deadline is not None:
            wait = min(wait, deadline - time.monotonic())
        if wait <= 0:
            raise expired("no complete response within the deadline")
        return wait


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream, clock: _Clock) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = self._clock.left(None if end is None else end - time.monotonic(), httpcore2.ReadTimeout)
            try:
                # In short slices, so that an abandoned request notices within POLL_S.
                return self._inner.read(max_bytes, min(wait, POLL_S))
            except httpcore2.ReadTimeout:
                if wait <= POLL_S:
                    raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._clock.left(timeout, httpcore2.ConnectTimeout))
        return _Stream(inner, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self, clock: _Clock) -> None:
        self._inner = httpcore2.SyncBackend()
        self._clock = clock

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options: Any = None
    ) -> _Stream:
        wait = self._clock.left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, wait, local_address, socket_options), self._clock)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> _Stream:
        wait = self._clock.left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, wait, socket_options), self._clock)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Decoder:
    """The body as sent -> the body as meant, never more than ``cap`` bytes of either."""

    def __init__(self, encoding: str, cap: int) -> None:
        self.cap = cap
        self.sent = 0
        self.out = bytearray()
        coding = encoding.strip().lower()
        if coding in ("", "identity"):
            self._zlib = None
        elif coding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding == "deflate":  # zlib-wrapped, as the standard says; raw deflate is tried if that fails
            self._zlib = zlib.decompressobj()
        else:
            raise BadEncoding(f"the body's Content-Encoding is {coding[:40]!r}; only gzip and deflate were asked for")
        self._deflate = coding == "deflate"

    def feed(self, data: bytes) -> None:
        self.sent += len(data)
        if self.sent > self.cap:
            raise BodyTooLarge(f"the body is larger than {_size(self.cap)}")
        if self._zlib is None:
            self.out += data
        else:
            self._inflate(data)
        if len(self.out) > self.cap:
            raise BodyTooLarge(f"the body is larger than {_size(self.cap)} once decompressed")

    def _inflate(self, data: bytes) -> None:
        assert self._zlib is not None
        try:
            # max_length keeps each step within the cap; the rest of the input waits in unconsumed_tail.
            self.out += self._zlib.decompress(data, self.cap + 1 - len(self.out))
            while self._zlib.unconsumed_tail and len(self.out) <= self.cap:
                self.out += self._zlib.decompress(self._zlib.unconsumed_tail, self.cap + 1 - len(self.out))
        except zlib.error as exc:
            if self._deflate and self.sent == len(data):  # the first bytes: raw deflate, as some servers send
                self._zlib, self._deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
                self._inflate(data)
                return
            raise BadEncoding(f"the body does not decompress ({exc})") from None

    def finish(self) -> bytes:
        if self._zlib is not None and len(self.out) <= self.cap:
            try:
                self.out += self._zlib.flush()
            except zlib.error as exc:
                raise BadEncoding(f"the body does not decompress ({exc})") from None
        if len(self.out) > self.cap:
            raise BodyTooLarge(f"the body is larger than {_size(self.cap)} once decompressed")
        return bytes(self.out)


def _size(n: int) -> str:
    return f"{n / 1024**2:g} MiB" if n >= 1024**2 else f"{n:,} bytes"


class BoundedTransport(httpx2.HTTPTransport):
    """httpx's transport with a whole-response ``deadline`` (seconds), a ``max_body`` cap (bytes)
    on the body decoded and as sent, and :meth:`abandon`."""

    def __init__(self, *, deadline: float, max_body: int, proxy: str | None = None) -> None:
        super().__init__(proxy=proxy, limits=_LIMITS)
        self.deadline = deadline
        self.max_body = max_body
        self._clock = _Clock()
        # httpx builds its connection pool without a way to pass a network backend; the pool (and
        # a proxy pool, its subclass) opens every connection through this attribute.
        if not hasattr(self._pool, "_network_backend"):
            raise RuntimeError("httpcore2's connection pool has no _network_backend: the deadline cannot be kept")
        self._pool._network_backend = _Backend(self._clock)

    @property
    def abandoned(self) -> threading.Event:
        return self._clock.abandoned

    def abandon(self) -> None:
        """Make every request in flight, and every later one, fail within POLL_S seconds."""
        self._clock.abandoned.set()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "gzip, deflate"  # what _Decoder decodes within the cap
        self._clock.start(self.deadline)
        try:
            response = super().handle_request(request)
            try:
                decoder = _Decoder(response.headers.get("Content-Encoding", ""), self.max_body)
                for chunk in response.stream:
                    decoder.feed(chunk)
                body = decoder.finish()
            except MalformedBody as exc:
                raise type(exc)(str(exc), request=request) from None
            finally:
                response.close()
        finally:
            self._clock.stop()
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
        return httpx2.Response(response.status_code, headers=headers, content=body, extensions=extensions, request=request)


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``https_proxy``, ``no_proxy``…), as httpx's
    own client would use without a transport of ours."""
    parts = urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def openai_client(
    base_url: str, api_key: str, *, deadline: float, max_body: int, max_retries: int = 0
) -> tuple[Any, BoundedTransport]:
    """An ``openai.OpenAI`` for ``base_url`` over a :class:`BoundedTransport`, and that transport."""
    import openai

    transport = BoundedTransport(deadline=deadline, max_body=max_body, proxy=_env_proxy(base_url))
    http = httpx2.Client(transport=transport, timeout=deadline, follow_redirects=True)
    client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=deadline, http_client=http)
    return client, transport
