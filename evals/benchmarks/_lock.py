"""The lock file: the size and SHA-256 of every benchmark file whose host publishes no digest, recorded
at its first download (trust on first use) and held to at every later one.

It lives in the repository (default ``benchmarks.lock`` in the current folder; ``--lock`` or
``$EVALS_BENCHMARKS_LOCK``) so that it is committed: then two users' "LongMemEval_s" are the same
bytes, or the second fetch fails. Entries are keyed by the pinned URL, so a registry that moves a
benchmark to a new revision starts a new entry rather than failing on the old one. The file is JSON,
rewritten whole through a temporary file and a rename, under an exclusive lock on its folder: an entry
is added to the file as it is then (read again under the lock), so two fetches at once both keep theirs.
A lock file that is a symlink is written through: the link stays, its target gets the entry.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

from evals.errors import EvalsError
from evals.io import jsonfile

__all__ = ["DEFAULT_LOCK", "Lock", "LockEntry", "LockError"]

DEFAULT_LOCK = Path("benchmarks.lock")
MAX_LOCK_BYTES = 4 * 1024**2
_SHA256 = re.compile(r"[0-9a-f]{64}")
ABOUT = (
    "Sizes and SHA-256 digests of benchmark files published without a digest, recorded by `evals fetch` "
    "at their first download (trust on first use). Commit this file: every later fetch must match it."
)


class LockError(EvalsError):
    """The lock file cannot be read or written."""


@dataclass(frozen=True)
class LockEntry:
    benchmark: str
    file: str  # the published file name
    size: int
    sha256: str
    recorded: str  # UTC time of the first download, ISO 8601
    downloaded_from: str  # where those bytes came from: the URL, or a mirror's location


class Lock:
    def __init__(self, path: Path, entries: dict[str, LockEntry]) -> None:
        self.path = path
        self.entries = entries

    @classmethod
    def read(cls, path: Path) -> Lock:
        """The lock at ``path``; an empty one when the file does not exist yet."""
        path = Path(path)
        if not path.exists():
            return cls(path, {})
        data = jsonfile.load(path, MAX_LOCK_BYTES)
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            raise LockError(f'{path}: not a benchmarks lock file (expected an object with "files")')
        entries = {}
        for url, entry in data["files"].items():
            where = f"{path}: files[{url!r}]"
            if not isinstance(entry, dict):
                raise LockError(f"{where}: expected an object")
            try:
                found = LockEntry(**{key: entry[key] for key in LockEntry.__dataclass_fields__})
            except KeyError as exc:
                raise LockError(f"{where}: {exc.args[0]} is missing") from None
            if not isinstance(found.size, int) or isinstance(found.size, bool) or found.size < 0:
                raise LockError(f"{where}.size: expected a whole number of bytes")
            if not isinstance(found.sha256, str) or not _SHA256.fullmatch(found.sha256):
                raise LockError(f"{where}.sha256: expected 64 lower-case hex digits")
            for name in ("benchmark", "file", "recorded", "downloaded_from"):
                if not isinstance(getattr(found, name), str):
                    raise LockError(f"{where}.{name}: expected a string")
            entries[url] = found
        return cls(path, entries)

    def get(self, url: str) -> LockEntry | None:
        return self.entries.get(url)

    def record(self, url: str, entry: LockEntry) -> None:
        """Add ``entry`` to the file as it is now and write it whole (temporary file, then rename: a crash
        leaves the old one), under an exclusive lock on its folder. The same URL recorded meanwhile with
        other bytes is a LockError."""
        from evals.benchmarks._download import DownloadError, exclusive

        real = Path(os.path.realpath(self.path))  # a symlink is written through, never replaced
        try:
            with exclusive(real.parent):
                current = Lock.read(real).entries
                held = current.get(url)
                if held is not None and (held.size, held.sha256) != (entry.size, entry.sha256):
                    raise LockError(
                        f"{self.path}: {entry.file} was recorded meanwhile with another size or SHA-256 "
                        f"({held.size} bytes, {held.sha256}); fetch it again"
                    )
                current[url] = held or entry
                self._write(real, current)
        except DownloadError as exc:
            raise LockError(f"cannot write the lock file {self.path}: {exc}") from None
        self.entries = current

    def _write(self, real: Path, entries: dict[str, LockEntry]) -> None:
        document = {"about": ABOUT, "files": {key: asdict(value) for key, value in sorted(entries.items())}}
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        temporary = real.with_name(f".{real.name}.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, real)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise LockError(f"cannot write the lock file {self.path}: {exc.strerror or exc}") from None
