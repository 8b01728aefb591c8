"""The result JSON's blocks made of these metrics: retrieval rows (overall and per category), latency."""

from __future__ import annotations

from typing import Any

from evals.judge.metrics._registry import (
    _TOKENS_AT,
    COUNT,
    SECONDS,
    MetricValue,
    PointValues,
    declared,
    grouped,
    metric_order,
    parse_retrieval_key,
)

# -- the result JSON's blocks of these metrics --------------------------------------------------


def retrieval_rows(values: dict[str, MetricValue]) -> list[dict[str, Any]]:
    """``metrics.retrieval`` of the result JSON: one object per level, metric and cutoff, in that order."""
    rows = []
    for key in sorted(values, key=metric_order):
        parsed = parse_retrieval_key(key)
        if parsed is None or parsed[2] is None:
            continue
        name, level, cutoff = parsed
        value = values[key]
        rows.append(
            {
                "level": level,
                "metric": name,
                "k": cutoff,
                "value": value.value,
                "n": value.n,
                "low": value.low,
                "high": value.high,
            }
        )
    return rows


def turn2session_block(values: dict[str, MetricValue], k: int, depth: int | None) -> dict[str, Any] | None:
    """``metrics.turn2session``: LongMemEval's evaluate_retrieval_turn2session figures at the run's ``k``, kept apart
    from the ``session`` rows (distinct sessions) because LongMemEval's own logs file these under "session" too;
    ``ranking_depth`` is how deep the rankings they read were kept (None: whole lists). None when absent."""
    rows = [
        {"metric": name, "value": found.value, "n": found.n, "low": found.low, "high": found.high}
        for name in ("recall_any", "recall_all", "ndcg_any")
        if (found := values.get(f"turn2session_{name}")) is not None
    ]
    return {"k": k, "ranking_depth": depth, "rows": rows} if rows else None


def retrieval_by_category(values: PointValues) -> dict[str, list[dict[str, Any]]]:
    """``metrics.retrieval_by_category``: the same rows over each category's test points (those with one)."""
    names = [name for name in values.columns if (parsed := parse_retrieval_key(name)) is not None and parsed[2] is not None]
    groups = grouped(values, "category", names)
    out = {category: retrieval_rows(found) for category, found in sorted((c, v) for c, v in groups.items() if c is not None)}
    return {category: rows for category, rows in out.items() if rows}


def latency_block(values: dict[str, MetricValue]) -> dict[str, Any] | None:
    """``metrics.latency``: per call kind, p50/p95/p99 in milliseconds and the number of calls; then what the
    memory held at the end of a conversation. None for a run without timings."""
    block: dict[str, Any] = {}
    for call in ("add", "retrieve"):
        found = {q: values.get(f"{call}_latency_p{q}_s") for q in (50, 95, 99)}
        if all(v is None for v in found.values()):
            continue
        block[call] = {f"p{q}_ms": None if v is None or v.value is None else v.value * 1000 for q, v in found.items()}
        block[call]["n"] = next(v.n for v in found.values() if v is not None)
    held = {
        name: values[name]
        for name in ("records_held_mean", "records_held_max", "tokens_held_mean", "tokens_held_max")
        if name in values
    }
    if held:
        block["held_at_end_of_conversation"] = {name.replace("_held", ""): v.value for name, v in held.items()} | {
            "conversations": next(iter(held.values())).n
        }
    return block or None


def measured_only(key: str) -> bool:
    """A metric no one can recompute from a run's records: wall-clock times, the footprint, each cutoff's
    tokens (the store keeps records only down to k as text). Exports carry these values as measured."""
    found = declared(key)
    return found is not None and (found.kind in (SECONDS, COUNT) or key.startswith(("tokens_held_", _TOKENS_AT)))
