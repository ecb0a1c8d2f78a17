"""Admins only: the posting kill switch, settings overrides, user accounts and their roles,
and lifting login lockouts. Every change is stored with who made it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot import overrides, platforms
from bot.moderation import users
from bot.web.auth import require_admin
from bot.web.context import AdminCaller, protect_posts, redirect

log = logging.getLogger(__name__)

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_admin)])

_CHANGES = {"disable": "disabled", "enable": "enabled", "unlock": "unlocked"}


@router.get("/admin/settings", response_class=HTMLResponse)
def admin_settings(me: AdminCaller) -> Response:
    stored = overrides.stored_overrides(me.db)
    merged = me.ctx.effective()
    rows = [
        {
            "spec": spec,
            "loaded": overrides.current_value(me.ctx.settings, key),
            "effective": overrides.current_value(merged, key),
            "override": stored.get(key),
        }
        for key, spec in overrides.overridable().items()
    ]
    return me.page("admin_settings.html", rows=rows)


@router.post("/admin/settings")
def admin_settings_set(me: AdminCaller, key: str = Form(""), value: str = Form("")) -> Response:
    return _set_override(me, key, value, shown=repr, back="/admin/settings")


def _set_override(
    me: AdminCaller, key: str, value: str, *, shown: Callable[[Any], str], back: str
) -> Response:
    """Store an override and flash the value now in effect (as `shown` writes it), or why it
    was refused; then back to the page it was set on."""
    try:
        parsed = overrides.set_override(me.db, key, value, me.name)
        me.flash("ok", f"{key} set to {shown(parsed)}.")
    except overrides.OverrideError as exc:
        me.flash("error", f"{key}: {exc}")
    return redirect(back)


@router.post("/admin/settings/reset")
def admin_settings_reset(me: AdminCaller, key: str = Form(""), back: str = Form("")) -> Response:
    if overrides.clear_override(me.db, key, me.name):
        me.flash("ok", f"{key} back to the configured value.")
    return redirect("/admin/posting" if back == "posting" else "/admin/settings")


@router.get("/admin/posting", response_class=HTMLResponse)
def admin_posting(me: AdminCaller) -> Response:
    """The kill switch: each platform's mode in effect now, its pause, what it holds."""
    stored = overrides.stored_overrides(me.db)
    paused = overrides.pauses(me.db)
    held = overrides.held_count(me.db)
    rows = [
        {
            "name": spec.name,
            "label": spec.label,
            "enabled": spec.section(me.ctx.settings).enabled,
            "mode": overrides.live_mode(me.db, me.ctx.settings, spec.name),
            "override": stored.get(f"{spec.name}.mode"),
            "pause": paused.get(spec.name),
            "hold": overrides.posting_hold(me.db, spec.name),
            "held": held.get(spec.name, 0),
        }
        for spec in platforms.specs()
    ]
    return me.page(
        "admin_posting.html",
        rows=rows,
        global_mode=stored.get("mode"),
        configured_mode=me.ctx.settings.mode,
        pause_all=paused.get(overrides.ALL_PLATFORMS),
        modes=overrides.MODES,
        changes=overrides.changes(me.db),
    )


@router.post("/admin/posting/pause")
def admin_posting_pause(
    me: AdminCaller, platform: str = Form(""), note: str = Form("")
) -> Response:
    return _switch_posting(
        me,
        lambda: overrides.pause(me.db, platform, me.name, note),
        done=f"Posting to {_scope(platform)} paused. Nothing more is posted there.",
        unchanged=f"Posting to {_scope(platform)} was already paused.",
    )


@router.post("/admin/posting/resume")
def admin_posting_resume(me: AdminCaller, platform: str = Form("")) -> Response:
    return _switch_posting(
        me,
        lambda: overrides.resume(me.db, platform, me.name),
        done=f"Posting to {_scope(platform)} resumed.",
        unchanged=f"Posting to {_scope(platform)} was not paused.",
    )


