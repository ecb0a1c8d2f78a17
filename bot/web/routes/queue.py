"""The queue (filters, deadlines), bulk approve/reject, and the decisions log."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse
from sqlalchemy import select
from starlette.responses import Response

from bot import review
from bot.web import actions, queries
from bot.web.auth import require_user, safe_next
from bot.web.context import Moderator, User, protect_posts, redirect
from pipeline.records import Tier, Verdict, utcnow
from storage.db import Database
from storage.models import Request as RequestRow
from storage.models import RequestState

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_user)])


def _platforms(db: Database) -> list[str]:
    with db.session() as session:
        return sorted(session.scalars(select(RequestRow.platform).distinct()))


@router.get("/")
def home(account: User) -> Response:
    return redirect("/queue")


@router.get("/queue", response_class=HTMLResponse)
def queue(me: Moderator) -> Response:
    flt = queries.QueueFilter.from_query(me.request.query_params)
    now = utcnow()
    return me.page(
        "queue.html",
        items=queries.queue_items(me.db, flt, now, me.name),
        flt=flt,
        counts=queries.state_counts(me.db),
        platforms=_platforms(me.db),
        verdicts=[v.value for v in Verdict],
        tiers=[t.value for t in Tier],
        reject_reasons=review.REJECT_REASONS,
        now=now,
    )


@router.get("/queue/next")
def next_item(me: Moderator, after: int | None = None) -> Response:
    """The next item this moderator may decide (after `after`, in the queue's order)."""
    found = queries.next_item(me.db, after, me.who)
    if found is None:
        me.flash("ok", "Nothing else awaiting review that you can decide.")
        return redirect("/queue")
    return redirect(f"/requests/{found}" + (f"?after={after}" if after else ""))


@router.post("/queue/bulk")
def bulk(
    me: Moderator,
    action: str = Form(""),
    ids: list[int] = Form(default=[]),
    reason: str = Form(""),
    note: str = Form(""),
    back: str = Form("/queue"),
    confirmed: str = Form(""),
) -> Response:
    """Approve or reject the selected items. Escalated items are left out, and nothing runs
    until confirmed with the number of items it acts on: without that (no script in the
    browser, or the selection changed meanwhile) the answer is a page that asks."""
    back = safe_next(back)
    if action not in actions.BULK_ACTIONS:
        me.flash("error", "Choose approve or reject.")
        return redirect(back)
    if not ids:
        me.flash("error", "No items selected.")
        return redirect(back)
    plan = actions.plan_bulk(me.db, action, ids)
    if not plan.ids:
        me.flash("error", f"Nothing to {action}: " + "; ".join(plan.excluded[:3]))
        return redirect(back)
    if confirmed != str(len(plan.ids)):
        return me.page(
            "confirm_bulk.html",
            plan=plan,
            reason=reason,
            note=note,
            back=back,
        )
    cfg = me.ctx.effective()
    result = actions.bulk(cfg, me.db, plan, me.who, reason=reason, note=note)
    me.flash("ok" if result.done else "error", result.summary())
    for problem in result.refused[:3]:
        me.flash("error", problem)
    return redirect(back)


@router.get("/decisions", response_class=HTMLResponse)
def decisions(me: Moderator, page_no: int = 1) -> Response:
    flt = queries.LogFilter.from_query(me.request.query_params, page_no)
    rows, total = queries.decision_log(me.db, flt)
    return me.page(
        "decisions.html",
        rows=rows,
        total=total,
        flt=flt,
        pages=max(1, -(-total // queries.PAGE_SIZE)),
        query=urlencode(flt.as_query()),
        platforms=_platforms(me.db),
        verdicts=[v.value for v in Verdict],
        states=[s.value for s in RequestState],
    )
