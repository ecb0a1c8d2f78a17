"""End to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright)
against the app served by uvicorn on 127.0.0.1: the moderator's whole path through an item,
the admin boundary, CSRF refusal of a tampered form, and (issue 18) bulk actions that confirm
with their count and leave escalated items out (with and without scripts), an item worked with
the keyboard (claim, edit with a live diff and guard, approve with a confirmation, next item),
the kill switch holding and releasing a post, and every page at 390 px wide."""

from __future__ import annotations

import pytest

from bot import platforms
from bot.moderation import actions as review
from bot.requests.posting import post_due
from storage.models import Request, RequestState
from tests.bot.web.app_env import ADMIN, MODERATOR, TIMEOUT_MS, AppEnv, log_in
from tests.bot.web.seed import MINISTRY

pytestmark = pytest.mark.browser


def _state(app_env: AppEnv, request_id: int) -> str:
    with app_env.db.session() as session:
        row = session.get(Request, request_id)
        assert row is not None
        return row.state


def test_moderator_filters_edits_fixes_approves_and_finds_the_item(
    app_env: AppEnv, page: object
) -> None:
    from playwright.sync_api import expect

    p = page
    rid = app_env.world.ids["review_local"]
    log_in(p, MODERATOR)

    # Filter the queue down to the local platform.
    expect(p.locator("table.queue tbody tr")).to_have_count(3)  # type: ignore[attr-defined]
    p.select_option("select[name=platform]", "local")  # type: ignore[attr-defined]
    p.click("form.filters button[type=submit]")  # type: ignore[attr-defined]
    p.wait_for_url("**/queue?*platform=local*")  # type: ignore[attr-defined]
    rows = p.locator("table.queue tbody tr")  # type: ignore[attr-defined]
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-id", str(rid))

    # Open the item.
    p.click(f"a.item-link[href='/requests/{rid}']")  # type: ignore[attr-defined]
    p.wait_for_url(f"**/requests/{rid}")  # type: ignore[attr-defined]
    expect(p.locator("#state")).to_have_text("awaiting_review")  # type: ignore[attr-defined]

    # Make the draft too long: the live meter turns red, and saving is refused.
    too_long = "Lemon water does not reach the airway cells where flu viruses grow. " * 5 + MINISTRY
    p.fill("#draft-text", too_long)  # type: ignore[attr-defined]
    expect(p.locator("#meter")).to_have_class("meter over")  # type: ignore[attr-defined]
    p.click("form.edit button[value=approve]")  # type: ignore[attr-defined]
    failure = p.locator("#guard-failure")  # type: ignore[attr-defined]
    expect(failure).to_be_visible()
    expect(failure).to_contain_text("too_long")
    expect(failure).to_contain_text("nothing was changed or approved")
    expect(p.locator("#state")).to_have_text("awaiting_review")  # type: ignore[attr-defined]
    assert _state(app_env, rid) == RequestState.AWAITING_REVIEW.value

    # Fix it and approve: posted through the local adapter. The refused form came back as a
    # new page; its meter script must be running before typing (a loaded machine is slow).
    p.wait_for_load_state("load")  # type: ignore[attr-defined]
    fixed = f"Lemon water cannot reach the airway cells where flu viruses grow. {MINISTRY}"
    p.fill("#draft-text", fixed)  # type: ignore[attr-defined]
    expect(p.locator("#meter")).not_to_have_class("meter over")  # type: ignore[attr-defined]
    p.click("form.edit button[value=approve]")  # type: ignore[attr-defined]
    # A decision moves on to the next item; the one just decided is a click back.
    expect(p.locator("p.flash.ok").nth(1)).to_contain_text("approved: posted")  # type: ignore[attr-defined]
    p.click("#previous")  # type: ignore[attr-defined]
    p.wait_for_url(f"**/requests/{rid}")  # type: ignore[attr-defined]
    expect(p.locator("#state")).to_have_text("posted")  # type: ignore[attr-defined]
    expect(p.locator("#outcome")).to_contain_text("Posted")  # type: ignore[attr-defined]
    expect(p.locator("#current-draft")).to_have_text(fixed)  # type: ignore[attr-defined]
    assert _state(app_env, rid) == RequestState.POSTED.value
    assert fixed in app_env.outbox.read_text(encoding="utf-8")

    # The history shows who edited and approved it.
    history = p.locator("#history li.action")  # type: ignore[attr-defined]
    expect(history).to_have_count(2)
    expect(history.nth(0)).to_contain_text(f"{MODERATOR} edit")
    expect(history.nth(1)).to_contain_text(f"{MODERATOR} approve")

    # The decisions log finds it by the text it was posted with.
    p.goto("/decisions")  # type: ignore[attr-defined]
    p.fill("input[name=q]", "cannot reach the airway cells")  # type: ignore[attr-defined]
    p.select_option("select[name=state]", "posted")  # type: ignore[attr-defined]
    p.click("form.filters button[type=submit]")  # type: ignore[attr-defined]
    log_rows = p.locator("table.log tbody tr[data-id]")  # type: ignore[attr-defined]
    expect(log_rows).to_have_count(1)
    expect(log_rows.first).to_have_attribute("data-id", str(rid))
    log_rows.first.locator(f"a[href='/requests/{rid}']").click()
    p.wait_for_url(f"**/requests/{rid}")  # type: ignore[attr-defined]


