"""The command line under hostile input: terminal escapes printed visibly, files named
and cleaned up, replies that would give a traceback reported as malformed.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json

import pytest
from helpers import FIXTURES
from helpers.cli import evals, run_id_of, stored_store
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.hostile import DEEP, corpus_of, csv_rows, write_json

# -- 11. smaller --------------------------------------------------------------------------------


def test_compare_prints_terminal_escapes_visibly(tmp_path):
    """Escape sequences in a conversation id and a question are shown as \\x1b, never sent to the terminal."""
    data = conversation("c\x1b[2Jx")
    data["turns"][1]["test_at"]["question"] = "editor?\x1b]0;pwned\x07 \u202eevil"
    corpus = corpus_of(tmp_path / "c", data)
    store = tmp_path / "results.duckdb"
    ids = []
    for runner in ("no_memory", "full_history"):
        result = evals("run", "--runner", runner, "--corpus", corpus, "--store", store)
        assert result.exit_code == 0, result.output
        ids.append(run_id_of(result.output))
    result = evals("compare", *ids, "--store", store)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "c\\x1b[2Jx turn 1: editor?\\x1b]0;pwned\\x07 \\u202eevil" in result.output


def test_tables_print_terminal_escapes_visibly(tmp_path):
    """The same in `evals runs` and `evals leaderboard` tables (a corpus folder named with an escape)."""
    corpus = corpus_of(tmp_path / "evil\x1b[31m", conversation())
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store).exit_code == 0
    for command in ("runs", "leaderboard"):
        output = evals(command, "--store", store).output
        assert "\x1b" not in output and "evil\\x1b[31m" in output


def test_errors_print_terminal_escapes_visibly(tmp_path):
    """A file name with an escape in it appears escaped in validate's problems and in Error: lines."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "x\x1b[2J.json", "{")
    output = evals("validate", corpus).output
    assert "\x1b" not in output and "x\\x1b[2J.json" in output
    result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", tmp_path / "r.duckdb")
    assert "\x1b" not in result.output and "x\\x1b[2J.json" in one_line_error(result)


def test_wilson_lower_bound_of_no_hits_is_zero(tmp_path):
    """0 hits of 3 has the lower bound 0.0, not 5.55e-17 (and all hits the upper bound 1.0)."""
    from evals.judge.stats import wilson_interval

    assert all(wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0 for n in range(1, 500))
    data = conversation()
    data["turns"] = data["turns"] + [dict(data["turns"][1]), dict(data["turns"][1])]
    corpus = corpus_of(tmp_path / "c", data)
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store).exit_code == 0
    (row,) = csv_rows(evals("runs", "--format", "csv", "--store", store).output)
    assert row["total"] == "3" and row["recall_low"] == "0.0"


