"""The runtime's triage on the local adapter: opt-out and opt-in, loops and other bots, the
per-user limit, and a claim answered recently answered again without the pipeline."""

from __future__ import annotations

from storage.db import Database
from storage.models import OptOut, RequestState
from tests.bot.runtime.harness import CLAIM, Env, summons


def test_stop_opts_out_and_start_opts_back_in(env: Env) -> None:
    env.add(summons("1", author="tired_demo", text="@factnote stop", parent_text=None))
    settings = env.settings()
    env.run_once(settings)
    env.add(summons("2", author="tired_demo"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert first.state == RequestState.SKIPPED.value and first.reason == "opt-out recorded"
    assert second.state == RequestState.SKIPPED.value and second.reason == "user opted out"
    env.add(summons("3", author="tired_demo", text="@factnote START", parent_text=None))
    env.add(summons("4", author="tired_demo", parent_text="Another claim about lemon water."))
    env.run_once(settings)
    rows = env.requests(settings)
    assert rows[2].reason == "opt-in recorded"
    assert rows[3].state != RequestState.SKIPPED.value
    db = Database(settings.database_url)
    with db.session() as session:
        assert session.get(OptOut, ("local", "tired_demo")).opted_out is False  # type: ignore[union-attr]
    db.dispose()


def test_loops_and_bots_are_skipped(env: Env) -> None:
    env.add(
        summons("1", parent_author="factnote", parent_text="Our own earlier reply."),
        summons("2", author="factnote"),
        summons("3", author="other_bot_demo"),
    )
    settings = env.settings(known_bots=["other_bot_demo"])
    env.run_once(settings)
    reasons = [r.reason for r in env.requests(settings)]
    assert reasons == [
        "reply to our own reply (no loops)",
        "our own post",
        "summoned by another bot",
    ]
    assert env.fake.calls("analyze") == 0


def test_hourly_limit_per_user(env: Env) -> None:
    env.add(*(summons(str(i), parent_text=f"{CLAIM} Claim number {i}.") for i in range(1, 5)))
    settings = env.settings(per_user_hourly=2)
    env.run_once(settings)
    states = [r.state for r in env.requests(settings)]
    assert states[:2] == [RequestState.DRY_RUN.value] * 2
    assert states[2:] == [RequestState.SKIPPED.value] * 2
    assert env.requests(settings)[3].reason.startswith("rate limit")


def test_a_claim_answered_recently_is_answered_again_without_the_pipeline(env: Env) -> None:
    env.add(summons("1", parent_id="same"))
    settings = env.settings()
    env.run_once(settings)
    calls = len(env.fake.requests)
    env.add(summons("2", author="someone_else_demo", parent_id="same"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert second.reused_from_id == first.id
    # The same answer, never the same bytes: X refuses a duplicate of our own post.
    assert second.reply_text == f"{first.reply_text} (ref. {second.id})"
    assert second.state == RequestState.DRY_RUN.value
    assert len(env.fake.requests) == calls  # no LLM call for the reuse


def test_the_same_person_asking_twice_in_live_mode_never_gets_the_same_bytes(env: Env) -> None:
    env.add(summons("1", parent_id="same"))
    settings = env.settings("live")
    env.run_once(settings)
    env.add(summons("2", parent_id="same"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert [first.state, second.state] == [RequestState.POSTED.value] * 2
    texts = [line["text"] for line in env.outbox_lines()]
    assert len(texts) == 2 and texts[0] != texts[1]
    assert texts[1] == f"{texts[0]} (ref. {second.id})"
