"""Contract checks for strategy authors: run a strategy through the contract before a long run.

::

    from evals.strategies.contract import check_strategy

    def test_my_memory_keeps_the_contract():
        assert check_strategy("my_package.memory:make_memory") == []

Like scikit-learn's ``check_estimator``: each check plays a few turns of a
tiny built-in conversation and says, in one line, what the strategy got
wrong and what to fix. ``evals check-strategy NAME_OR_REF`` prints the same.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evals.errors import EvalsError
from evals.model.formatting import printable
from evals.strategies import BuildContext, MemoryStrategy, Record, Registry, StrategySpec
from evals.strategies._faults import PLUGIN_FAULTS, fault_text, kind_of, unstorable
from evals.strategies.base import held_turns, is_turn_number, lone_surrogate

__all__ = ["Check", "check_strategy", "run_checks"]

# A tiny conversation: distinct facts, so a memory that keeps anything finds some of them.
TURNS = [
    ("user", "My cat is called Biscuit and she is nine years old."),
    ("assistant", "Biscuit sounds lovely. Nine is a good age for a cat."),
    ("user", "I moved to Lisbon last spring for a job at a bakery."),
    ("assistant", "Lisbon is a great city for bakeries."),
    ("user", "My favourite editor is vim, I never use emacs."),
    ("assistant", "Noted: vim, not emacs."),
    ("user", "The staging database now listens on port 6543."),
    ("assistant", "Port 6543 for staging, got it."),
    ("user", "My sister Ana visits every second Sunday."),
    ("assistant", "Ana on alternate Sundays, noted."),
]
QUESTION = "What is the name of my cat?"


@dataclass(frozen=True)
class Check:
    name: str
    problem: str | None  # None: passed; else one line saying what to fix


def _fed(strategy: MemoryStrategy, turns: int = len(TURNS)) -> MemoryStrategy:
    strategy.reset()
    for index, (role, content) in enumerate(TURNS[:turns]):
        strategy.add(role, content, turn=index)
    return strategy


def _records(strategy: MemoryStrategy, query: str, k: int) -> list[Any]:
    """What ``retrieve`` returned, as a list for the checks that read records (the types check sees it raw)."""
    return list(strategy.retrieve(query, k))


def _texts(records: list[Any]) -> list[str]:
    return [r if isinstance(r, str) else r.text for r in records]


def _check_members(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    missing = [m for m in ("add", "retrieve", "context_for", "reset") if not callable(getattr(strategy, m, None))]
    if missing:
        return f"missing method(s) {', '.join(missing)}: a strategy needs add, retrieve, context_for and reset"
    if not isinstance(getattr(strategy, "name", None), str):
        return "has no str attribute `name`"
    if "turn" not in inspect.signature(strategy.add).parameters and not _takes_kwargs(strategy.add):
        return "add() takes no `turn` keyword: write add(self, role, content, *, turn)"
    return None


def _takes_kwargs(method: Callable[..., Any]) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(method).parameters.values())


def _check_empty(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    strategy.reset()
    records = _records(strategy, QUESTION, 5)
    return None if records == [] else f"retrieve() on an empty memory returned {len(records)} record(s); it should return []"


def _check_types(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    records = _fed(strategy).retrieve(QUESTION, 5)
    # A run reads a list or tuple only: a generator would be consumed by the first look and a dict give its keys.
    if not isinstance(records, list | tuple) or isinstance(records, Record):
        return f"retrieve() returned {kind_of(records)}; return a list of str or evals.strategies.Record"
    for record in records:
        if isinstance(record, Record):
            if not isinstance(record.text, str):
                return f"a Record's text is a {type(record.text).__name__}; it must be a str"
            text = record.text
        elif isinstance(record, str):
            text = record
        else:
            return f"retrieve() returned a {type(record).__name__} record; return str or evals.strategies.Record"
        if lone_surrogate(text) is not None:
            return "retrieve() returned a record holding a lone surrogate, which is not a character; return valid text"
    return None


def _check_turns(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    fed = 6
    records = _records(_fed(strategy, fed), QUESTION, 5)
    for record in records:
        if not isinstance(record, Record):
            continue
        if not isinstance(record.turns, tuple | list):
            return f"a Record's turns are {kind_of(record.turns)}; name them as a tuple of turn indices"
        for turn in (record.turn, *record.turns):
            if turn is not None and (not is_turn_number(turn) or not 0 <= turn < fed):
                return (
                    f"a Record names turn {turn!r} after {fed} turns were added; "
                    f"a source turn is an added turn's index (0..{fed - 1})"
                )
    return None


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def _check_held(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    """A record is credited with every turn it names (evals.judge.retrieval), so it must hold them: its text
    contains each named turn's content (or, a chunk of one long turn, is contained in it), whitespace aside."""
    if spec.derived_records:
        return None
    records = _records(_fed(strategy), QUESTION, len(TURNS))
    for record in records:
        if not isinstance(record, Record) or not isinstance(record.text, str):
            continue
        text = _squeezed(record.text)
        for turn in held_turns(record):
            if not (is_turn_number(turn) and 0 <= turn < len(TURNS)):
                continue  # said by "source turns are added turns"
            content = _squeezed(TURNS[turn][1])
            if content not in text and not (text and text in content):
                return (
                    f"a Record names turn {turn} but its text {record.text[:60]!r} does not contain that turn "
                    f"({TURNS[turn][1][:40]!r}); name only the turns a record holds, or declare derived_records=True "
                    "in the StrategySpec if records are rewritten facts (mem0 infer=true)"
                )
    return None


