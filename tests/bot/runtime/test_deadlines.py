"""A request whose deadline passes ends `failed`, naming the stage, its lease given up (issue
33): the LLM's own deadline (`llm.timeout_s`) and the check's (`runtime.check_deadline_s`),
against an LLM endpoint that drips its answer one byte at a time (testing/fakes)."""

from __future__ import annotations

import re

from sqlalchemy import select

from bot.config import Settings
from storage.db import Database
from storage.models import DecisionRow, RequestState
from testing.fakes.openai_server import Reply
from testing.scenarios import ANALYSIS
from tests.bot.runtime.harness import Env, summons

# What the check may take past its deadline: the helper thread's wake-up and the work before the
# first call (reading the post, memory), on a loaded two-core test machine. The endpoint drips
# a byte every 0.5 s, so waiting for one more read would already use most of it.
MARGIN_S = 0.75


def _check_seconds(settings: Settings) -> float:
    """The check's own time, as its decision records it (`timings["total"]`)."""
    db = Database(settings.database_url)
    with db.session() as session:
        row = session.scalars(select(DecisionRow)).one()
        total = float(row.timings["total"])
    db.dispose()
    return total


def test_a_dripping_llm_fails_the_request_at_the_calls_deadline(env: Env) -> None:
    env.fake.script("analyze", Reply.dripping(ANALYSIS, every_s=0.5))
    env.add(summons("1"))
    settings = env.settings(max_attempts=1)
    settings.llm = env.fake.config(timeout_s=1.5)
    env.run_once(settings)
    assert 1.0 < _check_seconds(settings) < 1.5 + MARGIN_S
    (request,) = env.requests(settings)
    assert request.state == RequestState.FAILED.value
    assert "deadline: llm call for analyze exceeded 1.5 s" in request.reason
    assert request.lease_owner is None and request.lease_until is None


def test_the_checks_deadline_fails_the_request_naming_the_stage(env: Env) -> None:
    # Each LLM call could take 60 s; the check as a whole has 1.5 s.
    env.fake.script("analyze", Reply.dripping(ANALYSIS, every_s=0.5))
    env.add(summons("1"))
    settings = env.settings(max_attempts=1, check_deadline_s=1.5)
    settings.llm = env.fake.config(timeout_s=60.0)
    env.run_once(settings)
    assert 1.0 < _check_seconds(settings) < 1.5 + MARGIN_S
    (request,) = env.requests(settings)
    assert request.state == RequestState.FAILED.value
    # The check's watchdog and the LLM call's own deadline (the check's, being sooner) end at
    # the same moment; whichever is first names the analysis stage.
    assert re.search(
        r"deadline: check exceeded 1\.5 s during (llm call for )?analyze", request.reason or ""
    ), request.reason
    assert request.lease_owner is None and request.lease_until is None
