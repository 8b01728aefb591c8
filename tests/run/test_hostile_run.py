"""A run under hostile conditions: failures found before any work, secrets kept out of
what is stored and shown, Ray that does not answer, and Ctrl-C exiting 130 with nothing stored.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import PLUGINS, ROOT
from helpers.cli import CORPUS_SMALL, evals, forbid_work, stored_store
from helpers.errors import one_line_error
from helpers.hostile import KEY, answers_run
from helpers.stores import unchanged

from evals.cli import cli
from evals.store import Store

# -- 6. late failures ---------------------------------------------------------------------------


def chattr(flag: str, path: Path) -> bool:
    import subprocess

    return shutil.which("chattr") is not None and subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def refused_forced_run(store: Path) -> str:
    """The one line that refuses ``evals run --runner mneme --force`` into ``store``."""
    return one_line_error(evals("run", "--runner", "mneme", "--corpus", CORPUS_SMALL, "--store", store, "--force"))


def test_immutable_store_fails_before_the_run(tmp_path, monkeypatch):
    """An immutable store file (chattr +i) is refused before anything is computed, in one line."""
    store = stored_store(tmp_path / "store")
    forbid_work(monkeypatch)
    if not chattr("+i", store):
        pytest.skip("chattr +i is not available here (needs root and a file system that supports it)")
    try:
        with unchanged(store):
            line = refused_forced_run(store)
        assert line == f"Error: cannot write to store {store}: Operation not permitted"
    finally:
        chattr("-i", store)


def test_read_only_store_fails_before_the_run(tmp_path, monkeypatch):
    """A store file without write permission is refused before anything is computed (even for root,
    who could write it: read-only is taken as meant)."""
    store = stored_store(tmp_path / "store")
    forbid_work(monkeypatch)
    store.chmod(0o444)
    try:
        with unchanged(store):
            line = refused_forced_run(store)
        assert line == f"Error: store {store} is read-only (mode 444); make it writable (chmod u+w), or give another --store"
    finally:
        store.chmod(0o644)


def test_read_only_cache_fails_before_the_run(tmp_path, monkeypatch):
    """A read-only cache file beside the store is refused before the run, pointing at --no-cache."""
    from evals.io.cache import Cache, cache_path_for

    store = stored_store(tmp_path / "store")
    cache = cache_path_for(store)
    with Cache.open(cache) as made:
        made.put("test:x", "key", b"value")
    forbid_work(monkeypatch)
    cache.chmod(0o444)
    try:
        line = refused_forced_run(store)
        assert line == f"Error: cache {cache} is read-only (mode 444); make it writable (chmod u+w), or run with --no-cache"
    finally:
        cache.chmod(0o644)


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("--k", "2147483648", "Invalid value for '--k': 2147483648 is not in the range 1<=x<=2147483647."),
        ("--k", "0", "Invalid value for '--k': 0 is not in the range 1<=x<=2147483647."),
        ("--seed", str(2**63), f"Invalid value for '--seed': {2**63} is not in the range {-(2**63)}<=x<={2**63 - 1}."),
        ("--concurrency", "100000", "Invalid value for '--concurrency': 100000 is not in the range 1<=x<=256."),
        ("--max-retries", "1000", "Invalid value for '--max-retries': 1000 is not in the range 0<=x<=100."),
        ("--request-timeout", "nan", "Invalid value for '--request-timeout': nan is not a finite number of seconds."),
        ("--request-timeout", "inf", "Invalid value for '--request-timeout': inf is not a finite number of seconds."),
        ("--request-timeout", "1e9", "Invalid value for '--request-timeout': 1000000000.0 is not in the range 0<x<=3600."),
    ],
)
def test_numeric_options_are_checked_before_any_work(store, monkeypatch, option, value, expected):
    """An out-of-range number is refused by the option parser, before a store is opened or a run computed."""
    forbid_work(monkeypatch)
    with unchanged(store):
        result = evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, option, value)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: {expected}"


def test_jobs_is_bounded(tmp_path):
    """build-site --jobs is checked like the other numbers."""
    result = evals("build-site", "--store", tmp_path / "s.duckdb", "--out", tmp_path / "site", "--jobs", "100000")
    assert result.exit_code == 2 and "100000 is not in the range 1<=x<=64" in result.output


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "1e6"])
def test_backoff_variable_is_checked(store, value):
    """$EVALS_LLM_BACKOFF must be a finite number of seconds, 0 to 60, or the run is refused at once."""
    with unchanged(store):
        result = evals(
            "run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--with-answers", "--force",
            "--base-url", "http://127.0.0.1:9/v1", env={"EVALS_LLM_BACKOFF": value},
        )
    assert one_line_error(result) == f"Error: EVALS_LLM_BACKOFF must be a number of seconds from 0 to 60, not {value!r}"


def test_run_config_bounds_k():
    """RunConfig, what the CLI builds, refuses the same k the store could not hold."""
    from pydantic import ValidationError

    from evals.run.evaluate import RunConfig

    with pytest.raises(ValidationError):
        RunConfig(k=2**31)


def test_import_into_a_read_only_store_fails_before_reading(tmp_path):
    """`evals import` into a read-only store is refused before the files are read."""
    store = stored_store(tmp_path / "store")
    store.chmod(0o444)
    try:
        line = one_line_error(evals("import", tmp_path / "does-not-matter.json", "--store", store))
        assert line == f"Error: store {store} is read-only (mode 444); make it writable (chmod u+w), or give another --store"
    finally:
        store.chmod(0o644)


# -- 10. secrets --------------------------------------------------------------------------------

def test_judge_reply_echoing_the_key_is_masked_in_the_unparsed_reason(store):
    """A judge reply that is no verdict and quotes the key: the point is stored with verdict
    "unparsed" and the reply as its reason, the key masked there, in the store and in the cache."""
    from helpers.llm_server import LLMServer

    with LLMServer() as server:
        server.echo_key = True
        server.fail_next(*["ok"] * 4, "no_verdict")
        result = answers_run(server, store)
    assert result.exit_code == 0, result.output
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(opened.runs()[0].run_id)
    (unparsed,) = [a for conv in stored.answers.points for a in conv if a.verdict == "unparsed"]
    assert KEY not in unparsed.reason and "***" in unparsed.reason
    assert KEY.encode() not in store.read_bytes()
    assert KEY.encode() not in store.with_name("results.cache.duckdb").read_bytes()


def test_answers_and_reasons_echoing_the_key_are_scrubbed_everywhere(tmp_path):
    """Answers, judge reasons and summaries that quote the key are stored, cached, exported and
    published with it masked: the key is in no file the run and the site wrote."""
    from helpers.llm_server import LLMServer

    store = tmp_path / "results.duckdb"
    with LLMServer() as server:
        server.echo_key = True
        for runner in ("recency", "summary_buffer"):
            result = answers_run(server, store, "--output", str(tmp_path / f"{runner}.json"), runner=runner)
            assert result.exit_code == 0, result.output
            assert KEY not in result.output
    run_id = evals("runs", "--format", "json", "--store", store).output
    for summary in json.loads(run_id):
        assert (
            evals(
                "export", summary["run_id"], "--store", store, "--output", tmp_path / f"export-{summary['run_id']}.json"
            ).exit_code
            == 0
        )
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("sent with key ***" in p.read_text(encoding="utf-8", errors="replace") for p in written if p.suffix == ".html")
    leaking = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaking == []


@pytest.mark.parametrize(
    "url, warned",
    [
        ("http://0.0.0.0:9/v1", True),
        ("http://llm.example.invalid:9/v1", True),
        ("https://llm.example.invalid/v1", False),
        ("http://127.0.0.1:9/v1", False),
        ("http://localhost:9/v1", False),
        ("http://[::1]:9/v1", False),
    ],
)
def test_key_sent_in_the_clear_is_warned_about(url, warned):
    """The key going to a plain-http URL other than this machine gets a warning; https or localhost does not."""
    from evals.run.llm import exposed_key_warning

    warning = exposed_key_warning(url, KEY)
    if warned:
        assert warning == f"the API key will be sent unencrypted to {url} (plain http); use https, or a server on this machine"
    else:
        assert warning is None
    assert exposed_key_warning(url, None) is None


def test_run_prints_the_warning_before_any_request(tmp_path):
    """`evals run` prints the warning on stderr before it starts (here the server is not even there)."""
    result = CliRunner().invoke(
        cli,
        ["run", "--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--store", str(tmp_path / "r.duckdb"), "--with-answers",
         "--base-url", "http://0.0.0.0:9/v1", "--max-retries", "0", "--request-timeout", "2"],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "warning: the API key will be sent unencrypted to http://0.0.0.0:9/v1 (plain http); "
        "use https, or a server on this machine"
    )
    assert KEY not in result.output


# -- Ray connects within a bounded time; Ctrl-C exits 130 with nothing stored -----



def evals_process(*args: str, cwd: Path, env: dict | None = None, sigint_ignored: bool = False):
    """``python -m evals ARGS`` as a child process (tests/plugins on its path), stdout and stderr captured;
    ``sigint_ignored``: started with SIGINT ignored, as a shell script starts a command in the background."""
    import os
    import signal
    import subprocess
    import sys

    path = os.pathsep.join([str(PLUGINS), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "evals", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )


def finished(child, timeout: float) -> tuple[str, str]:
    """The child's stdout and stderr once it ends; it is killed if it is still running after ``timeout`` seconds."""
    try:
        return child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()


