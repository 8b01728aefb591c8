"""``--call-timeout``: a limit on each call into a strategy, so a plug-in that never returns stops the run.

A play-through under a limit (:func:`call_limit`) wraps each call into the
strategy in the limit (``with limit: strategy.retrieve(...)``). A watchdog
thread sleeps until the running call's deadline; a call still running then is
stopped by raising :class:`~evals.strategies._faults.CallTimeout` inside it,
which the play-through reports like any other plug-in fault, naming the call.

How it is raised depends on the thread that plays:

* the main thread (the CLI, a Ray task): a signal (``SIGURG``, which nothing
  else here uses and whose default action is to ignore it) whose handler
  raises. A signal also ends a blocking system call (``time.sleep``, a socket
  read without a timeout), so such a call is stopped too;
* any other thread: ``PyThreadState_SetAsyncExc``, which raises at the
  thread's next Python instruction: a Python loop is stopped, a call blocked
  in a system call only when it returns.

Either way a call busy inside native code that never returns to Python (a C
extension's endless loop) cannot be stopped, and a plug-in that catches
``BaseException`` and carries on is stopped again every second. A stop
asked for just as the call returns is still that call's: it surfaces within
the ``with`` block, where the play-through's handler words it; none outlives
the call.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from evals.strategies._faults import CallTimeout

__all__ = ["MAX_CALL_TIMEOUT", "CallLimit", "call_limit"]

MAX_CALL_TIMEOUT = 86_400.0  # a day: longer is no limit at all
_SIGNAL = getattr(signal, "SIGURG", None)  # POSIX; elsewhere every thread is stopped the other way
_AGAIN = 1.0  # seconds between stops of a call that caught the last one and went on


@contextmanager
def call_limit(seconds: float | None) -> Iterator[AbstractContextManager[Any]]:
    """What each call into a strategy is wrapped in for one play-through: a :class:`CallLimit` of
    ``seconds`` (its watchdog running while the block lasts), or nothing when ``seconds`` is None."""
    if seconds is None:
        yield nullcontext()
        return
    limit = CallLimit(seconds)
    limit.start()
    try:
        yield limit
    finally:
        limit.stop()


class CallLimit:
    """Stops a call into a strategy that runs longer than ``seconds``; one per play-through and thread."""

    def __init__(self, seconds: float) -> None:
        if not 0 < seconds <= MAX_CALL_TIMEOUT:  # false for nan too
            raise ValueError(f"a call timeout is from 0 to {MAX_CALL_TIMEOUT:g} seconds, not {seconds!r}")
        self.seconds = seconds
        self.timeout = type("CallTimeout", (CallTimeout,), {"seconds": seconds})  # raised bare: see CallTimeout
        self._lock = threading.Lock()
        self._call = 0  # the number of the latest call begun
        self._ended = 0  # ... and of the latest ended
        self._started = 0.0  # when the latest call began (time.monotonic)
        self._stopped = 0  # the latest call the watchdog stopped
        self._stopped_at = 0.0
        self._quit = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._target = 0  # the playing thread
        self._by_signal = False
        self._previous: Any = None  # the handler the signal had before

    # -- one call: ``with limit:`` ----------------------------------------------------------------

    def __enter__(self) -> CallLimit:
        with self._lock:
            self._call += 1
            self._started = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._ended = self._call
            if self._stopped == self._call and not self._by_signal:
                # A stop asked for but not yet raised must not surface in the caller's code: take it back.
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target), None)

    # -- the play-through: start and stop the watchdog --------------------------------------------

    def start(self) -> None:
        self._target = threading.get_ident()
        if _SIGNAL is not None and threading.current_thread() is threading.main_thread():
            try:
                self._previous = signal.signal(_SIGNAL, self._on_signal)
                self._by_signal = True
            except (ValueError, OSError):  # signals unavailable here (an embedded interpreter): the other way
                self._by_signal = False
        self._watchdog = threading.Thread(target=self._watch, name="evals-call-timeout", daemon=True)
        self._watchdog.start()

    def stop(self) -> None:
        self._quit.set()
        if self._watchdog is not None:
            self._watchdog.join()  # no stop is asked for after this
        if self._by_signal:
            signal.signal(_SIGNAL, self._previous if self._previous is not None else signal.SIG_DFL)
            self._by_signal = False

    def _running(self) -> bool:
        """Whether the call the watchdog last stopped is still running (so it should raise now)."""
        return self._stopped == self._call != self._ended

    def _on_signal(self, signum: int, frame: Any) -> None:
        # No lock here: the handler runs in the playing thread, which may hold it (the lock is brief).
        if self._running():
            raise self.timeout

    def _watch(self) -> None:
        delay = self.seconds
        while not self._quit.wait(delay):
            with self._lock:
                now = time.monotonic()
                if self._ended == self._call:  # between calls: the next one ends no sooner than a limit from now
                    delay = self.seconds
                    continue
                due = self._stopped_at + _AGAIN if self._stopped == self._call else self._started + self.seconds
                if now < due:
                    delay = due - now
                    continue
                self._stopped, self._stopped_at = self._call, now
                if self._by_signal:
                    signal.pthread_kill(self._target, _SIGNAL)
                else:
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._target), ctypes.py_object(self.timeout))
                delay = _AGAIN
