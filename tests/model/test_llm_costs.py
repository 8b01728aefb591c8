"""What a run's LLM requests cost, and who served them: answer, judge and memory-write tokens
apart, each over its own denominator; sent vs served from the cache; dollars from an overridable price
table; the served model and system fingerprint; --judge-repeats. Driven through the real CLI against the
local OpenAI-compatible server (tests/helpers/llm_server.py) over real HTTP, with real DuckDB stores."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.llm_server import LLMServer
from helpers.runs import evals_run, exported_and_imported, stored_runs
from helpers.stores import failed_rows

from evals.cli import cli
from evals.model import costs

SMALL = FIXTURES / "corpus_small"  # 3 conversations, 4 test points, all answerable
EVIDENCE = FIXTURES / "evidence_corpus"  # has unanswerable test points
MINI = costs.shipped_prices().lookup("gpt-4o-mini")


def run(server: LLMServer, store: Path, *extra: str, corpus: Path = SMALL, runner: str = "mneme", repo: Path | None = None):
    """`evals run --with-answers --judge` against ``server``, retried at once."""
    return evals_run(
        server, store, corpus, "--with-answers", "--judge", *extra, runner=runner, repo=repo, key="sk-unused", backoff="0"
    )


def runs(store: Path):
    return stored_runs(store, oldest_first=True)


def points(stored) -> list:
    return [p for conv in stored.answers.points for p in conv]


def served_as(model: str | None, fingerprint: str | None):
    """A rewrite for the server: every chat reply names ``model`` and ``fingerprint`` as what served it."""

    def rewrite(kind: str, text: str, key: str) -> str:
        if kind == "embedding":
            return text
        body = json.loads(text)
        body["model"], body["system_fingerprint"] = model, fingerprint
        return json.dumps(body)

    return rewrite


# -- tokens apart, each over its own denominator ------------------------------------------------------------


def long_and_unanswerable(tmp_path: Path) -> Path:
    """evidence_corpus (unanswerable points among its questions) and a conversation long enough for
    summary_buffer to summarise (it keeps six turns)."""
    corpus = tmp_path / "corpus"
    shutil.copytree(EVIDENCE, corpus)
    turns = [{"role": ("user", "assistant")[i % 2], "content": f"Small talk number {i} about the weather."} for i in range(9)]
    turns[0]["content"] = "My bike is a green Bianchi."
    turns.append(
        {
            "role": "user",
            "content": "Thanks",
            "test_at": {"question": "what bike", "expected_fact": "a green Bianchi", "expected_keywords": ["Bianchi"]},
        }
    )
    (corpus / "03_long.json").write_text(
        json.dumps({"schema_version": "1", "id": "03_long", "description": "long", "turns": turns})
    )
    return corpus


def test_answer_judge_and_memory_write_tokens_are_tallied_apart(server, store_path, tmp_path):
    """summary_buffer with answers and a judge on a corpus with unanswerable points: each kind counts its own
    requests and tokens; answers are over every point answered (unanswerable ones included, each is answered),
    verdicts over the points judged, memory writes over the conversations."""
    result = run(server, store_path, corpus=long_and_unanswerable(tmp_path), runner="summary_buffer")
    assert result.exit_code == 0, result.output
    (stored,) = runs(store_path)
    usage, every = stored.summary.llm_usage, points(stored)
    judged = [p for p in every if p.answerable]
    assert len(judged) < len(every)  # the corpus has unanswerable points
    assert (usage["answer"]["sent"], usage["judge"]["sent"], usage["memory_write"]["sent"]) == (
        server.requests["answer"], server.requests["judge"], server.requests["summary"],
    )  # fmt: skip
    assert server.requests["summary"] > 0
    assert (usage["answer"]["per"], usage["judge"]["per"], usage["memory_write"]["per"]) == (
        len(every),
        len(judged),
        len(stored.run.conversations),
    )
    assert usage["answer"]["prompt_tokens"] == sum(p.prompt_tokens for p in every)
    assert usage["answer"]["completion_tokens"] == sum(p.completion_tokens for p in every)
    assert usage["judge"]["prompt_tokens"] == sum(p.judge_prompt_tokens for p in judged)
    # The three kinds add up to every request's tokens, as the run's total counts them.
    assert sum(t["prompt_tokens"] for t in usage.values()) == stored.summary.llm_prompt_tokens
    metrics = stored.summary.metrics
    answer_tokens = sum(p.prompt_tokens + p.completion_tokens for p in every)
    assert metrics["answer_tokens_per_point"].value == pytest.approx(answer_tokens / len(every))
    assert metrics["answer_tokens_per_point"].n == len(every)
    assert metrics["judge_tokens_per_point"].n == len(judged)
    write = usage["memory_write"]
    assert metrics["memory_write_tokens_per_conversation"].value == pytest.approx(
        (write["prompt_tokens"] + write["completion_tokens"]) / len(stored.run.conversations)
    )
    correct = stored.summary.answers_correct
    assert metrics["tokens_per_correct"].value == pytest.approx(
        (answer_tokens + write["prompt_tokens"] + write["completion_tokens"]) / correct
    )
    assert "llm answer (gpt-4o-mini): " in result.output and "per test point answered" in result.output
    assert "llm memory-write (gpt-4o-mini): " in result.output and "per conversation" in result.output


def test_a_force_rerun_served_from_the_cache_spends_nothing(server, store_path, clean_repo):
    """On a clean commit the rerun is reused; with --force it is made again, every reply from the cache:
    nothing sent, $0 spent, the cached tokens reported apart, each answer and verdict marked cached. What a
    correct answer costs is the same either way (list price, whatever the cache held)."""
    first = run(server, store_path, repo=clean_repo)
    assert first.exit_code == 0, first.output
    sent = server.total
    again = run(server, store_path, "--force", repo=clean_repo)
    assert again.exit_code == 0, again.output
    assert server.total == sent
    before, after = runs(store_path)
    fresh, cached = before.summary.llm_usage, after.summary.llm_usage
    for kind in ("answer", "judge"):
        assert cached[kind]["sent"] == cached[kind]["prompt_tokens"] == cached[kind]["completion_tokens"] == 0
        assert cached[kind]["cached"] == fresh[kind]["sent"]
        assert (cached[kind]["cached_prompt_tokens"], cached[kind]["cached_completion_tokens"]) == (
            fresh[kind]["prompt_tokens"], fresh[kind]["completion_tokens"],
        )  # fmt: skip
    assert after.summary.metric("usd_spent").value == 0
    spent = sum(t["prompt_tokens"] * MINI.input + t["completion_tokens"] * MINI.output for t in fresh.values()) / 1e6
    assert before.summary.metric("usd_spent").value == pytest.approx(spent) and spent > 0
    assert after.summary.metric("usd_per_correct").value == pytest.approx(before.summary.metric("usd_per_correct").value)
    assert all(p.answer_cached and p.judge_cached for p in points(after))
    assert not any(p.answer_cached or p.judge_cached for p in points(before))
    assert "llm $: $0 spent" in again.output


def test_dollars_follow_the_price_table_and_an_unpriced_model_says_so(server, store_path, tmp_path):
    """A model the shipped table lacks gets no $ (and the run says so); a price file given to the run, or to
    the leaderboard afterwards, prices it."""
    result = run(server, store_path, "--answer-model", "local-llama", "--judge-model", "local-llama")
    assert result.exit_code == 0, result.output
    assert "no price for local-llama" in result.output
    (stored,) = runs(store_path)
    assert stored.summary.metric("usd_spent") is None and stored.summary.metric("usd_per_correct") is None
    assert stored.summary.metric("tokens_per_correct") is not None  # tokens need no price
    prices = tmp_path / "prices.toml"
    prices.write_text('[prices."local-llama"]\ninput = 1.0\noutput = 2.0\ndate = "2025-01-01"\nsource = "our invoice"\n')
    board = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path), "--prices", str(prices), "--format", "json"])
    assert board.exit_code == 0, board.output
    (row,) = json.loads(board.output)
    usage = stored.summary.llm_usage
    expected = sum(t["prompt_tokens"] * 1.0 + t["completion_tokens"] * 2.0 for t in usage.values()) / 1e6
    assert row["metrics"]["usd_spent"]["value"] == pytest.approx(expected)
    assert row["llm_usage"]["answer"]["price"] == {"input": 1.0, "output": 2.0, "date": "2025-01-01", "source": "our invoice"}
    csv_board = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path), "--prices", str(prices), "--format", "csv"])
    (record,) = csv.DictReader(io.StringIO(csv_board.output))
    assert (
        float(record["usd_spent"]) == pytest.approx(expected)
        and json.loads(record["llm_usage"])["judge"]["price"]["input"] == 1.0
    )
    # Given to the run itself, the price is recorded with it.
    again = run(
        server, store_path, "--answer-model", "local-llama", "--judge-model", "local-llama", "--prices", str(prices), "--force"
    )
    assert again.exit_code == 0, again.output
    assert runs(store_path)[-1].summary.llm_usage["judge"]["price"]["source"] == "our invoice"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[prices."m"]\ninput = -1\noutput = 1\n', "prices.m.input: expected a number of dollars"),
        ('[prices."m"]\ninput = 1\n', "prices.m: no output price"),
        ('[prices."m"]\ninput = 1\noutput = 1\ncurrency = "EUR"\n', "prices.m.currency: unknown key"),
        ('[price."m"]\ninput = 1\noutput = 1\n', "price: unknown key"),
        ("[prices\n", "not valid TOML"),
    ],
)
def test_a_bad_price_file_is_one_line_naming_the_file_and_key_before_any_work(server, store_path, tmp_path, text, problem):
    prices = tmp_path / "prices.toml"
    prices.write_text(text)
    result = run(server, store_path, "--prices", str(prices))
    assert result.exit_code != 0
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {prices}") and problem in line
    assert server.total == 0 and not store_path.exists()


def test_the_shipped_prices_each_have_a_date_and_a_source():
    table = costs.shipped_prices()
    assert table.prices and all(p.date and p.source.startswith("https://") for p in table.prices.values())
    # A dated snapshot not listed takes its undated name's price; an undated alias never takes a snapshot's.
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini") is not None
    assert table.lookup("gpt-4o") is None and table.lookup("gpt-4o-2024-08-06") is not None


@pytest.mark.parametrize(
    ("asked", "served", "same"),
    [
        ("gpt-4o-mini", "gpt-4o-mini", True),
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", True),
        ("gpt-4", "gpt-4-0613", True),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20240620", True),
        ("gpt-4o", "gpt-4o-mini-2024-07-18", False),
        ("gpt-4o-2024-08-06", "gpt-4o-2024-11-20", False),  # a pinned snapshot served as another
        ("gpt-4o-mini", "llama-3.1-8b-instruct", False),
    ],
)
def test_the_served_model_rule(asked, served, same):
    assert costs.same_model(asked, served) is same


def test_the_suite_price_table_overrides_the_shipped_one(tmp_path):
    from evals.run.suite import SuiteError, read_suite

    suite = tmp_path / "suite.toml"
    suite.write_text('[[matrix]]\ncorpora = ["c"]\n[prices."gpt-4o-mini"]\ninput = 9\noutput = 9\n')
    assert read_suite(suite).price_table().lookup("gpt-4o-mini").input == 9
    assert read_suite(suite).price_table().lookup("gpt-4o-2024-08-06") is not None
    suite.write_text('[[matrix]]\ncorpora = ["c"]\n[prices."gpt-4o-mini"]\ninput = "cheap"\noutput = 9\n')
    with pytest.raises(SuiteError, match=r"suite.toml: prices.gpt-4o-mini.input: expected a number"):
        read_suite(suite)


# -- served model and fingerprint ---------------------------------------------------------------------------


def test_the_served_model_and_fingerprint_are_kept_per_request_and_from_the_cache(server, store_path):
    """Each answer keeps the model and system fingerprint its reply named, its verdict the judge's model; the
    run sums them per kind. A rerun from the cache keeps them (the cache holds the whole reply). A dated
    snapshot of the model asked is no difference."""
    server.rewrite = served_as("gpt-4o-mini-2024-07-18", "fp_44709d6fcb")
    assert run(server, store_path).exit_code == 0
    server.rewrite = served_as("someone-else", "fp_other")  # the cache must not ask
    result = run(server, store_path)
    assert result.exit_code == 0, result.output
    for stored in runs(store_path):
        assert {(p.served_model, p.fingerprint, p.judge_served_model) for p in points(stored)} == {
            ("gpt-4o-mini-2024-07-18", "fp_44709d6fcb", "gpt-4o-mini-2024-07-18")
        }
        assert stored.summary.llm_usage["answer"]["served"] == [
            {"model": "gpt-4o-mini-2024-07-18", "fingerprint": "fp_44709d6fcb", "requests": 4}
        ]
    listing = CliRunner().invoke(cli, ["runs", "--store", str(store_path)])
    assert "llm served" in listing.output and "as asked" in listing.output
    assert "warning:" not in result.output


def test_a_run_served_by_another_model_is_labelled(server, store_path, tmp_path):
    """The endpoint names another model than the one asked for: `evals runs`, the leaderboard and the run
    page say so, and the run itself warns."""
    server.rewrite = served_as("llama-3.1-8b-instruct", None)
    result = run(server, store_path)
    assert result.exit_code == 0, result.output
    assert "warning: answer requests asked for gpt-4o-mini were answered by llama-3.1-8b-instruct (4 of 4)" in result.output
    listing = CliRunner().invoke(cli, ["runs", "--store", str(store_path)]).output
    assert "llama-3.1-8b-instruct (4/4)" in listing
    board = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path)]).output
    assert "mneme!#" in board and "# served model differs" in board  # ! is the hash embedder's mark
    (stored,) = runs(store_path)
    from evals.site import build_site

    out = tmp_path / "site"
    build_site(store_path, out)
    page = (out / "runs" / f"{stored.summary.run_id}.html").read_text()
    assert "served model differs" in page and "not the model asked for" in page
    assert "What the answers cost" in page and "per test point answered" in page and "$0.15 in / $0.6 out per 1M" in page
    assert "served model differs" in (out / "index.html").read_text()


@pytest.mark.parametrize(("field", "value"), [("model", 5), ("system_fingerprint", "x" * 300)])
def test_a_reply_naming_a_malformed_served_model_is_an_error(server, store_path, field, value):
    def rewrite(kind: str, text: str, key: str) -> str:
        body = json.loads(text)
        body[field] = value
        return json.dumps(body)

    server.rewrite = rewrite
    result = run(server, store_path)
    assert result.exit_code != 0
    (line,) = result.output.strip().splitlines()
    assert "malformed response" in line and field in line and "turn" in line
    (failed,) = failed_rows(store_path)  # kept as a failed run, never a figure
    assert "malformed response" in failed[3]


# -- judge repeats ------------------------------------------------------------------------------------------


def flaky_judge():
    """A rewrite turning every third verdict the server gives into its opposite: a judge that varies."""
    count = [0]

    def rewrite(kind: str, text: str, key: str) -> str:
        if kind != "judge":
            return text
        count[0] += 1
        if count[0] % 3:
            return text
        body = json.loads(text)
        verdict = json.loads(body["choices"][0]["message"]["content"])
        verdict["correct"] = not verdict["correct"]
        body["choices"][0]["message"]["content"] = json.dumps(verdict)
        return json.dumps(body)

    return rewrite


def test_judge_repeats_ask_each_verdict_n_times_and_report_mean_and_sd(server, store_path):
    """--judge-repeats 3: three verdicts per judged point, in order; the point's verdict is repeat 0's;
    the run reports accuracy's mean and sd over the repeats."""
    server.rewrite = flaky_judge()
    result = run(server, store_path, "--judge-repeats", "3")
    assert result.exit_code == 0, result.output
    assert server.requests["judge"] == 3 * 4 and server.requests["answer"] == 4
    (stored,) = runs(store_path)
    every = points(stored)
    assert all(len(p.repeat_verdicts) == 3 for p in every)
    assert [p.correct for p in every] == [p.repeat_verdicts[0] == "correct" for p in every]
    accuracies = [sum(p.repeat_verdicts[r] == "correct" for p in every) / len(every) for r in range(3)]
    mean = sum(accuracies) / 3
    sd = math.sqrt(sum((a - mean) ** 2 for a in accuracies) / 2)
    metrics = stored.summary.metrics
    assert metrics["judge_repeat_accuracy_mean"].value == pytest.approx(mean)
    assert metrics["judge_repeat_accuracy_sd"].value == pytest.approx(sd) and sd > 0
    assert stored.summary.llm_usage["judge"]["sent"] == 12 and stored.summary.llm_settings["judge_repeats"] == 3
    assert f"accuracy {mean:.3f} ± {sd:.3f} (mean ± sd over 3 repeats" in result.output