def _check_k(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    if spec.ignores_k:
        return None
    fed = _fed(strategy)
    for k in (1, 3):
        records = _records(fed, QUESTION, k)
        if len(records) > k:
            return (
                f"retrieve(query, k={k}) returned {len(records)} records; "
                "return at most k (or declare ignores_k=True in the StrategySpec, like full_history)"
            )
    return None


def _check_reset(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    fed = _fed(strategy)
    fed.reset()
    records = _records(fed, QUESTION, 5)
    if records:
        return (
            f"after reset() retrieve() still returned {len(records)} record(s), e.g. {_texts(records)[0][:60]!r}; "
            "reset must forget everything"
        )
    return None


def _check_found(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    texts = _texts(_records(_fed(strategy), QUESTION, len(TURNS)))
    known = {content for _, content in TURNS}
    if texts and not any(t in known or any(c in t or t in c for c in known) for t in texts):
        return "retrieve() returned records that share nothing with the added turns; records should come from what was added"
    return None


def _check_context(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    messages = _fed(strategy).context_for(QUESTION, 5)
    if not isinstance(messages, list) or not all(
        isinstance(m, Mapping) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in messages
    ):
        return "context_for(query, k) must return a list of {'role': str, 'content': str} messages"
    return None


def _check_prefix(strategy: MemoryStrategy, spec: StrategySpec) -> str | None:
    if spec.ignores_k or not spec.prefix_stable:
        return None
    fed = _fed(strategy)
    deepest = _texts(_records(fed, QUESTION, len(TURNS)))
    for k in range(1, len(TURNS)):
        shorter = _texts(_records(fed, QUESTION, k))
        if shorter != deepest[:k]:
            return (
                f"retrieve(query, k={k}) is not the first {k} of retrieve(query, k={len(TURNS)}) "
                f"({shorter!r} vs {deepest[:k]!r}); rank records the same way at every k, "
                "or declare prefix_stable=False in the StrategySpec (it is then asked once per cutoff)"
            )
    return None


CHECKS: list[tuple[str, Callable[[MemoryStrategy, StrategySpec], str | None]]] = [
    ("members", _check_members),
    ("empty memory retrieves nothing", _check_empty),
    ("records are str or Record", _check_types),
    ("source turns are added turns", _check_turns),
    ("records hold the turns they name", _check_held),
    ("retrieve honours k", _check_k),
    ("shorter k is a prefix", _check_prefix),
    ("reset empties memory", _check_reset),
    ("records come from the turns", _check_found),
    ("context_for gives chat messages", _check_context),
]


def run_checks(ref: str, options: Mapping[str, Any] | None = None, *, registry: Registry | None = None) -> list[Check]:
    """Every contract check of strategy ``ref`` (a registered name or package.module:factory), in order.

    Each problem is one printable line: what a plug-in raised, newlines and all, is escaped."""
    return [Check(c.name, None if c.problem is None else printable(c.problem)) for c in _run_checks(ref, options, registry)]


def _run_checks(ref: str, options: Mapping[str, Any] | None, registry: Registry | None) -> list[Check]:
    registry = registry or Registry()
    context = BuildContext()
    pairs = dict(options or {})
    try:
        spec = registry.get(ref)
        validated = spec.parse(pairs)
    except EvalsError as exc:
        return [Check("options", str(exc))]
    results = [Check("configuration is JSON and stable", _configuration_problem(spec, validated, context))]
    try:
        planned = registry.plan(ref, pairs, context)
    except EvalsError as exc:  # an option or a configuration the store cannot keep
        return [*results, Check("options", str(exc))]
    try:
        strategy = planned.build()
    except EvalsError as exc:
        return [*results, Check("builds", str(exc))]
    results.append(Check("builds", None))
    try:
        members = _check_members(strategy, planned.spec)
    except PLUGIN_FAULTS as exc:
        members = f"raised {fault_text(exc)}"
    results.append(Check("members", members))
    if members is not None:
        return results
    for name, check in CHECKS[1:]:
        try:
            results.append(Check(name, check(strategy, planned.spec)))
        except PLUGIN_FAULTS as exc:  # a crash (or a sys.exit()) is a failed check, reported like one
            results.append(Check(name, f"raised {fault_text(exc)}"))
    try:
        again = planned.spec.build(planned.options, context)
        same = _texts(_records(_fed(again), QUESTION, 5)) == _texts(
            _records(_fed(planned.spec.build(planned.options, context)), QUESTION, 5)
        )
        results.append(
            Check(
                "same inputs, same records",
                None if same else "two fresh builds fed the same turns retrieved different records; seed any randomness",
            )
        )
    except PLUGIN_FAULTS as exc:
        results.append(Check("same inputs, same records", f"raised {fault_text(exc)}"))
    return results


def _configuration_problem(spec: StrategySpec, options: Any, context: BuildContext) -> str | None:
    """What is wrong with the configuration ``describe`` gives (as written, before the registry names it)."""
    try:
        config = spec.configuration(options, context)
        json.dumps(config, sort_keys=True)
        if spec.configuration(options, context) != config:
            return "the configuration differs between two plans of the same options; it must be a function of the options"
    except EvalsError as exc:
        return str(exc)
    except (TypeError, ValueError) as exc:
        return f"the configuration is not JSON-serialisable ({exc}); describe() must return plain JSON values"
    except PLUGIN_FAULTS as exc:
        return f"describe() raised {fault_text(exc)}"
    if not isinstance(config, dict):
        return f"the configuration is {kind_of(config)}; describe() must return a dict"
    if config.get("name") != spec.name:
        return f"the configuration's name is {config.get('name')!r}, not the strategy's name {spec.name!r}"
    problem = unstorable(config)
    return None if problem is None else f"the configuration cannot be stored: {problem}"


def check_strategy(ref: str, options: Mapping[str, Any] | None = None, *, registry: Registry | None = None) -> list[str]:
    """The contract's complaints about strategy ``ref``, one line each; [] when it keeps the contract."""
    return [f"{c.name}: {c.problem}" for c in run_checks(ref, options, registry=registry) if c.problem is not None]
