"""End-to-end answers and the LLM judge, driven through the real CLI against a local
OpenAI-compatible server over real HTTP (tests/helpers/llm_server.py)."""

from __future__ import annotations

import dataclasses
import json
import secrets
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.cli import CORPUS_SMALL
from helpers.llm_server import LLMServer
from helpers.runs import evals_run, exported_and_imported, stored_runs

from evals.cli import cli
from evals.io.cache import Cache, cache_path_for
from evals.judge.answer_scores import bleu1, token_f1
from evals.judge.metrics import MetricValue, ScoredRun, answer_accuracy, answer_bleu1, answer_f1
from evals.run.llm import AnswerRun, PointAnswer, prompt
from evals.store import MIGRATIONS, Store

POINTS = 4  # test points in tests/fixtures/corpus_small


@pytest.fixture
def server():
    """The local chat server, on a random port, for one test."""
    with LLMServer(slow_s=1.5) as started:
        yield started


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory):
    """One `evals run --with-answers --judge` (mneme) on corpus_small against a server of its own, shared by the
    tests that only read what it stored, sent or printed: (server, store, the command's result)."""
    folder = tmp_path_factory.mktemp("answered")
    with pytest.MonkeyPatch.context() as patch, LLMServer(slow_s=1.5) as started:
        patch.setenv("EVALS_CACHE", str(folder / "user-cache.duckdb"))
        store = folder / "results.duckdb"
        result = run(started, store)
        assert result.exit_code == 0, result.output
        yield started, store, result


@pytest.fixture
def key() -> str:
    """A fresh API key that must never be written anywhere."""
    return f"sk-evals-test-{secrets.token_hex(12)}"


def run(server: LLMServer, store: Path, *extra: str, key: str = "sk-unused", runner: str = "mneme", repo: Path | None = None):
    """`evals run --with-answers --judge` on corpus_small against ``server``."""
    return evals_run(server, store, CORPUS_SMALL, "--with-answers", "--judge", *extra, runner=runner, repo=repo, key=key)


# -- answers and verdicts ----------------------------------------------------------------------------


def test_answers_and_verdicts_are_recorded(answered):
    """A run with --with-answers --judge stores an answer and a parsed verdict at every test point."""
    server, store_path, result = answered
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    points = [p for conv in stored.answers.points for p in conv]
    assert len(points) == POINTS
    assert server.requests["answer"] == POINTS and server.requests["judge"] == POINTS
    # The server's judge says correct iff a keyword is in the answer: the verdicts must say the same.
    assert [p.correct for p in points] == [p.keyword_hit for p in points]
    assert any(p.correct for p in points) and not all(p.correct for p in points)
    assert all(p.reason and p.prompt_tokens > 0 and p.judge_prompt_tokens > 0 for p in points)


def test_answer_results_view_joins_answers_to_their_test_points(answered):
    """The answer_results view gives each answer beside its question and retrieval outcome, for ad-hoc SQL."""
    _, store_path, _ = answered
    (stored,) = stored_runs(store_path)
    with duckdb.connect(str(store_path), read_only=True) as con:
        rows = con.execute(
            "SELECT question, hit, answer, correct, llm_tokens FROM answer_results ORDER BY conversation_id, turn_index"
        ).fetchall()
    expected = [
        (point.question, score.hit, answer.answer, answer.correct)
        for result, scores, answers in zip(stored.run.conversations, stored.scores.points, stored.answers.points, strict=True)
        for point, score, answer in zip(result.test_points, scores, answers, strict=True)
    ]
    assert [row[:4] for row in rows] == expected
    assert all(row[4] > 0 for row in rows)


def test_run_summary_carries_accuracy_cost_and_requests(answered):
    """The stored run has accuracy with its interval, keyword accuracy, tokens and request counts."""
    _, store_path, _ = answered
    (stored,) = stored_runs(store_path)
    summary = stored.summary
    assert (summary.answer_model, summary.judge_model) == ("gpt-4o-mini", "gpt-4o-mini")
    accuracy = summary.metric("answer_accuracy")
    assert accuracy.value == summary.answers_correct / POINTS and accuracy.n == POINTS
    assert accuracy.low <= accuracy.value <= accuracy.high
    assert (summary.llm_requests_made, summary.llm_requests_cached) == (2 * POINTS, 0)
    assert summary.llm_prompt_tokens == sum(
        p.prompt_tokens + p.judge_prompt_tokens for conv in stored.answers.points for p in conv
    )
    assert summary.llm_settings["prompts"]["judge"] and summary.answer_latency_s > 0