def test_repeat_zero_keeps_the_single_verdict_cache_key(server, store_path):
    """A run judged once, then one judged twice: the second sends only the second repeat's verdicts; and a
    run judged once after that sends nothing. Runs with and without repeats are different configurations."""
    assert run(server, store_path).exit_code == 0
    server.reset_counts()
    assert run(server, store_path, "--judge-repeats", "2").exit_code == 0
    assert (server.requests["answer"], server.requests["judge"]) == (0, 4)
    server.reset_counts()
    assert run(server, store_path).exit_code == 0
    assert server.total == 0
    once, twice, again = runs(store_path)
    assert once.summary.config_key == again.summary.config_key != twice.summary.config_key
    assert once.answers.points[0][0].repeat_verdicts is None


def test_judge_repeats_need_the_judge(server, store_path):
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--runner",
            "mneme",
            "--corpus",
            str(SMALL),
            "--store",
            str(store_path),
            "--with-answers",
            "--judge-repeats",
            "2",
        ],
    )
    assert result.exit_code == 2 and "--judge-repeats" in result.output and "--judge" in result.output


# -- carried along: exports, old stores ------------------------------------------------------------------


def test_export_and_import_keep_the_costs_and_provenance(server, store_path, tmp_path):
    server.rewrite = served_as("gpt-4o-mini-2024-07-18", "fp_1")
    assert run(server, store_path, "--judge-repeats", "2").exit_code == 0
    (stored,) = runs(store_path)
    exported, other = exported_and_imported(store_path, stored.summary.run_id, tmp_path)
    (imported,) = runs(other)
    assert imported.summary.llm_usage == stored.summary.llm_usage
    assert points(imported) == points(stored)
    assert imported.summary.metrics["usd_spent"] == stored.summary.metrics["usd_spent"]
    # An edited tally is refused, naming where.
    document = json.loads(exported.read_text())
    document["metrics"]["answers"]["usage"]["answer"]["sent"] = -1
    exported.write_text(json.dumps(document))
    refused = CliRunner().invoke(cli, ["import", str(exported), "--store", str(tmp_path / "third.duckdb")])
    assert refused.exit_code != 0 and "usage.answer.sent" in refused.output


def test_runs_stored_before_the_costs_show_none(tmp_path):
    """A store from before (schema 5, with answer runs) migrates; its runs have no tallies, so no cost column."""
    path = tmp_path / "schema5.duckdb"
    with gzip.open(FIXTURES / "stores" / "schema5.duckdb.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    assert CliRunner().invoke(cli, ["migrate", "--store", str(path)]).exit_code == 0
    stored = [s for s in runs(path) if s.answers is not None]
    assert stored and all(s.summary.llm_usage is None and s.answers.usage == {} for s in stored)
    assert all(p.answer_cached is None and p.served_model is None for s in stored for p in points(s))
    board = CliRunner().invoke(cli, ["leaderboard", "--store", str(path), "--wide"])
    assert board.exit_code == 0 and "answer accuracy" in board.output and "$ spent" not in board.output  # no run has one
    listing = CliRunner().invoke(cli, ["runs", "--store", str(path)])
    assert listing.exit_code == 0 and "llm served" not in listing.output
