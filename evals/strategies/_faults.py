"""What a plug-in strategy can get wrong, each said in one line: what its code raises, what it
returns, and values the store could not keep.

A plug-in's code runs inside ours (its import, its factory, every call a play-through makes). What it
raises is its fault, not the harness's, and becomes a :class:`StrategyError` naming the strategy and
the call (:func:`plugin_fault`): every ``BaseException``, ``SystemExit`` (a plug-in calling
``sys.exit(0)`` must not end a run with exit code 0 and nothing stored), ``GeneratorExit`` and a
plug-in's own ``BaseException`` subclasses included, and :class:`CallTimeout`, a call that ran past
``--call-timeout``. ``KeyboardInterrupt`` stays the user's: ``except`` cannot leave one class out of
``BaseException``, so the handlers catch :data:`PLUGIN_FAULTS` and the functions that word the fault
(:func:`fault_text`, :func:`plugin_fault`, which every handler calls) raise a ``KeyboardInterrupt``
again instead of wording it.

:func:`unstorable` says why a value (an option, a configuration) could not be stored and read back:
the store keeps a configuration as JSON and exports it with orjson, which refuses integers beyond
64 bits, so such a value is refused before a run rather than breaking the append-only store.
"""

from __future__ import annotations

import math
from typing import Any

from evals.errors import EvalsError
from evals.io.interrupts import reraise_as_interrupt
from evals.strategies.base import lone_surrogate

__all__ = [
    "MAX_CONFIGURATION_CHARS",
    "MAX_CONFIGURATION_DEPTH",
    "MAX_INT",
    "MAX_OPTION_CHARS",
    "MIN_INT",
    "PLUGIN_FAULTS",
    "CallTimeout",
    "StrategyError",
    "fault_text",
    "kind_of",
    "plugin_fault",
    "reraise_interrupt",
    "unstorable",
]

# What a plug-in's code may raise that is its own fault: anything (SystemExit: sys.exit() in a strategy
# must not end a run with exit code 0 and nothing stored; GeneratorExit; its own BaseException
# subclasses). KeyboardInterrupt is the user's: fault_text and plugin_fault raise it again, so catch
# PLUGIN_FAULTS only where one of them words what was caught.
PLUGIN_FAULTS = (BaseException,)
MAX_FAULT_CHARS = 500  # of a plug-in's exception message, in the one-line error

# What the store can read back (the configuration is stored as JSON and exported with orjson).
MIN_INT, MAX_INT = -(2**63), 2**63 - 1  # its integers: signed 64 bits
MAX_OPTION_CHARS = 4096  # one string in a configuration: a model name, a URL, a path
MAX_CONFIGURATION_CHARS = 65536  # the whole configuration, as JSON
MAX_CONFIGURATION_DEPTH = 16


class StrategyError(EvalsError):
    """A strategy cannot be found, its options are wrong, it cannot be built, or it broke the contract."""


class CallTimeout(BaseException):
    """Raised inside a call into a strategy that ran past ``--call-timeout`` (:mod:`evals.strategies._deadline`).

    A BaseException, so a plug-in's ``except Exception`` does not swallow it on its way out. It is
    raised without arguments (a thread can only be handed a class to raise), so each limit raises a
    subclass whose ``seconds`` is its limit."""

    seconds: float = math.nan


def reraise_interrupt(exc: BaseException) -> None:
    """Ctrl-C is the user's, not a plug-in's fault: raise it again rather than word it (also when it
    stopped a DuckDB query, the embedding cache's say, which DuckDB reports as a RuntimeError)."""
    reraise_as_interrupt(exc)


def fault_text(exc: BaseException) -> str:
    """What a plug-in raised, in one short line: its type and message (a KeyboardInterrupt is raised again)."""
    reraise_interrupt(exc)
    if isinstance(exc, CallTimeout):
        return f"no result within --call-timeout {exc.seconds:g} s (the call was stopped)"
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) (sys.exit() in a strategy's code is a fault, not the end of the run)"
    try:
        text = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - a plug-in's exception whose __str__ raises in turn
        text = "(its message cannot be read)"
    if len(text) > MAX_FAULT_CHARS:
        text = text[:MAX_FAULT_CHARS] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def plugin_fault(strategy: str, call: str, exc: BaseException, where: str = "") -> StrategyError:
    """The error for a fault in a strategy's own code: ``strategy NAME: CALL raised TYPE: message, at WHERE``
    (``CALL gave no result within --call-timeout N s`` for a call that ran too long)."""
    what = f"gave {fault_text(exc)}" if isinstance(exc, CallTimeout) else f"raised {fault_text(exc)}"
    return StrategyError(f"strategy {strategy}: {call} {what}{', at ' + where if where else ''}")


def unstorable(value: Any, where: str = "", depth: int = 0) -> str | None:
    """Why ``value`` (a configuration, an option) could not be stored and read back, or None when it can.

    JSON values only; integers within signed 64 bits, finite floats, text without lone
    surrogates and at most :data:`MAX_OPTION_CHARS` long, nested at most
    :data:`MAX_CONFIGURATION_DEPTH` deep."""
    at = f"{where}: " if where else ""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (
            None
            if MIN_INT <= value <= MAX_INT
            else f"{at}{_digits(value)} is beyond what the store keeps (integers from -2**63 to 2**63-1)"
        )
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{at}{value} is not a finite number, which the store cannot keep"
    if isinstance(value, str):
        return _unstorable_text(value, at)
    if depth >= MAX_CONFIGURATION_DEPTH:
        return f"{at}nested more than {MAX_CONFIGURATION_DEPTH} levels deep"
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problem = unstorable(item, f"{where}[{index}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{at}key {key!r} is not text"
            problem = _unstorable_text(key, f"{where}: key " if where else "key ") or unstorable(
                item, f"{where}.{key}" if where else key, depth + 1
            )
            if problem is not None:
                return problem
        return None
    return f"{at}a {type(value).__name__} is not a JSON value"


def _unstorable_text(text: str, at: str) -> str | None:
    if len(text) > MAX_OPTION_CHARS:
        return f"{at}text of {len(text):,} characters is longer than the {MAX_OPTION_CHARS:,} a setting may be"
    surrogate = lone_surrogate(text)
    return None if surrogate is None else f"{at}holds a lone surrogate (\\u{ord(surrogate):04x}), which is not a character"


def _digits(value: int) -> str:
    """An integer as written, or as its length when huge (Python refuses str() of one past 4,300 digits)."""
    digits = value.bit_length() * 30103 // 100000 + 1  # about log10(2) per bit
    return f"{value}" if digits <= 40 else f"an integer of about {digits:,} digits"


def kind_of(value: Any) -> str:
    """``None``, ``a dict``, ``an int``: what a plug-in returned, for an error."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
