"""Token F1, BLEU-1 and LoCoMo's answer normalisation by hand, and the bootstrap interval of a mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evals.judge.answer_scores import bleu1, normalize_answer, token_f1
from evals.judge.stats import bootstrap_mean_interval, wilson_interval

# -- normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Eiffel Tower, in Paris!", "eiffel tower in paris"),
        # Punctuation is deleted, not spaced: words joined by it merge.
        ("Tom and Jerry's e-mail: 10:30", "tom jerrys email 1030"),
        ("1,000 dollars", "1000 dollars"),
        ("An apple a day", "apple day"),
        # Articles and "and" are whole words only.
        ("Theatre and Anderson", "theatre anderson"),
        ("  several\tspaces\n here ", "several spaces here"),
        # Only ASCII punctuation goes; a dash or curly quote stays (and "the" beside it still goes).
        ("Café — “the” best", "café — “ ” best"),
        ("The.", ""),
        ("", ""),
    ],
)
def test_normalize_answer_by_hand(text: str, normal: str):
    """Commas and ASCII punctuation deleted, lower case, a/an/the/and dropped, whitespace collapsed."""
    assert normalize_answer(text) == normal


# -- token F1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected", "f1"),
    [
        ("Paris, France.", "paris france", 1.0),
        # cat sat | cat sat down: P = 1, R = 2/3.
        ("The cat sat", "a cat sat down", 0.8),
        # 6 answer tokens, 1 shared: P = 1/6, R = 1, F1 = 2/7.
        ("She moved to Berlin in 2019", "Berlin", 2 / 7),
        # Repeated tokens count once per occurrence in the expected fact: P = 1/3, R = 1.
        ("paris paris paris", "Paris", 0.5),
        ("red car", "car red", 1.0),
        ("blue", "red", 0.0),
        ("", "Paris", 0.0),
        ("Paris", "", 0.0),
        # Both normalise to nothing: no shared token, 0 (not 1).
        ("The", "a", 0.0),
    ],
)
def test_token_f1_by_hand(answer: str, expected: str, f1: float):
    """Token F1 over normalised tokens, counted with multiplicity; 0 without a shared token."""
    assert token_f1(answer, expected) == pytest.approx(f1, abs=1e-15)


# -- BLEU-1 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected", "bleu"),
    [
        ("Paris, France.", "paris france", 1.0),
        # Clipping: "paris" counts once (the reference has it once); c = 3 > r = 1, no penalty.
        ("paris paris paris", "Paris", 1 / 3),
        # Shorter than the reference: c = 2, r = 3, precision 1, BP = exp(1 - 3/2).
        ("cat sat", "the cat sat down", math.exp(-0.5)),
        # Same length: BP = exp(0) = 1.
        ("red car", "car red", 1.0),
        ("She moved to Berlin in 2019", "Berlin", 1 / 6),
        ("Berlin", "She moved to Berlin in 2019", math.exp(1 - 6)),
        ("blue", "red", 0.0),
        ("", "Paris", 0.0),
        ("The", "a", 0.0),
    ],
)
def test_bleu1_by_hand(answer: str, expected: str, bleu: float):
    """Clipped unigram precision times the brevity penalty; 0 without a shared token."""
    assert bleu1(answer, expected) == pytest.approx(bleu, abs=1e-15)


def test_scores_ignore_case_articles_and_punctuation():
    """An answer differing only in case, articles, commas and punctuation scores 1 on both."""
    answer, expected = "THE RED-HAIRED, tall man!", "a red-haired tall man"
    assert (token_f1(answer, expected), bleu1(answer, expected)) == (1.0, 1.0)


# -- bootstrap interval -------------------------------------------------------------------------


def test_bootstrap_of_nothing_is_none_and_of_one_value_is_that_value():
    """No value: no interval; one value: every resample's mean is it."""
    assert bootstrap_mean_interval([]) is None
    assert bootstrap_mean_interval([0.25]) == (0.25, 0.25)


def test_bootstrap_is_deterministic_for_a_seed():
    """The same values and seed give the same interval; another seed, a slightly different one."""
    values = [i / 37 % 1 for i in range(60)]
    assert bootstrap_mean_interval(values) == bootstrap_mean_interval(values)
    assert bootstrap_mean_interval(values, seed=1) != bootstrap_mean_interval(values)


def test_bootstrap_is_the_percentiles_of_the_resampled_means():
    """The 2.5th and 97.5th percentiles of the means of default_rng(seed)'s resamples, also when
    the resamples are drawn in several blocks (50 000 values x 50 resamples)."""
    values = np.random.default_rng(9).random(50_000)
    picks = np.random.default_rng(3).integers(0, values.size, size=(50, values.size))
    expected = np.percentile(values[picks].mean(axis=1), [2.5, 97.5])
    assert bootstrap_mean_interval(values, resamples=50, seed=3) == (float(expected[0]), float(expected[1]))


def test_bootstrap_of_two_values_spans_them():
    """Of 0 and 1 the resampled means are 0, 0.5 and 1: the interval is [0, 1]."""
    assert bootstrap_mean_interval([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_stays_within_the_values():
    """Equal values give exactly that value at both ends, though their mean rounds."""
    assert bootstrap_mean_interval([0.1] * 30) == (0.1, 0.1)


def test_bootstrap_of_hits_agrees_with_wilson():
    """On 0/1 values (30 hits of 100) the bootstrap interval is close to Wilson's."""
    low, high = bootstrap_mean_interval([1.0] * 30 + [0.0] * 70)
    wilson = wilson_interval(30, 100)
    assert low < 0.3 < high
    assert (low, high) == pytest.approx(wilson, abs=0.03)
