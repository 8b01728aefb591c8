"""Ctrl-C, wherever it lands: one test for "this was an interruption", and quiet worker processes.

SIGINT reaches Python as ``KeyboardInterrupt``, except inside a DuckDB query: DuckDB stops the
query and raises ``RuntimeError("Query interrupted")`` instead (a cache write, a store append, a
read for the site). Code that words what it caught (a strategy's fault, a failed write) may also
raise its own error from either. :func:`is_interruption` sees through all of these, so the CLI's
one handler can say "Interrupted." and exit 130 for every one of them.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["DUCKDB_INTERRUPTED", "is_interruption", "reraise_as_interrupt", "shielded_children"]

DUCKDB_INTERRUPTED = "Query interrupted"  # the message of DuckDB's RuntimeError when SIGINT stops a query


def _interrupts_itself(exc: BaseException) -> bool:
    return isinstance(exc, KeyboardInterrupt) or (type(exc) is RuntimeError and str(exc).startswith(DUCKDB_INTERRUPTED))


def is_interruption(exc: BaseException | None) -> bool:
    """Whether ``exc`` is Ctrl-C: a ``KeyboardInterrupt``, DuckDB's ``Query interrupted``, or an
    exception raised from one or while handling one (unless raised ``from None``)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _interrupts_itself(exc):
            return True
        exc = exc.__cause__ if exc.__cause__ is not None or exc.__suppress_context__ else exc.__context__
    return False


def reraise_as_interrupt(exc: BaseException) -> None:
    """Raise ``KeyboardInterrupt`` if ``exc`` is an interruption (so that code catching everything
    to word a fault lets the user's Ctrl-C through); otherwise return."""
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if is_interruption(exc):
        raise KeyboardInterrupt from exc


@contextmanager
def shielded_children() -> Iterator[None]:
    """Child processes started inside this block never see SIGINT. Ctrl-C in a terminal reaches
    every process of its group, and a worker would print a traceback of its own; the parent alone
    answers it (and stops its workers). SIGINT is blocked meanwhile, a forked or spawned child keeps
    the blocked mask for life, and a Ctrl-C that came meanwhile reaches this process when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
