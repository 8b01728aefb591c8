"""The one way numbers, commits and placeholders are written (evals.model.formatting)."""

from __future__ import annotations

import math

from evals.model import formatting
from evals.model.tokens import APPROXIMATE, EXACT


def test_short_commit_keeps_seven_characters_of_a_full_hash():
    """A 40-hex commit shortens to 7 characters; anything else (no-git, a short name) is kept whole."""
    assert formatting.short_commit("0123456789abcdef0123456789abcdef01234567") == "0123456"
    assert formatting.short_commit("no-git") == "no-git"
    assert formatting.short_commit("0123456789ABCDEF0123456789ABCDEF01234567") == "0123456789ABCDEF0123456789ABCDEF01234567"


def test_commit_text_marks_a_dirty_tree():
    """The CLI's commit cell is the short commit, with +dirty for uncommitted changes."""
    sha = "b" * 40
    assert (formatting.commit_text(sha, False), formatting.commit_text(sha, True)) == ("bbbbbbb", "bbbbbbb+dirty")


def test_empty_values_take_the_callers_placeholder():
    """None (and NaN) is the placeholder given, a dash by default, never 0."""
    for format_value in (formatting.percent, formatting.number, formatting.decimal):
        assert format_value(None) == formatting.DASH
        assert format_value(math.nan) == formatting.DASH
        assert format_value(None, empty=formatting.NULL) == "null"
    assert formatting.interval(None, 0.5) == formatting.DASH
    assert formatting.with_interval(None, 0.1, 0.9, empty="null") == "null"


def test_number_formats():
    """Percentages, separated numbers and fixed decimals, as the pages and tables show them."""
    assert (formatting.percent(0.0), formatting.percent(0.12345, 2)) == ("0.0%", "12.35%")
    assert (formatting.number(1234), formatting.number(1234.5), formatting.number(1234.567, 2)) == (
        "1,234",
        "1,234.5",
        "1,234.57",
    )
    assert formatting.decimal(0.83333) == "0.833"


def test_interval_texts():
    """An interval is "[low, high]"; a value without one stands alone."""
    assert formatting.interval(0.1, 0.25) == "[0.100, 0.250]"
    assert formatting.with_interval(0.5, 0.1, 0.9) == "0.500 [0.100, 0.900]"
    assert formatting.with_interval(0.5, None, None) == "0.500"
    assert formatting.percent_interval(0.1, None) == f"[10.0%, {formatting.DASH}]"


def test_estimated_tokens_carry_the_mark():
    """Tokens counted with the ~4 characters estimate are marked with ~, exact ones are not."""
    assert formatting.tokens(12.345, APPROXIMATE) == "~12.3"
    assert formatting.tokens(12.345, EXACT, digits=2) == "12.35"
    assert formatting.tokens(None, APPROXIMATE, empty="null") == "null"


def test_relative_cost_drops_decimals_from_ten_percent():
    """Relative cost is whole percents from 10% up, one decimal below."""
    assert [formatting.relative(v) for v in (1.2157, 0.1, 0.0789, 0.0, None)] == ["122%", "10%", "7.9%", "0.0%", formatting.DASH]


def test_p_value_text_switches_to_scientific_when_tiny():
    """Four decimals, or scientific notation below 1e-4."""
    assert (formatting.p_value_text(0.125), formatting.p_value_text(1.0), formatting.p_value_text(3e-29)) == (
        "0.1250",
        "1.0000",
        "3.0e-29",
    )
