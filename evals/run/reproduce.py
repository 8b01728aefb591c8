"""A board file's system rerun by the harness, offline, as `evals verify --reproduce` asks (docs/board.md).

A system is rerun when it is a strategy registered here that runs offline (no endpoint, no LLM writing its memory,
no paid embedder) and the configuration the harness plans from the file's options is the file's, library versions
included. The rerun plays it on the corpus at the file's k, seed and cutoffs into a temporary store, and hands back
the stored run; comparing its rankings with the file's is :mod:`evals.views.board_reproduce`'s.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.errors import EvalsError
from evals.run.config import RunConfig
from evals.store import Store, StoredRun

__all__ = ["rerun"]


def rerun(
    strategy: str, configuration: Mapping[str, Any], corpus: Path, k: int, seed: int, cutoffs: Sequence[int]
) -> StoredRun | str:
    """The run of ``strategy`` at ``configuration``'s options on ``corpus``, as stored, or why it is not rerun here."""
    planned = _planned(strategy, configuration, corpus, k, seed, cutoffs)
    if isinstance(planned, str):
        return planned
    from evals.run.workflow import run_with_store

    with tempfile.TemporaryDirectory(prefix="evals-reproduce-") as scratch:
        store = Path(scratch) / "rerun.duckdb"
        outcome = run_with_store(planned, store, use_cache=False, force=True)
        with Store.open(store, read_only=True) as opened:
            return opened.get_run(outcome.run_id)


def _planned(
    strategy: str, configuration: Mapping[str, Any], corpus: Path, k: int, seed: int, cutoffs: Sequence[int]
) -> RunConfig | str:
    """The run that reproduces the file's, or why it cannot be rerun offline here."""
    from evals.strategies import Registry

    registry = Registry()
    try:
        spec = registry.get(strategy)
    except EvalsError:
        return f"strategy {strategy!r} is not registered here (a plug-in not installed?)"
    if spec.needs_endpoint or spec.declared(configuration)[1]:
        return f"strategy {spec.name} calls an endpoint or writes with an LLM: not rerun offline"
    options = {key: configuration[key] for key in spec.options.model_fields if key in configuration}
    try:
        config = RunConfig(strategy=strategy, options=options, corpus=corpus, k=k, seed=seed, cutoffs=tuple(cutoffs))
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
