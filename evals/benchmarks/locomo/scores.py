"""LoCoMo's lexical scores, and mem0's on LoCoMo: what `--protocol locomo` and `--protocol mem0` count an answer's words by.

Facts about their published code, implemented here in our own words:

- **locomo** (:func:`locomo_f1`, :func:`locomo_score`): the same normalisation,
  every token then stemmed by NLTK's ``PorterStemmer()`` (the stemmer needs no
  data download), multiset F1; :func:`locomo_score` applies LoCoMo's
  per-category rules (``eval_question_answering``).
- **mem0** (:func:`mem0_f1`, :func:`mem0_bleu1`): F1 over the *sets* of
  ``simple_tokenize`` tokens (lower case, ``. , ! ?`` become spaces, split on
  whitespace) and NLTK's ``sentence_bleu`` with weights (1, 0, 0, 0) and
  ``SmoothingFunction().method1`` on NLTK word tokens of the lower-cased texts
  (mem0ai/mem0 ``evaluation/metrics/utils.py``). mem0 tokenises with
  ``nltk.word_tokenize``, which first splits sentences with NLTK's trained
  English Punkt model, a data file NLTK downloads. Nothing here downloads, so
  :func:`word_tokens` splits sentences with an *untrained* Punkt tokenizer and
  each sentence with ``NLTKWordTokenizer`` (the tokenizer ``word_tokenize``
  uses). The two agree on a text of one sentence and wherever sentences end in
  ordinary words; they differ only at abbreviations and initials the English
  model knows (``"Mr. Smith"``: the trained model keeps ``"mr."`` whole, the
  untrained one splits ``"mr" "."``), which changes BLEU-1 by a token's share.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from typing import Any

from evals.benchmarks.kit import Lexical, bleu1, category_number, tokens

__all__ = [
    "LOCOMO_LEXICAL",
    "MEM0_LEXICAL",
    "locomo_f1",
    "locomo_multi_f1",
    "locomo_score",
    "mem0_bleu1",
    "mem0_f1",
    "simple_tokens",
    "stem",
    "word_tokens",
]


# LoCoMo scores category 5 (questions the conversation cannot answer) 1 when the output, lower-cased,
# holds one of these, else 0.
ABSTAIN = ("no information available", "not mentioned")


def _f1(got: list[str] | set[str], want: list[str] | set[str], common: int) -> float:
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


# -- LoCoMo: stemmed tokens, per-category rules ------------------------------------------------


@functools.cache
def _stemmer() -> Any:
    from nltk.stem import PorterStemmer  # imported on first use: nltk takes a moment to import

    return PorterStemmer()


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """NLTK's ``PorterStemmer().stem`` (its default, NLTK-extensions mode), cached: answers repeat words."""
    return _stemmer().stem(word)


def locomo_f1(answer: str, expected: str) -> float:
    """LoCoMo's ``f1_score``: multiset token F1 of the Porter-stemmed normalised tokens; 0.0 without a shared token."""
    got = [stem(w) for w in tokens(answer)]
    want = [stem(w) for w in tokens(expected)]
    return _f1(got, want, sum((Counter(got) & Counter(want)).values()))


def locomo_multi_f1(answer: str, expected: str) -> float:
    """LoCoMo's multi-answer F1 (its category 1): both sides split at commas (parts stripped); for each part
    of the expected answer the best :func:`locomo_f1` over the answer's parts; their mean."""
    parts = [p.strip() for p in answer.split(",")]
    wanted = [g.strip() for g in expected.split(",")]
    return math.fsum(max(locomo_f1(part, gold) for part in parts) for gold in wanted) / len(wanted)


def locomo_score(answer: str, gold: str, category: str | None) -> float:
    """One answer's score as LoCoMo's ``eval_question_answering`` gives it, by the question's category:

    - 3: the gold answer is cut at its first ``;`` (and stripped), then as 2 and 4;
    - 2, 4: :func:`locomo_f1`;
    - 1: :func:`locomo_multi_f1`;
    - 5: 1.0 when the answer, lower-cased, holds "no information available" or "not mentioned", else 0.0
      (the gold is not read).

    A category without one of these numbers (None, or a corpus of other categories), which LoCoMo's code
    refuses, is scored as 2 and 4 are."""
    number = category_number(category)
    if number == 5:
        low = answer.lower()
        return float(any(phrase in low for phrase in ABSTAIN))
    if number == 3:
        gold = gold.split(";")[0].strip()
    if number == 1:
        return locomo_multi_f1(answer, gold)
    return locomo_f1(answer, gold)


# -- mem0: sets of simple tokens; smoothed BLEU-1 on NLTK word tokens ---------------------------

_SIMPLE_SPACES = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def simple_tokens(text: str) -> list[str]:
    """mem0's ``simple_tokenize``: lower case, ``. , ! ?`` replaced by spaces, split on whitespace."""
    return text.lower().translate(_SIMPLE_SPACES).split()


def mem0_f1(answer: str, expected: str) -> float:
    """mem0's token F1: over the *sets* of :func:`simple_tokens` of the stripped texts (a repeated word counts
    once); 0.0 when either text is empty or no token is shared."""
    if not answer or not expected:
        return 0.0
    got, want = set(simple_tokens(answer.strip())), set(simple_tokens(expected.strip()))
    if not got or not want:
        return 0.0
    return _f1(got, want, len(got & want))


@functools.cache
def _word_tokenizers() -> tuple[Any, Any]:
    from nltk.tokenize import NLTKWordTokenizer, PunktSentenceTokenizer

    # Untrained Punkt: no data file to download (the module docstring says what that changes).
    return PunktSentenceTokenizer(), NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """NLTK word tokens of ``text``: sentences by an untrained Punkt tokenizer, each by ``NLTKWordTokenizer``."""
    return list(_word_tokens(text))


@functools.lru_cache(maxsize=1 << 14)
def _word_tokens(text: str) -> tuple[str, ...]:
    # Cached: about a millisecond a text, and an expected fact is scored against every answer to it.
    sentences, words = _word_tokenizers()
    return tuple(token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence))


def mem0_bleu1(answer: str, expected: str) -> float:
    """mem0's BLEU-1: NLTK ``sentence_bleu`` of the answer's :func:`word_tokens` (lower-cased) against the one
    reference, weights (1, 0, 0, 0), smoothing method1; 0.0 when no unigram matches (NLTK's own rule) or
    when NLTK raises (mem0 scores an error 0.0)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    try:
        return float(
            sentence_bleu(
                [word_tokens(expected.lower())],
                word_tokens(answer.lower()),
                weights=(1, 0, 0, 0),
                smoothing_function=SmoothingFunction().method1,
            )
        )
    except Exception:  # noqa: BLE001 -- mem0's own rule: a BLEU NLTK cannot compute is 0
        return 0.0


def mem0_f1_of(answer: str, expected: str, category: str | None = None) -> float:
    """:func:`mem0_f1`, whatever the category."""
    return mem0_f1(answer, expected)


# What each protocol reports: LoCoMo publishes its stemmed, per-category F1 and no BLEU (the harness's is shown,
# named so); mem0 publishes both.
LOCOMO_LEXICAL = Lexical("locomo", "harness", locomo_score, bleu1)
MEM0_LEXICAL = Lexical("mem0", "mem0", mem0_f1_of, mem0_bleu1)
