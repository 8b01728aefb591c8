"""Whether the site of a real store fits GitHub Pages: its total size, its largest file, and the limits.

Builds the site (``evals.site.build_site``, or ``build_site_from`` with ``--from DIR`` of board files) from a
copy of the store, so the store given is never written (an older schema is upgraded in the copy), then walks
the output and prints the total, the largest files, the bytes of each kind of file (drill-downs, run pages, run
JSON, compare data and pages, transcripts), the biggest parts (a run's pages and JSON, a corpus's
transcripts) and the verdict against the limits the published board is held to (docs/site.md, "Keeping the
site small"): at most 300 MB in all (GitHub Pages allows 1 GB a site) and no file over 25 MB.

    python bench/bench_site_size.py --store /tmp/field.duckdb [--out DIR] [--jobs N]
    python bench/bench_site_size.py --from board/ [--store results.duckdb]

In the suite, ``site_size`` builds ``$EVALS_BENCH_DATA/site-store.duckdb`` (a copy of any real store).
Exits 1 when the site is over either limit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _suite import Context, benchmark  # noqa: E402

SITE_LIMIT = 300_000_000  # the four-benchmark board's site, at most
FILE_LIMIT = 25_000_000  # no file over this
SHOWN = 5  # largest files and parts printed


def measure(root: Path) -> tuple[int, int, list[tuple[int, str]]]:
    """(total bytes, file count, every file's (size, path relative to ``root``), largest first)."""
    files = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            files.append((path.stat().st_size, path.relative_to(root).as_posix()))
    files.sort(key=lambda f: (-f[0], f[1]))
    return sum(size for size, _ in files), len(files), files


KINDS = (  # (kind, test on a file's path relative to the site), the first that holds names its kind
    ("drill-downs", lambda p: p.startswith("runs/") and p.count("/") == 2),
    ("run pages", lambda p: p.startswith("runs/") and p.endswith(".html")),
    ("run JSON", lambda p: p.endswith(".json.gz")),
    ("compare data", lambda p: p.endswith(".data.js") or p.endswith("/points.js")),
    ("compare pages", lambda p: p.startswith("compare/")),
    ("transcripts", lambda p: p.startswith("transcripts/")),
    ("other", lambda p: True),
)


def by_kind(files: list[tuple[int, str]]) -> list[tuple[str, int, int]]:
    """(kind, bytes, files) of each kind of file (:data:`KINDS`), in that order."""
    sizes = {kind: [0, 0] for kind, _ in KINDS}
    for size, path in files:
        kind = next(kind for kind, test in KINDS if test(path))
        sizes[kind][0] += size
        sizes[kind][1] += 1
    return [(kind, total, count) for kind, (total, count) in sizes.items()]


def build(store: Path | None, board: Path | None, out: Path, jobs: int | None) -> tuple[object, float]:
    """The site of a copy of ``store`` (and the board files under ``board``) in ``out``: its report and seconds."""
    from evals.site import build_site, build_site_from
    from evals.store import Store

    with tempfile.TemporaryDirectory(prefix="bench-site-size-") as scratch:
        copy = None
        if store is not None:
            copy = Path(scratch) / "store.duckdb"
            shutil.copyfile(store, copy)
            if Path(f"{store}.wal").is_file():
                shutil.copyfile(f"{store}.wal", f"{copy}.wal")
            Store.upgrade(copy)
        clock = time.perf_counter()
        if board is not None:
            report = build_site_from(board, out, store_path=copy, workers=jobs, incremental=False, store_copy="never")
        else:
            report = build_site(copy, out, workers=jobs, incremental=False, store_copy="never")
        return report, time.perf_counter() - clock


def figures(out: Path, seconds: float) -> dict[str, float]:
    total, count, files = measure(out)
    return {"site_mb": total / 1e6, "largest_file_mb": files[0][0] / 1e6 if files else 0.0, "files": count, "build_s": seconds}


LIMITS = {"site_mb": f"<= {SITE_LIMIT / 1e6:g}", "largest_file_mb": f"<= {FILE_LIMIT / 1e6:g}"}


@benchmark(needs=("site-store.duckdb",), targets=LIMITS, slow=True)
def site_size(ctx: Context) -> dict[str, float]:
    """The site of a real store (``$EVALS_BENCH_DATA/site-store.duckdb``): megabytes in all, the largest file, files."""
    out = ctx.work / "site"
    _, seconds = build(ctx.data("site-store.duckdb"), None, out, None)
    return figures(out, seconds)


def verdict(total: int, count: int, files: list[tuple[int, str]]) -> int:
    """Print the site's size and its largest files against the limits; 1 if it is over either."""
    over_site, over_file = total > SITE_LIMIT, bool(files) and files[0][0] > FILE_LIMIT
    state = "OVER" if over_site else "ok"
    print(f"total        {total / 1e6:8.1f} MB   limit {SITE_LIMIT / 1e6:.0f} MB   {state}   ({count} files)")
    if files:
        print(f"largest file {files[0][0] / 1e6:8.1f} MB   limit {FILE_LIMIT / 1e6:.0f} MB   {'OVER' if over_file else 'ok'}"
              f"   ({files[0][1]})")  # fmt: skip
    for size, path in files[1:SHOWN]:
        print(f"             {size / 1e6:8.1f} MB   {path}")
    print("by kind:")
    for kind, size, n in by_kind(files):
        print(f"  {size / 1e6:8.1f} MB  {kind} ({n} files)")
    return 1 if over_site or over_file else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="the store to build from (a copy is built; never written)")
    parser.add_argument("--from", dest="board", type=Path, default=None, help="build from the board files under DIR")
    parser.add_argument("--out", type=Path, default=None, help="build into this directory and keep it (default: a temp dir)")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: as `evals build-site`)")
    parser.add_argument("--site", type=Path, default=None, help="measure this built site only, building nothing")
    args = parser.parse_args()
    if args.site is not None:
        if not args.site.is_dir():
            parser.error(f"--site {args.site}: no such folder")
        return verdict(*measure(args.site))
    if args.store is None and args.board is None:
        parser.error("give --store FILE, --from DIR, or both (or --site DIR)")
    keep = args.out is not None
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-site-size-")) / "site"
    try:
        report, seconds = build(args.store, args.board, out, args.jobs)
        total, count, files = measure(out)
        print(f"built {out} from {report.runs} runs in {seconds:.1f} s: {count} files")  # type: ignore[attr-defined]
        failed = verdict(total, count, files)
        print("largest parts:")
        for name, size in report.parts[:SHOWN]:  # type: ignore[attr-defined]
            print(f"  {size / 1e6:8.1f} MB  {name}")
        return failed
    finally:
        if not keep:
            shutil.rmtree(out.parent, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
