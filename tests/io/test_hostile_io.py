"""Hostile and careless files at the edges of the process: deep or huge JSON, lone
surrogates, FIFOs and devices, a cache another process holds, and `--output` paths that would replace
the store or write through a link; each is refused with a one-line error, or made harmless.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.cli import CORPUS_SMALL, evals
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.hostile import DEEP, corpus_of, validate_problems, write_json
from helpers.stores import unchanged

# -- 5. tracebacks ------------------------------------------------------------------------------

def test_deep_json_in_a_corpus(tmp_path):
    """JSON nested 3,000 deep: validate names the file and the limit instead of a RecursionError."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", '{"id": "c1", "description": ' + DEEP + "}")
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: JSON nested more than 64 levels deep"]


def test_deep_json_in_run(tmp_path, store):
    """`evals run` on such a corpus: one line naming the file; the store is unchanged."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", '{"id": "c1", "description": ' + DEEP + "}")
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert line == f"Error: invalid corpus: {corpus / 'c1.json'}: JSON nested more than 64 levels deep"


def test_deep_json_in_import(tmp_path, store):
    """`evals import` of a file nested 3,000 deep: one line naming the file; the store is unchanged."""
    bad = write_json(tmp_path / "deep.json", '{"run": ' + DEEP + "}")
    with unchanged(store):
        line = one_line_error(evals("import", bad, "--store", store))
    assert line == f"Error: {bad}: JSON nested more than 64 levels deep"


def test_deep_json_in_import_corpus(tmp_path):
    """`evals import-corpus` of a file nested 3,000 deep: one line naming the file; nothing written."""
    bad = write_json(tmp_path / "deep.json", DEEP)
    for fmt in ("locomo", "longmemeval"):
        line = one_line_error(evals("import-corpus", fmt, bad, "--out", tmp_path / "out"))
        assert line == f"Error: {bad}: JSON nested more than 64 levels deep"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["validate", "import", "import-corpus"])
def test_huge_integer(tmp_path, store, command):
    """An integer of 5,000 digits is refused naming the file, wherever JSON is read."""
    digits = "9" * 5000
    if command == "validate":
        corpus = tmp_path / "c"
        corpus.mkdir()
        write_json(corpus / "c1.json", json.dumps(conversation())[:-1] + f', "x": {digits}}}')
        assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: a number of 5000 digits; at most 20 are read"]
        return
    bad = write_json(tmp_path / "big.json", f'[{{"n": {digits}}}]')
    if command == "import":
        with unchanged(store):
            line = one_line_error(evals("import", bad, "--store", store))
    else:
        line = one_line_error(evals("import-corpus", "locomo", bad, "--out", tmp_path / "out"))
    assert line == f"Error: {bad}: a number of 5000 digits; at most 20 are read"


def test_lone_surrogate_is_refused_by_validate(tmp_path):
    """A lone surrogate escape ("\\ud800") is refused by validate at its JSON path."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", json.dumps(conversation()).replace("I use vim", "I use \\ud800 vim"))
    assert validate_problems(corpus) == [
        f"{corpus / 'c1.json'}: turns[0].content: holds a lone surrogate (\\ud800), which is not a character"
    ]


