"""Paths, files and the store: each hostile one is refused in one line, or made harmless.

One test per defect, named for what must hold. Whatever is refused leaves the
store, the corpus and the file in the way byte for byte as they were.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.cli import CORPUS_SMALL, evals, forbid_work, stored_store
from helpers.errors import one_line_error, usage_error
from helpers.stores import undo_copy

from evals.cli import legacy_cli

SCHEMA5 = FIXTURES / "stores" / "schema5.duckdb.gz"


# -- helpers ------------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of ``folder``, recursively: a file's bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            out[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            out[name] = path.read_bytes()
    return out


def run_id_of(store: Path) -> str:
    return json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]


def old_store(path: Path) -> Path:
    """A store at schema 5 (tests/fixtures/stores), as an older evals left it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.decompress(SCHEMA5.read_bytes()))
    return path


@pytest.fixture
def store(tmp_path) -> Path:
    return stored_store(tmp_path / "store")


def python_evals(*args, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m evals ARGS`` in a process of its own (the working directory, a FIFO, a plug-in's chdir)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("EVALS_STORE", "GITHUB_STEP_SUMMARY")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "evals", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- $GITHUB_STEP_SUMMARY must be a regular file ----------------------------------------


def test_step_summary_that_is_a_fifo_is_refused_not_waited_on(store, tmp_path):
    """evals gate with $GITHUB_STEP_SUMMARY naming a FIFO (nothing reading it) refuses at once, exit 2,
    naming it, instead of blocking forever on the append; the FIFO stays a FIFO."""
    import stat

    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    run_id = run_id_of(store)
    try:
        done = python_evals("gate", "--base", run_id, "--head", run_id, "--store", store, cwd=tmp_path,
                            env={"GITHUB_STEP_SUMMARY": str(fifo)}, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("evals gate blocked on the FIFO")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.splitlines() == [
        f"Error: $GITHUB_STEP_SUMMARY {fifo} is a FIFO; give a new path or a regular file that nothing else uses"
    ]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_step_summary_regular_file_still_gets_the_report(store, tmp_path):
    """A regular (or new) $GITHUB_STEP_SUMMARY still gets the Markdown report appended."""
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    run_id = run_id_of(store)
    result = evals("gate", "--base", run_id, "--head", run_id, "--store", store, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code == 0, result.output
    assert summary.read_text().startswith("before\n") and len(summary.read_text()) > len("before\n")


# -- import-corpus --out . and --out "" --------------------------------------------------


@pytest.mark.parametrize("out", [".", ""])
def test_import_corpus_out_dot_or_empty_is_refused_in_one_line(tmp_path, monkeypatch, out):
    """--out . (the current folder, which the import would put a new folder in place of) and --out ""
    are refused as bad values, exit 2, not a ValueError; nothing is written."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    line = usage_error(evals("import-corpus", "locomo", FIXTURES / "importers" / "locomo_small.json", "--out", out))
    assert line.startswith("Error: Invalid value for '--out': ")
    assert list(here.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["here"]


def test_import_corpus_out_relative_still_works(tmp_path, monkeypatch):
    """A relative --out naming a new folder is made absolute and written as before."""
    monkeypatch.chdir(tmp_path)
    result = evals("import-corpus", "locomo", FIXTURES / "importers" / "locomo_small.json", "--out", "made")
    assert result.exit_code == 0, result.output
    assert any((tmp_path / "made").glob("*.json"))


# -- --output never replaces a database, a conversation, or anything in a corpus folder -----


def other_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "other_corpus"
    shutil.copytree(CORPUS_SMALL, corpus)
    return corpus


@pytest.mark.parametrize(
    "case, says",
    [
        ("another store", "is a DuckDB database"),
        ("a store's write-ahead log", "write-ahead log of the DuckDB database"),
        ("a SQLite database", "is a SQLite database"),
        ("a conversation file elsewhere", "is a conversation file"),
        ("a conversation of another corpus", "is a conversation file"),
        ("a new file in another corpus", "in a corpus folder"),
        ("any file in another corpus", "in a corpus folder"),
    ],
)
def test_output_never_replaces_a_database_or_a_conversation(tmp_path, store, monkeypatch, case, says):
    """evals run --output naming another DuckDB store, a SQLite file, a conversation file (wherever it is),
    or any path in a folder that holds a conversation, is refused before any work; everything stays."""
    import sqlite3

    corpus = other_corpus(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if case == "another store":
        output = stored_store(tmp_path / "other_store")
    elif case == "a store's write-ahead log":
        other = stored_store(tmp_path / "other_store")
        output = Path(f"{other}.wal")
        output.write_bytes(b"a log DuckDB would replay")
    elif case == "a SQLite database":
        output = elsewhere / "memory.db"
        with sqlite3.connect(output) as db:
            db.execute("CREATE TABLE t (x)")
    elif case == "a conversation file elsewhere":
        output = elsewhere / "draft.json"
        shutil.copy(CORPUS_SMALL / "001_editor.json", output)
    elif case == "a conversation of another corpus":
        output = corpus / "001_editor.json"
    elif case == "a new file in another corpus":
        output = corpus / "new.json"
    else:
        output = corpus / "README.md"
        output.write_text("the corpus's own notes\n")
    forbid_work(monkeypatch)
    before = snapshot(tmp_path)
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output))
    assert line.startswith(f"Error: --output {output} ") and says in line, line
    assert snapshot(tmp_path) == before


def test_legacy_output_at_a_store_elsewhere_than_evals_store_is_refused(tmp_path):
    """python -m evals --output results/results.duckdb with $EVALS_STORE elsewhere: the file at the output
    is a DuckDB store, so it is refused, whatever $EVALS_STORE says."""
    work = tmp_path / "work"
    stored_store(work / "results")
    before = snapshot(work)
    done = python_evals("--runner", "no_memory", "--corpus", CORPUS_SMALL, "--output", "results/results.duckdb",
                        cwd=work, env={"EVALS_STORE": str(tmp_path / "elsewhere.duckdb")})
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "Error: --output results/results.duckdb is a DuckDB database; give a new path or a regular file that nothing else uses"
    ]
    assert snapshot(work) == before


def test_an_earlier_result_is_still_replaced(tmp_path, store):
    """What --output is for still works: a result file written before is replaced by the new one."""
    output = tmp_path / "out" / "result.json"
    for runner in ("no_memory", "full_history"):
        result = evals("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store, "--output", output)
        assert result.exit_code == 0, result.output
    assert json.loads(output.read_text())["strategy"]["name"] == "full_history"


# -- the undo copy is created new, never through a link ------------------------------------


@pytest.mark.parametrize("command", ["migrate", "run"])
def test_link_planted_at_the_undo_copy_is_not_written_through(tmp_path, command):
    """A symlink at `.evals-scratch-<store>.undo` (where a write keeps its copy) is removed, not followed,
    by the upgrade of an older store (evals migrate, or the append of a run): its target is untouched."""
    store = old_store(tmp_path / "store" / "results.duckdb")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    undo_copy(store).symlink_to(target)
    args = (
        ["migrate", "--store", store]
        if command == "migrate"
        else ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store]
    )
    result = evals(*args)
    assert result.exit_code == 0, result.output
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in store.parent.iterdir()) == ["results.duckdb"]


def test_something_reappearing_at_the_undo_name_is_refused_not_written_through(tmp_path):
    """If a link appears at the copy's name between removing what was there and creating the copy, the
    create (O_EXCL|O_NOFOLLOW) fails: one error, the store and the link's target unchanged."""
    from evals.store import Store, StoreError

    store = old_store(tmp_path / "store" / "results.duckdb")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    real_unlink = Path.unlink

    def unlink_then_plant(self, missing_ok=False):
        real_unlink(self, missing_ok=missing_ok)
        if self == undo_copy(store):
            self.symlink_to(target)

    before = store.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "unlink", unlink_then_plant)
        with pytest.raises(StoreError, match="cannot make the copy that keeps it whole"):
            Store.upgrade(store)
    assert target.read_text() == "keep me" and store.read_bytes() == before


# -- opening never deletes a file another process made ------------------------------------


def test_open_never_deletes_a_file_another_process_created(tmp_path, monkeypatch):
    """A DuckDB file another program creates at the store path after this process found it missing is
    refused (it is not an evals store) and left exactly as it is: the new store was being built aside,
    never at the path, so there is nothing of this process's there to remove."""
    import evals.store._store as store_module
    from evals.io.locking import open_duckdb
    from evals.store import Store, StoreError

    path = tmp_path / "results.duckdb"
    real = store_module.writable_directory

    def and_meanwhile_another_program(directory, create):
        real(directory, create)
        con = open_duckdb(path)  # between the existence check and the connect
        con.execute("CREATE TABLE theirs AS SELECT 42 AS answer")
        con.close()

    monkeypatch.setattr(store_module, "writable_directory", and_meanwhile_another_program)
    with pytest.raises(StoreError, match="not an evals store.*refusing to change it"):
        Store.open(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.duckdb"]
    con = open_duckdb(path, read_only=True)
    assert con.execute("SELECT answer FROM theirs").fetchall() == [(42,)]
    con.close()


def test_a_store_another_process_made_meanwhile_is_used_not_replaced(tmp_path, monkeypatch):
    """If another process makes the store while this one builds its own aside, the other's is kept
    (with its run) and opened; this one's is dropped, and nothing is left beside it."""
    import evals.store._store as store_module
    from evals.store import Store

    path = tmp_path / "results.duckdb"
    real = store_module.writable_directory
    made = {}

    def and_meanwhile_another_process(directory, create):
        real(directory, create)
        monkeypatch.setattr(store_module, "writable_directory", real)
        made["store"] = stored_store(tmp_path)  # in-process, but a store made by someone else all the same

    monkeypatch.setattr(store_module, "writable_directory", and_meanwhile_another_process)
    with Store.open(path) as opened:
        assert opened.run_count() == 1
    assert made["store"] == path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.duckdb"]


def test_dangling_link_at_the_store_path_is_refused(tmp_path):
    """A symlink to nothing at the store path is refused in one line: DuckDB would create the store
    wherever it points."""
    link = tmp_path / "results.duckdb"
    link.symlink_to(tmp_path / "elsewhere" / "x.duckdb")
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", link))
    assert "is a symbolic link to" in line and "does not exist" in line
    assert link.is_symlink() and not (tmp_path / "elsewhere").exists()


# -- paths are absolute before any plug-in code runs ---------------------------------------


def test_plugin_changing_directory_moves_nothing(tmp_path):
    """A plug-in that calls chdir on import: the relative --store, --output and --corpus still name the
    places in the directory the command started in; the summary names them as given."""
    work, away, plugins = tmp_path / "work", tmp_path / "away", tmp_path / "plugins"
    for folder in (work, away, plugins):
        folder.mkdir()
    shutil.copytree(CORPUS_SMALL, work / "corpus")
    (plugins / "wanderer.py").write_text(textwrap.dedent(f"""
        import os
        from evals.strategies import Recency

        os.chdir({str(away)!r})  # on import, before anything is played or stored

        def make():
            return Recency()
    """), encoding="utf-8")
    done = python_evals("run", "--runner", "wanderer:make", "--corpus", "corpus", "--store", "s.duckdb", "--output", "o.json",
                        cwd=work, env={"PYTHONPATH": str(plugins)})
    assert done.returncode == 0, done.stderr
    assert list(away.iterdir()) == []
    assert (work / "s.duckdb").is_file() and (work / "o.json").is_file()
    assert done.stdout.rstrip().endswith("-> s.duckdb, o.json")
    assert json.loads((work / "o.json").read_text())["corpus_dir"] == "corpus"  # recorded as given


# -- a failed run leaves an older store as it was ------------------------------------------


@pytest.mark.parametrize("problem", ["empty corpus", "unknown option", "unknown strategy"])
def test_failed_run_does_not_migrate_an_older_store(tmp_path, problem):
    """evals run that fails on its inputs leaves a schema-5 store byte for byte as it was (it is upgraded
    only by an append); a run that succeeds then upgrades it and keeps its runs."""
    from evals.store import MIGRATIONS, Store

    store = old_store(tmp_path / "store" / "results.duckdb")
    empty = tmp_path / "empty"
    empty.mkdir()
    args = {
        "empty corpus": ["--runner", "no_memory", "--corpus", empty],
        "unknown option": ["--runner", "recency", "--corpus", CORPUS_SMALL, "--option", "nonsense=1"],
        "unknown strategy": ["--runner", "no_such_strategy", "--corpus", CORPUS_SMALL],
    }[problem]
    before = snapshot(store.parent)
    result = evals("run", *args, "--store", store)
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert snapshot(store.parent) == before
    assert Store.schema_versions(store) == (5, MIGRATIONS[-1].version)
    ok = evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store)
    assert ok.exit_code == 0, ok.output
    with Store.open(store, read_only=True) as opened:
        assert opened.schema_version == MIGRATIONS[-1].version and opened.run_count() > 1


# -- build-site --out given as a symlink ---------------------------------------------------


def test_build_site_through_a_symlinked_out_replaces_the_target_and_keeps_the_link(tmp_path, store):
    """--out LINK (to a folder): the folder it points to gets the site, the link stays a link to it, and
    nothing (no `.LINK.old-PID`) is left beside either, on a first build and a rebuild."""
    releases = tmp_path / "releases" / "site"
    releases.mkdir(parents=True)
    link = tmp_path / "site"
    link.symlink_to(releases)
    for _ in range(2):
        result = evals("build-site", "--store", store, "--out", link)
        assert result.exit_code == 0, result.output
        assert link.is_symlink() and Path(os.readlink(link)) == releases
        assert (releases / "index.html").is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["releases", "site", "store"]
        assert sorted(p.name for p in releases.parent.iterdir()) == ["site"]


def test_dangling_symlink_out_is_refused(tmp_path, store):
    """--out LINK to nothing is refused in one line, the link left as it was."""
    link = tmp_path / "site"
    link.symlink_to(tmp_path / "nowhere")
    line = one_line_error(evals("build-site", "--store", store, "--out", link))
    assert "is a symbolic link to" in line and "does not exist" in line
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


# -- --output - and --output newdir/ -------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "legacy"])
@pytest.mark.parametrize("output", ["-", "newdir/"])
def test_output_dash_or_folder_is_refused(tmp_path, monkeypatch, no_work, command, output):
    """--output - (not standard output here) and --output newdir/ (a folder) are refused before any work;
    no file named '-' or 'newdir' appears."""
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "s.duckdb"
    if command == "run":
        result = evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output)
    else:
        result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--output", output],
                                    env={"EVALS_STORE": str(store)})
    if output == "-":
        assert one_line_error(result) == "Error: --output - would be a file named '-', not standard output; give a file path"
    else:
        assert "names a folder" in usage_error(result)
    assert list(tmp_path.iterdir()) == []


def test_export_dash_is_still_standard_output(store):
    """evals export --output - writes to standard output, as before."""
    result = evals("export", run_id_of(store), "--store", store, "--output", "-")
    assert result.exit_code == 0 and json.loads(result.output)["run"]["run_id"] == run_id_of(store)


# -- an explicit --repo git cannot read ----------------------------------------------------


def git(*args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], check=True, capture_output=True)


