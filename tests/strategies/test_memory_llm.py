"""A memory's own LLM requests (mem0 with infer=true, graphiti, cognee) go through the one cached chat call."""

from __future__ import annotations

import time

import pytest
from helpers import FIXTURES
from helpers.llm_server import LLMServer

from evals.io.chat import LLMError
from evals.run.config import RunConfig
from evals.strategies.llm import MemoryLLM


def test_a_memorys_llm_has_the_runs_deadline_and_retries():
    """--request-timeout and --max-retries of the run reach the client a memory asks its LLM through."""
    context = RunConfig(strategy="no_memory", corpus=FIXTURES / "corpus_small", request_timeout=0.5, max_retries=0).plan().context
    with LLMServer(delay_s=3.0) as server:
        llm = MemoryLLM(model="m", base_url=server.base_url, api_key=None, context=context, asks="a memory")
        started = time.perf_counter()
        try:
            with pytest.raises(LLMError, match=r"failed after 1 attempt: no complete response within 0\.5 s"):
                llm.ask({"model": "m", "messages": [{"role": "user", "content": "hello"}]}, "a memory's write")
        finally:
            llm.close()
        assert time.perf_counter() - started < 2.5


def test_every_reply_of_a_memorys_llm_is_a_memory_write(tmp_path):
    """Each reply is tallied in the memory's write usage, sent and cached apart."""
    from evals.io.cache import Cache
    from evals.strategies import BuildContext

    body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    with LLMServer() as server:
        cache = Cache.open(tmp_path / "cache.duckdb")
        llm = MemoryLLM(model="m", base_url=server.base_url, api_key=None, context=BuildContext(cache=cache), asks="a memory")
        try:
            llm.ask(body, "first")
            llm.ask(body, "again")
        finally:
            llm.close()
    assert (llm.usage.sent, llm.usage.cached, llm.requests_made, llm.requests_cached) == (1, 1, 1, 1)
