"""Model identity: what goes into the trial key, and what never does."""

from __future__ import annotations

import hashlib

from lasagna.models.identity import model_identity
from lasagna.models.packaged import packaged_gguf_path
from lasagna.models.prompts import CLOSED_BOOK_TEMPLATE, RAG_TEMPLATE
from lasagna.systems import ModelSpec


def test_packaged_identity_hashes_the_gguf():
    ident = model_identity(ModelSpec(), RAG_TEMPLATE)
    gguf = packaged_gguf_path()
    assert ident["files_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert ident["backend"] == "vllm"
    assert ident["prompt_sha256"] == hashlib.sha256(RAG_TEMPLATE.encode()).hexdigest()
    assert ident["sampling"] == {"temperature": 0.0, "max_tokens": 64, "stop": [], "seed": 0}


def test_identity_changes_with_template_and_sampling_but_not_resources():
    base = model_identity(ModelSpec(), RAG_TEMPLATE)
    assert model_identity(ModelSpec(), CLOSED_BOOK_TEMPLATE) != base
    assert model_identity(ModelSpec(max_tokens=8), RAG_TEMPLATE) != base
    assert model_identity(ModelSpec(temperature=0.7), RAG_TEMPLATE) != base
    assert model_identity(ModelSpec(stop=("\n",)), RAG_TEMPLATE) != base
    assert model_identity(ModelSpec(backend="transformers"), RAG_TEMPLATE) != base
    more = ModelSpec.model_validate({"resources": {"actors": 3, "batch_size": 4}})
    assert model_identity(more, RAG_TEMPLATE) == base


def test_local_folder_identity_follows_file_contents(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"weights-v1")
    spec = ModelSpec(model=str(tmp_path), backend="transformers")
    first = model_identity(spec, RAG_TEMPLATE)["files_sha256"]
    assert first is not None
    (tmp_path / "model.safetensors").write_bytes(b"weights-v2!")
    assert model_identity(spec, RAG_TEMPLATE)["files_sha256"] != first


def test_api_identity_has_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    ident = model_identity(ModelSpec(model="gpt-4o-mini", backend="openai"), RAG_TEMPLATE)
    assert ident["files_sha256"] is None
    assert "sk-secret-value" not in repr(ident)
