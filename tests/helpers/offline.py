"""Run code in a child process with the network closed to it, and say whether it tried.

The child gets an audit hook that notes, and refuses, any name lookup or connection that is not loopback (an audit
hook sees what the socket module is asked and patches nothing); where strace is installed, the child runs under it
too, so a lookup or packet from native code (onnxruntime's telemetry, Kuzu) is caught as well. The child's body
prints its report as JSON on its last line, with ``ATTEMPTS`` (the hook's list) in it as ``"attempts"``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]

_HOOK = """
import json, socket, sys
from pathlib import Path

LOCAL = {"127.0.0.1", "::1", "localhost"}
ATTEMPTS = []

def _hook(event, args):
    if event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else args[0]
        if host is not None and host not in LOCAL:
            ATTEMPTS.append(f"lookup {host}")
            raise OSError("network closed")
    elif event == "socket.connect":
        sock, address = args
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL:
            ATTEMPTS.append(f"connect {address}")
            raise OSError("network closed")

sys.addaudithook(_hook)
sys.path.insert(0, %r)
"""


def run_offline(
    body: str, *args: str, tmp_path: Path, env: dict[str, str] | None = None, timeout: float = 1800
) -> dict[str, Any]:
    """Run ``body`` (Python, dedented; ``sys.argv[1:]`` are ``args``; ``helpers`` is importable) with the network
    closed, in ``tmp_path``; assert it exits 0 and that neither the hook nor strace saw traffic beyond loopback;
    give back its report (the JSON object on its last line)."""
    code = _HOOK % str(TESTS) + textwrap.dedent(body)
    command = [sys.executable, "-c", code, *args]
    trace = tmp_path / "trace"
    strace = shutil.which("strace")
    if strace:
        command = [strace, "-f", "-qq", "-e", "trace=connect,sendto", "-o", str(trace), *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["attempts"] == []
    if strace:
        outside = [
            line
            for line in trace.read_text(encoding="utf-8", errors="replace").splitlines()
            if ("AF_INET" in line and "127.0.0.1" not in line and "::1" not in line) or "htons(53)" in line
        ]
        assert outside == []
    return report
