"""Check, on a real store and its site, that every surface reports one figure and one verdict per run.

For each run in the store, each test point's verdict is worked out from the stored retrievals alone
(an evidence turn among the records, over the population of the corpus's benchmark: every question
with evidence on LoCoMo, the answerable ones elsewhere; keyword hits on a corpus without evidence),
then compared with the drill-downs' ``data-verdict``, the leaderboard page's and run page's
hits / total, ``evals leaderboard`` and ``evals runs`` JSON, and, for each pair of runs on one corpus,
``evals compare``'s count of flips. Prints one line per run and exits 1 on any disagreement.

    python tools/check_one_truth.py --store /tmp/drilldown-bench/results.duckdb --site /tmp/drilldown-bench/site
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from _common import EVALS  # noqa: E402

from evals.store import Store  # noqa: E402


class _Verdicts(HTMLParser):
    """``data-verdict`` of every test point section, by its turn, and the page's conversation id (its h1)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[int, str] = {}
        self.title = ""
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        values = dict(attrs)
        if tag == "section" and "data-verdict" in values:
            self.found[int(values["id"].removeprefix("tp-"))] = values["data-verdict"]
        self._in_h1 = tag == "h1"

    def handle_data(self, data: str) -> None:
        if self._in_h1 and not self.title:
            self.title = data.split()[0] if data.split() else ""


def expected(stored) -> dict[tuple[str, int], str]:
    summary = stored.summary
    evidence = "evidence_recall_any" in summary.metrics
    out = {}
    for conversation, scores in zip(stored.run.conversations, stored.scores.points, strict=True):
        for point, score in zip(conversation.test_points, scores, strict=True):
            key = (conversation.conversation_id, point.turn_index)
            if not evidence:
                out[key] = ("hit" if score.hit else "miss") if point.answerable else "unanswerable"
                continue
            counted = bool(point.evidence_turns) and (point.answerable or summary.benchmark == "locomo")
            if not counted:
                out[key] = "unscored" if point.answerable else "unanswerable"
            else:
                out[key] = "hit" if set(point.retrieved_turns or []) & set(point.evidence_turns) else "miss"
    return out


def drilldowns(site: Path, run_id: str) -> dict[tuple[str, int], str]:
    found = {}
    for page in (site / "runs" / run_id).glob("*.html"):
        parser = _Verdicts()
        parser.feed(page.read_text(encoding="utf-8"))
        found.update({(parser.title, turn): verdict for turn, verdict in parser.found.items()})
    return found


def run_page(site: Path, run_id: str) -> str:
    return (site / "runs" / f"{run_id}.html").read_text(encoding="utf-8")


def cli_json(*args: str) -> list[dict]:
    return json.loads(subprocess.run([*EVALS, *args, "--format", "json"], check=True, capture_output=True, text=True).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--site", type=Path, required=True)
    args = parser.parse_args()
    with Store.open(args.store, read_only=True) as store:
        summaries = store.runs()
        verdicts = {s.run_id: expected(store.get_run(s.run_id)) for s in summaries}
    counts = {
        run: (sum(v == "hit" for v in e.values()), sum(v in ("hit", "miss") for v in e.values())) for run, e in verdicts.items()
    }
    board = {r["run_id"]: r["headline"] for r in cli_json("leaderboard", "--store", str(args.store))}
    listed = {r["run_id"]: r["headline"] for r in cli_json("runs", "--store", str(args.store))}
    # Every benchmark's leaderboard (index.html is the front page listing them).
    index = "".join(page.read_text(encoding="utf-8") for page in sorted(args.site.glob("leaderboard-*.html")))
    ok = True
    for s in summaries:
        hits, total = counts[s.run_id]
        checks = {
            "drill-downs": drilldowns(args.site, s.run_id) == verdicts[s.run_id],
            "runs": (listed[s.run_id]["hits"], listed[s.run_id]["total"]) == (hits, total),
            "leaderboard": s.run_id not in board or (board[s.run_id]["hits"], board[s.run_id]["total"]) == (hits, total),
            "run page": bool(re.search(rf"{hits} / {total}\s*</span>\s*test points hit", run_page(args.site, s.run_id))),
            "index": s.run_id not in board or f">{hits} / {total}<" in index,
        }
        ok &= all(checks.values())
        failed = [name for name, good in checks.items() if not good]
        print(f"{s.run_id} {s.strategy:<15} {s.headline.rule.label} {hits}/{total} over {s.headline.rule.population}: "
              + ("every surface agrees" if not failed else f"DISAGREE: {', '.join(failed)}"))
    by_corpus: dict[str, list] = {}
    for s in summaries:
        by_corpus.setdefault(s.corpus_digest, []).append(s)
    for runs in by_corpus.values():
        for a, b in zip(runs, runs[1:], strict=False):
            command = [*EVALS, "compare", a.run_id, b.run_id, "--store", str(args.store)]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            lost = sum(verdicts[a.run_id][k] == "hit" and verdicts[b.run_id].get(k) == "miss" for k in verdicts[a.run_id])
            good = f"hit->miss: {lost}" in out.splitlines()
            ok &= good
            said = "agrees" if good else "DISAGREES"
            print(f"compare {a.run_id} {b.run_id}: {lost} hit->miss by the rule; evals compare {said}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
