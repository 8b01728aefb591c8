"""MiniLM's throughput on LongMemEval_s-shaped data, and where a cold `--embedder minilm` run spends its time.

Generates (once, under ``bench/.data/``) a LongMemEval_s-shaped file with
``gen_longmemeval.py`` and imports it, or takes ``--corpus``. Then:

1. **The texts.** Every text a mneme play-through embeds (each turn and each
   question, repeats included) and the distinct ones, which are all a cold run
   computes (the cache keys vectors by text).
2. **A sample** of ``--sample`` distinct texts, in the order a cold run meets
   them, embedded here exactly as the run embeds them (``CachingEmbedder.compute``
   in chunks of ``PREFETCH_CHUNK``: sentence-transformers sorts each chunk by
   length and encodes it in batches of ``MINILM_BATCH_SIZE``). It prints texts per
   second (wall and per CPU-second), the texts' lengths in word pieces (the model
   reads at most 256), the arithmetic the model does per text and how fast it
   ran, and where the time went: tokenizing, and the model's operators by kind
   (torch.profiler on one chunk). From the sample rate, the cold run's embedding
   time for every distinct text.
3. With ``--full``, the real thing: ``evals run --runner mneme --embedder minilm``
   on the corpus into a fresh store (so an empty cache), in a child process,
   then the same run again (every vector from the cache): the difference is
   the embedding; the second run is everything else (playing 2 × 240k Mneme
   calls, scoring, the append).

    python bench/bench_minilm.py                           # 500 questions (355 MB file), a 1,024-text sample
    python bench/bench_minilm.py --questions 100 --full    # and a cold and a warm run end to end
    python bench/bench_minilm.py --corpus DIR --sample 2048 --threads 1

Needs the ``minilm`` extra. The target (issue 26): a cold run on LongMemEval_s
in at most 4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, REPO_ROOT, load_average, operator_seconds, run_checked  # noqa: E402

TARGET_S = 240.0

# all-MiniLM-L6-v2: 6 layers, hidden 384, feed-forward 1536.
LAYERS, HIDDEN, FFN = 6, 384, 1536


def model_flops(tokens: int) -> float:
    """Multiply-adds (x2) of one forward pass over ``tokens`` word pieces: the projections and the
    feed-forward (linear in length) and attention's two products (quadratic)."""
    linear = tokens * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FFN)
    attention = 2 * tokens * tokens * HIDDEN
    return 2.0 * LAYERS * (linear + attention)


