"""The GPU check's chat part: lasagna's transformers chat backend (`HfChatModel`) on the GPU.

No real chat model fits the check's carried folder beside the embedder (the packaged
SmolLM2-135M is 94 MiB even as a 4-bit GGUF), so this carries a tiny randomly initialised
Llama (2 layers, hidden 32, seed 0: ~3 MiB in fp16) with SmolLM2's real tokenizer and chat
template. Its answers mean nothing; what it checks is the code path a GPU run takes: the
model moved to CUDA, `dtype: auto` resolved there (and equal to what the trial key says),
left-padded batches under greedy decoding, and whether a request gives the same tokens alone
as in a batch. Written by hand (config, tokenizer files) so that transformers 4.x and 5.x
read it alike.
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
import time
from pathlib import Path

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "hidden_act": "silu",
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "tie_word_embeddings": True,
    "torch_dtype": "float16",
}
# lasagna's model specs need pydantic, which the GPU box lacks: carried as wheels (pure Python
# but pydantic-core, built for the box's Python), the versions installed here
WHEELS = ("pydantic", "pydantic-core", "annotated-types", "typing-inspection", "typing-extensions")
BOX_PYTHON = "3.12"  # the GPU box's python3
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
REQUESTS = 16  # questions asked as one batch
ALONE = 4  # of which asked again one at a time
MAX_TOKENS = 32


def pack_chat(dest: Path) -> None:
    """The tiny model (fp16 safetensors) and SmolLM2's tokenizer (gzipped) into `dest`."""
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM

    from lasagna.models.packaged import prepare_packaged_generator

    smollm = prepare_packaged_generator()
    dest.mkdir(parents=True, exist_ok=True)
    special = json.loads((smollm / "tokenizer_config.json").read_text())
    config = {
        **CONFIG,
        "vocab_size": json.loads((smollm / "config.json").read_text())["vocab_size"],
        "bos_token_id": 1,
        "eos_token_id": 2,
        "pad_token_id": 2,
    }
    (dest / "config.json").write_text(json.dumps(config, indent=1))
    torch.manual_seed(0)
    fields = {k: v for k, v in config.items() if k not in ("architectures", "torch_dtype")}
    model = LlamaForCausalLM(LlamaConfig(**fields))
    weights = {
        k: v.detach().to(torch.float16).contiguous()
        for k, v in model.state_dict().items()
        if k != "lm_head.weight"  # tied to the embedding
    }
    save_file(weights, str(dest / "model.safetensors"), metadata={"format": "pt"})
    tokens = {k: special[k] for k in ("bos_token", "eos_token", "pad_token", "unk_token")}
    template = (smollm / "chat_template.jinja").read_text()
    tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": template}
    (dest / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, **tokens}))
    with (
        (smollm / "tokenizer.json").open("rb") as f,
        gzip.open(dest / "tokenizer.json.gz", "wb") as out,
    ):
        shutil.copyfileobj(f, out)


def carry_wheels(dest: Path, python: str = BOX_PYTHON) -> None:
    """`WHEELS` at the versions installed here, for CPython `python` on x86-64 Linux."""
    import importlib.metadata
    import subprocess
    import sys

    pins = [f"{name}=={importlib.metadata.version(name)}" for name in WHEELS]
    where = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        + ["--python-version", python, "--implementation", "cp", *where, "-d", str(dest), *pins],
        check=True,
    )


def use_wheels(folder: Path) -> str:
    """Install the carried wheels into a temporary folder put first on sys.path, unless
    pydantic imports already; what was done, in words."""
    import importlib.util
    import subprocess
    import sys

    wheels = sorted(folder.glob("*.whl"))
    if importlib.util.find_spec("pydantic") is not None or not wheels:
        return "carried wheels not needed"
    site = tempfile.mkdtemp(prefix="lasagna-gpu-check-site-")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        + ["--no-compile", "--target", site, *map(str, wheels)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return f"carried wheels not installed: {done.stderr.strip().splitlines()[-1:]}"
    sys.path.insert(0, site)
    return f"installed {len(wheels)} carried wheels"


def unpacked(carried: Path) -> Path:
    """A temporary folder transformers can load: the carried one with its tokenizer unzipped."""
    folder = Path(tempfile.mkdtemp(prefix="lasagna-gpu-check-chat-"))
    for name in ("config.json", "model.safetensors", "tokenizer_config.json"):
        shutil.copy(carried / name, folder / name)
    with (
        gzip.open(carried / "tokenizer.json.gz", "rb") as f,
        (folder / "tokenizer.json").open("wb") as out,
    ):
        shutil.copyfileobj(f, out)
    return folder


def chat_row(carried: Path, questions: list[str], device: str) -> str:
    """One table row: the backend on `device` (cuda or cpu), its dtype as the key resolves it
    and as it ran, tokens/s of one batch, and requests answered alike alone and in a batch."""
    try:
        from lasagna.models.base import ChatRequest
        from lasagna.models.hf_backend import HfChatModel
        from lasagna.models.identity import resolved_dtype
        from lasagna.models.prompts import build_closed_book_messages
        from lasagna.models.spec import ModelSpec
    except ImportError as exc:  # the GPU box may lack a dependency of lasagna's model specs
        return f"| transformers | {device} | not run: {exc} | | | | |"
    import torch

    folder = unpacked(carried)
    try:
        spec = ModelSpec(model=str(folder), backend="transformers", max_tokens=MAX_TOKENS)
        model = HfChatModel(spec)
        ran = str(next(model.model.parameters()).dtype).removeprefix("torch.")
        key = resolved_dtype(spec, device == "cuda")
        asked = [ChatRequest(build_closed_book_messages(q)) for q in questions[:REQUESTS]]
        model.generate(asked[:2])  # warm up
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        batch = model.generate(asked)
        seconds = time.perf_counter() - t
        errors = [c.error for c in batch if c.error]
        if errors:
            return f"| transformers | {model.device} | {key} / {ran} | failed: {errors[0]} | | | |"
        pairs = zip(asked[:ALONE], batch[:ALONE], strict=True)
        alike = sum(model.generate([r])[0].text == c.text for r, c in pairs)
        tokens = sum(c.completion_tokens for c in batch)
        return (
            f"| transformers | {model.device} | {key} / {ran} | {len(asked)} | {tokens} | "
            f"{tokens / seconds:.0f} | {alike}/{min(ALONE, len(asked))} |"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


HEADER = (
    "| chat backend | device | dtype: key / ran | requests | new tokens | tokens/s "
    "| alone = in batch |\n|---|---|---|---|---|---|---|"
)
