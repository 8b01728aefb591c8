"""A small OpenAI-compatible chat server for the tests: real HTTP on 127.0.0.1, deterministic.

``POST /v1/chat/completions`` answers from the prompt itself:

* a judge request (its one message holds the judge prompt) gets
  ``{"correct": …, "reason": …}``, correct iff an expected keyword (or, with
  none, the expected fact) occurs in the graded answer, case-insensitively;
* a summary request (the summarise instruction first) gets the text of its
  user message, lines joined with " / ";
* a mem0 fact-extraction request (its system prompt says "You are a Memory
  Extractor") gets ``{"memory": [{"text": …}]}``: one fact per new message,
  ``"User said: <content>"`` or ``"Assistant said: <content>"``, so the stored
  memories are rewritten turns, not the turns themselves;
* a protocol judge request built from the stand-in templates of tests/helpers/protocol_sources.py (its one
  message starts ``[JUDGE-…]`` or ``[MEM0-JUDGE]`` and holds ``Gold: …`` and ``Response: …`` lines)
  is correct iff the gold answer occurs in the response, case-insensitively; a ``[JUDGE-`` one gets
  ``yes``/``no`` as LongMemEval's judge answers, a ``[MEM0-JUDGE]`` one ``{"label": "CORRECT"|"WRONG"}``;
* a graded judge request built from the stand-ins (``[BEAM-JUDGE]``: one rubric item, ``Criterion: …`` and
  ``Response: …`` lines; ``[PLUS-JUDGE-…]`` after LoCoMo-Plus's prefix) gets ``{"score": 1.0}`` when the criterion
  occurs in the response (else 0.0), or ``{"label": "correct", …}``;
* ``scripted`` (text -> reply) overrides all of these: the first key the request's first message holds gives the
  reply verbatim (a judge's when the message is a graded judge request, else an answer's);
* any other request is an answer: the context line (a message between the
  first and the last) sharing the most words with the question, or
  "I don't know." when there is none; a request of one message (a published protocol's prompt)
  is answered with its line sharing the most words with its last line holding a "?".

``verdict_shape`` rewrites every harness verdict (and mem0's) into another shape a judge may use:
``"yes"`` (a bare yes/no), ``"label"`` (``{"label": "CORRECT"}``), ``"string"`` (``{"correct": "true"}``),
``"prose"`` (a sentence, then the JSON) or ``"garbage"`` (no verdict at all).

``POST /v1/embeddings`` gives each input a deterministic vector of ``embedding_dimensions``
numbers drawn from a digest of the text and the server's ``embedding_salt`` (base64 float32
or a list of numbers, as the request's ``encoding_format`` asks).

Usage counts words. ``max_in_flight`` is the most requests it was answering at once. The server
counts requests by kind and remembers the ``Authorization`` headers it saw; :meth:`LLMServer.fail_next` makes the next
requests fail: ``"401"`` (quoting the key), ``"429"``, ``"500"``, ``"slow"`` (answers after ``slow_s``
seconds, later than the client waits), ``"malformed"`` (a 200 whose body is
not JSON), ``"no_verdict"`` (a judge reply that is not a verdict), ``"drip"`` (the whole
response, status line first, one byte every ``drip_s`` seconds) or ``"drip_body"`` (the
headers at once, then the body one byte every ``drip_s`` seconds); ``"ok"`` lets one request
through; :meth:`LLMServer.clear_faults` forgets those not yet used.
``echo_key = True`` makes every reply quote the API key it was sent (an answer, a summary,
a verdict's reason; with ``"no_verdict"``, the judge's non-verdict too), as a careless or
hostile server might. ``rewrite(kind, body, key)``, when set, replaces the JSON text of every
normal reply (kind ``"answer"``, ``"judge"``, ``"summary"``, ``"extraction"`` or ``"embedding"``)
by what it returns: usage, escapes, sizes as a hostile server would send them. ``gzip = True``
sends every normal reply gzip-compressed (``Content-Encoding: gzip``).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import cognee_replies, graphiti_replies

_WORD = re.compile(r"[a-z0-9]+")
_KEYWORDS = re.compile(r"^Expected keywords \(JSON\): (.*)$", re.MULTILINE)
_FACT = re.compile(r"^Expected fact: (.*)$", re.MULTILINE)
_ANSWER = re.compile(r"^Answer:\n<<<\n(.*)\n>>>$", re.MULTILINE | re.DOTALL)
# mem0's extraction prompt: its "## New Messages" section holds "role: content" lines.
_NEW_MESSAGES = re.compile(r"^## New Messages\n(.*?)\n\n\n?## ", re.MULTILINE | re.DOTALL)
_MESSAGE_LINE = re.compile(r"^(user|assistant): (.*)$")
_GOLD = re.compile(r"^Gold: (.*?)$", re.MULTILINE)
_RESPONSE = re.compile(r"^Response: (.*?)(?:\n\S+:|\Z)", re.MULTILINE | re.DOTALL)


_CRITERION = re.compile(r"^Criterion: (.*?)$", re.MULTILINE)
_GRADED_RESPONSE = re.compile(r"^Response: (.*?)\nEnd of response\.", re.MULTILINE | re.DOTALL)
GRADED_JUDGES = ("[BEAM-JUDGE]", "[PLUS-JUDGE")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _count(text: str) -> int:
    return len(text.split())


def judge_reply(prompt: str) -> dict[str, Any]:
    keywords = json.loads(_KEYWORDS.search(prompt).group(1))
    fact = _FACT.search(prompt).group(1)
    answer = _ANSWER.search(prompt).group(1).lower()
    needles = keywords or [fact]
    found = [n for n in needles if n.lower() in answer]
    reason = f"the answer mentions {found[0]!r}" if found else "the answer does not state the expected fact"
    return {"correct": bool(found), "reason": reason}


def answer_reply(messages: list[dict[str, str]]) -> str:
    question = _words(messages[-1]["content"])
    best, best_score = None, 0
    for message in messages[1:-1]:
        for line in message["content"].splitlines():
            score = len(_words(line) & question)
            if score > best_score:
                best, best_score = line.strip(), score
    return best if best is not None else "I don't know."


def graded_reply(prompt: str) -> str:
    """A stand-in graded judge's reply: BEAM's score of one criterion (1.0 when the response holds it), LoCoMo-Plus's label."""
    if "[BEAM-JUDGE]" in prompt:
        criterion, response = _CRITERION.search(prompt), _GRADED_RESPONSE.search(prompt)
        held = bool(criterion and response and criterion.group(1).strip().lower() in response.group(1).lower())
        return json.dumps({"score": 1.0 if held else 0.0, "reason": "held" if held else "missing"})
    return json.dumps({"label": "correct", "reason": "related"})


