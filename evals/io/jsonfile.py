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
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

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
    "ArrayReader",
    "load",
    "open_regular",
    "out_of_memory",
    "parse",
    "read_bytes",
    "strict_json",
]

MAX_DEPTH = 64  # the formats need about 6; strategy settings get the rest
MAX_INT_DIGITS = 20  # any 64-bit integer, with its sign
# Size limits, per file. Regular files only, so a size is known before reading.
MAX_CORPUS_FILE_BYTES = 512 * 1024**2  # one conversation
MAX_EXPORT_FILE_BYTES = 4 * 1024**3  # one exported run (full_history runs hold their whole history per test point)
MAX_BENCHMARK_FILE_BYTES = 16 * 1024**3  # LongMemEval's _m file is 2.7 GB (read a question at a time: ArrayReader)
READ_CHUNK = 1 << 20  # bytes per read when a file is read in pieces
SMALL = 1 << 16  # a file read whole below this many bytes is returned as bytes, above as a bytearray (no copy)

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


def open_regular(path: str | os.PathLike[str], limit: int, name: str | None = None) -> BinaryIO:
    """The regular file ``path``, opened for reading (binary, unbuffered), refusing anything else
    and anything over ``limit`` bytes.

    The file is opened non-blocking, so one swapped for a FIFO after the check
    cannot hang the read, and checked again once open."""
    name = str(path) if name is None else name
    try:
        _check_regular(name, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise JSONFileError(name, "", f"cannot read file: {exc.strerror or exc}") from None
    file = os.fdopen(fd, "rb", buffering=0)
    try:
        info = os.fstat(file.fileno())
        _check_regular(name, info.st_mode)
        if info.st_size > limit:
            raise JSONFileError(name, "", f"{info.st_size} bytes; files over {limit} bytes are not read")
    except BaseException:
        file.close()
        raise
    return file


def read_bytes(path: str | os.PathLike[str], limit: int, name: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, refusing anything else and anything over ``limit`` bytes.

    Reads what the file holds, into one buffer of its size: never asks for the limit itself
    (``read(limit + 1)`` makes Python reserve the whole limit before reading a byte)."""
    name = str(path) if name is None else name
    with open_regular(path, limit, name) as file:
        size = os.fstat(file.fileno()).st_size
        try:
            data = bytearray(size)
            view = memoryview(data)
            got = 0
            while got < size:
                count = file.readinto(view[got:])
                if not count:  # it shrank since the check
                    break
                got += count
            view.release()
            del data[got:]
            while True:  # it grew since the check: read on, a bounded chunk at a time
                more = file.read(min(READ_CHUNK, limit + 1 - len(data)))
                if not more:
                    break
                data += more
                if len(data) > limit:
                    raise JSONFileError(name, "", f"more than {limit} bytes; files over {limit} bytes are not read")
        except OSError as exc:
            raise JSONFileError(name, "", f"cannot read file: {exc.strerror or exc}") from None
        except MemoryError:
            raise JSONFileError(name, "", out_of_memory(f"reading its {size} bytes")) from None
    return bytes(data) if len(data) < SMALL else data  # type: ignore[return-value] - a bytearray reads as bytes


def out_of_memory(doing: str) -> str:
    """The one-line reason for a MemoryError (a ``ulimit -v`` or a container limit) while ``doing``."""
    return f"out of memory while {doing}; raise the memory limit (ulimit -v) or give a smaller file"


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
    except MemoryError:
        raise JSONFileError(name, "", out_of_memory("decoding it")) from None


def parse(
    data: bytes | bytearray | str,
    name: str,
    *,
    share_strings: bool = False,
    within: tuple[int | str, ...] = (),
    at: tuple[int, int] = (1, 1),
) -> Any:
    """Parse ``data`` (the text of the file ``name``) by the rules in the module docstring.

    ``share_strings``: equal string values become one object (benchmark files that repeat
    the same sessions in many questions hold each text once in memory, not once per copy).
    ``within`` and ``at``: for a piece of a file (one element of a top-level array, see
    :class:`ArrayReader`), the JSON path of the piece and the line and column where it starts,
    so that every problem is located in the whole file as a whole-file parse would locate it."""
    text = decode(data, name) if isinstance(data, bytes | bytearray) else data
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
        line, column = exc.lineno + at[0] - 1, exc.colno + (at[1] - 1 if exc.lineno == 1 else 0)
        raise JSONFileError(name, "", f"invalid JSON at line {line}, column {column}: {exc.msg}") from None
    except RecursionError:
        raise JSONFileError(name, "", f"JSON nested more than {MAX_DEPTH} levels deep") from None
    except MemoryError:
        raise JSONFileError(name, json_path(within), out_of_memory("parsing it")) from None
    except _Refused as exc:
        raise JSONFileError(name, "", str(exc)) from None
    except ValueError as exc:  # e.g. a float literal Python cannot convert
        raise JSONFileError(name, "", f"invalid JSON: {exc}") from None
    _check_depth(value, name, len(within))
    if repeated:
        first = _locate(value, lambda node: isinstance(node, dict) and id(node) in repeated, within=within)
        where, node = first if first is not None else (json_path(within), next(iter(repeated.values()))[0])
        raise JSONFileError(name, where, f"key {repeated[id(node)][1]!r} appears twice")
    if _SURROGATE_ESCAPE.search(text):  # rare: only then look for one that is not half of a pair
        found = _locate(
            value, lambda node: isinstance(node, str) and _SURROGATE.search(node) is not None, keys=True, within=within
        )
        if found is not None:
            where, node = found
            char = _SURROGATE.search(node).group()
            raise JSONFileError(name, where, f"holds a lone surrogate (\\u{ord(char):04x}), which is not a character")
    return value


def load(path: str | os.PathLike[str], limit: int, name: str | None = None) -> Any:
    """:func:`read_bytes` then :func:`parse`."""
    name = str(path) if name is None else name
    return parse(read_bytes(Path(path), limit, name), name)


def _check_depth(value: Any, name: str, outer: int = 0) -> None:
    """Refuse nesting deeper than MAX_DEPTH (the parser itself stops near 1,000); ``outer``: levels
    around ``value`` in its file (1 for an element of the top-level array).

    Level by level, with exact type checks: a corpus holds a hundred thousand
    turn objects, and a per-node generator took half a second of every load."""
    level = [value] if type(value) in (dict, list) else []
    depth = outer
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


def _locate(value: Any, wanted, *, keys: bool = False, within: tuple[int | str, ...] = ()) -> tuple[str, Any] | None:
    """The JSON path and node of the first node (in document order) for which ``wanted`` is true;
    ``within``: the path of ``value`` itself."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, within)]
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


# -- a top-level array, one element at a time ----------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, exactly
_BRACKET_OR_QUOTE = re.compile(r'[\[\]{}"]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # after the opening quote, to the closing one
# What the standard parser reads as a number or a constant (its NUMBER_RE, and the names it knows).
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|Infinity|-Infinity")


class ArrayReader:
    """A JSON file whose top level is an array, read and parsed one element at a time.

    A benchmark file is gigabytes of questions; parsed whole, it is held as bytes, as text and as
    Python objects at once, and one non-ASCII character makes the whole text four bytes a
    character. Here the file is read in pieces, decoded incrementally, and each element's text is
    cut out (by its brackets, strings skipped) and parsed by :func:`parse`, so the rules and the
    messages are a whole-file parse's: paths start ``[N]``, lines and columns count from the top
    of the file, at most ``limit`` bytes are read. Memory is one element (and a piece) at a time.

    ``is_array`` says whether the file starts with ``[``; if not, :meth:`whole` parses it whole
    (bounded), as :func:`load` would."""

    def __init__(self, file: BinaryIO, name: str, limit: int, *, chunk: int = READ_CHUNK) -> None:
        import codecs

        self.file, self.name, self.limit, self.chunk = file, name, limit, chunk
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._read = 0  # bytes read
        self._eof = False
        self._text = ""  # decoded, not yet consumed text starts at self._text[0]
        self._line, self._column = 1, 1  # where self._text[0] is in the file
        self._skip_space(0)
        self.is_array = self._text[:1] == "["

    @classmethod
    def open(cls, path: str | os.PathLike[str], limit: int, name: str | None = None) -> ArrayReader:
        """The regular file ``path`` (see :func:`open_regular`); close it with :meth:`close`."""
        name = str(path) if name is None else name
        file = open_regular(path, limit, name)
        try:
            return cls(file, name, limit)
        except BaseException:
            file.close()
            raise

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> ArrayReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self, at_least: int = 0) -> bool:
        """Read and decode the next piece (at least ``at_least`` bytes, so that a long element is read
        in doubling pieces, not rescanned once per piece); False at the end of the file."""
        if self._eof:
            return False
        want = max(self.chunk, at_least)
        try:
            data = self.file.read(min(want, self.limit + 1 - self._read))
        except OSError as exc:
            raise JSONFileError(self.name, "", f"cannot read file: {exc.strerror or exc}") from None
        self._read += len(data)
        if self._read > self.limit:
            raise JSONFileError(self.name, "", f"more than {self.limit} bytes; files over {self.limit} bytes are not read")
        self._eof = not data
        pending = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(data, final=self._eof)
        except UnicodeDecodeError as exc:
            where = self._read - len(data) - pending + exc.start
            raise JSONFileError(self.name, "", f"not UTF-8 text ({exc.reason} at byte {where})") from None
        self._text += text
        return not self._eof or bool(text)

    def _consume(self, count: int) -> None:
        """Drop the first ``count`` characters, keeping track of the line and column after them."""
        newlines = self._text.count("\n", 0, count)
        if newlines:
            self._line += newlines
            self._column = count - self._text.rfind("\n", 0, count)
        else:
            self._column += count
        self._text = self._text[count:]

    def _skip_space(self, start: int) -> int:
        """Consume the text before ``start`` and the whitespace after it; return 0 (the new position)."""
        self._consume(start)
        while True:
            end = _SPACE.match(self._text).end()
            self._consume(end)
            if self._text or not self._fill():
                return 0

    def _fail(self, position: int, message: str) -> JSONFileError:
        """An invalid-JSON error at ``position`` of the unconsumed text, as a whole-file parse words it."""
        newlines = self._text.count("\n", 0, position)
        line = self._line + newlines
        column = position - self._text.rfind("\n", 0, position) if newlines else self._column + position
        return JSONFileError(self.name, "", f"invalid JSON at line {line}, column {column}: {message}")

    def _value_end(self) -> int | None:
        """The end of the JSON value that starts the unconsumed text (reading on as needed); None
        when the file ends first (the parser then says what is wrong)."""
        text_start = self._text[:1]
        if text_start == '"':
            return self._string_end(1)
        if text_start not in ("{", "["):
            while len(self._text) < 16 and self._fill():  # room for any constant's name
                pass
            while True:
                found = _SCALAR.match(self._text)
                end = found.end() if found is not None else 0
                if end < len(self._text) or not self._fill(len(self._text)):
                    return end
        depth, position = 0, 0
        while True:
            found = _BRACKET_OR_QUOTE.search(self._text, position)
            if found is None:
                position = len(self._text)
                if not self._fill(len(self._text)):
                    return None
                continue
            mark, position = found.group(), found.end()
            if mark == '"':
                position = self._string_end(position)
                if position is None:
                    return None
            elif mark in "{[":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return position

    def _string_end(self, start: int) -> int | None:
        """The position after the closing quote of the string whose text starts at ``start``."""
        while True:
            found = _STRING_REST.match(self._text, start)
            if found is not None:
                return found.end()
            if not self._fill(len(self._text)):
                return None

    def elements(self, *, share_strings: bool = False) -> Iterator[Any]:
        """Each element of the array, parsed, in order; then the end of the file is checked."""
        try:
            yield from self._elements(share_strings)
        except MemoryError:
            raise JSONFileError(self.name, "", out_of_memory("reading it")) from None

    def _elements(self, share_strings: bool) -> Iterator[Any]:
        if not self.is_array:
            raise ValueError("not an array; use whole()")
        position = self._skip_space(1)
        if self._text[:1] == "]":
            return self._finish(1)
        index = 0
        while True:
            if not self._text:
                raise self._fail(0, "Expecting value")
            end = self._value_end()
            if end is None:  # the file ended inside it: let the parser say where and why
                end = len(self._text)
            yield parse(self._text[:end], self.name, share_strings=share_strings, within=(index,), at=(self._line, self._column))
            index += 1
            position = self._skip_space(end)
            mark = self._text[:1]
            if mark == "]":
                return self._finish(1)
            if mark != ",":
                raise self._fail(position, "Expecting ',' delimiter")
            position = self._skip_space(1)
            if self._text[:1] == "]":
                raise self._fail(position, "Expecting value")

    def _finish(self, after: int) -> None:
        self._skip_space(after)
        if self._text:
            raise self._fail(0, "Extra data")

    def whole(self, *, share_strings: bool = False) -> Any:
        """The file parsed whole (it is not an array)."""
        try:
            return self._whole(share_strings)
        except MemoryError:
            raise JSONFileError(self.name, "", out_of_memory("reading it")) from None

    def _whole(self, share_strings: bool) -> Any:
        pieces = [self._text]
        self._text = ""
        while self._fill(max(self.chunk, self._read // 2)):  # doubling pieces, joined once
            pieces.append(self._text)
            self._text = ""
        text = "".join(pieces)
        del pieces
        return parse(text, self.name, share_strings=share_strings, at=(self._line, self._column))


def strict_json(text: str, what: str) -> Any:
    """``text`` parsed as JSON we accept from a server (:func:`parse`: no key twice,
    no lone surrogate, no NaN, bounded depth and digits); ValueError saying what is wrong."""
    try:
        return parse(text, what)
    except JSONFileError as exc:
        if "nested more than" in exc.reason:
            raise ValueError(f"{what} is JSON nested too deeply ({exc.reason})") from None
        if exc.reason.startswith("invalid JSON"):
            raise ValueError(f"{what} is not JSON ({exc.reason.removeprefix('invalid JSON').lstrip(': ')})") from None
        raise ValueError(f"{what}: {exc.where + ': ' if exc.where else ''}{exc.reason}") from None
