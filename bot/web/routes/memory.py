"""The experience memory's governance (issues 17 and 33). The items with their phase,
trigger, strategy, use record and status; a search; one item's page with the episodes it was
distilled from (links to those requests). Every moderator sees the pages and approves or
rejects a proposed item (learned from the bot's own episodes, used by no check until
approved); admins alone disable, enable and delete.

Every change goes through `bot.memory.store`, which stores it with who made it (the same
`setting_changes` log as the admins' other changes) and writes the table a running bot's
memory refreshes from, so a disabled or deleted item stops being retrieved within seconds.
Deleting asks first: with a script in the browser the page asks, without one the answer is a
confirmation page.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form
from fastapi.responses import HTMLResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from bot.memory import store as memory_store
from bot.web.auth import require_user
from bot.web.context import AdminCaller, Caller, Moderator, protect_posts, redirect
from pipeline.learning.memory import STATUSES as DECIDED
from pipeline.learning.memory import MemoryItem, Phase
from pipeline.learning.memory_checks import provenance

router = APIRouter(dependencies=[Depends(protect_posts), Depends(require_user)])

STATUSES = (*DECIDED, "enabled", "disabled")
SHOWN = 500  # rows on the list page; a search narrows it down


@router.get("/admin/memory", response_class=HTMLResponse)
def memory_list(me: Moderator, q: str = "", phase: str = "", status: str = "") -> Response:
    chosen = Phase(phase) if phase in {p.value for p in Phase} else None
    status = status if status in STATUSES else ""
    items = memory_store.list_items(me.db, q, chosen, status)
    return me.page(
        "memory.html",
        items=items[:SHOWN],
        matched=len(items),
        q=q,
        phase=chosen.value if chosen else "",
        shown_status=status,  # `status` is the page's HTTP status
        phases=[p.value for p in Phase],
        statuses=STATUSES,
        total=memory_store.count_items(me.db),
        memory_mode=me.ctx.effective().memory.mode,
        use_proposed=me.ctx.effective().memory.use_proposed,
        waiting=len(memory_store.list_items(me.db, status="proposed")),
        changes=memory_store.governance_log(me.db, limit=20),
    )


def _item_or_404(me: Caller, item_id: str) -> MemoryItem:
    item = memory_store.get_item(me.db, item_id)
    if item is None:
        raise StarletteHTTPException(404, f"No memory item {item_id}.")
    return item


@router.get("/admin/memory/{item_id}", response_class=HTMLResponse)
def memory_item(me: Moderator, item_id: str) -> Response:
    item = _item_or_404(me, item_id)
    return me.page(
        "memory_item.html",
        item=item,
        provenance=provenance(item),
        episodes=memory_store.source_episodes(me.db, item.sources),
        memory_mode=me.ctx.effective().memory.mode,
        use_proposed=me.ctx.effective().memory.use_proposed,
        changes=memory_store.governance_log(me.db, item_id),
    )


@router.post("/admin/memory/{item_id}/decide")
def memory_decide(
    me: Moderator, item_id: str, decision: str = Form(""), reason: str = Form("")
) -> Response:
    """A moderator's approval or rejection of an item, recorded with who and why."""
    _item_or_404(me, item_id)
    try:
        item = memory_store.decide_item(me.db, item_id, decision, me.name, reason)
    except memory_store.DecisionRefused as exc:
        me.flash("error", f"Not changed: {exc}.")
        return redirect(f"/admin/memory/{item_id}")
    me.flash("ok", f"Memory item {item_id} {item.status}.")
    return redirect(f"/admin/memory/{item_id}")


@router.post("/admin/memory/{item_id}/{change}")
def memory_change(
    me: AdminCaller, item_id: str, change: str, confirmed: str = Form("")
) -> Response:
    if change not in ("disable", "enable", "delete"):
        raise StarletteHTTPException(404, "Unknown action.")
    item = _item_or_404(me, item_id)
    if change == "delete":
        if confirmed != "yes":
            return me.page("memory_confirm_delete.html", item=item)
        memory_store.delete_item(me.db, item_id, me.name)
        me.flash("ok", f"Memory item {item_id} deleted.")
        return redirect("/admin/memory")
    memory_store.set_item_disabled(me.db, item_id, change == "disable", me.name)
    me.flash("ok", f"Memory item {item_id} {change}d.")
    return redirect(f"/admin/memory/{item_id}")
