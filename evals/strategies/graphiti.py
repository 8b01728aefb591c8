"""``graphiti``: Graphiti (PyPI ``graphiti-core``) on embedded Kuzu, a fresh in-memory graph per conversation.

Graphiti turns each episode into a temporal knowledge graph with an LLM:
entities are extracted and resolved, facts (edges between two entities) are
extracted, dated and deduplicated against the facts already held. Each turn is
one episode of ``EpisodeType.message``, its body ``"<role>: <content>"``:
Graphiti's docs describe a message episode as ``speaker: message`` and Zep
(Graphiti's maker) stores each chat message as one episode, so a fact can be
traced to the turns that stated it. Episodes are added in order, each awaited
before the next, as Graphiti's docs ask.

Retrieval is Graphiti's fact search: ``search_`` with its
``EDGE_HYBRID_SEARCH_RRF`` recipe (BM25 over the facts and cosine similarity
of their embeddings, fused by reciprocal rank: what ``Graphiti.search``
runs, without a centre node), limited to k. A record is one fact; it names the
turns of every episode the fact cites (``EntityEdge.episodes``: the episode
that stated it and each later one that restated it), so evidence is credited
by the turns a fact came from.

What running offline through the run's endpoint took:

* the LLM: Graphiti's ``OpenAIGenericClient`` (plain ``/chat/completions``
  with a ``json_schema`` response format; its ``OpenAIClient`` would use the
  Responses API, which most OpenAI-compatible servers lack), handed an
  :class:`CachedCompletions` as its ``client``: the request Graphiti builds is
  sent as it is through the one cached chat call the harness's own requests
  take (:mod:`evals.io.chat`: namespace ``chat:<base url>``, key = digest of the
  model and the canonical JSON body; the run's ``--request-timeout`` and
  ``--max-retries``, the reply cap and checks), so a rerun asks the endpoint nothing. Temperature is 0 (Graphiti's
  default is 1). Each reply's tokens are tallied as memory-write requests
  (:attr:`Graphiti.write_usage`), sent and cached apart;
* embeddings: the harness's all-MiniLM-L6-v2 (``context.embedder("minilm")``),
  lent as Graphiti's ``EmbedderClient``; fact and entity-name texts are computed
  once, then answered from the cache;
* no cross-encoder is ever asked (the recipe reranks by RRF); one that refuses
  stands in, so Graphiti does not build its OpenAI reranker;
* ``GRAPHITI_TELEMETRY_ENABLED=false`` before the import (else PostHog is told
  of every ``Graphiti()``, with an id written to ``~/.cache/graphiti``);
* the episodes' reference times are pinned (:data:`REFERENCE_TIME`, one minute
  apart per turn): the prompts state them, so a run does not depend on its day.

Library faults worked around: ``add_episode(group_id=…)`` on Kuzu fails
(``'KuzuDriver' object has no attribute '_database'``), so episodes go to the
default group and each conversation gets its own ``kuzu.Database(":memory:")``
(:meth:`Graphiti.reset`); ``Graphiti.build_indices_and_constraints`` is a no-op
on Kuzu, so the full-text indexes the search needs are made through the
driver's ``graph_ops`` (else the first fact search fails: ``Table
RelatesToNode_ doesn't have an index with name edge_name_and_fact``);
once a fact is saved again (a later episode restates it, and the fact then
cites both), Kuzu's full-text index finds nothing at all for a query holding a
word with punctuation attached (``called?``), so every question would find no
fact by BM25 from then on: the full-text query is the question's words alone,
and the similarity search is given the question's own vector (``query_vector``);
graphiti-core imports ``httpx`` without declaring it (the extra does).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import warnings
from datetime import UTC, datetime, timedelta
from functools import cache
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.errors import EvalsError
from evals.io.cache import Cache
from evals.io.endpoints import endpoint_key, endpoint_url
from evals.model.results import RequestTally
from evals.strategies._field import MINILM_MODULES, extra_hint, library_version, require
from evals.strategies.base import Message, Record
from evals.strategies.embedders import MINILM_DIMENSIONS, MINILM_MODEL
from evals.strategies.llm import MemoryLLM
from evals.strategies.registry import BuildContext, StrategySpec

__all__ = ["DEFAULT_LLM_MODEL", "REFERENCE_TIME", "CachedCompletions", "Graphiti", "GraphitiOptions", "SPEC"]

HINT = extra_hint("graphiti", "graphiti", "graphiti-core with kuzu")
REQUIRES = ("graphiti_core", "kuzu", "httpx", *MINILM_MODULES)
DEFAULT_LLM_MODEL = "gpt-4o-mini"
LLM_TEMPERATURE = 0.0
# The reference time of turn 0; turn n is n minutes later. Graphiti's prompts state it.
REFERENCE_TIME = datetime(2024, 1, 1, tzinfo=UTC)
SEARCH = "EDGE_HYBRID_SEARCH_RRF"
_WORDS = re.compile(r"\w+")


@cache
def _library() -> SimpleNamespace:
    """graphiti-core's parts, imported once with telemetry off and its notices quiet."""
    require(REQUIRES, HINT)
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from graphiti_core import Graphiti as Graph
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.embedder.client import EmbedderClient
    from graphiti_core.llm_client.config import LLMConfig
    from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
    from graphiti_core.nodes import EpisodeType
    from graphiti_core.search import search_config_recipes

    # Its client logs every failed request (the CLI reports the error once), and Kuzu's driver each query's.
    logging.getLogger("graphiti_core").setLevel(logging.CRITICAL)
    return SimpleNamespace(
        Graph=Graph,
        CrossEncoderClient=CrossEncoderClient,
        KuzuDriver=KuzuDriver,
        EmbedderClient=EmbedderClient,
        LLMConfig=LLMConfig,
        OpenAIGenericClient=OpenAIGenericClient,
        EpisodeType=EpisodeType,
        search=getattr(search_config_recipes, SEARCH),
    )




