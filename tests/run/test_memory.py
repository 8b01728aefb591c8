"""Bounded memory on long corpora: texts held once, corpora written and compared in batches.

The figures themselves (peak memory of an import and of each strategy's run on
the 500-question LongMemEval-shaped file) come from bench/bench_longmemeval.py;
these check the behaviour that keeps them down.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evals.io import jsonfile
from evals.io.cache import Cache
from evals.judge.scoring import Evaluation, score_run
from evals.model.corpus import Conversation, Corpus, corpus_digest, load_corpus
from evals.model.provenance import Provenance
from evals.model.tokens import TokenCounter
from evals.run.executors._worker_cache import WorkerCache
from evals.run.playthrough import play_corpus
from evals.store import Store, StoreError
from evals.store._records import CORPUS_BATCH
from evals.strategies import FullHistory
from evals.strategies.embedders import CachingEmbedder

PROVENANCE = Provenance(commit="a" * 40, dirty=False, package_version="0.1.0", mneme_version=None, python_version="3")
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


def evaluation(conversations: list[Conversation]) -> Evaluation:
    corpus = Corpus(directory=Path("many"), conversations=conversations, digest=corpus_digest(conversations))
    run = play_corpus(corpus, FullHistory(), ignores_k=True)  # the oracle keeps its whole list, as a registered run does
    return Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))


def conversations(count: int, edited: int | None = None) -> list[Conversation]:
    made = []
    for c in range(count):
        first = "an edited turn" if c == edited else f"conversation {c} says hello"
        turns = [{"role": "user", "content": first}, {"role": "assistant", "content": SHARED}]
        turns.append({"role": "user", "content": "q", "test_at": {"question": "q", "expected_fact": "hello"}})
        made.append(Conversation(id=f"c{c:03d}", description="d", turns=turns))
    return made


def test_a_corpus_over_several_batches_round_trips(store_path):
    """A corpus longer than one write batch is stored whole and in order, and a second run on it is accepted."""
    count = 2 * CORPUS_BATCH + 3
    with Store.open(store_path) as store:
        first = store.append(evaluation(conversations(count)), PROVENANCE)
        store.append(evaluation(conversations(count)), PROVENANCE)
        stored = store.get_run(first)
    assert [c.conversation_id for c in stored.run.conversations] == [f"c{c:03d}" for c in range(count)]


def test_a_difference_past_the_first_batch_is_found(store_path):
    """Text stored under a digest that differs in a late conversation is refused, naming that conversation and turn."""
    count = 2 * CORPUS_BATCH + 3
    genuine = evaluation(conversations(count))
    # The state an unchecked import of old left: other text under the genuine corpus's digest.
    edited = Corpus(Path("many"), conversations(count, edited=count - 2), genuine.corpus.digest)
    forged = Evaluation(corpus=edited, run=genuine.run, scores=genuine.scores)
    with Store.open(store_path) as store:
        store.append(forged, PROVENANCE)
        with pytest.raises(StoreError, match=rf"conversation 'c{count - 2:03d}', turn 0\); refusing to mix them"):
            store.append(genuine, PROVENANCE)


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


def test_caching_embedder_steps_do_what_prefetch_does():
    """lookup, compute and accept (how Ray splits a prefetch) leave the same vectors and cache as prefetch."""
    texts = ["abc", "aab", "abc", "cc"]
    whole_cache, split_cache = Cache.in_memory(), Cache.in_memory()
    whole = CachingEmbedder(Letters(), "letters", whole_cache)
    whole.prefetch(texts)
    split = CachingEmbedder(Letters(), "letters", split_cache)
    missing = split.lookup(texts)
    assert missing == ["abc", "aab", "cc"]
    split.accept(missing, CachingEmbedder(Letters(), "letters", None).compute(missing))
    assert np.array_equal(np.array(split.embed(texts)), np.array(whole.embed(texts)))
    keys = [k for k in split.entries(texts)]
    assert split_cache.get_many("embedding:letters", keys) == whole_cache.get_many("embedding:letters", keys)