def corpus_for(args: argparse.Namespace) -> Path:
    if args.corpus is not None:
        return args.corpus
    from gen_longmemeval import GENERATOR_VERSION, generate

    folder = DATA_DIR / f"lme-s-q{args.questions}-s{args.seed}-v{GENERATOR_VERSION}"
    corpus = folder / "corpus"
    if not (folder / ".complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        source = folder / "lme.json"
        started = time.perf_counter()
        generate(source, args.questions, seed=args.seed)
        subprocess.run([*EVALS, "import-corpus", "longmemeval", str(source), "--out", str(corpus)], cwd=REPO_ROOT, check=True)
        source.unlink()
        (folder / ".complete").touch()
        print(f"generated and imported {corpus} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return corpus


def sample_rate(texts: list[str], threads: int | None) -> dict[str, float]:
    """Embed ``texts`` as a cold run does; time it, and profile one chunk by operator kind."""
    import torch

    from evals.strategies.embedders import MINILM_MODEL, PREFETCH_CHUNK, CachingEmbedder, MiniLMEmbedder, _minilm_model

    if threads:
        torch.set_num_threads(threads)
    model = _minilm_model()
    embedder = CachingEmbedder(MiniLMEmbedder(), MINILM_MODEL, None)
    embedder.compute(texts[:8])  # the first call pays for loading: not the rate

    clock, cpu = time.perf_counter(), time.process_time()
    for begin in range(0, len(texts), PREFETCH_CHUNK):
        embedder.compute(texts[begin : begin + PREFETCH_CHUNK])
    wall, cpu = time.perf_counter() - clock, time.process_time() - cpu

    lengths = [len(ids) for ids in model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]]
    clock = time.process_time()
    for begin in range(0, len(texts), 32):
        model.tokenizer(
            texts[begin : begin + 32], padding=True, truncation=True, max_length=model.max_seq_length, return_tensors="pt"
        )
    tokenize_cpu = time.process_time() - clock

    chunk = texts[: min(len(texts), 256)]

    def kind_of(name: str) -> str:
        return (
            "matrix products" if re.search(r"addmm|::mm$|matmul|linear|bmm", name)
            else "attention" if "attention" in name
            else "copies" if re.search(r"copy_|contiguous|clone", name)
            else "GELU" if "gelu" in name
            else "layer norm" if "layer_norm" in name
            else "other operators"
        )  # fmt: skip

    kinds = operator_seconds(lambda: embedder.compute(chunk), kind_of)
    return {
        "wall": wall,
        "cpu": cpu,
        "tokens_mean": sum(lengths) / len(lengths),
        "capped": sum(n >= model.max_seq_length for n in lengths) / len(lengths),
        "flops": sum(model_flops(n) for n in lengths),
        "tokenize_cpu": tokenize_cpu,
        "threads": torch.get_num_threads(),
        **{f"op:{k}": v for k, v in kinds.items()},
        "profiled": len(chunk),
    }


def bfloat16_rate(texts: list[str]) -> tuple[float, float, float]:
    """What the same texts cost with the model's weights and arithmetic in bfloat16 (Intel AMX where the
    CPU has it): texts per second (wall, per CPU-second) and the smallest cosine to the float32 vectors.
    Not what a run computes: for the decision whether a faster, slightly different embedder is worth having."""
    import numpy as np
    import torch

    from evals.strategies.embedders import MiniLMEmbedder, _minilm_model

    exact = MiniLMEmbedder().embed_array(texts)
    model = _minilm_model()
    half = type(model)(modules=[m for m in model], device="cpu")  # a copy sharing nothing with the run's model
    half.load_state_dict(model.state_dict())
    half = half.to(torch.bfloat16)
    half.encode(texts[:8], batch_size=32)
    clock, cpu = time.perf_counter(), time.process_time()
    vectors = half.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_tensor=True, show_progress_bar=False)
    wall, cpu = time.perf_counter() - clock, time.process_time() - cpu
    vectors = vectors.float().numpy()
    cosine = (exact * vectors).sum(axis=1) / np.linalg.norm(vectors, axis=1)
    return len(texts) / wall, len(texts) / cpu, float(cosine.min())


def _minilm_tokens(texts: list[str]) -> list[list[int]]:
    from evals.strategies.embedders import _minilm_model

    model = _minilm_model()
    return model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]


def _sorted_batches(texts: list[str], batch: int = 32) -> list[list[int]]:
    """Indices of ``texts`` longest first, in batches (as sentence-transformers batches a chunk)."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[b : b + batch] for b in range(0, len(order), batch)]


def _pooled(bert: Any) -> Any:
    """all-MiniLM-L6-v2 as one torch module: BERT, mean pooling over the mask, L2 normalisation (what
    the sentence-transformers pipeline computes), for export and quantisation."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            hidden = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return Pooled().eval()


