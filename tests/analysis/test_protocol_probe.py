"""`evals probe-judge`: canned answers of known quality sent to a protocol's judge (the local server's
stand-in judges accept an answer that contains the gold one), accepted per kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.llm_server import LLMServer

from evals.analysis.probe import canned
from evals.benchmarks.formats import import_corpus
from evals.benchmarks.protocols import AskedPoint
from evals.cli import cli

ANSWERS = [("temporal-reasoning", "7 May 2023"), ("temporal-reasoning", "18 days"), ("multi-session", "cello and Marta"),
           ("single-session-user", "Porto"), ("knowledge-update", "blue")]  # fmt: skip


@pytest.fixture
def corpus(tmp_path) -> Path:
    items = [
        {
            "question_id": f"q{n}",
            "question_type": kind,
            "question": f"Question {n}?",
            "answer": answer,
            "question_date": "2023/06/01 (Thu) 09:00",
            "haystack_dates": ["2023/05/01 (Mon) 10:00"],
            "haystack_session_ids": [f"s{n}"],
            "haystack_sessions": [[{"role": "user", "content": f"The answer is {answer}.", "has_answer": True}]],
            "answer_session_ids": [f"s{n}"],
        }
        for n, (kind, answer) in enumerate(ANSWERS)
    ]
    source = tmp_path / "lme.json"
    source.write_text(json.dumps(items), encoding="utf-8")
    import_corpus("longmemeval", source, tmp_path / "corpus")
    return tmp_path / "corpus"


def point(gold: str, category: str = "multi-session") -> AskedPoint:
    return AskedPoint("c", 1, "When?", gold, [], [], category=category)


def test_canned_answers_of_each_kind():
    """Each kind is built from the gold answer where it applies, and left out where it does not."""
    others = ["Lisbon", "green"]
    kinds = {p.kind: p.answer for p in canned(point("7 May 2023", "knowledge-update"), others)}
    assert kinds["gold"] == "7 May 2023" and kinds["wrong_date"] == "10 May 2023"
    assert kinds["dont_know"] == "I don't know." and kinds["hedge"] == "It is one of Lisbon, 7 May 2023 or green."
    assert kinds["old_and_new"] == "It used to be Lisbon; now it is 7 May 2023."
    assert "off_by_one" not in kinds and "one_item" not in kinds
    kinds = {p.kind: p.answer for p in canned(point("18 days"), others)}
    assert kinds["off_by_one"] == "19 days" and "wrong_date" not in kinds and "old_and_new" not in kinds
    assert {p.kind: p.answer for p in canned(point("cello, Marta"), others)}["one_item"] == "cello"
    assert {p.kind: p.answer for p in canned(point("in June 2021"), others)}["wrong_date"] == "in July 2021"
    assert {p.kind: p.answer for p in canned(point("since 2019"), others)}["wrong_date"] == "since 2018"


def probe(server: LLMServer, store: Path, corpus: Path, protocol: str):
    args = [
        "probe-judge",
        "--protocol",
        protocol,
        "--corpus",
        str(corpus),
        "--store",
        str(store),
        "--base-url",
        server.base_url,
        "--format",
        "json",
    ]
    return CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "sk-test", "EVALS_LLM_BACKOFF": "0.01", "OPENAI_BASE_URL": None})


def test_probe_reports_acceptance_per_kind(sources, corpus, store_path):
    """LongMemEval's judge (here a stand-in accepting any answer holding the gold) is sent every canned
    answer once; the acceptance per kind follows: gold, hedge, old and new accepted; the rest not."""
    with LLMServer() as server:
        result = probe(server, store_path, corpus, "longmemeval")
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        kinds = {k["kind"]: k for k in report["kinds"]}
        assert report["judge_model"] == "gpt-4o-2024-08-06" and report["test_points"] == len(ANSWERS)
        assert server.requests["judge"] == sum(k["sent"] for k in kinds.values())
        assert (kinds["gold"]["sent"], kinds["gold"]["acceptance"]) == (len(ANSWERS), 1.0)
        for kind in ("hedge", "old_and_new"):
            assert kinds[kind]["sent"] and kinds[kind]["acceptance"] == 1.0
        for kind in ("wrong_date", "off_by_one", "one_item", "dont_know"):
            assert kinds[kind]["sent"] and kinds[kind]["acceptance"] == 0.0 and kinds[kind]["acceptance_high"] > 0
        assert {b["messages"][0]["content"].split("]")[0] + "]" for b in server.bodies} >= {"[JUDGE-TEMPORAL]", "[JUDGE-UPDATE]"}
        again = probe(server, store_path, corpus, "longmemeval")
        assert again.exit_code == 0 and server.requests["judge"] == sum(k["sent"] for k in kinds.values())  # cached


def test_probe_of_locomo_reports_its_f1_and_asks_nothing(sources, corpus, store_path):
    with LLMServer() as server:
        result = probe(server, store_path, corpus, "locomo")
        assert result.exit_code == 0, result.output
        kinds = {k["kind"]: k for k in json.loads(result.output)["kinds"]}
        assert server.total == 0
        assert kinds["gold"]["mean_score"] == 1.0 and kinds["dont_know"]["mean_score"] == 0.0


def test_probe_prints_a_table(sources, corpus, store_path):
    with LLMServer() as server:
        args = [
            "probe-judge",
            "--protocol",
            "mem0",
            "--corpus",
            str(corpus),
            "--store",
            str(store_path),
            "--base-url",
            server.base_url,
        ]
        result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("protocol mem0, judge gpt-4o-mini, 5 test points of ")
    assert lines[1].split() == ["kind", "sent", "accepted", "rate", "95%", "CI", "unparsed"]
    assert lines[2].split()[:4] == ["gold", "5", "5", "1.000"]


def test_probe_of_a_protocol_without_a_judge_says_what_it_scores_by(sources, corpus, store_path):
    """The table's first line names what a judge-less protocol scores by, as its unit declares it (LoCoMo's F1)."""
    with LLMServer() as server:
        args = ["probe-judge", "--protocol", "locomo", "--corpus", str(corpus), "--store", str(store_path),
                "--base-url", server.base_url]  # fmt: skip
        result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": None})
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("protocol locomo, no judge (LoCoMo's F1), 5 test points of ")