def interrupted_run(tmp_path: Path, store: Path, *executor: str, sigint_ignored: bool = False) -> tuple[int, str, float]:
    """Start a slow run, wait until it is retrieving, send SIGINT: its exit code, stderr and seconds to exit."""
    import signal
    import time

    marker = tmp_path / "retrieving"
    child = evals_process(
        "run", "--runner", "sleepy_strategy:SPEC", "--option", "seconds=120", "--option", f"marker={marker}",
        "--corpus", CORPUS_SMALL, "--store", store, "--force", "--repo", tmp_path, *executor, cwd=tmp_path,
        sigint_ignored=sigint_ignored,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), child.communicate(timeout=5)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        return child.returncode, err, time.monotonic() - started
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


@pytest.mark.slow
def test_ctrl_c_during_a_local_run_exits_130_with_nothing_stored(tmp_path, store):
    """SIGINT while the local executor plays: exit 130 within seconds, one line, the store byte for byte as it was."""
    with unchanged(store):
        code, err, seconds = interrupted_run(tmp_path, store)
    assert (code, err.splitlines()) == (130, ["Interrupted."])
    assert seconds < 10


@pytest.mark.slow
def test_sigint_reaches_a_run_started_in_the_background_of_a_script(tmp_path, store):
    """`kill -INT` to a run a script started with `&` (SIGINT ignored, as the shell hands it) still exits 130, storing nothing."""
    with unchanged(store):
        code, err, _ = interrupted_run(tmp_path, store, sigint_ignored=True)
    assert (code, err.splitlines()) == (130, ["Interrupted."])


