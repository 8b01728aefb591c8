"""The results store's library API: schema, append, reads, cache keys, bad files, export/import."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from helpers.results import as_stored
from helpers.stores import CLEAN

from evals.analysis.compare import compare_runs
from evals.judge.stats import wilson_interval
from evals.model.corpus import Conversation
from evals.model.provenance import NO_GIT, Provenance, git_revision
from evals.model.tokens import TokenCounter
from evals.model.turn_refs import TurnLookup, encode_records
from evals.run.evaluate import RunConfig, evaluate
from evals.run.workflow import planned_reuse_key
from evals.store import MIGRATIONS, Store, StoreError
from evals.views.exchange import export_document, read_export
from evals.views.report import legacy_json, stored_legacy_json

STRATEGIES = ("no_memory", "full_history", "summary_buffer", "mneme")


@pytest.fixture
def evaluate_small(corpus_small):
    """Evaluate one strategy over the small fixture corpus."""

    def run(runner: str, **settings):
        return evaluate(RunConfig(strategy=runner, corpus=corpus_small, **settings))

    return run


def fingerprint(path: Path) -> tuple:
    """Everything about a file (and its directory listing) a refusal must leave as it was."""
    data = path.read_bytes() if path.exists() else None
    return (hashlib.sha256(data).hexdigest() if data is not None else None, sorted(os.listdir(path.parent)))


def append(store_path: Path, evaluation, provenance: Provenance = CLEAN) -> str:
    with Store.open(store_path) as store:
        return store.append(evaluation, provenance)


# -- schema -------------------------------------------------------------------------------------


def test_new_store_has_every_migration(store_path):
    """Opening a missing path creates the file with every named migration applied, in order."""
    with Store.open(store_path) as store:
        assert store.schema_version == MIGRATIONS[-1].version
    con = duckdb.connect(str(store_path), read_only=True)
    rows = con.execute("SELECT version, name FROM evals_schema ORDER BY version").fetchall()
    con.close()
    assert rows == [(m.version, m.name) for m in MIGRATIONS]


def test_older_schema_is_migrated_keeping_runs(store_path, evaluate_small):
    """A store at schema 1 opened for writing is upgraded to the current schema and keeps its runs."""
    with Store.open(store_path, migrations=MIGRATIONS[:1]) as store:
        run_id = store.append(evaluate_small("no_memory"), CLEAN)
        assert store.schema_version == 1
    with Store.open(store_path) as store:
        assert store.schema_version == MIGRATIONS[-1].version
        assert [s.run_id for s in store.latest_per_configuration()] == [run_id]


def test_read_only_open_of_older_schema_is_refused_untouched(store_path, evaluate_small):
    """A read-only open of an older store never migrates it: a StoreError says how to upgrade, the file is unchanged."""
    with Store.open(store_path, migrations=MIGRATIONS[:1]) as store:
        store.append(evaluate_small("no_memory"), CLEAN)
    before = fingerprint(store_path)
    message = (
        f"store {store_path} has schema version 1; this evals needs {MIGRATIONS[-1].version}. "
        f"Upgrade it with: evals migrate --store {store_path} (any run or import also upgrades it)"
    )
    with pytest.raises(StoreError) as raised:
        Store.open(store_path, read_only=True)
    assert str(raised.value) == message
    assert fingerprint(store_path) == before


def altered(store_path: Path, sql: str) -> None:
    """A new empty store at ``store_path``, then ``sql`` run on its file directly, as another program could."""
    with Store.open(store_path):
        pass
    con = duckdb.connect(str(store_path))
    con.execute(sql)
    con.close()


def test_newer_schema_is_refused_untouched(store_path):
    """A store written by a newer evals is refused with a clear error and not modified."""
    altered(store_path, "INSERT INTO evals_schema VALUES (99, 'from_the_future', now())")
    before = fingerprint(store_path)
    for read_only in (False, True):
        with pytest.raises(StoreError, match="schema version 99, newer than this evals"):
            Store.open(store_path, read_only=read_only)
    assert fingerprint(store_path) == before


def test_unknown_migration_history_is_refused_untouched(store_path):
    """A store whose applied migrations have other names (a foreign or pre-release schema) is refused."""
    altered(store_path, "UPDATE evals_schema SET name = 'initial' WHERE version = 1")
    before = fingerprint(store_path)
    with pytest.raises(StoreError, match="migration 1 'initial', which this evals does not know"):
        Store.open(store_path)
    assert fingerprint(store_path) == before


def test_text_file_is_refused_untouched(store_path):
    """A file that is not DuckDB is refused and left as it was."""
    store_path.write_text("run_id,recall\nabc,1.0\n")
    before = fingerprint(store_path)
    with pytest.raises(StoreError, match="is not a DuckDB file"):
        Store.open(store_path)
    assert fingerprint(store_path) == before


def test_foreign_duckdb_file_gets_no_tables(store_path):
    """A DuckDB file holding other tables is refused; no evals table is added to it."""
    con = duckdb.connect(str(store_path))
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.close()
    before = fingerprint(store_path)
    with pytest.raises(StoreError, match="not an evals store"):
        Store.open(store_path)
    assert fingerprint(store_path) == before
    con = duckdb.connect(str(store_path), read_only=True)
    assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [("invoices",)]
    con.close()


def test_missing_directory_is_an_error(tmp_path):
    """A store path in a directory that does not exist is an error; nothing is created."""
    path = tmp_path / "missing" / "results.duckdb"
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(path)
    assert not path.parent.exists()


def test_create_parent_makes_the_directory(tmp_path):
    """With create_parent (the default store location), a missing directory is made."""
    path = tmp_path / "results" / "results.duckdb"
    with Store.open(path, create_parent=True) as store:
        assert store.run_count() == 0


def test_read_only_open_of_missing_store_is_an_error(store_path):
    """Reading a store that does not exist says so and creates nothing."""
    with pytest.raises(StoreError, match="no store at"):
        Store.open(store_path, read_only=True)
    assert not store_path.exists()


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nobody can create files in (chmod for users; chattr +i for root), or skip."""
    directory = tmp_path / "locked"
    directory.mkdir()
    if os.geteuid() != 0:
        directory.chmod(0o555)
        yield directory
        directory.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode:
        pytest.skip("cannot make a read-only directory as root here (no chattr +i)")
    yield directory
    subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_read_only_directory_is_an_error(read_only_dir):
    """A store in a directory that cannot be written is a one-line error; nothing is created."""
    with pytest.raises(StoreError, match="cannot") as info:
        Store.open(read_only_dir / "results.duckdb")
    assert "\n" not in str(info.value)
    assert os.listdir(read_only_dir) == []


