"""The queue's list in a real headless Chromium (issue 32): pages with the true count, the
keyboard in the list (j/k/x/a), select-all of the filtered set confirmed with its exact count,
a row's quick claim, and the tables and the report readable at 390 px.

With FACTNOTE_SCREENSHOTS=docs/images set, the tests also save the moderator guide's
screenshots (docs/moderator-guide.md) there, as small PNGs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.moderation import actions as review
from bot.reports.audit import write_report
from storage.models import Request, RequestState
from tests.bot.web.app_env import ADMIN, MODERATOR, AppEnv, log_in
from tests.bot.web.seed import Spec, seed

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("FACTNOTE_SCREENSHOTS", "")


def shot(p: object, name: str, *, full: bool = False) -> None:
    """A screenshot for the guide when FACTNOTE_SCREENSHOTS names a folder."""
    if not SHOTS:
        return
    folder = Path(SHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(folder / f"{name}.png"), full_page=full)  # type: ignore[attr-defined]


def _pending(app_env: AppEnv, n: int) -> list[int]:
    specs = [Spec(f"more_{i}", RequestState.AWAITING_REVIEW, age_h=4 + i / 10) for i in range(n)]
    world = seed(app_env.db, specs, now=app_env.world.now)
    return [world.ids[s.name] for s in specs]


def test_the_list_pages_and_works_with_the_keyboard_and_select_all(
    app_env: AppEnv, page: object
) -> None:
    from playwright.sync_api import expect

    p = page
    more = _pending(app_env, 57)  # 60 awaiting in all: two pages of 50
    review.escalate(app_env.db, more[0], MODERATOR, "needs a doctor")  # on page 2
    p.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    log_in(p, MODERATOR)
    expect(p.locator("#queue-count")).to_have_text("60")  # type: ignore[attr-defined]
    rows = p.locator("table.queue tbody tr")  # type: ignore[attr-defined]
    expect(rows).to_have_count(50)
    expect(p.locator("nav.pages").first).to_contain_text("page 1 of 2")  # type: ignore[attr-defined]
    shot(p, "queue")

    # j, j, k: the first row is current again; x selects it; j then x selects the second.
    for key in ("j", "j", "k", "x", "j", "x"):
        p.keyboard.press(key)  # type: ignore[attr-defined]
    expect(rows.nth(1)).to_have_class(re.compile(r"\bcurrent\b"))
    checked = p.locator("table.queue input[name=ids]:checked")  # type: ignore[attr-defined]
    expect(checked).to_have_count(2)
    ids = {checked.nth(i).get_attribute("value") for i in range(2)}
    assert ids == {rows.nth(0).get_attribute("data-id"), rows.nth(1).get_attribute("data-id")}

    # a: approve the current row, after the browser's confirmation (a local post: none).
    current = int(rows.nth(1).get_attribute("data-id") or 0)
    p.once("dialog", lambda d: d.accept())  # type: ignore[attr-defined]
    p.keyboard.press("a")  # type: ignore[attr-defined]
    p.wait_for_url("**/queue*")  # type: ignore[attr-defined]
    expect(p.locator(".flash.ok")).to_contain_text(f"#{current} approved")  # type: ignore[attr-defined]
    with app_env.db.session() as session:
        assert review.history(session, current)[-1].action == "approve"

    # Select-all of the filtered set: the dialog names the exact count (escalated left out).
    p.check("#select-every")  # type: ignore[attr-defined]
    messages: list[str] = []

    def answer(dialog: object) -> None:
        messages.append(dialog.message)  # type: ignore[attr-defined]
        dialog.accept()  # type: ignore[attr-defined]

    p.on("dialog", answer)  # type: ignore[attr-defined]
    p.select_option("fieldset.bulk-actions select[name=reason]", "tone or wording")  # type: ignore[attr-defined]
    shot(p, "queue-select-all")
    p.click("button[data-bulk=Reject]")  # type: ignore[attr-defined]
    p.wait_for_url("**/queue*")  # type: ignore[attr-defined]
    assert messages == ["Reject all 58 matching item(s)? Escalated items are never included."]
    with app_env.db.session() as session:
        left = session.scalars(
            select(Request.id).where(Request.state == RequestState.AWAITING_REVIEW.value)
        ).all()
    assert left == [more[0]]  # only the escalated one


def test_a_rows_quick_claim_keeps_the_page(app_env: AppEnv, page: object) -> None:
    from playwright.sync_api import expect

    p = page
    rid = app_env.world.ids["review_bsky"]
    log_in(p, MODERATOR)
    p.goto("/queue?order=newest")  # type: ignore[attr-defined]
    p.click(f"tr[data-id='{rid}'] button.quick-claim")  # type: ignore[attr-defined]
    p.wait_for_url("**/queue?order=newest*")  # type: ignore[attr-defined]
    expect(p.locator(f"tr[data-id='{rid}'] .badge.claimed")).to_have_text("yours")  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", ["/decisions", "/admin/settings", "/admin/users"])
def test_tables_keep_their_labels_at_390_px(app_env: AppEnv, page: object, path: str) -> None:
    p = page
    p.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    log_in(p, ADMIN)
    p.goto(path)  # type: ignore[attr-defined]
    cells = p.locator("td[data-label]")  # type: ignore[attr-defined]
    assert cells.count() > 0
    label = p.evaluate(  # type: ignore[attr-defined]
        "getComputedStyle(document.querySelector('td[data-label]'), '::before').content"
    )
    assert label.startswith('"') and label.endswith(': "'), label
    width = p.evaluate("document.documentElement.scrollWidth")  # type: ignore[attr-defined]
    assert width <= 390
    if path == "/decisions":
        shot(p, "decisions-390", full=False)


def test_the_report_does_not_overflow_sideways_at_390_px(
    app_env: AppEnv, page: object, tmp_path: Path
) -> None:
    p = page
    report = write_report(app_env.db, tmp_path / "report")
    p.set_viewport_size({"width": 390, "height": 844})  # type: ignore[attr-defined]
    p.goto(report.as_uri())  # type: ignore[attr-defined]
    assert p.evaluate("document.documentElement.scrollWidth") <= 390  # type: ignore[attr-defined]


def test_screenshots_of_the_item_page_and_the_kill_switch(app_env: AppEnv, page: object) -> None:
    """The guide's other pictures (only taken when asked for), and the favicon served."""
    p = page
    p.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    log_in(p, ADMIN)
    assert p.goto("/favicon.ico").status == 200  # type: ignore[attr-defined,union-attr]
    rid = app_env.world.ids["review_local"]
    p.goto(f"/requests/{rid}")  # type: ignore[attr-defined]
    p.fill("#draft-text", "Lemon water does not kill flu viruses.")  # type: ignore[attr-defined]
    p.wait_for_selector("#live-guard:not([hidden])")  # type: ignore[attr-defined]
    shot(p, "item-edit")
    p.goto("/admin/posting")  # type: ignore[attr-defined]
    shot(p, "kill-switch")
    p.goto("/decisions")  # type: ignore[attr-defined]
    shot(p, "decisions")
