"""`evals verify --reproduce`: a board file's system rerun by the harness, its rankings compared point by point.

A file is rerun when its system is a strategy registered here that runs offline (no endpoint, no LLM writing
its memory, no paid embedder), its corpus is the pinned benchmark its digest names, and the configuration the
harness plans from the file's options is the file's (library versions included). The rerun plays that strategy
on the corpus at the file's k, seed and cutoffs, in a temporary store, and exports it as `evals export --board`
would; every test point's ranked turns (and the turns each record holds) must be the file's
(:func:`evals.judge.origin.first_difference`). Then the file is **reproduced**, and ``RUN_ID.reproduced.json``
beside it records the file's sha256, the harness's commit, the date and the points compared; otherwise the line
names the first point and rank that differ, and a record left from before is removed.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.errors import EvalsError
from evals.judge.origin import first_difference
from evals.views.board_files import (
    BoardFile,
    Found,
    board_document,
    load_board,
    reproduced_path,
    reproduction_document,
)

__all__ = ["NOT_RERUN", "NOT_REPRODUCED", "REPRODUCED", "Rerun", "reproduce_file"]

REPRODUCED, NOT_REPRODUCED, NOT_RERUN = "reproduced", "not reproduced", "not rerun"


@dataclass(frozen=True)
class Rerun:
    """One board file's rerun: whether it reproduced, and the one line that says how."""

    path: Path
    status: str  # REPRODUCED, NOT_REPRODUCED or NOT_RERUN
    detail: str

    @property
    def line(self) -> str:
        return f"{self.status}: {self.path}: {self.detail}"


def reproduce_file(path: Path, found: Found) -> Rerun:
    """Rerun the system of the (verified) board file at ``path`` on its corpus ``found`` and compare its rankings;
    a match writes the record of the reproduction beside the file."""
    data = Path(path).read_bytes()
    _, board = load_board(path)
    planned = _planned(board, found)
    if isinstance(planned, str):
        return Rerun(path, NOT_RERUN, planned)
    from evals.run.workflow import run_with_store
    from evals.store import Store

    with tempfile.TemporaryDirectory(prefix="evals-reproduce-") as scratch:
        store = Path(scratch) / "rerun.duckdb"
        try:
            outcome = run_with_store(planned, store, use_cache=False, force=True)
        except EvalsError as exc:
            return Rerun(path, NOT_REPRODUCED, f"the rerun failed: {exc}")
        with Store.open(store, read_only=True) as opened:
            document = board_document(opened.get_run(outcome.run_id))
    given, again = _rankings(board.model_dump()["points"]), _rankings(document["points"])
    beside = reproduced_path(path)
    difference = first_difference(given, again)
    if difference is None:
        difference = first_difference(_held(board.model_dump()["points"]), _held(document["points"]))
    if difference is not None:
        removed = ""
        if beside.is_file():
            beside.unlink()
            removed = f" (removed {beside.name})"
        return Rerun(path, NOT_REPRODUCED, f"{difference}{removed}")
    provenance = outcome.provenance
    date = datetime.now(UTC).date().isoformat()
    record = reproduction_document(path, data, provenance.commit, provenance.dirty, date, len(given))
    beside.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return Rerun(path, REPRODUCED, f"{len(given)} points, the same rankings (wrote {beside.name})")


def _planned(board: BoardFile, found: Found) -> Any:
    """The run that reproduces ``board`` (a RunConfig), or why it cannot be rerun offline here."""
    from evals.run.config import RunConfig
    from evals.strategies import Registry

    if board.failed is not None:
        return "a failed run: no ranking to reproduce"
    if found.pin is None or found.folder is None:
        return "its corpus is no pinned benchmark (given with --corpus): evals fetch it to rerun on it"
    configuration = board.system.configuration
    registry = Registry()
    try:
        spec = registry.get(board.system.name)
    except EvalsError:
        return f"strategy {board.system.name!r} is not registered here (a plug-in not installed?)"
    if spec.needs_endpoint or spec.declared(configuration)[1]:
        return f"strategy {spec.name} calls an endpoint or writes with an LLM: not rerun offline"
    options = {key: configuration[key] for key in spec.options.model_fields if key in configuration}
    try:
        config = RunConfig(
            strategy=board.system.name,
            options=options,
            corpus=found.folder,
            k=board.k,
            seed=board.seed,
            cutoffs=tuple(board.cutoffs),
        )
        if config.embeds_with_openai():
            return f"strategy {spec.name} embeds with OpenAI's endpoint: not rerun offline"
        here = config.plan(registry).configuration
    except (EvalsError, ValueError) as exc:
        return f"its configuration cannot be planned here: {str(exc).splitlines()[0]}"
    differing = sorted(key for key in {*configuration, *here} if configuration.get(key) != here.get(key))
    if differing:
        key = differing[0]
        return (
            f"its configuration differs here at {key!r} (the file: {configuration.get(key)!r}, here: {here.get(key)!r}): "
            "another library version or option; not rerun"
        )
    return config


def _rankings(points: list[dict[str, Any]]) -> dict[tuple[str, int], list[Any]]:
    return {(p["conversation"], p["turn"]): list(p["turns"]) for p in points}


def _held(points: list[dict[str, Any]]) -> dict[tuple[str, int], list[Any]]:
    return {(p["conversation"], p["turn"]): [tuple(g) for g in p.get("held") or []] for p in points}
