"""The drill-down's fragment cache key is derived from the frozen view itself (evals.site._drilldown.fragment_key):
whatever a test point's section shows is in its key, so no input can be left out and serve stale HTML."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from evals.site._drilldown import AnswerView, EvidenceView, PointView, RecordView, fragment_key
from evals.site._text import Segment


def record(rank: int) -> RecordView:
    segments = [Segment("the cat is ", False), Segment("Pixel", True)]
    return RecordView(rank, 7, segments, ["pixel"], rank, 3, False, href=f"#t-{rank}")


def view() -> PointView:
    """A test point's view with every kind of field set: records, evidence, an answer, maps and lists."""
    return PointView(
        number=1, anchor="tp-9", turn_index=9, question="What is the cat called?", expected_fact="Pixel", keywords=["pixel"],
        hit=True, strict_hit=True, rank=1, context_tokens=14, record_count=2, records=[record(1), record(2)], records_hidden=0,
        records_hidden_tokens=0, all_history=False,
        evidence=[EvidenceView(4, 5, "Ann", [Segment("Pixel", True)], 1, None, href="#t-4")], evidence_hidden=0,
        answerable=True, category="4", evidence_turns=[4], evidence_retrieved=[4], evidence_ranked_past_k={},
        evidence_missed=[], evidence_ranks={4: 1},
        answer=AnswerView("Pixel", True, "matches", True, 12, 0.1, 1.0, 1.0), k=2, records_more=[record(3)],
        evidence_hrefs=["#t-4"], context_href="#t-9", verdict="hit", verdict_note="", by_evidence=True,
        records_more_hidden=0, suspect="",
    )  # fmt: skip


def changed(value: Any) -> Any:
    """Some other value of the same field."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 3
    if isinstance(value, list):
        return [*value, value[0]] if value else [5]
    if isinstance(value, dict):
        return {**value, 99: 1}
    first = dataclasses.fields(value)[0].name
    return dataclasses.replace(value, **{first: changed(getattr(value, first))})


FIELDS = [f.name for f in dataclasses.fields(PointView) if f.name != "html"]


@pytest.mark.parametrize("name", FIELDS)
def test_changing_any_field_of_the_view_changes_the_key(name):
    """Each field of PointView (the HTML aside) is in the key: another value, another key."""
    base = view()
    other = dataclasses.replace(base, **{name: changed(getattr(base, name))})
    assert fragment_key(other, False) != fragment_key(base, False)


@pytest.mark.parametrize(
    "edit",
    [
        lambda v: dataclasses.replace(v, records=[dataclasses.replace(r, segments=[Segment("a dog", False)]) for r in v.records]),
        lambda v: dataclasses.replace(v, records=[dataclasses.replace(v.records[0], evidence=True), v.records[1]]),
        lambda v: dataclasses.replace(v, evidence=[dataclasses.replace(v.evidence[0], ranked_past_k=12)]),
        lambda v: dataclasses.replace(v, answer=dataclasses.replace(v.answer, f1=0.5)),
    ],
    ids=["record text", "record evidence flag", "evidence rank past k", "answer F1"],
)
def test_changing_a_nested_view_changes_the_key(edit):
    """A field of a record, an evidence turn or the answer, however deep, is in the key too."""
    assert fragment_key(edit(view()), False) != fragment_key(view(), False)


def test_estimated_tokens_change_the_key():
    """Whether token counts are estimates (the macro's other input) is in the key."""
    assert fragment_key(view(), True) != fragment_key(view(), False)


def test_the_same_view_has_the_same_key():
    """Two equal views share a key (the section is rendered once), and the rendered HTML is not part of it."""
    assert fragment_key(view(), False) == fragment_key(dataclasses.replace(view(), html="<section>"), False)
