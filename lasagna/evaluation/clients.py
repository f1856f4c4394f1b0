"""Let an executor that uses a global OpenAI / Anthropic client (as many examples do)
travel to Ray workers: such a client holds locks and sockets and cannot be pickled, so it is
pickled as its settings (key, base URL, retries) and rebuilt in the worker."""

from __future__ import annotations

import copyreg
import sys
from typing import Any

CLIENTS = (
    ("openai", ("OpenAI", "AsyncOpenAI")),
    ("anthropic", ("Anthropic", "AsyncAnthropic")),
)
SETTINGS = ("api_key", "organization", "project", "max_retries")
_DONE: set[str] = set()


def _rebuild(cls: type, settings: dict[str, Any]) -> Any:
    return cls(**settings)


def _reduce(client: Any) -> tuple[Any, tuple[type, dict[str, Any]]]:
    settings = {k: getattr(client, k) for k in SETTINGS if getattr(client, k, None) is not None}
    settings["base_url"] = str(client.base_url)
    if isinstance(getattr(client, "timeout", None), int | float):
        settings["timeout"] = client.timeout
    return _rebuild, (type(client), settings)


def register_client_pickling() -> None:
    """For the SDKs the process has imported (importing them here would cost seconds)."""
    for module, names in CLIENTS:
        if module in _DONE or module not in sys.modules:
            continue
        for name in names:
            cls = getattr(sys.modules[module], name, None)
            if isinstance(cls, type):
                copyreg.pickle(cls, _reduce)
        _DONE.add(module)
