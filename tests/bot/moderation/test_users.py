"""Accounts: argon2 hashes, authentication, disabling, and the `factnote users` commands."""

from __future__ import annotations

import json
import threading
from dataclasses import fields
from pathlib import Path
from typing import Literal

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select
from typer.testing import CliRunner

from bot.cli import app
from bot.moderation import users
from pipeline.records import utcnow
from storage.db import Database
from storage.models import LoginThrottle, User

runner = CliRunner()
PASSWORD = "correct horse battery"


@pytest.fixture
def cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        users, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    monkeypatch.setattr(users, "_dummy_hash", None)


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cheap: None) -> Database:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", url)
    return Database(url)


def test_passwords_are_stored_as_argon2id_hashes_with_the_default_cost(db: Database) -> None:
    users.add_user(db, "ann_demo", PASSWORD, "admin")
    with db.session() as session:
        stored = session.scalars(select(User.password_hash)).one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert not users.HASHER.check_needs_rehash(stored)
    assert users.authenticate(db, "ann_demo", PASSWORD) is not None


def test_authenticate_accepts_only_the_right_password_of_an_active_user(
    db: Database, cheap: None
) -> None:
    users.add_user(db, "ann_demo", PASSWORD, "moderator")
    account = users.authenticate(db, "ann_demo", PASSWORD)
    assert account is not None and account.role == "moderator" and account.last_login_at
    assert users.authenticate(db, "ann_demo", PASSWORD + "!") is None
    assert users.authenticate(db, "nobody_demo", PASSWORD) is None
    users.disable_user(db, "ann_demo")
    assert users.authenticate(db, "ann_demo", PASSWORD) is None
    users.enable_user(db, "ann_demo")
    assert users.authenticate(db, "ann_demo", PASSWORD) is not None


class CountingHasher(PasswordHasher):
    calls: list[str]

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        type(self).calls.append(str(hash))
        return super().verify(hash, password)