# -- append and read back -----------------------------------------------------------------------


@pytest.mark.parametrize("runner", STRATEGIES)
def test_run_reads_back_exactly(store_path, evaluate_small, runner):
    """get_run returns the play-through and scores exactly as they were appended (per-call timings
    are kept as their percentiles in run_metrics, not call by call)."""
    evaluation = evaluate_small(runner)
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
    assert stored.run == as_stored(evaluation.run)
    assert stored.summary.metric("retrieve_latency_p95_s").n == len(evaluation.run.timings.retrieve_ns)
    assert stored.scores == evaluation.scores


def test_legacy_json_equals_the_reports(store_path, evaluate_small):
    """legacy_json(run_id) is the document --output writes for that run."""
    evaluation = evaluate_small("summary_buffer")
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
        assert stored_legacy_json(stored) == legacy_json(evaluation.run, evaluation.scores, None, stored.summary.metrics)


def test_transcripts_hold_every_turn(store_path, evaluate_small):
    """transcripts give (role, content) of every turn of every conversation."""
    evaluation = evaluate_small("no_memory")
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        transcripts = store.get_run(run_id).transcripts
    assert transcripts == {c.id: [(t.role, t.content) for t in c.turns] for c in evaluation.corpus.conversations}


def test_full_history_records_are_turn_references(store_path, evaluate_small):
    """full_history's records are stored as turn indices, with no copied text."""
    run_id = append(store_path, evaluate_small("full_history"))
    with Store.open(store_path, read_only=True) as store:
        record_turns = store.get_run(run_id).record_turns
    assert record_turns["002_pet"] == [list(range(8)), list(range(10))]
    con = duckdb.connect(str(store_path), read_only=True)
    assert con.execute("SELECT sum(len(record_texts)) FROM test_points").fetchone()[0] == 0
    con.close()


