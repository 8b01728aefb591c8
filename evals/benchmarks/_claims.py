"""Every published claim the boards show, gathered so that one plug-in's claims break only themselves.

Claims come from two doors: a unit's own (``Unit.claims``: its folder's ``claims.toml``, on its own benchmark
only), and a claims file a plug-in names for a benchmark, built-in or not (an entry point of ``mneme_evals.claims``
named for that benchmark, whose value is a :func:`evals.model.claims.claims_in` reader of the same benchmark).
Either way each claim is checked to be of that benchmark, and a plug-in's are labelled with where they come
from (:attr:`Claim.origin`). What cannot be read (a raising reader, a bad file: nan, a negative value, k = 0,
another benchmark) leaves out that unit's (or that file's) claims with one warning line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import EntryPoint
from typing import Any

from evals.io import plugins
from evals.model.claims import Claim, ClaimsFile
from evals.model.formatting import printable
from evals.strategies.registry import PLUGIN_FAULTS, fault_text

__all__ = ["CLAIMS_GROUP", "gather"]

CLAIMS_GROUP = plugins.CLAIMS_GROUP


def _checked(read: Callable[[], Any], benchmark: str, origin: str) -> list[Claim]:
    """The claims ``read`` returns, each of ``benchmark`` and labelled ``origin`` ("": built in); a
    :class:`ValueError` (or whatever the reader raises) says why none are taken."""
    if isinstance(read, ClaimsFile) and read.benchmark != benchmark:
        raise ValueError(f"its claims file holds the claims of {read.benchmark!r}, not {benchmark!r}")
    found = read()
    if not isinstance(found, list | tuple):
        raise ValueError(f"its claims are {type(found).__name__}, not a list of claims")
    claims = []
    for n, claim in enumerate(found):
        if not isinstance(claim, Claim):
            raise ValueError(f"claim[{n}] is {type(claim).__name__}, not a Claim")
        if claim.benchmark != benchmark:
            raise ValueError(f"claim[{n}] is of benchmark {claim.benchmark!r}, not {benchmark!r}")
        if origin:  # every surface shows who measured a claim: who added it is said there too
            claim = claim.model_copy(update={"origin": origin, "measured_by": f"{claim.measured_by}; added by {origin}"})
        claims.append(claim)
    return claims


def _from_entry_point(point: EntryPoint, units: Mapping[str, Any]) -> list[Claim]:
    if point.name not in units:
        raise ValueError(f"it names benchmark {point.name!r}, which is not registered")
    value = point.load()
    if not isinstance(value, ClaimsFile):
        raise ValueError(f"it is {type(value).__name__}, not a claims file (evals.benchmarks.kit.claims_in)")
    return _checked(value, point.name, plugins.source_of(point))


def gather(
    units: Mapping[str, Any], sources: Mapping[str, str], points: Sequence[EntryPoint], warn: Callable[[str], None]
) -> list[Claim]:
    """Each unit's claims in the units' order, then those of each claims entry point in ``points``, in name order."""
    claims: list[Claim] = []
    for name, unit in units.items():
        if unit.claims is None:
            continue
        source = sources.get(name, "built-in")
        try:
            claims.extend(_checked(unit.claims, name, "" if source == "built-in" else source))
        except PLUGIN_FAULTS as exc:
            warn(f"benchmark {name} ({printable(source)}): its claims are left out: {_said(exc)}")
    for point in sorted(points, key=lambda p: (not plugins.is_built_in(p), p.name, p.value)):
        try:
            claims.extend(_from_entry_point(point, units))
        except PLUGIN_FAULTS as exc:
            warn(f"claims {printable(point.name)} ({printable(plugins.source_of(point))}) are left out: {_said(exc)}")
    return claims


def _said(exc: BaseException) -> str:
    """A reason in one line: ours (a ValueError of this module, a ClaimError) as said, a plug-in's with its type."""
    from evals.errors import EvalsError

    if type(exc) is ValueError or isinstance(exc, EvalsError):
        return printable(" ".join(str(exc).split()))
    return printable(fault_text(exc))
