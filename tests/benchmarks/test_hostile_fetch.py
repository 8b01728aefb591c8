"""`evals fetch`, its mirror and its lock: nothing lost, nothing hangs, nothing leaks.

Each test is named for what must hold. The mirrors are real HTTP
servers on 127.0.0.1 (or local folders); stand-in files cannot have the published digests, so each test
pins the stand-in's sources in the registry entry it fetches, as tests/benchmarks/test_benchmarks.py does. A
command that could hang runs in a subprocess with a timeout, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from evals.benchmarks import BENCHMARKS
from evals.cli import cli

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
LOCOMO = (FIXTURES / "locomo_small.json").read_bytes()
LONGMEMEVAL = (FIXTURES / "longmemeval_small.json").read_bytes()
STAND_IN = b"# stand-in\n"
HTML = b"<html><body>Not Found</body></html>\n\n\n"  # 38 bytes, as a captive portal sends


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Mirror:
    """A mirror on 127.0.0.1: ``files`` by path (the query stripped); ``handle`` may answer a request itself."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []  # (path with query, Authorization header)
        self.handle: Callable[[BaseHTTPRequestHandler], bool] | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                owner.requests.append((self.path, self.headers.get("Authorization")))
                if owner.handle is not None and owner.handle(self):
                    return
                body = owner.files.get(self.path.lstrip("/").split("?", 1)[0])
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    running = Mirror()
    yield running
    running.close()


def stand_in_sources(monkeypatch, mirror: Mirror, name: str) -> None:
    """Benchmark ``name``'s evaluation sources pinned to a stand-in, and served by ``mirror``."""
    entry = BENCHMARKS[name]
    sources = tuple(replace(s, sha256=sha(STAND_IN)) for s in entry.sources)
    monkeypatch.setitem(BENCHMARKS, name, replace(entry, sources=sources))
    mirror.files.update({s.relative: STAND_IN for s in sources})


@pytest.fixture
def oracle(monkeypatch, mirror) -> Mirror:
    stand_in_sources(monkeypatch, mirror, "longmemeval_oracle")
    mirror.files["longmemeval_oracle.json"] = LONGMEMEVAL
    return mirror


@pytest.fixture
def locomo(monkeypatch, mirror) -> Mirror:
    """LoCoMo pinned to the stand-in file (size and digest), its sources to stand-ins, all served."""
    stand_in_sources(monkeypatch, mirror, "locomo")
    entry = BENCHMARKS["locomo"]
    monkeypatch.setitem(BENCHMARKS, "locomo", replace(entry, data=replace(entry.data, sha256=sha(LOCOMO), size=len(LOCOMO))))
    mirror.files["locomo10.json"] = LOCOMO
    return mirror


def evals(*args: object, mirror: str | None = None):
    extra = {"EVALS_MIRROR": mirror} if mirror is not None else {}
    return CliRunner().invoke(cli, [str(a) for a in args], env=extra)


