"""`evals verify --reproduce`: a board file's system rerun by the harness, its rankings compared point by point.

The rerun itself is the run layer's (:func:`evals.run.reproduce.rerun`, handed in by the CLI): an offline strategy
registered here, planned to the file's configuration, played on the pinned benchmark at the file's k, seed and
cutoffs. Here its stored run is laid out as `evals export --board` would, and every test point's ranked turns (and
the turns each record holds) must be the file's (:func:`evals.judge.origin.first_difference`). Then the file is
**reproduced**, and ``RUN_ID.reproduced.json`` beside it records the file's sha256, the harness's commit, the date
and the points compared; otherwise the line names the first point and rank that differ, and a record left from
before is removed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.errors import EvalsError
from evals.judge.origin import first_difference
from evals.store import StoredRun
from evals.views.board_files import Found, board_document, load_board, reproduced_path, reproduction_document

__all__ = ["NOT_RERUN", "NOT_REPRODUCED", "REPRODUCED", "Rerun", "RerunFn", "reproduce_file"]

REPRODUCED, NOT_REPRODUCED, NOT_RERUN = "reproduced", "not reproduced", "not rerun"
# (strategy, configuration, corpus folder, k, seed, cutoffs) -> the rerun as stored, or why it is not rerun.
RerunFn = Callable[[str, dict[str, Any], Path, int, int, Sequence[int]], "StoredRun | str"]


@dataclass(frozen=True)
class Rerun:
    """One board file's rerun: whether it reproduced, and the one line that says how."""

    path: Path
    status: str  # REPRODUCED, NOT_REPRODUCED or NOT_RERUN
    detail: str

    @property
    def line(self) -> str:
        return f"{self.status}: {self.path}: {self.detail}"


def reproduce_file(path: Path, found: Found, rerun: RerunFn) -> Rerun:
    """Rerun the system of the (verified) board file at ``path`` on its corpus ``found`` and compare its rankings;
    a match writes the record of the reproduction beside the file."""
    data = Path(path).read_bytes()
    _, board = load_board(path)
    if board.failed is not None:
        return Rerun(path, NOT_RERUN, "a failed run: no ranking to reproduce")
    if found.pin is None or found.folder is None:
        return Rerun(path, NOT_RERUN, "its corpus is no pinned benchmark (given with --corpus): evals fetch it to rerun on it")
    system = board.system
    try:
        stored = rerun(system.name, system.configuration, found.folder, board.k, board.seed, board.cutoffs)
    except EvalsError as exc:
        return Rerun(path, NOT_REPRODUCED, f"the rerun failed: {exc}")
    if isinstance(stored, str):
        return Rerun(path, NOT_RERUN, stored)
    given, again = board.model_dump()["points"], board_document(stored)["points"]
    difference = first_difference(_rankings(given), _rankings(again)) or first_difference(_held(given), _held(again))
    beside = reproduced_path(path)
    if difference is not None:
        removed = ""
        if beside.is_file():
            beside.unlink()
            removed = f" (removed {beside.name})"
        return Rerun(path, NOT_REPRODUCED, f"{difference}{removed}")
    summary = stored.summary
    date = datetime.now(UTC).date().isoformat()
    record = reproduction_document(path, data, summary.commit, summary.dirty, date, len(given))
    beside.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return Rerun(path, REPRODUCED, f"{len(given)} points, the same rankings (wrote {beside.name})")


def _rankings(points: list[dict[str, Any]]) -> dict[tuple[str, int], list[Any]]:
    return {(p["conversation"], p["turn"]): list(p["turns"]) for p in points}


def _held(points: list[dict[str, Any]]) -> dict[tuple[str, int], list[Any]]:
    return {(p["conversation"], p["turn"]): [tuple(g) for g in p.get("held") or []] for p in points}
