"""The LLM endpoints: secrets, hangs, unbounded bodies and replies a hostile server sends.

Each test is named for what must hold and drives the real CLI
against the local OpenAI-compatible server over real HTTP (tests/helpers/llm_server.py), which can drip,
stall, compress, echo the key and rewrite its replies as such a server would. A refused reply is
a one-line error naming where it happened; nothing is stored, and it is never cached.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.cli import CORPUS_SMALL, evals
from helpers.errors import one_line_error
from helpers.llm_server import LLMServer, replying
from helpers.runs import evals_run, stored_runs

from evals.cli import legacy_cli
from evals.io.cache import Cache, cache_path_for

POINTS = 4  # test points in corpus_small
KEY = "sk-proj-hostile-27-3f9a1c5e7b2d"


# -- helpers ------------------------------------------------------------------------------------


def llm_env(**extra: str | None) -> dict:
    return {"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None, **extra}


def answers_run(server: LLMServer, store: Path, *extra: object, runner: str = "recency"):
    """`evals run --with-answers --judge`, one request at a time, against ``server``."""
    options = ("--with-answers", "--judge", "--concurrency", "1", *extra)
    return evals_run(server, store, CORPUS_SMALL, *options, runner=runner, key=KEY)


def cached_values(store: Path, kind: str) -> list[bytes]:
    """Every value the cache beside ``store`` holds in namespaces of ``kind`` (``chat``, ``embedding``)."""
    path = cache_path_for(store)
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as con:
        return [
            bytes(v) for (v,) in con.execute("SELECT value FROM cache_entries WHERE namespace LIKE ?", [f"{kind}:%"]).fetchall()
        ]


def with_usage(text: str, **usage: object) -> str:
    payload = json.loads(text)
    payload["usage"].update(usage)
    return json.dumps(payload)


def escaped(secret: str, backslashes: int = 1) -> str:
    """``secret`` with every character a JSON ``\\u`` escape, behind ``backslashes`` backslashes."""
    return "".join("\\" * backslashes + f"u{ord(c):04x}" for c in secret)


def evals_process(*args: object, env: dict) -> subprocess.Popen:
    """`evals ARGS` in a process of its own (to be interrupted, or to time out), SIGINT raising
    KeyboardInterrupt as it does in a terminal."""
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from evals.cli import cli; cli(sys.argv[1:], prog_name='evals')"
    )
    full_env = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    for name in [k for k, v in env.items() if v is None]:
        full_env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-c", code, *[str(a) for a in args]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=ROOT,
    )


def finish(process: subprocess.Popen, timeout: float) -> tuple[int | None, str]:
    """Wait up to ``timeout`` seconds: (exit code, stderr); (None, …) after killing it when it had not ended."""
    try:
        _, err = process.communicate(timeout=timeout)
        return process.returncode, err
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        return None, err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "results.duckdb"


# -- secrets --------------------------------------------------------------------------------------


def test_key_echoed_as_json_escapes_is_masked_everywhere(tmp_path, server):
    """A server that echoes the key with every character a ``\\u`` escape (in answers and summaries; in
    the judge's reason, escaped twice, since the verdict is JSON inside JSON): the key reaches no
    file (--output, the store, the cache, an export, the site and its copy of the store), in any
    form, and the stored answers and reasons show ``***`` where it was."""
    server.echo_key = True
    server.rewrite = lambda kind, text, key: text.replace(key, escaped(key, 2 if kind == "judge" else 1))
    store = tmp_path / "results.duckdb"
    for runner in ("recency", "summary_buffer"):
        result = answers_run(server, store, "--output", tmp_path / f"{runner}.json", runner=runner)
        assert result.exit_code == 0, result.output
        assert KEY not in result.output
    runs = stored_runs(store)
    points = [p for run in runs for conv in run.answers.points for p in conv]
    assert points and all(p.answer.endswith("(sent with key ***)") for p in points)
    assert all(p.reason.endswith("(sent with key ***)") for p in points if p.correct is not None)
    for run in runs:
        exported = evals("export", run.summary.run_id, "--store", store, "--output", tmp_path / f"{run.summary.run_id}.json")
        assert exported.exit_code == 0, exported.output
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    forms = [KEY, escaped(KEY, 1), escaped(KEY, 2)]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".duckdb" and "site" in p.parts for p in files)  # the site's copy of the store
    assert [p for p in files for form in forms if form.encode() in p.read_bytes()] == []
    values = cached_values(store, "chat")
    assert values and not [v for v in values for form in forms if form.encode() in v]


@pytest.mark.parametrize(
    "url",
    [
        "http://user:sk-url-secret-0123456789@127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1?api-key=sk-url-secret-0123456789",
        "http://127.0.0.1:9/v1#sk-url-secret-0123456789",
    ],
    ids=["userinfo", "query", "fragment"],
)
def test_base_url_holding_credentials_is_refused(tmp_path, url):
    """A base URL is recorded with the run (store, cache namespace, `evals runs`, run page), so one
    carrying a secret is refused before any work, as --base-url, as $OPENAI_BASE_URL (evals run,
    python -m evals) and for --embedder openai, and the secret is not echoed."""
    store = tmp_path / "results.duckdb"
    base = ["run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--repo", tmp_path]
    as_option = evals(*base, "--with-answers", "--base-url", url, env=llm_env())
    as_variable = evals(*base, "--with-answers", env=llm_env(OPENAI_BASE_URL=url))
    for result in (as_option, as_variable):
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--base-url'" in result.output and "recorded with every run" in result.output
    legacy = CliRunner().invoke(
        legacy_cli,
        ["--runner", "recency", "--corpus", str(CORPUS_SMALL), "--output", str(tmp_path / "o.json"), "--with-answers"],
        env=llm_env(OPENAI_BASE_URL=url, EVALS_STORE=str(store)),
    )
    embedder = CliRunner().invoke(
        legacy_cli,
        ["--runner", "mneme", "--embedder", "openai", "--corpus", str(CORPUS_SMALL), "--output", str(tmp_path / "o.json")],
        env=llm_env(OPENAI_BASE_URL=url, EVALS_STORE=str(store)),
    )
    for result in (legacy, embedder):
        line = one_line_error(result, warnings=True)
        assert line.startswith("Error: $OPENAI_BASE_URL: the URL ") and ("credentials" in line or "query or fragment" in line)
    for result in (as_option, as_variable, legacy, embedder):
        assert "sk-url-secret" not in result.output
    assert not store.exists() and not cache_path_for(store).exists() and not (tmp_path / "o.json").exists()


def embedder_run(server_url: str, store: Path, *extra: object, repo: Path | None = None):
    """`evals run --runner mneme --option embedder=openai`, its endpoint from $OPENAI_BASE_URL."""
    return evals(
        "run", "--runner", "mneme", "--option", "embedder=openai", "--corpus", CORPUS_SMALL, "--store", store,
        "--repo", repo or store.parent, *extra,
        env=llm_env(OPENAI_BASE_URL=server_url),
    )


def test_embedder_error_quoting_the_key_is_masked(server, store):
    """--embedder openai: the server's 401 quoting the key is a one-line error with the key masked, as on the chat path."""
    server.fail_next("401")
    line = one_line_error(embedder_run(server.base_url, store), warnings=True)
    assert "HTTP 401" in line and "***" in line and KEY not in line
    assert server.authorizations == [f"Bearer {KEY}"] and stored_runs(store) == []


def test_embedder_over_plain_http_is_warned_about(store):
    """--embedder openai sends the key to $OPENAI_BASE_URL: over plain http to another host, a warning comes first."""
    result = embedder_run("http://0.0.0.0:9/v1", store)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "warning: the API key will be sent unencrypted to http://0.0.0.0:9/v1 (plain http); "
        "use https, or a server on this machine"
    )
    assert KEY not in result.output


