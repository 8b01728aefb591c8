"""What the bench scripts share: where things are, one way to run and measure a child process, the
original-harness stand-in's command, the machine's load, and a plain-text table.

Each script imports from here (``bench/`` is on ``sys.path`` when a script runs, as it is for the
tests that import ``gen_longmemeval``); nothing here prints a figure of its own.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
EVALS = [sys.executable, "-m", "evals"]  # the evals command, as `python -m evals` runs it


def original_command(strategy: str, corpus: Path, output: Path) -> list[str]:
    """The command that plays ``corpus`` as the original harness did (bench_harness.py's stand-in for it)."""
    return [sys.executable, str(BENCH_DIR / "bench_harness.py"), "--_reference", strategy, str(corpus), str(output)]


@dataclass(frozen=True)
class Child:
    """A finished child process: its wall time, its own resource usage (``os.wait4``) and what it printed."""

    command: Sequence[str]
    wall_s: float
    returncode: int
    usage: os.struct_rusage | None
    timed_out: bool
    stdout: str  # with ``merged``, stdout and stderr together
    stderr: str

    @property
    def peak_mib(self) -> float:
        """Peak RSS in MiB of the child and of the children it waited for (Linux says kB, macOS bytes)."""
        if self.usage is None:
            return 0.0
        return self.usage.ru_maxrss / (1024 * 1024) if sys.platform == "darwin" else self.usage.ru_maxrss / 1024

    @property
    def cpu_s(self) -> float:
        """User and system CPU seconds of the child and of the children it waited for."""
        return 0.0 if self.usage is None else self.usage.ru_utime + self.usage.ru_stime

    @property
    def last_line(self) -> str:
        text = self.stdout.strip()
        return text.splitlines()[-1] if text else ""


def shown(command: Sequence[str]) -> str:
    """A command as a reader would type it: the interpreter by its name, not its path."""
    return " ".join(Path(c).name if c == sys.executable else c for c in command)


def run_child(
    command: Sequence[str],
    *,
    timeout: float = float("inf"),
    merged: bool = False,
    keep_stdout: bool = True,
    cwd: Path | None = REPO_ROOT,
    poll: float = 0.01,
    watch: Callable[[int], None] | None = None,
) -> Child:
    """Run ``command`` (from the repository root unless ``cwd``) to its end, or kill it after ``timeout`` seconds.

    The child is reaped with ``os.wait4``, so its usage is its own, not the largest over every child so far
    (``RUSAGE_CHILDREN``). ``merged`` sends stderr to stdout; without ``keep_stdout`` stdout is discarded.
    ``watch(pid)`` is called at every poll while the child runs (to sample its process tree, say).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdout = out if keep_stdout or merged else subprocess.DEVNULL
        stderr = subprocess.STDOUT if merged else err
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if watch is not None:
                watch(child.pid)
            if time.perf_counter() - started > timeout:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                timed_out = True
                break
            time.sleep(poll)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Child(
            command=list(command),
            wall_s=wall,
            returncode=child.returncode,
            usage=usage,
            timed_out=timed_out,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


def run_checked(
    command: Sequence[str], *, error: type[Exception] = RuntimeError, timeout: float = float("inf"), **options
) -> Child:  # fmt: skip
    """:func:`run_child` (``options`` passed on), and ``error`` when the child timed out or failed, naming the
    command, how it ended and the end of what it printed (its stderr, or its output with ``merged``)."""
    child = run_child(command, timeout=timeout, **options)
    if child.timed_out:
        raise error(f"timed out after {timeout:g} s: {' '.join(command)}")
    if child.returncode != 0:
        said = child.stdout.strip() if options.get("merged") else child.stderr
        raise error(f"failed (exit {child.returncode}): {' '.join(command)}\n{said[-3000:]}")
    return child


def load_average() -> str:
    """The load average over 1, 5 and 15 minutes, as ``0.52 0.61 0.70`` (``?`` where the system has none)."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "?"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A left-aligned plain-text table: the headers, a rule of dashes, and the rows."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*headers))
    print(line.format(*("-" * w for w in widths)))
    for row in rows:
        print(line.format(*row))


def longmemeval_file(questions: int, data: Path, shape: str) -> Path:
    """A generated LongMemEval-shaped file of ``questions`` in ``data``, made on first use (bench/gen_longmemeval.py)."""
    from gen_longmemeval import GENERATOR_VERSION, generate

    path = data / f"lme_{shape}_q{questions}_g{GENERATOR_VERSION}.json"
    if not path.exists():
        partial = path.with_suffix(".partial")
        generate(partial, questions, shape=shape, seed=0)
        partial.rename(path)
    return path


def add_corpus_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that size the generated corpus (bench/gen_corpus.py), for every script that times it."""
    parser.add_argument("--conversations", type=int, default=200, help="corpus size (default 200)")
    parser.add_argument("--turns", type=int, default=500, help="turns per conversation (default 500)")
    parser.add_argument("--test-points", type=int, default=5, help="test points per conversation (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")


def add_pinned_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a script that fetches a pinned benchmark and plays one strategy on it at k = 10
    (bench_beam.py, bench_locomo_plus.py): where the downloads and the lock are, the strategy, and a mirror
    of the published files built from a git snapshot (``EVALS_MIRROR``)."""
    parser.add_argument("--downloads", type=Path, required=True)
    parser.add_argument("--lock", type=Path, default=None, help="default: benchmarks.lock beside --downloads")
    parser.add_argument("--strategy", default="bm25")
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--mirror-from", default=None, help="a bare git snapshot of the repository to build --mirror from")
    parser.add_argument("--mirror", type=Path, default=None)


def pinned_run(args: argparse.Namespace) -> tuple[Path, str]:
    """The lock file and the strategy's label of a script given :func:`add_pinned_run_flags`; the fetches
    that follow read from ``--mirror`` when one is given."""
    from evals.benchmarks import DEFAULT_LOCK

    if args.mirror:
        os.environ["EVALS_MIRROR"] = str(args.mirror)
    label = args.strategy + (f" ({args.embedder})" if args.embedder else "")
    return args.lock or args.downloads.parent / DEFAULT_LOCK.name, label


def operator_seconds(compute: Callable[[], object], kind_of: Callable[[str], str]) -> dict[str, float]:
    """Self CPU seconds of the torch operators ``compute()`` runs, summed by ``kind_of(operator name)``."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        compute()
    kinds: dict[str, float] = {}
    for event in prof.key_averages():
        kind = kind_of(event.key)
        kinds[kind] = kinds.get(kind, 0.0) + event.self_cpu_time_total / 1e6
    return kinds


def import_and_runs(source: Path, corpus: Path, store: Path, strategies: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(step, command): ``evals import-corpus longmemeval`` of ``source``, then one uncached run of each strategy."""
    steps = [("import", [*EVALS, "import-corpus", "longmemeval", str(source), "--out", str(corpus)])]
    return steps + [
        (f"run {s}", [*EVALS, "run", "--runner", s, "--corpus", str(corpus), "--store", str(store), "--no-cache"])
        for s in strategies
    ]
