"""The startup heap frozen out of the collector's way, once per process (bot/ops/gc_freeze.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Runs Python or the bot as child processes: left out of `make test-fast`.
pytestmark = pytest.mark.process

# Run in a process of its own: freezing is for the life of the process, and this one is
# pytest's.
PROBE = """
import gc
from bot.ops.gc_freeze import freeze_startup_heap
kept = [[i] for i in range(1000)]  # long-lived objects the collector would walk each time
assert gc.get_freeze_count() == 0
assert freeze_startup_heap() is True
frozen = gc.get_freeze_count()
assert frozen >= len(kept), frozen
assert freeze_startup_heap() is False  # once per process: no second full collection
assert gc.get_freeze_count() == frozen
"""


def test_the_startup_heap_is_frozen_once_per_process() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
