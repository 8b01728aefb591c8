"""minilm against minilm-bf16, in one run on one machine: the CPU's matrix-product peak, each embedder's
texts and GFLOP per CPU-second against it, and what bf16 does to the rankings.

1. **Peak.** One core (``torch.set_num_threads(1)``): ``torch.nn.functional.linear`` over MiniLM's own
   shapes (rows = a batch of tokens, 384 -> 384 four times a layer, 384 -> 1536, 1536 -> 384), in float32
   and in bfloat16, best of ``--reps``. The peak for a data type is the FLOPs of that mix over its time.
2. **Embedders.** For each corpus (``--corpus``, repeatable: real LoCoMo, a BEAM 100K sample), every
   distinct text a mneme run embeds, computed as the run computes it (``CachingEmbedder.compute`` in
   chunks of ``PREFETCH_CHUNK``) on one core, timed in CPU-seconds. FLOPs come from each text's own
   word-piece count (no padding): per layer and token, the Q, K, V and output projections (4 x 384 x 384),
   the feed-forward (384 -> 1536 -> 384) and attention's two products (2 x n x 384), times 2 for
   multiply-adds, times the model's layers (6). Padding is counted on the batches the embedder really
   multiplied (``batches``: formed by length, each padded to its longest text), as a share of the real word
   pieces, beside what the earlier batches padded (a chunk sorted by characters, cut every batch size).
3. **Rankings.** The vectors go into a fresh store's cache; ``evals run --runner mneme --option embedder=E --k K``
   then runs each corpus (every vector from that cache): the headline recall_any@k with its 95% interval,
   and per test point the overlap of the two top-k sets.
4. **Profile** (``--profile``): one chunk of each embedder under torch.profiler, self CPU time by kind.

    python bench/bench_embedders.py --corpus /work/data/locomo --corpus /tmp/beam100k --beam-conversations 3
    python bench/bench_embedders.py --corpus DIR --sample 512 --profile

Targets: padding at most 5% of the real word pieces; each embedder at least 0.7 of its data type's peak;
minilm-bf16 at least 1.7x minilm's texts per CPU-second; recall_any@k of each within the other's interval.
Needs the minilm extra; minilm-bf16 is measured only on a bf16 CPU (the script refuses any other).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import EVALS, REPO_ROOT, load_average, operator_seconds, print_table  # noqa: E402
from _suite import Context, benchmark  # noqa: E402

HIDDEN, FFN = 384, 1536
PEAK_TARGET, SPEEDUP_TARGET = 0.7, 1.7
EMBEDDERS = ("minilm", "minilm-bf16")


def text_flops(tokens: int, layers: int) -> float:
    """FLOPs of one forward pass over ``tokens`` word pieces (unpadded)."""
    linear = tokens * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)
    attention = 2 * tokens * tokens * HIDDEN
    return 2.0 * layers * (linear + attention)


def peak(dtype_name: str, rows: int, reps: int) -> float:
    """GFLOP per CPU-second of MiniLM's linear layers on one core, in ``dtype_name``."""
    import torch

    dtype = getattr(torch, dtype_name)
    shapes = [(HIDDEN, HIDDEN)] * 4 + [(HIDDEN, FFN), (FFN, HIDDEN)]
    inputs = {n: torch.randn(rows, n).to(dtype) for n in (HIDDEN, FFN)}
    weights = [torch.randn(out, inp).to(dtype) for inp, out in shapes]
    bias = [torch.randn(out).to(dtype) for _, out in shapes]
    flops = sum(2.0 * rows * inp * out for inp, out in shapes)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(reps + 1):  # the first warms the kernels up
            cpu = time.process_time()
            for (inp, _), w, b in zip(shapes, weights, bias, strict=True):
                torch.nn.functional.linear(inputs[inp], w, b)
            best = min(best, time.process_time() - cpu)
    return flops / best / 1e9


def corpus_texts_of(corpus: Path, conversations: int | None) -> tuple[Path, list[str]]:
    """The corpus to run (the first ``conversations`` files copied into a temporary folder when a sample is
    asked for) and the distinct texts a mneme run embeds, in the order it meets them."""
    from evals.model.corpus import load_corpus
    from evals.run.executors._play import corpus_texts

    if conversations:
        sample = Path(tempfile.mkdtemp(prefix="bench-embedders-"))
        for path in sorted(corpus.glob("*.json"))[:conversations]:
            (sample / path.name).write_bytes(path.read_bytes())
        corpus = sample
    return corpus, list(dict.fromkeys(corpus_texts(load_corpus(corpus).conversations)))


