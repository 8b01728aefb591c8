"""Memory-eval harness: play labelled conversations through memory strategies.

The public surface is small: load a corpus, build a strategy, run it, score it.
The CLI (`evals`, `python -m evals`) is a thin layer over these functions.
"""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Read on first use: importing this package must cost nothing, so that the command line's own
    # handling (Ctrl-C's above all) is in place within milliseconds of the interpreter's start.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("mneme-evals")
        except PackageNotFoundError:  # running from a source tree that was never installed
            found = "0+unknown"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
