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
option, known before the strategy exists. The name always comes from the
registry (the entry point's name, or the reference), never from an option or
the instance; and a configuration the store could not read back (an integer
beyond 64 bits, NaN, a lone surrogate, an endless string) is refused here,
before anything runs.

Whatever a plug-in's code raises (on import, in its factory, in any call a
play-through makes) is the plug-in's fault and becomes a :class:`StrategyError`
naming the strategy and the call; any ``BaseException`` but ``KeyboardInterrupt``
(:mod:`evals.strategies._faults`), so a plug-in calling ``sys.exit(0)`` cannot end
a run with exit code 0 and nothing stored. One that fails to load does not hide
the others from a listing (:meth:`Registry.loadable`).

A plug-in's module is imported through :func:`_tracked`, which notes the
top-level modules that came with it (``StrategySpec.imported_with``): with its
package's files they make the digest that keys its runs' reuse
(:func:`evals.model.provenance.strategy_code`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import EntryPoint
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from evals.errors import EvalsError
from evals.io.plugins import STRATEGY_GROUP, PluginError, is_reference, load_reference
from evals.io.plugins import group as plugin_group
from evals.io.plugins import is_built_in as _is_built_in
from evals.io.plugins import source_of as _source
from evals.model.formatting import printable
from evals.strategies._faults import (
    MAX_CONFIGURATION_CHARS,
    PLUGIN_FAULTS,
    StrategyError,
    fault_text,
    kind_of,
    plugin_fault,
    reraise_interrupt,
    unstorable,
)
from evals.strategies.base import READS_LABELS, REQUIRED_MEMBERS, MemoryStrategy, missing_members

if TYPE_CHECKING:
    from evals.io.cache import Cache
    from evals.io.endpoints import RetryPolicy
    from evals.strategies.embedders import Embedders

__all__ = [
    "ENTRY_POINT_GROUP",
    "NO_MODEL",
    "PLUGIN_FAULTS",
    "BuildContext",
    "NoOptions",
    "Planned",
    "Registry",
    "StrategyError",
    "StrategySpec",
    "fault_text",
    "kind_of",
    "plugin_fault",
    "spec_from_factory",
    "unstorable",
]

ENTRY_POINT_GROUP = STRATEGY_GROUP
# Recorded as a run's model when the strategy uses no model at all.
NO_MODEL = "none"


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class BuildContext:
    """What a run gives every strategy it builds, beside its options."""

    seed: int = 42  # the run's seed
    cache: Cache | None = None  # embeddings and LLM replies kept across runs (None: none)
    summarize_fn: Callable[[list[dict[str, str]]], str] | None = None  # an LLM summariser, when answers are on
    summarizer: str | None = None  # its name, for the configuration (None: no LLM summariser)
    # The harness's embedders, lent to the strategies of this run (made from ``cache`` when not given).
    embedders: Embedders | None = None
    # The run's deadline and retries for every LLM request (--request-timeout, --max-retries), a memory's own
    # included (mem0 with infer=true, graphiti, cognee: evals.strategies.llm); None: the defaults.
    llm_policy: RetryPolicy | None = None

    def __post_init__(self) -> None:
        if self.embedders is None:
            from evals.strategies.embedders import Embedders

            object.__setattr__(self, "embedders", Embedders(self.cache))

    def embedder(self, name: str = "minilm") -> Any:
        """The harness's embedder ``name`` (``hash``, ``minilm``, ``openai``): a strategy that embeds with a
        model the harness ships takes it from here, so each text is embedded once per model across every
        memory, through the run's cache, and up front in batches (:mod:`evals.strategies.embedders`)."""
        assert self.embedders is not None
        return self.embedders.get(name)


def _default_describe(name: str) -> Callable[[BaseModel, BuildContext], dict[str, Any]]:
    def describe(options: BaseModel, context: BuildContext) -> dict[str, Any]:
        values = options.model_dump(mode="json")
        if "name" in values:  # it would be lost (or, before, would rename the strategy on the leaderboard)
            raise StrategyError(
                f"strategy {name}: an option may not be called 'name': a run is named by the registry "
                "(rename the factory's parameter)"
            )
        return {"name": name, **values}

    return describe


@dataclass(frozen=True)
class StrategySpec:
    """A strategy as the registry knows it: how to build it, its options, how to name a configuration."""

    name: str
    build: Callable[[BaseModel, BuildContext], MemoryStrategy]
    options: type[BaseModel] = NoOptions
    describe: Callable[[BaseModel, BuildContext], dict[str, Any]] | None = None
    summary: str = ""  # one line for `evals strategies`
    ignores_k: bool = False  # returns more than k records by design (full_history)
    # Told each test point's evidence labels before retrieving (ReadsLabels: the oracle): a ceiling, never a
    # memory. The registry records it in the configuration (READS_LABELS), which is what the play-through
    # and every ceiling mark read, so a run cannot be told the labels without its record saying so.
    reads_labels: bool = False
    # retrieve(q, k) == retrieve(q, K)[:k] for k < K, so every cutoff is read off one retrieval at the
    # largest; a strategy that cannot promise it says False and is asked once per cutoff instead.
    prefix_stable: bool = True
    # Its records are rewritten (facts an LLM drew from the turns: mem0 infer=true), so a record's text need not
    # contain the turns it names; `evals check-strategy` then does not hold it to that.
    derived_records: bool = False
    requires: tuple[str, ...] = ()  # modules it needs that an optional extra installs (checked, not imported)
    # It asks an LLM endpoint whatever its options (graphiti writes with one), so it is not among the strategies
    # that can run here as they are (`evals strategies --available`, a suite's "available"), which run offline.
    needs_endpoint: bool = False
    extra: str | None = None  # the extra that installs them, for the message
    install_hint: str | None = None  # how to install them, where `pip install -e '.[extra]'` would be wrong advice
    # Declared facts every board shows beside its runs: the benchmarks whose data informed its settings (its
    # defaults tuned on their questions or answers; () unless documented), and whether its memory writes with an
    # LLM (True, False, or decided by the configuration: mem0 writes with one only with infer=true).
    tuned_on: tuple[str, ...] = ()
    writes_with_llm: bool | Callable[[Mapping[str, Any]], bool] = False
    source: str = "built-in"  # filled in by the registry: built-in, a distribution and version, or module:attr
    # Filled in by the registry for a plug-in: the module its code was loaded from, whose files' digest
    # keys run reuse (evals.model.provenance.strategy_code). None for a built-in: the commit names its code.
    module: str | None = None
    # Filled in with ``module``: the top-level modules that were first imported together with it (its
    # helpers from outside its package, the libraries it uses), which the digest names too.
    imported_with: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """The required modules this environment lacks ([] when the strategy can run here)."""
        return [name for name in self.requires if not _findable(name)]

    def available(self) -> bool:
        """Whether it runs here as it is: installed, and asking no LLM endpoint (see ``needs_endpoint``)."""
        return not self.needs_endpoint and not self.missing()

    def declared(self, configuration: Mapping[str, Any]) -> tuple[list[str], bool]:
        """What a run of ``configuration`` declares: (tuned_on, writes_with_llm)."""
        writes = self.writes_with_llm(configuration) if callable(self.writes_with_llm) else self.writes_with_llm
        return list(self.tuned_on), bool(writes)

    def configuration(self, options: BaseModel, context: BuildContext) -> dict[str, Any]:
        describe = self.describe or _default_describe(self.name)
        return describe(options, context)

    def parse(self, pairs: Mapping[str, Any]) -> BaseModel:
        """The options model from ``key=value`` pairs; a :class:`StrategyError` names each bad option."""
        try:
            return self.options.model_validate(dict(pairs))
        except EvalsError:
            raise
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
        except PLUGIN_FAULTS as exc:  # a plug-in's own validator failed
            raise plugin_fault(self.name, "validating its options", exc) from exc

    def option_rows(self) -> list[tuple[str, str, str]]:
        """(name, default, help) of each option, for `evals strategies`."""
        rows = []
        for key, info in self.options.model_fields.items():
            default = "required" if info.is_required() else printable(_shown(info.default))
            rows.append((key, default, printable(info.description or "")))
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
            hint = self.spec.install_hint or (
                f"pip install -e '.[{self.spec.extra}]'" if self.spec.extra else f"install {', '.join(missing)}"
            )
            raise StrategyError(f"strategy {self.spec.name} needs {', '.join(missing)}, which is not installed: {hint}")
        try:
            strategy = self.spec.build(self.options, self.context)
            missing = missing_members(strategy)  # looks its members up: a property may raise too
        except EvalsError:
            raise
        except PLUGIN_FAULTS as exc:  # a plug-in's failure becomes a message, not a traceback
            raise StrategyError(f"strategy {self.spec.name} ({self.spec.source}) could not be built: {fault_text(exc)}") from exc
        if missing:
            lacks = "" if len(missing) == len(REQUIRED_MEMBERS) else f"; it lacks {', '.join(missing)}"
            raise StrategyError(
                f"strategy {self.spec.name} ({self.spec.source}): its factory returned {kind_of(strategy)}, not a "
                f"memory strategy (an object with add, retrieve, context_for and reset methods{lacks})"
            )
        return strategy


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
    except PLUGIN_FAULTS as exc:  # an annotation we cannot resolve accepts anything
        reraise_interrupt(exc)
        return Any


def _as_spec(name: str, value: Any, source: str, module: str | None) -> StrategySpec:
    imported = _IMPORTED_WITH.get(sys.modules[module], ()) if module in sys.modules else ()
    if isinstance(value, StrategySpec):
        return replace(value, name=name, source=source, module=module, imported_with=imported)
    if callable(value):
        try:
            return replace(spec_from_factory(name, value, source), module=module, imported_with=imported)
        except PLUGIN_FAULTS as exc:  # a signature pydantic cannot turn into options, say
            raise StrategyError(
                f"strategy {name} ({source}): its factory's parameters cannot be options: {fault_text(exc)}"
            ) from exc
    raise StrategyError(f"strategy {name} ({source}) is neither a StrategySpec nor a factory function: {type(value).__name__}")


class Registry:
    """The strategies installed in this environment (entry points, read by :func:`evals.io.plugins.group`, again
    whenever ``sys.path`` changes), each loaded afresh for each registry."""

    def __init__(self, points: Iterable[EntryPoint] | None = None) -> None:
        found = plugin_group(ENTRY_POINT_GROUP) if points is None else points
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
                value = _tracked(point.module, point.load)
            except PLUGIN_FAULTS as exc:
                raise StrategyError(f"strategy {ref} ({_source(point)}) failed to load: {fault_text(exc)}") from exc
            spec = _as_spec(ref, value, _source(point), None if _is_built_in(point) else point.module)
        elif ":" in ref:
            spec = self._load_reference(ref)
        else:
            raise StrategyError(
                f"unknown strategy {ref!r}; registered: {', '.join(self.names())} (or name a factory as package.module:function)"
            )
        spec = replace(spec, summary=printable(spec.summary), source=printable(spec.source))  # shown by `evals strategies`
        if printable(spec.name) != spec.name or not spec.name.strip():
            raise StrategyError(f"strategy {printable(ref)}: its name {spec.name!r} is blank or holds control characters")
        self._loaded[ref] = spec
        return spec

    def all(self) -> list[StrategySpec]:
        return [self.get(name) for name in self.names()]

    def loadable(self) -> tuple[list[StrategySpec], list[str]]:
        """Every registered strategy that loads, and one line for each that does not: one broken
        plug-in must not hide the others from `evals strategies` (nor from scripts reading --names)."""
        specs, broken = [], []
        for name in self.names():
            try:
                specs.append(self.get(name))
            except StrategyError as exc:
                broken.append(str(exc))
            except PLUGIN_FAULTS as exc:  # a spec whose own fields break the look-up (a summary that is no text)
                broken.append(f"strategy {printable(name)}: {fault_text(exc)}")
        return specs, broken

    def plan(self, ref: str, options: Mapping[str, Any], context: BuildContext) -> Planned:
        """The strategy ``ref`` with ``options`` validated and its configuration worked out, nothing built.

        The configuration is named by the registry whatever ``describe`` says, and must be
        something the store can keep and read back, or nothing runs."""
        spec = self.get(ref)
        validated = spec.parse(options)
        try:
            values = validated.model_dump(mode="json")
            configuration = spec.configuration(validated, context)
        except EvalsError:
            raise
        except PLUGIN_FAULTS as exc:
            raise plugin_fault(spec.name, "describe (its configuration)", exc) from exc
        for key, value in values.items():
            problem = unstorable(value)
            if problem is not None:
                raise StrategyError(f"--option {key}: {problem}")
        if not isinstance(configuration, dict):
            raise StrategyError(f"strategy {spec.name}: its configuration is {kind_of(configuration)}, not a dict")
        configuration = {**configuration, "name": spec.name}  # names come from the registry, never from options
        if spec.reads_labels:
            configuration[READS_LABELS] = True
        problem = unstorable(configuration)
        if problem is None and len(json.dumps(configuration, ensure_ascii=False)) > MAX_CONFIGURATION_CHARS:
            problem = f"longer than {MAX_CONFIGURATION_CHARS:,} characters as JSON"
        if problem is not None:
            raise StrategyError(f"strategy {spec.name}: its configuration cannot be stored: {problem}")
        return Planned(spec, validated, context, configuration)

    def _load_reference(self, ref: str) -> StrategySpec:
        """The strategy ``package.module:attr`` names: a factory (named by the reference) or a spec."""
        if not is_reference(ref):
            raise StrategyError(f"--runner {printable(ref)}: not a registered name nor a reference package.module:function")
        module_name = ref.partition(":")[0]
        try:
            value, _ = _tracked(module_name, lambda: load_reference(ref, f"--runner {ref}"))
        except PluginError as exc:
            raise StrategyError(str(exc)) from None
        except PLUGIN_FAULTS as exc:  # an error in the user's module is theirs to read
            raise StrategyError(f"--runner {ref}: cannot import {module_name}: {fault_text(exc)}") from None
        # A spec keeps its declared name unless that names another strategy; a bare factory is named by the
        # reference itself, which is unambiguous.
        name = value.name if isinstance(value, StrategySpec) else ref
        if name in self._points and self._points[name].value != ref:
            raise StrategyError(
                f"--runner {ref}: its StrategySpec is named {name!r}, which is registered to another strategy "
                f"({_source(self._points[name])}); give it a name of its own"
            )
        return _as_spec(name, value, ref, module_name)


# For each plug-in module the registry imported: the top-level modules first imported with it, outside
# its own package. Kept while the module object lives, so a second look-up in this process (when
# nothing is imported anew) names the same code as the first.
_IMPORTED_WITH: weakref.WeakKeyDictionary[ModuleType, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _tracked(module: str, load: Callable[[], Any]) -> Any:
    """``load()``, which imports ``module``; notes which other top-level modules came with it."""
    before = set(sys.modules)
    value = load()
    loaded = sys.modules.get(module)
    if loaded is not None and loaded not in _IMPORTED_WITH:
        own = module.partition(".")[0]
        _IMPORTED_WITH[loaded] = tuple(sorted({name.partition(".")[0] for name in set(sys.modules) - before} - {own, "evals"}))
    return value


def _findable(module: str) -> bool:
    """Whether ``module`` can be imported here, found without importing it (a dotted name's parents
    are imported to look inside: one that fails counts as not installed)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _shown(value: Any) -> str:
    """``repr`` of an option's default, for `evals strategies`: a plug-in's object may not have one that works."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - a plug-in's __repr__ is its own code
        return f"<a {type(value).__name__}>"