def padded_tokens(lengths: list[int], plan: list[list[int]]) -> int:
    """Word pieces the batches of ``plan`` (positions of texts) multiply, each batch padded to its longest."""
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in plan)


def padded_by_characters(lengths: list[int], texts: list[str], chunk: int, batch: int) -> int:
    """Word pieces the batches multiplied before they were formed by length: per chunk, sorted longest text
    (in characters) first as sentence-transformers sorts, cut every ``batch`` texts, each padded to its longest."""
    total = 0
    for begin in range(0, len(texts), chunk):
        order = sorted(range(begin, min(begin + chunk, len(texts))), key=lambda i: -len(texts[i]))
        for b in range(0, len(order), batch):
            part = order[b : b + batch]
            total += len(part) * max(lengths[i] for i in part)
    return total


def embed_timed(name: str, texts: list[str], cache: Any) -> dict[str, Any]:
    """Compute every vector of ``texts`` as a cold run does, into ``cache``; CPU-seconds and vectors."""
    import numpy as np

    from evals.strategies import embedders as E

    embedder, _ = E.make_embedder(name, cache)
    embedder.inner.embed_array(texts[:8])  # loading and first calls are not the rate
    cpu = 0.0
    vectors: list[bytes] = []
    plan: list[list[int]] = []  # the batches multiplied, as positions in ``texts``
    for begin in range(0, len(texts), E.PREFETCH_CHUNK):
        chunk = texts[begin : begin + E.PREFETCH_CHUNK]
        clock = time.process_time()
        computed = embedder.compute(chunk)
        cpu += time.process_time() - clock
        embedder.accept(chunk, computed)
        vectors += computed
        plan += [[begin + i for i in batch] for batch in embedder.inner.batches(chunk)]
    array = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(texts), -1)
    batch = E.MINILM_BF16_BATCH_SIZE if name == "minilm-bf16" else E.MINILM_BATCH_SIZE
    return {"cpu": cpu, "vectors": array, "batch": batch, "chunk": E.PREFETCH_CHUNK, "plan": plan}


def embedders_here() -> tuple[str, ...]:
    """The embedders this CPU runs: minilm-bf16 only where bf16 is native (else it is refused)."""
    from evals.strategies.embedders import bf16_cpu

    return EMBEDDERS if bf16_cpu() else EMBEDDERS[:1]


def profile_kinds(name: str, texts: list[str]) -> dict[str, float]:
    """Self CPU seconds of one chunk's operators, by kind."""
    from evals.strategies import embedders as E

    def kind_of(key: str) -> str:
        return (
            "attention (sdpa, bmm, softmax)" if re.search(r"attention|bmm|softmax|baddbmm", key)
            else "linear (addmm, mm)" if re.search(r"addmm|::mm$|matmul|linear", key)
            else "GELU" if "gelu" in key
            else "layer norm" if "layer_norm" in key
            else "copies, casts" if re.search(r"copy_|contiguous|clone|::to$|_to_copy|cat", key)
            else "other operators"
        )  # fmt: skip

    embedder, _ = E.make_embedder(name, None)
    kinds = operator_seconds(lambda: embedder.compute(texts), kind_of)
    total = sum(kinds.values()) or 1.0
    return {k: v / total for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])}


def run_mneme(corpus: Path, store: Path, embedder: str, k: int) -> tuple[str, dict[str, Any]]:
    """``evals run`` on ``corpus`` with every vector already in the store's cache: its run line and document."""
    output = store.parent / f"{embedder}-{corpus.name}.json"
    command = [*EVALS, "run", "--runner", "mneme", "--option", f"embedder={embedder}", "--k", str(k), "--corpus", str(corpus),
               "--output", str(output)]  # fmt: skip
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, env={**os.environ, "EVALS_STORE": str(store)})
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("run "))
    cache_line = next((line for line in done.stderr.splitlines() if line.startswith("cache:")), "")
    return f"{line}  [{cache_line}]", json.loads(output.read_text())