def test_lone_surrogate_does_not_crash_run(tmp_path, store):
    """`evals run` refuses the same corpus in one line instead of crashing; the store is unchanged."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", json.dumps(conversation()).replace("I use vim", "I use \\ud800 vim"))
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "mneme", "--corpus", corpus, "--store", store))
    assert "turns[0].content: holds a lone surrogate" in line


def test_surrogate_pairs_are_characters(tmp_path):
    """An escaped surrogate pair (an emoji, as json.dumps writes it) is one character, and valid."""
    corpus = corpus_of(tmp_path / "c", conversation(description="\U0001f600 fine"))
    assert "\\ud83d\\ude00" in (corpus / "c1.json").read_text()
    assert evals("validate", corpus).exit_code == 0


def test_symlink_to_dev_zero_is_not_read(tmp_path):
    """A corpus file that is a link to /dev/zero is refused as not a regular file, without reading it."""
    corpus = corpus_of(tmp_path / "c", conversation())
    (corpus / "zero.json").symlink_to("/dev/zero")
    assert validate_problems(corpus) == [
        f"{corpus / 'zero.json'}: not a regular file (a character device); only regular files are read"
    ]


def test_fifo_does_not_hang(tmp_path):
    """A FIFO named like a corpus file is refused at once instead of waiting for a writer."""
    import os

    corpus = corpus_of(tmp_path / "c", conversation())
    os.mkfifo(corpus / "pipe.json")
    assert validate_problems(corpus) == [f"{corpus / 'pipe.json'}: not a regular file (a FIFO); only regular files are read"]


@pytest.mark.parametrize("make", ["fifo", "device", "dangling"])
def test_references_file_that_is_not_a_regular_file(tmp_path, make):
    """references.json that is a FIFO, a device or a dangling link is one problem naming it, never read or waited on."""
    import os

    corpus = corpus_of(tmp_path / "c", conversation())
    target = corpus / "references.json"
    if make == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero" if make == "device" else tmp_path / "gone.json")
    (line,) = validate_problems(corpus)
    assert line.startswith(f"{target}: "), line


def test_run_refuses_a_corpus_with_bad_references(tmp_path):
    """`evals run` refuses a corpus whose references.json is invalid, naming the file and field, and writes no store."""
    corpus = corpus_of(tmp_path / "c", conversation())
    (corpus / "references.json").write_text(
        json.dumps([{"label": "x", "citation": "y", "metric": "recall", "level": "turn", "k": 5, "value": 0.5}])
    )
    store = tmp_path / "s.duckdb"
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert line.startswith(f"Error: invalid corpus: {corpus / 'references.json'}: [0].metric: expected 'recall_any'"), line
    assert not store.exists()


def test_file_size_is_bounded(tmp_path, monkeypatch):
    """A corpus file larger than the limit is refused before it is read, saying both sizes."""
    from evals.io import jsonfile

    monkeypatch.setattr(jsonfile, "MAX_CORPUS_FILE_BYTES", 100)
    corpus = corpus_of(tmp_path / "c", conversation())
    size = (corpus / "c1.json").stat().st_size
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: {size} bytes; files over 100 bytes are not read"]


def test_import_of_a_fifo_does_not_hang(tmp_path, store):
    """`evals import` of a FIFO: refused at once; the store is unchanged."""
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    with unchanged(store):
        line = one_line_error(evals("import", pipe, "--store", store))
    assert line == (
        f"Error: {pipe}: not a regular file (a FIFO); only regular files are read"
    )


def test_serve_on_a_busy_port(tmp_path):
    """`evals serve` on a port already taken: one line saying so, not an OSError traceback."""
    import socket

    site = tmp_path / "site"
    site.mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(evals("serve", "--dir", site, "--port", str(port)))
    assert line.startswith(f"Error: cannot serve on 127.0.0.1:{port}: ") and "--port" in line


# -- 9. concurrent runs with answers ------------------------------------------------------------

HOLD_LOCK = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(float(sys.argv[2]))"


def hold_lock(path: Path, seconds: float):
    """Another process holding ``path``'s DuckDB write lock for ``seconds`` (as a running run holds its cache)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_run_with_answers_waits_for_the_cache(tmp_path):
    """While another run holds the response cache, a run with answers waits for it instead of failing at once."""
    from helpers.llm_server import LLMServer

    from evals.io.cache import Cache, cache_path_for

    store = tmp_path / "results.duckdb"
    with Cache.open(cache_path_for(store)) as cache:
        cache.put("test:x", "key", b"value")
    holder = hold_lock(cache_path_for(store), 1.5)
    try:
        with LLMServer() as server:
            result = evals(
                "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
                "--with-answers", env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": "sk-unused-0000"},
            )
        assert result.exit_code == 0, result.output
    finally:
        holder.kill()
        holder.wait()


def test_cache_lock_held_too_long_is_one_line(tmp_path):
    """When the cache stays locked past the timeout, the error says so and what to do."""
    from evals.errors import EvalsError
    from evals.io.cache import Cache

    path = tmp_path / "results.cache.duckdb"
    with Cache.open(path) as cache:
        cache.put("test:x", "key", b"value")
    holder = hold_lock(path, 10)
    try:
        with pytest.raises(EvalsError) as caught:
            Cache(path, lock_timeout=0.3).get("test:x", "key")
        assert str(caught.value) == (
            f"cache {path} is locked by another process (waited 0.3 s), probably another run using it; "
            "try again when it has finished, or run with --no-cache"
        )
    finally:
        holder.kill()
        holder.wait()


# -- --output never replaces the store, its cache or a file the command reads --


def assert_refused_output(result, output: Path, exit_code: int = 1) -> str:
    """One ``Error:`` line naming ``output``, exit ``exit_code``."""
    line = one_line_error(result, exit_code)
    assert str(output) in line, line
    return line


@pytest.mark.parametrize("name", ["results.duckdb", "results.cache.duckdb", "results.duckdb.wal", "results.cache.duckdb.wal"])
def test_run_output_that_is_a_store_file_is_refused(store, name, no_work):
    """evals run --output naming the store, its cache or either's write-ahead log is refused before any work."""
    output = store.parent / name
    with unchanged(store):
        line = assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )
    assert "store" in line or "cache" in line


