"""The store through the command line: evals run/runs/leaderboard/export/import/compare."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.cli import run_id_of

from evals.cli import cli
from evals.judge.stats import wilson_interval
from evals.model.provenance import collect_provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.store import MIGRATIONS, Store
from evals.views.report import stored_legacy_json

STRATEGIES = ("no_memory", "full_history", "summary_buffer", "mneme")


@pytest.fixture
def evals(store_path):
    """Invoke `evals ARGS... --store <temp store>` in-process; returns click's Result."""

    def invoke(*args: str, store: Path | None = store_path):
        extra = ["--store", str(store)] if store is not None else []
        return CliRunner().invoke(cli, [*args, *extra], catch_exceptions=False)

    return invoke


def store_bytes(path: Path) -> bytes:
    return path.read_bytes()


def test_run_line_leads_with_the_leaderboards_headline_on_a_corpus_with_evidence(evals, store_path):
    """On a corpus with evidence turns, `evals run` prints turn-level recall_any@k first, the number the
    leaderboard ranks by, then keyword hit@k (the original harness printed it as recall@k)."""
    corpus = FIXTURES / "evidence_corpus"
    line = evals("run", "--runner", "recency", "--corpus", str(corpus), "--k", "1").output.strip()
    board = json.loads(evals("leaderboard", "--format", "json").output)[0]["metrics"]["turn.recall_any@k"]
    hits = round(board["value"] * board["n"])
    low, high = wilson_interval(hits, board["n"])
    assert f": recency recall_any@1 {board['value']:.3f} [{low:.3f}, {high:.3f}] ({hits}/{board['n']}) keyword hit@1 " in line


def test_run_appends_and_prints_the_run_id(evals, store_path, corpus_small):
    """evals run appends one run and prints its line: `run <id>: <strategy> keyword hit@k <recall> [<95% CI>]
    (<hits>/<total>) tokens/tp <n> -> <store>`."""
    result = evals("run", "--runner", "full_history", "--corpus", str(corpus_small))
    assert result.exit_code == 0
    run_id = run_id_of(result.output)
    low, _ = wilson_interval(4, 4)
    line = f"run {run_id}: full_history keyword hit@5 1.000 [{low:.3f}, 1.000] (4/4) tokens/tp 55.5 -> {store_path}\n"
    assert result.output == line
    with Store.open(store_path, read_only=True) as store:
        assert [s.run_id for s in store.runs()] == [run_id]


def test_same_inputs_on_a_clean_commit_are_cached(evals, store_path, corpus_small, clean_repo):
    """A second run with the same inputs on a clean commit prints `cached: run <id>` and adds nothing."""
    args = ("run", "--runner", "mneme", "--corpus", str(corpus_small), "--repo", str(clean_repo))
    first = run_id_of(evals(*args).output)
    again = evals(*args)
    assert again.output.startswith(f"cached: run {first}: mneme (embedder hash-16) keyword hit@5 0.500 [")
    with Store.open(store_path, read_only=True) as store:
        assert store.run_count() == 1


def test_force_recomputes(evals, store_path, corpus_small, clean_repo):
    """--force computes and appends even when a cached run exists."""
    args = ("run", "--runner", "no_memory", "--corpus", str(corpus_small), "--repo", str(clean_repo))
    evals(*args)
    forced = evals(*args, "--force")
    assert forced.output.startswith("run ")
    with Store.open(store_path, read_only=True) as store:
        assert store.run_count() == 2


def test_dirty_tree_is_never_cached(evals, store_path, corpus_small, clean_repo):
    """With an uncommitted change in the repository, every run is computed and appended."""
    (clean_repo / "README").write_text("changed\n")
    args = ("run", "--runner", "no_memory", "--corpus", str(corpus_small), "--repo", str(clean_repo))
    evals(*args)
    second = evals(*args)
    said, line = second.output.splitlines()[:2]
    assert said.startswith("warning: working tree has uncommitted changes: README;") and line.startswith("run ")
    with Store.open(store_path, read_only=True) as store:
        assert [s.dirty for s in store.runs()] == [True, True]


def test_other_settings_are_not_cached(evals, store_path, corpus_small, clean_repo):
    """Changing k makes a new run rather than reusing the cached one."""
    args = ("run", "--runner", "mneme", "--corpus", str(corpus_small), "--repo", str(clean_repo))
    evals(*args)
    assert evals(*args, "--k", "3").output.startswith("run ")


