"""Triage decides a poll's requests in batches (one transaction and one read of the hourly
counts, opt-outs and earlier answers per batch): what one request decides must count for the
next ones, within a batch and across batches."""

from __future__ import annotations

import pytest

from bot.requests import triage
from storage.models import RequestState
from tests.bot.runtime.harness import CLAIM, Env, summons


def test_a_stop_counts_for_the_same_authors_later_summons_in_the_same_batch(env: Env) -> None:
    env.add(
        summons("1", author="tired_demo", text="@factnote stop", parent_text=None),
        summons("2", author="tired_demo"),
    )
    settings = env.settings()
    env.run_once(settings)
    first, second = env.requests(settings)
    assert first.reason == "opt-out recorded"
    assert (second.state, second.reason) == (RequestState.SKIPPED.value, "user opted out")


@pytest.mark.parametrize("batch", [1, 2, 200])
def test_the_hourly_limit_counts_across_batches(
    env: Env, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(triage, "BATCH", batch)
    env.add(*(summons(str(i), parent_text=f"{CLAIM} Claim number {i}.") for i in range(1, 6)))
    settings = env.settings(per_user_hourly=3)
    env.run_once(settings)
    states = [r.state for r in env.requests(settings)]
    assert states == [RequestState.DRY_RUN.value] * 3 + [RequestState.SKIPPED.value] * 2
