"""Lexical scores of an answer against the expected fact, no model involved: the harness's, and the shape of a protocol's own.

Each protocol's F1 and BLEU-1 are a :class:`Lexical` its unit declares (LoCoMo's and mem0's in
``evals/benchmarks/locomo/scores.py``), handed to the judge with the run (:func:`lexical`). The harness's own:

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
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "HARNESS_LEXICAL",
    "Lexical",
    "bleu1",
    "category_number",
    "harness_f1",
    "lexical",
    "normalize_answer",
    "tokens",
    "token_f1",
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


_LEADING_NUMBER = re.compile(r"\s*(\d+)")


def category_number(category: str | None) -> int | None:
    """The number a LoCoMo category starts with (``"4 single-hop"``, ``"4"`` -> 4); None without one."""
    found = _LEADING_NUMBER.match(category or "")
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Lexical:
    """How a protocol scores an answer's words against the gold: its F1 and BLEU-1, each named after whose
    definition it is (shown with the figures). A unit hands its protocol's to the judge
    (:class:`evals.benchmarks.kit.ProtocolSpec`), the way it hands its headline rule."""

    f1_name: str
    bleu1_name: str
    f1: Callable[[str, str, str | None], float]  # (answer, expected, category) -> F1
    bleu1: Callable[[str, str], float]  # (answer, expected) -> BLEU-1


def harness_f1(answer: str, expected: str, category: str | None = None) -> float:
    """:func:`token_f1`, whatever the category: the harness's F1."""
    return token_f1(answer, expected)


# The harness's own (and that of a protocol publishing no lexical score).
HARNESS_LEXICAL = Lexical("harness", "harness", harness_f1, bleu1)


def lexical(scorer: Lexical, answer: str, expected: str, category: str | None = None) -> dict[str, float]:
    """``{"f1", "bleu1"}`` of an answer as ``scorer`` (its protocol's) defines them."""
    return dict(_lexical(scorer, answer, expected, category))


@functools.lru_cache(maxsize=1 << 12)
def _lexical(scorer: Lexical, answer: str, expected: str, category: str | None) -> tuple[tuple[str, float], ...]:
    # Cached: a run's F1 and BLEU-1 columns each ask for both scores of every answer.
    return (("f1", scorer.f1(answer, expected, category)), ("bleu1", scorer.bleu1(answer, expected)))
