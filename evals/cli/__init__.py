"""The ``evals`` command line: parse options, call one core function, echo.

One module per command group; each registers its commands on the group in
:mod:`evals.cli._base`, which also holds the options they share and the one
place that turns :class:`evals.errors.EvalsError` into ``Error: …`` and an exit code.
"""

from __future__ import annotations

import signal
import sys

from evals.cli import _benchmarks, _corpus, _gate, _results, _run, _site, _strategies  # noqa: F401  (they register their commands)
from evals.cli._base import DEFAULT_STORE, cli
from evals.cli._legacy import legacy_cli

__all__ = ["DEFAULT_STORE", "cli", "legacy_cli", "main"]


def main(argv: list[str] | None = None, *, legacy: bool = False) -> None:
    """Entry point. With ``legacy``, plain flags go to the original CLI and subcommands to ``evals``."""
    args = sys.argv[1:] if argv is None else argv
    # Ctrl-C (SIGINT) always interrupts, with exit code 130: a shell script starting a command in the
    # background hands it SIGINT ignored, and `kill -INT` would then be lost while a run is appended.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if legacy and not (args and args[0] in cli.commands):
        legacy_cli.main(args, prog_name="python -m evals")
    else:
        cli.main(args, prog_name="evals")