def _switch_posting(
    me: AdminCaller, switch: Callable[[], bool], *, done: str, unchanged: str
) -> Response:
    """Pause or resume posting (`switch` says whether anything changed) and flash the outcome;
    a refused platform name is flashed, not raised."""
    try:
        if switch():
            me.flash("ok", done)
        else:
            me.flash("error", unchanged)
    except overrides.OverrideError as exc:
        me.flash("error", str(exc))
    return redirect("/admin/posting")


@router.post("/admin/posting/mode")
def admin_posting_mode(me: AdminCaller, key: str = Form(""), value: str = Form("")) -> Response:
    if key != "mode" and not key.endswith(".mode"):
        me.flash("error", f"{key!r} is not a mode.")
        return redirect("/admin/posting")
    return _set_override(
        me, key, value, shown=lambda mode: str(mode or "(follow global)"), back="/admin/posting"
    )


def _scope(platform: str) -> str:
    return "every platform" if platform.strip() == overrides.ALL_PLATFORMS else platform.strip()


@router.get("/admin/users", response_class=HTMLResponse)
def admin_users(me: AdminCaller) -> Response:
    locks = users.lockouts(me.db, me.ctx.clock())
    return me.page(
        "admin_users.html",
        accounts=users.list_users(me.db),
        roles=users.ROLES,
        locked={lk.key: lk.until for lk in locks if lk.scope == users.ACCOUNT},
        locked_addresses=[lk for lk in locks if lk.scope in (users.ADDRESS, users.SPRAY)],
    )


@router.post("/admin/users")
def admin_users_add(
    me: AdminCaller,
    username: str = Form(""),
    role: str = Form("moderator"),
    password: str = Form(""),
) -> Response:
    try:
        added = users.add_user(me.db, username.strip(), password, role)
        me.flash("ok", f"User {added.username} ({added.role}) added.")
    except users.UserError as exc:
        me.flash("error", str(exc))
    return redirect("/admin/users")


@router.post("/admin/users/{username}/role")
def admin_users_role(me: AdminCaller, username: str, role: str = Form("")) -> Response:
    if username == me.name and role != "admin":
        me.flash("error", "You cannot take the admin role from your own account.")
        return redirect("/admin/users")
    try:
        changed = users.set_role(me.db, username, role)
        log.warning("role of %r set to %s by %s", username, changed.role, me.name)
        me.flash("ok", f"User {username} is now {changed.role}.")
    except users.UserError as exc:
        me.flash("error", str(exc))
    return redirect("/admin/users")


@router.post("/admin/users/{username}/password")
def admin_users_password(me: AdminCaller, username: str, password: str = Form("")) -> Response:
    """A new password for an account (a moderator who lost theirs); its open sessions end, as
    with `factnote users reset-password`."""
    try:
        users.set_password(me.db, username, password)
        log.warning("password of %r reset by %s", username, me.name)
        me.flash("ok", f"Password of {username} reset; their open sessions have ended.")
    except users.UserError as exc:
        me.flash("error", str(exc))
    return redirect("/admin/users")


@router.post("/admin/users/{username}/{change}")
def admin_users_change(me: AdminCaller, username: str, change: str) -> Response:
    if change not in _CHANGES:
        raise StarletteHTTPException(404, "Unknown action.")
    if username == me.name and change == "disable":
        me.flash("error", "You cannot disable your own account.")
        return redirect("/admin/users")
    try:
        if change == "disable":
            users.disable_user(me.db, username)
        elif change == "enable":
            users.enable_user(me.db, username)
        else:
            users.unlock_user(me.db, username)
            log.warning("login lockout of %r lifted by %s", username, me.name)
        me.flash("ok", f"User {username} {_CHANGES[change]}.")
    except users.UserError as exc:
        me.flash("error", str(exc))
    return redirect("/admin/users")


@router.post("/admin/lockouts/address")
def admin_unlock_address(me: AdminCaller, address: str = Form("")) -> Response:
    if users.unlock_address(me.db, address):
        log.warning("login lockout of %s lifted by %s", address.strip(), me.name)
        me.flash("ok", f"Address {address.strip()} unlocked.")
    else:
        me.flash("error", f"Address {address.strip()!r} was not locked.")
    return redirect("/admin/users")
