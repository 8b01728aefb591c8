"""BEAM at 10M tokens a conversation: peak memory and time per turn against the 1M shape (issue 33, "Scale").

Generates (once each, cached under ``bench/.data/beam_scale/``) two BEAM-shaped tiers with
``bench/gen_beam.py``: the "1M shape" (10 conversations of 2,100 messages, about 1M cl100k tokens
each) and the "10M shape" (10 of 21,000 messages, about 10M tokens each: 475 tokens a message; 20
probing questions a conversation), then runs on each, every step in a child process whose own peak
RSS it reads (``os.wait4``), exactly what a user runs:

    evals import-corpus beam DIR --out CORPUS
    evals run --runner R --corpus CORPUS --store STORE --no-cache --k 10     (bm25, recency, mneme, full_history, oracle)
    evals run --runner full_history --corpus CORPUS --store STORE --k 10 --output FILE   (the ceiling's document)
    evals build-site --store STORE --out SITE

The first run into the store also writes the corpus; ``mneme`` uses its default hash embedder.
The ``output`` step reuses the stored full_history run (on a clean working tree; a dirty one is never
reused, so the run is computed again) and writes its ``--output`` document: the
default (records as texts) is refused above the size limit, so the step is run as a user would after
that refusal, with ``--output-records turns``; the refusal itself is checked and its line printed.

It prints a table: step, peak MiB and wall seconds at each shape, whether the peak is at most 1.5 GB,
and per step the CPU seconds per 1,000 turns at each shape and their ratio, against 1.3 for the runs
(time per turn at 10M within 1.3x of 1M: time grows linearly with the conversation). CPU seconds, not
wall: the two cores are shared, and another job's load stretches wall time but not CPU time (wall is
shown beside it). Exit 1 when a target is missed or a step fails.

    python bench/bench_beam_scale.py                       # both shapes at real size (about 1 GB of chats)
    python bench/bench_beam_scale.py --scale 0.1           # a quick check: 210 and 2,100 messages a conversation
    python bench/bench_beam_scale.py --steps import,bm25,site --shapes 10M
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, Child, load_average, print_table, run_child, shown  # noqa: E402
from gen_beam import GENERATOR_VERSION, SHAPES, generate  # noqa: E402

RUNS = ("bm25", "recency", "mneme", "full_history", "oracle")
STEPS = ("import", *RUNS, "output", "site")
PEAK_MIB = 1500 * 1000**2 / 1024**2  # 1.5 GB
LINEAR = 1.3  # time per turn at the 10M shape at most 1.3x the 1M shape's
K = 10


def tier(shape: str, scale: float, data: Path) -> tuple[Path, int, int]:
    """The generated tier folder of ``shape`` at ``scale`` (made on first use): (folder, conversations, messages each)."""
    conversations, messages, tokens = SHAPES[shape]
    messages = max(8, round(messages * scale))
    folder = data / f"beam_{shape}_c{conversations}_m{messages}_t{tokens}_g{GENERATOR_VERSION}"
    if not folder.exists():
        partial = folder.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        generate(partial, conversations=conversations, turns=messages, tokens_per_message=tokens)
        partial.rename(folder)
    return folder, conversations, messages


def steps(chats: Path, work: Path, chosen: list[str]) -> list[tuple[str, list[str]]]:
    corpus, store, site, output = work / "corpus", work / "results.duckdb", work / "site", work / "full_history.json"
    out: list[tuple[str, list[str]]] = []
    for step in chosen:
        if step == "import":
            out.append((step, [*EVALS, "import-corpus", "beam", str(chats), "--out", str(corpus)]))
        elif step in RUNS:
            run = [*EVALS, "run", "--runner", step, "--corpus", str(corpus), "--store", str(store), "--no-cache", "--k", str(K)]
            out.append((f"run {step}", run))
        elif step == "output":
            run = [*EVALS, "run", "--runner", "full_history", "--corpus", str(corpus), "--store", str(store), "--k", str(K)]
            out.append(("output full_history (turns)", [*run, "--output", str(output), "--output-records", "turns"]))
        elif step == "site":
            out.append(("build-site", [*EVALS, "build-site", "--store", str(store), "--out", str(site)]))
    return out


def refusal(work: Path) -> tuple[Child, int | None]:
    """full_history's ``--output`` with records as texts (the default): its child, and the file's size if written."""
    corpus, store, output = work / "corpus", work / "results.duckdb", work / "full_history_texts.json"
    command = [*EVALS, "run", "--runner", "full_history", "--corpus", str(corpus), "--store", str(store), "--k", str(K)]
    child = run_child([*command, "--output", str(output)], merged=True, poll=0.05)
    size = output.stat().st_size if output.exists() else None
    output.unlink(missing_ok=True)
    return child, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="messages per conversation times this (default 1: real size)")
    parser.add_argument("--shapes", default="1M,10M", help="comma-separated, of 1M and 10M (default both)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated, of {', '.join(STEPS)} (default all)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR / "beam_scale", help="default bench/.data/beam_scale")
    parser.add_argument("--keep", action="store_true", help="keep each shape's corpus, store and site afterwards")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds before a step is killed (default 4 h)")
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    chosen = args.steps.split(",")
    unknown = [s for s in chosen if s not in STEPS] + [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown step or shape: {', '.join(unknown)}")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"load average {load_average()}; {os.cpu_count()} CPUs; scale {args.scale:g}", flush=True)

    results: dict[str, dict[str, Child]] = {}
    turns: dict[str, int] = {}
    commands: dict[str, str] = {}
    failed: list[str] = []
    for shape in shapes:
        chats, conversations, messages = tier(shape, args.scale, args.data_dir)
        turns[shape] = conversations * messages
        size = sum(p.stat().st_size for p in chats.rglob("*.json"))
        print(
            f"\n{shape} shape: {conversations} conversations x {messages:,} messages, {size / 1e6:,.0f} MB ({chats.name})",
            flush=True,
        )
        work = args.data_dir / f"work_{shape}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        for name, command in steps(chats, work, chosen):
            if name.startswith("output"):
                child, written = refusal(work)
                said = child.last_line
                refused = child.returncode != 0 and written is None
                outcome = "refused" if refused else f"wrote {written or 0:,} bytes"
                print(f"  output full_history (texts): exit {child.returncode}, {outcome}: {said[:300]}", flush=True)
            child = run_child(command, timeout=args.timeout, merged=True, poll=0.05)
            results.setdefault(name, {})[shape] = child
            commands[name] = shown(command)
            extra = ""
            if name.startswith("output") and (work / "full_history.json").exists():
                extra = f" ({(work / 'full_history.json').stat().st_size / 1e6:,.1f} MB written)"
            status = "" if child.returncode == 0 and not child.timed_out else f" FAILED (exit {child.returncode})"
            if status:
                failed.append(f"{name} at {shape}")
            measures = f"{child.peak_mib:8,.0f} MiB {child.wall_s:8.1f} s wall {child.cpu_s:8.1f} s CPU"
            print(f"  {name:<30} {measures}{status}{extra}  {child.last_line[:120]}", flush=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    headers = ["step"]
    for shape in shapes:
        headers += [f"{shape} peak MiB", f"{shape} wall s", f"{shape} CPU s/1k turns"]
    headers += ["≤ 1.5 GB", "ratio (CPU/turn)", "ratio (wall/turn)", f"≤ {LINEAR}x"]
    rows = []
    for name, by_shape in results.items():
        row: list[object] = [name]
        for shape in shapes:
            child = by_shape.get(shape)
            row += (
                ["—"] * 3
                if child is None
                else [f"{child.peak_mib:,.0f}", f"{child.wall_s:,.1f}", f"{1000 * child.cpu_s / turns[shape]:.3f}"]
            )
        within = all(c.peak_mib <= PEAK_MIB for c in by_shape.values())
        row.append("yes" if within else "no ✗")
        failed += [] if within else [f"{name} over 1.5 GB"]
        if len(shapes) == 2 and all(s in by_shape for s in shapes):
            (small, large) = (by_shape[s] for s in shapes)
            cpu = (large.cpu_s / turns[shapes[1]]) / (small.cpu_s / turns[shapes[0]])
            wall = (large.wall_s / turns[shapes[1]]) / (small.wall_s / turns[shapes[0]])
            linear = cpu <= LINEAR
            counted = name.startswith("run ")
            row += [f"{cpu:.2f}", f"{wall:.2f}", ("yes" if linear else "no ✗") if counted else "(not a target)"]
            if counted and not linear:
                failed.append(f"{name}: time per turn {cpu:.2f}x")
        else:
            row += ["—", "—", "—"]
        rows.append(row)
    print()
    print_table(headers, rows)
    print("\ncommands (DIR, CORPUS, STORE, FILE, SITE under the data folder):")
    for name, command in commands.items():
        print(f"  {name}: {command}")
    print(f"\nload average {load_average()}")
    print("all targets met" if not failed else "missed: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
