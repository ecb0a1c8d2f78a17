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
        items=queries.queue_items(me.db, flt, now),
        flt=flt,
        counts=queries.state_counts(me.db),
        platforms=_platforms(me.db),
        verdicts=[v.value for v in Verdict],
        tiers=[t.value for t in Tier],
        reject_reasons=review.REJECT_REASONS,
        now=now,
    )


@router.post("/queue/bulk")
def bulk(
    me: Moderator,
    action: str = Form(""),
    ids: list[int] = Form(default=[]),
    reason: str = Form(""),
    note: str = Form(""),
    back: str = Form("/queue"),
) -> Response:
    if action not in actions.BULK_ACTIONS:
        me.flash("error", "Choose approve or reject.")
        return redirect(safe_next(back))
    if not ids:
        me.flash("error", "No items selected.")
        return redirect(safe_next(back))
    cfg = me.ctx.effective()
    result = actions.bulk(cfg, me.db, action, ids, me.name, reason=reason, note=note)
    me.flash("ok" if result.done else "error", result.summary())
    for problem in result.refused[:3]:
        me.flash("error", problem)
    return redirect(safe_next(back))


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