def overlap(a: dict[str, Any], b: dict[str, Any], k: int) -> tuple[float, int, int]:
    """Mean share of each test point's top-k held by both, the points whose top-k sets are identical, the points."""
    shares, same, points = [], 0, 0
    for ca, cb in zip(a["conversations"], b["conversations"], strict=True):
        for pa, pb in zip(ca["test_points"], cb["test_points"], strict=True):
            sa, sb = set(pa["retrieved_records"]), set(pb["retrieved_records"])
            shares.append(len(sa & sb) / max(len(sa | sb), 1) if sa or sb else 1.0)
            same += sa == sb
            points += 1
    return sum(shares) / max(len(shares), 1), same, points


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="a corpus folder (repeatable)")
    parser.add_argument("--beam-conversations", type=int, default=None,
                        help="take only the first N conversations of a corpus whose name holds 'beam'")
    parser.add_argument("--sample", type=int, default=None,
                        help="embed (and time) only the first N distinct texts of each corpus; no rankings")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rows", type=int, default=4096, help="token rows of the peak's matrix products")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    import numpy as np
    import torch

    from evals.io.cache import Cache, cache_path_for
    from evals.strategies.embedders import _minilm_model, bf16_cpu

    if not bf16_cpu():
        raise SystemExit("this CPU has no bf16 (avx512_bf16, amx_bf16): minilm-bf16 is refused here")
    torch.set_num_threads(1)
    print(f"load average before: {load_average()}; torch {torch.__version__}, 1 thread", flush=True)
    peaks = {"minilm": peak("float32", args.rows, args.reps), "minilm-bf16": peak("bfloat16", args.rows, args.reps)}
    print(f"peak, MiniLM's linear shapes x {args.rows} rows, one core: fp32 {peaks['minilm']:.1f}, "
          f"bf16 {peaks['minilm-bf16']:.1f} GFLOP per CPU-second", flush=True)  # fmt: skip
    for rows_small in (256, 1024):
        print(f"  (at {rows_small} rows: fp32 {peak('float32', rows_small, args.reps):.1f}, "
              f"bf16 {peak('bfloat16', rows_small, args.reps):.1f})", flush=True)  # fmt: skip

    model = _minilm_model()
    layers = model[0].auto_model.config.num_hidden_layers
    rows: list[list[object]] = []
    failed = False
    for given in args.corpus:
        sample = args.beam_conversations if "beam" in given.name.lower() else None
        corpus, texts = corpus_texts_of(given, sample)
        if args.sample:
            texts = texts[: args.sample]
        lengths = [len(ids) for ids in model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]]
        flops = sum(text_flops(n, layers) for n in lengths)
        where = f"{given}{f' (first {sample} conversations)' if sample else ''}"
        print(f"\n{where}: {len(texts)} distinct texts, {sum(lengths) / len(lengths):.1f} word pieces a text, "
              f"{flops / len(texts) / 1e9:.2f} GFLOP a text", flush=True)  # fmt: skip
        store = Path(tempfile.mkdtemp(prefix="bench-embedders-store-")) / "runs.duckdb"
        cache = Cache.open(cache_path_for(store))
        timed = {name: embed_timed(name, texts, cache) for name in EMBEDDERS}
        cache.close()
        for name in EMBEDDERS:
            t = timed[name]
            padded = padded_tokens(lengths, t["plan"])
            before = padded_by_characters(lengths, texts, t["chunk"], t["batch"])
            gflops = flops / t["cpu"] / 1e9
            share = gflops / peaks[name]
            failed |= share < PEAK_TARGET
            rows.append([given.name, name, f"{len(texts) / t['cpu']:.1f}", f"{gflops:.1f}", f"{share:.2f}",
                         f"{padded / sum(lengths) - 1:.3f}", f"{before / sum(lengths) - 1:.3f}"])  # fmt: skip
            print(f"{name}: {t['cpu']:.1f} CPU-s, {rows[-1][2]} texts per CPU-second, "
                  f"{rows[-1][3]} GFLOP per CPU-second, "
                  f"{rows[-1][4]} of its peak (target {PEAK_TARGET}), "
                  f"padding {rows[-1][5]} of the real word pieces (cut by characters, as before: {rows[-1][6]})",
                  flush=True)  # fmt: skip
        ratio = timed["minilm"]["cpu"] / timed["minilm-bf16"]["cpu"]
        failed |= ratio < SPEEDUP_TARGET
        cosine = (timed["minilm"]["vectors"] * timed["minilm-bf16"]["vectors"]).sum(axis=1)
        print(f"texts per CPU-second, bf16 / fp32: {ratio:.2f}x (target >= {SPEEDUP_TARGET}); cosine bf16 to fp32: "
              f"min {cosine.min():.6f}, median {float(np.median(cosine)):.6f}", flush=True)  # fmt: skip
        if args.profile:
            for name in EMBEDDERS:
                kinds = profile_kinds(name, texts[:256])
                print(f"profile {name} (256 texts): " + ", ".join(f"{k} {v:.0%}" for k, v in kinds.items()), flush=True)
        if args.sample:
            continue
        documents = {}
        for name in EMBEDDERS:
            line, documents[name] = run_mneme(corpus, store, name, args.k)
            print(f"  {name}: {line}", flush=True)
        share, same, points = overlap(documents["minilm"], documents["minilm-bf16"], args.k)
        print(f"  top-{args.k} sets: identical at {same}/{points} test points, mean Jaccard {share:.4f}", flush=True)
    print()
    print_table(["corpus", "embedder", "texts/CPU-s", "GFLOP/CPU-s", "of peak", "padding", "padding by characters"], rows)
    print(f"load average after: {load_average()}")
    return 1 if failed else 0