def test_summaries_are_stored_as_text(store_path, evaluate_small):
    """A record that is no turn (summary_buffer's summary) is marked None and kept as text."""
    evaluation = evaluate_small("summary_buffer")
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
    assert stored.record_turns["002_pet"][0] == [None, 2, 3, 4, 5]
    assert stored.run.conversations[1].test_points[0].retrieved_records[0].startswith("Earlier in the conversation: ")


def test_repeated_turn_text_maps_to_distinct_turns():
    """Two records with the same text as two earlier turns point at both turns, earliest first."""
    conversation = Conversation(
        id="c",
        description="d",
        turns=[{"role": "user", "content": t} for t in ("hi", "Thanks!", "so", "Thanks!", "q")],
    )
    encoded = encode_records(["Thanks!", "so", "Thanks!"], TurnLookup(conversation), before=4)
    assert encoded.refs.tolist() == [1, 2, 3] and encoded.texts == []


def test_text_of_a_later_turn_is_not_a_reference():
    """A record equal only to a turn after the test point is stored as text, not as that turn."""
    conversation = Conversation(id="c", description="d", turns=[{"role": "user", "content": t} for t in ("a", "b", "c")])
    encoded = encode_records(["c"], TurnLookup(conversation), before=1)
    assert encoded.refs.tolist() == [-1] and encoded.texts == ["c"]


def test_turn_tokens_are_stored_once_per_turn(store_path, evaluate_small):
    """A full_history run keeps one token count per turn, and none per retrieved record."""
    evaluation = evaluate_small("full_history")
    run_id = append(store_path, evaluation)
    con = duckdb.connect(str(store_path), read_only=True)
    per_record = con.execute("SELECT sum(len(text_tokens)) FROM test_points").fetchone()[0]
    counts = dict(con.execute("SELECT conversation_id, turn_tokens FROM run_turn_tokens").fetchall())
    con.close()
    assert per_record == 0
    assert counts["002_pet"][:9] == evaluation.scores.points[1][1].record_tokens[:9]
    with Store.open(store_path, read_only=True) as store:
        assert store.get_run(run_id).scores == evaluation.scores


def test_inconsistent_token_counts_are_refused(store_path, evaluate_small):
    """A run claiming two token counts for one turn is refused and nothing is written."""
    evaluation = evaluate_small("full_history")
    evaluation.scores.points[1][1].record_tokens[0] += 1
    with Store.open(store_path) as store:
        with pytest.raises(StoreError, match="counted as both"):
            store.append(evaluation, CLEAN)
        assert store.run_count() == 0


def test_conversations_are_stored_once(store_path, evaluate_small):
    """Turns are stored once per conversation however many runs use them."""
    for runner in STRATEGIES:
        append(store_path, evaluate_small(runner))
    con = duckdb.connect(str(store_path), read_only=True)
    turns, conversations = con.execute("SELECT (SELECT count(*) FROM turns), (SELECT count(*) FROM conversations)").fetchone()
    con.close()
    assert (turns, conversations) == (6 + 11 + 3, 3)


def test_summary_records_provenance_and_interval(store_path, evaluate_small):
    """The summary row carries provenance, UTC date and timestamp, and the Wilson interval."""
    evaluation = evaluate_small("mneme")
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        summary = store.get_summary(run_id)
    started = evaluation.run.started_at
    assert (summary.commit, summary.dirty, summary.mneme_version) == (CLEAN.commit, False, "1.0.0")
    assert (summary.model, summary.strategy, summary.corpus_name) == ("hash-16", "mneme", "corpus_small")
    assert summary.timestamp == started and summary.date == started.date().isoformat()
    recall = summary.metric("recall")
    assert (recall.low, recall.high) == wilson_interval(summary.hits, summary.total)
    assert summary.tokens_per_test_point == summary.metric("tokens_per_test_point").value


def test_runs_are_newest_first_and_filter(store_path, evaluate_small):
    """runs() lists newest first and filters by strategy and by commit prefix."""
    first = append(store_path, evaluate_small("no_memory"))
    second = append(store_path, evaluate_small("mneme"), replace(CLEAN, commit="feedface" * 5))
    with Store.open(store_path, read_only=True) as store:
        assert [s.run_id for s in store.runs()] == [second, first]
        assert [s.run_id for s in store.runs(strategy="no_memory")] == [first]
        assert [s.run_id for s in store.runs(commit="feedfa")] == [second]


