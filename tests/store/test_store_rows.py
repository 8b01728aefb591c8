"""The store keeps a row per turn (schema 14).

What it stores and reads is what the code before it stored and read: a store that
code made (``tests/fixtures/store_rows``) migrates and exports byte for byte as it
did, a migrated store and one written now give the same tables and site, and runs
made now store the same values point for point. Writing a corpus takes memory
bounded by DuckDB's limit, not by the corpus, and what DuckDB moves out of memory
goes to a private folder beside the store, never into the working directory.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.cli import evals_output as evals

from evals.cli import cli
from evals.model.provenance import SCRATCH_PREFIX
from evals.store import MIGRATIONS, Store, _connect, _store, _write
from evals.views.report import dump_json

FIXTURES = ROOT / "tests" / "fixtures" / "store_rows"
CORPUS = FIXTURES / "corpus"
SESSIONS = ROOT / "tests" / "fixtures" / "sessions_corpus"
MAIN_SCHEMA = 11  # the schema of the fixture store (made by b5894c7, the last commit before turn rows)
# Metrics declared after the fixture store was made, which no migration backfills (tests/store/test_migrations.py's
# NOT_BACKFILLED): recall within context budgets, fair-play counts and test points, and LongMemEval's turn2session.
# The old runs lack them; runs written now hold them. Every other figure must be the same.
NOT_BACKFILLED = {
    f"{level}.{name}@{budget}tok"
    for level in ("turn", "session")
    for name in ("recall_any", "recall_frac")
    for budget in (256, 1024, 4096)
} | {"retrievals_over_k", "k_reaches_all", "points_returning_all", "test_points"}
NOT_BACKFILLED |= {"turn2session_recall_any", "turn2session_recall_all", "turn2session_ndcg_any"}


def metrics_named(store: Path, names: set[str]) -> set[str]:
    """Which of ``names`` the store holds a figure for."""
    with duckdb.connect(str(store), read_only=True) as con:
        return {m for (m,) in con.execute("SELECT DISTINCT metric FROM run_metrics").fetchall()} & names


@pytest.fixture
def made_by_main(tmp_path: Path) -> Path:
    """The fixture store: 7 strategies on the fixture corpus and 2 on sessions_corpus, at schema 11."""
    path = tmp_path / "main" / "results.duckdb"
    path.parent.mkdir()
    with gzip.open(FIXTURES / "schema11.duckdb.gz") as packed, path.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return path


@pytest.fixture
def exports(tmp_path: Path) -> dict[str, Path]:
    """Each run's export as the code before schema 14 wrote it (``evals export``), by run id."""
    folder = tmp_path / "exports"
    folder.mkdir()
    with tarfile.open(FIXTURES / "exports-b5894c7.tar.gz") as packed:
        packed.extractall(folder, filter="data")
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def test_a_store_made_before_migrates_and_exports_byte_for_byte(made_by_main, exports, tmp_path):
    """Schema 14 moves every turn into rows; each run exported from the migrated store is the file the
    code before wrote, byte for byte (turns, sessions, dates, unrecorded turns, compact summaries)."""
    with duckdb.connect(str(made_by_main), read_only=True) as con:
        turns_before = con.execute("SELECT sum(len(contents)) FROM conversations").fetchone()[0]
    assert Store.upgrade(made_by_main) == (MAIN_SCHEMA, MIGRATIONS[-1].version)
    with duckdb.connect(str(made_by_main), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM conversation_turns").fetchone()[0] == turns_before
        assert {"roles", "contents", "sessions", "dates"}.isdisjoint(c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'conversations'"
        ).fetchall())  # fmt: skip
    assert len(exports) == 9
    for run_id, golden in exports.items():  # each into its own folder: a large export beside it reads as a conversation
        (tmp_path / run_id).mkdir()
        out = tmp_path / run_id / f"{run_id}.json"
        evals("export", run_id, "--store", str(made_by_main), "--output", str(out))
        assert dump_json(without_verdicts(json.loads(out.read_bytes()))) == golden.read_bytes(), run_id