def test_each_request_is_temperature_zero_with_a_seed(answered):
    """Every request asks for temperature 0 and the fixed seed; the judge asks for a JSON object."""
    server, _, _ = answered
    assert {(b["temperature"], b["seed"]) for b in server.bodies} == {(0, 42)}
    judged = [b for b in server.bodies if b["messages"][0]["content"].startswith("You are grading")]
    assert judged and all(b["response_format"] == {"type": "json_object"} for b in judged)


def test_answer_request_is_prompt_context_question(server, store_path):
    """An answer request is the answer prompt, then the memory's context, then the question."""
    run(server, store_path, runner="full_history")
    corpus = json.loads((FIXTURES / "corpus_small" / "001_editor.json").read_text())
    asked = next(i for i, t in enumerate(corpus["turns"]) if "test_at" in t)
    question = corpus["turns"][asked]["test_at"]["question"]
    # Requests run concurrently, so find this test point's by its question, not by arrival order.
    first = next(
        b for b in server.bodies if b["messages"][0]["content"] == prompt("answer") and b["messages"][-1]["content"] == question
    )
    messages = first["messages"]
    assert [m["content"] for m in messages[1:-1]] == [t["content"] for t in corpus["turns"][:asked]]
    assert messages[-1] == {"role": "user", "content": corpus["turns"][asked]["test_at"]["question"]}


def test_answer_context_holds_the_k_scored_records(server, store_path):
    """With --k 10 the answer request carries the 10 records the test point scored, not 5."""
    args = ["run", "--runner", "recency", "--k", "10", "--corpus", str(FIXTURES / "site_corpus")]
    args += ["--store", str(store_path), "--repo", str(store_path.parent), "--base-url", server.base_url, "--with-answers"]
    result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "x"})
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    point = next(p for c in stored.run.conversations for p in c.test_points if c.conversation_id == "02_far_fact")
    body = next(b for b in server.bodies if b["messages"][-1]["content"] == point.question)
    assert len(point.retrieved_records) == 10
    # The same records: recency ranks them newest first and shows them to a model in conversation order.
    assert [m["content"] for m in body["messages"][1:-1]] == point.retrieved_records[::-1]


def test_without_judge_only_keyword_accuracy(server, store_path):
    """--with-answers alone makes no judge request; accuracy is empty, keyword accuracy is not."""
    args = ["run", "--runner", "mneme", "--corpus", str(FIXTURES / "corpus_small")]
    args += ["--store", str(store_path), "--repo", str(store_path.parent), "--base-url", server.base_url, "--with-answers"]
    result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "x"})
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    assert server.requests["judge"] == 0
    assert stored.summary.metric("answer_accuracy") is None and stored.summary.metric("keyword_accuracy") is not None


def test_summary_buffer_summarises_with_the_answer_model(server, store_path):
    """With answers on, summary_buffer's summaries come from the answer model, and its configuration says so."""
    result = run(server, store_path, runner="summary_buffer")
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    assert server.requests["summary"] > 0
    assert stored.summary.strategy_config["summarize_fn"] == "chat:gpt-4o-mini"
    records = [r for c in stored.run.conversations for p in c.test_points for r in p.retrieved_records]
    assert any(r.startswith("Previous summary:") or r.startswith("user:") for r in records)


def test_answer_json_keys_are_additions(server, store_path, tmp_path):
    """--output gains metrics.answers, answers and each test point's answer; seed keys keep their values."""
    with_answers, plain = tmp_path / "a.json", tmp_path / "p.json"
    run(server, store_path, "--output", str(with_answers))
    CliRunner().invoke(
        cli,
        ["run", "--runner", "mneme", "--corpus", str(FIXTURES / "corpus_small"),
         "--store", str(store_path), "--repo", str(tmp_path), "--output", str(plain)],
    )
    a, p = json.loads(with_answers.read_text()), json.loads(plain.read_text())
    assert a["metrics"]["recall_at_k"] == p["metrics"]["recall_at_k"] and a["metrics"]["tokens"] == p["metrics"]["tokens"]
    assert set(a) - set(p) == {"answers"} and set(a["metrics"]) - set(p["metrics"]) == {"answers"}
    point = a["conversations"][0]["test_points"][0]
    assert set(point) - set(p["conversations"][0]["test_points"][0]) == {"answer"}
    assert isinstance(point["answer"]["correct"], bool)
    assert a["metrics"]["answers"]["accuracy_interval_95"][0] <= a["metrics"]["answers"]["accuracy"]


