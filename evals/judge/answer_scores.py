"""Lexical scores of an answer against the expected fact, no model involved: each protocol's own.

Three definitions live here, each named after the protocol that publishes it
(facts about their published code, implemented here in our own words):

- **harness** (:func:`token_f1`, :func:`bleu1`): the tokens of
  :func:`normalize_answer`, which follows LoCoMo's answer normalisation
  (``normalize_answer`` in snap-research/locomo, ``task_eval/evaluation.py``):
  remove commas, lower-case, delete ASCII punctuation, replace the words "a",
  "an", "the" and "and" by a space, and collapse whitespace. :func:`token_f1`
  is SQuAD's multiset token F1 on those tokens *without* stemming; :func:`bleu1`
  is sentence BLEU with unigrams only (clipped unigram precision times the
  brevity penalty), equal to NLTK's ``sentence_bleu(..., weights=(1,))`` on the
  same tokens. These are the ``harness`` protocol's (and LongMemEval's, which
  publishes no lexical score).
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
import re
import string
from collections import Counter
from typing import Any

__all__ = [
    "LEXICAL",
    "LOCOMO_ABSTAIN",
    "bleu1",
    "lexical",
    "category_number",
    "locomo_f1",
    "locomo_multi_f1",
    "locomo_score",
    "mem0_bleu1",
    "mem0_f1",
    "normalize_answer",
    "simple_tokens",
    "stem",
    "tokens",
    "token_f1",
    "word_tokens",
]

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def normalize_answer(text: str) -> str:
    """LoCoMo's normalisation: no commas, lower case, no ASCII punctuation, no "a"/"an"/"the"/"and",
    single spaces.

    Punctuation is deleted, not replaced by a space, so ``"e-mail"`` becomes
    ``"email"`` and ``"10:30"`` becomes ``"1030"``; characters outside ASCII
    punctuation (curly quotes, dashes) stay.
    """
    text = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    """The words of the normalised text."""
    return normalize_answer(text).split()


def token_f1(answer: str, expected: str) -> float:
    """Token F1 of ``answer`` against ``expected``: 2PR / (P + R) over the common tokens, counted
    with multiplicity; 0.0 when no token is shared, including when either side has no token."""
    got, want = tokens(answer), tokens(expected)
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def bleu1(answer: str, expected: str) -> float:
    """Sentence BLEU-1 of ``answer`` (c tokens) against the one reference ``expected`` (r tokens):
    ``BP * m / c``, where m counts the answer's tokens clipped to their count in the reference and
    ``BP = 1`` if c > r else ``exp(1 - r / c)``. 0.0 when m = 0 (no shared token, an empty answer)."""
    got, want = tokens(answer), tokens(expected)
    clipped = sum((Counter(got) & Counter(want)).values())
    if clipped == 0:
        return 0.0
    c, r = len(got), len(want)
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * clipped / c


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


# LoCoMo scores category 5 (questions the conversation cannot answer) 1 when the output, lower-cased,
# holds one of these, else 0.
LOCOMO_ABSTAIN = ("no information available", "not mentioned")
_LEADING_NUMBER = re.compile(r"\s*(\d+)")


def category_number(category: str | None) -> int | None:
    """The number a LoCoMo category starts with (``"4 single-hop"``, ``"4"`` -> 4); None without one."""
    found = _LEADING_NUMBER.match(category or "")
    return int(found.group(1)) if found else None


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
        return float(any(phrase in low for phrase in LOCOMO_ABSTAIN))
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


# Which F1 and BLEU-1 each protocol reports: its own where it publishes one, else the harness's (named so).
# LongMemEval publishes no lexical score; LoCoMo publishes F1 (its stemmed one) and no BLEU.
LEXICAL: dict[str, tuple[str, str]] = {
    "harness": ("harness", "harness"),
    "longmemeval": ("harness", "harness"),
    "mem0": ("mem0", "mem0"),
    "locomo": ("locomo", "harness"),
}


def lexical(protocol: str | None, answer: str, expected: str, category: str | None = None) -> dict[str, float]:
    """``{"f1", "bleu1"}`` of an answer as ``protocol`` defines them (:data:`LEXICAL`; an unknown protocol:
    the harness's). LoCoMo's F1 is its per-category rule (:func:`locomo_score`)."""
    return dict(_lexical(protocol or "harness", answer, expected, category))


@functools.lru_cache(maxsize=1 << 12)
def _lexical(protocol: str, answer: str, expected: str, category: str | None) -> tuple[tuple[str, float], ...]:
    # Cached: a run's F1 and BLEU-1 columns each ask for both scores of every answer.
    f1_kind, bleu_kind = LEXICAL.get(protocol, LEXICAL["harness"])
    if f1_kind == "locomo":
        f1 = locomo_score(answer, expected, category)
    elif f1_kind == "mem0":
        f1 = mem0_f1(answer, expected)
    else:
        f1 = token_f1(answer, expected)
    return (("f1", f1), ("bleu1", mem0_bleu1(answer, expected) if bleu_kind == "mem0" else bleu1(answer, expected)))