def test_done_when_four_strategies_twice_then_forced(evals, store_path, corpus_small, clean_repo):
    """Four strategies, then again: four runs and four `cached`; with --force, eight runs."""
    base = ("--corpus", str(corpus_small), "--repo", str(clean_repo))
    for runner in STRATEGIES:
        assert evals("run", "--runner", runner, *base).output.startswith("run ")
    cached = [evals("run", "--runner", runner, *base).output for runner in STRATEGIES]
    assert all(line.startswith("cached: run ") for line in cached)
    for runner in STRATEGIES:
        evals("run", "--runner", runner, *base, "--force")
    con = duckdb.connect(str(store_path), read_only=True)
    rows = con.execute("SELECT commit, model, date FROM runs").fetchall()
    con.close()
    assert len(rows) == 8
    assert {model for _, model, _ in rows} == {"none", "hash-16"}


def test_output_file_is_the_stored_legacy_json(evals, store_path, corpus_small, tmp_path):
    """--output writes the seed document, equal to legacy_json of the stored run."""
    out = tmp_path / "out" / "mneme.json"
    result = evals("run", "--runner", "mneme", "--corpus", str(corpus_small), "--output", str(out))
    assert result.output.endswith(f"-> {store_path}, {out}\n")
    with Store.open(store_path, read_only=True) as store:
        assert json.loads(out.read_text()) == stored_legacy_json(store.get_run(run_id_of(result.output)))


def test_cached_run_still_writes_output(evals, corpus_small, clean_repo, tmp_path):
    """On a cache hit --output is written from the stored run, identical to the first file."""
    args = ("run", "--runner", "summary_buffer", "--corpus", str(corpus_small), "--repo", str(clean_repo))
    evals(*args, "--output", str(tmp_path / "a.json"))
    evals(*args, "--output", str(tmp_path / "b.json"))
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads((tmp_path / "b.json").read_text())


def test_export_matches_output_plus_run_block(evals, corpus_small, tmp_path):
    """`evals export` writes what --output wrote for the run, plus its `run` block."""
    out, exported = tmp_path / "out.json", tmp_path / "export.json"
    run_id = run_id_of(evals("run", "--runner", "mneme", "--corpus", str(corpus_small), "--output", str(out)).output)
    assert evals("export", run_id, "--output", str(exported)).exit_code == 0
    document = json.loads(exported.read_text())
    assert document.pop("run")["run_id"] == run_id
    assert document == json.loads(out.read_text())


def test_import_merges_runs_from_another_store(evals, corpus_small, tmp_path):
    """Runs exported from one store and imported into another appear there; re-import skips them."""
    other = tmp_path / "other.duckdb"
    exported = tmp_path / "run.json"
    run_id = run_id_of(evals("run", "--runner", "no_memory", "--corpus", str(corpus_small), store=other).output)
    evals("export", run_id, "--output", str(exported), store=other)
    assert evals("import", str(exported)).output == f"imported run {run_id} ({exported})\n"
    assert evals("import", str(exported)).output == f"already in store: run {run_id} ({exported})\n"


def test_runs_lists_newest_first_with_filters(evals, corpus_small):
    """`evals runs` prints a table newest first; --strategy filters it."""
    first = run_id_of(evals("run", "--runner", "no_memory", "--corpus", str(corpus_small)).output)
    second = run_id_of(evals("run", "--runner", "mneme", "--corpus", str(corpus_small)).output)
    lines = evals("runs").output.splitlines()
    assert lines[0].split()[:4] == ["run", "date", "commit", "strategy"]
    assert [line.split()[0] for line in lines[1:]] == [second, first]
    filtered = evals("runs", "--strategy", "no_memory", "--format", "json").output
    assert [row["run_id"] for row in json.loads(filtered)] == [first]


def test_empty_store_lists_nothing(evals, store_path):
    """On a store with no runs, `evals runs` and `evals leaderboard` print just their headers."""
    Store.open(store_path).close()
    assert evals("runs").output.split() == [
        "run",
        "date",
        "commit",
        "strategy",
        "model",
        "k",
        "corpus",
        "headline",
        "hits",
        "tokens",
        "/",
        "test",
        "point",
        "emb",
        "new/cached",
    ]
    assert json.loads(evals("leaderboard", "--format", "json").output) == []


def test_missing_store_is_a_clear_error_for_readers(store_path):
    """Listing runs of a store that does not exist is a one-line error and creates nothing."""
    result = CliRunner().invoke(cli, ["runs", "--store", str(store_path)])
    assert result.exit_code == 1 and "no store at" in result.output
    assert not store_path.exists()


