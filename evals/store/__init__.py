"""The results store: every run, append-only, in one DuckDB file.

::

    with Store.open("results/results.duckdb") as store:
        run_id = store.append(evaluation, collect_provenance())
        store.runs(strategy="mneme")          # newest first
        store.latest_per_configuration()      # what the leaderboard shows
        store.get_run(run_id)                 # the whole run, exact texts included

The schema is versioned with named, ordered migrations (``_schema.py``).
"""

from evals.store._compare import Comparison, Flip, compare_runs
from evals.store._errors import StoreError
from evals.store._exchange import export_document, read_export
from evals.store._keys import cache_key, config_key
from evals.store._models import RunSummary, StoredRun
from evals.store._schema import MIGRATIONS, Migration
from evals.store._store import DEFAULT_LOCK_TIMEOUT, Store
from evals.store._workflow import StoredOutcome, run_with_store

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "MIGRATIONS",
    "Comparison",
    "Flip",
    "Migration",
    "RunSummary",
    "Store",
    "StoreError",
    "StoredOutcome",
    "StoredRun",
    "cache_key",
    "compare_runs",
    "config_key",
    "export_document",
    "read_export",
    "run_with_store",
]