class CachedCompletions:
    """``chat.completions.create`` for Graphiti's ``OpenAIGenericClient``, through the one cached chat call
    (:class:`evals.strategies.llm.MemoryLLM`).

    The body is the one Graphiti built, sent unchanged. A reply Graphiti could not parse is handed back but
    not cached (Graphiti's own retry then asks again, and is not served it back). Every reply's usage is
    added to :attr:`usage` (kind memory_write), sent or cached."""

    def __init__(self, llm: MemoryLLM) -> None:
        self.llm = llm
        self.base_url = llm.base_url
        self.usage = llm.usage
        # Graphiti reads ``client.chat.completions.create``.
        self.chat = SimpleNamespace(completions=self)

    async def create(self, **body: Any) -> Any:
        # In a thread: the requests Graphiti gathers together (a turn's summaries, say) are in flight at once.
        content = await asyncio.to_thread(self.llm.ask, body, "graphiti's entity and fact extraction", keep=_parses)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content))])

    def close(self) -> None:
        self.llm.close()


def _parses(content: str) -> None:
    """A ValueError when Graphiti's client cannot read ``content`` (JSON, maybe in a code fence, as it strips one)."""
    json.loads(_library().OpenAIGenericClient._strip_code_fences(content))



def _embedder(vectors: Any) -> Any:
    """The harness's embedder as Graphiti's ``EmbedderClient``."""
    library = _library()

    class HarnessEmbedder(library.EmbedderClient):
        async def create(self, input_data: Any) -> list[float]:
            text = input_data[0] if isinstance(input_data, list) else input_data
            if not isinstance(text, str):
                raise EvalsError("graphiti asked to embed tokens, not text: the harness embeds text only")
            return vectors.embed([text])[0]

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            return vectors.embed(list(input_data_list)) if input_data_list else []

    return HarnessEmbedder()


def _no_reranker() -> Any:
    library = _library()

    class NoReranker(library.CrossEncoderClient):
        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            raise EvalsError(f"graphiti asked for a cross-encoder, which its {SEARCH} search never does")

    return NoReranker()