def test_answer_f1_and_bleu1_are_stored_with_intervals(answered):
    """The run stores answer_f1 and answer_bleu1: the mean over its answers of each score against
    the expected fact, with a bootstrap interval around it."""
    _, store_path, _ = answered
    (stored,) = stored_runs(store_path)
    pairs = [
        (answer.answer, point.expected_fact)
        for result, answers in zip(stored.run.conversations, stored.answers.points, strict=True)
        for point, answer in zip(result.test_points, answers, strict=True)
    ]
    for name, score in (("answer_f1", token_f1), ("answer_bleu1", bleu1)):
        value = stored.summary.metric(name)
        assert value.n == POINTS
        assert value.value == pytest.approx(sum(score(a, e) for a, e in pairs) / POINTS, abs=1e-12)
        assert value.low <= value.value <= value.high
    assert 0 < stored.summary.metric("answer_f1").value < 1


def test_answer_f1_needs_answers():
    """Without answers there is no F1 or BLEU-1 (the run has no such value), as for keyword accuracy."""
    empty = ScoredRun(run=None, scores=None, answers=None)
    assert answer_f1(empty) is None and answer_bleu1(empty) is None


def test_result_json_gives_f1_and_bleu1_per_answer(server, store_path, tmp_path):
    """--output gives each test point's answer its F1 and BLEU-1, and metrics.answers their means."""
    out = tmp_path / "a.json"
    run(server, store_path, "--output", str(out))
    document = json.loads(out.read_text())
    points = [p for c in document["conversations"] for p in c["test_points"]]
    for point in points:
        assert point["answer"]["f1"] == token_f1(point["answer"]["answer"], point["expected_fact"])
        assert point["answer"]["bleu1"] == bleu1(point["answer"]["answer"], point["expected_fact"])
    block = document["metrics"]["answers"]
    assert block["f1"] == pytest.approx(sum(p["answer"]["f1"] for p in points) / POINTS, abs=1e-12)
    assert block["f1_interval_95"][0] <= block["f1"] <= block["f1_interval_95"][1]
    assert block["bleu1_interval_95"][0] <= block["bleu1"] <= block["bleu1_interval_95"][1]


def test_leaderboard_json_carries_f1_and_bleu1(answered):
    """`evals leaderboard --format json` has answer_f1 and answer_bleu1 with value, n and interval."""
    _, store_path, _ = answered
    result = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    (stored,) = stored_runs(store_path)
    for name in ("answer_f1", "answer_bleu1"):
        value = stored.summary.metric(name)
        assert row["metrics"][name] == {"value": value.value, "n": POINTS, "low": value.low, "high": value.high}


def test_leaderboard_shows_accuracy_and_cost(answered):
    """`evals leaderboard` gains answer accuracy with its interval (in 100 columns); with --wide, keyword
    accuracy and the costs per correct answer too (tests/model/test_llm_costs.py checks their values)."""
    _, store_path, _ = answered
    compact = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path)]).output.splitlines()
    (stored,) = stored_runs(store_path)
    accuracy = stored.summary.metric("answer_accuracy")
    assert any("answer accuracy" in line for line in compact) and max(len(line) for line in compact) <= 100
    assert any(f"{accuracy.value:.3f} [{accuracy.low:.3f}, {accuracy.high:.3f}]" in line for line in compact)
    result = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path), "--wide"])
    header, row = result.output.splitlines()[:2]
    assert "answer accuracy" in header and "keyword accuracy" in header and "tokens / correct" in header
    (stored,) = stored_runs(store_path)
    accuracy = stored.summary.metric("answer_accuracy")
    assert f"{accuracy.value:.3f} [{accuracy.low:.3f}, {accuracy.high:.3f}]" in row