def ideas(texts: list[str], folder: Path) -> list[tuple[str, float, float, str]]:
    """Each idea for a faster cold run, timed on ``texts``: (what, texts/s, texts per CPU-second, how its
    vectors compare with the run's). None is what a run computes but the first: a different number of
    threads, batching, runtime or precision changes the vectors, at least in their last bits."""
    import numpy as np
    import torch

    from evals.strategies.embedders import MiniLMEmbedder, _minilm_model

    model = _minilm_model()
    tokenizer = model.tokenizer
    rows: list[tuple[str, float, float, str]] = []
    exact = None

    def timed(what: str, embed: Callable[[list[str]], Any]) -> None:
        nonlocal exact
        embed(texts[:8])  # loading and first-call costs are not the rate
        clock, cpu = time.perf_counter(), time.process_time()
        vectors = np.asarray(embed(texts), dtype=np.float32)
        wall, cpu = time.perf_counter() - clock, time.process_time() - cpu
        if exact is None:
            exact, note = vectors, "the run's vectors"
        else:
            cosine = (exact * vectors).sum(axis=1) / np.linalg.norm(vectors, axis=1)
            same = "bit for bit" if np.array_equal(exact, vectors) else f"max |difference| {np.abs(exact - vectors).max():.1e}"
            note = f"{same}, smallest cosine {cosine.min():.6f}"
        rows.append((what, len(texts) / wall, len(texts) / cpu, note))
        print(f"  {what:<44} {rows[-1][1]:6.1f} texts/s {rows[-1][2]:6.1f} per CPU-s  {note}", flush=True)

    def batched(forward: Callable[..., Any], tensors: str) -> Callable[[list[str]], Any]:
        def embed(batch_texts: list[str]) -> Any:
            out = np.zeros((len(batch_texts), 384), dtype=np.float32)
            for idx in _sorted_batches(batch_texts):
                enc = tokenizer(
                    [batch_texts[i] for i in idx], padding=True, truncation=True, max_length=256, return_tensors=tensors
                )
                out[idx] = forward(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
            return out

        return embed

    threads = torch.get_num_threads()
    timed(f"torch float32, {threads} threads (as a run)", MiniLMEmbedder().embed_array)
    for count in sorted({1, 2} - {threads}):
        torch.set_num_threads(count)
        timed(f"torch float32, {count} thread{'s' if count > 1 else ''}", MiniLMEmbedder().embed_array)
    torch.set_num_threads(threads)
    bert = model[0].auto_model.eval()
    pooled = _pooled(bert)
    with torch.inference_mode():
        timed("torch float32, whole sample sorted by length", batched(lambda *a: pooled(*a).numpy(), "pt"))
        quantised = _pooled(torch.ao.quantization.quantize_dynamic(bert, {torch.nn.Linear}, dtype=torch.qint8))
        timed("torch int8 (dynamic quantisation of the linears)", batched(lambda *a: quantised(*a).numpy(), "pt"))
    try:
        import onnxruntime
    except ImportError:
        print("  (onnxruntime not installed: pip install onnxruntime onnx for its rows)")
        return rows
    exported = folder / "minilm.onnx"
    if not exported.exists():
        enc = tokenizer(texts[:4], padding=True, truncation=True, max_length=256, return_tensors="pt")
        axes = {name: {0: "batch", 1: "pieces"} for name in ("ids", "mask", "types")} | {"vector": {0: "batch"}}
        torch.onnx.export(
            pooled, (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]), str(exported),
            input_names=["ids", "mask", "types"], output_names=["vector"], dynamic_axes=axes, opset_version=17, dynamo=False,
        )  # fmt: skip
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    for what, path in (("onnxruntime float32 (graph optimised)", exported), ("onnxruntime int8 (dynamic quantisation)", None)):
        if path is None:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            path = folder / "minilm-int8.onnx"
            if not path.exists():
                quantize_dynamic(str(exported), str(path), weight_type=QuantType.QInt8)
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        timed(what, batched(lambda ids, mask, types, s=session: s.run(None, {"ids": ids, "mask": mask, "types": types})[0], "np"))
    return rows


