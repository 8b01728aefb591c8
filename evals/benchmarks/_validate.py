"""A unit checked when it is registered: every field of its :class:`Unit` and of each release's :class:`Benchmark`,
with pydantic, one line per bad field naming the field (``releases[0].homepage: …``).

The units stay plain frozen dataclasses (a unit is written as ``Unit(...)`` and changed with ``replace``); the
registry asks :func:`unit_problems` before it takes one, as MTEB validates its task metadata when a task is
registered, so a unit with a blank title, a release that says neither how to import it nor why it cannot, or a
protocol that is no :class:`ProtocolSpec` is left out with those lines instead of failing later on some page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from evals.benchmarks._registry import Audit, Benchmark, ErrataFormat, ProtocolSpec, RemoteFile, SourceFile, Unit
from evals.judge.answer_scores import Lexical
from evals.judge.headline import Rule

__all__ = ["unit_problems"]

_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a unit's or a release's: a Python name, a folder's, a FORMAT
_KEY = re.compile(r"[a-z][a-z0-9_.-]*")  # a protocol's or an errata format's: an option's value


def _matching(pattern: re.Pattern[str], words: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise PydanticCustomError("bad_name", "must be {words}, got {value}", {"words": words, "value": repr(value[:60])})
        return value

    return check


def _text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must be a non-empty string")
    return value


def _url(value: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+\S*", value):
        raise PydanticCustomError("bad_url", "must be an http(s) URL, got {value}", {"value": repr(value[:60])})
    return value


def _instance(kind: type) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, kind):
            raise PydanticCustomError(
                "wrong_kind", "must be a {kind}, not {got}", {"kind": kind.__name__, "got": type(value).__name__}
            )
        return value

    return check


def _callable(value: Any) -> Any:
    if not callable(value):
        raise PydanticCustomError("not_callable", "must be a function, not {got}", {"got": type(value).__name__})
    return value


Name = Annotated[StrictStr, AfterValidator(_matching(_NAME, "lower-case letters, digits and _, from a letter"))]
Key = Annotated[StrictStr, AfterValidator(_matching(_KEY, "lower-case letters, digits, _, . and -, from a letter"))]
Text = Annotated[StrictStr, AfterValidator(_text)]
Url = Annotated[StrictStr, AfterValidator(_url)]
Function = Annotated[Any, AfterValidator(_callable)]


def _of(kind: type) -> Any:
    return Annotated[Any, AfterValidator(_instance(kind))]


class _Checked(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class _Release(_Checked):
    name: Name
    title: Text
    homepage: Url
    version: Text
    license: Text
    non_commercial: StrictBool
    test_points: Text
    evidence: Text
    data: _of(RemoteFile) | None  # type: ignore[valid-type]
    importer: Name | None
    not_importable: StrictStr
    sources: tuple[_of(SourceFile), ...]  # type: ignore[valid-type]
    tree: tuple[_of(RemoteFile), ...]  # type: ignore[valid-type]
    import_root: StrictStr

    @model_validator(mode="after")
    def _says_why(self) -> _Release:
        if self.importer is None and not self.not_importable.strip():
            raise PydanticCustomError("no_reason", "not_importable: must say why, where importer is None")
        return self


class _Unit(_Checked):
    name: Name
    title: Text
    releases: tuple[_of(Benchmark), ...]  # type: ignore[valid-type]
    importer: Function | None
    reads: StrictStr
    rule: _of(Rule) | None  # type: ignore[valid-type]
    categories: Mapping[StrictStr, StrictStr]
    category_note: StrictStr
    protocols: Mapping[Key, _of(ProtocolSpec)]  # type: ignore[valid-type]
    audit: _of(Audit) | None  # type: ignore[valid-type]
    turn_name: Function | None
    claims: Function | None
    metric_notes: Mapping[StrictStr, StrictStr]
    errata: Mapping[Key, _of(ErrataFormat)]  # type: ignore[valid-type]
    order: StrictInt


class _Protocol(_Checked):
    load: Function
    judge: Text | None
    sources: tuple[_of(SourceFile), ...]  # type: ignore[valid-type]
    lexical: _of(Lexical) | None  # type: ignore[valid-type]
    profile: StrictStr
    scores: StrictStr


def _lines(exc: ValidationError, prefix: str) -> list[str]:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        at = f"{prefix}.{where}" if prefix and where else prefix or where
        lines.append(f"{at}: {error['msg']}" if at else error["msg"])
    return lines


def _values(instance: Any) -> dict[str, Any]:
    return {f.name: getattr(instance, f.name) for f in fields(instance)}


def unit_problems(unit: Unit) -> list[str]:
    """What is wrong with ``unit``'s fields and its releases', one line per bad field (``[]``: nothing)."""
    problems = []
    try:
        _Unit.model_validate(_values(unit))
    except ValidationError as exc:
        problems.extend(_lines(exc, ""))
    protocols = unit.protocols if isinstance(unit.protocols, Mapping) else {}
    for name, spec in protocols.items():
        if isinstance(spec, ProtocolSpec):
            try:
                _Protocol.model_validate(_values(spec))
            except ValidationError as exc:
                problems.extend(_lines(exc, f"protocols.{name}"))
    releases = unit.releases if isinstance(unit.releases, tuple) else ()
    for n, release in enumerate(releases):
        if not isinstance(release, Benchmark):
            continue  # said above
        try:
            _Release.model_validate(_values(release))
        except ValidationError as exc:
            problems.extend(_lines(exc, f"releases[{n}]"))
            continue
        if release.importer == unit.name and unit.importer is None:
            problems.append(f"releases[{n}].importer: names this unit, which has no importer")
    return problems