def protocol_verdict(prompt: str) -> bool:
    """A stand-in protocol judge's verdict: the gold answer occurs in the response."""
    gold, response = _GOLD.search(prompt), _RESPONSE.search(prompt)
    return bool(gold and response and gold.group(1).strip().lower() in response.group(1).lower())


def single_message_answer(text: str) -> str:
    """A one-message prompt's answer: the line sharing most words with its last line holding a "?"."""
    lines = text.splitlines()
    asked = [i for i, line in enumerate(lines) if "?" in line]
    if not asked:
        return "I don't know."
    question = _words(lines[asked[-1]])
    best, best_score = None, 0
    for i, line in enumerate(lines):
        score = len(_words(line) & question)
        if i != asked[-1] and score > best_score:
            best, best_score = line.strip()[:300], score
    return best if best is not None else "I don't know."


def shaped(verdict: dict[str, Any], shape: str) -> str:
    """A harness verdict in another shape a judge may answer in."""
    correct = verdict["correct"]
    if shape == "yes":
        return "yes" if correct else "no"
    if shape == "label":
        return json.dumps({"label": "CORRECT" if correct else "WRONG"})
    if shape == "string":
        return json.dumps({"correct": "true" if correct else "false", "reason": verdict["reason"]})
    if shape == "prose":
        return f"Let me compare the two.\n{json.dumps(verdict)}"
    if shape == "garbage":
        return "Hard to say."
    return json.dumps(verdict)


