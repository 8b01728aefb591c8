"""The results store: every run, append-only, in one DuckDB file.

::

    with Store.open("results/results.duckdb") as store:
        run_id = store.append(evaluation, collect_provenance())
        store.runs(strategy="mneme")          # newest first
        store.latest_per_configuration()      # what the leaderboard shows
        store.get_run(run_id)                 # the whole run, exact texts included

The store knows results (:mod:`evals.model.results`, scored by :mod:`evals.judge.scoring`,
measured by :mod:`evals.judge.metrics`) and its own schema; it never plays, runs or
renders anything. The schema is versioned with named, ordered migrations
(``_schema.py``).
"""

from evals.store._connect import DEFAULT_LOCK_TIMEOUT, check_writable, writable_file
from evals.store._errors import CorpusConflict, StoreError
from evals.store._keys import config_key, reuse_key
from evals.store._models import FailedRun, RunSummary, StoredOutcome, StoredRun
from evals.store._read import outcomes_of
from evals.store._records import RunRecord, make_summary, new_run_id
from evals.store._schema import MIGRATIONS, Migration
from evals.store._store import Store
from evals.store._write import release_memory

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "CorpusConflict",
    "FailedRun",
    "MIGRATIONS",
    "Migration",
    "RunRecord",
    "RunSummary",
    "Store",
    "StoreError",
    "StoredOutcome",
    "StoredRun",
    "check_writable",
    "config_key",
    "make_summary",
    "new_run_id",
    "outcomes_of",
    "release_memory",
    "reuse_key",
    "writable_file",
]
