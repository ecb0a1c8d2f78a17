"""The moderator review app: queue, item pages with actions, the decisions log, admin
settings and users, `/healthz` and `/metrics`. Server-rendered with Jinja2 (auto-escaped).

Every page but `/login`, `/healthz`, `/metrics` and the stylesheet needs a session; every POST
needs the session's CSRF token. Moderator actions go through `bot.review`, which records who
did what and re-runs the guard on edits. Logins are throttled per name and per client address
(`bot.users.attempt_login`). `/metrics` needs `Authorization: Bearer <web.metrics_token>` when
that token is set, and otherwise answers only requests from this machine (loopback).
"""

from __future__ import annotations

import logging
import math
import secrets
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from fastapi import Depends, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import select, text
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from bot import overrides, review, users
from bot.config import Settings
from bot.metrics import registry_for, render
from bot.users import Account
from bot.web import csrf, dispatch, queries
from bot.web.auth import (
    LoginRequired,
    log_in,
    log_out,
    require_admin,
    require_user,
    safe_next,
    session_account,
)
from bot.web.render import contains_quote, day, highlight, safe_href, when
from bot.web.security import (
    SchemeAwareSessions,
    bearer_matches,
    client_address,
    is_local_request,
)
from pipeline import guard
from pipeline.records import Stance, Tier, Verdict, utcnow
from storage.db import Database
from storage.models import Request as RequestRow
from storage.models import RequestState

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SESSION_COOKIE = "factnote_session"
SESSION_MAX_AGE_S = 12 * 3600
_FLASH = "flash"


def _secret(configured: str) -> str:
    if configured:
        return configured
    log.warning(
        "FACTNOTE_WEB_SECRET is not set: using a random session secret, so sessions end when "
        "this process stops and are not shared between processes"
    )
    return secrets.token_urlsafe(48)


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template: post text, quotes and pages are untrusted
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(when=when, day=day, href=safe_href, highlight=highlight)
    env.globals.update(contains_quote=contains_quote)
    return Jinja2Templates(env=env)


def _float(raw: str | None) -> float | None:
    try:
        return float(raw) if raw not in (None, "") else None
    except ValueError:
        return None


def _date(raw: str | None) -> date | None:
    try:
        return date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def _normalise_text(raw: str) -> str:
    # Browsers send textarea line breaks as CRLF; the platforms count LF.
    return raw.replace("\r\n", "\n").replace("\r", "\n").strip()