def test_export_and_import_keep_the_answers(answered, tmp_path):
    """A run with answers exported and imported elsewhere has the same answers and configuration."""
    _, store_path, _ = answered
    (stored,) = stored_runs(store_path)
    _, other = exported_and_imported(store_path, stored.summary.run_id, tmp_path)
    (copy,) = stored_runs(other)
    assert copy.answers.points == stored.answers.points
    assert copy.summary.config_key == stored.summary.config_key and copy.summary.metrics == stored.summary.metrics


def test_answers_config_differs_from_retrieval_only(server, store_path, tmp_path):
    """A run with answers is its own configuration: the leaderboard keeps the retrieval-only one too."""
    run(server, store_path)
    CliRunner().invoke(
        cli,
        ["run", "--runner", "mneme", "--corpus", str(FIXTURES / "corpus_small"),
         "--store", str(store_path), "--repo", str(tmp_path)],
    )
    with Store.open(store_path, read_only=True) as opened:
        latest = opened.latest_per_configuration()
    assert sorted(s.answer_model is None for s in latest) == [False, True]


def test_unanswerable_points_are_answered_but_not_judged_or_counted(server, store_path):
    """A test point marked unanswerable gets an answer but no verdict, and stays out of both accuracies."""
    corpus = FIXTURES / "evidence_corpus"
    args = [
        "run",
        "--runner",
        "full_history",
        "--corpus",
        str(corpus),
        "--store",
        str(store_path),
        "--repo",
        str(store_path.parent),
    ]
    result = CliRunner().invoke(cli, [*args, "--base-url", server.base_url, "--judge"], env={"OPENAI_API_KEY": "x"})
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    points = [
        (p, a)
        for c, answers in zip(stored.run.conversations, stored.answers.points, strict=True)
        for p, a in zip(c.test_points, answers, strict=True)
    ]
    unanswerable = [a for p, a in points if not p.answerable]
    assert unanswerable and all(a.answer and a.correct is None and not a.answerable for a in unanswerable)
    assert server.requests["answer"] == len(points) and server.requests["judge"] == len(points) - len(unanswerable)
    assert stored.summary.answers_total == stored.summary.answers_judged == len(points) - len(unanswerable)


# -- the cache -----------------------------------------------------------------------------------------


def test_rerun_makes_no_request(server, store_path):
    """Run again (outside git, so the run itself is not reused): every response comes from the cache."""
    run(server, store_path)
    before = server.total
    result = run(server, store_path)
    assert result.exit_code == 0, result.output
    assert server.total == before
    first, second = stored_runs(store_path)
    fresh = [[dataclasses.replace(p, answer_cached=True, judge_cached=True) for p in conv] for conv in second.answers.points]
    assert first.answers.points == fresh  # the same answers, now from the cache
    assert (first.summary.llm_requests_made, first.summary.llm_requests_cached) == (0, 2 * POINTS)
    assert f"llm: 0 requests made, {2 * POINTS} from cache" in result.output


def test_run_line_shows_accuracy_and_keyword_accuracy(answered):
    """With a judge, `evals run`'s line gives accuracy with its interval and correct/judged, then keyword accuracy."""
    _, store_path, result = answered
    (stored,) = stored_runs(store_path)
    summary = stored.summary
    accuracy, keyword = summary.metric("answer_accuracy"), summary.metric("keyword_accuracy")
    expected = (
        f" accuracy {accuracy.value:.3f} [{accuracy.low:.3f}, {accuracy.high:.3f}] "
        f"({summary.answers_correct}/{summary.answers_judged}) kw acc {keyword.value:.3f} -> {store_path}\n"
    )
    assert result.output.endswith(expected)


def test_rerun_on_a_clean_commit_is_a_cached_run(server, store_path, clean_repo):
    """On a clean commit, the second run is answered from the store and the server sees nothing."""
    run(server, store_path, repo=clean_repo)
    before = server.total
    result = run(server, store_path, repo=clean_repo)
    assert result.exit_code == 0 and result.output.startswith("cached: run ")
    assert server.total == before


def test_no_cache_makes_the_requests_again(server, store_path):
    """--no-cache neither reads nor writes the cache: every request is made again."""
    run(server, store_path)
    result = run(server, store_path, "--no-cache")
    assert result.exit_code == 0, result.output
    assert server.total == 2 * 2 * POINTS


def test_cache_key_ignores_the_api_key(server, store_path):
    """A different key finds the same cached responses: the key is no part of the request's identity."""
    run(server, store_path, key="sk-first")
    before = server.total
    run(server, store_path, key="sk-second")
    assert server.total == before