# -- hangs and unbounded bodies -------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["drip", "drip_body"])
def test_dripping_response_times_out_as_a_whole(tmp_path, fault):
    """A server sending a byte every half second (from the status line, or after the headers) is given
    --request-timeout for the whole response, not for each read: the run ends with a one-line error."""
    with LLMServer(drip_s=0.5) as server:
        server.fail_next(fault)
        started = time.monotonic()
        process = evals_process(
            "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", tmp_path / "r.duckdb", "--repo", tmp_path,
            "--base-url", server.base_url, "--with-answers", "--request-timeout", "2", "--max-retries", "0", "--concurrency", "1",
            env=llm_env(),
        )
        code, err = finish(process, timeout=30)
    elapsed = time.monotonic() - started
    assert code == 1, (code, err)
    assert "no complete response within 2 s" in err and elapsed < 20
    assert stored_runs(tmp_path / "r.duckdb") == []


@pytest.mark.parametrize("how", ["drip", "slow"])
def test_ctrl_c_abandons_requests_in_flight(tmp_path, how):
    """Ctrl-C while answers are in flight (a dripping server; one taking 30 s per reply): exit 130
    within a few seconds, the requests abandoned, nothing stored and nothing cached."""
    with LLMServer(drip_s=0.5, delay_s=30 if how == "slow" else 0) as server:
        if how == "drip":
            server.fail_next(*["drip"] * POINTS)
        store = tmp_path / "r.duckdb"
        process = evals_process(
            "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--repo", tmp_path,
            "--base-url", server.base_url, "--with-answers", "--concurrency", "4", "--request-timeout", "120",
            env=llm_env(),
        )
        deadline = time.monotonic() + 60
        while server.in_flight < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.in_flight >= 2, "the run never had requests in flight"
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        code, err = finish(process, timeout=20)
        elapsed = time.monotonic() - interrupted
    assert code == 130, (code, err)
    assert elapsed < 8 and "Interrupted." in err and "Traceback" not in err
    assert stored_runs(store) == [] and cached_values(store, "chat") == []


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_response_body_is_capped_once_decoded(server, store, compressed):
    """An answer body over 8 MiB (as sent, or once a small gzip body is expanded) is a malformed
    response, named, before it is read any further; nothing is stored or cached."""
    size = (24 if compressed else 9) * 1024**2
    server.gzip = compressed
    server.rewrite = replying("answer", "x" * size)
    line = one_line_error(answers_run(server, store), warnings=True)
    assert "(answer): malformed response from" in line and "larger than 8 MiB" in line
    assert ("once decompressed" in line) == compressed
    assert stored_runs(store) == [] and cached_values(store, "chat") == []


