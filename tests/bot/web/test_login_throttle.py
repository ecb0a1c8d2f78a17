"""Login throttling (issue 16, item 7): failures counted per name and per client address in the
database, lockouts that double, the same answer for unknown names, and an admin who lifts them.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import httpx
import pytest
from fastapi.testclient import TestClient

from bot.moderation import users
from bot.web.app import create_app
from storage.db import Database
from tests.bot.web.app_env import (
    ADMIN,
    MODERATOR,
    PASSWORD,
    AppEnv,
    Clock,
    Session,
    csrf_of,
)

LOCKED = "Too many failed logins."
LOCKOUT_S = 300  # the default first lockout
WINDOW_S = 900


def attempt(client: TestClient, username: str, password: str) -> httpx.Response:
    token = csrf_of(client.get("/login").text)
    return client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": token},
        follow_redirects=False,
    )


def alert(response: httpx.Response) -> str:
    match = re.search(r'role="alert">([^<]*)<', response.text)
    assert match is not None, response.text
    return match.group(1)


def logged_in(client: TestClient) -> bool:
    return client.get("/queue", follow_redirects=False).status_code == 200


def lock_out(app_env: AppEnv, client: TestClient, username: str) -> httpx.Response:
    """Fail as often as it takes to lock `username` out; returns the locking answer."""
    for _ in range(app_env.settings.web.login_max_failures - 1):
        assert attempt(client, username, "wrong password!").status_code == 401
    response = attempt(client, username, "wrong password!")
    assert response.status_code == 429
    return response


def test_forty_wrong_passwords_then_the_right_one_is_refused(app_env: AppEnv) -> None:
    # The reproduction: 40 wrong passwords in 34 s, then the right one worked at once.
    client = app_env.client()
    statuses = []
    for _ in range(40):
        statuses.append(attempt(client, MODERATOR, "wrong password!").status_code)
        app_env.clock.advance(34 / 40)
    assert statuses[:4] == [401] * 4 and set(statuses[4:]) == {429}
    response = attempt(client, MODERATOR, PASSWORD)
    assert response.status_code == 429
    assert alert(response).startswith(LOCKED)
    assert 0 < int(response.headers["retry-after"]) <= LOCKOUT_S
    assert not logged_in(client)
    # Once the lockout has passed, the right password works again.
    app_env.clock.advance(LOCKOUT_S)
    assert attempt(client, MODERATOR, PASSWORD).status_code == 303
    assert logged_in(client)


def test_a_locked_account_refuses_the_right_password_from_any_address(app_env: AppEnv) -> None:
    lock_out(app_env, app_env.client(client=("198.51.100.1", 1)), MODERATOR)
    elsewhere = app_env.client(client=("198.51.100.2", 1))
    assert attempt(elsewhere, MODERATOR, PASSWORD).status_code == 429
    assert not logged_in(elsewhere)
    assert attempt(elsewhere, ADMIN, PASSWORD).status_code == 303  # other accounts are not


def test_the_lockout_answer_does_not_reveal_whether_the_account_exists(app_env: AppEnv) -> None:
    real = lock_out(app_env, app_env.client(client=("198.51.100.1", 1)), MODERATOR)
    unknown = lock_out(app_env, app_env.client(client=("198.51.100.2", 1)), "nobody_demo")
    assert alert(real) == alert(unknown)
    assert real.headers["retry-after"] == unknown.headers["retry-after"]
    again_real = attempt(app_env.client(client=("198.51.100.3", 1)), MODERATOR, PASSWORD)
    again_unknown = attempt(app_env.client(client=("198.51.100.4", 1)), "nobody_demo", PASSWORD)
    assert again_real.status_code == again_unknown.status_code == 429
    assert alert(again_real) == alert(again_unknown)


def test_a_locked_out_attempt_does_not_check_the_password(
    app_env: AppEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = app_env.client()
    lock_out(app_env, client, MODERATOR)
    lock_out(app_env, app_env.client(client=("198.51.100.9", 1)), "nobody_demo")
    checked: list[str] = []
    monkeypatch.setattr(users, "authenticate", lambda db, name, pw: checked.append(name))
    attempt(client, MODERATOR, PASSWORD)
    attempt(app_env.client(client=("198.51.100.9", 1)), "nobody_demo", PASSWORD)
    assert checked == []  # no argon2 work, so no timing difference between the two either


def test_made_up_names_from_one_address_cannot_lock_real_accounts_out_of_it(
    app_env: AppEnv,
) -> None:
    # Issue 33: behind one proxy every moderator shares an address; strangers guessing names
    # there must not lock them out.
    attacker = app_env.client(client=("203.0.113.66", 1))
    limit = app_env.settings.web.login_address_max_failures
    statuses = [
        attempt(attacker, f"guess{i % 7}_demo", "wrong password!").status_code for i in range(limit)
    ]
    assert statuses[-1] == 429 and set(statuses[:-1]) == {401}  # never 5 on one name
    # Every failure from the address is now answered as locked, a real account's included, so
    # the answers do not tell which names exist ...
    assert attempt(attacker, "guess99_demo", "wrong password!").status_code == 429
    assert attempt(attacker, MODERATOR, "wrong password!").status_code == 429
    assert not logged_in(attacker)
    # ... but a moderator at the same address with the right password gets in.
    colleague = app_env.client(client=("203.0.113.66", 2))
    assert attempt(colleague, MODERATOR, PASSWORD).status_code == 303


def test_one_password_sprayed_over_real_accounts_locks_the_address(app_env: AppEnv) -> None:
    # Failures on real accounts count per address too (a spray stays under each account's
    # own limit): past the address limit the address is refused unchecked.
    app_env.settings.web.login_address_max_failures = 6
    sprayer = app_env.client(client=("203.0.113.70", 1))
    statuses = [
        attempt(sprayer, name, "Summer2026!").status_code
        for _ in range(3)
        for name in (ADMIN, MODERATOR)
    ]
    assert statuses[-1] == 429 and set(statuses[:-1]) == {401}
    assert attempt(sprayer, MODERATOR, PASSWORD).status_code == 429
    elsewhere = app_env.client(client=("203.0.113.71", 1))
    assert attempt(elsewhere, MODERATOR, PASSWORD).status_code == 303  # no account is locked


def test_failures_further_apart_than_the_window_do_not_add_up(app_env: AppEnv) -> None:
    client = app_env.client()
    for _ in range(4):
        assert attempt(client, MODERATOR, "wrong password!").status_code == 401
    app_env.clock.advance(WINDOW_S)
    for _ in range(4):
        assert attempt(client, MODERATOR, "wrong password!").status_code == 401
    assert attempt(client, MODERATOR, PASSWORD).status_code == 303


def test_a_successful_login_clears_the_accounts_failures(app_env: AppEnv) -> None:
    client = app_env.client()
    for _ in range(4):
        attempt(client, MODERATOR, "wrong password!")
    assert attempt(client, MODERATOR, PASSWORD).status_code == 303
    other = app_env.client()
    for _ in range(4):
        assert attempt(other, MODERATOR, "wrong password!").status_code == 401


def test_each_lockout_in_a_row_lasts_twice_as_long_up_to_the_cap(db: Database) -> None:
    policy = users.LoginPolicy(
        max_failures=2,
        address_max_failures=100,
        window=timedelta(minutes=15),
        lockout=timedelta(minutes=5),
        lockout_max=timedelta(minutes=30),
    )
    now = Clock().now
    lengths = []
    for _ in range(5):
        users.attempt_login(db, "nobody_demo", "x", "192.0.2.1", now=now, policy=policy)
        result = users.attempt_login(db, "nobody_demo", "x", "192.0.2.1", now=now, policy=policy)
        assert result.account is None and result.locked_until is not None
        lengths.append(result.locked_until - now)
        now = result.locked_until  # tries again the moment it ends
    assert [int(d.total_seconds() // 60) for d in lengths] == [5, 10, 20, 30, 30]
    # Quiet for a whole window after the last lockout: the doubling starts over.
    now += policy.window
    users.attempt_login(db, "nobody_demo", "x", "192.0.2.1", now=now, policy=policy)
    result = users.attempt_login(db, "nobody_demo", "x", "192.0.2.1", now=now, policy=policy)
    assert result.locked_until == now + policy.lockout


def test_the_lockout_survives_a_restart_and_is_shared_by_processes(app_env: AppEnv) -> None:
    first = app_env.client()
    for _ in range(3):
        attempt(first, MODERATOR, "wrong password!")
    # Another web process: its own app, engine and connection to the same database.
    other_db = Database(app_env.db.url)
    try:
        second = TestClient(
            create_app(app_env.settings, other_db, secret="test-secret", clock=app_env.clock)
        )
        assert attempt(second, MODERATOR, "wrong password!").status_code == 401
        assert attempt(second, MODERATOR, "wrong password!").status_code == 429
    finally:
        other_db.dispose()
    restarted = app_env.client()  # a new process after a restart
    assert attempt(restarted, MODERATOR, PASSWORD).status_code == 429


def test_an_admin_unlocks_an_account_from_the_users_page(app_env: AppEnv, admin: Session) -> None:
    client = app_env.client()
    lock_out(app_env, client, MODERATOR)
    lock_out(app_env, client, "nobody_demo")
    page = admin.client.get("/admin/users").text
    row = re.search(rf'<tr data-user="{MODERATOR}">.*?</tr>', page, re.S)
    assert row is not None and "locked out until" in row.group(0)
    assert f"/admin/users/{MODERATOR}/unlock" in row.group(0)
    assert "nobody_demo" not in page  # unknown names are locked but not listed
    assert admin.post(f"/admin/users/{MODERATOR}/unlock").status_code == 303
    assert f"User {MODERATOR} unlocked." in admin.client.get("/admin/users").text
    assert attempt(client, MODERATOR, PASSWORD).status_code == 303


def test_an_admin_unlocks_a_client_address(app_env: AppEnv, admin: Session) -> None:
    office = app_env.client(client=("203.0.113.80", 1))
    for i in range(app_env.settings.web.login_address_max_failures):
        attempt(office, f"typo{i % 5}_demo", "wrong password!")
    assert attempt(office, "typo9_demo", "wrong password!").status_code == 429
    page = admin.client.get("/admin/users").text
    assert 'data-address="203.0.113.80"' in page
    assert admin.post("/admin/lockouts/address", address="203.0.113.80").status_code == 303
    assert attempt(office, "typo9_demo", "wrong password!").status_code == 401


def test_a_moderator_cannot_unlock(app_env: AppEnv, moderator: Session) -> None:
    lock_out(app_env, app_env.client(), ADMIN)
    assert moderator.post(f"/admin/users/{ADMIN}/unlock").status_code == 403
    assert attempt(app_env.client(), ADMIN, PASSWORD).status_code == 429


def test_failed_logins_and_lockouts_are_logged_without_the_password(
    app_env: AppEnv, caplog: pytest.LogCaptureFixture
) -> None:
    client = app_env.client(client=("198.51.100.23", 1))
    with caplog.at_level(logging.WARNING, logger="bot.moderation.users"):
        for _ in range(app_env.settings.web.login_max_failures):
            attempt(client, MODERATOR, "hunter2 wrong!")
        assert attempt(client, MODERATOR, PASSWORD).status_code == 429
    messages = [r.getMessage() for r in caplog.records]
    assert f"failed login for '{MODERATOR}' from 198.51.100.23" in messages
    assert any(m.startswith(f"login locked for account '{MODERATOR}' until") for m in messages)
    assert any(m.startswith(f"login refused for '{MODERATOR}'") for m in messages)
    assert not any("hunter2" in m or PASSWORD in m for m in messages)


def test_a_name_with_a_line_break_cannot_forge_log_lines(
    app_env: AppEnv, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="bot.moderation.users"):
        attempt(app_env.client(), "x\nINFO admin logged in", "wrong password!")
    assert caplog.records and all("\n" not in r.getMessage() for r in caplog.records)


def test_ipv6_clients_are_counted_per_64_so_rotating_addresses_does_not_help(
    app_env: AppEnv,
) -> None:
    limit = app_env.settings.web.login_address_max_failures
    for i in range(limit):
        rotating = app_env.client(client=(f"2001:db8:0:1::{i + 1:x}", 1))
        attempt(rotating, f"guess{i % 5}_demo", "wrong password!")
    same_64 = app_env.client(client=("2001:db8:0:1:ffff::9", 1))
    assert attempt(same_64, "guess9_demo", "wrong password!").status_code == 429
    other_64 = app_env.client(client=("2001:db8:0:2::1", 1))
    assert attempt(other_64, "guess8_demo", "wrong password!").status_code == 401
    assert [lk.key for lk in users.lockouts(app_env.db, app_env.clock())] == ["2001:db8:0:1::/64"]
    assert users.unlock_address(app_env.db, "2001:db8:0:1::5")  # any address of the /64
    assert attempt(same_64, "guess7_demo", "wrong password!").status_code == 401