def test_repeated_request_is_sent_once_and_counts_as_cached(server, tmp_path):
    """The same body twice in one batch makes one request; counts and tokens match a fully cached rerun."""
    from evals.io.cache import Cache
    from evals.run.llm import ChatClient

    cache = Cache.open(tmp_path / "c.duckdb")
    body = ChatClient.body("m", [{"role": "system", "content": "x"}, {"role": "user", "content": "hello there"}])
    first, again = (ChatClient(base_url=server.base_url, cache=cache) for _ in range(2))
    first.complete_many([body, body], ["a", "b"])
    again.complete_many([body, body], ["a", "b"])
    assert server.requests["answer"] == 1
    assert (first.usage.requests_made, first.usage.requests_cached, again.usage.requests_cached) == (1, 1, 2)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (
        again.usage.prompt_tokens,
        again.usage.completion_tokens,
    )


# -- robustness ----------------------------------------------------------------------------------------


def test_429_and_500_are_retried(server, store_path):
    """HTTP 429 and 500 are retried with backoff; the run completes with every answer."""
    server.fail_next("429", "500", "429")
    result = run(server, store_path)
    assert result.exit_code == 0, result.output
    assert server.requests["fault:429"] == 2 and server.requests["fault:500"] == 1
    (stored,) = stored_runs(store_path)
    assert stored.summary.answers_total == POINTS


def test_timeout_is_retried(server, store_path):
    """A response slower than --request-timeout is abandoned and the request retried."""
    server.fail_next("slow")
    result = run(server, store_path, "--request-timeout", "0.3", "--concurrency", "1")
    assert result.exit_code == 0, result.output
    assert server.requests["fault:slow"] == 1 and len(stored_runs(store_path)) == 1


def test_exhausted_retries_are_a_clear_error(server, store_path):
    """When every attempt fails, the error names the test point and the attempts; nothing is appended."""
    server.fail_next("500", "500")
    result = run(server, store_path, "--max-retries", "1", "--concurrency", "1")
    assert result.exit_code == 1
    assert result.output.startswith("Error: conversation '001_editor', turn ")
    assert "failed after 2 attempts: HTTP 500" in result.output
    assert stored_runs(store_path) == []


def test_malformed_response_names_the_test_point_and_appends_nothing(server, store_path):
    """A body that is not JSON is a one-line error naming conversation and turn; the store gets no run,
    the cache keeps the responses that did arrive."""
    server.fail_next("ok", "malformed")
    result = run(server, store_path, "--concurrency", "1")
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("Error: conversation '002_pet', turn ") and "(answer): malformed response from" in line
    assert stored_runs(store_path) == []
    before = server.total
    assert run(server, store_path, "--concurrency", "1").exit_code == 0
    assert server.total - before == 2 * POINTS - 1  # the one answer that arrived came from the cache


def test_failed_summary_names_its_conversation_and_turn(server, store_path):
    """A summary request that fails during the play-through names where it happened; nothing is appended."""
    server.fail_next("malformed")
    result = run(server, store_path, runner="summary_buffer")
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("Error: conversation '") and ", turn " in line and "summary_buffer summary request #1" in line
    assert stored_runs(store_path) == []


def test_unreadable_verdict_is_counted_unparsed_not_fatal(server, store_path):
    """A judge reply that is not a verdict no longer stops the run: the point is stored with
    verdict "unparsed" and the reply as its reason, counted in the judged points, not correct."""
    server.fail_next(*["ok"] * POINTS, "no_verdict")
    result = run(server, store_path, "--concurrency", "1")
    assert result.exit_code == 0, result.output
    (stored,) = stored_runs(store_path)
    points = [p for conv in stored.answers.points for p in conv]
    unparsed = [p for p in points if p.verdict == "unparsed"]
    assert len(unparsed) == 1 and unparsed[0].correct is None and unparsed[0].reason == "I think it is fine."
    assert stored.answers.judged == POINTS and stored.summary.answers_judged == POINTS


def test_refused_request_is_not_retried_and_hides_the_key(server, store_path, key):
    """HTTP 401 stops the run at once; the server's message quoting the key is printed with the key masked."""
    server.fail_next("401")
    result = run(server, store_path, "--concurrency", "1", key=key)
    assert result.exit_code == 1 and server.requests["fault:401"] == 1 and server.total == 0
    assert "refused the gpt-4o-mini request: HTTP 401" in result.output
    assert key not in result.output and "***" in result.output
    assert stored_runs(store_path) == []


