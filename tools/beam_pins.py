"""Write evals/benchmarks/beam/pins.tsv: every file BEAM's answer generation reads, pinned, from a git snapshot.

    python tools/beam_pins.py /work/.mirror/mohammadtavakoli78+BEAM/repo

For each tier (chats/100K, 500K, 1M, 10M) and each numbered conversation folder: the chat BEAM reads
(chat_trunecated.json where the tree has it, else chat.json) and probing_questions/probing_questions.json.
A file whose bytes the snapshot holds is pinned by size and SHA-256 (and its git blob id); a file the
snapshot lacks (most chats of 1M and 10M) by its git blob id alone, read from the tree at the commit.
Prints how many files of each tier are pinned each way.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

COMMIT = "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
TIERS = ("100K", "500K", "1M", "10M")
OUT = Path(__file__).resolve().parent.parent / "evals" / "benchmarks" / "beam" / "pins.tsv"


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, check=True).stdout


def main(repo: str) -> None:
    lines = git(repo, "ls-tree", "-r", "-l", COMMIT, "chats/").decode().splitlines()
    tree = {}
    for line in lines:
        meta, path = line.split("\t", 1)
        _, _, blob, size = meta.split()
        tree[path] = (blob, size)
    rows: dict[str, list[tuple[str, int | None, str | None, str]]] = {}
    for tier in TIERS:
        folders = sorted({p.split("/")[2] for p in tree if p.startswith(f"chats/{tier}/") and p.split("/")[2].isdigit()}, key=int)
        pinned = []
        for folder in folders:
            base = f"chats/{tier}/{folder}/"
            chat = base + ("chat_trunecated.json" if base + "chat_trunecated.json" in tree else "chat.json")
            for path in (chat, base + "probing_questions/probing_questions.json"):
                blob, size = tree[path]
                if size == "-" or not size.isdigit():
                    pinned.append((path, None, None, blob))
                    continue
                data = git(repo, "cat-file", "blob", blob)
                assert len(data) == int(size)
                pinned.append((path, len(data), hashlib.sha256(data).hexdigest(), blob))
        rows[tier] = pinned
        whole = sum(1 for p in pinned if p[2] is not None)
        print(f"{tier}: {len(folders)} conversations, {len(pinned)} files: {whole} by size and SHA-256, "
              f"{len(pinned) - whole} by git blob id only")
    text = [
        "# BEAM's files at commit b2a3ee8ba12d68f83143dda191097dc3e028ddd3, as tools/beam_pins.py wrote them from a",
        "# snapshot of the repository: per tier, every file the importer reads, by path, size, SHA-256 and git blob id.",
        "# Size and SHA-256 are '-' for a file the snapshot lacked: it is pinned by its git blob id (the tree's own",
        "# digest), and its size and SHA-256 are recorded in the lock file at its first download.",
        "tier\tpath\tsize\tsha256\tgit_blob",
    ]
    for tier, pinned in rows.items():
        for path, size, sha, blob in pinned:
            text.append("\t".join((tier, path, "-" if size is None else str(size), "-" if sha is None else sha, blob)))
    OUT.write_text("\n".join(text) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/mohammadtavakoli78+BEAM/repo")
