"""What was checked before: a note per input that passed a strict check, so the same bytes are not
checked again by the same code.

A note is a small file named after a key (a sha256 the caller makes of the exact bytes it checked
and of the checking code), holding one line of text (the result worth keeping: a corpus's content
digest). Notes live in ``$EVALS_CHECKED`` if set, else in a folder of this user's own in the
system's temporary folder (``mneme-evals-UID/checked``: a run writes nothing in $HOME), trusted
only while this user owns it and nobody else may write to it. ``EVALS_CHECKED=off`` keeps none.
A note that cannot be written is not kept (it only saves time), and one that cannot be read, or
does not hold one short line, is not a note: the input is checked in full.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

__all__ = ["CHECKED_ENV", "checked_folder", "recall", "remember"]

CHECKED_ENV = "EVALS_CHECKED"
_KEY = re.compile(r"[0-9a-f]{64}")
_VALUE = re.compile(r"[0-9a-f]{64}")


def checked_folder() -> Path | None:
    """Where the notes are kept (None: ``EVALS_CHECKED=off``)."""
    given = os.environ.get(CHECKED_ENV, "")
    if given == "off":
        return None
    if given:
        return Path(given)
    user = f"-{os.getuid()}" if hasattr(os, "getuid") else ""
    return Path(tempfile.gettempdir()) / f"mneme-evals{user}" / "checked"


def _own(folder: Path) -> bool:
    """Whether ``folder`` (and, in the temporary folder, the one above it) is this user's and writable
    by nobody else: in a shared temporary folder, another user's note could otherwise name a wrong digest."""
    if not hasattr(os, "getuid"):
        return True
    given = bool(os.environ.get(CHECKED_ENV))
    for path in (folder,) if given else (folder.parent, folder):
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return False
    return True


def recall(key: str) -> str | None:
    """The value noted for ``key``, or None (never noted, or no longer readable)."""
    folder = checked_folder()
    if folder is None or not _KEY.fullmatch(key) or not _own(folder):
        return None
    try:
        with open(folder / key, "rb") as note:
            text = note.read(200).decode("ascii").strip()
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return text if _VALUE.fullmatch(text) else None


def remember(key: str, value: str) -> None:
    """Note ``value`` for ``key``, whole or not at all; silently nothing where it cannot be written."""
    folder = checked_folder()
    if folder is None or not _KEY.fullmatch(key) or not _VALUE.fullmatch(value):
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _own(folder):
            return
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".note-")
        try:
            with os.fdopen(handle, "w", encoding="ascii") as out:
                out.write(value + "\n")
            os.replace(temporary, folder / key)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        pass
