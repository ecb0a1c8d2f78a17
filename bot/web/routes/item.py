"""One request: its page, the live length meter, and approve, edit, reject and escalate.
Each action redirects back to the item with a flash; an edit the guard refuses answers 422
with the page, its problems and the text to fix."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot import review
from bot.web import actions, dispatch, queries
from bot.web.auth import require_user
from bot.web.context import Caller, Moderator, protect_posts, redirect
from pipeline import guard
from pipeline.records import Stance, utcnow
from storage.models import RequestState

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_user)])


def item_page(
    me: Caller,
    request_id: int,
    *,
    status: int = 200,
    edit_text: str | None = None,
    edit_problems: Sequence[object] = (),
) -> Response:
    cfg = me.ctx.effective()
    with me.db.session() as session:
        item = queries.load_item(session, request_id)
        if item is None:
            raise StarletteHTTPException(404, f"No request #{request_id}.")
        draft = item.request.reply_text or (item.decision.reply if item.decision else None)
        rules = item.platform_rules
        length, limit = guard.measure(draft or "", rules, cfg.guard)
        shown = edit_text if edit_text is not None else (draft or "")
        edit_length, _ = guard.measure(shown, rules, cfg.guard)
        return me.page(
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
            edit_problems=list(edit_problems),
            awaiting=item.request.state == RequestState.AWAITING_REVIEW.value,
            approve_plan=dispatch.approve_plan(cfg, item.request.platform),
            reject_reasons=review.REJECT_REASONS,
            stances=[s.value for s in Stance],
            now=utcnow(),
        )


def _act(me: Caller, request_id: int, action: Callable[[], str]) -> Response:
    """Run one action, flash its message (or why it was refused), back to the item."""
    try:
        me.flash("ok", action())
    except review.ReviewError as exc:
        me.flash("error", str(exc))
    return redirect(f"/requests/{request_id}")


def _approve(me: Caller, request_id: int) -> str:
    outcome = actions.approve(me.ctx.effective(), me.db, request_id, me.name)
    return f"#{request_id} approved: {outcome.message}."


@router.get("/requests/{request_id}", response_class=HTMLResponse)
def item(me: Moderator, request_id: int) -> Response:
    return item_page(me, request_id)


@router.get("/requests/{request_id}/measure")
def measure(me: Moderator, request_id: int, text: str = "") -> JSONResponse:
    platform = actions.platform_of(me.db, request_id)
    if not platform:
        raise StarletteHTTPException(404, f"No request #{request_id}.")
    length, limit = guard.measure(
        actions.normalise_text(text), queries.reply_platform(platform), me.ctx.effective().guard
    )
    return JSONResponse({"length": length, "limit": limit, "over": length > limit})


@router.post("/requests/{request_id}/approve")
def approve(me: Moderator, request_id: int) -> Response:
    return _act(me, request_id, lambda: _approve(me, request_id))


@router.post("/requests/{request_id}/edit")
def edit(
    me: Moderator, request_id: int, text: str = Form(""), then: str = Form("save")
) -> Response:
    new_text = actions.normalise_text(text)
    try:
        report = actions.edit(me.ctx.effective(), me.db, request_id, new_text, me.name)
        if report is not None and not report.valid:
            # Nothing changed and nothing is approved: show why, keep the text to fix.
            return item_page(
                me, request_id, status=422, edit_text=new_text, edit_problems=report.problems
            )
        if report is not None:
            me.flash("ok", f"Draft of #{request_id} updated ({report.length}/{report.limit}).")
    except review.ReviewError as exc:
        me.flash("error", str(exc))
        return redirect(f"/requests/{request_id}")
    if then != "approve":
        return redirect(f"/requests/{request_id}")
    return _act(me, request_id, lambda: _approve(me, request_id))


@router.post("/requests/{request_id}/reject")
def reject(
    me: Moderator, request_id: int, reason: str = Form(""), note: str = Form("")
) -> Response:
    def run() -> str:
        actions.reject(me.db, request_id, me.name, reason, note)
        return f"#{request_id} rejected."

    return _act(me, request_id, run)


@router.post("/requests/{request_id}/escalate")
def escalate(me: Moderator, request_id: int, note: str = Form("")) -> Response:
    def run() -> str:
        actions.escalate(me.db, request_id, me.name, note)
        return f"#{request_id} escalated."

    return _act(me, request_id, run)
