"""One embedding per (model, text), on every path: the harness lends its embedder to every strategy
that embeds with a model it ships, and keeps the vectors in the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, PLUGINS

from evals.io.cache import Cache
from evals.run.config import RunConfig
from evals.run.evaluate import evaluate
from evals.strategies import BuildContext
from evals.strategies.embedders import minilm_installed


def needs_minilm(test):
    """A test that loads the real MiniLM model: slow (seconds), and skipped without the minilm extra."""
    return pytest.mark.slow(pytest.mark.skipif(not minilm_installed(), reason="needs the minilm extra")(test))


CORPUS = FIXTURES / "corpus_small"


def _distinct_texts() -> int:
    from evals.model.corpus import load_corpus
    from evals.run.executors import corpus_texts

    return len(set(corpus_texts(load_corpus(CORPUS).conversations)))


def test_context_lends_one_embedder_per_name() -> None:
    """Two requests for the same embedder in one run get the same object."""
    context = BuildContext()
    assert context.embedder("hash") is context.embedder("hash")


@needs_minilm
def test_legacy_cli_second_run_computes_no_embedding(tmp_path: Path, user_cache: Path) -> None:
    """`python -m evals --embedder minilm` run twice: the second finds every vector in the user's cache."""
    lines = []
    for name in ("a", "b"):
        done = subprocess.run(
            [sys.executable, "-m", "evals", "--runner", "mneme", "--embedder", "minilm", "--corpus", str(CORPUS),
             "--output", str(tmp_path / f"{name}.json")],
            capture_output=True, text=True, check=True,
        )
        lines.append([line for line in done.stderr.splitlines() if line.startswith("cache:")])
    assert lines[0] == [f"cache: {_distinct_texts()} computed, 0 from cache"]
    assert lines[1] == [f"cache: 0 computed, {_distinct_texts()} from cache"]
    assert user_cache.exists()


@needs_minilm
def test_legacy_cli_no_cache_keeps_nothing(tmp_path: Path, user_cache: Path) -> None:
    """`--no-cache` computes afresh and creates no cache file."""
    subprocess.run(
        [sys.executable, "-m", "evals", "--runner", "mneme", "--embedder", "minilm", "--corpus", str(CORPUS),
         "--output", str(tmp_path / "a.json"), "--no-cache"],
        capture_output=True, text=True, check=True,
    )
    assert not user_cache.exists()


@needs_minilm
def test_two_memories_share_each_embedding(tmp_path: Path) -> None:
    """mneme-MiniLM and mem0 on one corpus, one cache: the second memory computes no embedding."""
    pytest.importorskip("mem0")
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        evaluate(RunConfig(strategy="mneme", options={"embedder": "minilm"}, corpus=CORPUS), cache=cache)
        first = cache.counts("embedding")
        evaluate(RunConfig(strategy="mem0", corpus=CORPUS), cache=cache)
        both = cache.counts("embedding")
    assert first == (0, _distinct_texts())
    assert both[1] == first[1]  # nothing more computed


@needs_minilm
def test_suite_of_three_memories_computes_each_text_once(tmp_path: Path) -> None:
    """mneme-MiniLM, mem0 and a plug-in that embeds through the harness, in one suite: each distinct text is
    computed once, by the first run; the other two find every vector in the cache."""
    pytest.importorskip("mem0")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'description = "three memories, one model"\n[[matrix]]\n'
        f'corpora = ["{CORPUS}"]\nstrategies = ["mneme", "mem0", "cosine_strategy:make"]\n'
        '[matrix.options.mneme]\nembedder = "minilm"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    store = tmp_path / "results.duckdb"
    evals = [sys.executable, "-m", "evals"]
    subprocess.run([*evals, "run-suite", "--suite", str(suite), "--store", str(store)], env=env, capture_output=True, check=True)
    runs = subprocess.run(
        [*evals, "runs", "--store", str(store), "--format", "json"], env=env, capture_output=True, text=True, check=True
    )
    computed = {run["strategy"]: run["cache_misses"] for run in json.loads(runs.stdout)}
    assert computed == {"mneme": _distinct_texts(), "mem0": 0, "cosine_strategy:make": 0}


@pytest.mark.parametrize(
    "spoiled",
    [b"\x00\x00\x80?" * 3, b"\x00\x00\xc0\x7f" * 16, b"\x00\x00\x80\x7f" + b"\x00" * 60],
    ids=["cut to 3 floats", "all NaN", "infinite"],
)
def test_a_bad_cached_vector_is_never_used(spoiled: bytes, caplog, tmp_path) -> None:
    """A cached vector of the wrong length or with a number that is not finite is computed again, replaced in
    the cache and said in one warning line; the vectors are those of a run without a cache."""
    import mneme

    from evals.io.cache import digest
    from evals.strategies.embedders import CachingEmbedder

    class Hash:
        dimensions = 16

        def __init__(self) -> None:
            self._inner = mneme.HashEmbedder(dimensions=16)

        def embed(self, texts):
            return self._inner.embed(list(texts))

    texts = ["the cat sat", "on the mat"]
    cache = Cache.open(tmp_path / "cache.duckdb")
    cache.put("embedding:hash16", digest(texts[0]), spoiled)
    vectors = CachingEmbedder(Hash(), "hash16", cache).embed(texts)
    assert vectors == CachingEmbedder(Hash(), "hash16", None).embed(texts)
    assert cache.get("embedding:hash16", digest(texts[0])) != spoiled
    assert [r.getMessage() for r in caplog.records] == [
        "warning: cache: 1 cached hash16 vector of the wrong length or not finite; computed again"
    ]
