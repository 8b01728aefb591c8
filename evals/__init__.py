"""Memory-eval harness: play labelled conversations through memory strategies.

The public surface is small, and each name is also at home in its layer:

- ``load_corpus(directory)``: a corpus folder, checked (:mod:`evals.model.corpus`);
- ``RunConfig``: everything that decides a run's numbers: the corpus, the strategy and its options, k,
  answers and judge (:mod:`evals.run.config`);
- ``evaluate(config)``: one run end to end: load the corpus, build the strategy, play it, score it
  (:mod:`evals.run.evaluate`);
- ``Store``: the DuckDB results file runs are appended to and read from (:mod:`evals.store`);
- ``EvalsError``: what every one of them raises for a problem the user can fix (:mod:`evals.errors`);
- ``__version__``.

The CLI (`evals`, `python -m evals`) is a thin layer over these functions.
"""

from typing import Any

__all__ = ["EvalsError", "RunConfig", "Store", "__version__", "evaluate", "load_corpus"]

# Where each public name lives. Each is imported on first use: importing this package must cost
# nothing, so that the command line's own handling (Ctrl-C's above all) is in place within
# milliseconds of the interpreter's start.
_HOMES = {
    "EvalsError": "evals.errors",
    "RunConfig": "evals.run.config",
    "Store": "evals.store",
    "evaluate": "evals.run.evaluate",
    "load_corpus": "evals.model.corpus",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("mneme-evals")
        except PackageNotFoundError:  # running from a source tree that was never installed
            found = "0+unknown"
        globals()["__version__"] = found
        return found
    if name in _HOMES:
        from importlib import import_module

        value = getattr(import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
