"""Resume: a run stopped half-way by a dead endpoint, Ctrl-C or a crash is resumed by running the same
command again; every answer, verdict and summary already received comes from the cache and only the
missing requests reach the endpoint. Driven through the real CLI against the local OpenAI-compatible
server (tests/helpers/llm_server.py), over real HTTP, with real DuckDB files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.llm_server import LLMServer
from helpers.runs import stored_runs

from evals.cli import cli
from evals.io.cache import cache_path_for

CORPUS = FIXTURES / "corpus_small"
POINTS = 4  # test points in corpus_small: 4 answers, 4 verdicts


def command(server: LLMServer, store: Path, *extra: str) -> list[str]:
    return [
        "run", "--runner", "mneme", "--corpus", str(CORPUS), "--store", str(store), "--repo", str(store.parent),
        "--base-url", server.base_url, "--judge", *extra,
    ]  # fmt: skip


ENV = {"EVALS_LLM_BACKOFF": "0", "OPENAI_API_KEY": "sk-unused", "OPENAI_BASE_URL": None}


def cached_replies(store: Path) -> int:
    """Chat replies in the cache file beside the store, read as the next run will read them."""
    path = cache_path_for(store)
    if not path.exists():
        return 0
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT count(*) FROM cache_entries WHERE starts_with(namespace, 'chat:')").fetchone()[0]


@pytest.mark.parametrize("received", [2, POINTS + 2], ids=["during-answers", "during-verdicts"])
def test_dead_endpoint_then_the_same_command_sends_only_what_is_missing(server, store_path, received):
    """The endpoint answers ``received`` requests, then only 429s, past every retry: the run fails, storing
    nothing. The same command again, once the endpoint is back, sends exactly the requests not answered."""
    server.fail_next(*["ok"] * received, *["429"] * 500)
    args = command(server, store_path, "--max-retries", "1", "--concurrency", "2")
    first = CliRunner().invoke(cli, args, env=ENV)
    assert first.exit_code != 0 and "429" in first.output and stored_runs(store_path) == []
    assert server.total == received and cached_replies(store_path) == received  # each kept as it arrived
    server.clear_faults()
    server.reset_counts()
    again = CliRunner().invoke(cli, args, env=ENV)
    assert again.exit_code == 0, again.output
    assert server.total == 2 * POINTS - received  # only the missing ones
    (run,) = stored_runs(store_path)
    usage = run.summary.llm_usage
    assert usage["answer"]["cached"] + usage["judge"]["cached"] == received
    assert usage["answer"]["sent"] + usage["judge"]["sent"] == 2 * POINTS - received
    points = [p for conv in run.answers.points for p in conv]
    assert sum(p.answer_cached for p in points) == min(received, POINTS)


def _spawn(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, **{k: v for k, v in ENV.items() if v is not None}}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "evals"), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "crash"])
def test_a_run_stopped_midway_resumes_from_the_cache(store_path, how):
    """A run in its own process is stopped (Ctrl-C, or killed outright) after the endpoint has answered
    some requests; the same command again sends only the requests whose replies the cache lacks.

    The stop comes at a known point, not at a race: the endpoint holds the third request unanswered
    (a "slow" fault), so the first two replies are in the cache (one request at a time, each reply kept
    before the next is sent) and the process is waiting on the third when it is stopped."""
    with LLMServer(slow_s=120) as server:
        server.fail_next("ok", "ok", "slow")
        args = command(server, store_path, "--concurrency", "1", "--request-timeout", "300")
        process = _spawn(args)
        try:
            deadline = time.monotonic() + 60
            while not server.requests["fault:slow"] and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert process.poll() is None, process.communicate()
            process.send_signal(how)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode != 0
        if how == signal.SIGINT:
            assert "Traceback" not in err
            assert (process.returncode, err) == (130, "Interrupted.\n")
        assert stored_runs(store_path) == []
        kept = cached_replies(store_path)  # what reached the cache before the stop: the two replies sent
        assert 2 <= kept < 2 * POINTS
        assert kept == 2
        server.reset_counts()
        again = CliRunner().invoke(cli, args, env=ENV)
        assert again.exit_code == 0, again.output
        assert server.total == 2 * POINTS - kept
        (run,) = stored_runs(store_path)
        assert run.summary.llm_requests_cached == kept
