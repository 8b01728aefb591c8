"""The suite's kit: how a bench module declares a benchmark, and what a benchmark is handed when it runs.

A benchmark is a function of one argument, a :class:`Context`, marked with :func:`benchmark`; it measures
and returns its figures as ``{name: number}``. ``bench/suite.py`` finds every marked function in the
``bench/bench_*.py`` modules (as asv finds ``time_*`` and ``track_*``), runs each in a child process of its
own, and keeps the figures per commit. A benchmark says what data it needs (``needs``), so one whose
benchmark files are not on this machine is skipped with the reason, never run on a stand-in; and which
figure must stay under or over what (``targets``), so every run prints the verdict beside the figure.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Downloaded or imported benchmark corpora, by name: ``$EVALS_BENCH_DATA/<name>`` (e.g. ``locomo``, an
# ``evals import-corpus locomo`` folder). The suite never fetches them: a benchmark that needs one is skipped.
DATA_ENV = "EVALS_BENCH_DATA"
Figures = dict[str, float]


class Skip(Exception):
    """A benchmark cannot run here (its data is missing, say); the message says why."""


@dataclass(frozen=True)
class Target:
    """A figure's bound: ``below`` or ``above`` a value (a ratio against the original, a size budget)."""

    figure: str
    bound: float
    below: bool = True

    def met(self, value: float) -> bool:
        return value <= self.bound if self.below else value >= self.bound

    def __str__(self) -> str:
        return f"{'≤' if self.below else '≥'} {self.bound:g}"


@dataclass(frozen=True)
class Context:
    """What a benchmark is handed: a scratch folder of its own, the cached-corpus folder, and ``quick``
    (smaller sizes, for a first look or a check that the benchmark still runs)."""

    work: Path
    cache: Path = BENCH_DIR / ".data"
    quick: bool = False

    def data(self, name: str) -> Path:
        """The folder of benchmark corpus ``name`` under ``$EVALS_BENCH_DATA``, or :class:`Skip` naming what to set."""
        root = os.environ.get(DATA_ENV)
        path = Path(root) / name if root else None
        if path is None or not path.exists():
            raise Skip(f"needs ${DATA_ENV}/{name} (an `evals import-corpus {name}` folder)")
        return path


@dataclass(frozen=True)
class Benchmark:
    """One declared benchmark: its function and what the suite knows of it without running it."""

    function: Callable[[Context], Figures]
    needs: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()
    slow: bool = False  # minutes rather than seconds: left out of `suite.py run` unless named or --all
    name: str = field(default="")

    @property
    def summary(self) -> str:
        return (self.function.__doc__ or "").strip().splitlines()[0] if self.function.__doc__ else ""


def benchmark(
    *, needs: tuple[str, ...] = (), targets: dict[str, str] | None = None, slow: bool = False
) -> Callable[[Callable[[Context], Figures]], Callable[[Context], Figures]]:
    """Mark ``function(ctx) -> {figure: value}`` as a benchmark of the suite.

    ``targets`` maps a figure to its bound, written ``"<= 1.25"`` or ``">= 3"``.
    """

    def parse(figure: str, text: str) -> Target:
        op, _, value = text.partition(" ")
        if op not in ("<=", ">="):
            raise ValueError(f"target of {figure!r} must start with '<=' or '>=': {text!r}")
        return Target(figure, float(value), below=op == "<=")

    declared = tuple(parse(f, t) for f, t in (targets or {}).items())  # a bad target fails where it is written

    def mark(function: Callable[[Context], Figures]) -> Callable[[Context], Figures]:
        function.__benchmark__ = Benchmark(function, needs=needs, targets=declared, slow=slow)  # type: ignore[attr-defined]
        return function

    return mark


def scratch() -> tempfile.TemporaryDirectory:
    """A scratch folder for one benchmark run, removed afterwards."""
    return tempfile.TemporaryDirectory(prefix="evals-bench-")