def without_verdicts(document: dict) -> dict:
    """An export less the verdict keys added after the golden files were written: each test point's
    ``verdict``, ``metrics.headline`` and each category's ``headline`` (the rest must be byte for byte)."""
    document["metrics"].pop("headline")
    for row in document["metrics"].get("by_category", []):
        row.pop("headline")
    for conversation in document["conversations"]:
        for point in conversation["test_points"]:
            point.pop("verdict")
    return document


def site_files(folder: Path) -> dict[str, str]:
    """Every file of a built site and its sha256, but the store's copy and the manifest (which names its digest)."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).as_posix() not in ("data/results.duckdb", ".evals-manifest.json")
    }


def test_a_migrated_store_reads_as_one_written_now(made_by_main, exports, tmp_path):
    """The migrated store and a store holding the same runs written now (imported from the exports, through
    today's writer) give the same runs, leaderboard in every format and site, file for file."""
    Store.upgrade(made_by_main)
    fresh = tmp_path / "fresh" / "results.duckdb"
    fresh.parent.mkdir()
    evals("import", *map(str, exports.values()), "--store", str(fresh))
    assert not metrics_named(made_by_main, NOT_BACKFILLED) and metrics_named(fresh, NOT_BACKFILLED)
    with duckdb.connect(str(fresh)) as con:  # computed on import from the exported points: not in the store before
        con.execute(f"DELETE FROM run_metrics WHERE metric IN ({', '.join('?' * len(NOT_BACKFILLED))})", sorted(NOT_BACKFILLED))
    commands = [["runs", "--format", "json"], *(["leaderboard", "--format", f] for f in ("table", "json", "csv", "markdown"))]
    for command in commands:
        assert evals(*command, "--store", str(made_by_main)) == evals(*command, "--store", str(fresh)), command
    for store in (made_by_main, fresh):
        evals("build-site", "--store", str(store), "--out", str(store.parent / "site"))
    old, new = site_files(made_by_main.parent / "site"), site_files(fresh.parent / "site")
    assert len(old) > 40 and old == new


# Columns that say when, where and how fast a run was made, not what it found; the rest must match.
# corpus_dir is the folder as given, which moves with the checkout. And runs.rule (schema 17), which no migration
# backfills: an old run's NULL is read as the rule registered now (test_a_migrated_store_reads_as_one_written_now).
VARYING = {"run_id", "commit", "dirty", "date", "timestamp", "duration_s", "cache_key", "appended_at", "corpus_dir",
           "package_version", "mneme_version", "python_version", "p50_s", "p95_s", "mean_s", "rule",
           "ranked_tokens", "tuned_on", "writes_with_llm"}  # fmt: skip
# ranked_tokens: each ranked record's tokens, NULL before schema 20; tuned_on and writes_with_llm: declared facts,
# NULL for runs stored before schema 22.
# Measured since the fixture store was made.
MEASURED_SINCE = {"ingest_cpu_s_per_1k_turns", "peak_rss_mb"}


# Strategies whose default configuration changed on purpose since the fixture store was made: bm25 makes its words
# as bm25s's README does (a Snowball stemmer), so its runs now rank otherwise; the others must store what they did.
DEFAULTS_CHANGED = {"bm25"}


def table_rows(con: duckdb.DuckDBPyConnection, table: str, run_keys: dict[str, tuple[str, str]]) -> list[tuple]:
    """A table's rows, sorted, without the VARYING columns; a run id becomes its (corpus, strategy)."""
    columns = [c for (c,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]
    ).fetchall()]  # fmt: skip
    kept = [c for c in columns if c not in VARYING]
    selected = ", ".join(f'"{c}"' for c in kept) + (", run_id" if "run_id" in columns else "")
    rows = con.execute(f"SELECT {selected} FROM {table}").fetchall()
    if "run_id" in columns:
        rows = [(*row[:-1], run_keys[row[-1]]) for row in rows if run_keys[row[-1]][1] not in DEFAULTS_CHANGED]
    if table == "run_metrics":  # call latencies and the prefetch's time are measured, not found; NOT_BACKFILLED are new
        rows = [
            row
            for row in rows
            if "latency" not in row[0] and row[0] != "prefetch_s" and row[0] not in NOT_BACKFILLED | MEASURED_SINCE
        ]
    return sorted(rows, key=repr)


