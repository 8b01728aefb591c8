"""Templates read out of a published Python file by parsing it (:mod:`ast`), never by running it.

A benchmark's evaluation script holds its prompts as string constants: assigned at module level, or
inside a function under some condition (``if task == 'temporal-reasoning':``), or glued to a value
(``qa['question'] + ' Use DATE …'``). :class:`PythonSource` finds them by that shape. Each branch a
statement sits in is kept as a :class:`Condition` (the test's source text and whether the branch is
its true or false side), so a protocol picks the template for a case by the conditions it holds
under. A file without the expected shape is refused in one line naming it and what is missing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evals.benchmarks.kit.sources import ProtocolError

__all__ = ["Branch", "Condition", "Glued", "PythonSource", "glued", "literal"]


@dataclass(frozen=True)
class Condition:
    """One ``if`` a statement sits under: the test as source text, and which side of it."""

    test: str
    holds: bool
    node: ast.expr

    def mentions(self, text: str) -> bool:
        return text in self.test


@dataclass(frozen=True)
class Branch:
    """A statement (or expression) and the conditions it sits under, outermost first."""

    conditions: tuple[Condition, ...]
    node: ast.AST

    def holds(self, test: str) -> bool | None:
        """True/False when the branch sits on that side of the test written ``test``; None when under no such test."""
        for condition in self.conditions:
            if condition.test == test:
                return condition.holds
        return None

    def under(self, fragment: str, holds: bool = True) -> bool:
        """Whether the branch sits on side ``holds`` of a test whose source mentions ``fragment``."""
        return any(c.mentions(fragment) and c.holds == holds for c in self.conditions)


@dataclass(frozen=True)
class Glued:
    """A ``+`` chain of string constants and other values (``speaker + ' said, "' + text + '"'``):
    the constants as they are, each other value as None, in order."""

    parts: tuple[str | None, ...]

    @property
    def literals(self) -> tuple[str, ...]:
        return tuple(p for p in self.parts if p is not None)

    @property
    def slots(self) -> int:
        return sum(p is None for p in self.parts)

    def render(self, *values: str) -> str:
        """The chain with its values given in order."""
        if len(values) != self.slots:
            raise ValueError(f"{self.slots} values expected, {len(values)} given")
        given = iter(values)
        return "".join(p if p is not None else next(given) for p in self.parts)


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def glued(node: ast.AST) -> Glued:
    """``node`` as a chain of ``+``: its string constants and its other operands (None) in order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return Glued(glued(node.left).parts + glued(node.right).parts)
    return Glued((_string(node),))


class PythonSource:
    """One published Python file, parsed."""

    def __init__(self, text: str, name: str) -> None:
        self.name = name
        try:
            self.tree = ast.parse(text, filename=name)
        except SyntaxError as exc:
            raise ProtocolError(f"{name} is not Python this version can parse (line {exc.lineno}: {exc.msg})") from None

    def missing(self, what: str, found: int = 0) -> ProtocolError:
        where = "not found" if not found else f"found {found} times, not once"
        return ProtocolError(f"{self.name}: {what} {where}; the file does not have the shape this protocol reads")

    # -- module level ------------------------------------------------------------------------------

    def constant(self, name: str) -> str:
        """The string assigned to ``name`` at module level (its last assignment)."""
        found = None
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                found = _string(node.value)
        if found is None:
            raise self.missing(f"a string constant {name} at module level")
        return found

    def function(self, name: str) -> ast.FunctionDef:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
        raise self.missing(f"function {name}()")

    # -- inside a function -------------------------------------------------------------------------

    def branches(self, function: str) -> Iterator[Branch]:
        """Every simple statement of ``function`` with the conditions it sits under."""
        yield from _walk(self.function(function).body, ())

    def assigned(self, function: str, target: str, augmented: bool = False) -> list[Branch]:
        """The statements of ``function`` assigning ``target`` (``=``, or ``+=`` when ``augmented``):
        each branch's node is the assigned value."""
        found = []
        for branch in self.branches(function):
            node = branch.node
            if (
                not augmented
                and isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == target for t in node.targets)
            ):
                found.append(Branch(branch.conditions, node.value))
            elif augmented and isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                if isinstance(node.target, ast.Name) and node.target.id == target:
                    found.append(Branch(branch.conditions, node.value))
        return found

    def assigned_strings(self, function: str, target: str) -> list[Branch]:
        """The string constants assigned to ``target`` in ``function`` (each branch's node is the Constant)."""
        return [b for b in self.assigned(function, target) if _string(b.node) is not None]

    def calls(self, function: str, method: str) -> list[Branch]:
        """Every call ``<something>.method(...)`` in ``function``, with the conditions of its statement."""
        found = []
        for branch in self.branches(function):
            for node in ast.walk(branch.node):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
                    found.append(Branch(branch.conditions, node))
        return found

    def one(self, found: list[Branch], what: str) -> Branch:
        """The only branch of ``found``; refused when there is none or more than one."""
        if len(found) != 1:
            raise self.missing(what, len(found))
        return found[0]

    def text(self, branch: Branch, what: str) -> str:
        return self.string(branch.node, what)

    def string(self, node: ast.AST, what: str) -> str:
        value = _string(node)
        if value is None:
            raise self.missing(f"{what} as a string constant")
        return value

    def glued(self, node: ast.AST, what: str, literals: int, slots: int) -> Glued:
        """``node`` as a ``+`` chain, with exactly that many string constants and other values."""
        chain = glued(node)
        if len(chain.literals) != literals or chain.slots != slots:
            raise self.missing(f"{what} as {literals} strings glued to {slots} values")
        return chain


def _walk(statements: list[ast.stmt], conditions: tuple[Condition, ...]) -> Iterator[Branch]:
    for statement in statements:
        if isinstance(statement, ast.If):
            test = ast.unparse(statement.test)
            yield from _walk(statement.body, (*conditions, Condition(test, True, statement.test)))
            yield from _walk(statement.orelse, (*conditions, Condition(test, False, statement.test)))
        elif isinstance(statement, ast.For | ast.While | ast.With):
            yield from _walk(statement.body, conditions)
            yield from _walk(getattr(statement, "orelse", []), conditions)
        elif isinstance(statement, ast.Try):
            for body in (statement.body, *(h.body for h in statement.handlers), statement.orelse, statement.finalbody):
                yield from _walk(body, conditions)
        elif isinstance(statement, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            continue  # a nested definition is not this function's code
        else:
            yield Branch(conditions, statement)


def literal(node: ast.AST) -> Any:
    """A literal's value (a string, a list of strings), or None when it is not one."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
