"""The benchmark suite: find the benchmarks, run them per commit, compare two commits.

    python bench/suite.py list                      # every benchmark, what it needs, its targets
    python bench/suite.py run [-b REGEX] [--quick]  # run them; figures kept in bench/.results/<commit>.json
    python bench/suite.py compare BASE [HEAD]       # each figure of HEAD (default: this commit) against BASE

Benchmarks are the functions marked ``@benchmark`` in ``bench/bench_*.py`` (bench/_suite.py). Each runs in a
child process of its own, so one's imports, caches and peak memory never colour another's. A run writes
``bench/.results/<commit>.json`` (``<commit>-dirty`` for an uncommitted tree), adding to what that commit
already holds, with the machine's load average beside every figure: a figure taken on a busy machine says so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import re
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from _common import load_average, print_table  # noqa: E402
from _suite import Benchmark, Context, Skip, scratch  # noqa: E402

RESULTS = BENCH_DIR / ".results"


def modules() -> list[str]:
    """The bench modules, by name, in name order."""
    return sorted(p.stem for p in BENCH_DIR.glob("bench_*.py"))


def discover(pattern: str | None = None) -> list[Benchmark]:
    """Every marked benchmark whose ``module.function`` name matches ``pattern`` (a regular expression)."""
    found = []
    for name in modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            declared = getattr(value, "__benchmark__", None)
            if isinstance(declared, Benchmark) and value.__module__ == name:
                full = f"{name}.{attr}"
                if pattern is None or re.search(pattern, full):
                    found.append(Benchmark(declared.function, declared.needs, declared.targets, declared.slow, full))
    return found


def revision() -> str:
    """This checkout's commit, short, with ``-dirty`` when the tree has uncommitted changes."""
    git = ["git", "-C", str(BENCH_DIR.parent)]
    commit = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    status = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout
    return (commit or "unknown") + ("-dirty" if status.strip() else "")


def results_file(commit: str, folder: Path = RESULTS) -> Path:
    return folder / f"{commit}.json"


def read_results(commit: str, folder: Path = RESULTS) -> dict:
    path = results_file(commit, folder)
    if not path.exists():
        raise SystemExit(f"no results for {commit} ({path}); run `python bench/suite.py run` at that commit first")
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Outcome:
    name: str
    figures: dict[str, float]
    seconds: float
    load: str
    skipped: str | None = None
    error: str | None = None

    def as_json(self) -> dict:
        return {"figures": self.figures, "seconds": round(self.seconds, 3), "load": self.load,
                "skipped": self.skipped, "error": self.error}  # fmt: skip


def run_one(name: str, quick: bool) -> Outcome:
    """Run benchmark ``name`` (``module.function``) here, in this process: what the child does."""
    module, function = name.rsplit(".", 1)
    declared: Benchmark = getattr(importlib.import_module(module), function).__benchmark__
    started = time.perf_counter()
    with scratch() as work:
        try:
            figures = declared.function(Context(work=Path(work), quick=quick))
        except Skip as skip:
            return Outcome(name, {}, time.perf_counter() - started, load_average(), skipped=str(skip))
        except Exception:  # a broken benchmark is reported as broken, and the others still run
            return Outcome(name, {}, time.perf_counter() - started, load_average(), error=traceback.format_exc(limit=4))
    return Outcome(name, {k: float(v) for k, v in figures.items()}, time.perf_counter() - started, load_average())