def test_moderator_cannot_reach_admin_settings(app_env: AppEnv, page: object) -> None:
    from playwright.sync_api import expect

    log_in(page, MODERATOR)
    expect(page.locator("a[href='/admin/settings']")).to_have_count(0)  # type: ignore[attr-defined]
    response = page.goto("/admin/settings")  # type: ignore[attr-defined]
    assert response is not None and response.status == 403
    expect(page.locator("h1")).to_have_text("Forbidden")  # type: ignore[attr-defined]


def test_a_form_posted_without_its_csrf_token_is_refused(app_env: AppEnv, page: object) -> None:
    from playwright.sync_api import expect

    rid = app_env.world.ids["review_local"]
    log_in(page, MODERATOR)
    page.goto(f"/requests/{rid}")  # type: ignore[attr-defined]
    page.evaluate(  # type: ignore[attr-defined]
        "document.querySelectorAll('input[name=csrf_token]').forEach(e => e.remove())"
    )
    with page.expect_response(f"**/requests/{rid}/approve") as info:  # type: ignore[attr-defined]
        page.click("#approve")  # type: ignore[attr-defined]
    assert info.value.status == 403
    expect(page.locator("h1")).to_have_text("Forbidden")  # type: ignore[attr-defined]
    assert _state(app_env, rid) == RequestState.AWAITING_REVIEW.value


# --- Issue 18: review as a team ----------------------------------------------------------


def _escalate(app_env: AppEnv, name: str) -> int:
    rid = app_env.world.ids[name]
    review.escalate(app_env.db, rid, ADMIN, "needs a doctor")
    return rid