def embedding_vector(text: str, dimensions: int, salt: str = "") -> list[float]:
    """A deterministic unit-free vector for ``text``: float32 values from a digest of it."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        block = hashlib.sha256(f"{salt}\0{counter}\0{text}".encode()).digest()
        values.extend((b - 127.5) / 127.5 for b in block)
        counter += 1
    return [struct.unpack("<f", struct.pack("<f", v))[0] for v in values[:dimensions]]


def extraction_reply(prompt: str) -> dict[str, Any]:
    """mem0's extraction: one rewritten fact per new message."""
    found = _NEW_MESSAGES.search(prompt)
    facts: list[str] = []
    for line in (found.group(1) if found else "").splitlines():
        message = _MESSAGE_LINE.match(line)
        if message is not None:
            facts.append(f"{message.group(1).capitalize()} said: {message.group(2)}")
        elif facts and line.strip():  # a message that runs over several lines
            facts[-1] += f" {line.strip()}"
    return {"memory": [{"id": str(i), "text": fact} for i, fact in enumerate(facts)]}


def with_content(text: str, content: str) -> str:
    """A chat completion body (as JSON text) with its answer replaced by ``content``."""
    payload = json.loads(text)
    payload["choices"][0]["message"]["content"] = content
    return json.dumps(payload)


def replying(kind: str, content: str) -> Callable[[str, str, str], str]:
    """A ``rewrite`` for :class:`LLMServer` that makes every reply of ``kind`` ("answer", "judge"...) say ``content``."""
    return lambda served, text, key: with_content(text, content) if served == kind else text


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up mid-reply (it gave up on a body too large, say): its right
        super().handle_error(request, client_address)