def test_an_unknown_user_costs_one_argon2_verification_too(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    CountingHasher.calls = []
    monkeypatch.setattr(
        users, "HASHER", CountingHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    monkeypatch.setattr(users, "_dummy_hash", None)
    users.add_user(db, "ann_demo", PASSWORD, "moderator")
    assert users.authenticate(db, "nobody_demo", PASSWORD) is None
    assert users.authenticate(db, "ann_demo", "wrong password") is None
    calls = CountingHasher.calls
    assert len(calls) == 2 and all(c.startswith("$argon2id$") for c in calls)


@pytest.mark.parametrize(
    ("username", "password", "role", "message"),
    [
        ("ann_demo", "short", "admin", "at least"),
        ("ann demo", PASSWORD, "admin", "username"),
        ("ann_demo", PASSWORD, "owner", "role"),
    ],
)
def test_bad_accounts_are_refused(
    db: Database, cheap: None, username: str, password: str, role: str, message: str
) -> None:
    with pytest.raises(users.UserError, match=message):
        users.add_user(db, username, password, role)


def test_a_username_is_unique(db: Database, cheap: None) -> None:
    users.add_user(db, "ann_demo", PASSWORD, "admin")
    with pytest.raises(users.UserError, match="exists"):
        users.add_user(db, "ann_demo", PASSWORD, "moderator")


def test_disabling_and_logout_bump_the_session_version(db: Database, cheap: None) -> None:
    first = users.add_user(db, "ann_demo", PASSWORD, "admin")
    users.end_sessions(db, first.id)
    users.disable_user(db, "ann_demo")
    account = users.get_user(db, first.id)
    assert account is not None and account.session_version == first.session_version + 2


def test_cli_adds_a_user_with_the_password_from_stdin(cli_env: Database) -> None:
    result = runner.invoke(
        app,
        ["users", "add", "ann_demo", "--role", "admin", "--password-stdin"],
        input=PASSWORD + "\n",
    )
    assert result.exit_code == 0, result.output
    assert "added ann_demo (admin)" in result.output
    assert users.authenticate(cli_env, "ann_demo", PASSWORD) is not None
    listed = runner.invoke(app, ["users", "list", "--json"])
    assert '"username": "ann_demo"' in listed.output


def test_cli_prompts_for_the_password_twice(cli_env: Database) -> None:
    result = runner.invoke(
        app, ["users", "add", "bo_demo", "--role", "moderator"], input=f"{PASSWORD}\n{PASSWORD}\n"
    )
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output  # hidden input
    assert users.authenticate(cli_env, "bo_demo", PASSWORD) is not None


def test_cli_has_no_password_argument(cli_env: Database) -> None:
    result = runner.invoke(
        app, ["users", "add", "ann_demo", "--role", "admin", "--password", PASSWORD]
    )
    assert result.exit_code != 0
    assert users.list_users(cli_env) == []


def test_cli_disables_a_user_and_reports_unknown_ones(cli_env: Database) -> None:
    users.add_user(cli_env, "ann_demo", PASSWORD, "moderator")
    assert runner.invoke(app, ["users", "disable", "ann_demo"]).exit_code == 0
    assert users.authenticate(cli_env, "ann_demo", PASSWORD) is None
    missing = runner.invoke(app, ["users", "disable", "nobody_demo"])
    assert missing.exit_code == 1 and "no user" in missing.output


def test_cli_refuses_a_weak_password(cli_env: Database) -> None:
    result = runner.invoke(
        app, ["users", "add", "ann_demo", "--role", "admin", "--password-stdin"], input="short\n"
    )
    assert result.exit_code == 1
    assert users.list_users(cli_env) == []


def test_cli_resets_a_password_and_ends_the_accounts_sessions(cli_env: Database) -> None:
    before = users.add_user(cli_env, "ann_demo", PASSWORD, "moderator")
    result = runner.invoke(
        app,
        ["users", "reset-password", "ann_demo", "--password-stdin"],
        input="a new long secret\n",
    )
    assert result.exit_code == 0, result.output
    assert "password reset for ann_demo" in result.output
    assert users.authenticate(cli_env, "ann_demo", PASSWORD) is None
    assert users.authenticate(cli_env, "ann_demo", "a new long secret") is not None
    after = users.get_user(cli_env, before.id)
    assert after is not None and after.session_version == before.session_version + 1


def test_cli_reset_password_refuses_unknown_users_and_weak_passwords(cli_env: Database) -> None:
    users.add_user(cli_env, "ann_demo", PASSWORD, "moderator")
    missing = runner.invoke(
        app, ["users", "reset-password", "nobody_demo", "--password-stdin"], input=PASSWORD + "\n"
    )
    assert missing.exit_code == 1 and "no user" in missing.output
    weak = runner.invoke(
        app, ["users", "reset-password", "ann_demo", "--password-stdin"], input="short\n"
    )
    assert weak.exit_code == 1
    assert users.authenticate(cli_env, "ann_demo", PASSWORD) is not None


def _lock(db: Database, username: str, address: str = "192.0.2.1") -> users.LoginPolicy:
    policy = users.LoginPolicy(max_failures=2, address_max_failures=2)
    for _ in range(2):
        users.attempt_login(db, username, "wrong password", address, now=utcnow(), policy=policy)
    assert users.login_locked_until(db, username, None, utcnow()) is not None
    return policy


def test_cli_unlock_lifts_an_account_lockout(cli_env: Database) -> None:
    users.add_user(cli_env, "ann_demo", PASSWORD, "moderator")
    policy = _lock(cli_env, "ann_demo")
    listed = runner.invoke(app, ["users", "list", "--json"])
    assert '"locked_until": "' in listed.output
    result = runner.invoke(app, ["users", "unlock", "ann_demo"])
    assert result.exit_code == 0 and "unlocked ann_demo" in result.output
    again = users.attempt_login(
        cli_env, "ann_demo", PASSWORD, "192.0.2.2", now=utcnow(), policy=policy
    )
    assert again.account is not None and again.account.username == "ann_demo"
    assert '"locked_until": null' in runner.invoke(app, ["users", "list", "--json"]).output


def test_cli_unlock_lifts_an_address_lockout_and_reports_unknown_users(
    cli_env: Database,
) -> None:
    users.add_user(cli_env, "ann_demo", PASSWORD, "moderator")
    policy = _lock(cli_env, "nobody_demo", "192.0.2.9")
    # Locked for made-up names: a failure there is answered as locked (a right password still
    # gets in, see tests/bot/web/test_login_throttle.py).
    locked = users.attempt_login(
        cli_env, "someone_demo", "wrong", "192.0.2.9", now=utcnow(), policy=policy
    )
    assert locked.account is None and locked.locked_until is not None
    result = runner.invoke(app, ["users", "unlock", "--address", "192.0.2.9"])
    assert result.exit_code == 0 and "unlocked address 192.0.2.9" in result.output
    unlocked = users.attempt_login(
        cli_env, "another_demo", "wrong", "192.0.2.9", now=utcnow(), policy=policy
    )
    assert unlocked.account is None and unlocked.locked_until is None
    missing = runner.invoke(app, ["users", "unlock", "nobody_demo"])
    assert missing.exit_code == 1 and "no user" in missing.output
    assert runner.invoke(app, ["users", "unlock"]).exit_code == 1


def test_failures_counted_by_several_processes_at_once_all_add_up(
    db: Database, cheap: None
) -> None:
    policy = users.LoginPolicy(max_failures=1000, address_max_failures=1000)
    now = utcnow()
    errors: list[BaseException] = []

    def web_process(n: int) -> None:
        own = Database(db.url, migrate=False)  # each with its own engine and connections
        try:
            for _ in range(10):
                users.attempt_login(
                    own, "ann_demo", "wrong password", "192.0.2.7", now=now, policy=policy
                )
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            own.dispose()

    threads = [threading.Thread(target=web_process, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with db.session() as session:
        counts = {row.scope: row.failures for row in session.scalars(select(LoginThrottle))}
    assert counts == {"account": 40, "address": 40}


def test_an_account_is_every_column_of_its_user_but_the_password_hash() -> None:
    # `_account` maps by name: a column added with a field of its name needs nothing more.
    columns = {column.key for column in User.__table__.columns}
    assert {f.name for f in fields(users.Account)} == columns - {"password_hash"}


# --- `factnote review ... --as NAME`: only real, active accounts; their roles count ----------


@pytest.fixture
def review_env(cli_env: Database) -> dict[str, int]:
    from tests.bot.web.seed import seed

    users.add_user(cli_env, "mod_demo", PASSWORD, "moderator")
    users.add_user(cli_env, "senior_demo", PASSWORD, "senior")
    users.add_user(cli_env, "admin_demo", PASSWORD, "admin")
    return seed(cli_env).ids


def _state(db: Database, request_id: int) -> str:
    from storage.models import Request

    with db.session() as session:
        row = session.get(Request, request_id)
        assert row is not None
        return row.state


@pytest.mark.parametrize(
    "command",
    [
        ["approve", "{id}"],
        ["edit", "{id}", "New text."],
        ["reject", "{id}", "--reason", "other"],
        ["escalate", "{id}"],
        ["claim", "{id}"],
    ],
)
def test_review_actions_refuse_an_unknown_user_in_one_line(
    cli_env: Database, review_env: dict[str, int], command: list[str]
) -> None:
    rid = review_env["review_x"]
    args = ["review", *[a.format(id=rid) for a in command], "--as", "ghost_demo"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "factnote: error: no user 'ghost_demo': review actions are done as a review-app account "
        "(list them with `factnote users list`, add one with `factnote users add NAME --role "
        "moderator`)"
    ]
    assert "Traceback" not in result.output
    assert _state(cli_env, rid) == "awaiting_review"


def test_review_actions_refuse_a_disabled_user_and_need_an_account(
    cli_env: Database, review_env: dict[str, int]
) -> None:
    rid = review_env["review_x"]
    users.disable_user(cli_env, "mod_demo")
    result = runner.invoke(app, ["review", "approve", str(rid), "--as", "mod_demo"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "factnote: error: user 'mod_demo' is disabled: review actions need an active account"
    )
    missing = runner.invoke(app, ["review", "approve", str(rid)])
    assert missing.exit_code == 2 and "--as" in missing.output
    assert _state(cli_env, rid) == "awaiting_review"


def test_review_roles_count_on_the_command_line(
    cli_env: Database, review_env: dict[str, int]
) -> None:
    rid = review_env["review_x"]  # X is not enabled here: approving leaves it for the bot
    assert runner.invoke(app, ["review", "escalate", str(rid), "--as", "mod_demo"]).exit_code == 0
    refused = runner.invoke(app, ["review", "approve", str(rid), "--as", "mod_demo"])
    assert refused.exit_code == 1 and "only a senior moderator or an admin" in refused.output
    assert _state(cli_env, rid) == "awaiting_review"
    ok = runner.invoke(app, ["review", "approve", str(rid), "--as", "senior_demo"])
    assert ok.exit_code == 0, ok.output
    assert _state(cli_env, rid) == "posting"
    shown = runner.invoke(app, ["review", "show", str(rid), "--json"])
    assert shown.exit_code == 0, shown.output
    item = json.loads(shown.output)
    assert item["id"] == rid and item["state"] == "posting" and item["platform"] == "x"
    assert item["escalated_by"] == "mod_demo" and item["evidence"]
    assert [(h["actor"], h["action"]) for h in item["history"]] == [
        ("mod_demo", "escalate"),
        ("mod_demo", "refused"),
        ("senior_demo", "approve"),
    ]
    assert runner.invoke(app, ["review", "show", "99999", "--json"]).exit_code == 1


def test_moderator_actions_from_the_command_line_change_the_item_or_fail_in_one_line(
    cli_env: Database, review_env: dict[str, int]
) -> None:
    request_id = review_env["review_x"]
    rid = str(request_id)

    def review_as(*args: str) -> tuple[int, list[str]]:
        result = runner.invoke(app, ["review", *args])
        return result.exit_code, result.output.strip().splitlines()

    assert review_as("claim", rid, "--as", "mod_demo") == (0, [f"#{rid} is claimed by mod_demo"])
    assert review_as("release", rid, "--as", "mod_demo") == (0, [f"#{rid} released"])
    code, lines = review_as("edit", rid, "x" * 300, "--as", "mod_demo")
    assert code == 1 and lines == [
        "factnote: error: refused by the guard (300/280): too_long: 300 > 280; no_source"
    ]
    code, lines = review_as("reject", rid, "--reason", "no such reason", "--as", "mod_demo")
    assert code == 1 and len(lines) == 1 and lines[0].startswith("factnote: error: ")
    assert _state(cli_env, request_id) == "awaiting_review"
    assert review_as("reject", rid, "--reason", "other", "--as", "mod_demo") == (
        0,
        [f"rejected #{rid}"],
    )
    assert _state(cli_env, request_id) == "rejected"
    code, lines = review_as("mode", "sometimes", "--as", "admin_demo")
    assert code == 1 and len(lines) == 1 and lines[0].startswith("factnote: error: mode: ")


def test_the_kill_switch_from_the_command_line_is_for_admins(
    cli_env: Database, review_env: dict[str, int]
) -> None:
    from bot import overrides

    refused = runner.invoke(app, ["review", "pause", "x", "--as", "mod_demo"])
    assert refused.exit_code == 1
    assert "only an admin may change posting" in refused.output
    paused = runner.invoke(app, ["review", "pause", "x", "--as", "admin_demo", "--note", "oops"])
    assert paused.exit_code == 0 and "posting to x paused" in paused.output
    assert "paused by admin_demo" in (overrides.posting_hold(cli_env, "x") or "")
    status = json.loads(runner.invoke(app, ["review", "switch", "--json"]).output)
    assert {row["platform"]: bool(row["stopped"]) for row in status}["x"] is True
    bad = runner.invoke(app, ["review", "pause", "myspace", "--as", "admin_demo"])
    assert bad.exit_code == 1 and "platform must be one of" in bad.output
    assert runner.invoke(app, ["review", "resume", "x", "--as", "admin_demo"]).exit_code == 0
    assert overrides.posting_hold(cli_env, "x") is None
    mode = runner.invoke(app, ["review", "mode", "dry-run", "--as", "admin_demo"])
    assert mode.exit_code == 0 and "mode set to dry-run" in mode.output
    assert overrides.posting_hold(cli_env, "x") == "mode is dry-run (set by admin_demo)"


def test_roles_include_senior_and_can_be_changed(db: Database, cheap: None) -> None:
    users.add_user(db, "ann_demo", PASSWORD, "moderator")
    assert not users.find_user(db, "ann_demo").is_senior  # type: ignore[union-attr]
    assert users.set_role(db, "ann_demo", "senior").is_senior
    assert users.set_role(db, "ann_demo", "admin").is_senior
    with pytest.raises(users.UserError, match="role"):
        users.set_role(db, "ann_demo", "owner")
    with pytest.raises(users.UserError, match="no user"):
        users.set_role(db, "nobody_demo", "senior")
