"""``evals serve``'s HTTP server: a built site's own files and nothing else.

:class:`http.server.SimpleHTTPRequestHandler` follows symlinks wherever they point, lists folders, and lets an
exception escape on a path Python cannot open (``GET /index.html%00.txt``: a NUL in a file name), which prints a
traceback and leaves the request unanswered. Here a request is answered with a file only when its resolved path is a
regular file inside the site's resolved folder (a symlink out of the site, a folder without ``index.html``, a FIFO
are 404), and every other request line gets a status line, never a traceback.
"""

from __future__ import annotations

import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["SiteHandler", "site_server"]


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves regular files whose resolved path lies inside ``directory``; 404 for anything else."""

    def send_head(self) -> Any:
        try:
            allowed = self._inside()
        except (OSError, ValueError, RuntimeError):  # a NUL or an unencodable name, a symlink loop
            allowed = False
        if not allowed:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def _inside(self) -> bool:
        root = Path(self.directory).resolve(strict=True)
        asked = Path(self.translate_path(self.path))
        if "\x00" in str(asked):
            return False
        if asked.is_dir():
            if not self.path.split("?", 1)[0].split("#", 1)[0].endswith("/"):
                return asked.resolve(strict=True).is_relative_to(root)  # the handler redirects to the slash
            asked = asked / "index.html"
        real = asked.resolve(strict=True)
        return real.is_relative_to(root) and real.is_file()

    def list_directory(self, path: Any) -> Any:
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")  # a site's folders are reached by their index.html
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, not a traceback: a client that hung up, or a request the handler could not finish."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        sys.stderr.write(f"evals serve: a request from {client_address[0]} failed: {type(exc).__name__}: {exc}\n")


def site_server(directory: Path, port: int) -> ThreadingHTTPServer:
    """A server of ``directory`` on 127.0.0.1:``port`` (0: a free port), not yet serving; OSError when the port is
    taken."""
    return _Server(("127.0.0.1", port), partial(SiteHandler, directory=str(directory)))