def run_cli(corpus: Path, store: Path) -> tuple[float, str]:
    command = [*EVALS, "run", "--runner", "mneme", "--option", "embedder=minilm"]
    command += ["--corpus", str(corpus), "--store", str(store), "--force"]
    child = run_checked(command, error=SystemExit)
    said = re.search(r"cache: (\d+) computed, (\d+) from cache", child.stderr)
    return child.wall_s, f"{said.group(1)} computed, {said.group(2)} from cache" if said else "cache line not found"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=500, help="questions of the generated file (default 500, LongMemEval_s)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--corpus", type=Path, help="an imported corpus to use instead")
    parser.add_argument("--sample", type=int, default=1024, help="distinct texts embedded for the rate (default 1024)")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's, one per core)")
    parser.add_argument("--full", action="store_true", help="also a cold and a warm `evals run --embedder minilm` end to end")
    parser.add_argument("--bfloat16", action="store_true", help="also time the sample in bfloat16 (not what a run computes)")
    parser.add_argument(
        "--ideas", type=int, metavar="N", help="also time N distinct texts with each idea for a faster cold run (threads, "
        "sorting, int8, onnxruntime) and compare their vectors with the run's"
    )
    args = parser.parse_args(argv)

    from evals.model.corpus import load_corpus
    from evals.run.executors._play import corpus_texts

    corpus = corpus_for(args)
    load_before = load_average()
    conversations = load_corpus(corpus).conversations
    seen = sum(1 for _ in corpus_texts(conversations))
    distinct = list(dict.fromkeys(corpus_texts(conversations)))
    del conversations
    print(f"corpus {corpus}: {seen:,} texts embedded by the play-through, {len(distinct):,} distinct (all a cold run computes)")

    got = sample_rate(distinct[: args.sample], args.threads)
    n = min(args.sample, len(distinct))
    rate = n / got["wall"]
    print(
        f"sample: {n:,} distinct texts in {got['wall']:.1f} s ({got['threads']} torch threads): {rate:.1f} texts/s, "
        f"{n / got['cpu']:.1f} per CPU-second"
    )
    print(
        f"  word pieces per text: {got['tokens_mean']:.0f} on average, {got['capped']:.0%} cut at the model's 256; "
        f"{got['flops'] / n / 1e9:.1f} GFLOP per text, {got['flops'] / got['wall'] / 1e9:.0f} GFLOP/s achieved"
    )
    ops = {k[3:]: v for k, v in got.items() if k.startswith("op:")}
    total = sum(ops.values()) or 1.0
    shares = ", ".join(f"{name} {seconds / total:.0%}" for name, seconds in sorted(ops.items(), key=lambda kv: -kv[1]))
    print(f"  where the model's time goes ({got['profiled']} texts profiled): {shares}")
    print(f"  tokenizing: {got['tokenize_cpu'] / got['cpu']:.1%} of the CPU time")
    estimate = len(distinct) / rate
    per_text = got["flops"] / n
    print(
        f"cold run, embedding alone: {len(distinct):,} texts / {rate:.1f} per s = {estimate:.0f} s "
        f"({'within' if estimate <= TARGET_S else 'over'} the {TARGET_S:.0f} s target for the whole run); "
        f"in {TARGET_S:.0f} s it takes {len(distinct) / TARGET_S:.0f} texts/s = "
        f"{len(distinct) * per_text / TARGET_S / 1e9:.0f} GFLOP/s"
    )
    if args.bfloat16:
        half_rate, half_cpu, cosine = bfloat16_rate(distinct[: args.sample])
        print(
            f"bfloat16 (for comparison; not what a run computes): {half_rate:.1f} texts/s, {half_cpu:.1f} per CPU-second "
            f"({half_cpu / (n / got['cpu']):.2f}x float32's), smallest cosine to the float32 vectors {cosine:.6f}"
        )

    if args.ideas:
        lengths = [len(ids) for ids in _minilm_tokens(distinct[: args.ideas])]
        padded = sum(max(lengths[i] for i in idx) * len(idx) for idx in _sorted_batches(distinct[: args.ideas]))
        print(
            f"ideas on {args.ideas} distinct texts (the first is what a run computes; padding of sorted batches of 32: "
            f"{padded / sum(lengths) - 1:.1%} of the word pieces):"
        )
        ideas(distinct[: args.ideas], DATA_DIR)

    if args.full:
        folder = Path(tempfile.mkdtemp(prefix="bench-minilm-"))
        try:
            store = folder / "results.duckdb"
            cold, cold_cache = run_cli(corpus, store)
            warm, warm_cache = run_cli(corpus, store)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(f"evals run --runner mneme --embedder minilm --corpus {corpus} --store NEW --force")
        print(f"  cold (empty cache): {cold:.1f} s, {cold_cache}")
        print(f"  warm (every vector cached): {warm:.1f} s, {warm_cache}")
        print(
            f"  embedding {cold - warm:.1f} s = {len(distinct) / max(cold - warm, 1e-9):.1f} texts/s; "
            f"cold run {'within' if cold <= TARGET_S else 'OVER'} {TARGET_S:.0f} s"
        )
    print(f"load average (1/5/15 min) before {load_before}, after {load_average()}; {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