def efficiency(corpus: Path, sample: int | None, rows: int = 4096, reps: int = 5) -> dict[str, float]:
    """Each embedder on ``corpus``'s distinct texts (the first ``sample``), one core: texts and GFLOP per
    CPU-second, the share of that dtype's matrix-product peak, and padding as a share of the real word pieces."""
    import torch

    from evals.io.cache import Cache
    from evals.strategies.embedders import _minilm_model

    torch.set_num_threads(1)
    dtypes = {"minilm": "float32", "minilm-bf16": "bfloat16"}
    peaks = {name: peak(dtypes[name], rows, reps) for name in embedders_here()}
    model = _minilm_model()
    layers = model[0].auto_model.config.num_hidden_layers
    _, texts = corpus_texts_of(corpus, None)
    texts = texts[:sample] if sample else texts
    lengths = [len(ids) for ids in model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]]
    flops = sum(text_flops(n, layers) for n in lengths)
    figures: dict[str, float] = {"texts": len(texts)}
    cache = Cache.open(Path(tempfile.mkdtemp(prefix="bench-embedders-")) / "cache.duckdb")
    try:
        for name in embedders_here():
            t = embed_timed(name, texts, cache)
            gflops = flops / t["cpu"] / 1e9
            before = padded_by_characters(lengths, texts, t["chunk"], t["batch"])
            figures |= {f"{name}_texts_per_cpu_s": len(texts) / t["cpu"], f"{name}_gflop_per_cpu_s": gflops,
                        f"{name}_of_peak": gflops / peaks[name],
                        f"{name}_padding": padded_tokens(lengths, t["plan"]) / sum(lengths) - 1,
                        f"{name}_padding_by_characters": before / sum(lengths) - 1}  # fmt: skip
    finally:
        cache.close()
    return figures


@benchmark(needs=("locomo",), targets={"minilm_of_peak": ">= 0.7", "minilm-bf16_of_peak": ">= 0.6", "minilm_padding": "<= 0.05"},
           slow=True)  # fmt: skip
def locomo_turns(ctx: Context) -> dict[str, float]:
    """MiniLM in fp32 and bf16 on LoCoMo's turns: the share of the CPU's peak, and padding."""
    return efficiency(ctx.data("locomo"), 2000 if ctx.quick else None)


@benchmark(needs=("beam_100k",), targets={"minilm_of_peak": ">= 0.7", "minilm-bf16_of_peak": ">= 0.6"}, slow=True)
def beam_sample(ctx: Context) -> dict[str, float]:
    """MiniLM in fp32 and bf16 on a sample of BEAM's messages (longer texts): the share of the CPU's peak, and padding."""
    return efficiency(ctx.data("beam_100k"), 1000 if ctx.quick else 5000)


if __name__ == "__main__":
    sys.exit(main())
