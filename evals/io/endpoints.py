"""What every request to an OpenAI-compatible endpoint needs to be safe with the API key: the base
URL check, the key scrubber and the plain-http warning. Shared by the chat client (``evals.run.llm``)
and the OpenAI embedder (``evals.strategies.embedders``); the HTTP itself is
:mod:`evals.io.bounded_http`.

* :func:`check_base_url` refuses a base URL that is malformed, not http(s), or that carries
  credentials (``user:pass@``, a query such as ``?api-key=…``, a fragment). A base URL is
  recorded with every run (the store, the cache's namespace, ``evals runs``, the run page), so a
  secret in it would be published; refusing it leaves nothing to mask. The key goes in
  ``$OPENAI_API_KEY`` (or ``--api-key``), which is never recorded.
* :func:`scrubber` masks the key (``***``) in any text, in every encoding a server could echo it
  in: as written; with any character JSON-escaped (``\\u0073``, ``\\/``, at any depth of escaping),
  percent-encoded (upper or lower case hex, also twice), or HTML-escaped (named, decimal or hex
  references, also twice); base64 or base64url-encoded at any alignment in a longer stream; and
  the whole key's bytes as hex digits, in either case. Masking stops there: hex of part of the key,
  and any other encoding (reversed, rot13, split across fields, hashed) is not recognised; no scrubber
  knows every encoding, and these are the echoes servers are seen to make.
  :func:`scrub_json` also masks it in a JSON body's decoded strings (an escape of an escape: a
  percent sign written ``\\u0025``), so every field of a response, its ``id`` included, is clean.
  Callers scrub decoded text too (an answer, a judge's reason), so no escaping survives into what
  is stored, printed or published.
* :func:`exposed_key_warning` says when the key would travel unencrypted.
"""

from __future__ import annotations

import base64
import html.entities
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from evals.errors import EvalsError

__all__ = [
    "DEFAULT_BASE_URL",
    "MAX_SERVED_NAME",
    "RetryPolicy",
    "MIN_SECRET",
    "canonical_body",
    "check_base_url",
    "endpoint_key",
    "endpoint_url",
    "exposed_key_warning",
    "scrub_json",
    "scrubber",
]

# The longest served model name or system fingerprint a reply may give (a longer one is malformed): the store and
# exports keep it, and model/results.py checks it without loading the chat client.
MAX_SERVED_NAME = 256


# How hard every request to an endpoint tries (the harness's and a memory's own): here, beside the endpoint, so a
# run's configuration can carry it without loading the chat client.
@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``timeout`` seconds for each attempt's whole response, ``retries`` more attempts
    after the first, waiting ``backoff`` seconds, doubling each time (jittered, at most 30 s), or what
    Retry-After asks."""

    timeout: float = 60.0
    retries: int = 5
    backoff: float = 1.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), 60.0)
        return min(self.backoff * 2**attempt, 30.0) * random.uniform(0.5, 1.0)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MIN_SECRET = 8  # shorter "keys" ("none", "x") are placeholders for servers that want none: not masked
MAX_URL_CHARS = 2048
_LOCAL_HOSTS = {"localhost", "::1"}
_KEY_ADVICE = "the base URL is recorded with every run, so give the key in $OPENAI_API_KEY (or --api-key), which is not"
# JSON's short escapes a key's characters may take: \/ and \".
_SHORT_ESCAPES = frozenset('/"\\')  # JSON's \/, \" and \\


def check_base_url(url: str, where: str = "--base-url") -> str:
    """``url`` without trailing slashes, or an EvalsError naming ``where`` and saying what is wrong.
    A URL that may hold a secret is refused without being echoed."""
    if not isinstance(url, str) or not url.strip():
        raise EvalsError(f"{where}: the endpoint's base URL is empty")
    # Credentials first, before any message quotes the URL.
    authority = url.split("://", 1)[-1].split("/", 1)[0]
    if "@" in authority:
        raise EvalsError(f"{where}: the URL holds credentials (user:password@); {_KEY_ADVICE}")
    if "?" in url or "#" in url:
        raise EvalsError(f"{where}: the URL has a query or fragment (?… or #…), which may hold a key; {_KEY_ADVICE}")
    if len(url) > MAX_URL_CHARS:
        raise EvalsError(f"{where}: the endpoint's base URL is longer than {MAX_URL_CHARS} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise EvalsError(f"{where}: the endpoint's base URL holds spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - parsed and range-checked only when read
    except ValueError as exc:
        raise EvalsError(f"{where}: {url!r} is not a URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise EvalsError(f"{where}: {url!r} is not an http:// or https:// URL")
    if not host:
        raise EvalsError(f"{where}: {url!r} names no host")
    return url.rstrip("/")


def _is_local(host: str) -> bool:
    return host in _LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def exposed_key_warning(base_url: str, api_key: str | None) -> str | None:
    """A warning when ``api_key`` would be sent unencrypted (plain http) to a host other than this
    machine; None when there is no key, the URL is https, or the host is local."""
    if not api_key:
        return None
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" or (parts.scheme == "http" and _is_local(host)):
        return None
    return f"the API key will be sent unencrypted to {base_url} (plain http); use https, or a server on this machine"


def scrubber(secret: str | None) -> Callable[[str], str]:
    """A function that masks ``secret`` in a text as ``***``: as written, and with any of its
    characters JSON-escaped (``\\u0073``, ``\\/``) however many times (a judge's reply is JSON inside
    JSON, so its reason is escaped twice), percent-encoded or HTML-escaped; its base64 and
    base64url forms, wherever the key starts in the encoded stream; and the whole key as hex digits."""
    if not secret or len(secret) < MIN_SECRET:
        return lambda text: text
    words = [secret, *_base64_cores(secret.encode("utf-8"))]
    # The whole key's UTF-8 bytes as hex digits (a common echo: a token "id" or a debug dump), in either case.
    # Hex of part of the key, or of the key inside other bytes at an odd nibble, is where masking stops.
    hexed = secret.encode("utf-8").hex()
    # Every form starts with its first character as written or with \\, % or &: a cheap look first.
    first = re.escape("".join(sorted({w[0] for w in words} | set("\\%&") | {hexed[0], hexed[0].upper()})))
    forms = ["".join(_any_form(c) for c in w) for w in words] + [_hex(hexed)]
    pattern = re.compile(f"(?=[{first}])(?:" + "|".join(forms) + ")")

    def scrub(text: str) -> str:
        return pattern.sub("***", text)

    return scrub


def scrub_json(text: str, scrub: Callable[[str], str]) -> str:
    """``text`` (a JSON body, already scrubbed as text) with ``scrub`` applied to every decoded string,
    keys included, written back as JSON when that changed anything; ``text`` itself otherwise (and
    when it is not JSON, or nested too deeply to decode: whoever parses it next says so)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    changed = False

    def walk(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, str):
            clean = scrub(value)
            changed = changed or clean != value
            return clean
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        return value

    try:
        clean = walk(data)
        return json.dumps(clean, ensure_ascii=False) if changed else text
    except RecursionError:  # decoded, but too deep to walk: the parser refuses it next
        return text


