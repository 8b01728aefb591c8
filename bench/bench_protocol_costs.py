"""What end-to-end answers cost per protocol: requests, tokens and dollars on a LongMemEval-format and a
LoCoMo-format file (issue 25).

For each corpus and each ``--protocol``, one ``evals run --with-answers --judge --no-cache`` against the
local OpenAI-compatible test server (``tests/helpers/llm_server.py``, real HTTP), so every request is sent and
counted: requests per kind (answer, judge, memory write), the prompt tokens of the request bodies the
server received counted with cl100k_base (message contents only: OpenAI adds a few tokens per message),
the completion tokens as the server reported them (its replies are the test server's, a few words, not a
model's), and dollars at the shipped prices of the models each protocol asks for (evals/model/prices.toml;
"—" where a model has none).

    python bench/gen_longmemeval.py /tmp/lme.json --questions 20      # done for you unless --longmemeval
    git -C <a clone of snap-research/LoCoMo> show HEAD:data/locomo10.json > /tmp/locomo10.json
    python bench/bench_protocol_costs.py --locomo /tmp/locomo10.json --protocol harness [--protocol longmemeval ...]

``--protocol harness`` is the default and needs no option; other protocols are passed to ``evals run
--protocol`` (issue 25's protocols; run them once the build has them). Without ``--locomo`` the small
LoCoMo-format fixture (tests/fixtures/importers/locomo_small.json) stands in.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(ROOT / "tests"))  # the local OpenAI-compatible server the tests use (tests/helpers)

from gen_longmemeval import generate  # noqa: E402
from helpers.llm_server import LLMServer  # noqa: E402

from evals.cli import cli  # noqa: E402
from evals.model.costs import shipped_prices  # noqa: E402
from evals.model.tokens import TokenCounter  # noqa: E402
from evals.store import Store  # noqa: E402

LOCOMO_FIXTURE = ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json"
KINDS = ("answer", "judge", "memory_write")


def evals(*args: str) -> None:
    """One ``evals`` command in this process; a failure stops the bench with its message."""
    try:
        cli.main(list(args), prog_name="evals", standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise SystemExit(f"evals {' '.join(args)} failed ({exc.code})") from None


def measure(server: LLMServer, corpus: Path, store: Path, protocol: str, runner: str, k: int) -> dict:
    server.reset_counts()
    args = ["run", "--runner", runner, "--k", str(k), "--corpus", str(corpus), "--store", str(store), "--repo", str(store.parent),
            "--base-url", server.base_url, "--with-answers", "--no-cache", "--concurrency", "8"]  # fmt: skip
    if protocol != "harness":
        args += ["--protocol", protocol]  # a published protocol brings its own judge (LoCoMo's: none, F1)
    else:
        args += ["--judge"]
    started = time.perf_counter()
    evals(*args)
    seconds = time.perf_counter() - started
    with Store.open(store, read_only=True) as opened:
        summary = opened.runs()[0]
    counter = TokenCounter()
    prices = shipped_prices()
    usage = summary.llm_usage or {}
    prompt, dollars = 0, 0.0
    # Prompt tokens re-counted with cl100k_base from each body the server received, priced by the model it
    # names; completion tokens as the server reported them, priced by each kind's model.
    for body in server.bodies:
        if "messages" not in body:
            continue  # an embedding request
        tokens = sum(counter.count(m["content"]) for m in body["messages"])
        prompt += tokens
        price = prices.lookup(body["model"])
        dollars = None if price is None or dollars is None else dollars + tokens * price.input / 1e6
    for tally in usage.values():
        price = prices.lookup(tally["model"])
        dollars = None if price is None or dollars is None else dollars + tally["completion_tokens"] * price.output / 1e6
    return {
        "points": usage.get("answer", {}).get("per", 0),
        "requests": {kind: usage.get(kind, {}).get("sent", 0) for kind in KINDS},
        "prompt_cl100k": prompt,
        "completion": sum(t["completion_tokens"] for t in usage.values()),
        "models": {kind: t["model"] for kind, t in usage.items()},
        "usd": dollars,
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--protocol", action="append", default=None, help="a protocol of evals run (repeatable; default: harness)"
    )
    parser.add_argument("--locomo", type=Path, default=LOCOMO_FIXTURE, help="a LoCoMo-format file (locomo10.json)")
    parser.add_argument("--longmemeval", type=Path, default=None, help="a LongMemEval-format file (default: generated)")
    parser.add_argument("--questions", type=int, default=20, help="questions of the generated LongMemEval-format file")
    parser.add_argument("--runner", default="bm25")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="keep the corpora and stores in this folder")
    args = parser.parse_args()
    protocols = args.protocol or ["harness"]
    work = Path(tempfile.mkdtemp(prefix="bench-protocol-costs-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        lme = args.longmemeval
        if lme is None:
            lme = work / "longmemeval.json"
            generate(lme, args.questions, shape="s")
        corpora = {}
        for name, fmt, source in (("longmemeval", "longmemeval", lme), ("locomo", "locomo", args.locomo)):
            out = work / f"corpus-{name}"
            if not out.exists():
                evals("import-corpus", fmt, str(source), "--out", str(out))
            corpora[name] = (out, source)
        rows = []
        with LLMServer() as server:
            for name, (corpus, source) in corpora.items():
                for protocol in protocols:
                    store = work / f"{name}-{protocol}.duckdb"
                    found = measure(server, corpus, store, protocol, args.runner, args.k)
                    rows.append((name, source.name, protocol, found))
        print(f"\nrunner {args.runner}, k={args.k}; local test server (completions are its own, a few words each)\n")
        print("| corpus (file) | protocol | test points | answer / judge / memory-write requests | prompt tokens (cl100k) "
              "| completion tokens (server) | $ at shipped prices | models (answer, judge) | s |")
        print("|---|---|--:|--:|--:|--:|--:|---|--:|")
        for name, file, protocol, f in rows:
            requests = " / ".join(str(f["requests"][k]) for k in KINDS)
            usd = "—" if f["usd"] is None else f"${f['usd']:.4f}"
            models = ", ".join(f["models"].get(k, "—") for k in ("answer", "judge"))
            print(
                f"| {name} ({file}) | {protocol} | {f['points']:,} | {requests} | {f['prompt_cl100k']:,} "
                f"| {f['completion']:,} | {usd} | {models} | {f['seconds']:.1f} |"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
