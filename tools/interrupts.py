"""Ctrl-C at random moments: every interrupted command must exit 130 with one line, no traceback,
and leave the cache and the store consistent.

Against the local OpenAI-compatible server (tests/helpers/llm_server.py, no delay: a fast endpoint, so
interruptions land in cache writes as often as in requests), each trial runs

    evals run --runner mneme --corpus tests/fixtures/corpus_small --store S --judge --base-url URL

in its own process group and sends SIGINT to the whole group (what a terminal's Ctrl-C does) at a
moment drawn uniformly from the length of an uninterrupted run, so trials land in start-up, the
play-through, HTTP requests, cache writes and the store append. ``--sites N`` trials interrupt
``evals build-site`` (with four worker processes) on a store of a few runs the same way.

After each trial it checks: the exit code (130, or 0 when the command finished first), stderr
(when interrupted, its last line "Interrupted.", said once; a "Traceback" anywhere is counted), that the store
opens, and that the same command again sends only the requests the cache lacks (a run) or
builds the site (a build). Target: 0 tracebacks, 0 inconsistencies. Two outcomes are counted apart,
as nothing in the project can change them: a signal in the interpreter's first milliseconds, before
Python installs its handler (the process ends by the signal: no output, the shell says 130), and one
while the interpreter imports `site` (Python prints "Fatal Python error: init_import_site" and a
traceback of its own start-up, exit 1).

    python tools/interrupts.py              # 50 runs + 10 site builds
    python tools/interrupts.py --runs 20 --sites 0 --seed 1
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))

from helpers.llm_server import LLMServer  # noqa: E402

CORPUS = REPO_ROOT / "tests" / "fixtures" / "corpus_small"
POINTS = 4  # test points of corpus_small: 4 answers and 4 verdicts
EVALS = str(Path(sys.executable).parent / "evals")


def _env() -> dict[str, str]:
    env = {**os.environ, "EVALS_LLM_BACKOFF": "0", "OPENAI_API_KEY": "sk-unused"}
    env.pop("OPENAI_BASE_URL", None)
    return env


def run_args(server: LLMServer, store: Path) -> list[str]:
    return [
        "run", "--runner", "mneme", "--corpus", str(CORPUS), "--store", str(store), "--repo", str(store.parent),
        "--base-url", server.base_url, "--judge", "--concurrency", "2",
    ]  # fmt: skip


def site_args(store: Path, out: Path) -> list[str]:
    return ["build-site", "--store", str(store), "--out", str(out), "--jobs", "4", "--full"]


def run_once(args: list[str], delay: float | None) -> tuple[int, str, float]:
    """Run ``evals ARGS``; with ``delay``, SIGINT its process group after that many seconds.
    Returns (exit code, stderr, seconds)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [EVALS, *args], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    if delay is not None:
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGINT)
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        return -9, err + "\n(killed: did not stop within 120 s of the signal)", time.perf_counter() - started
    return process.returncode, err, time.perf_counter() - started


def stored_runs(store: Path) -> int:
    from evals.store import Store

    if not store.exists():
        return 0
    with Store.open(store, read_only=True) as opened:
        return len(opened.runs())


def cached_replies(store: Path) -> int:
    import duckdb

    from evals.io.cache import cache_path_for

    path = cache_path_for(store)
    if not path.exists():
        return 0
    with duckdb.connect(str(path), read_only=True) as con:
        # Stopped between creating the file and its table, the cache is an empty database: the next run
        # creates the table (and the rerun below checks it does).
        if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'cache_entries'").fetchone()[0]:
            return 0
        return con.execute("SELECT count(*) FROM cache_entries WHERE starts_with(namespace, 'chat:')").fetchone()[0]


class Tally:
    def __init__(self) -> None:
        self.trials = self.interrupted = self.finished_first = self.tracebacks = self.before_python = self.in_site = 0
        self.problems: list[str] = []

    def judge(self, kind: str, delay: float, code: int, err: str) -> bool:
        """Count one trial; True when it was interrupted (exit 130)."""
        self.trials += 1
        if "Fatal Python error: init_import_site" in err:
            # Inside the interpreter's own start-up (site, the .pth files of the environment), before it
            # has run a line of this project: Python itself prints this and exits 1; counted apart.
            self.in_site += 1
            return False
        if "Traceback" in err:
            self.tracebacks += 1
            self.problems.append(f"{kind} at {delay:.3f} s: traceback\n{err[-1500:]}")
        if code == 130:
            self.interrupted += 1
            # The interruption adds one line, the last (what the command printed before it stays).
            if not err.endswith("Interrupted.\n") or err.count("Interrupted.") != 1:
                self.problems.append(f"{kind} at {delay:.3f} s: stderr does not end with one line: {err[-400:]!r}")
            return True
        if code == 0:
            self.finished_first += 1
        elif code == -signal.SIGINT and not err:
            # Stopped by the signal's default action, silently (the shell says 130): it came within the
            # interpreter's first milliseconds, before Python installs its handler and runs any of our code.
            self.before_python += 1
        else:
            self.problems.append(f"{kind} at {delay:.3f} s: exit {code}: {err[-400:]!r}")
        return False


