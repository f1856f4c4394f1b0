"""`lasagna view`: a results root (a folder or an object-storage URI) served over HTTP,
read-only, while sweeps write into it.

The report's views from the report's own collection code and template (`lasagna report`
writes the same page offline), plus the live panel of running sweeps and evaluations (their
status files and checkpoints), SDK traces, one question across every run, and deep links.
`create_app` is the ASGI app; `serve` runs it with uvicorn.
"""

from lasagna.results.view.routes import create_app

__all__ = ["create_app"]
