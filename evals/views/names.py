"""How a run is named on every surface: the library plus its non-default options (``qdrant mode=hybrid``).

One function decides it for the site (tables, chart labels, claims, compare),
``evals leaderboard``, ``evals runs`` and ``evals compare``: a row's name is
its strategy, then each option whose stored value differs from the option's
default, in the options' declared order (the defaults are read from the
registry: the configuration the default options describe, so no default is
guessed here). An option that takes one of a few values is named by that value
(``mneme backend=sqlite``, though the configuration records ``SQLiteBackend``).
An option whose default is None (``random_k``'s seed: the run's own) is named
only where it differs from the run's default.

Never a configuration hash, and never one name for two configurations: where
two rows of one table would still share a name (the same options at two k, two
models, or a configuration stored before an option existed), each gets what tells
it apart: its k, its model, or the configuration keys whose values differ.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

from evals.model.formatting import printable
from evals.store import RunSummary
from evals.strategies import BuildContext, Registry

__all__ = ["configuration_name", "row_name", "row_names"]


@functools.cache
def _options(strategy: str) -> tuple[tuple[str, Any, dict[str, Any]], ...]:
    """For each option of ``strategy`` that has a default other than None: (option, the value its default
    configuration records, {recorded value as JSON: the option's value} for each value it can take). () when
    the strategy cannot be looked up here (its rows are then told apart by their configurations alone)."""
    try:
        spec = Registry().get(strategy)
        fields = spec.options.model_fields
        default = spec.configuration(spec.options(), BuildContext())
    except Exception:  # noqa: BLE001 - not installed here, or a plug-in's own code failing: name it by itself
        return ()
    found = []
    for key, info in fields.items():
        if info.is_required() or info.default is None:
            continue
        recorded = {}
        for choice in get_args(info.annotation) if get_origin(info.annotation) is Literal else ():
            try:  # how each choice is recorded (mneme's backend=sqlite as SQLiteBackend), to name it by the choice
                described = spec.configuration(spec.options(**{key: choice}), BuildContext())
            except Exception:  # noqa: BLE001 - a choice this environment cannot describe is named as recorded
                continue
            if key in described:
                recorded[_json(described[key])] = choice
        found.append((key, default.get(key, info.default), recorded))
    return tuple(found)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def configuration_name(strategy: str, configuration: Mapping[str, Any]) -> str:
    """``strategy`` and each of its options that the configuration records at a value other than the default."""
    parts = [
        f"{key}={recorded.get(_json(configuration[key]), configuration[key])}"
        for key, default, recorded in _options(strategy)
        if key in configuration and _json(configuration[key]) != _json(default)
    ]
    return printable(" ".join([strategy, *parts]))


def row_name(summary: RunSummary) -> str:
    """One run's name, alone (:func:`row_names` tells apart the rows of a table that would share one)."""
    return configuration_name(summary.strategy, summary.strategy_config)


def row_names(rows: Sequence[RunSummary]) -> list[str]:
    """Each row's name, where rows of different configurations that would share a name are told apart."""
    names = [row_name(s) for s in rows]
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        groups.setdefault(name, []).append(i)
    out = list(names)
    for name, members in groups.items():
        same = [rows[i] for i in members]
        if len({s.config_key for s in same}) < 2:
            continue
        for i in members:
            out[i] = f"{name} {_apart(rows[i], same)}"
    return out


def _apart(summary: RunSummary, same: Sequence[RunSummary]) -> str:
    """What tells ``summary`` apart from the other rows of its name: its k, its model, or its settings."""
    said = []
    if len({s.k for s in same}) > 1:
        said.append(f"k={summary.k}")
    if len({s.model for s in same}) > 1:
        said.append(f"model={summary.model}")
    keys = sorted({k for s in same for k in s.strategy_config if k != "name"})
    varying = [k for k in keys if len({_json(s.strategy_config.get(k)) for s in same}) > 1]
    if not said or len({(s.k, s.model) for s in same}) < len({s.config_key for s in same}):
        said += [f"{k}={summary.strategy_config[k]}" if k in summary.strategy_config else f"no {k}" for k in varying]
    return printable("(" + ", ".join(said) + ")")
