"""Numbers no row can have in a path or a query (past 64 bits) are answered 404, not 500
(issue 33: `/requests/99999999999999999999` raised OverflowError in SQLite's driver)."""

from __future__ import annotations

import pytest

from tests.bot.web.app_env import AppEnv, Session

HUGE = str(2**64 + 7)  # past SQLite's and PostgreSQL's 64-bit integers


@pytest.mark.parametrize(
    "path",
    [
        f"/requests/{HUGE}",
        f"/requests/{HUGE}/measure?text=x",
        f"/admin/memory/{HUGE}",
        f"/next?after={HUGE}",
        f"/decisions?page_no={HUGE}",
        f"/requests/-{HUGE}",
    ],
)
def test_a_number_past_64_bits_is_not_found(admin: Session, path: str) -> None:
    response = admin.client.get(path, follow_redirects=False)
    assert response.status_code == 404, response.text[:300]


def test_a_post_with_a_number_past_64_bits_is_not_found(
    app_env: AppEnv, moderator: Session
) -> None:
    response = moderator.post(f"/requests/{HUGE}/claim")
    assert response.status_code == 404