def test_long_question_id_is_shortened_for_its_file_name(tmp_path):
    """A 400-character question id no longer fails with "File name too long": the id is shortened
    (kept distinct by a hash), the import says so, and the corpus validates."""
    data = json.loads((FIXTURES / "importers" / "longmemeval_small.json").read_text(encoding="utf-8"))
    data[0]["question_id"] = "q" * 400
    source = write_json(tmp_path / "lme.json", data)
    result = evals("import-corpus", "longmemeval", source, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert max(len(n) for n in names) <= 100
    assert f"note: [0]: question id of 400 characters shortened to {names[0][:-5]!r} for its file name" in result.output
    assert evals("validate", tmp_path / "out").exit_code == 0


def test_unwritable_import_names_the_file(tmp_path, monkeypatch):
    """When a corpus file cannot be written, the error names that file."""
    from evals.benchmarks.kit import importing

    def fail(self, *args, **kwargs):
        raise OSError(36, "File name too long", str(self))

    monkeypatch.setattr(importing.Path, "write_text", fail)
    source = FIXTURES / "importers" / "longmemeval_small.json"
    line = one_line_error(evals("import-corpus", "longmemeval", source, "--out", tmp_path / "out"))
    assert line.startswith(f"Error: cannot write {tmp_path / 'out'}: File name too long: ") and line.endswith(".json")


def test_leftovers_of_a_killed_build_are_removed(tmp_path):
    """A build killed mid-way leaves .site.building-PID; the next build removes it (its process is gone)
    and leaves a running build's folder alone."""
    import subprocess
    import sys

    store = stored_store(tmp_path / "store")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".site.building-{dead}"
    (stale / "runs").mkdir(parents=True)
    old = tmp_path / f".site.old-{dead}"
    old.mkdir()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        running = tmp_path / f".site.building-{alive.pid}"
        running.mkdir()
        assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
        assert not stale.exists() and not old.exists() and running.exists()
    finally:
        alive.kill()
        alive.wait()


def test_a_deeply_nested_server_body_is_a_malformed_response():
    """A server's body nested 3,000 deep is a malformed response (LLMError), never a RecursionError."""
    from helpers.llm_server import LLMServer

    from evals.run.llm import ChatClient, LLMError

    with LLMServer() as server:
        server.rewrite = lambda kind, text, key: '{"choices": ' + DEEP + "}"
        client = ChatClient(base_url=server.base_url)
        with pytest.raises(LLMError, match="malformed response.*nested too deeply"):
            client.complete({"model": "m", "messages": [{"role": "user", "content": "Hello?"}]}, "answer")


def test_a_deeply_nested_judge_reply_is_unparsed():
    """A judge's reply nested 3,000 deep is an unparsed verdict, never a RecursionError."""
    from evals.benchmarks.protocols import read_json_verdict

    assert read_json_verdict('{"correct": true, "reason": ' + DEEP + "}").label == "unparsed"


# -- the embedding cache of `python -m evals` ($EVALS_CACHE) --------------------------------------


def _legacy_openai_run(tmp_path, cache, server):
    """``python -m evals --runner mneme --embedder openai`` on the golden corpus, its cache ``cache``."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "EVALS_CACHE": str(cache), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-0000"}
    args = ["--runner", "mneme", "--embedder", "openai", "--corpus", FIXTURES / "golden", "--output", tmp_path / "out.json"]
    command = [sys.executable, "-m", "evals", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_a_damaged_cache_is_set_aside_by_python_m_evals(tmp_path):
    """`python -m evals` given a cache cut short sets it aside in one warning line and gives the same figures."""
    from helpers.llm_server import LLMServer

    cache = tmp_path / "cache.duckdb"
    with LLMServer() as server:
        first = _legacy_openai_run(tmp_path, cache, server)
        assert first.returncode == 0, first.stderr
        expected = (tmp_path / "out.json").read_text()
        cache.write_bytes(cache.read_bytes()[: 3 * 4096])  # its headers only: cut where a block begins
        again = _legacy_openai_run(tmp_path, cache, server)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    (aside,) = tmp_path.glob("cache.duckdb.bad-*")
    assert f"warning: cache {cache} is damaged" in again.stderr and f"set aside as {aside}" in again.stderr
    assert json.loads((tmp_path / "out.json").read_text())["metrics"] == json.loads(expected)["metrics"]


def test_a_results_store_named_as_the_cache_is_refused(tmp_path):
    """EVALS_CACHE naming a results store: one line naming it, exit 1, and the store byte for byte as it was."""
    from helpers.llm_server import LLMServer
    from helpers.stores import unchanged

    store = stored_store(tmp_path / "store")
    with unchanged(store), LLMServer() as server:
        result = _legacy_openai_run(tmp_path, store, server)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: cache {store} holds tables other than a cache's ({result.stderr.split('(', 1)[1].split(')', 1)[0]}): "
        "it is not a cache (a results store?), and is left as it was; name another file (in $EVALS_CACHE) or run with --no-cache"
    ]


@pytest.mark.parametrize("runner", ["qdrant", "mempalace", "lancedb", "no_memory"])
@pytest.mark.parametrize("command", ["run", "check-strategy"])
def test_repeated_options_are_refused(tmp_path, command, runner):
    """An --option given twice (even with one value) is refused in one line naming it, before anything is built."""
    from helpers.errors import usage_error

    store = tmp_path / "r.duckdb"
    args = ["--runner", runner, "--corpus", FIXTURES / "corpus_small", "--store", store] if command == "run" else [runner]
    result = evals(command, *args, "--option", "mode=dense", "--option", "k=3", "--option", " mode =sparse")
    assert usage_error(result) == (
        "Error: Invalid value for --option: mode is given twice (mode=dense, mode=sparse); give each option once"
    )
    assert not store.exists()