def create_app(
    settings: Settings,
    db: Database,
    *,
    secret: str | None = None,
    secure_cookies: bool | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> FastAPI:
    """The review app over `db`, configured by `settings.web` (see `Settings.web_config`).
    `secret` signs session cookies (default: the configured web secret, else random per
    process); `secure_cookies` marks them Secure always (True) or never (False), overriding the
    setting, whose default is: when the request came over HTTPS. `clock` is the time the login
    throttle goes by."""
    web = settings.web_config()
    app = FastAPI(title="factnote review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.db = db
    app.state.settings = settings
    app.state.metrics = registry_for(db)
    templates = _templates()
    secure = web.secure_cookies if secure_cookies is None else secure_cookies
    login_policy = users.LoginPolicy.from_config(web)
    metrics_token = web.metrics_token.get_secret_value() if web.metrics_token else ""
    proxies = [h.strip() for h in web.trusted_proxies if h.strip()]

    @app.middleware("http")
    async def security_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        nonce = secrets.token_urlsafe(16)
        request.state.csp_nonce = nonce
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            f"script-src 'nonce-{nonce}'; form-action 'self'; frame-ancestors 'none'; "
            "base-uri 'none'"
        )
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    app.add_middleware(
        SchemeAwareSessions,
        secure=secure,
        secret_key=secret or _secret(web.secret.get_secret_value() if web.secret else ""),
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE_S,
        same_site="lax",
    )
    if proxies:
        # Outermost, so the sessions and every handler see the real client and scheme.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    def effective() -> Settings:
        return overrides.apply_overrides(settings, db)

    def flash(request: Request, kind: str, message: str) -> None:
        items = list(request.session.get(_FLASH) or [])
        items.append([kind, message[:500]])
        request.session[_FLASH] = items[-5:]  # the cookie has a size limit

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        account = getattr(request.state, "account", None)
        flashes = request.session.pop(_FLASH, None) or []
        context.update(
            user=account,
            csrf_token=csrf.csrf_token(request),
            csrf_field=csrf.FIELD,
            flashes=flashes,
            nonce=getattr(request.state, "csp_nonce", ""),
        )
        return templates.TemplateResponse(request, name, context, status_code=status)

    def redirect(url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=303)

    # --- errors ------------------------------------------------------------------------------

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, exc: LoginRequired) -> Response:
        return redirect("/login?" + urlencode({"next": exc.next_path}))

    @app.exception_handler(csrf.CsrfError)
    async def csrf_refused(request: Request, exc: csrf.CsrfError) -> Response:
        return page(
            request,
            "error.html",
            403,
            title="Forbidden",
            message="The form's security token is missing or invalid. Reload the page and retry.",
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if request.url.path.startswith("/static/"):
            return PlainTextResponse(str(exc.detail), status_code=exc.status_code)
        titles = {403: "Forbidden", 404: "Not found", 405: "Method not allowed"}
        return page(
            request,
            "error.html",
            exc.status_code,
            title=titles.get(exc.status_code, "Error"),
            message=str(exc.detail),
        )

    # --- open endpoints ----------------------------------------------------------------------

    @app.get("/healthz")
    def healthz() -> JSONResponse:
        try:
            with db.session() as session:
                session.execute(text("SELECT 1"))
        except Exception as exc:  # the probe reports, it does not raise
            return JSONResponse({"status": "error", "error": type(exc).__name__}, 503)
        return JSONResponse({"status": "ok"})

    @app.get("/metrics")
    def metrics(request: Request) -> Response:
        if metrics_token:
            if not bearer_matches(request.headers.get("authorization"), metrics_token):
                return PlainTextResponse(
                    "A valid bearer token is required.\n",
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
        elif not is_local_request(request, proxies_trusted=bool(proxies)):
            return PlainTextResponse(
                "Metrics are served to this machine only (or set FACTNOTE_WEB__METRICS_TOKEN).\n",
                status_code=403,
            )
        return Response(render(app.state.metrics), media_type=CONTENT_TYPE_LATEST)

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str = "/") -> Response:
        if session_account(request) is not None:
            return redirect(safe_next(next))
        return page(request, "login.html", next=safe_next(next), error=None, username="")

    @app.post("/login", dependencies=[Depends(csrf.verify_csrf)])
    def login(
        request: Request,
        username: str = Form(""),
        password: str = Form(""),
        next: str = Form("/"),
    ) -> Response:
        result = users.attempt_login(
            db,
            username.strip(),
            password,
            client_address(request),
            now=clock(),
            policy=login_policy,
        )
        account = result.account
        if account is None and result.locked_until is not None:
            # The same for an unknown name: those are counted and locked out too.
            wait_s = max(1, math.ceil((result.locked_until - clock()).total_seconds()))
            response = page(
                request,
                "login.html",
                429,
                next=safe_next(next),
                error=f"Too many failed logins. Try again in {math.ceil(wait_s / 60)} minute(s).",
                username=username,
            )
            response.headers["Retry-After"] = str(wait_s)
            return response
        if account is None:
            # One message for unknown user, wrong password and disabled account.
            return page(
                request,
                "login.html",
                401,
                next=safe_next(next),
                error="Invalid username or password.",
                username=username,
            )
        log_in(request, account)
        return redirect(safe_next(next))

    @app.post("/logout", dependencies=[Depends(csrf.verify_csrf)])
    def logout(request: Request) -> Response:
        log_out(request)
        return redirect("/login")

    # --- queue -------------------------------------------------------------------------------

    def platforms() -> list[str]:
        with db.session() as session:
            return sorted(session.scalars(select(RequestRow.platform).distinct()))

    def queue_filter(
        platform: str,
        verdict: str,
        tier: str,
        requester: str,
        min_age: str,
        max_age: str,
        order: str,
    ) -> queries.QueueFilter:
        return queries.QueueFilter(
            platform=platform.strip(),
            verdict=verdict if verdict in {v.value for v in Verdict} else "",
            tier=tier if tier in {t.value for t in Tier} else "",
            requester=requester.strip(),
            min_age_h=_float(min_age),
            max_age_h=_float(max_age),
            order=order if order in queries.ORDERS else "oldest",
        )

    @app.get("/")
    def home(account: Account = Depends(require_user)) -> Response:
        return redirect("/queue")

    @app.get("/queue", response_class=HTMLResponse)
    def queue(
        request: Request,
        account: Account = Depends(require_user),
        platform: str = "",
        verdict: str = "",
        tier: str = "",
        requester: str = "",
        min_age_h: str = "",
        max_age_h: str = "",
        order: str = "oldest",
    ) -> Response:
        flt = queue_filter(platform, verdict, tier, requester, min_age_h, max_age_h, order)
        now = utcnow()
        return page(
            request,
            "queue.html",
            items=queries.queue_items(db, flt, now),
            flt=flt,
            counts=queries.state_counts(db),
            platforms=platforms(),
            verdicts=[v.value for v in Verdict],
            tiers=[t.value for t in Tier],
            reject_reasons=review.REJECT_REASONS,
            now=now,
        )

    @app.post("/queue/bulk", dependencies=[Depends(csrf.verify_csrf)])
    def bulk(
        request: Request,
        account: Account = Depends(require_user),
        action: str = Form(""),
        ids: list[int] = Form(default=[]),
        reason: str = Form(""),
        note: str = Form(""),
        back: str = Form("/queue"),
    ) -> Response:
        if action not in ("approve", "reject"):
            flash(request, "error", "Choose approve or reject.")
            return redirect(safe_next(back))
        if not ids:
            flash(request, "error", "No items selected.")
            return redirect(safe_next(back))
        cfg = effective()
        done: list[int] = []
        posted = 0
        refused: list[str] = []
        for request_id in sorted(set(ids)):
            try:
                if action == "approve":
                    review.approve(db, request_id, account.username)
                    platform = _platform_of(db, request_id)
                    if dispatch.post_approved(cfg, db, request_id, platform).posted:
                        posted += 1
                else:
                    review.reject(db, request_id, account.username, reason, note.strip())
                done.append(request_id)
            except review.ReviewError as exc:
                refused.append(str(exc))
        verb = "approved" if action == "approve" else "rejected"
        message = f"{verb} {len(done)} item(s)"
        if action == "approve":
            message += f", {posted} posted now, {len(done) - posted} left for the bot to post"
        flash(request, "ok" if done else "error", message)
        for problem in refused[:3]:
            flash(request, "error", problem)
        return redirect(safe_next(back))

    # --- one request -------------------------------------------------------------------------

    def item_page(
        request: Request,
        request_id: int,
        *,
        status: int = 200,
        edit_text: str | None = None,
        edit_problems: list[str] | None = None,
    ) -> Response:
        cfg = effective()
        with db.session() as session:
            item = queries.load_item(session, request_id)
            if item is None:
                raise StarletteHTTPException(404, f"No request #{request_id}.")
            draft = item.request.reply_text or (item.decision.reply if item.decision else None)
            rules = item.platform_rules
            length, limit = guard.measure(draft or "", rules, cfg.guard)
            shown = edit_text if edit_text is not None else (draft or "")
            edit_length, _ = guard.measure(shown, rules, cfg.guard)
            return page(
                request,
                "item.html",
                status,
                item=item,
                r=item.request,
                d=item.decision,
                draft=draft,
                length=length,
                limit=limit,
                rules=rules.value,
                edit_text=shown,
                edit_length=edit_length,
                edit_problems=edit_problems or [],
                awaiting=item.request.state == RequestState.AWAITING_REVIEW.value,
                approve_plan=dispatch.approve_plan(cfg, item.request.platform),
                reject_reasons=review.REJECT_REASONS,
                stances=[s.value for s in Stance],
                now=utcnow(),
            )

    @app.get("/requests/{request_id}", response_class=HTMLResponse)
    def item(
        request: Request, request_id: int, account: Account = Depends(require_user)
    ) -> Response:
        return item_page(request, request_id)

    @app.get("/requests/{request_id}/measure")
    def measure(
        request_id: int, text: str = "", account: Account = Depends(require_user)
    ) -> JSONResponse:
        platform = _platform_of(db, request_id)
        if not platform:
            raise StarletteHTTPException(404, f"No request #{request_id}.")
        length, limit = guard.measure(
            _normalise_text(text), queries.reply_platform(platform), effective().guard
        )
        return JSONResponse({"length": length, "limit": limit, "over": length > limit})

    def approve_and_post(request: Request, request_id: int, actor: str) -> None:
        review.approve(db, request_id, actor)
        outcome = dispatch.post_approved(effective(), db, request_id, _platform_of(db, request_id))
        flash(request, "ok", f"#{request_id} approved: {outcome.message}.")

    @app.post("/requests/{request_id}/approve", dependencies=[Depends(csrf.verify_csrf)])
    def approve(
        request: Request, request_id: int, account: Account = Depends(require_user)
    ) -> Response:
        try:
            approve_and_post(request, request_id, account.username)
        except review.ReviewError as exc:
            flash(request, "error", str(exc))
        return redirect(f"/requests/{request_id}")

    @app.post("/requests/{request_id}/edit", dependencies=[Depends(csrf.verify_csrf)])
    def edit(
        request: Request,
        request_id: int,
        account: Account = Depends(require_user),
        text: str = Form(""),
        then: str = Form("save"),
    ) -> Response:
        new_text = _normalise_text(text)
        try:
            with db.session() as session:
                row = session.get(RequestRow, request_id)
                current = row.reply_text if row else None
            if new_text != (current or ""):
                report = review.edit(db, request_id, new_text, account.username, effective().guard)
                if not report.valid:
                    # Nothing changed and nothing is approved: show why, keep the text to fix.
                    return item_page(
                        request,
                        request_id,
                        status=422,
                        edit_text=new_text,
                        edit_problems=report.problems,
                    )
                flash(
                    request,
                    "ok",
                    f"Draft of #{request_id} updated ({report.length}/{report.limit}).",
                )
            if then == "approve":
                approve_and_post(request, request_id, account.username)
        except review.ReviewError as exc:
            flash(request, "error", str(exc))
        return redirect(f"/requests/{request_id}")

    @app.post("/requests/{request_id}/reject", dependencies=[Depends(csrf.verify_csrf)])
    def reject(
        request: Request,
        request_id: int,
        account: Account = Depends(require_user),
        reason: str = Form(""),
        note: str = Form(""),
    ) -> Response:
        try:
            review.reject(db, request_id, account.username, reason, note.strip())
            flash(request, "ok", f"#{request_id} rejected.")
        except review.ReviewError as exc:
            flash(request, "error", str(exc))
        return redirect(f"/requests/{request_id}")

    @app.post("/requests/{request_id}/escalate", dependencies=[Depends(csrf.verify_csrf)])
    def escalate(
        request: Request,
        request_id: int,
        account: Account = Depends(require_user),
        note: str = Form(""),
    ) -> Response:
        try:
            review.escalate(db, request_id, account.username, note.strip())
            flash(request, "ok", f"#{request_id} escalated.")
        except review.ReviewError as exc:
            flash(request, "error", str(exc))
        return redirect(f"/requests/{request_id}")

    # --- decisions log -----------------------------------------------------------------------

    @app.get("/decisions", response_class=HTMLResponse)
    def decisions(
        request: Request,
        account: Account = Depends(require_user),
        q: str = "",
        platform: str = "",
        verdict: str = "",
        state: str = "",
        since: str = "",
        until: str = "",
        page_no: int = 1,
    ) -> Response:
        flt = queries.LogFilter(
            q=q.strip(),
            platform=platform.strip(),
            verdict=verdict if verdict in {v.value for v in Verdict} else "",
            state=state if state in {s.value for s in RequestState} else "",
            since=_date(since),
            until=_date(until),
            page=max(1, page_no),
        )
        rows, total = queries.decision_log(db, flt)
        pages = max(1, -(-total // queries.PAGE_SIZE))
        return page(
            request,
            "decisions.html",
            rows=rows,
            total=total,
            flt=flt,
            pages=pages,
            query=urlencode(flt.as_query()),
            platforms=platforms(),
            verdicts=[v.value for v in Verdict],
            states=[s.value for s in RequestState],
        )

    # --- admin -------------------------------------------------------------------------------

    @app.get("/admin/settings", response_class=HTMLResponse)
    def admin_settings(request: Request, account: Account = Depends(require_admin)) -> Response:
        stored = overrides.stored_overrides(db)
        merged = effective()
        rows = [
            {
                "spec": spec,
                "loaded": overrides.current_value(settings, key),
                "effective": overrides.current_value(merged, key),
                "override": stored.get(key),
            }
            for key, spec in overrides.overridable().items()
        ]
        return page(request, "admin_settings.html", rows=rows)

    @app.post("/admin/settings", dependencies=[Depends(csrf.verify_csrf)])
    def admin_settings_set(
        request: Request,
        account: Account = Depends(require_admin),
        key: str = Form(""),
        value: str = Form(""),
    ) -> Response:
        try:
            parsed = overrides.set_override(db, key, value, account.username)
            flash(request, "ok", f"{key} set to {parsed!r}.")
        except overrides.OverrideError as exc:
            flash(request, "error", f"{key}: {exc}")
        return redirect("/admin/settings")

    @app.post("/admin/settings/reset", dependencies=[Depends(csrf.verify_csrf)])
    def admin_settings_reset(
        request: Request, account: Account = Depends(require_admin), key: str = Form("")
    ) -> Response:
        if overrides.clear_override(db, key):
            flash(request, "ok", f"{key} back to the configured value.")
        return redirect("/admin/settings")

    @app.get("/admin/users", response_class=HTMLResponse)
    def admin_users(request: Request, account: Account = Depends(require_admin)) -> Response:
        locks = users.lockouts(db, clock())
        return page(
            request,
            "admin_users.html",
            accounts=users.list_users(db),
            roles=users.ROLES,
            locked={lk.key: lk.until for lk in locks if lk.scope == users.ACCOUNT},
            locked_addresses=[lk for lk in locks if lk.scope == users.ADDRESS],
        )

    @app.post("/admin/users", dependencies=[Depends(csrf.verify_csrf)])
    def admin_users_add(
        request: Request,
        account: Account = Depends(require_admin),
        username: str = Form(""),
        role: str = Form("moderator"),
        password: str = Form(""),
    ) -> Response:
        try:
            added = users.add_user(db, username.strip(), password, role)
            flash(request, "ok", f"User {added.username} ({added.role}) added.")
        except users.UserError as exc:
            flash(request, "error", str(exc))
        return redirect("/admin/users")

    @app.post("/admin/users/{username}/{change}", dependencies=[Depends(csrf.verify_csrf)])
    def admin_users_change(
        request: Request, username: str, change: str, account: Account = Depends(require_admin)
    ) -> Response:
        if change not in ("disable", "enable", "unlock"):
            raise StarletteHTTPException(404, "Unknown action.")
        if username == account.username and change == "disable":
            flash(request, "error", "You cannot disable your own account.")
            return redirect("/admin/users")
        try:
            if change == "disable":
                users.disable_user(db, username)
            elif change == "enable":
                users.enable_user(db, username)
            else:
                users.unlock_user(db, username)
                log.warning("login lockout of %r lifted by %s", username, account.username)
            done = {"disable": "disabled", "enable": "enabled", "unlock": "unlocked"}[change]
            flash(request, "ok", f"User {username} {done}.")
        except users.UserError as exc:
            flash(request, "error", str(exc))
        return redirect("/admin/users")

    @app.post("/admin/lockouts/address", dependencies=[Depends(csrf.verify_csrf)])
    def admin_unlock_address(
        request: Request, account: Account = Depends(require_admin), address: str = Form("")
    ) -> Response:
        if users.unlock_address(db, address):
            log.warning("login lockout of %s lifted by %s", address.strip(), account.username)
            flash(request, "ok", f"Address {address.strip()} unlocked.")
        else:
            flash(request, "error", f"Address {address.strip()!r} was not locked.")
        return redirect("/admin/users")

    return app


def _platform_of(db: Database, request_id: int) -> str:
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        return row.platform if row else ""
