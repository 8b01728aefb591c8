"""Bounded memory on long corpora: texts held once (corpora written and compared in batches: tests/store/test_store_streaming.py).

The figures themselves (peak memory of an import and of each strategy's run on
the 500-question LongMemEval-shaped file) come from bench/bench_memory_s.py;
these check the behaviour that keeps them down.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evals.io import jsonfile
from evals.io.cache import Cache
from evals.model.corpus import load_corpus
from evals.run.executors._worker_cache import WorkerCache
from evals.strategies.embedders import CachingEmbedder

SHARED = "a session turn that several conversations share, as LongMemEval's haystacks do"


def write_conversation(folder: Path, cid: str, texts: list[str]) -> None:
    turns = [{"role": "user", "content": t} for t in texts]
    turns.append({"role": "user", "content": "q?", "test_at": {"question": "q?", "expected_fact": "share"}})
    (folder / f"{cid}.json").write_text(json.dumps({"schema_version": "1", "id": cid, "description": "d", "turns": turns}))


def test_equal_turn_texts_are_loaded_as_one_string(tmp_path):
    """A text that recurs across conversations is one object in the loaded corpus."""
    write_conversation(tmp_path, "a", [SHARED, "only in a"])
    write_conversation(tmp_path, "b", ["only in b", SHARED])
    a, b = load_corpus(tmp_path).conversations
    assert a.turns[0].content is b.turns[1].content


def test_shared_strings_parse_to_the_same_value_held_once():
    """parse(share_strings=True) gives the same value as a plain parse, with equal strings one object."""
    text = json.dumps([{"content": SHARED}, {"content": SHARED}, {"other": [1, 2]}])
    shared = jsonfile.parse(text, "x.json", share_strings=True)
    assert shared == jsonfile.parse(text, "x.json")
    assert shared[0]["content"] is shared[1]["content"]


def test_worker_cache_records_what_it_computed_once():
    """A worker's cache answers from its snapshot and records each new entry once, keeping the first value."""
    cache = WorkerCache({"embedding:m": {"k1": b"old"}})
    cache.put_many("embedding:m", {"k1": b"new", "k2": b"two"})
    cache.put("embedding:m", "k2", b"other")
    assert cache.get_many("embedding:m", ["k1", "k2", "k3"]) == {"k1": b"old", "k2": b"two"}
    assert dict(cache.written) == {"embedding:m": {"k2": b"two"}}
    assert cache.counts("embedding") == (2, 1)


class Letters:
    """A toy embedder: a text's vector counts its letters a, b and c."""

    dimensions = 3

    def embed(self, texts):
        return [[float(t.count(ch)) for ch in "abc"] for t in texts]


def test_caching_embedder_steps_do_what_prefetch_does(tmp_path):
    """lookup, compute and accept (how Ray splits a prefetch) leave the same vectors and cache as prefetch."""
    texts = ["abc", "aab", "abc", "cc"]
    whole_cache, split_cache = Cache.open(tmp_path / "whole.duckdb"), Cache.open(tmp_path / "split.duckdb")
    whole = CachingEmbedder(Letters(), "letters", whole_cache)
    whole.prefetch(texts)
    split = CachingEmbedder(Letters(), "letters", split_cache)
    missing = split.lookup(texts)
    assert missing == ["abc", "aab", "cc"]
    split.accept(missing, CachingEmbedder(Letters(), "letters", None).compute(missing))
    assert np.array_equal(np.array(split.embed(texts)), np.array(whole.embed(texts)))
    keys = [k for k in split.entries(texts)]
    assert split_cache.get_many("embedding:letters", keys) == whole_cache.get_many("embedding:letters", keys)