def test_leaderboard_formats(evals, corpus_small):
    """The leaderboard prints as a table, JSON and CSV, one row per configuration."""
    for runner in ("full_history", "full_history", "no_memory"):
        evals("run", "--runner", runner, "--corpus", str(corpus_small))
    table = evals("leaderboard", "--wide").output.splitlines()
    rows = json.loads(evals("leaderboard", "--format", "json").output)
    parsed = list(csv.DictReader(io.StringIO(evals("leaderboard", "--format", "csv").output)))
    assert table[0].split()[:2] == ["strategy", "config"] and len(table) == 3
    # As the site: the memories ranked, then the ceilings (full_history), unranked.
    assert [(r["strategy"], r["rank"]) for r in rows] == [("no_memory", 1), ("full_history", None)]
    assert [r["recall"] for r in parsed] == ["0.0", "1.0"]
    assert rows[1]["metrics"]["recall"]["low"] == pytest.approx(0.51, abs=0.001)
    assert [r["recall_low"] for r in parsed][1] == rows[1]["metrics"]["recall"]["low"].__repr__()


def test_estimated_tokens_are_marked(evals, store_path, corpus_small):
    """A run counted with the ~4-characters estimate shows its tokens with '~' and a note."""
    from evals.model.provenance import collect_provenance
    from evals.model.tokens import TokenCounter
    from evals.run.evaluate import RunConfig, evaluate

    evaluation = evaluate(RunConfig(strategy="full_history", corpus=corpus_small), counter=TokenCounter(exact=False))
    with Store.open(store_path) as store:
        store.append(evaluation, collect_provenance())
    for table in (evals("leaderboard").output, evals("leaderboard", "--wide").output):
        lines = table.splitlines()
        assert any(" ~" in line for line in lines[:3])
        assert lines[-1].startswith("~ tokens estimated")


def test_compare_prints_flips_with_counts(evals, corpus_small):
    """`evals compare A B` lists the points hit by A only and by B only with their counts."""
    full = run_id_of(evals("run", "--runner", "full_history", "--corpus", str(corpus_small)).output)
    mneme = run_id_of(evals("run", "--runner", "mneme", "--corpus", str(corpus_small)).output)
    output = evals("compare", full, mneme).output
    assert "hit by A only: 2\n" in output and "hit by B only: 0\n" in output
    assert "unchanged: 2 hit by both, 0 by neither" in output
    assert "different corpora" not in output


def test_compare_across_corpora_says_so(evals, corpus_small, tmp_path):
    """Comparing runs on different corpora says so plainly."""
    changed = tmp_path / "corpus"
    changed.mkdir()
    for path in corpus_small.glob("*.json"):
        (changed / path.name).write_text(path.read_text().replace("Heads up", "Note"))
    a = run_id_of(evals("run", "--runner", "full_history", "--corpus", str(corpus_small)).output)
    b = run_id_of(evals("run", "--runner", "full_history", "--corpus", str(changed)).output)
    assert "the runs are on different corpora" in evals("compare", a, b).output


# -- bad input: one line, non-zero exit, store unchanged -----------------------------------------


