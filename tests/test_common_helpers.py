"""The shared helpers (lasagna.common): one canonical JSON, one digest recipe, one URI rule."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lasagna.common.digest import canonical_json, file_sha256, folder_sha256, json_sha256
from lasagna.common.uri import is_uri, local_path
from lasagna.results.fs import Store
from lasagna.sweep.schema import resolve_output


def test_canonical_json_is_one_text_per_value() -> None:
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"é","b":[1,2]}'
    assert json_sha256({"a": 1, "b": 2}) == json_sha256({"b": 2, "a": 1})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})  # no stable spelling, no digest


def test_file_and_folder_digests(tmp_path: Path) -> None:
    f = tmp_path / "m" / "w.bin"
    f.parent.mkdir()
    f.write_bytes(b"weights")
    assert file_sha256(f) == hashlib.sha256(b"weights").hexdigest()
    before = folder_sha256(f.parent)
    (f.parent / ".cache").mkdir()
    (f.parent / ".cache" / "x").write_text("bookkeeping")
    assert folder_sha256(f.parent) == before  # dot-entries are not the model
    f.write_bytes(b"weights, edited")
    assert folder_sha256(f.parent) != before


@pytest.mark.parametrize(
    ("location", "remote"),
    [("s3://b/r", True), ("memory://x", True), ("file:///tmp/r", False), ("results", False)],
)
def test_file_urls_are_local_everywhere(location: str, remote: bool, tmp_path: Path) -> None:
    assert is_uri(location) is remote
    if not remote:  # the sweep's output and the store agree on where a file:// URL points
        assert Store(location).local
        assert resolve_output(location, tmp_path) == str(tmp_path / local_path(location))


def test_file_url_with_localhost_is_the_absolute_path() -> None:
    assert local_path("file://localhost/tmp/r") == "/tmp/r"
    assert Store("file://localhost/tmp/r").root == "/tmp/r"
    assert resolve_output("file:///tmp/r", Path("/elsewhere")) == "/tmp/r"


def test_version_matches_pyproject() -> None:
    import tomllib

    import lasagna
    from lasagna.common.version import lasagna_version

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["version"]
    assert lasagna_version() == lasagna.__version__ == declared


def test_descendants_are_found_and_ended_only_while_their_ids_are_theirs() -> None:
    import subprocess
    import time

    from lasagna.common.processes import descendants_of, kill_if_same

    shell = subprocess.Popen(["bash", "-c", "sleep 60 & sleep 60 & wait"])
    try:
        deadline = time.monotonic() + 10
        while len(found := descendants_of(shell.pid)) < 2:
            assert time.monotonic() < deadline, found
            time.sleep(0.05)
        pid, started = found[0]
        assert kill_if_same([(pid, started + 1)]) == 0  # a reused id is not ours to end
        assert kill_if_same(found) == 2
        assert shell.wait(timeout=10) == 0 and descendants_of(shell.pid) == []
    finally:
        shell.kill()