def one_line_error(result) -> str:
    """The ``Error: …`` line of a refused command, checked to be a one-line error and not a traceback."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    return errors[0]


def evals_process(*args: object, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """The real `evals` in a process of its own (for hangs and signals)."""
    return subprocess.Popen(
        [sys.executable, "-c", "from evals.cli import cli; cli()", *map(str, args)],
        cwd=cwd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, str | None]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): (sha(p.read_bytes()) if p.is_file() else None) for p in sorted(folder.rglob("*"))}


# -- data loss -------------------------------------------------------------------------------------------------


def test_a_failed_first_fetch_records_nothing_in_the_lock(oracle, env):
    """A first download that fails its import (an HTML page for the JSON) leaves no lock entry, so a right mirror later works."""
    html = Mirror()
    try:
        html.handle = lambda request: _send(request, HTML)
        result = evals("fetch", "longmemeval_oracle", mirror=html.url)
    finally:
        html.close()
    assert "JSON" in one_line_error(result)
    assert not env["lock"].exists()
    fresh = env["downloads"].parent / "fresh"
    again = evals("fetch", "longmemeval_oracle", "--downloads", fresh, mirror=oracle.url)
    assert again.exit_code == 0, again.output
    assert sha(LONGMEMEVAL) in env["lock"].read_text()


def _send(request: BaseHTTPRequestHandler, body: bytes) -> bool:
    request.send_response(200)
    request.send_header("Content-Type", "text/html")
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)
    return True


def test_a_failed_first_fetch_keeps_no_unchecked_copy(oracle, env):
    """The HTML page a first fetch could not import is not kept in the downloads folder either."""
    html = Mirror()
    try:
        html.handle = lambda request: _send(request, HTML)
        one_line_error(evals("fetch", "longmemeval_oracle", mirror=html.url))
    finally:
        html.close()
    assert snapshot(env["downloads"]) == {}


def test_concurrent_fetches_both_keep_their_lock_entries(monkeypatch, oracle, env):
    """A fetch that records its entry while another is downloading (between its read and its write) is not lost."""
    stand_in_sources(monkeypatch, oracle, "longmemeval_s")
    oracle.files["longmemeval_s"] = LONGMEMEVAL
    from evals.benchmarks import _fetch

    real = _fetch.download
    nested: list[object] = []

    def download_while_another_fetch_finishes(*args, **kwargs):
        if not nested:
            nested.append("started")
            nested.append(_fetch.fetch("longmemeval_s", downloads=env["downloads"], lock_path=env["lock"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(_fetch, "download", download_while_another_fetch_finishes)
    monkeypatch.setenv("EVALS_MIRROR", oracle.url)
    _fetch.fetch("longmemeval_oracle", downloads=env["downloads"], lock_path=env["lock"])
    files = json.loads(env["lock"].read_text())["files"]
    assert {BENCHMARKS["longmemeval_oracle"].data.url, BENCHMARKS["longmemeval_s"].data.url} <= set(files)


def test_a_symlinked_lock_stays_a_symlink_and_its_target_gets_the_entry(oracle, env, tmp_path):
    """--lock naming a symlink writes through it: the link is kept and the file it points to holds the entry."""
    real = tmp_path / "shared" / "benchmarks.lock"
    real.parent.mkdir()
    real.write_text(json.dumps({"about": "x", "files": {}}))
    link = env["lock"]
    link.symlink_to(real)
    result = evals("fetch", "longmemeval_oracle", mirror=oracle.url)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sha(LONGMEMEVAL) in real.read_text()


# -- hangs ---------------------------------------------------------------------------------------------------


def test_a_fifo_in_a_folder_mirror_is_refused_not_waited_on(env, tmp_path):
    """A FIFO where a folder mirror's file should be is refused in one line; fetch does not block on it."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    os.mkfifo(folder / "locomo10.json")
    process = evals_process("fetch", "locomo", env={"EVALS_MIRROR": str(folder)}, cwd=tmp_path)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("fetch blocked on a FIFO in the mirror")
    assert process.returncode == 1 and "not a regular file" in err and "Traceback" not in err, err
    assert not env["downloads"].exists()


def _drip(body: bytes, every: float) -> Callable[[BaseHTTPRequestHandler], bool]:
    def handle(request: BaseHTTPRequestHandler) -> bool:
        request.send_response(200)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        try:
            for byte in body:
                request.wfile.write(bytes([byte]))
                request.wfile.flush()
                time.sleep(every)
        except OSError:
            pass
        return True

    return handle


def test_a_dripping_download_stops_at_the_deadline(locomo, env):
    """A mirror sending a byte at a time, never pausing long, is given up at --download-deadline, leaving nothing."""
    locomo.handle = _drip(LOCOMO, 0.05)
    result = evals("fetch", "locomo", "--download-deadline", "1", mirror=locomo.url)
    assert "deadline" in one_line_error(result)
    assert snapshot(env["downloads"]) == {}


def test_the_default_deadline_grows_with_the_pinned_size():
    """Without --download-deadline, a bigger pinned file is allowed longer, and every download has a limit."""
    from evals.benchmarks import default_deadline

    assert 0 < default_deadline(1_000) < default_deadline(3 * 10**9) < float("inf")