def test_unknown_run_id_is_one_line(evals, store_path, corpus_small):
    """export of a run id that is not in the store: one-line error, exit 1."""
    evals("run", "--runner", "no_memory", "--corpus", str(corpus_small))
    result = CliRunner().invoke(cli, ["export", "nope", "--store", str(store_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no run 'nope'") and result.output.count("\n") == 1


def test_foreign_store_file_fails_before_computing(store_path, corpus_small):
    """A text file given as --store: one-line error, exit 1, file unchanged."""
    store_path.write_text("not a database\n")
    result = CliRunner().invoke(cli, ["run", "--runner", "no_memory", "--corpus", str(corpus_small), "--store", str(store_path)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "not a DuckDB file" in result.output
    assert store_path.read_text() == "not a database\n"


def test_explicit_store_in_missing_directory_is_an_error(corpus_small, tmp_path):
    """--store in a directory that does not exist is a one-line error; nothing is created."""
    path = tmp_path / "nowhere" / "r.duckdb"
    result = CliRunner().invoke(cli, ["run", "--runner", "no_memory", "--corpus", str(corpus_small), "--store", str(path)])
    assert result.exit_code == 1 and "does not exist" in result.output
    assert not path.parent.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "invalid JSON"),
        ('{"strategy": {"name": "x"}}', "no 'run' block"),
        ('{"run": {"format": "mneme-evals-run"}}', "not a valid evals export"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_import_file_leaves_store_unchanged(evals, store_path, corpus_small, tmp_path, content, message):
    """An import file of the wrong shape: one-line error, exit 1, store bytes unchanged."""
    evals("run", "--runner", "no_memory", "--corpus", str(corpus_small))
    before = store_bytes(store_path)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = CliRunner().invoke(cli, ["import", str(bad), "--store", str(store_path)])
    assert result.exit_code == 1 and message in result.output and result.output.count("\n") == 1
    assert store_bytes(store_path) == before


def test_one_bad_file_blocks_the_whole_import(evals, store_path, corpus_small, tmp_path):
    """Importing a good file with a bad one writes neither."""
    other = tmp_path / "other.duckdb"
    good = tmp_path / "good.json"
    run_id = run_id_of(evals("run", "--runner", "no_memory", "--corpus", str(corpus_small), store=other).output)
    evals("export", run_id, "--output", str(good), store=other)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = CliRunner().invoke(cli, ["import", str(good), str(bad), "--store", str(store_path)])
    assert result.exit_code == 1
    assert not store_path.exists()


def old_store(path: Path, corpus: Path) -> None:
    """A store at schema 1 holding one no_memory run."""
    with Store.open(path, migrations=MIGRATIONS[:1]) as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus)), collect_provenance())


def test_build_site_refuses_an_older_store_untouched(store_path, corpus_small, tmp_path):
    """build-site on a store at an older schema exits 1 saying how to upgrade it, and leaves the file byte for byte."""
    old_store(store_path, corpus_small)
    before = store_bytes(store_path)
    result = CliRunner().invoke(cli, ["build-site", "--store", str(store_path), "--out", str(tmp_path / "site")])
    assert result.exit_code == 1
    assert (
        f"has schema version 1; this evals needs {MIGRATIONS[-1].version}. Upgrade it with: evals migrate --store "
        in result.output
    )
    assert store_bytes(store_path) == before


def test_migrate_upgrades_an_older_store(evals, store_path, corpus_small):
    """`evals migrate` brings an older store to the current schema, keeping its runs, and says from which."""
    old_store(store_path, corpus_small)
    result = evals("migrate")
    assert result.output == f"store {store_path}: schema 1 -> {MIGRATIONS[-1].version}\n"
    with Store.open(store_path, read_only=True) as store:
        assert store.schema_version == MIGRATIONS[-1].version and store.run_count() == 1


def test_migrate_leaves_a_current_store_as_it_is(evals, store_path):
    """`evals migrate` on a store at the current schema says so and changes no byte."""
    Store.open(store_path).close()
    before = store_bytes(store_path)
    assert evals("migrate").output == f"store {store_path}: already at schema {MIGRATIONS[-1].version}\n"
    assert store_bytes(store_path) == before


def test_migrate_of_a_missing_store_is_an_error(store_path):
    """`evals migrate` creates no store: a missing one is a one-line error."""
    result = CliRunner().invoke(cli, ["migrate", "--store", str(store_path)])
    assert result.exit_code == 1 and "no store at" in result.output
    assert not store_path.exists()


def test_run_upgrades_an_older_store(evals, store_path, corpus_small):
    """`evals run` on an older store upgrades it and appends beside the old run."""
    old_store(store_path, corpus_small)
    assert evals("run", "--runner", "full_history", "--corpus", str(corpus_small)).exit_code == 0
    with Store.open(store_path, read_only=True) as store:
        assert store.schema_version == MIGRATIONS[-1].version and store.run_count() == 2


def test_every_store_command_has_help():
    """Each store command and each of its options has help text."""
    for name in ("run", "runs", "leaderboard", "export", "import", "compare", "migrate"):
        command = cli.commands[name]
        assert command.help
        assert all(p.help for p in command.params if isinstance(p, __import__("click").Option)), name


# -- default location and the legacy path (subprocesses: they depend on the working directory) ---


def python_m_evals(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "EVALS_STORE"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "evals", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )


def test_default_store_is_results_dir_created_if_missing(corpus_small, tmp_path):
    """Without --store or EVALS_STORE, runs go to results/results.duckdb, its directory made as needed."""
    proc = python_m_evals("run", "--runner", "no_memory", "--corpus", str(corpus_small), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("-> results/results.duckdb\n")
    assert (tmp_path / "results" / "results.duckdb").is_file()


def test_evals_store_variable_names_the_store(corpus_small, tmp_path):
    """EVALS_STORE sets the store when --store is not given."""
    path = tmp_path / "elsewhere.duckdb"
    proc = python_m_evals(
        "run", "--runner", "no_memory", "--corpus", str(corpus_small), cwd=tmp_path, env={"EVALS_STORE": str(path)}
    )
    assert proc.returncode == 0, proc.stderr
    assert path.is_file() and not (tmp_path / "results").exists()


def test_legacy_cli_does_not_touch_the_store(corpus_small, tmp_path):
    """`python -m evals --runner ... --output` writes its JSON and creates no store."""
    proc = python_m_evals(
        "--runner", "no_memory", "--corpus", str(corpus_small), "--output", str(tmp_path / "o.json"),
        cwd=tmp_path, env={"EVALS_STORE": str(tmp_path / "s.duckdb")},
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["o.json"]
