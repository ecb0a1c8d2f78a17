"""The memory page in a real headless Chromium: the delete button asks in the browser first
(base.html's confirmation script), and the item is gone only when the admin says yes."""

from __future__ import annotations

import pytest
from playwright.sync_api import Dialog, expect

from bot.memory.store import StoredMemory, get_item
from pipeline.config import MemoryConfig
from pipeline.learning.memory import MemoryItem, Phase
from tests.bot.web.app_env import ADMIN, MODERATOR, AppEnv, log_in

pytestmark = pytest.mark.browser


def test_an_admin_disables_then_deletes_an_item_after_confirming(
    app_env: AppEnv,
    page: object,
) -> None:
    [item] = StoredMemory(app_env.db, MemoryConfig()).learn(
        [
            MemoryItem(
                phase=Phase.SEARCH,
                trigger="turnout figures",
                strategy="Use the commission.",
                kind="reuse",
            )
        ],
        "import:test",
    )
    log_in(page, ADMIN)
    page.click("nav >> text=Memory")  # type: ignore[attr-defined]
    page.click(f"tr[data-item='{item.id}'] a")  # type: ignore[attr-defined]
    page.click("#toggle")  # type: ignore[attr-defined]
    expect(page.locator("#item-status")).to_have_text("disabled")  # type: ignore[attr-defined]
    answers: list[str] = []

    def answer(dialog: Dialog) -> None:
        answers.append(dialog.message)
        dialog.dismiss() if len(answers) == 1 else dialog.accept()

    page.on("dialog", answer)  # type: ignore[attr-defined]
    page.click("#delete")  # type: ignore[attr-defined]
    expect(page.locator("#item-status")).to_be_visible()  # type: ignore[attr-defined]
    assert get_item(app_env.db, item.id) is not None  # "no": nothing was sent
    page.click("#delete")  # type: ignore[attr-defined]
    page.wait_for_url("**/admin/memory")  # type: ignore[attr-defined]
    expect(page.locator("p.flash.ok")).to_contain_text("deleted")  # type: ignore[attr-defined]
    assert answers == ["Delete this memory item for good?"] * 2
    assert get_item(app_env.db, item.id) is None


def test_a_moderator_approves_a_proposed_item_from_the_waiting_list(
    app_env: AppEnv,
    page: object,
) -> None:
    [item] = StoredMemory(app_env.db, MemoryConfig()).learn(
        [
            MemoryItem(
                phase=Phase.WRITING,
                trigger="home remedy claims",
                strategy="Name the health agency first.",
                kind="reuse",
                sources=["decision:1"],
            )
        ],
        "decision:1",
    )
    log_in(page, MODERATOR)
    page.click("nav >> text=Memory")  # type: ignore[attr-defined]
    page.click("#memory-waiting >> text=review them")  # type: ignore[attr-defined]
    page.click(f"tr[data-status='proposed'][data-item='{item.id}'] a")  # type: ignore[attr-defined]
    expect(page.locator("#item-review")).to_have_text("proposed")  # type: ignore[attr-defined]
    page.fill("#decide input[name=reason]", "general enough")  # type: ignore[attr-defined]
    page.click("#approve")  # type: ignore[attr-defined]
    expect(page.locator("#item-review")).to_have_text("approved")  # type: ignore[attr-defined]
    expect(page.locator("#item-decided")).to_contain_text(  # type: ignore[attr-defined]
        f"approved by {MODERATOR}"
    )
    stored = get_item(app_env.db, item.id)
    assert stored is not None and (stored.status, stored.reason) == ("approved", "general enough")
