"""The field on one board: every built-in memory library's runner on one corpus, at one k, in one store.

    python bench/bench_field.py --corpus /work/data/locomo --store /work/data/board.duckdb --k 10

Each runner (and each lexical or hybrid mode) is checked by ``evals check-strategy``, then is one ``evals
run`` in turn, as a user would type it, timed as a whole process (wall and CPU). The table that follows reads
the store: recall_any@10 with its interval, tokens per test point, recall at the three context budgets, "same
ranking" twins, and the published claims a run stands beside (``evals leaderboard`` prints the same). A runner
whose extra is not installed is listed as skipped, with what ``evals strategies`` says it needs. Runs already
in the store at the same inputs are reused (``cached: run …``), so a second call only prints the table;
``--force`` measures again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import EVALS, load_average, print_table, run_child
from _suite import Context, benchmark

# (label, runner, options): the field's board, Mneme and bm25 beside the libraries.
FIELD: list[tuple[str, str, list[str]]] = [
    ("bm25", "bm25", []),
    ("mneme (minilm)", "mneme", ["--option", "embedder=minilm"]),
    ("chroma", "chroma", []),
    ("qdrant", "qdrant", []),
    ("qdrant sparse", "qdrant", ["--option", "mode=sparse"]),
    ("qdrant hybrid", "qdrant", ["--option", "mode=hybrid"]),
    ("langgraph", "langgraph", []),
    ("llamaindex", "llamaindex", []),
    ("llamaindex_vector_block", "llamaindex_vector_block", []),
    ("txtai", "txtai", []),
    ("txtai keyword", "txtai", ["--option", "mode=keyword"]),
    ("txtai hybrid", "txtai", ["--option", "mode=hybrid"]),
    ("lancedb", "lancedb", []),
    ("lancedb fts", "lancedb", ["--option", "mode=fts"]),
    ("lancedb hybrid", "lancedb", ["--option", "mode=hybrid"]),
    ("qdrant sparse tokenizer=plain", "qdrant", ["--option", "mode=sparse", "--option", "tokenizer=plain"]),
    ("bm25 stemmer=none", "bm25", ["--option", "stemmer=none"]),
    ("lancedb fts tokenizer=plain", "lancedb", ["--option", "mode=fts", "--option", "tokenizer=plain"]),
    ("mempalace", "mempalace", []),
    ("chroma_mempalace_text dialog", "chroma_mempalace_text", ["--option", "granularity=dialog"]),
    ("chroma_mempalace_text session", "chroma_mempalace_text", ["--option", "granularity=session"]),
    ("random_k", "random_k", []),
    ("random_sessions", "random_sessions", []),
]
BUDGETS = ("turn.recall_any@256tok", "turn.recall_any@1024tok", "turn.recall_any@4096tok", "session.recall_frac@1024tok")
# What a chooser pays, measured in the same run (docs/metrics: ingestion with writes done when added, latency at k).
COSTS = ("ingest_cpu_s_per_1k_turns", "retrieve_latency_p50_s", "retrieve_latency_p95_s", "peak_rss_mb")


def _installed() -> set[str]:
    """The runners whose extras are installed here, as `evals strategies --available --names` lists them."""
    return set(run_child([*EVALS, "strategies", "--available", "--names"]).stdout.split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated labels to run (default: all)")
    parser.add_argument("--force", action="store_true", help="measure again runs the store already holds")
    parser.add_argument("--report", action="store_true", help="run nothing: print the store's table as Markdown")
    args = parser.parse_args(argv)
    if args.report:
        _report(args.store, {}, markdown=True)
        return 0
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    ready = _installed()
    timing: dict[str, tuple[float, float, str]] = {}
    print(f"load average at start: {load_average()}", flush=True)
    for label, runner, options in FIELD:
        if only and label not in only:
            continue
        if runner not in ready:
            print(f"{label}: skipped (not installed: see `evals strategies`)", flush=True)
            continue
        # The contract first, as a user would check a memory before a long run (its own --option flags only).
        pairs = [options[i : i + 2] for i in range(0, len(options), 2)]
        check = run_child([*EVALS, "check-strategy", runner, *[w for p in pairs if p[0] == "--option" for w in p]], merged=True)
        if check.returncode != 0:
            print(f"{label}: evals check-strategy failed\n{check.stdout[-2000:]}", flush=True)
            return 1
        command = [*EVALS, "run", "--runner", runner, *options, "--corpus", str(args.corpus), "--k", str(args.k)]
        command += ["--store", str(args.store), *(["--force"] if args.force else [])]
        child = run_child(command, merged=True)
        if child.returncode != 0:
            print(f"{label}: exit {child.returncode}\n{child.stdout[-2000:]}", flush=True)
            return 1
        run_line = next((line for line in reversed(child.stdout.splitlines()) if line.startswith(("run ", "cached: run "))), "")
        if run_line.startswith("run "):  # measured now (a reused run's time is the one the store holds)
            timing[run_line.split()[1].rstrip(":")] = (child.wall_s, child.cpu_s, label)
        cache = next((line for line in child.stdout.splitlines() if line.startswith("cache:")), "")
        checks = sum(line.startswith("ok ") for line in check.stdout.splitlines())
        timed = f"{child.wall_s:.0f} s wall, {child.cpu_s:.0f} s CPU"
        print(f"{label}: check-strategy passed ({checks} checks); {timed}; {cache}; {run_line}", flush=True)
    _report(args.store, timing)
    print(f"load average at end: {load_average()}")
    return 0


def _cost(summary, key: str) -> str:
    value = summary.metric(key)
    if value is None or value.value is None:
        return "-"
    if key.startswith("retrieve_latency"):
        return f"{value.value * 1000:,.1f}"  # ms
    return f"{value.value:,.2f}" if key == "ingest_cpu_s_per_1k_turns" else f"{value.value:,.0f}"


def _report(store_path: Path, timing: dict[str, tuple[float, float, str]], markdown: bool = False) -> None:
    from evals.analysis.same_ranking import same_rankings
    from evals.store import Store
    from evals.views.claims import board_claims
    from evals.views.names import row_names

    with Store.open(store_path, read_only=True) as store:
        latest = store.latest_per_configuration()
        twins = same_rankings(store, latest)
    latest = sorted(latest, key=lambda s: -(s.metric("turn.recall_any@k").value or 0))
    names = dict(zip((s.run_id for s in latest), row_names(latest), strict=True))
    rows = []
    for s in latest:
        at_k = s.metric("turn.recall_any@k")
        wall, cpu, label = next((t for shown, t in timing.items() if s.run_id.startswith(shown)), (None, None, names[s.run_id]))
        cells = [f"`{label}`" if markdown else label]
        cells.append(f"{at_k.value:.3f} [{at_k.low:.3f}, {at_k.high:.3f}]" if at_k and at_k.value is not None else "-")
        cells.append(f"{s.tokens_per_test_point:,.1f}" if s.tokens_per_test_point is not None else "-")
        for key in BUDGETS:
            value = s.metric(key)
            cells.append(f"{value.value:.3f}" if value is not None and value.value is not None else "-")
        cells += [_cost(s, key) for key in COSTS]
        cells.append(f"{s.duration_s:,.0f} s (stored run)" if wall is None else f"{wall:,.0f} s, {cpu:,.0f} s")
        if not markdown:
            cells.append(", ".join(names[t.other] for t in twins.get(s.run_id, []) if t.other in names))
        rows.append(cells)
    costs = ["ingest CPU s / 1k turns", "retrieve p50 ms", "retrieve p95 ms", "peak RSS MB"]
    heads = ["runner", "recall_any@k [95% CI]", "tokens/tp", *BUDGETS, *costs, "time (wall, CPU)"]
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("|---|---|" + "--:|" * (len(heads) - 2))
        for cells in rows:
            print("| " + " | ".join(cells) + " |")
        return
    print_table([*heads, "same ranking as"], rows)
    print()
    for view in board_claims(latest):
        if view.run_value is not None:
            print(
                f"published {view.claim.value:.3f} {view.claim.system}: {view.claim.figure}; run {view.run_value:.4f} "
                f"({view.run_label}), difference {view.difference:+.4f}"
            )


@benchmark(needs=("locomo",), slow=True)
def locomo_board(ctx: Context) -> dict[str, float]:
    """Every installed field runner on LoCoMo at k=10, one store: each configuration's recall_any@10 and run seconds."""
    from evals.store import Store

    store = ctx.work / "board.duckdb"
    if main(["--corpus", str(ctx.data("locomo")), "--store", str(store), "--k", "10"]) != 0:
        raise RuntimeError("a runner failed (its output is above)")
    with Store.open(store, read_only=True) as opened:
        latest = opened.latest_per_configuration()
    figures: dict[str, float] = {}
    for summary in latest:
        at_k = summary.metric("turn.recall_any@k")
        figures[f"{summary.config_key}_recall_any"] = at_k.value if at_k and at_k.value is not None else float("nan")
        figures[f"{summary.config_key}_run_s"] = summary.duration_s
    return figures


if __name__ == "__main__":
    sys.exit(main())