# -- tracebacks ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("recorded", [5, None])
@pytest.mark.parametrize("command", [["benchmarks"], ["fetch", "longmemeval_oracle"]])
def test_a_lock_entry_of_the_wrong_type_is_one_line(env, recorded, command):
    """A lock entry whose "recorded" is not a string is refused in one line naming the file and the field."""
    url = BENCHMARKS["longmemeval_oracle"].data.url
    entry = {"benchmark": "longmemeval_oracle", "file": "longmemeval_oracle.json", "size": 1, "sha256": "0" * 64,
             "recorded": recorded, "downloaded_from": url}  # fmt: skip
    env["lock"].write_text(json.dumps({"about": "", "files": {url: entry}}))
    line = one_line_error(evals(*command))
    assert str(env["lock"]) in line and "recorded" in line


def test_build_site_with_a_lock_entry_of_the_wrong_type_is_one_line(env, tmp_path):
    """build-site --lock with an entry whose "recorded" is 5 is refused in one line naming the file and the field."""
    url = BENCHMARKS["longmemeval_oracle"].data.url
    entry = {"benchmark": "longmemeval_oracle", "file": "longmemeval_oracle.json", "size": 1, "sha256": "0" * 64,
             "recorded": 5, "downloaded_from": url}  # fmt: skip
    env["lock"].write_text(json.dumps({"about": "", "files": {url: entry}}))
    store = tmp_path / "s.duckdb"
    corpus = ROOT / "tests" / "fixtures" / "corpus_small"
    assert evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store, "--repo", tmp_path).exit_code == 0
    line = one_line_error(evals("build-site", "--store", store, "--out", tmp_path / "site", "--lock", env["lock"]))
    assert str(env["lock"]) in line and "recorded" in line
    assert not (tmp_path / "site").exists()


def test_a_folder_where_the_download_goes_is_one_line(locomo, env):
    """DL/locomo/locomo10.json being a folder: refused in one line naming it, nothing downloaded."""
    (env["downloads"] / "locomo" / "locomo10.json").mkdir(parents=True)
    before = snapshot(env["downloads"])
    line = one_line_error(evals("fetch", "locomo", mirror=locomo.url))
    assert "locomo10.json" in line
    assert snapshot(env["downloads"]) == before


def test_a_full_disk_under_downloads_is_one_line(locomo, env, tmp_path):
    """A write that fails (here: a file size limit, as a full disk does) is one line, and leaves nothing behind."""
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000)); "
        "from evals.cli import cli; sys.argv = ['evals', 'fetch', 'locomo']; cli()"
    )
    # The pins of the stand-in are the test's own, so the child is given them through a sitecustomize-free shim.
    shim = tmp_path / "shim.py"
    shim.write_text(
        "import hashlib\nfrom dataclasses import replace\nfrom evals.benchmarks import BENCHMARKS\n"
        f"data = open({str(FIXTURES / 'locomo_small.json')!r}, 'rb').read()\n"
        "e = BENCHMARKS['locomo']\n"
        "BENCHMARKS['locomo'] = replace(e, data=replace(e.data, sha256=hashlib.sha256(data).hexdigest(), size=len(data)))\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", f"exec(open({str(shim)!r}).read()); " + script],
        cwd=tmp_path, env={**os.environ, "EVALS_MIRROR": locomo.url}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert process.returncode == 1, process.stderr
    assert "Traceback" not in process.stderr and process.stderr.count("Error: ") == 1, process.stderr
    assert snapshot(env["downloads"]) == {}


