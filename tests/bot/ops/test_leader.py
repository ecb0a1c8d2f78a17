"""Polling leadership on PostgreSQL: one leader among many instances, and a standby that takes
over within seconds when the leader's process is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.ops.leader import AdvisoryLockLeader
from storage.dialect import conninfo

pytestmark = pytest.mark.postgres
REPO = Path(__file__).resolve().parents[3]

# A `factnote run` stand-in: takes the leadership, says so, and waits to be killed.
LEADER_SCRIPT = """
import sys, time
from bot.ops.leader import AdvisoryLockLeader
leader = AdvisoryLockLeader(sys.argv[1], retry_s=0.2)
leader.start()
while not leader.is_leader():
    time.sleep(0.05)
print("leading", flush=True)
time.sleep(600)
"""


def test_exactly_one_of_several_instances_leads(postgres_url: str) -> None:
    # Election rounds are driven by hand (`check`, what the background thread runs every
    # `retry_s`), so the test counts rounds instead of sleeping through them.
    instances = [AdvisoryLockLeader(conninfo(postgres_url), retry_s=3600) for _ in range(3)]
    try:
        for _ in range(3):
            for instance in instances:
                instance.check()
            assert sum(i.is_leader() for i in instances) == 1
        leader = next(i for i in instances if i.is_leader())
        leader.stop()  # a clean shutdown hands over too
        others = [i for i in instances if i is not leader]
        for _ in range(2):
            for instance in others:
                instance.check()
            assert sum(i.is_leader() for i in others) == 1
        assert not leader.is_leader()
    finally:
        for instance in instances:
            instance.stop()


def test_a_standby_takes_over_within_seconds_when_the_leader_is_killed(
    postgres_url: str,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", LEADER_SCRIPT, conninfo(postgres_url)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    elected = threading.Event()
    standby = AdvisoryLockLeader(conninfo(postgres_url), retry_s=0.5, on_elected=elected.set)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "leading"
        for _ in range(3):  # election rounds while the leader lives, driven by hand
            assert not standby.check(), "two leaders at once"
        standby.start()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.monotonic()
        assert elected.wait(timeout=10), "no takeover"
        took = time.monotonic() - killed
        assert standby.is_leader()
        assert took < 3.0, f"takeover took {took:.1f}s"
    finally:
        standby.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
