"""Encoder runtimes: a sentence-transformers model's transformer run by OpenVINO or ONNX Runtime
instead of torch, the rest of the model (tokenizer, pooling, normalization) unchanged.

The model's transformer is converted from the loaded torch module (OpenVINO:
`openvino.convert_model`; ONNX Runtime: torch's ONNX export into memory), so no `optimum` is
needed, and compiled for this CPU with the caller's threads. OpenVINO's converted graph (fp32,
precision is chosen at compile time) is kept in the cache (`models/openvino-<key>/`), keyed by
the model's files and the library versions, so each pool actor and each later run reads it in
a fraction of a second instead of converting again. OpenVINO
runs bf16 where the CPU has native bf16 dot products (AMX, AVX512_BF16); both run fp32
everywhere. Which runtime and precision `auto` picks is lasagna.models.precision's choice.

The runtime replaces the forward pass of the model's first module, so `encode`, the
encoding plan's batches and the query grouping work as with torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna.cache import build_atomically, cache_dir
from lasagna.common.signal_stack import signal_stack_kept

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OV_PRECISION = {"fp32": "f32", "bf16": "bf16", "fp16": "f16"}


def _core_module(st: SentenceTransformer):
    """A torch module: (input_ids, attention_mask, token_type_ids) -> token embeddings."""
    import torch

    auto = st[0].auto_model

    class Core(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.auto = auto

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.auto(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out[0]

    return Core().eval()


@contextlib.contextmanager
def _quiet_tracing() -> Iterator[None]:
    """Tracing or exporting the model, without the notes it prints: torch's tracer warns
    about BERT's control flow (all handled), and walking the module's attributes reads
    transformers' `loss_function`, which logs "`loss_type=None` ... unrecognized" (an
    encoder has no loss)."""
    import torch

    log = logging.getLogger("transformers.modeling_utils")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def model_inputs(st: SentenceTransformer, texts: list[str]) -> dict[str, Any]:
    """The model's input tensors for `texts` (`preprocess` where sentence-transformers has
    it; its older `tokenize` warns that it is deprecated there)."""
    prepare = getattr(st, "preprocess", None) or st.tokenize
    return prepare(list(texts))


def _example(st: SentenceTransformer) -> dict[str, Any]:
    features = model_inputs(st, ["an example input", "a second, somewhat longer example input"])
    return {k: features[k] for k in INPUTS if k in features}


def _openvino_key(source: Path) -> str:
    """What the converted graph depends on: the model's files (names, sizes, mtimes) and the
    versions of the libraries that trace and convert it."""
    import openvino as ov
    import torch
    import transformers

    parts = [ov.__version__, torch.__version__, transformers.__version__, str(source.resolve())]
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        stat = path.stat()
        parts.append(f"{path.relative_to(source)}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def _openvino_model(st: SentenceTransformer, source: Path | None):
    """The transformer as an OpenVINO model: read from the cache when converted before."""
    import openvino as ov

    def convert():
        with _quiet_tracing():
            return ov.convert_model(_core_module(st), example_input=_example(st))

    if source is None or not source.is_dir():
        return convert()

    def build(tmp: Path) -> None:  # fp32 kept as is: a compressed copy would change scores
        ov.save_model(convert(), str(tmp / "model.xml"), compress_to_fp16=False)

    entry = build_atomically(cache_dir("models") / f"openvino-{_openvino_key(source)}", build)
    return ov.Core().read_model(str(entry / "model.xml"))


def _openvino_runner(
    st: SentenceTransformer, precision: str, threads: int | None, source: Path | None = None
):
    import numpy as np
    import openvino as ov

    model = _openvino_model(st, source)
    config: dict[str, Any] = {
        "INFERENCE_PRECISION_HINT": OV_PRECISION[precision],
        "PERFORMANCE_HINT": "LATENCY",
        "NUM_STREAMS": 1,
    }
    if threads:
        config["INFERENCE_NUM_THREADS"] = int(threads)
    with signal_stack_kept():  # OpenVINO swaps it, and frees it with the model
        compiled = ov.Core().compile_model(model, "CPU", config)
        request = compiled.create_infer_request()
    names = [p.get_any_name() for p in compiled.inputs]

    def run(features: dict[str, Any]) -> np.ndarray:
        feeds = {n: features[n].numpy() for n in names}
        return request.infer(feeds)[compiled.outputs[0]]

    return run


def _onnx_runner(
    st: SentenceTransformer, precision: str, threads: int | None, source: Path | None = None
):
    import numpy as np
    import onnxruntime as ort
    import torch

    if precision != "fp32":
        raise ValueError(f"the onnx runtime runs fp32 here, not {precision}")
    example = _example(st)
    names = list(example)
    buf = io.BytesIO()
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    with _quiet_tracing():
        torch.onnx.export(
            _core_module(st),
            tuple(example[n] for n in names),
            buf,
            input_names=names,
            output_names=["token_embeddings"],
            dynamic_axes={**axes, "token_embeddings": {0: "batch", 1: "tokens"}},
            opset_version=17,
            dynamo=False,
        )
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
    session = ort.InferenceSession(buf.getvalue(), options, providers=["CPUExecutionProvider"])

    def run(features: dict[str, Any]) -> np.ndarray:
        return session.run(None, {n: features[n].numpy() for n in names})[0]

    return run


def use_runtime(
    st: SentenceTransformer,
    backend: str,
    precision: str,
    threads: int | None,
    source: str | os.PathLike[str] | None = None,
) -> SentenceTransformer:
    """`st` with its transformer's forward pass run by `backend` ("openvino" or "onnx").
    `source`: the model's folder, which keys the cached conversion (None: not cached)."""
    import torch

    runner = {"openvino": _openvino_runner, "onnx": _onnx_runner}[backend]
    run = runner(st, precision, threads, Path(source) if source is not None else None)
    first = st[0]

    def forward(features: dict[str, Any], **_: Any) -> dict[str, Any]:
        out = run(features)
        features["token_embeddings"] = torch.from_numpy(out.astype("float32", copy=False))
        return features

    first.forward = forward  # the instance's forward: nn.Module.__call__ calls it
    st._lasagna_runtime = backend
    return st
