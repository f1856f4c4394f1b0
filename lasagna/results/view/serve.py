"""Run the `lasagna view` app with uvicorn on a loopback address (or, when asked to,
another one), and say where it is."""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import TextIO

from lasagna.errors import Problem, UserError
from lasagna.results.layout import Output

LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int, allow_remote: bool) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); a non-loopback host only with
    `allow_remote` (the server has no authentication)."""
    if not is_loopback(host) and not allow_remote:
        raise UserError(
            Problem(
                f"{host} is not a loopback address: anyone who can reach it could read every "
                "run (lasagna view has no authentication)",
                field="--host",
                fix="keep the default 127.0.0.1 (and use an SSH tunnel), or add --allow-remote "
                "to serve on it anyway",
            )
        )
    if not 0 <= port <= 65535:
        raise UserError(
            Problem(
                f"{port} is not a port (0-65535)",
                field="--port",
                fix="pick a port from 1024 to 65535 (0: any free one)",
            )
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as err:
        sock.close()
        raise UserError(
            Problem(
                f"cannot listen on {host}:{port}: {err.strerror}",
                field="--port",
                fix="pick another --port (0: any free one)",
            )
        ) from err
    sock.listen(128)
    return sock


def serve(
    output: Output,
    host: str = "127.0.0.1",
    port: int = 8765,
    allow_remote: bool = False,
    out: TextIO = sys.stdout,
) -> None:
    """Serve `output` until interrupted. Prints the URL (one line, flushed) first."""
    import uvicorn

    from lasagna.results.fs import Store
    from lasagna.results.view import create_app

    sock = bind(host, port, allow_remote)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(
            f"warning: serving on {host}:{bound}, not a loopback address, with no "
            "authentication: anyone who can reach this port can read every run here",
            file=sys.stderr,
        )
    store = Store(output)
    if not store.local:  # a wrong bucket, endpoint or credentials: said now, not on each page
        store.listdir(store.root)
    if store.local and not store.exists(store.root):
        print(
            f"note: {store.display} does not exist yet; runs written there will appear",
            file=sys.stderr,
        )
    print(f"lasagna view: serving {store.display} (read-only) at http://{shown}:{bound}/", file=out)
    out.flush()
    config = uvicorn.Config(create_app(output), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