@pytest.mark.parametrize(
    "kind, says",
    [
        ("broken .git file", "invalid gitfile format"),
        ("empty .git folder", "is not a repository git can read"),
        ("bare repository", "bare repository"),
        ("no commit", "has no commit"),
    ],
)
def test_unreadable_explicit_repo_is_refused(tmp_path, store, no_work, kind, says):
    """--repo naming a folder git finds a repository in but cannot read is refused in one line, before any
    work, not recorded as no-git; a plain folder outside git is still recorded as no-git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    if kind == "broken .git file":
        (repo / ".git").write_text("not a gitdir line\n")
    elif kind == "empty .git folder":
        (repo / ".git").mkdir()
    elif kind == "bare repository":
        git("init", "-q", "--bare", str(repo))
    else:
        git("init", "-q", str(repo))
    before = store.read_bytes()
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--repo", repo))
    assert line.startswith(f"Error: --repo {repo}: git cannot read it: ") and says in line, line
    assert store.read_bytes() == before


def test_plain_folder_outside_git_is_still_no_git(tmp_path):
    """An explicit --repo that is simply no repository keeps recording no-git (tests and users rely on it)."""
    from evals.model.provenance import NO_GIT, git_revision

    assert git_revision(tmp_path, strict=True) == (NO_GIT, False)


# -- python -m evals --with-answers checks $EVALS_STORE as evals run does -------------------


@pytest.mark.parametrize("where", ["a directory", "in a missing folder"])
def test_legacy_with_answers_checks_evals_store(tmp_path, server, where):
    """With answers, python -m evals keeps its cache beside $EVALS_STORE: a directory there, or a path in
    a folder that does not exist, is refused as evals run refuses it, before any request; no folder is
    made and no `<dir>.cache.duckdb` written."""
    store = tmp_path / "stores" if where == "a directory" else tmp_path / "missing" / "s.duckdb"
    if where == "a directory":
        store.mkdir()
    before = sorted(os.listdir(tmp_path))
    result = CliRunner().invoke(
        legacy_cli,
        ["--runner", "recency", "--corpus", str(CORPUS_SMALL), "--output", str(tmp_path / "o.json"), "--with-answers"],
        env={"EVALS_STORE": str(store), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-unused"},
    )
    line = one_line_error(result)
    assert str(store) in line or str(store.parent) in line, line
    assert sorted(os.listdir(tmp_path)) == before  # no <dir>.cache.duckdb, no folder made, no o.json
    assert sum(server.requests.values()) == 0


# -- a store (and its cache) inside the corpus folder --------------------------------------


@pytest.mark.parametrize("name", ["zz.json", "results.duckdb"])
def test_store_inside_the_corpus_is_refused(tmp_path, no_work, name):
    """--store in the corpus folder it plays (named *.json, which the corpus would then read, or anything
    else, whose cache would go there too) is refused before any work; the corpus still validates."""
    corpus = tmp_path / "c2"
    shutil.copytree(CORPUS_SMALL, corpus)
    before = snapshot(corpus)
    store = corpus / name
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert line.startswith(f"Error: --store {store} ") and "corpus folder" in line, line
    assert snapshot(corpus) == before
    assert evals("validate", corpus).exit_code == 0


# -- --output at the scratch undo name -----------------------------------------------------


def test_output_at_the_undo_copy_name_is_refused(store, no_work):
    """--output naming the store's undo copy (which the next append deletes) is refused before any work."""
    output = undo_copy(store)
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output))
    assert line.startswith(f"Error: --output {output} ") and "scratch" in line
    assert not output.exists()


# -- a read-only --output is refused, as a read-only store is --------------------------------


@pytest.mark.parametrize("command", ["run", "export"])
def test_read_only_output_is_refused(tmp_path, store, command):
    """A read-only (0444) --output of run or export is refused in one line, like a read-only store;
    the file keeps its content and mode."""
    output = tmp_path / "out.json"
    output.write_text('{"kept": true}')
    output.chmod(0o444)
    try:
        if command == "run":
            result = evals(
                "run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output, "--force"
            )
        else:
            result = evals("export", run_id_of(store), "--store", store, "--output", output)
        line = one_line_error(result)
        assert line == f"Error: --output {output} is read-only (mode 444); make it writable (chmod u+w), or give another path"
        assert output.read_text() == '{"kept": true}' and output.stat().st_mode & 0o777 == 0o444
    finally:
        output.chmod(0o644)
