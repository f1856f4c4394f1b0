"""`lasagna models list`: what this machine can run without a download, and how."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lasagna.cli import main
from lasagna.models.available import api_models, cached_models, packaged_models
from lasagna.models.precision import hardware_kind, resolve_setting


def _fake_cache(root: Path, repo: str, files: dict[str, bytes]) -> None:
    """A Hugging Face hub cache entry laid out as the hub writes it (blobs, a snapshot of
    links to them, refs/main)."""
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "blobs").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("0" * 40)
    snapshot = folder / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for i, (name, data) in enumerate(files.items()):
        (folder / "blobs" / f"blob{i}").write_bytes(data)
        os.symlink(f"../../blobs/blob{i}", snapshot / name)


def test_packaged_models_say_how_they_run_here():
    models = {m.name: m for m in packaged_models()}
    embedder = models["packaged:all-MiniLM-L6-v2"]
    backend, precision = resolve_setting("auto", "auto", gpu=False)
    assert embedder.kind == "embedder"
    assert embedder.state.startswith(f"{backend} {precision} on {hardware_kind(False)}")
    generator = models["packaged:SmolLM2-135M-Instruct"]
    assert generator.kind == "generator / judge" and "dtype auto = " in generator.state


def test_cached_models_and_api_keys(tmp_path, monkeypatch, capsys):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "none"))
    assert cached_models() == (str(tmp_path / "none"), [])
    _fake_cache(tmp_path, "org/tiny-chat", {"config.json": b"{}"})
    _fake_cache(tmp_path, "org/tiny-embed", {"config.json": b"{}", "modules.json": b"[]"})
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    folder, models = cached_models()
    assert folder == str(tmp_path)
    assert [(m.name, m.kind) for m in models] == [
        ("org/tiny-chat", "generator / judge"),
        ("org/tiny-embed", "embedder"),
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    states = {m.kind: m.state for m in api_models()}
    assert states == {
        "openai API": "OPENAI_API_KEY is set",
        "anthropic API": "needs ANTHROPIC_API_KEY",
    }
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "packaged:all-MiniLM-L6-v2" in out and "org/tiny-embed" in out
    assert "sk-test" not in out  # a key is never printed


@pytest.mark.parametrize("argv", [["models", "--help"], ["models", "list", "--help"]])
def test_models_help(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0 and "list" in capsys.readouterr().out