def trial_run(server: LLMServer, folder: Path, delay: float, tally: Tally) -> None:
    store = folder / "results.duckdb"
    args = run_args(server, store)
    code, err, _ = run_once(args, delay)
    tally.judge("run", delay, code, err)
    try:
        runs = stored_runs(store)
    except Exception as exc:  # noqa: BLE001 - the store must open: anything else is the finding
        tally.problems.append(f"run at {delay:.3f} s: the store does not open: {exc}")
        return
    kept = cached_replies(store)
    server.reset_counts()
    code, err, _ = run_once(args, None)
    expected = 0 if runs else 2 * POINTS - kept
    if code != 0:
        tally.problems.append(f"run at {delay:.3f} s: the rerun failed: exit {code}: {err[-400:]!r}")
    elif server.total != expected:
        tally.problems.append(f"run at {delay:.3f} s: the rerun sent {server.total} requests, not the {expected} missing")


def trial_site(store: Path, folder: Path, delay: float, tally: Tally) -> None:
    out = folder / "site"
    code, err, _ = run_once(site_args(store, out), delay)
    tally.judge("build-site", delay, code, err)
    try:
        stored_runs(store)
    except Exception as exc:  # noqa: BLE001
        tally.problems.append(f"build-site at {delay:.3f} s: the store does not open: {exc}")
        return
    code, err, _ = run_once(site_args(store, out), None)
    if code != 0 or not (out / "index.html").exists():
        tally.problems.append(f"build-site at {delay:.3f} s: the build after it failed: exit {code}: {err[-400:]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50, help="interrupted `evals run`s (default 50)")
    parser.add_argument("--sites", type=int, default=10, help="interrupted `evals build-site`s (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random moments (default 0)")
    parser.add_argument(
        "--early", type=float, default=None, help="draw the moments from [0, EARLY] seconds instead (start-up alone)"
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="bench-interrupts-") as tmp, LLMServer() as server:
        root = Path(tmp)
        calibration = root / "calibration"
        calibration.mkdir()
        _, _, whole = run_once(run_args(server, calibration / "results.duckdb"), None)
        print(f"an uninterrupted run takes {whole:.2f} s; interrupting {args.runs} at uniform moments in [0, {whole:.2f}]")
        for index in range(args.runs):
            folder = root / f"run-{index}"
            folder.mkdir()
            trial_run(server, folder, rng.uniform(0, whole if args.early is None else args.early), tally)
        if args.sites:
            store = calibration / "results.duckdb"
            for runner in ("no_memory", "full_history", "summary_buffer", "bm25"):
                cmd = [EVALS, "run", "--runner", runner, "--corpus", str(CORPUS), "--store", str(store), "--repo", str(root)]
                subprocess.run(cmd, env=_env(), check=True, capture_output=True)
            _, _, built = run_once(site_args(store, root / "calibration-site"), None)
            print(f"an uninterrupted build-site takes {built:.2f} s; interrupting {args.sites} at moments in [0, {built:.2f}]")
            for index in range(args.sites):
                folder = root / f"site-{index}"
                folder.mkdir()
                trial_site(store, folder, rng.uniform(0, built), tally)
                shutil.rmtree(folder, ignore_errors=True)
    for problem in tally.problems:
        print(f"  PROBLEM {problem}")
    print(
        f"trials: {tally.trials}; interrupted (exit 130): {tally.interrupted}; finished before the signal: "
        f"{tally.finished_first}; stopped silently by the signal before Python handled it: {tally.before_python}; "
        f"stopped inside the interpreter's start-up (site), before this project's code ran: {tally.in_site}; "
        f"tracebacks: {tally.tracebacks} (target 0); other problems: "
        f"{len(tally.problems) - tally.tracebacks} (target 0); load average: {os.getloadavg()[0]:.2f}"
    )
    return 0 if not tally.problems else 1


if __name__ == "__main__":
    sys.exit(main())