# -- replies that must be refused where they are parsed -------------------------------------------


def refused_usage(server: LLMServer, store: Path, value: object) -> None:
    """A reply whose usage.prompt_tokens is ``value`` is refused when parsed: one line, nothing stored,
    nothing cached; the same run against an honest server then asks for every reply afresh."""
    server.rewrite = lambda kind, text, key: with_usage(text, prompt_tokens=value)
    line = one_line_error(answers_run(server, store), warnings=True)
    assert "(answer): malformed response from" in line
    assert "usage.prompt_tokens is " in line or "a number of 31 digits" in line
    assert stored_runs(store) == [] and cached_values(store, "chat") == []
    server.rewrite = None
    server.reset_counts()
    assert answers_run(server, store).exit_code == 0
    assert server.requests["answer"] == POINTS


@pytest.mark.parametrize("value", [True, "12", 1.5, None], ids=["bool", "string", "float", "null"])
def test_usage_that_is_not_a_count_is_refused(server, store, value):
    refused_usage(server, store, value)


def test_lone_surrogate_in_an_answer_is_a_malformed_reply(server, store):
    """An answer holding a lone surrogate (``\\ud800``, not a character) is a one-line malformed reply, not a traceback."""
    server.rewrite = replying("answer", "caf\ud800")
    line = one_line_error(answers_run(server, store), warnings=True)
    assert "(answer): malformed response from" in line and "lone surrogate" in line
    assert stored_runs(store) == [] and cached_values(store, "chat") == []


@pytest.mark.parametrize("value", [-4_000_000, 10**30, 2**31], ids=["negative", "huge", "int32"])
def test_negative_or_huge_usage_is_refused_and_not_cached(server, store, value):
    refused_usage(server, store, value)


