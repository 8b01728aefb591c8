"""Who ran a run: the harness here, the harness again (**reproduced**), or its submitter (**submitted**), decided once.

A run made in a store by this harness (``evals run``) is the harness's own: it carries no mark. A run that came
from elsewhere (``evals import`` of a board file or an export) was run by its submitter: its figures are recomputed
from its rankings and the benchmark's labels, but its system ran on the submitter's machine, so it is
**submitted**. A board file is **reproduced** when the harness reran its system (an offline strategy it has
registered: ``evals verify --reproduce``) on the benchmark, at the file's k, seed and options, and every test
point's ranked turns came out the same; the rerun is recorded beside the file (docs/board.md, "Reproduced or
submitted"), and the mark stands only while that record names the file's exact bytes. Every table, board and page
reads the mark from :func:`mark`, and a rerun is compared with :func:`first_difference`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["EXPLANATIONS", "REPRODUCED", "SUBMITTED", "first_difference", "mark", "origin"]

REPRODUCED, SUBMITTED = "reproduced", "submitted"
EXPLANATIONS = {
    REPRODUCED: "reproduced: the harness reran this system on the benchmark at the file's k, seed and options and got "
    "the same ranking at every test point",
    SUBMITTED: "submitted: its figures are recomputed from its rankings and the benchmark's labels, but its system was run "
    "by its submitter, not reproduced by the harness",
}

# A test point's id in a comparison: (conversation id, turn index).
PointId = tuple[str, int]


def origin(imported: bool, reproduction: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """What a stored run records of who ran it: None for the harness's own run (made in the store), else its mark
    and, for a reproduced one, the rerun that reproduced it (``reproduction``: the harness's commit, the date and the
    number of points compared)."""
    if not imported:
        return None
    if reproduction is None:
        return {"mark": SUBMITTED}
    return {"mark": REPRODUCED, **{key: reproduction[key] for key in ("commit", "dirty", "date", "points")}}


def mark(recorded: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """The mark every board shows for a run's recorded origin, with its explanation; None for the harness's own."""
    if recorded is None:
        return None
    name = recorded.get("mark")
    if name == REPRODUCED:
        commit = str(recorded.get("commit", ""))[:12] + ("+" if recorded.get("dirty") else "")
        rerun = f"{recorded.get('points')} points, at commit {commit}, {recorded.get('date')}"
        return REPRODUCED, f"{EXPLANATIONS[REPRODUCED]} ({rerun})"
    return SUBMITTED, EXPLANATIONS[SUBMITTED]


def first_difference(given: Mapping[PointId, Sequence[Any]], again: Mapping[PointId, Sequence[Any]]) -> str | None:
    """Where a rerun's rankings first differ from a file's (points in the file's order, then rank by rank), or None
    when every point has the same ranking. ``given`` and ``again`` map each test point to its ranking (per rank: the
    turn, None for a record that is no turn, or the turns a record holds)."""
    for point, ranking in given.items():
        where = f"point {point[0]!r} turn {point[1]}"
        if point not in again:
            return f"{where}: not in the rerun"
        rerun = again[point]
        for rank, (a, b) in enumerate(zip(ranking, rerun, strict=False), start=1):
            if a != b:
                return f"{where}: rank {rank} is {_turn(a)} in the file, {_turn(b)} in the rerun"
        if len(ranking) != len(rerun):
            return f"{where}: {len(ranking)} ranked records in the file, {len(rerun)} in the rerun"
    extra = next((point for point in again if point not in given), None)
    if extra is not None:
        return f"point {extra[0]!r} turn {extra[1]}: in the rerun, not in the file"
    return None


def _turn(value: Any) -> str:
    if value is None:
        return "no turn"
    if isinstance(value, (list, tuple)):
        return "turns " + ", ".join(str(v) for v in value)
    return f"turn {value}"
