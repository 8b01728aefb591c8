"""Memory-eval harness: play labelled conversations through memory strategies.

The public surface is small: load a corpus, build a strategy, run it, score it.
The CLI (`evals`, `python -m evals`) is a thin layer over these functions.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mneme-evals")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
