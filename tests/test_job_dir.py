"""An output inside the working-dir copy of a `ray job submit` job is refused (unit tests of
the detection; tests/test_ray_job.py submits a real job)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.engine.job_dir import (
    JOB_CONFIG_ENV,
    check_output_outside_job_copy,
    job_working_dir_copy,
)
from lasagna.errors import UserError


def _job_env(working_dir: str | None = "gcs://_ray_pkg_0123abcd.zip") -> dict[str, str]:
    """What Ray's job supervisor sets for a job's driver (job_supervisor._get_driver_env_vars)."""
    runtime_env = {"working_dir": working_dir} if working_dir else {}
    return {JOB_CONFIG_ENV: json.dumps({"runtime_env": runtime_env, "metadata": {}})}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A job's copy as Ray 2.60 unpacks it, with the sweep's sub-folder."""
    folder = tmp_path / "session_x/runtime_resources/working_dir_files/_ray_pkg_0123abcd"
    (folder / "configs").mkdir(parents=True)
    return folder


def test_the_copy_is_found_from_any_folder_inside_it(copy):
    assert job_working_dir_copy(str(copy), _job_env()) == copy.resolve()
    assert job_working_dir_copy(str(copy / "configs"), _job_env()) == copy.resolve()


@pytest.mark.parametrize("env", [{}, _job_env(None), {JOB_CONFIG_ENV: "not json"}])
def test_no_job_or_no_working_dir_is_no_copy(copy, env):
    assert job_working_dir_copy(str(copy), env) is None


@pytest.mark.parametrize("output", ["results", "./out/here", "configs/../results"])
def test_a_relative_output_in_a_job_is_refused_naming_the_path(copy, output):
    with pytest.raises(UserError) as err:
        check_output_outside_job_copy(output, "output", str(copy), _job_env())
    text = err.value.render()
    assert str((copy / output).resolve()) in text
    assert "working_dir_files" in text and "Ray deletes that copy" in text
    assert "absolute path" in text and "s3://bucket/results" in text
    assert err.value.exit_code == 2


def test_an_absolute_output_or_a_uri_is_kept(copy, tmp_path):
    for output in (str(tmp_path / "kept"), "s3://bucket/results", "gs://b/r"):
        check_output_outside_job_copy(output, "output", str(copy), _job_env())


def test_outside_a_job_a_relative_output_is_fine(copy):
    check_output_outside_job_copy("results", "output", str(copy), {})


def test_the_sdk_fix_names_evaluate_output(copy):
    with pytest.raises(UserError) as err:
        check_output_outside_job_copy("results", "output=", str(copy), _job_env())
    assert "evaluate() an absolute path" in err.value.render()