class LLMServer:
    """The server, started in a daemon thread; use as a context manager."""

    def __init__(self, slow_s: float = 2.0, delay_s: float = 0.0, drip_s: float = 0.5) -> None:
        self.requests: Counter[str] = Counter()
        self.drip_s = drip_s
        self.rewrite: Callable[[str, str, str], str] | None = None
        self.gzip = False
        self.embedding_dimensions = 1536
        self.embedding_salt = ""
        self.delay_s = delay_s  # every normal reply waits this long (to see requests overlap)
        self.in_flight = 0
        self.max_in_flight = 0
        self.authorizations: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.slow_s = slow_s
        self.echo_key = False
        self.verdict_shape = "json"
        self.scripted: dict[str, str] = {}
        self._faults: list[str] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def total(self) -> int:
        """Requests answered normally (faults not counted)."""
        return sum(v for k, v in self.requests.items() if not k.startswith("fault:"))

    def fail_next(self, *faults: str) -> None:
        with self._lock:
            self._faults.extend(faults)

    def clear_faults(self) -> None:
        """Forget the faults not yet used: the endpoint is healthy again (a run resumed after a dead one)."""
        with self._lock:
            self._faults.clear()

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.authorizations.clear()
            self.bodies.clear()

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _next_fault(self) -> str | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def embeddings(self, body: dict[str, Any], key: str = "") -> tuple[int, bytes]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for index, text in enumerate(texts):
            vector = embedding_vector(text, self.embedding_dimensions, self.embedding_salt)
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        with self._lock:
            self.requests["embedding"] += 1
            self.bodies.append(body)
        words = sum(_count(t) for t in texts)
        payload = {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": words, "total_tokens": words},
        }
        return 200, self._rewritten("embedding", json.dumps(payload), key)

    def _rewritten(self, kind: str, text: str, key: str) -> bytes:
        return (self.rewrite(kind, text, key) if self.rewrite is not None else text).encode("utf-8", "surrogatepass")

    def reply(self, body: dict[str, Any], fault: str | None, key: str = "") -> tuple[int, bytes]:
        messages = body["messages"]
        first = messages[0]["content"]
        echo = f" (sent with key {key})" if self.echo_key else ""
        graded = any(marker in first for marker in GRADED_JUDGES)
        scripted = next((reply for text, reply in self.scripted.items() if text in first), None)
        if scripted is not None:
            kind, content = ("judge" if graded else "answer"), scripted
        elif graded:
            kind, content = "judge", graded_reply(first)
        elif first.startswith("You are grading"):
            kind, verdict = "judge", judge_reply(first)
            verdict["reason"] += echo
            content = f"I think it is fine.{echo}" if fault == "no_verdict" else shaped(verdict, self.verdict_shape)
        elif first.startswith("[JUDGE-"):
            kind, content = "judge", "Yes." if protocol_verdict(first) else "No."
        elif first.startswith("[MEM0-JUDGE]"):
            correct = protocol_verdict(first)
            kind = "judge"
            content = shaped({"correct": correct, "reason": "compared"}, self.verdict_shape)
            if self.verdict_shape in ("json", "prose"):
                label = json.dumps({"label": "CORRECT" if correct else "WRONG"})
                content = label if self.verdict_shape == "json" else f"They match.\n{label}"
        elif first.startswith("You keep the running summary"):
            kind, content = "summary", " / ".join(messages[-1]["content"].splitlines()) + echo
        elif "You are a Memory Extractor" in first:
            kind, content = "extraction", json.dumps(extraction_reply(messages[-1]["content"]))
        elif graphiti_replies.handles(body):  # graphiti-core's requests, by the schema each names
            kind, content = "graphiti", graphiti_replies.reply(body)
        elif cognee_replies.kind(first) is not None:  # cognee's cognify: graph and summary per chunk
            kind, content = f"cognee_{cognee_replies.kind(first)}", cognee_replies.reply(first, messages)
        elif len(messages) == 1:
            kind, content = "answer", single_message_answer(first) + echo
        else:
            kind, content = "answer", answer_reply(messages) + echo
        with self._lock:
            self.requests[kind] += 1
            self.bodies.append(body)
        prompt_tokens = sum(_count(m["content"]) for m in messages)
        payload = {
            "id": f"chatcmpl-{sum(self.requests.values())}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": _count(content),
                "total_tokens": prompt_tokens + _count(content),
            },
        }
        return 200, self._rewritten(kind, json.dumps(payload), key)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _drip(self, data: bytes, whole: bool) -> None:
                """``data`` as a 200 response, a byte every drip_s seconds: from the status line
                (``whole``) or after the headers; until it is all sent or the client hangs up."""
                head = (
                    f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                ).encode()
                try:
                    if not whole:
                        self.wfile.write(head)
                    for byte in (head + data if whole else data):
                        self.wfile.write(bytes([byte]))
                        time.sleep(server.drip_s)
                except OSError:
                    pass
                self.close_connection = True

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/embeddings":
                    self._answer_embeddings(data)
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                with server._lock:
                    server.authorizations.append(self.headers.get("Authorization", ""))
                fault = server._next_fault()
                if fault == "ok":
                    fault = None
                if fault is not None and fault != "no_verdict":
                    with server._lock:
                        server.requests[f"fault:{fault}"] += 1
                if fault == "429":
                    self._send(429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}', {"Retry-After": "0"})
                    return
                if fault == "401":  # like OpenAI's, the message quotes the key it was given
                    given = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    self._send(401, json.dumps({"error": {"message": f"Incorrect API key provided: {given}"}}).encode())
                    return
                if fault == "500":
                    self._send(500, b'{"error": {"message": "boom", "type": "server_error"}}')
                    return
                if fault == "slow":
                    time.sleep(server.slow_s)  # the client has given up by now
                    try:
                        self._send(504, b'{"error": {"message": "too late"}}')
                    except OSError:
                        pass
                    return
                if fault == "malformed":
                    self._send(200, b'{"choices": [{"message": ')
                    return
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.delay_s)
                    key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    status, payload = server.reply(json.loads(data), fault, key)
                    if fault in ("drip", "drip_body"):
                        self._drip(payload, whole=fault == "drip")
                        return
                finally:
                    with server._lock:
                        server.in_flight -= 1
                self._reply(status, payload)

            def _reply(self, status: int, payload: bytes) -> None:
                if server.gzip:
                    self._send(status, gzip.compress(payload, 9), {"Content-Encoding": "gzip"})
                else:
                    self._send(status, payload)

            def _answer_embeddings(self, data: bytes) -> None:
                with server._lock:
                    server.authorizations.append(self.headers.get("Authorization", ""))
                fault = server._next_fault()
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if fault == "401":
                    with server._lock:
                        server.requests["fault:401"] += 1
                    self._send(401, json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode())
                    return
                self._reply(*server.embeddings(json.loads(data), key))

        return Handler
