"""Downloading one file into the downloads folder: all of it, checked, or nothing.

The bytes go to a temporary file beside the target while their SHA-256 is computed; the file is
renamed into place only when its size and digest match the pin. A 404, a refused redirect, a broken
connection, a short or long body, or a wrong digest removes the temporary file and any folder made
for it, so the downloads folder is left exactly as it was.

Where the bytes come from: the pinned URL, or, when ``$EVALS_MIRROR`` is set, only the mirror (a URL
or a local folder, for users with a copy or behind a proxy), which serves a data file by its published
file name and a repository file at ``OWNER/REPO/COMMIT/PATH``. The pins apply to a mirror all the
same. Plain ``urllib``: it honours ``$https_proxy`` and follows redirects, but never from https to http.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import http.client
import os
import secrets
import signal
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from evals import __version__
from evals.errors import EvalsError

__all__ = [
    "CHUNK",
    "DownloadError",
    "Pin",
    "default_deadline",
    "download",
    "exclusive",
    "file_digest",
    "made_dirs",
    "mirror_locations",
    "remove_made",
    "shown",
    "terminated_cleanly",
]

CHUNK = 1024 * 1024
TIMEOUT = 60.0  # seconds without a byte before the download is given up
MIRROR_ENV = "EVALS_MIRROR"
# The whole download's deadline, unless --download-deadline says otherwise: a base, plus the time the
# expected size takes at a slow but working rate. A mirror that drips a byte at a time never exceeds
# the gap between bytes (TIMEOUT), so only this ends it.
DEADLINE_BASE = 300.0  # seconds
DEADLINE_RATE = 256 * 1024  # bytes per second

Progress = Callable[[int, "int | None"], None]


class DownloadError(EvalsError):
    """A download that did not give the pinned bytes; nothing was kept."""


class _NotFound(DownloadError):
    """HTTP 404 or a missing file at a mirror: the next name may be tried."""


@dataclass(frozen=True)
class Pin:
    """What the bytes must be: ``sha256`` None is a first download (its digest is recorded, not checked)."""

    size: int | None
    sha256: str | None


def default_deadline(size: int) -> float:
    """Seconds a download of ``size`` bytes may take in all: :data:`DEADLINE_BASE` plus ``size`` at :data:`DEADLINE_RATE`."""
    return DEADLINE_BASE + size / DEADLINE_RATE


def shown(location: str) -> str:
    """``location`` as it may be printed: a URL's password and query values (tokens) replaced by ``***``."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() not in ("http", "https"):
        return location
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    pairs = parts.query.split("&") if parts.query else []
    query = "&".join(f"{pair.split('=', 1)[0]}=***" if "=" in pair else "***" for pair in pairs)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def mirror_locations(names: Sequence[str]) -> list[str] | None:
    """Where ``$EVALS_MIRROR`` serves a file known by ``names`` (relative paths), in the order tried;
    None when no mirror is set. A mirror is an http(s) URL (credentials and a query, such as a token,
    are kept: every file is asked with them), a file: URL or a local folder."""
    mirror = os.environ.get(MIRROR_ENV, "").strip()
    if not mirror:
        return None
    parts = urllib.parse.urlsplit(mirror)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        base = parts.path if parts.path.endswith("/") else parts.path + "/"
        at = [base + urllib.parse.quote(name) for name in names]
        return [urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")) for path in at]
    folder = Path(urllib.request.url2pathname(parts.path)) if scheme == "file" else Path(mirror)
    if not folder.is_dir():
        raise DownloadError(f"${MIRROR_ENV} is {shown(mirror)!r}: neither an http(s) URL nor an existing folder")
    return [str(folder / name) for name in names]


@contextlib.contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (an flock on the folder itself, so no file is left behind);
    another process asking for it waits until it is released."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise DownloadError(f"cannot lock {folder}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


class _Terminated(SystemExit):
    """SIGTERM, raised where the process is so that every cleanup (``except BaseException``) runs."""


@contextlib.contextmanager
def terminated_cleanly() -> Iterator[None]:
    """While inside, SIGTERM unwinds the stack as Ctrl-C does (partial files removed), then exits 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame) -> None:  # noqa: ANN001 (signal's signature)
        raise _Terminated(128 + signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def file_digest(path: Path) -> tuple[int, str]:
    """Size and SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as file:
        while chunk := file.read(CHUNK):
            size += len(chunk)
            digest.update(chunk)
    return size, digest.hexdigest()


def made_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return those created, deepest first (for :func:`remove_made`)."""
    missing = []
    for parent in [folder, *folder.parents]:
        if parent.exists():
            break
        missing.append(parent)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DownloadError(f"cannot create {folder}: {exc.strerror or exc}") from None
    return missing


def remove_made(folders: Sequence[Path]) -> None:
    """Remove the folders :func:`made_dirs` created, where they are still empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            break  # not empty: something else lives there now


class _NoDowngrade(urllib.request.HTTPRedirectHandler):
    """Follows redirects (the hub sends files to a CDN), except from https to anything else."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 (urllib's signature)
        if urllib.parse.urlsplit(req.full_url).scheme == "https" and urllib.parse.urlsplit(newurl).scheme != "https":
            raise DownloadError(f"{req.full_url}: redirected to {newurl}, which is not https; refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open_file(location: str) -> tuple[IO[bytes], int | None]:
    """A folder mirror's file: regular files only (a FIFO would block, a device never ends)."""
    try:
        fd = os.open(location, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _NotFound(f"{location}: no such file in the mirror") from None
    except OSError as exc:
        raise DownloadError(f"{location}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise DownloadError(f"{location}: not a regular file; a mirror folder holds the files themselves")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), info.st_size


def _open(location: str) -> tuple[IO[bytes], int | None]:
    """The body at ``location`` (a URL or a local path) and its announced length, if any."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() not in ("http", "https"):
        return _open_file(location)
    where = shown(location)
    headers = {"User-Agent": f"mneme-evals/{__version__}"}
    url = location
    if parts.username is not None or parts.password is not None:  # urllib would take them for the host name
        url = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, ""))
    request = urllib.request.Request(url, headers=headers)
    if parts.username is not None or parts.password is not None:
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        request.add_unredirected_header("Authorization", f"Basic {token}")  # never sent on to where a redirect points
    try:
        # Built per download, so the proxy settings ($https_proxy, $no_proxy) are read now, not at import.
        response = urllib.request.build_opener(_NoDowngrade).open(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        exc.close()
        error = _NotFound if exc.code == 404 else DownloadError
        reason = str(exc.reason).splitlines()[0] if exc.reason else ""  # urllib's redirect-loop reason runs on
        raise error(f"{shown(exc.url) if exc.url else where}: HTTP {exc.code} {reason}".rstrip()) from None
    except urllib.error.URLError as exc:
        raise DownloadError(f"{where}: cannot connect: {exc.reason}") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise DownloadError(f"{where}: {type(exc).__name__}") from None
    length = response.headers.get("Content-Length")
    return response, int(length) if length and length.isdigit() else None


def _chunks(body: IO[bytes], location: str, received: list[int], deadline: float, seconds: float) -> Iterator[bytes]:
    read = getattr(body, "read1", body.read)  # what has arrived, not a whole chunk's worth: the deadline is checked often
    try:
        while chunk := read(CHUNK):
            received[0] += len(chunk)
            if time.monotonic() > deadline:
                raise DownloadError(
                    f"{location}: the download did not finish within its deadline of {seconds:,.0f} seconds "
                    f"({received[0]} bytes received); --download-deadline sets another"
                )
            yield chunk
    except (OSError, http.client.HTTPException) as exc:  # IncompleteRead, a reset, a timeout
        raise DownloadError(f"{location}: the transfer broke after {received[0]} bytes ({type(exc).__name__})") from None


def download(
    locations: Sequence[str],
    target: Path,
    pin: Pin,
    *,
    limit: int,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> tuple[int, str, str]:
    """Download the first of ``locations`` that exists into ``target``, checked against ``pin``.

    Returns the size, the SHA-256 and the location the bytes came from (as it may be printed). Only a
    missing file (HTTP 404) moves on to the next location; any other failure ends the download. Never
    more than ``pin.size`` bytes (when pinned), else ``limit``, are read, and never for longer than
    ``deadline`` seconds (None: :func:`default_deadline` of the pinned, announced or limit size).
    """
    target = Path(target)
    if target.exists() and not target.is_file():
        raise DownloadError(f"{target}: not a regular file (a folder?); the download cannot be put there")
    created = made_dirs(target.parent)
    temporary = target.with_name(f".{target.name}.part-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        last: DownloadError | None = None
        for location in locations:
            try:
                body, length = _open(location)
            except _NotFound as exc:
                last = exc
                continue
            seconds = deadline if deadline is not None else default_deadline(pin.size or length or limit)
            with body:
                try:
                    return _write(body, length, shown(location), temporary, target, pin, limit, progress, seconds)
                except OSError as exc:  # a full disk, a file size limit, a folder that cannot be written
                    raise DownloadError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise last or DownloadError(f"{target.name}: nowhere to download it from")
    except BaseException:
        temporary.unlink(missing_ok=True)
        remove_made(created)
        raise


def _write(
    body: IO[bytes],
    length: int | None,
    location: str,
    temporary: Path,
    target: Path,
    pin: Pin,
    limit: int,
    progress: Progress | None,
    seconds: float,
) -> tuple[int, str, str]:
    expected = pin.size if pin.size is not None else length
    if pin.size is not None and length is not None and length != pin.size:
        raise DownloadError(f"{location}: serves {length} bytes; the pinned size of {target.name} is {pin.size}")
    cap = pin.size if pin.size is not None else limit
    digest = hashlib.sha256()
    received = [0]
    with open(temporary, "xb") as out:
        for chunk in _chunks(body, location, received, time.monotonic() + seconds, seconds):
            if received[0] > cap:
                what = (
                    f"the pinned size of {target.name} is {pin.size}"
                    if pin.size is not None
                    else f"over {limit} bytes are not read"
                )
                raise DownloadError(f"{location}: more than {cap} bytes; {what}")
            digest.update(chunk)
            out.write(chunk)
            if progress is not None:
                progress(received[0], expected)
        out.flush()
        os.fsync(out.fileno())
    size, sha256 = received[0], digest.hexdigest()
    if length is not None and size != length:
        raise DownloadError(f"{location}: truncated: {size} of the {length} bytes announced")
    if pin.size is not None and size != pin.size:
        raise DownloadError(f"{location}: truncated: {size} bytes; the pinned size of {target.name} is {pin.size}")
    if pin.sha256 is not None and sha256 != pin.sha256:
        raise DownloadError(f"{location}: SHA-256 {sha256} does not match the pinned {pin.sha256}; refused")
    os.replace(temporary, target)
    return size, sha256, location