@pytest.mark.slow
def test_ctrl_c_during_a_ray_run_exits_130_with_nothing_stored(tmp_path, store):
    """SIGINT while Ray tasks play: the tasks are cancelled, exit 130 within seconds, the store byte for byte as it was."""
    pytest.importorskip("ray", reason="needs the ray extra")
    with unchanged(store):
        code, err, seconds = interrupted_run(tmp_path, store, "--executor", "ray")
    assert code == 130 and err.splitlines()[-1] == "Interrupted.", err
    assert seconds < 15


@pytest.mark.slow
def test_ray_address_where_nothing_answers_fails_fast(tmp_path, store):
    """--ray-address 127.0.0.1:1: one line naming the address and --ray-address within seconds, not a hang."""
    import time

    pytest.importorskip("ray", reason="needs the ray extra")
    started = time.monotonic()
    child = evals_process("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--repo", tmp_path,
                          "--executor", "ray", "--ray-address", "127.0.0.1:1", cwd=tmp_path)
    out, err = finished(child, timeout=60)
    assert time.monotonic() - started < 20
    assert child.returncode == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith("Error: cannot reach Ray at 127.0.0.1:1 (from --ray-address): nothing answers there"), line


@pytest.mark.slow
def test_ray_address_that_answers_but_is_not_ray_fails_within_the_timeout(tmp_path, store):
    """RAY_ADDRESS naming a port that accepts connections but is no Ray cluster: one line within about 20 s."""
    import socket
    import time

    pytest.importorskip("ray", reason="needs the ray extra")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        child = evals_process("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--executor", "ray",
                              "--repo", tmp_path, cwd=tmp_path, env={"RAY_ADDRESS": address})
        out, err = finished(child, timeout=90)
    assert time.monotonic() - started < 25
    [line] = err.splitlines()
    assert line.startswith(f"Error: cannot join Ray at {address} (from RAY_ADDRESS): no Ray cluster answered within"), line