def run_in_child(name: str, quick: bool) -> Outcome:
    with scratch() as work:
        out = Path(work) / "outcome.json"
        command = [sys.executable, str(Path(__file__)), "_one", name, "--out", str(out)] + (["--quick"] if quick else [])
        child = subprocess.run(command, cwd=BENCH_DIR.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not out.exists():
            return Outcome(name, {}, 0.0, load_average(), error=f"exit {child.returncode}: {child.stderr[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
        return Outcome(name, data["figures"], data["seconds"], data["load"], data["skipped"], data["error"])


def verdicts(declared: Benchmark, figures: dict[str, float]) -> dict[str, str]:
    return {t.figure: f"{t} {'met' if t.met(figures[t.figure]) else 'MISSED'}" for t in declared.targets if t.figure in figures}


def command_list(args: argparse.Namespace) -> int:
    for declared in discover(args.bench):
        marks = [m for m in (declared.slow and "slow", declared.needs and f"needs {', '.join(declared.needs)}") if m]
        shown = "; ".join(marks)
        print(f"{declared.name}  ({shown})" if marks else declared.name)
        print(f"    {declared.summary}")
        if declared.targets:
            print(f"    targets: {'; '.join(f'{t.figure} {t}' for t in declared.targets)}")
    return 0


def command_run(args: argparse.Namespace) -> int:
    chosen = [b for b in discover(args.bench) if args.all or args.bench or not b.slow]
    commit = revision()
    path = results_file(commit, args.results)
    kept = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"commit": commit, "benchmarks": {}}
    kept.update(machine=f"{platform.node()} ({platform.machine()}, {platform.python_version()})", date=time.strftime("%Y-%m-%d"))
    failed = 0
    for declared in chosen:
        print(f"{declared.name} ...", flush=True)
        outcome = run_in_child(declared.name, args.quick)
        kept["benchmarks"][declared.name] = {**outcome.as_json(), "quick": args.quick}
        if outcome.skipped:
            print(f"  skipped: {outcome.skipped}")
        elif outcome.error:
            failed += 1
            print(f"  FAILED: {outcome.error.strip().splitlines()[-1]}")
        else:
            marks = verdicts(declared, outcome.figures)
            for figure, value in outcome.figures.items():
                print(f"  {figure:<42} {value:>14.4g}  {marks.get(figure, '')}")
            print(f"  ({outcome.seconds:.1f} s, load {outcome.load})", flush=True)
    args.results.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"results: {path}")
    return 1 if failed else 0


def command_compare(args: argparse.Namespace) -> int:
    base, head = read_results(args.base, args.results), read_results(args.head or revision(), args.results)
    rows = []
    for name, measured in sorted(head["benchmarks"].items()):
        before = base["benchmarks"].get(name, {}).get("figures", {})
        for figure, value in measured.get("figures", {}).items():
            old = before.get(figure)
            ratio = f"{value / old:.3f}" if old else "-"
            rows.append((name, figure, "-" if old is None else f"{old:.4g}", f"{value:.4g}", ratio, measured.get("load", "?")))
    print(f"base {base['commit']} ({base.get('date', '?')}) against head {head['commit']} ({head.get('date', '?')})")
    print_table(["benchmark", "figure", "base", "head", "head/base", "head load"], rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="every benchmark, what it needs and its targets")
    listing.add_argument("-b", "--bench", help="only benchmarks whose module.function matches this regular expression")
    running = commands.add_parser("run", help="run benchmarks and keep their figures for this commit")
    running.add_argument("-b", "--bench", help="only benchmarks whose module.function matches this regular expression")
    running.add_argument("--quick", action="store_true", help="smaller sizes: a first look, or a check that each still runs")
    running.add_argument("--all", action="store_true", help="the slow benchmarks too (minutes each)")
    comparing = commands.add_parser("compare", help="each figure of HEAD against BASE")
    comparing.add_argument("base", help="a commit with results in bench/.results/ (as its file is named)")
    comparing.add_argument("head", nargs="?", help="default: this checkout's commit")
    for command in (running, comparing):
        command.add_argument("--results", type=Path, default=RESULTS, help="where figures are kept (default bench/.results)")
    one = commands.add_parser("_one")
    one.add_argument("name")
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "_one":
        args.out.write_text(json.dumps(run_one(args.name, args.quick).as_json()), encoding="utf-8")
        return 0
    return {"list": command_list, "run": command_run, "compare": command_compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