class Graphiti:
    """Graphiti on a fresh in-memory Kuzu graph per conversation: one episode per turn, facts retrieved."""

    name = "graphiti"
    model = MINILM_MODEL

    def __init__(
        self,
        *,
        llm_model: str = DEFAULT_LLM_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        cache: Cache | None = None,
        context: BuildContext | None = None,
    ) -> None:
        library = _library()
        self.base_url = endpoint_url(base_url)
        asks = "graphiti asks OpenAI for entities and facts"
        key = endpoint_key(self.base_url, api_key, asks)
        context = context or BuildContext(cache=cache)
        llm = MemoryLLM(model=llm_model, base_url=self.base_url, api_key=key, context=context, asks=asks)
        self.completions = CachedCompletions(llm)
        config = library.LLMConfig(
            api_key=key, model=llm_model, small_model=llm_model, base_url=self.base_url, temperature=LLM_TEMPERATURE
        )
        self._llm = library.OpenAIGenericClient(config, client=self.completions)
        self._vectors = context.embedder("minilm")
        self._embedder = _embedder(self._vectors)
        self._reranker = _no_reranker()
        self._loop = asyncio.new_event_loop()
        self._graph: Any = None
        self._database: Any = None
        self._connection: Any = None
        self._episodes: dict[str, int] = {}  # episode uuid -> its turn
        self._next_turn = 0
        self.reset()

    @property
    def write_usage(self) -> RequestTally:
        """The memory-write requests Graphiti's LLM made so far (kind memory_write): sent and cached apart."""
        return self.completions.usage

    def add(self, role: str, content: str, *, turn: int | None = None) -> None:
        index = self._next_turn if turn is None else turn
        self._next_turn = index + 1
        added = self._run(
            "add_episode",
            self._graph.add_episode(
                name=f"turn {index}",
                episode_body=f"{role}: {content}",
                source_description="conversation",
                reference_time=REFERENCE_TIME + timedelta(minutes=index),
                source=_library().EpisodeType.message,
            ),
        )
        self._episodes[added.episode.uuid] = index

    def retrieve(self, query: str, k: int = 5) -> list[Record]:
        """Graphiti's facts for ``query``, best first, each naming the turns of the episodes it cites."""
        if not query.strip() or k <= 0 or not self._episodes:
            return []
        words = " ".join(_WORDS.findall(query))  # Kuzu's full-text fault: see the module's docstring
        if not words:
            return []
        config = _library().search.model_copy(update={"limit": k})
        vector = self._vectors.embed([query.replace("\n", " ")])[0]  # the question's own, as Graphiti embeds it
        found = self._run("search", self._graph.search_(words, config=config, query_vector=vector))
        scores = list(found.edge_reranker_scores or [])
        records = []
        for index, edge in enumerate(found.edges[:k]):
            turns = tuple(sorted({self._episodes[e] for e in edge.episodes or () if e in self._episodes}))
            score = float(scores[index]) if index < len(scores) else None
            records.append(Record(edge.fact, turns[0] if len(turns) == 1 else None, score, turns))
        return records

    def context_for(self, query: str, k: int = 5) -> list[Message]:
        records = self.retrieve(query, k)
        if not records:
            return []
        lines = "\n".join(f"- {r.text}" for r in records)
        return [{"role": "system", "content": f"Facts relevant to the question (graphiti, most relevant first):\n{lines}"}]

    def reset(self) -> None:
        """A new in-memory Kuzu database and Graphiti on it (a group_id per conversation fails on Kuzu)."""
        library = _library()
        self._drop()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "The Kuzu backend is deprecated"
            driver = library.KuzuDriver(db=":memory:")
        self._database, self._connection = driver.db, driver.client
        self._graph = library.Graph(
            graph_driver=driver, llm_client=self._llm, embedder=self._embedder, cross_encoder=self._reranker
        )
        # Graphiti.build_indices_and_constraints does nothing on Kuzu: the full-text indexes come from here.
        self._run("build_indices", driver.graph_ops.build_indices_and_constraints(driver))
        self._episodes = {}
        self._next_turn = 0

    def close(self) -> None:
        self._drop()
        self.completions.close()
        if not self._loop.is_closed():
            self._loop.close()

    def _drop(self) -> None:
        """Close the conversation's Kuzu connection (its thread pool) and database."""
        if self._database is not None:
            self._graph = None
            self._connection.close()
            self._database.close()
            self._database = self._connection = None

    def _run(self, what: str, coroutine: Any) -> Any:
        try:
            return self._loop.run_until_complete(coroutine)
        except EvalsError:
            raise
        except Exception as exc:  # noqa: BLE001 - Graphiti and Kuzu raise their own types
            raise EvalsError(f"graphiti {what} failed: {type(exc).__name__}: {exc}") from exc


class GraphitiOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    llm_model: str = Field(default=DEFAULT_LLM_MODEL, description="the model that extracts entities and facts")
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for Graphiti's LLM (default: $OPENAI_BASE_URL, else OpenAI's)"
    )


def _describe(options: GraphitiOptions, context: BuildContext) -> dict[str, Any]:
    # The endpoint and model decide what is stored; the key does not, and is never recorded.
    return {
        "name": "graphiti",
        "graphiti-core": library_version("graphiti-core", HINT),
        "kuzu": library_version("kuzu", HINT),
        "graph": "kuzu :memory:, one per conversation",
        "episode": "turn (EpisodeType.message, 'role: content')",
        "search": SEARCH,
        "embedder": "minilm",
        "model": MINILM_MODEL,
        "dimensions": MINILM_DIMENSIONS,
        "llm_client": "OpenAIGenericClient",
        "llm_model": options.llm_model,
        "llm_base_url": endpoint_url(options.base_url),
        "llm_temperature": LLM_TEMPERATURE,
        "reference_time": REFERENCE_TIME.isoformat(),
    }


SPEC = StrategySpec(
    name="graphiti",
    build=lambda options, context: Graphiti(
        llm_model=options.llm_model, base_url=options.base_url, cache=context.cache, context=context
    ),
    options=GraphitiOptions,
    describe=_describe,
    summary="Graphiti (graphiti-core) on in-memory Kuzu: its LLM turns each turn into facts; hybrid fact search on MiniLM.",
    requires=REQUIRES,
    extra="graphiti",
    needs_endpoint=True,  # its LLM writes every fact: not among the "available" strategies a suite runs offline
    derived_records=True,  # a record is a fact Graphiti's LLM wrote, naming the turns it came from
    writes_with_llm=True,
)
