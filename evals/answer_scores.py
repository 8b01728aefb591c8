"""Lexical scores of an answer against the expected fact: token F1 and BLEU-1, no model involved.

Both compare the tokens of :func:`normalize_answer`, which follows LoCoMo's
answer normalisation (``normalize_answer`` in snap-research/locomo,
``task_eval/evaluation.py``): remove commas, lower-case, delete ASCII
punctuation, replace the words "a", "an", "the" and "and" by a space, and
collapse whitespace. Tokens are then the whitespace-separated words.

- :func:`token_f1` is LoCoMo's ``f1_score`` (SQuAD's token F1) on those
  tokens: precision and recall of the multiset of common tokens; 0 when no
  token is shared (so also when either side normalises to nothing). LoCoMo
  also Porter-stems every token; this does not (no stemmer dependency), so a
  score here is never above LoCoMo's for the same pair (stemming only merges
  tokens, which can only add matches).
- :func:`bleu1` is sentence-level BLEU with unigrams only, one reference:
  clipped unigram precision times the brevity penalty, no smoothing. It
  equals NLTK's ``sentence_bleu(..., weights=(1,))`` on the same tokens (with
  or without a smoothing function: NLTK returns 0 before smoothing when no
  unigram matches).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter

__all__ = ["bleu1", "locomo_score", "normalize_answer", "tokens", "token_f1"]

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


# -- LoCoMo's per-category score (h25core's minimal stand-in; h25agg's evals/answer_scores.py replaces it) --

_NUMBER = re.compile(r"\s*(\d+)\b")
_NOT_ANSWERED = ("no information available", "not mentioned")


def locomo_score(answer: str, gold: str, category: str | None) -> float:
    """LoCoMo's ``eval_question_answering`` score of one answer: category 1 splits both sides at
    commas (mean over gold parts of the best F1 over answer parts), 3 cuts the gold at the first
    ``;``, 2, 3, 4 and any other take the token F1, 5 scores 1 when the answer says it is not
    mentioned. Without Porter stemming (see :func:`token_f1`)."""
    found = _NUMBER.match(category or "")
    number = int(found.group(1)) if found else None
    if number == 5:
        lowered = answer.lower()
        return float(any(phrase in lowered for phrase in _NOT_ANSWERED))
    if number == 3:
        gold = gold.split(";")[0].strip()
    if number == 1:
        answers = [a.strip() for a in answer.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(token_f1(a, g) for a in answers) for g in golds) / len(golds)
    return token_f1(answer, gold)
