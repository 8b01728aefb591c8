"""Words as the lexical libraries' makers document them: the Snowball English stemmer and NLTK's English stop words.

Qdrant documents BM25 as fastembed's ``Bm25("Qdrant/bm25")`` makes it
(fastembed ``fastembed/sparse/bm25.py``): the text's non-word characters
become spaces, it is split into words, each word is lower-cased, dropped when
it is a stop word or longer than 40 characters, stemmed with the Snowball
English stemmer, and hashed to its index with MurmurHash3 (``abs(mmh3.hash(word))``).
:func:`fastembed_words` and :func:`token_id` do the same here. fastembed
downloads its stop-word file (``english.txt`` of the hub's ``Qdrant/bm25``), which
cannot be had offline; the equivalent that ships in an installed package is
NLTK's English list inside llama-index-core
(``llama_index/core/_static/nltk_cache/corpora/stopwords/english``), so that
copy is used, and every row that uses it says so (:data:`STOPWORDS_SOURCE`).

The stemmer is NLTK's ``SnowballStemmer("english")`` (nltk is a main
dependency): the same Snowball English (Porter2) algorithm fastembed takes
from ``py_rust_stemmers`` and bm25s's README from PyStemmer.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

from evals.strategies.registry import StrategyError

__all__ = ["STEMMER", "STOPWORDS_SOURCE", "english_stopwords", "fastembed_words", "stem", "token_id"]

STEMMER = "Snowball english (nltk SnowballStemmer)"
STOPWORDS_SOURCE = "NLTK english, llama-index-core's copy (_static/nltk_cache/corpora/stopwords/english)"
MAX_WORD = 40  # fastembed's token_max_length
_NON_WORD = re.compile(r"[^\w\s]")


@functools.cache
def english_stopwords() -> frozenset[str]:
    """NLTK's English stop words, read from the copy llama-index-core ships (no NLTK data download)."""
    spec = importlib.util.find_spec("llama_index.core")
    if spec is None or spec.origin is None:
        raise StrategyError(
            "NLTK's English stop words are read from llama-index-core's copy, which is not installed: "
            "pip install -e '.[qdrant]' (or choose --option tokenizer=plain)"
        )
    path = Path(spec.origin).parent / "_static" / "nltk_cache" / "corpora" / "stopwords" / "english"
    try:
        return frozenset(path.read_text(encoding="utf-8").split())
    except OSError as exc:
        raise StrategyError(f"NLTK's English stop words are not where llama-index-core keeps them ({path}): {exc}") from None


@functools.cache
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-cased word (cached: a conversation repeats its words)."""
    return _stemmer().stem(word)


def fastembed_words(text: str) -> list[str]:
    """``text``'s words as fastembed's Bm25 makes them: punctuation out, lower-cased, stop words and words over
    40 characters dropped, Snowball-stemmed."""
    stopwords = english_stopwords()
    words = []
    for word in _NON_WORD.sub(" ", text).split():
        lower = word.lower()
        if lower in stopwords or len(word) > MAX_WORD:
            continue
        stemmed = stem(lower)
        if stemmed:
            words.append(stemmed)
    return words


def token_id(word: str) -> int:
    """fastembed's index of a word: the absolute value of its signed 32-bit MurmurHash3 (seed 0)."""
    value = _murmur3_32(word.encode("utf-8"))
    return abs(value - (1 << 32) if value & 0x80000000 else value)


def _murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit (Austin Appleby's public-domain algorithm), unsigned."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    whole = len(data) - len(data) % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[whole:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h
