"""A stand-in for the benchmarks' hosts in the tests: real HTTP on 127.0.0.1, served through $EVALS_MIRROR.

``BenchmarkServer().files`` maps a relative path (a published file name, or ``OWNER/REPO/COMMIT/PATH``
for an evaluation source) to its bytes; ``requests`` lists the paths asked for. The first path segment
chooses how a file is served:

* ``/ok/NAME``: the file;
* ``/truncated/NAME``: announces the whole length, sends half, closes the connection;
* ``/redirect/NAME``: a 302 to ``/ok/NAME``;
* ``/loop/NAME``: a 302 to itself, for ever;
* ``/corrupt/NAME``: other bytes of the same length;
* anything else, or a name not in ``files``: 404.

:meth:`BenchmarkServer.mirror` is the ``$EVALS_MIRROR`` value for a mode.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("ok", "truncated", "redirect", "loop", "corrupt")


class _Files(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest's output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        server: BenchmarkServer = self.server.owner  # type: ignore[attr-defined]
        server.requests.append(self.path)
        mode, _, name = self.path.lstrip("/").partition("/")
        body = server.files.get(name)
        if body is None or mode not in MODES:
            self.send_error(404)
            return
        if mode in ("redirect", "loop"):
            self.send_response(302)
            self.send_header("Location", f"/{'ok' if mode == 'redirect' else 'loop'}/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "truncated":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(bytes(b ^ 1 for b in body) if mode == "corrupt" else body)


class BenchmarkServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> BenchmarkServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def mirror(self, mode: str = "ok") -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/{mode}/"