def test_runs_stored_now_are_what_the_code_before_stored(made_by_main, tmp_path):
    """The same strategies run now store the same values, point for point, as the code before stored
    (migrated): every row of every table but the columns that say when and how fast."""
    Store.upgrade(made_by_main)
    fresh = tmp_path / "now.duckdb"
    for strategy in ("no_memory", "full_history", "summary_buffer", "bm25", "random_k", "recency", "mneme"):
        evals("run", "--runner", strategy, "--corpus", str(CORPUS), "--store", str(fresh), "--no-cache")
    for strategy in ("full_history", "bm25"):
        evals("run", "--runner", strategy, "--corpus", str(SESSIONS), "--store", str(fresh), "--no-cache")
    tables = ("runs", "conversations", "conversation_turns", "corpus_test_points", "test_points",
              "run_turn_tokens", "run_metrics", "run_latency", "corpus_references", "test_point_answers")  # fmt: skip
    assert not metrics_named(made_by_main, NOT_BACKFILLED) and metrics_named(fresh, NOT_BACKFILLED) == NOT_BACKFILLED
    found = {}
    for store in (made_by_main, fresh):
        with duckdb.connect(str(store), read_only=True) as con:
            keys = {run_id: (corpus, strategy) for run_id, corpus, strategy in con.execute(
                "SELECT run_id, corpus_name, strategy FROM runs"
            ).fetchall()}  # fmt: skip
            found[store] = {table: table_rows(con, table, keys) for table in tables}
    for table in tables:
        assert found[made_by_main][table] == found[fresh][table], table
    files = [f for folder in (CORPUS, SESSIONS) for f in folder.glob("*.json")]
    turns = sum(len(json.loads(f.read_text(encoding="utf-8"))["turns"]) for f in files)
    assert len(found[fresh]["conversation_turns"]) == turns == 66
    assert len(found[fresh]["test_points"]) == 6 * 6 + 1 * 3  # bm25 left out (DEFAULTS_CHANGED)


def test_turns_are_rows_read_back_a_conversation_at_a_time(store_path):
    """A run writes one row per turn (the `turns` view keeps its columns) and a conversation's turns read
    back whole, its sessions and dates with them; a slice of the run reads only its conversations."""
    evals("run", "--runner", "full_history", "--corpus", str(CORPUS), "--store", str(store_path), "--no-cache")
    with Store.open(store_path, read_only=True) as store:
        (summary,) = store.runs()
        whole = store.get_run(summary.run_id)
        slices = list(store.iter_run(summary.run_id, batch_turns=1))
        rows = store._con.execute("SELECT * FROM turns WHERE conversation_id = '03_mixed' ORDER BY turn_index").fetchall()
        view = [c for (c,) in store._con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'turns'"
        ).fetchall()]  # fmt: skip
    assert view == ["corpus_digest", "conversation_id", "turn_index", "role", "content"]
    assert [row[2:] for row in rows] == [
        (0, "user", "ok"), (1, "assistant", "ok"), (2, "user", "My locker code is 4471."),
        (3, "assistant", "ok"), (4, "user", "ok"), (5, "user", "What was it again?"),
    ]  # fmt: skip
    assert whole.sessions["03_mixed"] == [None, "a", "a", None, "b", None] and "02_plain" not in whole.sessions
    assert whole.dates["03_mixed"] == [None, None, "2024-01-02", None, None, None]
    assert whole.unrecorded == {"01_long": [20]}
    assert [len(part.run.conversations) for part in slices] == [1, 1, 1, 1]
    assert [c for part in slices for c in part.run.conversations] == whole.run.conversations
    assert {cid: t for part in slices for cid, t in part.transcripts.items()} == whole.transcripts