def test_cached_reply_failing_validation_is_asked_again(server, tmp_path):
    """A cached reply that fails validation (cached by a version that checked less) is asked afresh
    and replaced, so it does not fail, or count, on every rerun."""
    from evals.run.llm import ChatClient

    body = ChatClient.body("m", [{"role": "system", "content": "answer"}, {"role": "user", "content": "hello"}])
    bad = {"choices": [{"message": {"content": "old"}}], "usage": {"prompt_tokens": -4_000_000, "completion_tokens": 1}}
    with Cache.open(tmp_path / "c.duckdb") as cache:
        client = ChatClient(base_url=server.base_url, cache=cache)
        cache.put(client.namespace, client.key(body), json.dumps({"body": json.dumps(bad), "latency_s": 0.1}).encode())
        fresh = client.complete(body, "test")
        again = ChatClient(base_url=server.base_url, cache=cache).complete(body, "test")
        client.close()
    assert not fresh.cached and fresh.prompt_tokens >= 0 and fresh.content != "old"
    assert again.cached and again.content == fresh.content
    assert server.requests["answer"] == 1


def test_judge_reply_with_a_duplicate_key_is_unparsed(server, store):
    """``{"correct": false, "correct": true}`` is not read as its last value (nor its first): the
    verdict is stored as "unparsed", not correct, and the run goes on."""
    verdict = '{"correct": false, "correct": true, "reason": "both"}'
    server.rewrite = replying("judge", verdict)
    assert answers_run(server, store).exit_code == 0
    (stored,) = stored_runs(store)
    points = [p for conv in stored.answers.points for p in conv]
    assert points and all(p.verdict == "unparsed" and p.correct is None for p in points)


# -- options checked up front ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://127.0.0.1:99999/v1", "ftp://127.0.0.1/v1", "127.0.0.1:8080/v1", "http:///v1"]
)
def test_malformed_base_url_is_refused_up_front(tmp_path, url):
    """A base URL that is no http(s) URL is refused before any work, as --base-url (exit 2) and as
    $OPENAI_BASE_URL for python -m evals (exit 1): one line, no traceback, nothing written."""
    store = tmp_path / "results.duckdb"
    result = evals(
        "run",
        "--runner",
        "recency",
        "--corpus",
        CORPUS_SMALL,
        "--store",
        store,
        "--with-answers",
        "--base-url",
        url,
        env=llm_env(),
    )
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.output.splitlines()[-1].startswith("Error: Invalid value for '--base-url'")
    legacy = CliRunner().invoke(
        legacy_cli,
        ["--runner", "recency", "--corpus", str(CORPUS_SMALL), "--output", str(tmp_path / "o.json"), "--with-answers"],
        env=llm_env(OPENAI_BASE_URL=url, EVALS_STORE=str(store)),
    )
    assert one_line_error(legacy, warnings=True).startswith("Error: $OPENAI_BASE_URL: ")
    assert not store.exists() and not cache_path_for(store).exists() and not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("option", ["--answer-model", "--judge-model"])
@pytest.mark.parametrize("value", ["", "   "], ids=["empty", "spaces"])
def test_blank_model_is_refused(server, store, option, value):
    """A blank model name is refused by the option parser, not sent, recorded and shown."""
    result = answers_run(server, store, option, value)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: Invalid value for '{option}': a model name cannot be blank."
    assert server.total == 0 and not store.exists()


# -- the embedding endpoint -----------------------------------------------------------------------


def test_embedding_endpoint_is_in_the_cache_namespace_and_reuse_key(store, clean_repo):
    """Two servers answering for text-embedding-3-small give different vectors: a run against the second
    is neither the first's reused run nor made of its cached vectors; each server's vectors are cached
    apart, and the run records which endpoint it embedded with."""
    with LLMServer() as first, LLMServer() as second:
        second.embedding_salt = "another model behind the same name"
        assert embedder_run(first.base_url, store, repo=clean_repo).exit_code == 0
        result = embedder_run(second.base_url, store, repo=clean_repo)
        assert result.exit_code == 0, result.output
        assert not result.output.startswith("cached:") and second.requests["embedding"] > 0
        again = embedder_run(second.base_url, store, "--force", repo=clean_repo)
        assert again.exit_code == 0 and "cache: 0 computed" in again.output
        assert first.requests["embedding"] == second.requests["embedding"]
        urls = sorted(run.summary.strategy_config["embedding_base_url"] for run in stored_runs(store))
        assert urls == sorted([first.base_url, second.base_url, second.base_url])
