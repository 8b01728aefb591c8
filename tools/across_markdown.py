"""The across-benchmarks table as Markdown, from a built site's ``data/across.json`` (what across.html shows).

docs/strategies.md's cross-benchmark table is this script's output, so the docs and the site state one table,
made by one rule (evals/site/_across.py): each memory's headline with its 95% interval and its rank per benchmark
("not run at k=…" where it has none), then the pairs whose order flips between two benchmarks.

    evals build-site --from board --out /tmp/site && python tools/across_markdown.py /tmp/site
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cell(found: dict) -> str:
    if found["missing"]:
        return found["missing"]
    figure = f"{found['recall']:.3f} [{found['low']:.3f}, {found['high']:.3f}]"
    return figure + (f" (#{found['rank']})" if found["rank"] is not None else "")


def markdown(across: dict) -> str:
    """Each table of ``across`` (the site's data/across.json) as Markdown, one section per k."""
    out = []
    for table in across["tables"]:
        heads = [f"{title} ({label})" for (title, _), label in zip(table["benchmarks"], table["labels"], strict=True)]
        out += [f"At k={table['k']} (rank on each benchmark after the figure; ties share a rank):", ""]
        out += ["| system | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
        out += [f"| `{row['system']}` | " + " | ".join(cell(c) for c in row["cells"]) + " |" for row in table["rows"]]
        out.append("")
        none = f"No two systems swap places between two benchmarks with paired p < {across['flip_p']} on both."
        flips = table["flips"] or [none]
        out += [f"- {note}" for note in flips]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built site's folder")
    args = parser.parse_args(argv)
    found = args.site / "data" / "across.json"
    if not found.is_file():
        print(f"{found}: no such file (build the site with evals build-site first)", file=sys.stderr)
        return 1
    print(markdown(json.loads(found.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
