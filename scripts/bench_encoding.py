"""Encoding and memory sections of scripts/bench_retrieval.py (imported from there).

- `TreeMemory`: peak memory of a process tree, split into driver, Ray's own processes,
  Ray workers (by title) and the object store's resident pages, by PSS (shared pages counted
  once) and RSS (the figure `ps` shows; counts shared libraries and plasma in every process).
- `matmul_rate`: torch's matrix-multiply rate at one precision (the hardware's practical peak).
- `encode_flops`: the encoder's model FLOPs over a corpus (linear layers + attention
  matmuls, per real token; padding is not counted, so it is what the work needs).
- `section_runtimes`: SciFact nDCG@10, encode time, batch invariance and achieved GFLOP/s
  per encoder runtime and precision, with the quality guard's verdict
  (lasagna.models.precision).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

GIB = 2**30
RAY_SYSTEM = ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py", "runtime_env")


def _category(proc, root_pid: int) -> str:
    """driver / ray system / the worker's title (ray::EncodeDocs, ray::IDLE, ...)."""
    if proc.pid == root_pid:
        return "driver"
    try:
        cmd = proc.cmdline()
    except Exception:
        return "other"
    head = cmd[0] if cmd else proc.name()
    if head.startswith("ray::"):
        return head.split()[0]
    text = " ".join(cmd[:3])
    if any(name in text for name in RAY_SYSTEM) or "DashboardAgent" in text:
        return "ray system"
    return "other"


def _plasma_resident(pid: int) -> int:
    """Resident bytes of the object store's shared-memory mapping (in the raylet)."""
    total, inside = 0, False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                if "-" in line.split(" ", 1)[0]:  # a mapping's header line
                    inside = "plasma" in line
                elif inside and line.startswith("Rss:"):
                    total += int(line.split()[1]) * 1024
    except OSError:
        return 0
    return total


class TreeMemory:
    """Peak summed PSS (and RSS) of a process and its descendants, with the breakdown at the
    PSS peak. Sampled every `interval` seconds, or less often where a sample is costly:
    reading PSS makes the kernel walk each process's page tables (~70 ms for lasagna's 13
    processes on 2 cores), and sampling every 0.5 s slowed the measured run by ~15%, so the
    sampler waits `COST_SHARE` times its last sample's duration at least (~5% of a core)."""

    COST_SHARE = 20

    def __init__(self, pid: int, interval: float = 0.5):
        self.pid, self.interval = pid, interval
        self.peak_pss = self.peak_rss = 0
        self.at_peak: dict[str, int] = {}
        self.plasma_at_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        pss = rss = plasma = 0
        parts: dict[str, int] = {}
        for p in procs:
            try:
                info = p.memory_full_info()
            except psutil.Error:
                continue
            cat = _category(p, self.pid)
            parts[cat] = parts.get(cat, 0) + info.pss
            pss, rss = pss + info.pss, rss + info.rss
            if p.name() == "raylet":
                plasma = _plasma_resident(p.pid)
        self.peak_rss = max(self.peak_rss, rss)
        if pss > self.peak_pss:
            self.peak_pss, self.at_peak, self.plasma_at_peak = pss, parts, plasma

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            self._sample()
            cost = time.perf_counter() - t0
            self._stop.wait(max(self.interval, self.COST_SHARE * cost))

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def breakdown(self) -> str:
        """'driver 0.31, ray system 0.20 (object store resident 0.01), ray::EncodeDocs 0.55'"""
        parts = sorted(self.at_peak.items(), key=lambda kv: -kv[1])
        out = []
        for name, size in parts:
            label = f"{name} {size / GIB:.2f}"
            if name == "ray system" and self.plasma_at_peak:
                label += f" (object store resident {self.plasma_at_peak / GIB:.2f})"
            out.append(label)
        return ", ".join(out) + " GiB"


