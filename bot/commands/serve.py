"""`factnote serve`: the moderator review web app under uvicorn."""

from __future__ import annotations

import typer

from bot.config import Settings
from storage.db import Database


def command(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    secure_cookies: bool | None = typer.Option(
        None,
        "--secure-cookies/--no-secure-cookies",
        help="Mark session cookies Secure always / never. Default: the web.secure_cookies "
        "setting (FACTNOTE_WEB__SECURE_COOKIES), else only on requests that came over HTTPS.",
    ),
) -> None:
    """Serve the review queue, item pages, decisions log, admin pages and /metrics.

    Sessions are signed with FACTNOTE_WEB_SECRET (set it, or sessions end on restart).
    /metrics answers loopback clients only, unless FACTNOTE_WEB__METRICS_TOKEN is set: then
    it needs `Authorization: Bearer <token>`. Behind a reverse proxy, list it in
    web.trusted_proxies so the client address and HTTPS are seen.
    Create the first account with `factnote users add NAME --role admin`."""
    import uvicorn

    from bot.web.app import create_app

    settings: Settings = ctx.obj
    db = Database(settings.database_url)
    try:
        app = create_app(settings, db, secure_cookies=secure_cookies)
        # Forwarded headers are handled in the app, from web.trusted_proxies only.
        uvicorn.run(app, host=host, port=port, proxy_headers=False, server_header=False)
    finally:
        db.dispose()
