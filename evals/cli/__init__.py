"""The ``evals`` command line: parse options, call one core function, echo.

One module per command group; each registers its commands on the group in
:mod:`evals.cli._base`, which also holds the options they share and the one
place that turns :class:`evals.errors.EvalsError` into ``Error: …`` and an exit code.

The command modules are imported when the group is first needed (``cli``), not
with this package: ``python -m evals --runner …`` runs the original CLI alone
and should not pay for the others.
"""

from __future__ import annotations

# Only what the interpreter has loaded already: Ctrl-C is the command line's to answer from the
# moment it starts (main), and an interruption while this module is imported would be a traceback.
import signal
import sys

TYPE_CHECKING = False  # typing itself is not loaded yet

if TYPE_CHECKING:
    from typing import Any

__all__ = ["DEFAULT_STORE", "cli", "exit_interrupted", "legacy_cli", "main"]


def _group() -> Any:
    """The ``evals`` group with every command registered on it."""
    from evals.cli import _benchmarks, _corpus, _gate, _results, _run, _site, _strategies  # noqa: F401  (they register their commands)
    from evals.cli._base import cli

    return cli


def __getattr__(name: str) -> Any:
    if name == "cli":
        return _group()
    if name == "legacy_cli":
        from evals.cli._legacy import legacy_cli

        return legacy_cli
    if name == "DEFAULT_STORE":
        from evals.cli._base import DEFAULT_STORE

        return DEFAULT_STORE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None, *, legacy: bool = False) -> None:
    """Entry point. With ``legacy``, plain flags go to the original CLI and subcommands to ``evals``."""
    args = sys.argv[1:] if argv is None else argv
    # Ctrl-C (SIGINT) always interrupts, with exit code 130: a shell script starting a command in the
    # background hands it SIGINT ignored, and `kill -INT` would then be lost while a run is appended.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # A subcommand's name never starts with "-"; only then is the whole group needed to tell.
        if legacy and not (args and not args[0].startswith("-") and args[0] in _group().commands):
            from evals.cli._legacy import legacy_cli

            legacy_cli.main(args, prog_name="python -m evals")
        else:
            _group().main(args, prog_name="evals")
    except BaseException as exc:  # Ctrl-C outside a command's own handling: importing it, or after it ended
        if not isinstance(exc, KeyboardInterrupt):
            from evals.io.interrupts import is_interruption
        if not isinstance(exc, KeyboardInterrupt) and not is_interruption(exc):
            # The command is over and its exit code decided: a Ctrl-C while the interpreter shuts down
            # (which restores SIGINT's default action) would kill it silently instead.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            raise
        exit_interrupted()


def exit_interrupted() -> None:
    """Say "Interrupted." and leave with exit code 130, even if Ctrl-C comes again meanwhile."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stderr.write("Interrupted.\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(130)
