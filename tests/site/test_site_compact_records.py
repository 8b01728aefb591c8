"""A drill-down's records cost bytes only for what they add (docs/site.md, "Keeping the site small"): a record that is one
turn is a few attributes site.js draws; a record holding several turns names them as runs, and carries no text where its
text is its first turn's (filled in from the transcript, as a turn's is)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evals.site._drilldown import ConversationText, point_view, runs_of
from evals.site._fragments import Fragments
from evals.site._render import make_environment

TURNS = [("user", f"Ann: turn {i} says something") for i in range(12)]


@pytest.fixture(scope="module")
def fragments() -> Fragments:
    return Fragments(make_environment())  # the templates compiled once for the module


def _view(fragments: Fragments, records: list[str], held: list[list[int]], refs: list[int | None]):
    point = SimpleNamespace(
        turn_index=11, expected_keywords=[], expected_fact="nothing here", retrieved_records=records, ranked_held=held,
        evidence_turns=[4], ranked_turns=None, question="q?", answerable=True, category=None,
    )  # fmt: skip
    score = SimpleNamespace(record_tokens=[5] * len(records), strict_hit=False, rank=None)
    view, _, _ = point_view(
        1, point, score, refs, ConversationText(TURNS), fragments, False,
        link=lambda t: f"T.html#t-{t}", context="T.html#t-11", verdict="miss", by_evidence=True, protocol="harness",
    )  # fmt: skip
    return view


def test_turns_as_runs():
    assert runs_of([8, 9, 10, 14, 3, 4]) == [(8, 10), (14, 14), (3, 4)]
    assert runs_of([]) == []


def test_a_session_record_names_its_turns_as_runs_and_is_filled_when_its_text_is_its_first_turns(fragments):
    first = TURNS[2][1]
    view = _view(fragments, [first, "a whole session's own text"], [[2, 3, 4, 5], [7, 8, 10]], [2, 7])
    same, own = view.records
    assert same.holds == [(2, 5, "T.html#t-2", "T.html#t-5")] and same.filled and same.evidence
    assert own.holds == [(7, 8, "T.html#t-7", "T.html#t-8"), (10, 10, "T.html#t-10", "T.html#t-10")] and not own.filled
    assert 'holds turns <a href="T.html#t-2">2</a>–<a href="T.html#t-5">5</a>' in view.html
    assert '<a href="T.html#t-10">10</a> ·' in view.html  # a run of one turn: one link
    assert view.html.count("data-fill") == 1 and "a whole session&#39;s own text" in view.html
    assert first not in view.html


def test_a_turn_record_is_a_few_attributes(fragments):
    view = _view(fragments, [TURNS[4][1], TURNS[6][1]], [], [4, 6])
    assert '<li class="evi" data-t="4">5 tokens</li>' in view.html
    assert '<li data-t="6">5 tokens</li>' in view.html
    assert "T.html" not in view.html.split('<ol class="records">')[1]
