"""Write synthesized rows as JSON Lines, atomically: a complete file or none at all."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from lasagna.errors import Problem, UserError


def refuse_existing(path: str | Path, overwrite: bool, option: str = "--force") -> None:
    """A UserError when `path` exists and may not be replaced, or cannot be written (a file
    in the way of its folder, no permission): checked before any model loads."""
    from lasagna.common.folders import unwritable

    blocked = unwritable(Path(path).absolute().parent)
    if blocked is not None:
        raise UserError(
            Problem(
                f"the output file cannot be written: {blocked.strerror} ({blocked.filename})",
                file=str(path),
                field="--out",
                fix="choose another --out",
            )
        )
    if Path(path).exists() and not overwrite:
        raise UserError(
            Problem(
                "the output file exists; lasagna does not overwrite it unless asked",
                file=str(path),
                field="--out",
                fix=f"choose another --out, or pass {option} to replace it",
            )
        )


def write_jsonl(rows: Iterable[dict], path: str | Path, overwrite: bool = False) -> Path:
    """One JSON object per line (UTF-8), written to a temporary file beside `path`, then
    renamed into place, so an interrupted write never leaves a half file; no rows is a
    UserError, and no file."""
    final = Path(path)
    refuse_existing(final, overwrite, option="overwrite=True")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex}")
    try:
        written = 0
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += 1
            fh.flush()
            os.fsync(fh.fileno())
        if not written:  # an empty file would only fail later, as data with no question
            raise UserError(
                Problem(
                    "no row to write: every question was dropped (rows.drop_reasons() says why)",
                    file=str(final),
                    fix="a stronger model (a model folder or cached Hugging Face id, on GPUs, "
                    "or an API model): the packaged 135M model keeps few questions",
                )
            )
        if overwrite:
            os.replace(tmp, final)
        else:
            try:  # link refuses an existing target: a file created meanwhile is not replaced
                os.link(tmp, final)
            except FileExistsError:
                refuse_existing(final, False, option="overwrite=True")
    finally:
        tmp.unlink(missing_ok=True)
    return final
