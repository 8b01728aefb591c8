"""The site build against an older commit's (default 2f4861d), on a store of 10 real LoCoMo runs, and against its floor.

In one run on one machine:

1. makes (or reuses) a store of ten cheap runs on the corpus given (``--corpus``, a folder made by
   ``evals import-corpus locomo``): bm25 at k=5 and k=10, recency at k=5 and k=10, random_k, full_history,
   oracle, no_memory, summary_buffer and mneme with the hash embedder; or takes an existing store (``--store``,
   e.g. the field's runs on real LoCoMo), never writing to it;
2. checks out the old commit (``--old``, default 2f4861d: the yardstick the site's targets are set against) with
   ``git worktree add --detach`` into a temporary folder, and runs its code with ``PYTHONPATH`` pointing
   there (each child starts in a neutral folder, so neither tree shadows the other);
3. copies the store for each code, in that code's schema (an empty store made by the code, then every column
   both schemas have: an older commit refuses a newer store), keeping the first ``--runs`` runs appended, and
   times, interleaved and ``--repeats`` times, each code's full build (``evals build-site --full``) and no-op
   rebuild (``evals build-site`` over its own finished site, every unit reused), by CPU seconds:
   ``resource.getrusage(RUSAGE_CHILDREN)`` before and after each child, which counts the child and every process
   it waited for (the cores are shared, so wall time would measure the neighbours); with ``--floor-runs``, the new
   code's full build on that many runs too;
   every code's package is compiled to bytecode first (as an install does), so no build compiles it from source;
4. says whether the two sites are byte-identical (every file's path and bytes; the build manifest's unit
   fingerprints aside: they digest each commit's own source); they differ where the site has changed since the
   old commit. ``--same-as REV`` builds once with REV's code and checks the new site is byte-identical to that
   one (a change that should leave the site as it was);
5. measures the data-movement floor and prints the medians, the ratios against the targets (full build at
   most 0.7x the old commit's CPU, no-op rebuild at most 0.5x, the full build on ``--floor-runs`` runs at most
   3x its floor), each met or MISSED, and the load average at the start and the end.

The floor is what any build of this site must at least do, measured the same way, in one child process:
start Python, open the store read-only with DuckDB, fetch every row of every table into Python objects
(``fetchall``: the store's rows, read once), and write a file of each path and size the built site has
(the same bytes of output, in the same folders). The build's ratio to the floor is its median full build's
CPU over the floor's median.

Every build runs with ``--jobs 1``: one process, so the CPU counted is the build's own work and not worker
start-up.

    python bench/bench_site_build.py --corpus /work/data/locomo [--work DIR] [--repeats 3] [--old 2f4861d]
    python bench/bench_site_build.py --store locomo.duckdb --runs 4 --floor-runs 10 [--same-as main]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _suite import Context, benchmark  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OLD = "2f4861d"
FULL_TARGET, NOOP_TARGET, FLOOR_TARGET = 0.7, 0.5, 3.0
MANIFEST = ".evals-manifest.json"  # evals.site._manifest.MANIFEST, named here: the script imports neither tree's site code
CONFIGURATIONS = (
    ("bm25", 5), ("bm25", 10), ("recency", 5), ("recency", 10), ("random_k", 5),
    ("full_history", 5), ("oracle", 5), ("no_memory", 5), ("summary_buffer", 5), ("mneme", 5),
)  # fmt: skip

_FLOOR = """
import os, sys
from pathlib import Path
import duckdb
store, site, out = sys.argv[1:4]
con = duckdb.connect(store, read_only=True)
rows = 0
for (table,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'").fetchall():
    rows += len(con.execute(f'SELECT * FROM "{table}"').fetchall())
con.close()
site, out = Path(site), Path(out)
written = 0
for directory, _, files in os.walk(site):
    here = out / Path(directory).relative_to(site)
    here.mkdir(parents=True, exist_ok=True)
    for name in files:
        size = (Path(directory) / name).stat().st_size
        with open(here / name, "xb") as file:
            file.write(b"x" * size)
        written += size
print(rows, written)
"""

# A copy of a store (the first N runs appended, or all) in the schema of the code on PYTHONPATH: an empty store
# made by that code, then every column both schemas have, table by table. So an older commit reads a store that
# newer code made (columns it never had are left out, tables it never had are not copied).
_COPY = """
import sys
import duckdb
from evals.store import Store
source, target, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
Store.open(target).close()
con = duckdb.connect(target)
con.execute("ATTACH ? AS source (READ_ONLY)", [source])
def columns(catalog, table):
    return [c for (c,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? AND table_name = ? ORDER BY ordinal_position",
        [catalog, table]).fetchall()]
here = con.execute("SELECT current_database()").fetchone()[0]
keep = [r for (r,) in con.execute(
    "SELECT run_id FROM source.runs ORDER BY appended_at, run_id" + (" LIMIT ?" if runs else ""), [runs] if runs else []
).fetchall()]
tables = con.execute(
    "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND table_type = 'BASE TABLE'", [here]
).fetchall()
for (table,) in tables:
    if table == "evals_schema":
        continue
    mine, theirs = columns(here, table), set(columns("source", table))
    shared = ", ".join(f'"{c}"' for c in mine if c in theirs)
    if not shared:
        continue
    where = " WHERE run_id IN (SELECT unnest(?))" if "run_id" in theirs else ""
    con.execute(f'INSERT INTO "{table}" ({shared}) SELECT {shared} FROM source."{table}"{where}', [keep] if where else [])
con.execute("DETACH source")
con.execute("CHECKPOINT")
con.close()
print(len(keep))
"""


def make_store(corpus: Path, store: Path) -> None:
    """Ten runs on ``corpus`` with the current code, appended to a new ``store`` (renamed in place when done)."""
    from evals.model.provenance import Provenance
    from evals.run.evaluate import RunConfig, evaluate
    from evals.store import Store

    provenance = Provenance(commit="b" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    partial = store.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    with Store.open(partial) as opened:
        for strategy, k in CONFIGURATIONS:
            opened.append(evaluate(RunConfig(strategy=strategy, corpus=corpus.absolute(), k=k)), provenance)
            print(f"  ran {strategy} k={k}", flush=True)
    partial.rename(store)


def cpu_of(command: list[str], root: Path, cwd: Path) -> float:
    """CPU seconds (user + system) of ``command`` run with ``root``'s code first on the path, from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout.decode(errors='replace')[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_command(store: Path, out: Path, full: bool) -> list[str]:
    return [sys.executable, "-m", "evals", "build-site", "--store", str(store), "--out", str(out), "--jobs", "1"] + (
        ["--full"] if full else []
    )


def _manifest(path: Path) -> Any:
    """The build manifest without its units' fingerprints: those digest the package's source (a new build of other
    code renders every unit again, by design), so they differ between any two commits; the files and their
    SHA-256 must not."""
    found = json.loads(path.read_text(encoding="utf-8"))
    for unit in found.get("units", {}).values():
        unit.pop("fingerprint", None)
    return found


def differences(a: Path, b: Path) -> list[str]:
    """Paths whose bytes differ (the manifest: but for its fingerprints), or that only one of the two sites has."""
    found: list[str] = []
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    found += sorted(files_a ^ files_b)
    for path in sorted(files_a & files_b):
        if path == MANIFEST:
            if _manifest(a / path) != _manifest(b / path):
                found.append(path)
        elif not filecmp.cmp(a / path, b / path, shallow=False):
            found.append(path)
    return found


def copy_store(source: Path, target: Path, runs: int, root: Path, cwd: Path) -> None:
    """``source``'s first ``runs`` runs (0: all) and its corpora into a new ``target`` in ``root``'s code's schema."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _COPY, str(source), str(target), str(runs)], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"could not copy {source} for the code in {root}:\n{done.stderr[-3000:]}")


def _checkout(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), rev], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return where


def compile_bytecode(root: Path) -> None:
    """Write the bytecode of ``root``'s package, as ``pip install`` does (bench_legacy_cli does the same): the builds
    run with PYTHONDONTWRITEBYTECODE, and without bytecode each would compile every module of its commit's package
    from source (about 0.3 s of CPU for today's, here, less for an older commit's fewer modules), which is no part
    of the build."""
    import compileall

    compileall.compile_dir(root / "evals", quiet=1)


def _verdict(ratio: float, target: float) -> str:
    return f"target <= {target}x: {'met' if ratio <= target else 'MISSED'}"


def measure(
    store: Path, repeats: int, old: str, *, runs: int = 0, floor_runs: int | None = None, same_as: str | None = None
) -> dict[str, float]:
    """Time the builds as the module says, on the first ``runs`` runs of ``store`` (0: all) against ``old``'s, and
    the full build on its first ``floor_runs`` runs against its floor; with ``same_as``, check the site is the one
    that commit's code builds, byte for byte. Print the figures and return them."""
    sys.path.insert(0, str(REPO))
    floor_runs = runs if floor_runs is None else floor_runs
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"store {store} ({store.stat().st_size / 1e6:.1f} MB); load {load}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-site-build-") as temp:
        tmp = Path(temp)
        checkouts: list[Path] = []
        try:
            checkouts.append(_checkout(old, tmp / "old"))
            if same_as:
                checkouts.append(_checkout(same_as, tmp / "same"))
            commit, head = (
                subprocess.run(["git", "-C", str(at), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
                .stdout.strip()[:12]
                for at in (tmp / "old", REPO)
            )
            print(f"old: {commit} (checked out in {tmp / 'old'}); new: {head} ({REPO})")
            neutral = tmp / "cwd"
            neutral.mkdir()
            codes = {"old": tmp / "old", "new": REPO}
            for root in [*codes.values(), *checkouts[1:]]:
                compile_bytecode(root)
            stores = {name: tmp / f"{name}.duckdb" for name in codes}
            for name, root in codes.items():
                copy_store(store, stores[name], runs, root, neutral)
            floor_store = stores["new"]
            if floor_runs != runs:
                floor_store = tmp / "floor.duckdb"
                copy_store(store, floor_store, floor_runs, REPO, neutral)
            times: dict[tuple[str, str], list[float]] = {(name, kind): [] for name in codes for kind in ("full", "noop")}
            floor_builds: list[float] = []
            for repeat in range(repeats):
                for name, root in codes.items():
                    site = tmp / f"site-{name}"
                    shutil.rmtree(site, ignore_errors=True)
                    times[name, "full"].append(cpu_of(build_command(stores[name], site, True), root, neutral))
                    times[name, "noop"].append(cpu_of(build_command(stores[name], site, False), root, neutral))
                if floor_store != stores["new"]:
                    shutil.rmtree(tmp / "site-floor", ignore_errors=True)
                    floor_builds.append(cpu_of(build_command(floor_store, tmp / "site-floor", True), REPO, neutral))
                print(
                    f"  repeat {repeat + 1}: " + ", ".join(f"{n} {k} {v[-1]:.2f} s" for (n, k), v in times.items())
                    + (f", new full on {floor_runs} runs {floor_builds[-1]:.2f} s" if floor_builds else ""),
                    flush=True,
                )
            if floor_store == stores["new"]:
                floor_builds, floor_site = times["new", "full"], tmp / "site-new"
            else:
                floor_site = tmp / "site-floor"
            different = differences(tmp / "site-old", tmp / "site-new")
            same_different: list[str] | None = None
            if same_as:
                same_store = tmp / "same.duckdb"
                shutil.copyfile(stores["new"], same_store)  # the same bytes: the site carries a copy of its store
                cpu_of(build_command(same_store, tmp / "site-same", True), tmp / "same", neutral)
                same_different = differences(tmp / "site-same", tmp / "site-new")
            floors = []
            for _ in range(repeats):
                shutil.rmtree(tmp / "floor", ignore_errors=True)
                floors.append(cpu_of([sys.executable, "-c", _FLOOR, str(floor_store), str(floor_site), str(tmp / "floor")],
                                     REPO, neutral))  # fmt: skip
            files = sum(1 for p in floor_site.rglob("*") if p.is_file())
            size = sum(p.stat().st_size for p in floor_site.rglob("*") if p.is_file())
        finally:
            for checkout in checkouts:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(checkout)], check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    median = {key: statistics.median(values) for key, values in times.items()}
    floor, floor_build = statistics.median(floors), statistics.median(floor_builds)
    full, noop = median["new", "full"] / median["old", "full"], median["new", "noop"] / median["old", "noop"]
    over_floor = floor_build / floor
    named = f"{runs} runs" if runs else "every run"
    print(f"CPU seconds, medians of {repeats} (--jobs 1); load at the start {load}, at the end "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}:")  # fmt: skip
    print(f"  full build ({named}):     {old} {median['old', 'full']:.2f}  now {median['new', 'full']:.2f}  "
          f"ratio {full:.2f}x ({_verdict(full, FULL_TARGET)})")  # fmt: skip
    print(f"  no-op rebuild ({named}):  {old} {median['old', 'noop']:.2f}  now {median['new', 'noop']:.2f}  "
          f"ratio {noop:.2f}x ({_verdict(noop, NOOP_TARGET)})")  # fmt: skip
    print(f"  full build ({floor_runs or 'every'} runs: {files} files, {size / 1e6:.1f} MB) {floor_build:.2f} against its "
          f"data-movement floor {floor:.2f}: {over_floor:.1f}x ({_verdict(over_floor, FLOOR_TARGET)})")  # fmt: skip
    if different:
        print(f"the site differs from {old}'s in {len(different)} files (the site has changed since), e.g. "
              f"{', '.join(different[:3])}")  # fmt: skip
    else:
        print(f"the site is byte-identical to {old}'s")
    if same_different is not None:
        shown = ", ".join(same_different[:5])
        print(f"the site is byte-identical to {same_as}'s" if not same_different else
              f"the site DIFFERS from {same_as}'s in {len(same_different)} files, e.g. {shown}")  # fmt: skip
    figures = {"full_over_old": full, "noop_over_old": noop, "full_over_floor": over_floor,
               "identical": float(not different), "site_mb": size / 1e6}  # fmt: skip
    if same_different is not None:
        figures["identical_to_same_as"] = float(not same_different)
    return figures


def ten_runs_store(corpus: Path, work: Path) -> Path:
    """The store of :data:`CONFIGURATIONS` on ``corpus``, made once and kept in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    store = work / f"locomo-{corpus.absolute().name}-10runs.duckdb"
    if not store.exists():
        print(f"making the store {store} (ten runs on {corpus})", flush=True)
        make_store(corpus, store)
    return store


@benchmark(needs=("locomo",), targets={"full_over_old": "<= 0.7", "noop_over_old": "<= 0.5", "full_over_floor": "<= 3"},
           slow=True)  # fmt: skip
def ten_locomo_runs(ctx: Context) -> dict[str, float]:
    """The site build's CPU on 10 LoCoMo runs against 2f4861d's (full and no-op) and against its floor."""
    return measure(ten_runs_store(ctx.data("locomo"), ctx.cache / "site-build"), 1 if ctx.quick else 3, OLD)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--corpus", type=Path, help="a LoCoMo corpus folder (evals import-corpus locomo): ten cheap runs on it")
    given.add_argument("--store", type=Path, help="an existing store (e.g. the field's runs on LoCoMo), copied, never written")
    parser.add_argument("--runs", type=int, default=0, help="build from the store's first N runs appended (default: all)")
    parser.add_argument("--floor-runs", type=int, help="the build against its floor on the first N runs (default: --runs)")
    parser.add_argument("--same-as", metavar="REV", help="also check the site is byte-identical to the one REV's code builds")
    parser.add_argument("--work", type=Path, default=BENCH / ".data" / "site-build", help="where a --corpus store is kept")
    parser.add_argument("--repeats", type=int, default=3, help="builds of each kind per code (medians are quoted)")
    parser.add_argument("--old", default=OLD, help=f"the commit to compare against (default {OLD})")
    args = parser.parse_args()
    store = args.store.absolute() if args.store else ten_runs_store(args.corpus, args.work)
    figures = measure(store, args.repeats, args.old, runs=args.runs, floor_runs=args.floor_runs, same_as=args.same_as)
    if not figures.get("identical_to_same_as", 1.0):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
