"""The packaged generator: converted once, cached by the GGUF's hash; model resolution."""

from __future__ import annotations

import hashlib

import pytest

from lasagna.errors import UserError
from lasagna.models.packaged import (
    packaged_folder,
    packaged_gguf_path,
    prepare_packaged_generator,
    resolve_generator_model,
)
from lasagna.systems import ModelSpec


@pytest.mark.slow
def test_prepare_is_cached_and_keyed_by_gguf_hash():
    folder = prepare_packaged_generator()  # converts on the first run (~40 s), then cached
    sha = hashlib.sha256(packaged_gguf_path().read_bytes()).hexdigest()
    assert folder.name == f"SmolLM2-135M-Instruct-{sha[:16]}"
    assert (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()
    weights = folder / "model.safetensors"
    before = weights.stat().st_mtime_ns
    assert prepare_packaged_generator() == folder
    assert weights.stat().st_mtime_ns == before  # not rewritten
    assert resolve_generator_model(ModelSpec()) == str(folder)
    assert not any(
        p.name.startswith(".")
        for p in folder.parent.iterdir()
        if p.name != folder.name and p.name.startswith(f".{folder.name}")
    )  # no temp folder left behind


def test_cache_folder_follows_lasagna_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    assert packaged_folder().parent == tmp_path / "models"


def test_unknown_packaged_name_is_refused():
    with pytest.raises(UserError, match="packaged:Nope"):
        resolve_generator_model(ModelSpec(model="packaged:Nope"))


def test_missing_local_path_is_refused(tmp_path):
    with pytest.raises(UserError, match="does not exist") as err:
        resolve_generator_model(ModelSpec(model=str(tmp_path / "absent")))
    assert err.value.problems[0].field == "model"


def test_uncached_hub_id_offline_names_model_and_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(UserError) as err:
        resolve_generator_model(ModelSpec(model="someorg/not-cached-model"))
    text = str(err.value)
    assert "someorg/not-cached-model" in text and "Fix:" in text


def test_api_models_pass_through():
    assert (
        resolve_generator_model(ModelSpec(model="gpt-4o-mini", backend="openai")) == "gpt-4o-mini"
    )


def test_preparing_prints_two_lines_not_transformers_bars(monkeypatch, tmp_path, capsys):
    """transformers' per-tensor progress bars (tqdm on stderr) are replaced by one line
    before the conversion and one after (the conversion itself: the slow test above)."""
    import sys

    from lasagna.models import packaged

    def convert(gguf, out):
        print("\rConverting and de-quantizing GGUF tensors...: 10%", file=sys.stderr)
        (out / "config.json").write_text("{}")

    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    monkeypatch.setattr(packaged, "_convert_gguf", convert)
    folder = prepare_packaged_generator()
    err = capsys.readouterr().err
    assert "Converting" not in err and len(err.splitlines()) == 2
    assert "preparing the packaged SmolLM2-135M-Instruct" in err and str(folder) in err
    assert prepare_packaged_generator() == folder and capsys.readouterr().err == ""
