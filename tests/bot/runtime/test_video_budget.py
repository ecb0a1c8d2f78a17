"""A hostile video whose decoding child runs past its CPU budget is killed by its own
RLIMIT_CPU: the request is recorded with a decision that names the kill (not "no evidence"),
and the worker goes on to the next summons in the same run. The budget is the smallest the
kernel keeps (1 CPU second) and the video a strobe (`testing.video_samples.strobe`) that costs
the child several: no sleep, no wall deadline involved."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pipeline.config import VideoConfig
from storage.db import Database
from storage.models import DecisionRow, RequestState
from testing.video_samples import strobe
from tests.bot.runtime.harness import Env, summons

pytestmark = pytest.mark.process


def test_a_decoder_over_its_cpu_budget_is_killed_recorded_and_the_worker_goes_on(
    env: Env,
) -> None:
    hostile = strobe(env.inbox / "strobe.mp4")
    video_only = summons("1", parent_text=None, text="@factnote real?")
    env.add({**video_only, "videos": [str(hostile)]}, summons("2"))
    settings = env.settings(max_attempts=1)
    # Every frame sampled; a 60 s wall deadline, so it is the CPU limit that ends the child.
    settings.video = VideoConfig(
        local_dir=str(env.inbox), cpu_seconds=1, sample_fps=30, decode_timeout_s=60
    )
    env.run_once(settings)
    first, second = env.requests(settings)
    db = Database(settings.database_url)
    with db.session() as session:
        decisions = {row.request_id: row for row in session.scalars(select(DecisionRow))}
    db.dispose()
    killed = decisions[first.id]
    assert killed.verdict == "not_checkable", killed.reasons
    said = " ".join(killed.reasons)
    assert "decoder killed: over its budget of 1 CPU seconds" in said
    assert "no evidence" not in said.lower()
    assert killed.trace["videos"][0]["error"].endswith(
        "decoder killed: over its budget of 1 CPU seconds"
    )
    # Recorded as decided (abstained, saying why), not retried: the same file would be killed
    # again.
    assert first.state == RequestState.ABSTAINED.value
    assert second.id in decisions and decisions[second.id].verdict == "refuted"
