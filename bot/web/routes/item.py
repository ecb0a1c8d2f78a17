"""One request: its page, the live check of an edit, and approve, edit, reject, escalate,
claim, assign and release.

Approving a reply that goes out in public asks first: without a script in the browser the
answer is a confirmation page (with one, the page asks before it sends, and says so).
A decision (approve, reject, escalate) moves on to the next item in the queue; an edit stays
on the item; an edit the guard refuses answers 422 with the page, its problems and the text
to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot import overrides
from bot.moderation import actions as review
from bot.moderation import users
from bot.notes.review_view import note_facts
from bot.web import actions, dispatch, queries
from bot.web.auth import require_user
from bot.web.context import Caller, Moderator, protect_posts, redirect
from bot.web.render import word_diff
from bot.web.routes.images import image_views
from bot.web.routes.videos import video_views
from pipeline.records import Stance, utcnow
from pipeline.reply import guard
from storage.models import Request as RequestRow
from storage.models import RequestState

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_user)])


def item_page(
    me: Caller,
    request_id: int,
    *,
    status: int = 200,
    edit_text: str | None = None,
    edit_problems: Sequence[object] = (),
    after: int | None = None,
) -> Response:
    cfg = me.ctx.effective()
    with me.db.session() as session:
        item = queries.load_item(session, request_id)
        if item is None:
            raise StarletteHTTPException(404, f"No request #{request_id}.")
        r = item.request
        original = item.decision.reply if item.decision else None
        draft = r.reply_text or original
        rules = item.platform_rules
        length, limit = guard.measure(draft or "", rules, cfg.guard)
        shown = edit_text if edit_text is not None else (draft or "")
        edit_length, _ = guard.measure(shown, rules, cfg.guard)
        awaiting = r.state == RequestState.AWAITING_REVIEW.value
        # The guard on the text as it stands (an edit included), not only on the bot's draft.
        current_check = review.check_edit(session, r, draft, cfg.guard) if draft else None
        after_state = None
        if after is not None:
            previous = session.get(RequestRow, after)
            after_state = previous.state if previous is not None else None
        escalation = review.escalation_refusal(r, me.who, "approve") if awaiting else None
        claimed_by_other = review.claim_refusal(r, me.who) if awaiting else None
        note = note_facts(session, r, draft)  # Community Notes: tags, evaluate score
        return me.page(
            "item.html",
            status,
            item=item,
            r=r,
            d=item.decision,
            draft=draft,
            original=original,
            edited=bool(original and draft and original != draft),
            length=length,
            limit=limit,
            rules=rules.value,
            edit_text=shown,
            edit_length=edit_length,
            edit_problems=list(edit_problems),
            current_check=current_check,
            awaiting=awaiting,
            escalation=escalation,
            claimed_by_other=claimed_by_other,
            note=note,
            history=queries.item_history(session, r.id),  # events and actions
            images=image_views(session, item.decision.trace if item.decision else None),
            videos=video_views(session, item.decision.trace if item.decision else None),
            mine=bool(r.claimed_by and r.claimed_by == me.name),
            assignees=[a.username for a in users.list_users(me.db) if a.active],
            approve_plan=dispatch.approve_plan(cfg, r.platform, me.db),
            publishes=dispatch.publishes(r.platform),
            held=(r.last_error or "").startswith(overrides.HELD),
            reject_reasons=review.REJECT_REASONS,
            stances=[s.value for s in Stance],
            after=after,
            after_state=after_state,
            now=utcnow(),
        )


def _act(me: Caller, request_id: int, action: Callable[[], str], *, then_next: bool) -> Response:
    """Run one action and flash its message (or why it was refused). A decision moves on to
    the next item; anything else, or a refusal, goes back to this one."""
    try:
        me.flash("ok", action())
    except review.ReviewError as exc:
        me.flash("error", str(exc))
        return redirect(f"/requests/{request_id}")
    if not then_next:
        return redirect(f"/requests/{request_id}")
    return redirect(f"/queue/next?after={request_id}")


def _approve(me: Caller, request_id: int) -> str:
    outcome = actions.approve(me.ctx.effective(), me.db, request_id, me.who)
    return f"#{request_id} approved: {outcome.message}."


def _confirm_approve(me: Caller, request_id: int) -> Response:
    """The page that asks before a public post (the path without a script)."""
    review.ensure_allowed(me.db, request_id, me.who, "approve")
    with me.db.session() as session:
        row = session.get(RequestRow, request_id)
        if row is None:
            raise StarletteHTTPException(404, f"No request #{request_id}.")
        text, platform = row.reply_text or "", row.platform
    return me.page(
        "confirm_approve.html",
        request_id=request_id,
        text=text,
        platform=platform,
        plan=dispatch.approve_plan(me.ctx.effective(), platform, me.db),
    )


@router.get("/requests/{request_id}", response_class=HTMLResponse)
def item(me: Moderator, request_id: int, after: int | None = None) -> Response:
    return item_page(me, request_id, after=after)


@router.get("/requests/{request_id}/measure")
def measure(me: Moderator, request_id: int, text: str = "") -> JSONResponse:
    """The live check of a text being typed: its length, the guard's verdict on it, and how
    it differs from the current draft. Changes nothing."""
    platform = actions.platform_of(me.db, request_id)
    if not platform:
        raise StarletteHTTPException(404, f"No request #{request_id}.")
    cfg = me.ctx.effective().guard
    candidate = actions.normalise_text(text)
    length, limit = guard.measure(candidate, queries.reply_platform(platform), cfg)
    report = review.check_text(me.db, request_id, candidate, cfg)
    with me.db.session() as session:
        row = session.get(RequestRow, request_id)
        current = (row.reply_text if row else None) or ""
    return JSONResponse(
        {
            "length": length,
            "limit": limit,
            "over": length > limit,
            "valid": report.valid,
            "problems": [str(p) for p in report.problems],
            "changed": candidate != current,
            "diff": str(word_diff(current, candidate)),
        }
    )


@router.post("/requests/{request_id}/approve")
def approve(me: Moderator, request_id: int, confirmed: str = Form("")) -> Response:
    if dispatch.publishes(actions.platform_of(me.db, request_id)) and confirmed != "yes":
        try:
            return _confirm_approve(me, request_id)
        except review.ReviewError as exc:
            me.flash("error", str(exc))
            return redirect(f"/requests/{request_id}")
    return _act(me, request_id, lambda: _approve(me, request_id), then_next=True)


@router.post("/requests/{request_id}/edit")
def edit(
    me: Moderator,
    request_id: int,
    text: str = Form(""),
    then: str = Form("save"),
    confirmed: str = Form(""),
) -> Response:
    new_text = actions.normalise_text(text)
    try:
        if then == "approve":
            # Refused before the edit is saved: an escalated item is not half-done.
            review.ensure_allowed(me.db, request_id, me.who, "approve")
        report = actions.edit(me.ctx.effective(), me.db, request_id, new_text, me.who)
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
    return approve(me, request_id, confirmed)


@router.post("/requests/{request_id}/reject")
def reject(
    me: Moderator, request_id: int, reason: str = Form(""), note: str = Form("")
) -> Response:
    def run() -> str:
        actions.reject(me.db, request_id, me.who, reason, note)
        return f"#{request_id} rejected: nothing will be posted."

    return _act(me, request_id, run, then_next=True)


@router.post("/requests/{request_id}/escalate")
def escalate(me: Moderator, request_id: int, note: str = Form("")) -> Response:
    def run() -> str:
        cfg = me.ctx.effective()
        actions.escalate(cfg, me.db, request_id, me.who, note)
        return (
            f"#{request_id} escalated: a senior moderator or an admin decides it within"
            f" {cfg.runtime.escalation_ttl_h:g} h, or it expires."
        )

    return _act(me, request_id, run, then_next=True)


@router.post("/requests/{request_id}/claim")
def claim(
    me: Moderator,
    request_id: int,
    assignee: str = Form(""),
    take_over: str = Form(""),
) -> Response:
    def run() -> str:
        holder = review.claim(
            me.db,
            request_id,
            me.who,
            assignee=assignee.strip() or None,
            take_over=take_over == "yes",
        )
        return f"#{request_id} is now " + ("yours." if holder == me.name else f"{holder}'s.")

    return _act(me, request_id, run, then_next=False)


@router.post("/requests/{request_id}/release")
def release(me: Moderator, request_id: int) -> Response:
    def run() -> str:
        review.release(me.db, request_id, me.who)
        return f"#{request_id} is back in the queue for anyone."

    return _act(me, request_id, run, then_next=False)