def test_a_conversation_missing_turns_is_one_line(store_path):
    """A store whose turn rows do not add up to a conversation's turn count says so and names it."""
    evals("run", "--runner", "no_memory", "--corpus", str(CORPUS), "--store", str(store_path), "--no-cache")
    with duckdb.connect(str(store_path)) as con:
        con.execute("DELETE FROM conversation_turns WHERE conversation_id = '02_plain' AND turn_index = 3")
    with Store.open(store_path, read_only=True) as store:
        (summary,) = store.runs()
    out = store_path.parent / "x.json"
    result = CliRunner().invoke(cli, ["export", summary.run_id, "--store", str(store_path), "--output", str(out)])
    assert result.exit_code == 1
    assert "conversation '02_plain' of corpus" in result.output and "does not have its 6 turns stored" in result.output
    assert len(result.output.strip().splitlines()) == 1


def shown(limit: str) -> str:
    """A memory limit as DuckDB shows it once set (128MB is "122.0 MiB")."""
    with duckdb.connect() as con:
        con.execute(f"SET memory_limit = '{limit}'")
        return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_duckdb_spills_into_a_private_folder_it_removes(store_path, tmp_path, monkeypatch):
    """A writer's temporary folder is a private one beside the store; a reader's is in the system's
    temporary folder; both go when the store closes, and nothing lands in the working directory."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with Store.open(store_path) as store:
        (folder,) = store._con.execute("SELECT current_setting('temp_directory')").fetchone()
        (limit,) = store._con.execute("SELECT current_setting('memory_limit')").fetchone()
        spill = Path(folder)
        assert spill.parent == store_path.parent
        assert spill.name.startswith(f"{SCRATCH_PREFIX}{store_path.name}.spill-{os.getpid()}-")
        assert stat.S_IMODE(spill.stat().st_mode) == 0o700
    assert not spill.exists() and limit == shown(_connect.MEMORY_LIMIT)
    with Store.open(store_path, read_only=True) as store:
        reader = Path(store._con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
        assert reader.is_dir() and reader.parent != store_path.parent
    assert not reader.exists()
    assert list(work.iterdir()) == []
    assert sorted(p.name for p in store_path.parent.iterdir() if p.name != "work") == [store_path.name]


def test_a_killed_writers_spill_folder_is_removed_on_the_next_open(store_path):
    """A spill folder left by a process that is gone is removed by the next writable open; a running one's stays."""
    Store.open(store_path).close()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    left = store_path.with_name(f"{SCRATCH_PREFIX}{store_path.name}.spill-{gone.stdout.strip()}-x1")
    running = store_path.with_name(f"{SCRATCH_PREFIX}{store_path.name}.spill-{os.getppid()}-x2")
    for folder in (left, running):
        folder.mkdir()
        (folder / "duckdb_temp_storage-0.tmp").write_bytes(b"x" * 100)
    Store.open(store_path).close()
    assert not left.exists() and running.exists()


def test_a_migration_over_its_memory_limit_runs_without_one(made_by_main, monkeypatch):
    """A migration that needs more than MIGRATION_MEMORY_LIMIT is applied again without a limit rather than
    refused; the connection gets its usual limit back, and the store reads as it did."""
    calls = []
    apply = _store.Store._apply
    monkeypatch.setattr(_store, "MIGRATION_MEMORY_LIMIT", "1MB")
    monkeypatch.setattr(_store.Store, "_apply", staticmethod(lambda *args: calls.append(args[2]) or apply(*args)))
    with Store.open(made_by_main) as store:
        assert store.schema_version == MIGRATIONS[-1].version
        assert store._con.execute("SELECT current_setting('memory_limit')").fetchone() == (shown(_connect.MEMORY_LIMIT),)
        assert len(store.get_run(store.runs()[0].run_id).transcripts) == 1
    assert calls == [MAIN_SCHEMA, MAIN_SCHEMA]  # the first attempt ran out of memory and was rolled back


