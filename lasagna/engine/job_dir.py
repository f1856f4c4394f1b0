"""An output inside a Ray job's copy of its working dir is refused before the run starts.

`ray job submit --working-dir .` runs the command in a copy of that folder that Ray unpacks
under its session folder (`<session>/runtime_resources/working_dir_files/_ray_pkg_<hash>/`)
and deletes when the job ends or the copy is no longer used: a relative `output:` (or the
default `./results`) lands there, the job says "succeeded", and the results are gone. Ray's
job supervisor tells its driver the job's runtime env in RAY_JOB_CONFIG_JSON_ENV_VAR (the
`working_dir` there is a `gcs://_ray_pkg_<hash>.zip` URI, not the folder): the copy is the
folder of the working dir's files that the command's current folder lies in.

Refused (exit 2) rather than warned: a warning scrolls by in `ray job logs` while a long
sweep then runs to the end for nothing; the fix is one absolute path or URI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from lasagna.common.uri import is_uri
from lasagna.errors import Problem, UserError

JOB_CONFIG_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"  # ray._private.runtime_env.constants
COPIES = "working_dir_files"  # ray._private.runtime_env.working_dir: where copies unpack
_FIXES = {
    "output": "give an absolute path on a disk the job's node keeps (--output /data/results, "
    "or output: /data/results in the sweep) or a URI every node reaches (--output "
    "s3://bucket/results)",
    "output=": "give evaluate() an absolute path on a disk the job's node keeps "
    "(output='/data/results') or a URI every node reaches (output='s3://bucket/results')",
}


def job_working_dir_copy(cwd: str | None = None, environ: dict | None = None) -> Path | None:
    """The folder of this job's working-dir copy when this process is the driver of a Ray
    job submitted with a working dir, else None."""
    environ = os.environ if environ is None else environ
    try:
        config = json.loads(environ.get(JOB_CONFIG_ENV) or "{}")
    except ValueError:
        return None
    runtime_env = config.get("runtime_env") if isinstance(config, dict) else None
    if not isinstance(runtime_env, dict) or not runtime_env.get("working_dir"):
        return None
    here = Path(cwd or os.getcwd()).resolve()
    parts = here.parts
    if COPIES in parts[:-1]:  # the package folder right under working_dir_files/
        return Path(*parts[: parts.index(COPIES) + 2])
    return here  # an unfamiliar layout: the job runs in its copy, so the current folder


def check_output_outside_job_copy(
    output: str,
    given_as: str = "output",
    cwd: str | None = None,
    environ: dict | None = None,
) -> None:
    """Refuse a local `output` inside the job's working-dir copy (it vanishes with it).
    `given_as` names where the output came from (`--output`, the sweep's `output:`)."""
    copy = job_working_dir_copy(cwd, environ)
    if copy is None or is_uri(str(output)):
        return
    path = Path(cwd or os.getcwd(), os.path.expanduser(str(output))).resolve()
    if path != copy and copy not in path.parents:
        return
    raise UserError(
        Problem(
            f"the results would go to {path}, inside the copy of the working dir that "
            f"`ray job submit --working-dir` made for this job ({copy}); Ray deletes that "
            "copy, and the results with it",
            field=given_as,
            fix=_FIXES.get(given_as, _FIXES["output"]),
        )
    )