def test_bulk_actions_ask_with_their_count_and_leave_escalated_items_out(
    app_env: AppEnv, browser: object, base_url: str, page: object
) -> None:
    from playwright.sync_api import expect

    p = page
    ids = app_env.world.ids
    escalated = _escalate(app_env, "review_x")
    log_in(p, MODERATOR)
    boxes = p.locator("input[name=ids]")  # type: ignore[attr-defined]
    expect(boxes).to_have_count(2)  # the escalated item has none
    expect(p.locator("input[name=ids]:checked")).to_have_count(0)  # type: ignore[attr-defined]
    expect(p.locator(f"tr[data-id='{escalated}'] .badge.escalated")).to_be_visible()  # type: ignore[attr-defined]

    # Both selected; the question is answered "no": nothing happens.
    asked: list[str] = []

    def answer(dialog: object, accept: bool) -> None:
        asked.append(dialog.message)  # type: ignore[attr-defined]
        dialog.accept() if accept else dialog.dismiss()  # type: ignore[attr-defined]

    boxes.nth(0).check()
    boxes.nth(1).check()
    p.once("dialog", lambda d: answer(d, False))  # type: ignore[attr-defined]
    p.click("button[data-bulk=Approve]")  # type: ignore[attr-defined]
    assert asked == ["Approve 2 selected items? Escalated items are never included."]
    assert _state(app_env, ids["review_local"]) == RequestState.AWAITING_REVIEW.value

    # Without scripts the server asks on a page; so does a single public approval.
    context = browser.new_context(base_url=base_url, java_script_enabled=False)  # type: ignore[attr-defined]
    context.set_default_timeout(TIMEOUT_MS)
    bare = context.new_page()
    log_in(bare, MODERATOR)
    bare.check(f"input[name=ids][value='{ids['review_local']}']")
    bare.click("button[data-bulk=Approve]")
    expect(bare.locator("#confirm-question")).to_have_text("Approve 1 item?")
    assert _state(app_env, ids["review_local"]) == RequestState.AWAITING_REVIEW.value
    bare.click("#confirm")
    expect(bare.locator("p.flash.ok")).to_contain_text("approved 1 item(s)")
    assert _state(app_env, ids["review_local"]) == RequestState.POSTED.value
    bare.goto(f"/requests/{ids['review_bsky']}")
    bare.click("#approve")
    expect(bare.locator("#confirm-question")).to_have_text("Post this reply in public on bluesky?")
    bare.click("#cancel")
    expect(bare.locator("#state")).to_have_text("awaiting_review")
    context.close()

    # With scripts, "yes" to the question for what is left: one item.
    p.goto("/queue")  # type: ignore[attr-defined]
    expect(boxes).to_have_count(1)
    boxes.nth(0).check()
    p.once("dialog", lambda d: answer(d, True))  # type: ignore[attr-defined]
    p.click("button[data-bulk=Approve]")  # type: ignore[attr-defined]
    expect(p.locator("p.flash.ok")).to_contain_text("approved 1 item(s)")  # type: ignore[attr-defined]
    assert asked[-1] == "Approve 1 selected item? Escalated items are never included."
    assert _state(app_env, ids["review_bsky"]) == RequestState.POSTING.value
    assert _state(app_env, escalated) == RequestState.AWAITING_REVIEW.value

    # The queue filtered to escalated items.
    p.select_option("select[name=escalated]", "only")  # type: ignore[attr-defined]
    p.click("form.filters button[type=submit]")  # type: ignore[attr-defined]
    expect(p.locator("table.queue tbody tr")).to_have_count(1)  # type: ignore[attr-defined]


def test_an_item_worked_with_the_keyboard(app_env: AppEnv, page: object) -> None:
    from playwright.sync_api import expect

    p = page
    ids = app_env.world.ids
    _escalate(app_env, "review_x")
    log_in(p, MODERATOR)
    # n: the next item this moderator may decide (the escalated one is skipped).
    p.keyboard.press("n")  # type: ignore[attr-defined]
    p.wait_for_url(f"**/requests/{ids['review_local']}")  # type: ignore[attr-defined]
    p.wait_for_load_state("load")  # type: ignore[attr-defined]
    p.keyboard.press("?")  # type: ignore[attr-defined]
    expect(p.locator("#keys")).to_be_visible()  # type: ignore[attr-defined]
    # c: claim it.
    p.keyboard.press("c")  # type: ignore[attr-defined]
    expect(p.locator("#claimed")).to_have_text("yours")  # type: ignore[attr-defined]
    # e: edit; the guard and the diff follow the text as it is typed.
    p.wait_for_load_state("load")  # type: ignore[attr-defined]
    p.keyboard.press("e")  # type: ignore[attr-defined]
    expect(p.locator("#draft-text")).to_be_focused()  # type: ignore[attr-defined]
    p.keyboard.press("End")  # type: ignore[attr-defined]
    p.keyboard.type(" https://other.example/miracle")  # type: ignore[attr-defined]
    expect(p.locator("#live-guard")).to_contain_text("url_not_evidence")  # type: ignore[attr-defined]
    expect(p.locator("#live-diff ins")).to_contain_text("other.example/miracle")  # type: ignore[attr-defined]
    fixed = f"Lemon water never reaches the airway cells where flu viruses grow. {MINISTRY}"
    p.fill("#draft-text", fixed)  # type: ignore[attr-defined]
    expect(p.locator("#live-guard")).to_have_text("Guard on this text: passes.")  # type: ignore[attr-defined]
    p.click("form.edit button[value=save]")  # type: ignore[attr-defined]
    expect(p.locator("#draft-diff ins").first).to_be_visible()  # type: ignore[attr-defined]
    expect(p.locator("#current-guard")).to_contain_text("passes")  # type: ignore[attr-defined]
    # a: approve (a file post: no question), and on to the next item.
    p.wait_for_load_state("load")  # type: ignore[attr-defined]
    p.keyboard.press("a")  # type: ignore[attr-defined]
    p.wait_for_url(f"**/requests/{ids['review_bsky']}?after={ids['review_local']}")  # type: ignore[attr-defined]
    expect(p.locator("#previous + .state")).to_have_text("posted")  # type: ignore[attr-defined]
    # On Bluesky it is a public post: a question first; "no" leaves it as it was.
    asked: list[str] = []

    def dismiss(dialog: object) -> None:
        asked.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()  # type: ignore[attr-defined]

    p.wait_for_load_state("load")  # type: ignore[attr-defined]
    p.once("dialog", dismiss)  # type: ignore[attr-defined]
    p.keyboard.press("a")  # type: ignore[attr-defined]
    expect(p.locator("#state")).to_have_text("awaiting_review")  # type: ignore[attr-defined]
    assert asked == ["Post this reply in public on bluesky?"]
    assert _state(app_env, ids["review_bsky"]) == RequestState.AWAITING_REVIEW.value
    # r: to the reject reasons.
    p.keyboard.press("r")  # type: ignore[attr-defined]
    expect(p.locator("select[name=reason]")).to_be_focused()  # type: ignore[attr-defined]


