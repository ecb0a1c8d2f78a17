"""The queue (filters, deadlines), bulk approve/reject, and the decisions log."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from bot.moderation import actions as review
from bot.ops.summary import CLI_PLATFORM
from bot.web import actions, dispatch
from bot.web.auth import require_user, safe_next
from bot.web.context import Moderator, User, protect_posts, redirect
from bot.web.errors import refuse_past_64_bits
from pipeline.records import Tier, Verdict, utcnow
from storage import decision_log, review_queue
from storage.db import Database
from storage.models import Request as RequestRow
from storage.models import RequestState

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_user)])


def _platforms(db: Database) -> list[str]:
    with db.session() as session:
        return review_queue.platforms(session)


@router.get("/")
def home(account: User) -> Response:
    return redirect("/queue")


@router.get("/queue", response_class=HTMLResponse)
def queue(me: Moderator, page: str = "1", per_page: str = "") -> Response:
    """One page of the queue; the filters run in SQL before the page is cut, so the count
    is of every matching item."""
    flt = review_queue.QueueFilter.from_query(me.request.query_params)
    now = utcnow()
    size = review_queue.positive(per_page, review_queue.PER_PAGE, review_queue.MAX_PER_PAGE)
    with me.db.session() as session:
        found = review_queue.queue_page(
            session, flt, now, me.name, review_queue.positive(page, 1), size
        )
        bulk_total = review_queue.count(
            session,
            review_queue.matching(flt, now, me.name).where(RequestRow.escalated_by.is_(None)),
        )
        counts = review_queue.state_counts(session, CLI_PLATFORM)
        checks = review_queue.platform_count(session, CLI_PLATFORM)
    query = flt.as_query()
    if size != review_queue.PER_PAGE:
        query["per_page"] = str(size)
    return me.page(
        "queue.html",
        found=found,
        items=found.items,
        bulk_total=bulk_total,
        flt=flt,
        query=query,
        counts=counts,
        cli_checks=checks,
        platforms=_platforms(me.db),
        verdicts=[v.value for v in Verdict],
        tiers=[t.value for t in Tier],
        reject_reasons=review.REJECT_REASONS,
        now=now,
    )


@router.get("/queue/next")
def next_item(me: Moderator, after: int | None = None) -> Response:
    """The next item this moderator may decide (after `after`, in the queue's order)."""
    with me.db.session() as session:
        found = review_queue.next_item(session, after, me.who.name, me.who.senior)
    if found is None:
        me.flash("ok", "Nothing else awaiting review that you can decide.")
        return redirect("/queue")
    return redirect(f"/requests/{found}" + (f"?after={after}" if after else ""))


@router.post("/queue/bulk")
def bulk(
    me: Moderator,
    action: str = Form(""),
    ids: list[int] = Form(default=[]),
    every: str = Form(""),
    reason: str = Form(""),
    note: str = Form(""),
    back: str = Form("/queue"),
    confirmed: str = Form(""),
) -> Response:
    """Approve or reject the selected items, or with `every` every item the queue's filter
    (in `back`) matches. Escalated items are left out, and nothing runs until confirmed with
    the number of items it acts on: without that (no script in the browser, or the set
    changed meanwhile) the answer is a page that asks, with the exact count."""
    back = safe_next(back)
    if action not in actions.BULK_ACTIONS:
        me.flash("error", "Choose approve or reject.")
        return redirect(back)
    if every == "filtered":
        flt = review_queue.QueueFilter.from_query(dict(parse_qsl(urlsplit(back).query)))
        with me.db.session() as session:
            ids = review_queue.matching_ids(session, flt, utcnow(), me.name, bulk=True)
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
            every=every == "filtered",
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


@router.post("/queue/quick")
def quick(
    me: Moderator,
    request_id: int | None = None,
    action: str = Form(""),
    reason: str = Form(""),
    back: str = Form("/queue"),
    confirmed: str = Form(""),
) -> Response:
    """A row's quick action (approve, reject, claim), back to the same queue page. Approving
    a reply that goes out in public asks first, as on the item page."""
    back = safe_next(back)
    if request_id is None:
        me.flash("error", "No item given.")
        return redirect(back)
    try:
        if action == "claim":
            holder = review.claim(me.db, request_id, me.who)
            me.flash("ok", f"#{request_id} is now " + ("yours." if holder == me.name else holder))
        elif action == "reject":
            actions.reject(me.db, request_id, me.who, reason or review.REJECT_REASONS[0], "")
            me.flash("ok", f"#{request_id} rejected: nothing will be posted.")
        elif action == "approve":
            publishes = dispatch.publishes(actions.platform_of(me.db, request_id))
            if publishes and confirmed != "yes":
                review.ensure_allowed(me.db, request_id, me.who, "approve")
                return redirect(f"/requests/{request_id}#approve")
            outcome = actions.approve(me.ctx.effective(), me.db, request_id, me.who)
            me.flash("ok", f"#{request_id} approved: {outcome.message}.")
        else:
            me.flash("error", "Choose approve, reject or claim.")
    except review.ReviewError as exc:
        me.flash("error", str(exc))
    return redirect(back)


@router.get("/decisions", response_class=HTMLResponse)
def decisions(me: Moderator, page_no: str = "1") -> Response:
    # Read as text so a bad page number gives page 1, but a number no page can have is 404.
    refuse_past_64_bits(page_no)
    flt = decision_log.LogFilter.from_query(
        me.request.query_params, review_queue.positive(page_no, 1)
    )
    with me.db.session() as session:
        rows, total = decision_log.decision_log(session, flt)
    return me.page(
        "decisions.html",
        rows=rows,
        total=total,
        flt=flt,
        pages=max(1, -(-total // decision_log.PAGE_SIZE)),
        query=urlencode(flt.as_query()),
        platforms=_platforms(me.db),
        verdicts=[v.value for v in Verdict],
        states=[s.value for s in RequestState],
    )