def test_run_output_spelled_differently_is_still_the_store(store, no_work):
    """The store named through `sub/..` is the same file: compared as files, not strings."""
    (store.parent / "sub").mkdir()
    output = store.parent / "sub" / ".." / store.name
    with unchanged(store):
        assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )


def test_run_output_hard_link_to_the_store_is_refused(store, no_work):
    """A hard link to the store (same device and inode, another name) is the store."""
    output = store.parent / "linked.json"
    output.hardlink_to(store)
    with unchanged(store):
        assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )


def test_run_output_into_a_new_store_path_is_refused(tmp_path, no_work):
    """--output equal to a --store that does not exist yet is refused too (the run would create the store, then overwrite it)."""
    store = tmp_path / "new.duckdb"
    assert_refused_output(
        evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", store), store
    )
    assert not store.exists()


def test_export_output_that_is_the_store_is_refused(store):
    """evals export --output naming the store it reads is refused, the store left as it was."""
    run_id = evals("runs", "--store", store, "--format", "json")
    run_id = json.loads(run_id.output)[0]["run_id"]
    with unchanged(store):
        assert_refused_output(evals("export", run_id, "--store", store, "--output", store), store)


def test_legacy_output_that_is_the_store_is_refused(store):
    """python -m evals --output naming $EVALS_STORE's cache is refused: the original CLI writes beside it with answers."""
    from evals.cli import legacy_cli

    cache = store.parent / "results.cache.duckdb"
    cache.write_bytes(b"not really a cache")
    with unchanged(store):
        result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--output", str(cache)],
                                    env={"EVALS_STORE": str(store)})
        assert_refused_output(result, cache)


@pytest.mark.parametrize("name", ["002_pet.json", "references.json", "new.json"])
def test_run_output_in_the_corpus_folder_is_refused(tmp_path, store, name, no_work):
    """An --output that is a corpus file, its references.json or a new *.json in the corpus folder is refused."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS_SMALL, corpus)
    write_json(corpus / "references.json", [])
    before = {p.name: p.read_bytes() for p in corpus.iterdir()}
    with unchanged(store):
        result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store, "--output", corpus / name)
        assert_refused_output(result, corpus / name)
    assert {p.name: p.read_bytes() for p in corpus.iterdir()} == before


def test_gate_step_summary_that_is_the_store_is_refused(store):
    """$GITHUB_STEP_SUMMARY naming the store: gate refuses (exit 2) rather than append its report to it."""
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    with unchanged(store):
        result = evals("gate", "--base", run_id, "--head", run_id, "--store", store, env={"GITHUB_STEP_SUMMARY": str(store)})
        assert_refused_output(result, store, exit_code=2)


# -- --output is a regular file or a new path, never a device, FIFO or link -----


def test_run_output_to_dev_null_is_refused(store, no_work):
    """--output /dev/null is refused (as root it would be replaced by a regular file), and stays a device."""
    import stat

    with unchanged(store):
        line = assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", "/dev/null"),
            Path("/dev/null"),
        )
    assert "character device" in line
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


def test_export_output_to_a_fifo_is_refused(tmp_path, store):
    """evals export --output FIFO is refused in one line (no hang, no file in its place)."""
    import os
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    line = assert_refused_output(evals("export", run_id, "--store", store, "--output", fifo), fifo)
    assert "FIFO" in line and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_legacy_output_through_a_symlink_is_refused(tmp_path):
    """python -m evals --output LINK (to a regular file) is refused: the file it points to is left as it was."""
    from evals.cli import legacy_cli

    target = write_json(tmp_path / "precious.txt", "keep me")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--output", str(link)],
                                env={"EVALS_STORE": str(tmp_path / "s.duckdb")})
    assert "symbolic link" in assert_refused_output(result, link)
    assert link.is_symlink() and target.read_text() == "keep me"


def test_write_output_never_writes_through_a_link_planted_after_the_check(tmp_path):
    """A symlink that appears at the output path after the up-front check is refused at write time, not followed."""
    from evals.io.outputs import OutputError, check_output, write_output

    target = write_json(tmp_path / "precious.txt", "keep me")
    output = tmp_path / "out.json"
    check_output(output)
    output.symlink_to(target)
    with pytest.raises(OutputError, match="symbolic link"):
        write_output(output, b"{}")
    assert target.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_output_replaces_a_regular_file_and_keeps_its_mode(tmp_path):
    """An existing regular file is replaced whole, keeping its permissions; a new path is created with its folders."""
    from evals.io.outputs import write_output

    existing = write_json(tmp_path / "old.json", "old")
    existing.chmod(0o640)
    write_output(existing, b"new")
    assert existing.read_bytes() == b"new" and existing.stat().st_mode & 0o777 == 0o640
    write_output(tmp_path / "a" / "b.json", b"{}")
    assert (tmp_path / "a" / "b.json").read_bytes() == b"{}"
