"""scripts/gpu_check.py's CPU dry run: the same code the GPU box runs (lasagna's embedder,
precision and encoding plan, exact search by a torch product, nDCG from lasagna.metrics),
on 4 judged SciFact documents, prints its table and the transformers chat backend's row; and
its carried folder (with the wheels of pydantic the GPU box lacks) fits a device call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from reference_data import SCIFACT, missing

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "gpu_check.py"


@pytest.mark.slow
def test_dry_run_prints_one_table_with_every_precision(tmp_path: Path) -> None:
    if not SCIFACT.is_dir():
        pytest.skip(missing(SCIFACT))
    data = SCIFACT
    carried = tmp_path / "carried"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--pack", str(carried), "--data", str(data)]
        + ["--python", f"{sys.version_info.major}.{sys.version_info.minor}"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    size = sum(p.stat().st_size for p in carried.rglob("*") if p.is_file())
    assert size < 56 * 2**20  # with the repository (~5 MiB), under a device call's 64 MiB
    wheels = sorted(p.name.split("-")[0] for p in (carried / "wheels").glob("*.whl"))
    assert wheels == sorted(
        ["annotated_types", "pydantic", "pydantic_core", "typing_extensions", "typing_inspection"]
    )
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert any(tag in p.name for p in (carried / "wheels").glob("pydantic_core-*.whl"))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run", "--docs", "4", "--carried", str(carried)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    precisions = out.split("published fp32")[0]  # the first table: the embedder's
    table = [line for line in precisions.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| precision | nDCG@10")
    rows = {line.split(" | ")[0].strip("| "): line for line in table[1:]}
    assert set(rows) == {"fp32", "bf16"}
    assert "| +0.00000 | ok | yes |" in rows["fp32"]
    assert " | yes | " in rows["bf16"]  # batch-invariant on this CPU too
    # the transformers chat backend on the tiny carried model: the key's dtype is what ran,
    # and the 4 requests answer alike alone and in one batch
    assert "chat: carried wheels not needed" in out  # this Python has pydantic
    assert "| transformers | cpu | float32 / float32 | 4 | " in out
    assert out.split("| transformers | cpu | ")[1].split("\n")[0].endswith("| 4/4 |")
