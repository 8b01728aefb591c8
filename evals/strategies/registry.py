"""Which strategies exist, what options each takes, and what a configuration is, without building one.

Every strategy, built-in or not, is found the same way: an entry point in the
group :data:`ENTRY_POINT_GROUP` (``mneme_evals.strategies``) whose value is a
:class:`StrategySpec` or a plain factory function. This package declares its
own built-ins there too (``pyproject.toml``), so the door a plug-in uses is
always exercised. A strategy can also be named ad hoc as ``package.module:attr``.

A factory function's keyword parameters are its options: their annotations
and defaults become the options model (pydantic), so ``--option key=value``
is validated and converted before anything is built. A parameter named
``context`` receives the run's :class:`BuildContext` instead.

A configuration's identity, which keys reuse, the leaderboard and history, is
:meth:`StrategySpec.describe` of the validated options: the name plus every
option, known before the strategy exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from evals.errors import EvalsError
from evals.strategies.base import MemoryStrategy

if TYPE_CHECKING:
    from evals.cache import Cache

__all__ = [
    "ENTRY_POINT_GROUP",
    "NO_MODEL",
    "BuildContext",
    "NoOptions",
    "Planned",
    "Registry",
    "StrategyError",
    "StrategySpec",
    "spec_from_factory",
]

ENTRY_POINT_GROUP = "mneme_evals.strategies"
BUILT_IN_DISTRIBUTION = "mneme-evals"
# Recorded as a run's model when the strategy uses no model at all.
NO_MODEL = "none"


class StrategyError(EvalsError):
    """A strategy cannot be found, its options are wrong, or it cannot be built."""


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BuildContext:
    """What a run gives every strategy it builds, beside its options."""

    seed: int = 42  # the run's seed
    cache: Cache | None = None  # embeddings and LLM replies kept across runs (None: none)
    summarize_fn: Callable[[list[dict[str, str]]], str] | None = None  # an LLM summariser, when answers are on
    summarizer: str | None = None  # its name, for the configuration (None: no LLM summariser)


def _default_describe(name: str) -> Callable[[BaseModel, BuildContext], dict[str, Any]]:
    def describe(options: BaseModel, context: BuildContext) -> dict[str, Any]:
        return {"name": name, **options.model_dump(mode="json")}

    return describe


@dataclass(frozen=True)
class StrategySpec:
    """A strategy as the registry knows it: how to build it, its options, how to name a configuration."""

    name: str
    build: Callable[[BaseModel, BuildContext], MemoryStrategy]
    options: type[BaseModel] = NoOptions
    describe: Callable[[BaseModel, BuildContext], dict[str, Any]] | None = None
    summary: str = ""  # one line for `evals strategies`
    ignores_k: bool = False  # returns more than k records by design (full_history, the oracle)
    # retrieve(q, k) == retrieve(q, K)[:k] for k < K, so every cutoff is read off one retrieval at the
    # largest; a strategy that cannot promise it says False and is asked once per cutoff instead.
    prefix_stable: bool = True
    requires: tuple[str, ...] = ()  # modules it needs that an optional extra installs (checked, not imported)
    extra: str | None = None  # the extra that installs them, for the message
    source: str = "built-in"  # filled in by the registry: built-in, a distribution and version, or module:attr

    def missing(self) -> list[str]:
        """The required modules this environment lacks ([] when the strategy can run here)."""
        return [name for name in self.requires if importlib.util.find_spec(name) is None]

    def configuration(self, options: BaseModel, context: BuildContext) -> dict[str, Any]:
        describe = self.describe or _default_describe(self.name)
        return describe(options, context)

    def parse(self, pairs: Mapping[str, Any]) -> BaseModel:
        """The options model from ``key=value`` pairs; a :class:`StrategyError` names each bad option."""
        try:
            return self.options.model_validate(dict(pairs))
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                key = ".".join(str(p) for p in error["loc"]) or "?"
                if error["type"] == "extra_forbidden":
                    known = ", ".join(self.options.model_fields) or "none"
                    problems.append(f"--option {key}: unknown option of {self.name} (its options: {known})")
                else:
                    given = pairs.get(key, "")
                    problems.append(f"--option {key}={given}: {error['msg']}")
            raise StrategyError("; ".join(problems)) from None

    def option_rows(self) -> list[tuple[str, str, str]]:
        """(name, default, help) of each option, for `evals strategies`."""
        rows = []
        for key, info in self.options.model_fields.items():
            default = "required" if info.is_required() else repr(info.default)
            rows.append((key, default, info.description or ""))
        return rows


@dataclass(frozen=True)
class Planned:
    """A strategy with validated options: its configuration and model known, nothing built yet."""

    spec: StrategySpec
    options: BaseModel
    context: BuildContext
    configuration: dict[str, Any] = field(default_factory=dict)

    @property
    def model(self) -> str:
        """The model a run's numbers depend on (an embedding model, say): the configuration's ``model``."""
        return str(self.configuration.get("model", NO_MODEL))

    def build(self) -> MemoryStrategy:
        missing = self.spec.missing()
        if missing:
            hint = f"pip install -e '.[{self.spec.extra}]'" if self.spec.extra else f"install {', '.join(missing)}"
            raise StrategyError(f"strategy {self.spec.name} needs {', '.join(missing)}, which is not installed: {hint}")
        try:
            return self.spec.build(self.options, self.context)
        except EvalsError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plug-in's failure becomes a message, not a traceback
            raise StrategyError(f"strategy {self.spec.name} ({self.spec.source}) could not be built: {type(exc).__name__}: {exc}") from exc


def spec_from_factory(name: str, factory: Callable[..., MemoryStrategy], source: str = "") -> StrategySpec:
    """A spec for a plain factory function: its keyword parameters are the options."""
    fields: dict[str, Any] = {}
    wants_context = False
    for parameter in inspect.signature(factory).parameters.values():
        if parameter.name == "context":
            wants_context = True
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = parameter.annotation if parameter.annotation is not parameter.empty else Any
        if isinstance(annotation, str):  # postponed annotations: resolve in the factory's module
            annotation = _resolve_annotation(factory, annotation)
        default = parameter.default if parameter.default is not parameter.empty else ...
        fields[parameter.name] = (annotation, default)
    options = create_model(f"{name}_options", __config__=ConfigDict(extra="forbid", frozen=True), **fields)

    def build(values: BaseModel, context: BuildContext) -> MemoryStrategy:
        kwargs = {key: getattr(values, key) for key in fields}
        return factory(**kwargs, context=context) if wants_context else factory(**kwargs)

    doc = inspect.getdoc(factory) or ""
    return StrategySpec(name=name, build=build, options=options, summary=doc.splitlines()[0] if doc else "", source=source)


def _resolve_annotation(factory: Callable[..., Any], annotation: str) -> Any:
    try:
        return eval(annotation, vars(inspect.getmodule(factory)))  # noqa: S307 - the factory's own annotation
    except Exception:  # noqa: BLE001 - an annotation we cannot resolve accepts anything
        return Any


def _as_spec(name: str, value: Any, source: str) -> StrategySpec:
    if isinstance(value, StrategySpec):
        return replace(value, name=name, source=source) if value.name != name else replace(value, source=source)
    if callable(value):
        return spec_from_factory(name, value, source)
    raise StrategyError(f"strategy {name} ({source}) is neither a StrategySpec nor a factory function: {type(value).__name__}")


class Registry:
    """The strategies installed in this environment (entry points), found afresh for each registry."""

    def __init__(self, points: Iterable[EntryPoint] | None = None) -> None:
        found = entry_points(group=ENTRY_POINT_GROUP) if points is None else points
        self._points: dict[str, EntryPoint] = {}
        for point in sorted(found, key=lambda p: (not _is_built_in(p), p.name)):
            self._points.setdefault(point.name, point)  # a built-in name cannot be taken over
        self._loaded: dict[str, StrategySpec] = {}

    def names(self) -> list[str]:
        """Every registered name, built-ins first, without importing any strategy."""
        return list(self._points)

    def get(self, ref: str) -> StrategySpec:
        """The strategy registered as ``ref``, or the one ``package.module:attr`` names."""
        if ref in self._loaded:
            return self._loaded[ref]
        if ref in self._points:
            point = self._points[ref]
            try:
                value = point.load()
            except Exception as exc:  # noqa: BLE001
                raise StrategyError(f"strategy {ref} ({_source(point)}) failed to load: {type(exc).__name__}: {exc}") from exc
            spec = _as_spec(ref, value, _source(point))
        elif ":" in ref:
            spec = _load_reference(ref)
        else:
            raise StrategyError(
                f"unknown strategy {ref!r}; registered: {', '.join(self.names())} "
                "(or name a factory as package.module:function)"
            )
        self._loaded[ref] = spec
        return spec

    def all(self) -> list[StrategySpec]:
        return [self.get(name) for name in self.names()]

    def plan(self, ref: str, options: Mapping[str, Any], context: BuildContext) -> Planned:
        spec = self.get(ref)
        validated = spec.parse(options)
        configuration = spec.configuration(validated, context)
        return Planned(spec, validated, context, configuration)


def _is_built_in(point: EntryPoint) -> bool:
    return point.dist is not None and point.dist.name == BUILT_IN_DISTRIBUTION


def _source(point: EntryPoint) -> str:
    if _is_built_in(point):
        return "built-in"
    if point.dist is None:
        return point.value
    return f"{point.dist.name} {point.dist.version}"


def _load_reference(ref: str) -> StrategySpec:
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - an import error in the user's module is theirs to read
        raise StrategyError(f"--runner {ref}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise StrategyError(f"--runner {ref}: {module_name} has no {attr!r}")
        value = getattr(value, part)
    # A spec keeps its declared name; a bare factory is named by the reference itself, which is unambiguous.
    name = value.name if isinstance(value, StrategySpec) else ref
    return _as_spec(name, value, ref)
