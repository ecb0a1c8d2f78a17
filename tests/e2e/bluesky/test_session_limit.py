"""The createSession limit on Bluesky's own PDS (30 per 5 minutes per identifier and address,
@atproto/pds 0.5.35 dist/api/com/atproto/server/createSession.js lines 11-22; the network runs
with the PDS's rate limits on): the bot keeps working on its stored session while the limit is
spent, and without a session it waits for the reset instead of halting or hammering."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bot.commands.run import FAILED_EXIT
from tests.e2e.bluesky.bot import CLAIM, Bot
from tests.e2e.bluesky.network import Network, User, replies_to

pytestmark = [pytest.mark.bluesky_e2e, pytest.mark.timeout(900)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _spend_logins(net: Network, handle: str) -> int:
    """createSession with a wrong password until the PDS says 429; how many it took."""
    for tries in range(1, 40):
        answer = httpx.post(
            f"{net.pds}/xrpc/com.atproto.server.createSession",
            json={"identifier": handle, "password": "not-the-password"},
            timeout=30,
        )
        if answer.status_code == 429:
            return tries
        assert answer.status_code == 401, answer.text
    raise AssertionError("createSession never said 429")


def test_a_spent_create_session_limit_neither_stops_the_bot_nor_locks_it_out(
    bluesky_net: Network, asker: User, tmp_path: Path
) -> None:
    me = User(bluesky_net, "ratebot")
    bot = Bot(bluesky_net, tmp_path / "ratebot", me.handle, me.password)
    bot.seed_claims()
    assert bot.run_once().returncode == 0  # logs in once, keeps the session
    assert bot.session_file.is_file()

    assert _spend_logins(bluesky_net, me.handle) <= 31

    # With its stored session the bot needs no login: it answers as ever.
    claim = asker.post(CLAIM)
    ask = asker.reply("true?", claim, claim, mention=me)
    working = bot.run_once()
    assert working.returncode == 0, working.stdout + working.stderr
    assert len(replies_to(bluesky_net, me.did, ask)) == 1

    # Without one, the login meets the limit: that poll is recorded as failed with the
    # limit's reset (exit 69), login is not halted, and the next run waits for the reset
    # instead of asking again (exit 0, "waiting").
    bot.session_file.unlink()
    limited = bot.run_once()
    assert limited.returncode == FAILED_EXIT, limited.stdout + limited.stderr
    # (rich wraps the summary at the terminal width: compare with whitespace collapsed)
    assert "(error: RateLimited: Bluesky createSession: rate limited)" in _flat(limited.stdout)
    assert "login was refused" not in limited.stdout + limited.stderr
    again = bot.run_once()
    assert again.returncode == 0, again.stdout + again.stderr
    assert "poll bluesky: 0 new of 0 (waiting: rate limited until" in _flat(again.stdout)
    assert not bot.session_file.exists()
