"""The project holds none of the published protocols' prompt text: not in code, tests, docs or fixtures.

tests/fixtures/protocols/published_text_prints.txt holds fingerprints of the published files' long
string constants (the SHA-256 of each 40-byte window starting every 20 bytes), not their text. Any
copy of 60 bytes or more of one of them contains a whole window, so scanning every 40-byte window
of every file of the project finds it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from helpers import FIXTURES, ROOT

PRINTS = FIXTURES / "protocols" / "published_text_prints.txt"
WINDOW, STEP = 40, 20
SCANNED = ("evals", "tests", "docs", "site_templates", "bench", "examples", "suites", "corpus")
SKIPPED = {".venv", "__pycache__", ".git", "node_modules"}


def fingerprints(text: bytes) -> set[str]:
    """The fingerprints of one text, as the prints file holds them."""
    return {hashlib.sha256(text[i : i + WINDOW]).hexdigest()[:16] for i in range(0, len(text) - WINDOW + 1, STEP)}


def copies(data: bytes, prints: set[str]) -> list[int]:
    """Offsets of the windows of ``data`` that are a fingerprinted window."""
    sha = hashlib.sha256
    return [i for i in range(len(data) - WINDOW + 1) if sha(data[i : i + WINDOW]).hexdigest()[:16] in prints]


def project_files() -> list[Path]:
    files = [ROOT / name for name in ("README.md", "pyproject.toml", "tasks.py", "evals.toml") if (ROOT / name).is_file()]
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and not SKIPPED & set(path.parts) and path != PRINTS:
                files.append(path)
    return files


def test_no_file_holds_published_prompt_text():
    prints = {line.strip() for line in PRINTS.read_text().splitlines() if line.strip() and not line.startswith("#")}
    assert len(prints) > 600
    found = []
    for path in project_files():
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # a binary fixture (a DuckDB store, an archive): no text to copy into
        hits = copies(data, prints)
        if hits:
            found.append(f"{path.relative_to(ROOT)} at byte {hits[0]}")
    assert found == []


def test_the_scan_finds_a_copy(tmp_path):
    """The check itself: a text's fingerprints find a 60-byte copy of it inside another file."""
    original = ("A made-up instruction for a model, long enough to be fingerprinted: " * 3).encode()
    copied = b"some code\n" + original[7:90] + b"\nmore code\n"
    assert copies(copied, fingerprints(original))
    assert not copies(b"nothing of it here " * 20, fingerprints(original))