def test_the_kill_switch_holds_a_post_until_it_is_lifted(app_env: AppEnv, page: object) -> None:
    from playwright.sync_api import expect

    p = page
    rid = app_env.world.ids["review_local"]
    adapter = platforms.spec_for("local").build(app_env.settings)  # type: ignore[union-attr]

    def bot_posting_run() -> int:  # the running bot's maintenance job, started before
        return post_due(app_env.db, {"local": adapter}, app_env.settings.runtime)

    log_in(p, ADMIN)
    p.goto("/admin/posting")  # type: ignore[attr-defined]
    row = p.locator("tr[data-platform=local]")  # type: ignore[attr-defined]
    row.locator("input[name=note]").fill("checking a complaint")
    row.locator("button.pause").click()
    expect(p.locator("#stopped")).to_contain_text(  # type: ignore[attr-defined]
        f"Posting to local is paused by {ADMIN} (checking a complaint)."
    )
    expect(row.locator("td.posting")).to_contain_text("stopped")

    p.goto(f"/requests/{rid}")  # type: ignore[attr-defined]
    expect(p.locator("#approve-plan")).to_contain_text("kill switch")  # type: ignore[attr-defined]
    p.click("#approve")  # type: ignore[attr-defined]
    expect(p.locator("p.flash.ok").first).to_contain_text("held")  # type: ignore[attr-defined]
    assert _state(app_env, rid) == RequestState.POSTING.value
    assert bot_posting_run() == 0
    assert not app_env.outbox.exists()

    p.goto("/admin/posting")  # type: ignore[attr-defined]
    expect(row.locator("td.held")).to_have_text("1")
    row.locator("button.resume").click()
    expect(p.locator("#stopped")).to_have_count(0)  # type: ignore[attr-defined]
    assert bot_posting_run() == 1
    assert _state(app_env, rid) == RequestState.POSTED.value
    changes = p.locator("#changes tbody tr")  # type: ignore[attr-defined]
    expect(changes).to_have_count(2)
    expect(changes.nth(0)).to_contain_text(ADMIN)


def test_pages_fit_a_390_px_wide_screen(app_env: AppEnv, browser: object, base_url: str) -> None:
    context = browser.new_context(  # type: ignore[attr-defined]
        base_url=base_url, viewport={"width": 390, "height": 844}
    )
    context.set_default_timeout(TIMEOUT_MS)
    p = context.new_page()
    log_in(p, ADMIN)
    ids = app_env.world.ids
    for url in (
        "/queue",
        f"/requests/{ids['review_local']}",
        f"/requests/{ids['posted_edited']}",
        "/decisions",
        "/admin/posting",
        "/admin/settings",
        "/admin/users",
    ):
        p.goto(url)
        width = p.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (url, width)
    context.close()
