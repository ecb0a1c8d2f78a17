"""End to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright)
against the app served by uvicorn on 127.0.0.1: the moderator's whole path through an item,
the admin boundary, and CSRF refusal of a tampered form."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from bot.web.app import create_app
from storage.models import Request, RequestState
from tests.bot.web.conftest import MODERATOR, PASSWORD, AppEnv
from tests.bot.web.seed import MINISTRY

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: run tools/ensure-chromium.sh (installs Debian's chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield instance
        instance.close()


@pytest.fixture
def base_url(app_env: AppEnv) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(app_env.settings, app_env.db, secret="browser-test-secret")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("uvicorn did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def page(browser: object, base_url: str) -> Iterator[object]:
    context = browser.new_context(base_url=base_url)  # type: ignore[attr-defined]
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield tab
    context.close()


def log_in(page: object, username: str) -> None:
    page.goto("/login")  # type: ignore[attr-defined]
    page.fill("input[name=username]", username)  # type: ignore[attr-defined]
    page.fill("input[name=password]", PASSWORD)  # type: ignore[attr-defined]
    page.click("form.login button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url("**/queue")  # type: ignore[attr-defined]


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
    expect(p.locator("#state")).to_have_text("posted")  # type: ignore[attr-defined]
    expect(p.locator("#current-draft")).to_have_text(fixed)  # type: ignore[attr-defined]
    assert _state(app_env, rid) == RequestState.POSTED.value
    assert fixed in app_env.outbox.read_text(encoding="utf-8")

    # The history shows who edited and approved it.
    history = p.locator("#history li")  # type: ignore[attr-defined]
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
