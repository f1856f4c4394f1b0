"""Which model writes the questions: `--model` or MODEL_NAME, and the key an API model needs.

Local models (`packaged:SmolLM2-135M-Instruct`, a model folder, a cached Hugging Face id) run
keyless on vLLM in Ray actors. A name such as `gpt-4o-mini` or `claude-sonnet-4-5` (or one
written `openai:NAME` / `anthropic:NAME`) is an API model and needs its key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from lasagna.errors import Problem, UserError
from lasagna.models.spec import model_backend
from lasagna.systems import PACKAGED_GENERATOR, ModelSpec, StageResources

MODEL_VARIABLE = "MODEL_NAME"
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
VARIABLES_READ = (MODEL_VARIABLE, *KEY_VARIABLES.values(), *URL_VARIABLES.values())
MAX_TOKENS = 128  # the longest reply a synthesis prompt asks for
BATCH = 32  # requests per actor call (one vLLM batch)

KEYLESS_FIX = (
    f"run keyless on a local model: --model {PACKAGED_GENERATOR} (or a model folder, or a "
    "Hugging Face id in the local cache); or set an API key and "
    f"{MODEL_VARIABLE} (e.g. OPENAI_API_KEY=... {MODEL_VARIABLE}=gpt-4o-mini)"
)


def _variables_read() -> str:
    return ", ".join(VARIABLES_READ) + " and --model"


def choose_model(model: str | None, environ: Mapping[str, str] | None = None) -> ModelSpec:
    """The ModelSpec to synthesize with; a UserError before anything loads when none can run."""
    env = os.environ if environ is None else environ
    name = (model or env.get(MODEL_VARIABLE, "")).strip()
    keys = [var for var in KEY_VARIABLES.values() if env.get(var, "").strip()]
    if not name:
        if keys:
            message = f"{keys[0]} is set but no model is chosen; read: {_variables_read()}"
            fix = f"set {MODEL_VARIABLE} or --model to the API model's name, or {KEYLESS_FIX}"
        else:
            message = f"no model chosen and no API key set; variables read: {_variables_read()}"
            fix = KEYLESS_FIX
        raise UserError(Problem(message, field="--model", fix=fix))
    backend, model_name = model_backend(name)
    if backend in KEY_VARIABLES and not env.get(KEY_VARIABLES[backend], "").strip():
        raise UserError(
            Problem(
                f"the API model '{model_name}' needs {KEY_VARIABLES[backend]}, which is not set; "
                f"variables read: {_variables_read()}",
                field="--model",
                fix=f"export {KEY_VARIABLES[backend]}=... ({URL_VARIABLES[backend]} for another "
                f"endpoint), or {KEYLESS_FIX}",
            )
        )
    return ModelSpec(
        model=model_name,
        backend=backend,  # type: ignore[arg-type]
        temperature=0.0,
        max_tokens=MAX_TOKENS,
        resources=StageResources(batch_size=BATCH),
    )


def check_synthesis_model(spec: ModelSpec) -> None:
    """Refuse a local model that does not resolve (a missing path, an uncached hub id) before
    Ray starts, naming `--model` (looked up, not converted: a dry run loads nothing)."""
    from dataclasses import replace

    from lasagna.models.registry import check_model, is_local

    if not is_local(spec.backend):
        return  # its key was checked when it was chosen
    try:
        check_model(spec, prepare=False)
    except UserError as err:
        problems = [
            replace(p, field="--model", message=f"the synthesis model: {p.message}")
            for p in err.problems
        ]
        raise UserError(problems) from None


def model_label(spec: ModelSpec) -> str:
    """The model as recorded in each row's metadata: the name the user gave."""
    return spec.model if spec.backend == "vllm" else f"{spec.backend}:{spec.model}"
