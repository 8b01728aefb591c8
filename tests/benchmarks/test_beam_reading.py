"""BEAM's judge replies read as BEAM's ``evaluate_<ability>`` reads them.

BEAM (src/evaluation/compute_metrics.py at b2a3ee8b) reads a reply stripped, with ``json.loads`` (after taking a
fenced block's body, then its first ``{…}`` or ``[…]``), and where that raises, with ``json.loads(repair_json(…))``;
it then counts ``int(response['score'])`` (``float`` for event ordering), and a reply where any of this raises stops
its run. The expected figure here is json_repair's own answer in that order, never a copy of BEAM's code.
"""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest
from json_repair import repair_json

from evals.benchmarks.beam.protocol import read_score

# Replies a judge writes, one or more per kind BEAM's fallback repairs, and strict ones; none fenced, none in prose,
# so parse_json_response's fenced-block and first-object steps read them as the whole reply.
CRAFTED = [
    "{'score': 1.0, 'reason': 'ok'}",
    "{'score': 0, 'reason': 'missing'}",
    "{'score': 0.5}",
    '{"score": 1, "reason": "ok"',
    '{"score": 1',
    '{"score": 0, "reason": "no"',
    "{score: 1, reason: 'ok'}",
    '{score: 1, "reason": "ok"}',
    "{score: 0}",
    '{"score": 1 // all there\n}',
    '{"score": 1, /* fine */ "reason": "ok"}',
    '{"score": 0 # nothing\n}',
    '{"score": +1}',
    '{"score": +0.5}',
    '{"score": 01}',
    '{"score": 00}',
    '{"score": 1.}',
    '{"score": 0.}',
    '{"score": True}',
    '{"score": False}',
    '{"score": None}',
    '{"score": 0, "score": 1}',
    '{"score": 1, "score": 0}',
    '{"score": 1, "reason": "ok",}',
    '{"score": 0.5, "reason": "half",}',
    '{"score": "1"}',
    '{"score": "1.0"}',
    '{"score": 1.5}',
    '{"score": 0.9}',
    '{"score": 2}',
    '{"score": -1}',
    '{"score": NaN}',
    '{"score": Infinity}',
    '{"Score": 1}',
    '[{"score": 1}]',
    "Score: 1",
    "The answer covers the item.",
    "",
    '{"reason": "ok"}',
    '{"score": [1]}',
    '{"score": {"value": 1}}',
    '{"score": 1, "reason": "a \\"quoted\\" word"}',
    '{"score": 1, "reason": "line\nbreak"}',
]


def json_repairs_reading(reply: str, ordering: bool) -> float | None:
    """The figure by the documented order: the stripped reply as strict JSON, else ``json.loads(repair_json(…))``;
    None where that raises, where ``score`` cannot be counted, or where the count lies outside 0 to 1."""
    text = reply.strip()
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = json.loads(repair_json(text))
        except Exception:
            return None
    try:
        number = float(data["score"]) if ordering else float(int(data["score"]))
    except (TypeError, ValueError, OverflowError, KeyError):
        return None
    return number if number == number and 0 <= number <= 1 else None


@pytest.mark.parametrize("ordering", [False, True], ids=["int", "float"])
def test_crafted_replies_read_as_json_repair_reads_them(ordering: bool):
    """Every crafted reply gets the figure json.loads, then json_repair, give it."""
    differing = [(r, read_score(r, ordering), json_repairs_reading(r, ordering)) for r in CRAFTED]
    assert [d for d in differing if d[1] != d[2]] == []


@pytest.mark.parametrize(
    ("reply", "counted"),
    [
        ('```json\n{"score": 1, "reason": "ok",}\n```', 1.0),
        ("```json\n{'score': 1}\n```", 1.0),
        ('Here is my verdict: {"score": 1, "reason": "ok"}', 1.0),
        ("Here is my verdict: {'score': 1}", 1.0),
        ('{"score": 1}{"score": 0}', 1.0),
    ],
)
def test_fenced_and_embedded_replies_read_as_parse_json_response_reads_them(reply: str, counted: float):
    """A fenced block's body and the first object in the reply are tried before json_repair, as BEAM tries them."""
    assert read_score(reply) == counted


def test_single_quoted_reply_is_read():
    """``{'score': 1.0, 'reason': 'ok'}`` counts 1, as BEAM's json_repair fallback reads it."""
    assert read_score("{'score': 1.0, 'reason': 'ok'}") == 1.0


def test_score_given_twice_counts_the_last():
    """A key given twice keeps its last value, as json.loads (BEAM's first reading) keeps it."""
    assert read_score('{"score": 0, "score": 1}') == 1.0


@pytest.mark.parametrize("opening", ["[", '{"a": '], ids=["list", "object"])
def test_reply_nested_100000_deep_is_unparsed(opening: str):
    """A reply nested 100,000 deep is unparsed, not a RecursionError."""
    assert read_score(opening * 100_000 + '{"score": 1}') is None


def test_json_repair_is_the_version_beam_pins():
    """The json_repair installed is 0.44.1, the version BEAM's requirements.txt pins."""
    assert version("json-repair") == "0.44.1"