# ---------------------------------------------------------------- hardware rates
def matmul_rate(
    precision: str, threads: int, n: int = 2048, repeats: int = 5, warmup: int = 2
) -> float:
    """GFLOP/s of an n x n x n matrix product at `precision` with `threads` torch threads (the
    encoder's own thread count): `warmup` untimed products, then the best of `repeats` timed
    ones, so one slow start or a neighbour's burst does not halve the peak. int8 is torch's
    dynamically quantized Linear (the kernel int8 encoding runs)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    x = torch.randn(n, n)
    if precision == "int8":
        from torch.ao.nn.quantized.dynamic import Linear

        lin = Linear(n, n, dtype=torch.qint8)
        lin.set_weight_bias(torch.quantize_per_tensor(x, 0.05, 0, torch.qint8), None)

        def op():
            return lin(x)
    else:
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
        a, b = x.to(dtype), torch.randn(n, n).to(dtype)

        def op():
            return a @ b

    try:
        for _ in range(warmup):
            op()
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            op()
            best = min(best, time.perf_counter() - t)
    finally:
        torch.set_num_threads(before)
    return 2 * n**3 / best / 1e9


def encode_flops(model, texts: list[str]) -> tuple[float, int]:
    """(model FLOPs, real tokens) of encoding `texts` with a sentence-transformers BERT-style
    model: per token and layer 2*(4h^2 + 2hI) for the linear layers plus 4*L*h for the
    attention products (L: that text's tokens after truncation)."""
    cfg = model[0].auto_model.config
    h, inter, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    lengths = [
        len(ids)
        for ids in model.tokenizer(
            texts, truncation=True, max_length=model.max_seq_length, add_special_tokens=True
        )["input_ids"]
    ]
    linear = 2 * (4 * h * h + 2 * h * inter)
    flops = sum(layers * n * (linear + 4 * n * h) for n in lengths)
    return float(flops), sum(lengths)


# ---------------------------------------------------------------- runtimes and precisions
def default_settings() -> list[tuple[str, str]]:
    """The (backend, precision) settings worth measuring on this CPU: fp32 on every installed
    runtime, bf16 only where the CPU has it natively (emulated bf16 is ~8x slower than fp32)."""
    from lasagna.models.precision import backend_installed, cpu_has_bf16

    out = [("torch", "fp32")]
    out += [(b, "fp32") for b in ("openvino", "onnx") if backend_installed(b)]
    if cpu_has_bf16():
        out += [("torch", "bf16")] + (
            [("openvino", "bf16")] if backend_installed("openvino") else []
        )
    return out


def section_runtimes(benchmark, settings: list[tuple[str, str]], *, threads: int) -> dict:
    """Per (backend, precision): encode the corpus in this process in the batches of
    lasagna's encoding plan, nDCG@10 over faiss flat, the quality guard, batch invariance
    (three of the plan's batches encoded again on their own give the same bytes; whether a
    question's vector is the same alone or with others is said apart: lasagna then encodes
    questions one by one), achieved GFLOP/s against the matmul rate of that precision
    measured here with the same threads."""
    import numpy as np
    import torch

    from lasagna.metrics.retrieval import mean_metrics, score_queries
    from lasagna.models.embedders import (
        encode_batches,
        encode_queries,
        load_embedder,
        rows_independent,
        token_lengths,
    )
    from lasagna.models.precision import (
        FP32_REFERENCE_NDCG10,
        MEASURED,
        Measured,
        guard_allows,
        hardware_kind,
    )
    from lasagna.retrieval.batching import plan_encoding
    from lasagna.retrieval.dense import DenseIndex

    torch.set_num_threads(threads)
    docs = list(benchmark.corpus.values())
    texts = [d.indexed_text for d in docs]
    rows = [r for r in benchmark.rows if benchmark.qrels.get(r.id)]
    plan = plan_encoding([d.id for d in docs], token_lengths(PACKAGED, texts), 64)
    batches = [[texts[i] for i in b] for b in plan.batches()]
    probe = load_embedder(PACKAGED, "cpu", threads)
    flops, tokens = encode_flops(probe, texts)
    del probe
    kind = hardware_kind(gpu=False)
    print(
        f"\n== encoder runtimes on SciFact ({len(docs)} docs, {tokens:,} tokens, "
        f"{flops / 1e12:.1f} TFLOP of model work; {threads} threads, in-process; "
        f"hardware kind '{kind}')"
    )
    print(
        f"   encoding plan: {len(plan)} batches of 64 by token length; {plan.padding().describe()}"
    )
    print(
        f"   {'setting':<16}{'nDCG@10':>9}{'diff':>9}  guard  invariant{'encode s':>9}"
        f"{'GFLOP/s':>9}{'matmul':>8}{'of peak':>8}"
    )
    results: dict[tuple[str, str], dict] = {}
    peaks: dict[str, float] = {}
    alone: list[str] = []  # settings whose kernels make a row's vector depend on the row count
    for backend, precision in settings:
        model = load_embedder(PACKAGED, "cpu", threads, precision=precision, backend=backend)
        encode_batches(model, batches[:1])  # warm up
        t = time.perf_counter()
        emb = encode_batches(model, batches)
        seconds = time.perf_counter() - t
        picks = sorted({0, len(batches) // 2, len(batches) - 1})
        starts = np.cumsum([0] + [len(b) for b in batches])
        invariant = all(
            np.array_equal(encode_batches(model, [batches[i]]), emb[starts[i] : starts[i + 1]])
            for i in picks
        )
        if not rows_independent(model):  # correct, but questions are encoded one by one
            alone.append(f"{backend} {precision}")
        by_row = np.empty_like(emb)
        by_row[plan.order] = emb
        q = encode_queries(model, [r.question for r in rows], 64)
        ids, scores = DenseIndex.build([d.id for d in docs], by_row).search(q, 100)
        run = {
            r.id: dict(zip(i, s, strict=True)) for r, i, s in zip(rows, ids, scores, strict=True)
        }
        ndcg = mean_metrics(score_queries(benchmark.qrels, run, ks=(10,)))["ndcg@10"]
        del model, emb, by_row
        if precision not in peaks:
            peaks[precision] = matmul_rate(precision, threads)
        peak = peaks[precision]
        achieved = flops / seconds / 1e9
        measured = Measured(ndcg, seconds, invariant)
        # the bar: torch fp32 of this run (the published 0.64508 on full SciFact; a subset's own)
        base = results.get(("torch", "fp32"), {}).get("ndcg@10", FP32_REFERENCE_NDCG10)
        ok = guard_allows(measured, reference=base)
        recorded = MEASURED.get(kind, {}).get((backend, precision))
        note = (
            ""
            if recorded is None
            else f" (table: {recorded.ndcg10:.5f}, {recorded.encode_s:.0f} s)"
        )
        label = f"{backend} {precision}"
        print(
            f"   {label:<16}{ndcg:>9.5f}{ndcg - base:>+9.5f}  "
            f"{'ok  ' if ok else 'OUT '}  {'yes' if invariant else 'NO ':<9}{seconds:>9.1f}"
            f"{achieved:>9.1f}{peak:>8.1f}{achieved / peak:>8.0%}{note}"
        )
        results[(backend, precision)] = {
            "ndcg@10": ndcg,
            "encode_s": seconds,
            "invariant": invariant,
            "gflops": achieved,
            "matmul_gflops": peak,
            "guard_ok": ok,
        }
    print(
        "   guard: within 0.002 of torch fp32 (diff; published fp32 on SciFact 0.64508) and "
        "batch-invariant (a batch encoded again alone gives the same bytes); goal: >= 50% of "
        "the matmul rate"
    )
    if alone:
        print(
            f"   {', '.join(alone)}: a question's vector depends on how many are encoded with "
            "it (these kernels pick another path for another row count), so lasagna encodes "
            "questions one by one with them: the same vectors, slower for many questions"
        )
    print(f"   the table's row for '{kind}' from this run (lasagna.models.precision.MEASURED):")
    for (b, p), r in results.items():
        invariant = "" if r["invariant"] else ", invariant=False"
        print(
            f"       ({b!r}, {p!r}): Measured({r['ndcg@10']:.5f}, {r['encode_s']:.1f}{invariant}),"
        )
    return results


PACKAGED = "packaged:all-MiniLM-L6-v2"


# ---------------------------------------------------------------- a subset for development
def subset_beir(src: Path, n_docs: int, dest: Path, split: str = "test") -> Path:
    """A BEIR folder with the first `n_docs` documents and the queries judged against them."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "qrels").mkdir(exist_ok=True)
    keep: set[str] = set()
    with (src / "corpus.jsonl").open() as f, (dest / "corpus.jsonl").open("w") as out:
        for line in f:
            if len(keep) >= n_docs:
                break
            keep.add(json.loads(line)["_id"])
            out.write(line)
    qrels = (src / "qrels" / f"{split}.tsv").read_text().splitlines()
    kept = [qrels[0]] + [ln for ln in qrels[1:] if ln.split("\t")[1] in keep]
    (dest / "qrels" / f"{split}.tsv").write_text("\n".join(kept) + "\n")
    queries = {ln.split("\t")[0] for ln in kept[1:]}
    with (src / "queries.jsonl").open() as f, (dest / "queries.jsonl").open("w") as out:
        out.writelines(line for line in f if json.loads(line)["_id"] in queries)
    return dest


# ---------------------------------------------------------------- multi-node projection
def print_projection(per_core: float, fanout: float, fixed_s: float, cores: int = 16) -> None:
    """A projection, not a measurement: corpus encoding on N nodes of `cores` CPUs, from the
    per-core rate measured here, the 2x1-vs-1x2 fan-out factor (what splitting work over more
    Ray actors cost here, capped at 1) and the fixed cost of a run (Ray start, actor start,
    model load). Embeddings cost 1.5 KB a document to move to the driver (MiniLM, 384 fp32)."""
    eff = min(1.0, fanout)
    print(
        f"\n== projection (not measured): {per_core:.1f} docs/s per core x fan-out "
        f"{eff:.2f}, fixed {fixed_s:.0f} s a run, nodes of {cores} cores"
    )
    print(f"   {'nodes':>5}{'docs/s':>10}{'1M docs':>12}")
    for nodes in (1, 4, 16, 64):
        rate = per_core * cores * nodes * eff
        print(f"   {nodes:>5}{rate:>10.0f}{(fixed_s + 1e6 / rate) / 60:>9.1f} min")