def test_latest_per_configuration_keeps_the_newest(store_path, evaluate_small):
    """The leaderboard holds one row per configuration: its latest run."""
    append(store_path, evaluate_small("full_history"))
    newer = append(store_path, evaluate_small("full_history"))
    other = append(store_path, evaluate_small("no_memory"))
    with Store.open(store_path, read_only=True) as store:
        assert [s.run_id for s in store.latest_per_configuration()] == [newer, other]


def test_config_key_is_stable_across_commits(store_path, evaluate_small):
    """The same configuration gets the same config_key on another commit; another k does not."""
    a = append(store_path, evaluate_small("mneme"))
    b = append(store_path, evaluate_small("mneme"), replace(CLEAN, commit="0" * 40))
    c = append(store_path, evaluate_small("mneme", k=3))
    with Store.open(store_path, read_only=True) as store:
        keys = [store.get_summary(run_id).config_key for run_id in (a, b, c)]
    assert keys[0] == keys[1] != keys[2]
    assert keys[0].startswith("mneme-k5-")


def test_unknown_run_id_is_an_error(store_path):
    """Asking for a run that is not there raises StoreError naming it."""
    with Store.open(store_path) as store, pytest.raises(StoreError, match="no run 'nope'"):
        store.get_run("nope")


def test_append_only_adds_rows(store_path, evaluate_small):
    """Appending the same configuration again adds a run and leaves the first one intact."""
    evaluation = evaluate_small("mneme")
    first = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        before = stored_legacy_json(store.get_run(first))
    append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        assert store.run_count() == 2 and stored_legacy_json(store.get_run(first)) == before


READ_PATHS = {
    "get_run": lambda store, run_id: store.get_run(run_id),
    "get_run_outcomes": lambda store, run_id: store.get_run_outcomes(run_id),
    "iter_run": lambda store, run_id: next(store.iter_run(run_id)),
}


@pytest.mark.parametrize("path", READ_PATHS)
def test_every_read_path_carries_the_cutoffs_and_their_rule(store_path, evaluate_small, path):
    """A run read back by any public read path has the cutoffs it was measured at and its cutoff rule."""
    evaluation = evaluate_small("full_history", cutoffs=(2, 3))
    assert evaluation.run.cutoff_rule == "whole_list"  # not the default a forgetful reader would give
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        run = READ_PATHS[path](store, run_id).run
    assert (run.cutoffs, run.cutoff_rule) == (evaluation.run.cutoffs, "whole_list")


# -- cache --------------------------------------------------------------------------------------


def _key(config: RunConfig, provenance: Provenance) -> str | None:
    """The key run-or-reuse looks a run of ``config`` up by, made before running it (evals.run.workflow)."""
    return planned_reuse_key(config, provenance, TokenCounter().tokenizer)


def test_clean_run_is_found_in_the_cache(store_path, corpus_small):
    """A run at a clean commit is found by its inputs' cache key."""
    config = RunConfig(strategy="full_history", corpus=corpus_small)
    run_id = append(store_path, evaluate(config))
    with Store.open(store_path, read_only=True) as store:
        assert store.find_reusable(_key(config, CLEAN)) == run_id


def test_dirty_run_is_never_cached(store_path, corpus_small):
    """A run from a dirty tree is stored without a cache key, so it is never reused."""
    config = RunConfig(strategy="full_history", corpus=corpus_small)
    append(store_path, evaluate(config), replace(CLEAN, dirty=True))
    assert _key(config, replace(CLEAN, dirty=True)) is None
    with Store.open(store_path, read_only=True) as store:
        assert store.find_reusable(_key(config, CLEAN)) is None


def test_cache_key_changes_with_each_input(corpus_small):
    """Commit, seed, package version and library version each change the cache key."""
    config = RunConfig(strategy="no_memory", corpus=corpus_small)
    base = _key(config, CLEAN)
    variants = [replace(CLEAN, commit="1" * 40), replace(CLEAN, package_version="0.2.0"), replace(CLEAN, mneme_version="1.1.0")]
    assert len({base, *(_key(config, v) for v in variants)}) == 4
    assert _key(RunConfig(strategy="no_memory", corpus=corpus_small, seed=7), CLEAN) != base


# -- provenance ---------------------------------------------------------------------------------