def test_two_fetches_into_one_downloads_folder_both_succeed(monkeypatch, locomo, env):
    """A second fetch that arrives while the first is importing waits for it and reuses its corpus."""
    from evals.benchmarks import _fetch

    real = _fetch.import_corpus
    second: list[BaseException | object] = []

    def fetch_again() -> None:
        try:
            second.append(_fetch.fetch("locomo", downloads=env["downloads"], lock_path=env["lock"]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            second.append(exc)

    def import_while_another_fetches(importer, file, out, release=None):
        report = real(importer, file, out, release=release)
        if not second:
            other = threading.Thread(target=fetch_again)
            other.start()
            other.join(timeout=5)  # it finishes (the bug), or waits for this import to end
        return report

    monkeypatch.setattr(_fetch, "import_corpus", import_while_another_fetches)
    monkeypatch.setenv("EVALS_MIRROR", locomo.url)
    first = _fetch.fetch("locomo", downloads=env["downloads"], lock_path=env["lock"])
    for _ in range(100):
        if second:
            break
        time.sleep(0.1)
    assert first.report is not None
    assert second and not isinstance(second[0], BaseException), second
    assert second[0].corpus == first.corpus and second[0].report is None


def test_corpus_out_a_symlink_to_an_empty_folder_is_imported_into(locomo, env, tmp_path):
    """--corpus-out naming a symlink to an empty folder imports into that folder; the link stays."""
    target = tmp_path / "empty"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    result = evals("fetch", "locomo", "--corpus-out", link, mirror=locomo.url)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and any(p.suffix == ".json" for p in target.iterdir())


# -- leaks ------------------------------------------------------------------------------------------------------


def _needs_basic_auth(user: str, password: str) -> Callable[[BaseHTTPRequestHandler], bool]:
    wanted = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def handle(request: BaseHTTPRequestHandler) -> bool:
        if request.headers.get("Authorization") != wanted:
            request.send_error(401)
            return True
        return False

    return handle


def test_a_mirror_with_credentials_works_and_never_prints_them(locomo, env):
    """EVALS_MIRROR=http://user:PASS@host/ authenticates with basic auth; the password is in no output."""
    locomo.handle = _needs_basic_auth("user", "S3cretPASS")
    result = evals("fetch", "locomo", mirror=f"http://user:S3cretPASS@127.0.0.1:{locomo.port}/")
    assert result.exit_code == 0, result.output
    assert "S3cretPASS" not in result.output


def test_an_error_from_a_mirror_with_credentials_never_prints_them(locomo, env):
    """A refused download names the mirror without its password."""
    locomo.handle = _needs_basic_auth("user", "right")
    result = evals("fetch", "locomo", mirror=f"http://user:S3cretPASS@127.0.0.1:{locomo.port}/")
    line = one_line_error(result)
    assert "401" in line and "S3cretPASS" not in result.output


def test_a_mirror_query_is_kept(locomo, env):
    """EVALS_MIRROR=http://host/?token=T asks every file with ?token=T, and T is not printed."""

    def needs_token(request: BaseHTTPRequestHandler) -> bool:
        if not request.path.endswith("?token=T0KEN"):
            request.send_error(403)
            return True
        return False

    locomo.handle = needs_token
    result = evals("fetch", "locomo", mirror=f"http://127.0.0.1:{locomo.port}/?token=T0KEN")
    assert result.exit_code == 0, result.output
    assert "T0KEN" not in result.output


# -- leftovers --------------------------------------------------------------------------------------------------


def test_sigterm_mid_download_leaves_nothing(env, tmp_path):
    """SIGTERM during a download removes the partial file and the folders made for it, as Ctrl-C does."""
    server = Mirror()
    try:
        server.handle = _drip(LONGMEMEVAL, 0.05)
        process = evals_process("fetch", "longmemeval_oracle", env={"EVALS_MIRROR": server.url}, cwd=tmp_path)
        folder = env["downloads"] / "longmemeval_oracle"
        for _ in range(600):
            if folder.is_dir() and any(folder.iterdir()):
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    finally:
        server.close()
    assert process.returncode != 0
    assert snapshot(env["downloads"]) == {}


def test_a_lock_that_cannot_be_written_keeps_no_download(monkeypatch, oracle, env):
    """When the lock cannot be written, the first download is not kept, so no later fetch trusts it unrecorded."""
    from evals.benchmarks import _lock

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_lock.os, "replace", full)
    line = one_line_error(evals("fetch", "longmemeval_oracle", mirror=oracle.url))
    assert "lock" in line
    assert not (env["downloads"] / "longmemeval_oracle").exists()
    assert not (env["downloads"] / "corpora" / "longmemeval_oracle").exists()
