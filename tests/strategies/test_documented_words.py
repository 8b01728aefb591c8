"""The lexical runners' words as their libraries document them: fastembed's BM25 words for qdrant, bm25s's README
stemmer for bm25, each earlier configuration still an option."""

from __future__ import annotations

import pytest
from helpers import build, configuration

from evals.strategies.words import fastembed_words, token_id


def test_fastembed_words_drop_punctuation_and_stop_words_and_are_stemmed():
    """Words are lower-cased, punctuation and NLTK's English stop words dropped, the rest Snowball-stemmed."""
    assert fastembed_words("Caroline: I went to the LGBTQ support-group, running!") == [
        "carolin", "went", "lgbtq", "support", "group", "run",
    ]  # fmt: skip


def test_token_ids_are_fastembeds_murmur3_hashes():
    """A word's sparse index is fastembed's: abs(mmh3.hash(word)), the values mmh3 gives."""
    assert [token_id(w) for w in ("support", "carolin", "über")] == [1100855371, 927368467, 1610176724]


def _qdrant(**options):
    pytest.importorskip("qdrant_client")
    pytest.importorskip("llama_index.core")
    memory = build("qdrant", **options)
    memory.reset()
    for turn, content in enumerate(["Ana: I went running with my dogs.", "Ben: The port is 6543.", "Ana: Lovely weather."]):
        memory.add("user", content, turn=turn)
    return memory


def test_qdrant_sparse_matches_a_stemmed_word():
    """By default qdrant's sparse mode finds "running" when asked about "runs", as fastembed's Bm25 would."""
    found = _qdrant(mode="sparse").retrieve("Who runs with dogs?", 3)
    assert [r.turn for r in found][:1] == [0]


def test_qdrant_plain_tokenizer_matches_only_whole_words():
    """tokenizer=plain keeps the earlier words: "runs" does not match "running", "dogs" still matches."""
    found = _qdrant(mode="sparse", tokenizer="plain").retrieve("runs", 3)
    assert found == []


def test_qdrant_names_its_departures_from_the_defaults():
    """A qdrant configuration says where its stop words come from, and records a non-default option by name."""
    pytest.importorskip("qdrant_client")
    default = configuration("qdrant", mode="hybrid")
    assert "llama-index-core" in default["stopwords"] and default["prefetch"] == 20
    assert configuration("qdrant", mode="sparse", tokenizer="plain")["tokenizer"] == "plain"


def _bm25(**options):
    memory = build("bm25", **options)
    for turn, content in enumerate(["I went running with my dogs.", "The port is 6543.", "Lovely weather."]):
        memory.add("user", content, turn=turn)
    return memory


def test_bm25_stems_as_its_readme_does():
    """bm25 finds "running" when asked about "runs" (Snowball English stemmer, as bm25s's quick start)."""
    assert _bm25().retrieve("runs", 3) == ["I went running with my dogs."]


def test_bm25_without_a_stemmer_matches_only_whole_words():
    """stemmer=none keeps the earlier configuration: "runs" finds nothing."""
    assert _bm25(stemmer="none").retrieve("runs", 3) == []