def test_bad_backoff_setting_is_a_clear_error(server, store_path):
    """$EVALS_LLM_BACKOFF that is not a number is a one-line error."""
    args = ["run", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store_path)]
    result = CliRunner().invoke(cli, [*args, "--with-answers", "--base-url", server.base_url], env={"EVALS_LLM_BACKOFF": "soon"})
    assert (
        result.exit_code == 1
        and result.output == "Error: EVALS_LLM_BACKOFF must be a number of seconds from 0 to 60, not 'soon'\n"
    )


def test_openai_without_a_key_fails_before_any_work(store_path, tmp_path):
    """Answers against OpenAI without a key are a one-line error; no store is created."""
    args = ["run", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store_path)]
    result = CliRunner().invoke(cli, [*args, "--with-answers"], env={"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None})
    assert result.exit_code == 1
    assert "need an API key: set OPENAI_API_KEY" in result.output
    assert not store_path.exists()


def test_concurrency_bounds_requests_in_flight(store_path):
    """--concurrency 2 keeps two requests in flight, never more."""
    with LLMServer(delay_s=0.2) as slow_server:
        result = run(slow_server, store_path, "--concurrency", "2")
        assert result.exit_code == 0, result.output
        assert slow_server.max_in_flight == 2


# -- the key -------------------------------------------------------------------------------------------


def test_key_is_sent_but_never_written(server, store_path, tmp_path, key):
    """The key reaches the server, and appears in no file: store, cache, JSON, export, site; nor on the terminal."""
    out = tmp_path / "out"
    outputs = [run(server, store_path, "--output", str(out / "run.json"), key=key, runner=r) for r in ("mneme", "summary_buffer")]
    assert all(r.exit_code == 0 for r in outputs)
    assert set(server.authorizations) == {f"Bearer {key}"}
    (run_id, *_) = [s.summary.run_id for s in stored_runs(store_path)]
    export = CliRunner().invoke(cli, ["export", run_id, "--store", str(store_path), "--output", str(out / "export.json")])
    site = CliRunner().invoke(cli, ["build-site", "--store", str(store_path), "--out", str(out / "site")])
    assert export.exit_code == 0 and site.exit_code == 0
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert store_path in files and cache_path_for(store_path) in files and (out / "site" / "index.html") in files
    assert [p for p in files if key.encode() in p.read_bytes()] == []
    assert all(key not in r.output for r in [*outputs, export, site])


# -- the store -----------------------------------------------------------------------------------------


def test_store_from_before_answers_takes_a_run_with_answers(server, store_path, tmp_path):
    """A store at the schema before answers keeps its run and takes a run with answers beside it."""
    with Store.open(store_path, migrations=MIGRATIONS[:-1]):
        pass
    CliRunner().invoke(
        cli,
        ["run", "--runner", "no_memory", "--corpus", str(FIXTURES / "corpus_small"),
         "--store", str(store_path), "--repo", str(tmp_path)],
    )
    assert run(server, store_path).exit_code == 0
    runs = stored_runs(store_path)
    assert sorted(r.answers is None for r in runs) == [False, True]
    con = duckdb.connect(str(store_path), read_only=True)
    assert con.execute("SELECT count(*) FROM test_point_answers").fetchone()[0] == POINTS
    con.close()


# -- pure parts ----------------------------------------------------------------------------------------


def test_empty_answer_run_has_no_accuracy():
    """No test point: accuracy, keyword accuracy and latency are None, never 0."""
    empty = AnswerRun(answer_model="m", judge_model="m", base_url="u", points=[[]])
    assert (empty.accuracy, empty.keyword_accuracy, empty.mean_latency_s) == (None, None, None)
    scored = ScoredRun(run=None, scores=None, answers=empty)  # type: ignore[arg-type]
    assert answer_accuracy(scored) == MetricValue(None, 0)


def test_accuracy_counts_only_judged_points():
    """Accuracy is correct / judged with a Wilson interval; keyword accuracy is over every answer."""
    point = lambda correct, kw: PointAnswer("a", 1, 1, 0.1, kw, correct, "r", 1, 1)  # noqa: E731
    answers = AnswerRun("m", "m", "u", [[point(True, True), point(False, True), point(True, False)]])
    assert answers.accuracy == 2 / 3 and answers.keyword_accuracy == 2 / 3
    accuracy = answer_accuracy(ScoredRun(run=None, scores=None, answers=answers))  # type: ignore[arg-type]
    assert accuracy.value == 2 / 3 and 0 < accuracy.low < 2 / 3 < accuracy.high < 1


# -- the original CLI ----------------------------------------------------------------------------------


def test_python_m_evals_answers_with_the_original_flags(server, tmp_path):
    """`python -m evals --with-answers --judge` (endpoint from $OPENAI_BASE_URL) writes the answers
    into the JSON; the responses are cached beside $EVALS_STORE, so a rerun makes no request,
    and the store itself is never created."""
    from evals.cli import legacy_cli

    store = tmp_path / "results.duckdb"
    env = {
        "EVALS_LLM_BACKOFF": "0.01",
        "OPENAI_API_KEY": "sk-unused",
        "OPENAI_BASE_URL": server.base_url,
        "EVALS_STORE": str(store),
    }
    corpus = str(FIXTURES / "corpus_small")
    outputs = [tmp_path / "first.json", tmp_path / "second.json"]
    for output in outputs:
        args = ["--runner", "mneme", "--corpus", corpus, "--output", str(output), "--with-answers", "--judge"]
        result = CliRunner().invoke(legacy_cli, args, env=env)
        assert result.exit_code == 0, result.output
    assert server.total == 2 * POINTS
    assert f"llm: 0 requests made, {2 * POINTS} from cache" in result.output
    first, second = (json.loads(p.read_text()) for p in outputs)
    assert first["answers"]["judge_model"] == "gpt-4o-mini"
    assert all(tp["answer"]["answer"] for c in first["conversations"] for tp in c["test_points"])
    # The same answers; each now says it came from the cache.
    assert {tp["answer"]["answer_cached"] for c in second["conversations"] for tp in c["test_points"]} == {True}
    for c in first["conversations"]:
        for tp in c["test_points"]:
            tp["answer"] |= {"answer_cached": True, "judge_cached": True}
    assert first["conversations"] == second["conversations"]
    assert cache_path_for(store).exists() and not store.exists()


def test_requests_report_progress_as_they_end(server, tmp_path):
    """Each request that was not cached reports (done, total, what) once it ends, concurrent or not."""
    from evals.run.llm import ChatClient, RetryPolicy

    bodies = [ChatClient.body("m", [{"role": "user", "content": f"question {i}"}]) for i in range(6)]
    for concurrency in (1, 3):
        steps: list[tuple[int, int, str]] = []
        client = ChatClient(
            base_url=server.base_url, api_key="sk-unused", cache=Cache.open(tmp_path / f"c{concurrency}.duckdb"),
            concurrency=concurrency,
            policy=RetryPolicy(timeout=5, retries=0, backoff=0.01),
        )  # fmt: skip
        try:
            client.complete_many(
                bodies, [f"q{i}" for i in range(6)], progress=lambda *step, steps=steps: steps.append(step), label="answers"
            )
        finally:
            client.close()
        assert steps == [(done, 6, "answers") for done in range(1, 7)]


def test_compare_tests_the_answer_accuracies_too(server, store_path):
    """`evals compare` on two runs with judged answers pairs their verdicts with McNemar's exact test."""
    from evals.judge.stats import mcnemar_exact

    run(server, store_path, runner="recency")
    run(server, store_path, runner="full_history")
    a, b = stored_runs(store_path)
    verdicts = [[p.correct for conv in s.answers.points for p in conv] for s in (a, b)]
    lost = sum(x and not y for x, y in zip(*verdicts, strict=True))
    gained = sum(y and not x for x, y in zip(*verdicts, strict=True))
    result = CliRunner().invoke(cli, ["compare", a.summary.run_id, b.summary.run_id, "--store", str(store_path)])
    assert result.exit_code == 0, result.output
    p = mcnemar_exact(lost, gained)
    assert (
        f"answers judged correct over {POINTS} shared test points: A {sum(verdicts[0])}, B {sum(verdicts[1])}; "
        f"McNemar: {lost} correct->incorrect vs {gained} incorrect->correct, p = {p:.4f}"
    ) in result.output