def _base64_cores(secret: bytes) -> list[str]:
    """The base64 and base64url characters that encode only ``secret``'s bits, for each of the three
    places it can start in an encoded stream (the characters it shares with its neighbours are not
    its own, and carry under six of its bits)."""
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(secret)) // 6]
        cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return cores


@lru_cache(maxsize=512)
def _any_form(char: str) -> str:
    """A pattern for ``char`` as written, JSON-escaped (``\\u`` and four hex digits in either case, or
    ``\\/``, ``\\"`` and ``\\\\``, behind any number of backslashes), percent-encoded (its UTF-8
    bytes as ``%XX`` in either case, ``%`` itself encoded again any number of times) or HTML-escaped
    (a named reference, or decimal or hex, ``&`` itself escaped again any number of times)."""
    forms = [re.escape(char)]
    if ord(char) <= 0xFFFF:
        forms.append(r"\\+u" + _hex(f"{ord(char):04x}"))
    if char in _SHORT_ESCAPES:
        forms.append(r"\\+" + re.escape(char))
    forms.append("".join(r"%(?:25)*" + _hex(f"{b:02x}") for b in char.encode("utf-8")))
    amp = r"&(?:amp;)*"
    names = sorted(name for name, value in html.entities.html5.items() if value == char and name.endswith(";"))
    forms += [amp + re.escape(name) for name in names]
    forms.append(amp + rf"#0*{ord(char)};?")
    forms.append(amp + r"#[xX]0*" + _hex(f"{ord(char):x}") + ";?")
    return "(?:" + "|".join(forms) + ")"


def _hex(digits: str) -> str:
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)


# What every client of a chat endpoint here shares: the harness's own (evals.run.llm) and the memories that write
# with an LLM through the run's cache (mem0 infer=true, graphiti, cognee), so a request is keyed, and its reply
# read, one way.


def endpoint_url(base_url: str | None) -> str:
    """The endpoint a memory's LLM is asked at: its ``base_url`` option, else ``$OPENAI_BASE_URL``, else OpenAI's."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def endpoint_key(url: str, api_key: str | None, asks: str) -> str:
    """The key a memory's LLM client sends to ``url``: ``api_key``, else ``$OPENAI_API_KEY``, else "none" (local
    servers want none, but OpenAI's client insists on one). OpenAI's own endpoint without a key is an error
    saying what the memory ``asks`` for ("mem0 with infer=true asks OpenAI for facts") and what to set."""
    key = api_key or os.environ.get("OPENAI_API_KEY") or ""
    if not key and url == DEFAULT_BASE_URL:
        raise EvalsError(
            f"{asks} and needs OPENAI_API_KEY; or point --option base_url=… (or OPENAI_BASE_URL) at another "
            "OpenAI-compatible server"
        )
    return key or "none"


def canonical_body(body: dict[str, Any]) -> str:
    """A request body as its cache key reads it: sorted keys, no spaces, text as it is."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
