"""Open endpoints for operations: `/healthz`, `/metrics` (local or bearer token only) and the
icon browsers ask for at `/favicon.ico` whatever the page links."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import Response

from bot.ops.metrics import render
from bot.web.context import Ctx
from bot.web.security import bearer_matches, is_local_request
from storage.db import ping

router = APIRouter()


FAVICON = Path(__file__).resolve().parent.parent / "static" / "favicon.svg"


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    # An SVG under the name browsers try first: every browser the app supports draws it.
    return FileResponse(
        FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


@router.get("/healthz")
def healthz(ctx: Ctx) -> JSONResponse:
    try:
        with ctx.db.session() as session:
            ping(session)
    except Exception as exc:  # the probe reports, it does not raise
        return JSONResponse({"status": "error", "error": type(exc).__name__}, 503)
    return JSONResponse({"status": "ok"})


@router.get("/metrics")
def metrics(request: Request, ctx: Ctx) -> Response:
    if ctx.metrics_token:
        if not bearer_matches(request.headers.get("authorization"), ctx.metrics_token):
            return PlainTextResponse(
                "A valid bearer token is required.\n",
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
    elif not is_local_request(request, proxies_trusted=bool(ctx.proxies)):
        return PlainTextResponse(
            "Metrics are served to this machine only (or set FACTNOTE_WEB__METRICS_TOKEN).\n",
            status_code=403,
        )
    return Response(render(ctx.metrics), media_type=CONTENT_TYPE_LATEST)