WRITE_A_CORPUS = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from evals.model.corpus import Conversation, Corpus, corpus_digest
    from evals.run.playthrough import play_corpus
    from evals.model.provenance import Provenance
    from evals.judge.scoring import Evaluation, score_run
    from evals.store import Store, _connect, _records
    from evals.strategies import NoMemory
    from evals.model.tokens import TokenCounter

    _connect.MEMORY_LIMIT = "24MB"  # small beside the corpora, so what grows with them shows
    _records.CORPUS_BATCH_CHARS = 2 * 1024**2
    conversations = []
    for c in range(int(sys.argv[2])):  # 400 turns of 2,500 characters each (1 MB), every turn its own text
        texts = [f"{c}.{t} " + str(c * 400 + t) * (2500 // len(str(c * 400 + t))) for t in range(400)]
        turns = [{"role": "user", "content": text} for text in texts]
        turns.append({"role": "user", "content": "q?", "test_at": {"question": "q?", "expected_fact": "x"}})
        conversations.append(Conversation(id=f"c{c:02d}", description="d", turns=turns))
    corpus = Corpus(directory=Path("big"), conversations=conversations, digest=corpus_digest(conversations))
    run = play_corpus(corpus, NoMemory())
    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    text = sum(len(t.content) for c in conversations for t in c.turns)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with Store.open(sys.argv[1]) as store:
        provenance = Provenance(commit="a" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")
        store.append(evaluation, provenance)
    print(text, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)
    """
)


def test_writing_a_corpus_takes_memory_that_does_not_grow_with_it(tmp_path):
    """The first run into a store writes its corpus with the process's peak rising by about as much for
    60 MB of text as for 20 MB: DuckDB held every row uncompressed until the checkpoint when a
    conversation's turns were one list value (the rise grew by about 3.5 times the text), and the store
    reads every turn back."""
    rises = {}
    for count in (20, 60):
        store = tmp_path / f"{count}.duckdb"
        command = [sys.executable, "-c", WRITE_A_CORPUS, str(store), str(count)]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        text, rises[count] = map(int, result.stdout.splitlines()[-1].split())
        with duckdb.connect(str(store), read_only=True) as con:
            assert con.execute("SELECT count(*), sum(length(content)) FROM conversation_turns").fetchone() == (count * 401, text)
    print(f"peak rise writing 20 MB of text {rises[20]:,} bytes, 60 MB {rises[60]:,}")
    assert rises[60] - rises[20] < 10_000_000, rises


def limit_mib(store: Store) -> float:
    (value,) = store._con.execute("SELECT current_setting('memory_limit')").fetchone()
    number, unit = value.split()
    return float(number) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]


def test_records_stored_as_big_texts_are_written_and_read_past_the_limit(store_path, monkeypatch):
    """A run whose records are texts of their own (summaries by another summariser than the default, which
    the store cannot keep as references) takes what DuckDB needs for them, as before there was a limit:
    the write lifts it past TEXTS_UNDER_LIMIT, and a read that runs out of memory is done again without."""
    from evals.judge.scoring import Evaluation, score_run
    from evals.model.corpus import Conversation, Corpus, corpus_digest
    from evals.model.provenance import Provenance
    from evals.model.tokens import TokenCounter
    from evals.run.playthrough import play_corpus
    from evals.strategies.summary_buffer import SummaryBuffer, concatenate_summary

    for module in (_connect, _write):
        monkeypatch.setattr(module, "MEMORY_LIMIT", "16MB")
    monkeypatch.setattr(_connect, "READ_MEMORY_LIMIT", "16MB")
    conversations = []
    for c in range(8):
        turns: list[dict] = [{"role": "user", "content": f"{c}.{t} " + "x" * 4000} for t in range(120)]
        for t in range(20, 120, 10):
            turns[t]["test_at"] = {"question": "q?", "expected_fact": "x"}
        conversations.append(Conversation(id=f"c{c}", description="d", turns=turns))
    corpus = Corpus(directory=Path("big"), conversations=conversations, digest=corpus_digest(conversations))
    run = play_corpus(corpus, SummaryBuffer(summarize_fn=lambda messages: "Mine. " + concatenate_summary(messages)))
    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    texts = sum(len(r) for c in run.conversations for p in c.test_points for r in p.retrieved_records)
    assert texts > 16 * 1024**2  # beyond the limit
    provenance = Provenance(commit="a" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")
    with Store.open(store_path) as store:
        run_id = store.append(evaluation, provenance)
        assert limit_mib(store) < 17  # lifted for the write only
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
        assert limit_mib(store) < 17  # lifted for the read only
    assert [p.retrieved_records for c in stored.run.conversations for p in c.test_points] == [
        p.retrieved_records for c in run.conversations for p in c.test_points
    ]
