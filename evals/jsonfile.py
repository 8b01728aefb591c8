"""JSON from files this tool did not write: bounded, strict, and every problem located.

Corpus files, exported runs and the benchmark files the importers read all
come through here. Only regular files are read (a FIFO would block, a device
never ends), and only up to a size limit; the text is parsed by the standard
library and then held to what the formats need:

- no object may name a key twice (parsers silently keep one of them);
- nesting at most :data:`MAX_DEPTH` levels deep, integers at most
  :data:`MAX_INT_DIGITS` digits, no ``NaN`` or ``Infinity``;
- no lone surrogate (``"\\ud800"``): it is not a character and cannot be
  written as UTF-8, so it would fail later, far from the file.

Every problem is a :class:`JSONFileError` naming the file and, where one
exists, the JSON path (``turns[3].content``) of what is wrong.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from evals.errors import EvalsError

__all__ = [
    "MAX_BENCHMARK_FILE_BYTES",
    "MAX_CORPUS_FILE_BYTES",
    "MAX_DEPTH",
    "MAX_EXPORT_FILE_BYTES",
    "MAX_INT_DIGITS",
    "JSONFileError",
    "decode",
    "json_path",
    "load",
    "parse",
    "read_bytes",
]

MAX_DEPTH = 64  # the formats need about 6; strategy settings get the rest
MAX_INT_DIGITS = 20  # any 64-bit integer, with its sign
# Size limits, per file. Regular files only, so a size is known before reading.
MAX_CORPUS_FILE_BYTES = 512 * 1024**2  # one conversation
MAX_EXPORT_FILE_BYTES = 4 * 1024**3  # one exported run (full_history runs hold their whole history per test point)
MAX_BENCHMARK_FILE_BYTES = 16 * 1024**3  # LongMemEval's _m file is 2.7 GB

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JSONFileError(EvalsError):
    """A file that cannot be read as the JSON we accept; ``where`` is the JSON path, or ""."""

    def __init__(self, file: str, where: str, reason: str) -> None:
        self.file, self.where, self.reason = file, where, reason
        super().__init__(f"{file}: {where}: {reason}" if where else f"{file}: {reason}")


_PLAIN_KEY = re.compile(r"[^\W\d]\w*")


def json_path(parts: tuple[int | str, ...] | list[int | str]) -> str:
    """``("turns", 3, "content")`` as ``turns[3].content``; a key that is not a plain name is
    written as a JSON string in brackets (``["a b"]``), escaped, so the path prints safely."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(str(part)) or not str(part).isascii():
            out += f"[{json.dumps(str(part))}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


def _check_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
        raise JSONFileError(name, "", f"not a regular file ({kind}); only regular files are read")


def read_bytes(path: str | os.PathLike[str], limit: int, name: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, refusing anything else and anything over ``limit`` bytes.

    The file is opened non-blocking, so one swapped for a FIFO after the check
    cannot hang the read, and checked again once open."""
    name = str(path) if name is None else name
    try:
        _check_regular(name, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise JSONFileError(name, "", f"cannot read file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        _check_regular(name, info.st_mode)
        if info.st_size > limit:
            raise JSONFileError(name, "", f"{info.st_size} bytes; files over {limit} bytes are not read")
        try:
            data = file.read(limit + 1)
        except OSError as exc:
            raise JSONFileError(name, "", f"cannot read file: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew since the check
        raise JSONFileError(name, "", f"more than {limit} bytes; files over {limit} bytes are not read")
    return data


class _Refused(Exception):
    """Raised inside the parser's hooks; turned into a JSONFileError by :func:`parse`."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"a number of {digits} digits; at most {MAX_INT_DIGITS} are read")
    return int(text)


def _parse_constant(text: str) -> float:
    raise _Refused(f"{text} is not a number JSON allows")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text[:40]} is too large a number")
    return value


def decode(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text, or a JSONFileError saying where it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONFileError(name, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def parse(data: bytes | str, name: str, *, share_strings: bool = False) -> Any:
    """Parse ``data`` (the text of the file ``name``) by the rules in the module docstring.

    ``share_strings``: equal string values become one object (benchmark files that repeat
    the same sessions in many questions hold each text once in memory, not once per copy)."""
    text = decode(data, name) if isinstance(data, bytes) else data
    # Objects that named a key twice, by id, with the key; the objects are kept alive so ids stay theirs.
    repeated: dict[int, tuple[dict, str]] = {}
    strings: dict[str, str] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if share_strings:
            pairs = [(key, strings.setdefault(value, value) if type(value) is str else value) for key, value in pairs]
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    repeated[id(obj)] = (obj, key)
                    break
                seen.add(key)
        return obj

    try:
        value = json.loads(
            text, object_pairs_hook=pairs_hook, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
        )
    except json.JSONDecodeError as exc:
        raise JSONFileError(name, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise JSONFileError(name, "", f"JSON nested more than {MAX_DEPTH} levels deep") from None
    except _Refused as exc:
        raise JSONFileError(name, "", str(exc)) from None
    except ValueError as exc:  # e.g. a float literal Python cannot convert
        raise JSONFileError(name, "", f"invalid JSON: {exc}") from None
    _check_depth(value, name)
    if repeated:
        first = _locate(value, lambda node: isinstance(node, dict) and id(node) in repeated)
        where, node = first if first is not None else ("", next(iter(repeated.values()))[0])
        raise JSONFileError(name, where, f"key {repeated[id(node)][1]!r} appears twice")
    if _SURROGATE_ESCAPE.search(text):  # rare: only then look for one that is not half of a pair
        found = _locate(value, lambda node: isinstance(node, str) and _SURROGATE.search(node) is not None, keys=True)
        if found is not None:
            where, node = found
            char = _SURROGATE.search(node).group()
            raise JSONFileError(name, where, f"holds a lone surrogate (\\u{ord(char):04x}), which is not a character")
    return value


def load(path: str | os.PathLike[str], limit: int, name: str | None = None) -> Any:
    """:func:`read_bytes` then :func:`parse`."""
    name = str(path) if name is None else name
    return parse(read_bytes(Path(path), limit, name), name)


def _check_depth(value: Any, name: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (the parser itself stops near 1,000).

    Level by level, with exact type checks: a corpus holds a hundred thousand
    turn objects, and a per-node generator took half a second of every load."""
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise JSONFileError(name, "", f"JSON nested more than {MAX_DEPTH} levels deep")
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        level = deeper


def _locate(value: Any, wanted, *, keys: bool = False) -> tuple[str, Any] | None:
    """The JSON path and node of the first node (in document order) for which ``wanted`` is true."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        node, parts = stack.pop()
        if wanted(node):
            return json_path(parts), node
        if isinstance(node, dict):
            if keys:
                for key in node:
                    if wanted(key):
                        return json_path((*parts, key)), key
            stack.extend((child, (*parts, key)) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((child, (*parts, index)) for index, child in reversed(list(enumerate(node))))
    return None
