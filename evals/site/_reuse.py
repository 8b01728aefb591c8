"""Taking a unit's files from the earlier build into the new one, trusting nothing about the old site.

The old site is a folder anyone may have edited since it was built: a page
changed by hand, a folder replaced by a symbolic link to somewhere else, a
file swapped for a FIFO. So each file the manifest lists is reached from the
old site's folder one name at a time without following any symbolic link
(``O_NOFOLLOW`` at every step, relative to the folder above), hard-linked into
the new build as it is (the link itself is never followed either), and then
read back from the new build: it must be a regular file whose SHA-256 is the
one the manifest recorded. Anything else, and the unit is rendered again.
Nothing outside ``--out`` is read, linked or removed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = ["digest_of", "link_unit"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # non-blocking: a FIFO never hangs the open
# Where a hard link cannot be made (another file system, one without hard links), the file is copied.
_CANNOT_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP}


class _NotReused(Exception):
    """A file of the unit cannot be reused; the message says why, after its path."""


def digest_of(data: bytes) -> str:
    """The SHA-256 (hex) the manifest records for a file of ``data``."""
    return hashlib.sha256(data).hexdigest()


def link_unit(old: Path, building: Path, files: Mapping[str, str]) -> str:
    """Put the earlier build's ``files`` (path -> SHA-256) into ``building``, each checked as the module
    says. Returns "" when all are in; otherwise why the first failed, with none of them left behind."""
    made: list[Path] = []
    folders: list[Path] = []
    try:
        root = os.open(old, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return f"{old} cannot be read: {exc.strerror or exc}"
    try:
        for path, digest in sorted(files.items()):
            target = building / path
            try:
                _make_folders(building, target.parent, folders)
                _link(root, path, target)
                made.append(target)
                _check(target, digest)
            except _NotReused as exc:
                _undo(made, folders)
                return f"{path} {exc}"
            except OSError as exc:
                _undo(made, folders)
                return f"{path} cannot be reused: {exc.strerror or exc}"
    finally:
        os.close(root)
    return ""


def _link(root: int, path: str, target: Path) -> None:
    """Hard-link the old site's ``path`` (reached from ``root`` without following links) to ``target``."""
    *parts, name = path.split("/")
    opened: list[int] = []
    try:
        folder = root
        for part in parts:
            try:
                folder = os.open(part, _DIR_FLAGS, dir_fd=folder)
            except OSError as exc:
                raise _NotReused(_why(folder, part, exc, "a folder")) from None
            opened.append(folder)
        try:
            os.link(name, target, src_dir_fd=folder, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _CANNOT_LINK:
                raise _NotReused(_why(folder, name, exc, "a file")) from None
            _copy(folder, name, target)
    finally:
        for fd in opened:
            os.close(fd)


def _copy(folder: int, name: str, target: Path) -> None:
    source = _open_regular(name, folder)
    try:
        with os.fdopen(source, "rb") as reader, open(target, "xb") as writer:
            while chunk := reader.read(1 << 20):
                writer.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def _check(target: Path, digest: str) -> None:
    """What was linked is a regular file of the recorded content (read from the new build, so the
    file checked is the very one kept, whatever happens to the old site meanwhile)."""
    with os.fdopen(_open_regular(target), "rb") as file:
        if hashlib.file_digest(file, "sha256").hexdigest() != digest:
            raise _NotReused("changed since the last build wrote it")


def _open_regular(name: str | Path, folder: int | None = None) -> int:
    """``name`` (in ``folder``) opened for reading if it is a regular file, not a link; looked at before it
    is opened, since opening a device can act (a watchdog starts, a tape rewinds)."""
    try:
        before = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError as exc:
        raise _NotReused("is missing" if exc.errno == errno.ENOENT else f"cannot be reused: {exc.strerror or exc}") from None
    if stat.S_ISLNK(before.st_mode):
        raise _NotReused("is a symbolic link")
    if not stat.S_ISREG(before.st_mode):
        raise _NotReused("is not a regular file")
    fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):  # swapped between the look and the open
        os.close(fd)
        raise _NotReused("changed while it was read")
    return fd


def _why(folder: int, name: str, exc: OSError, expected: str) -> str:
    """Why ``name`` in ``folder`` could not be opened as ``expected``, in words."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "is missing"
    except OSError:
        return f"cannot be reused: {exc.strerror or exc}"
    if stat.S_ISLNK(mode):
        return "passes through a symbolic link" if expected == "a folder" else "is a symbolic link"
    if expected == "a file" and not stat.S_ISREG(mode):
        return "is not a regular file"
    if expected == "a folder" and not stat.S_ISDIR(mode):
        return "is missing"
    return f"cannot be reused: {exc.strerror or exc}"


def _make_folders(building: Path, folder: Path, made: list[Path]) -> None:
    """Create ``folder`` (inside ``building``) and any missing above it, noting each one made."""
    missing = []
    while folder != building and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def _undo(files: list[Path], folders: list[Path]) -> None:
    """Remove what a unit that cannot be reused had put into the build, so it is rendered on a clean slate."""
    for path in files:
        path.unlink(missing_ok=True)
    for path in reversed(folders):
        try:
            path.rmdir()
        except OSError:
            pass  # another unit's files are in it too
