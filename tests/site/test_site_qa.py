"""QA rows say what they are: protocol, judge and endpoint host on each row with answers, badges
for a local endpoint, prices from another provider and unparsed verdicts past 1%, and rows that differ only
in answers or judging say so.

The site is test_site.py's site with answers: recency and full_history answered and judged by the local
chat server (tests/llm_server.py), and a retrieval-only mneme run on the same corpus.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers.html import parse
from helpers.stores import board, summaries

from evals.judge.metrics import MetricValue
from evals.site._qa import endpoint_host, qa_caveats, qa_note, twin_note


def _row(site: Path, run_id: str):
    table = parse(board(site)).find("table", "leaderboard")
    return next(tr for tr in table.find_all("tr") if any(a.attrs.get("href") == f"runs/{run_id}.html" for a in tr.find_all("a")))


def _answered(store: Path):
    return next(s for s in summaries(store) if s.answer_model is not None)


def test_a_row_with_answers_names_its_protocol_judge_and_endpoint(answers_site: Path, answers_store: Path):
    """The row of an answered run says its protocol, its judge model and the endpoint's host."""
    s = _answered(answers_store)
    text = _row(answers_site, s.run_id).find("small", "qa").text()
    assert f"protocol {s.answer_protocol or 'harness'}" in text and f"judge {s.judge_model}" in text
    assert endpoint_host(s.llm_base_url) in text and endpoint_host(s.llm_base_url).startswith("127.0.0.1:")


def test_a_local_endpoint_is_a_badge(answers_site: Path, answers_store: Path):
    """Answers from a server on this machine carry a "local endpoint" badge on the leaderboard and the run page."""
    s = _answered(answers_store)
    badges = [d.find("summary").text() for d in _row(answers_site, s.run_id).find_all("details", "qa")]
    assert "local endpoint" in badges
    run_page = parse(answers_site / "runs" / f"{s.run_id}.html")
    assert "local endpoint" in [d.find("summary").text() for d in run_page.find_all("details", "qa")]


def test_a_retrieval_only_row_has_no_qa_note(answers_site: Path, answers_store: Path):
    """The run without answers says nothing of protocols or endpoints."""
    s = next(s for s in summaries(answers_store) if s.answer_model is None)
    row = _row(answers_site, s.run_id)
    assert row.find_all("small", "qa") == [] and row.find_all("details", "qa") == [] and qa_note(s) == ""


def test_unparsed_verdicts_past_one_percent_are_a_badge(answers_store: Path):
    """A run whose judge left 5% of its verdicts unparsed is badged; one at 1% is not."""
    s = _answered(answers_store)
    over = dataclasses.replace(s, metrics={**s.metrics, "answer_unparsed": MetricValue(0.05, 40)})
    at = dataclasses.replace(s, metrics={**s.metrics, "answer_unparsed": MetricValue(0.01, 100)})
    assert any("unparsed" in c.label for c in qa_caveats(over))
    assert not any("unparsed" in c.label for c in qa_caveats(at))


def test_prices_from_another_provider_are_a_badge(answers_store: Path):
    """Requests to one provider priced from another's page are badged "priced elsewhere"; the same provider is not."""
    s = _answered(answers_store)
    usage = {"answer": {"model": s.answer_model, "price": {"input": 1, "output": 2, "source": "https://openai.com/pricing"}}}
    elsewhere = dataclasses.replace(s, llm_base_url="https://api.together.xyz/v1", llm_usage=usage)
    same = dataclasses.replace(s, llm_base_url="https://api.openai.com/v1", llm_usage=usage)
    assert [c.label for c in qa_caveats(elsewhere)] == ["priced elsewhere"]
    assert qa_caveats(same) == []


def test_rows_that_differ_only_in_answers_say_so(answers_store: Path):
    """Two runs of one memory, settings and k, one with answers and one without, each say how they differ."""
    s = _answered(answers_store)
    bare = dataclasses.replace(s, run_id="other", answer_model=None, judge_model=None)
    note = twin_note(s, [s, bare])
    assert "differs only in answers or judging" in note and f"answers by {s.answer_model}" in note
    assert "retrieval only, no answers" in twin_note(bare, [s, bare])
    assert twin_note(s, [s]) == ""


def _point_html(verdict: str | None, correct: bool | None) -> str:
    """One test point's section as the drill-down renders it, with an answer the judge gave ``verdict``."""
    from evals.site._drilldown import AnswerView, PointView
    from evals.site._render import make_environment

    answer = AnswerView(text="Paris", correct=correct, reason="no verdict found", keyword_hit=False, tokens=3, latency_s=0.1,
                        f1=0.0, bleu1=0.0, verdict=verdict)  # fmt: skip
    point = PointView(
        number=1, anchor="tp-3", turn_index=3, question="Where?", expected_fact="Lyon", keywords=["lyon"], hit=False,
        strict_hit=False, rank=None, context_tokens=0, record_count=0, records=[], records_hidden=0, records_hidden_tokens=0,
        all_history=False, evidence=[], evidence_hidden=0, answer=answer, verdict="miss",
    )  # fmt: skip
    return str(make_environment().get_template("_partials.html").module.point(point, ""))


def test_an_unparsed_verdict_shows_unparsed_not_not_judged():
    """A verdict the judge's reply did not give is UNPARSED on the drill-down; an answer never judged stays "not judged"."""
    assert "UNPARSED" in _point_html("unparsed", None) and "not judged" not in _point_html("unparsed", None)
    assert "not judged" in _point_html(None, None) and "UNPARSED" not in _point_html(None, None)