def test_outside_git_the_commit_is_a_placeholder(tmp_path):
    """A directory outside any git repository records commit 'no-git', which is never cacheable."""
    assert git_revision(tmp_path) == (NO_GIT, False)


def test_git_revision_reads_head_and_dirty(clean_repo):
    """HEAD is recorded; an untracked file makes the tree dirty unless it is the store itself."""
    head = subprocess.run(["git", "-C", str(clean_repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert git_revision(clean_repo) == (head, False)
    (clean_repo / "results.duckdb").write_text("x")
    assert git_revision(clean_repo) == (head, True)
    assert git_revision(clean_repo, ignore=[clean_repo / "results.duckdb"]) == (head, False)


# -- locking ------------------------------------------------------------------------------------

HOLD_LOCK = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(float(sys.argv[2]))"


def hold_lock(path: Path, seconds: float) -> subprocess.Popen:
    """Another process holding the store's write lock for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_lock_held_too_long_is_a_clear_error(store_path):
    """When another process keeps the lock past the timeout, open fails saying so."""
    with Store.open(store_path):
        pass
    holder = hold_lock(store_path, 10)
    try:
        with pytest.raises(StoreError, match="locked by another process"):
            Store.open(store_path, read_only=True, lock_timeout=0.3)
    finally:
        holder.kill()
        holder.wait()


def test_readers_wait_for_the_lock(store_path):
    """A read waits (with backoff) for a short write elsewhere to finish, then succeeds."""
    with Store.open(store_path):
        pass
    holder = hold_lock(store_path, 0.8)
    started = time.monotonic()
    with Store.open(store_path, read_only=True, lock_timeout=20) as store:
        assert store.run_count() == 0
    assert time.monotonic() - started >= 0.3
    holder.wait()


# -- export / import / compare ------------------------------------------------------------------


def test_export_then_import_reproduces_the_run(tmp_path, evaluate_small):
    """A run exported from one store and imported into another reads back identically."""
    source, target = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    run_id = append(source, evaluate_small("summary_buffer"))
    with Store.open(source, read_only=True) as store:
        original = store.get_run(run_id)
    exported = tmp_path / "run.json"
    exported.write_text(json.dumps(export_document(original)))
    with Store.open(target) as store:
        assert store.write_records([read_export(exported)]) == [True]
        copy = store.get_run(run_id)
    assert copy == original


def test_import_is_idempotent_by_run_id(tmp_path, store_path, evaluate_small):
    """Importing the same run twice leaves one copy of it."""
    run_id = append(store_path, evaluate_small("mneme"))
    with Store.open(store_path, read_only=True) as store:
        document = export_document(store.get_run(run_id))
    exported = tmp_path / "run.json"
    exported.write_text(json.dumps(document))
    with Store.open(store_path) as store:
        assert store.write_records([read_export(exported), read_export(exported)]) == [False, False]
        assert store.run_count() == 1


def test_export_keeps_the_seed_keys(store_path, evaluate_small):
    """An export is the seed document plus one 'run' block."""
    evaluation = evaluate_small("mneme")
    run_id = append(store_path, evaluation)
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
        document = export_document(stored)
    run_block = document.pop("run")
    assert document == legacy_json(evaluation.run, evaluation.scores, None, stored.summary.metrics)
    assert run_block["run_id"] == run_id


def test_altered_export_is_refused(tmp_path, store_path, evaluate_small):
    """An export whose numbers do not match its test points is refused."""
    run_id = append(store_path, evaluate_small("mneme"))
    with Store.open(store_path, read_only=True) as store:
        document = export_document(store.get_run(run_id))
    document["metrics"]["recall_at_k"]["aggregate"] = 1.0
    exported = tmp_path / "run.json"
    exported.write_text(json.dumps(document))
    with pytest.raises(StoreError, match="'metrics' does not match"):
        read_export(exported)


def test_compare_lists_flipped_points(store_path, evaluate_small):
    """compare_runs sorts shared test points into hit->miss, miss->hit and unchanged."""
    full = append(store_path, evaluate_small("full_history"))
    mneme = append(store_path, evaluate_small("mneme"))
    with Store.open(store_path, read_only=True) as store:
        comparison = compare_runs(store.get_run(full), store.get_run(mneme))
    assert comparison.same_corpus
    assert len(comparison.lost) == 2 and comparison.gained == []
    assert comparison.still_hit == 2 and comparison.still_missed == 0
