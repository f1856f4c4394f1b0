"""The HTTP side of `lasagna view`: Starlette routes around `View`'s pages, the JSON the
pages fetch, the static assets (cached for good: their URL holds their digest), and the
404 / damaged-run pages. Every route answers GET only: the server changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from lasagna.errors import UserError
from lasagna.results.layout import Output
from lasagna.results.view.app import STATIC, View, _asset
from lasagna.results.view.index import DamagedRun, NotFound


def _by(request: Request) -> tuple[str, ...]:
    """The metadata keys a page is sliced by: `?by=type&by=level`."""
    return tuple(dict.fromkeys(k for k in request.query_params.getlist("by") if k))


def _page_number(request: Request) -> int:
    try:
        return int(request.query_params.get("page", "1"))
    except ValueError:
        return 1


def create_app(output: Output, refresh_s: float = 1.0, poll_ms: int = 1000) -> Starlette:
    """The ASGI app serving `output` (a results folder or URI), read-only."""
    return routes(View(output, refresh_s, poll_ms))


def routes(view: View) -> Starlette:
    async def page(make: Callable[[], str]) -> Response:
        """A page made in a worker thread (it reads Parquet); errors as pages."""
        try:
            return HTMLResponse(await run_in_threadpool(make))
        except DamagedRun as err:
            html = view.error_page(422, str(err), err.broken)
            return HTMLResponse(html, status_code=422)
        except NotFound as err:
            return HTMLResponse(view.error_page(404, str(err)), status_code=404)
        except UserError as err:  # a run whose files cannot be read
            return HTMLResponse(view.error_page(422, err.render()), status_code=422)

    async def home(request: Request) -> Response:
        by = _by(request)
        return await page(lambda: view.home(by))

    async def run(request: Request) -> Response:
        ref, number, by = request.path_params["run"], _page_number(request), _by(request)
        return await page(lambda: view.run_page(ref, number, by))

    async def trial(request: Request) -> Response:
        ref, key = request.path_params["run"], request.path_params["key"]
        number = _page_number(request)
        return await page(lambda: view.trial_rows(ref, key, number))

    async def group(request: Request) -> Response:
        key, by = request.path_params["key"], _by(request)
        return await page(lambda: view.group_page(key, by))

    async def compare(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        if not a or not b:
            message = "give two runs: /compare?a=RUN_A&b=RUN_B (ids or unique prefixes)"
            return HTMLResponse(view.error_page(404, message), status_code=404)
        return await page(lambda: view.compare_page(a, b))

    async def question(request: Request) -> Response:
        key, qid = request.path_params["key"], request.path_params["qid"]
        return await page(lambda: view.question_page(key, qid))

    async def trace(request: Request) -> Response:
        return await page(lambda: view.trace_page(request.path_params["trace"]))

    async def drill(request: Request) -> Response:
        q = request.query_params
        try:
            got = await run_in_threadpool(
                view.drill, q.get("scope", "all"), q.get("kind", ""), q.get("key", "")
            )
        except (NotFound, DamagedRun) as err:
            return JSONResponse({"error": str(err)}, status_code=404)
        except UserError as err:
            return JSONResponse({"error": err.render()}, status_code=422)
        if got is None:
            return JSONResponse({"error": f"no group {q.get('key')!r}"}, status_code=404)
        return JSONResponse(got)

    async def live(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(view.live))

    async def runs(request: Request) -> Response:
        def listed() -> list[dict[str, Any]]:
            out = [
                {"id": r.run_id, "created_at": r.manifest.get("created_at"), "kind": k}
                for r in view.index.runs()
                for k in [r.manifest.get("kind") or "benchmark"]
            ]
            return out + [{"id": b.name, "damaged": b.error} for b in view.index.broken()]

        return JSONResponse(await run_in_threadpool(listed))

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            raise HTTPException(404)
        headers = {"Cache-Control": "public, max-age=31536000, immutable"}
        return Response(_asset(name), media_type=STATIC[name][1], headers=headers)

    async def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        message = f"no page at {request.url.path}" if code == 404 else str(exc)
        return HTMLResponse(view.error_page(code, message), status_code=code)

    return Starlette(
        routes=[
            Route("/", home),
            Route("/run/{run}", run),
            Route("/run/{run}/trial/{key:path}", trial),
            Route("/group/{key:path}", group),
            Route("/compare", compare),
            Route("/question/{key}/{qid:path}", question),
            Route("/trace/{trace}", trace),
            Route("/api/drill", drill),
            Route("/api/live", live),
            Route("/api/runs", runs),
            Route("/static/{digest}/{name}", static),
        ],
        exception_handlers={HTTPException: not_found},
    )
