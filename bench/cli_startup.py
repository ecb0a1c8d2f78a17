"""Cold start per command: wall time of a fresh `factnote` process, median of a few runs.

What a user waits for before the first line: interpreter start, imports, config. Each command is
run in a new process against a throwaway SQLite database so that nothing is cached in-process;
the operating system's file cache is warm after the first run, as it is in daily use.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# name -> arguments after `factnote`; none needs a network, keys or an LLM.
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "guard": ["guard", "--platform", "x", "Flu shots are safe, says https://who.int/flu"],
    "sources": ["sources", "lookup", "who.int"],
    "status": ["status"],
    "check_help": ["check", "--help"],
}


def _time_once(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=120,
    )
    return time.perf_counter() - start


def run(repeats: int = 3, log: Callable[[str], None] = print) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "FACTNOTE_DATABASE_URL": f"sqlite:///{Path(tmp) / 'startup.db'}",
            "HF_HUB_OFFLINE": "1",
        }
        results: dict[str, float] = {}
        for name, args in COMMANDS.items():
            times = [_time_once(args, env) for _ in range(repeats)]
            results[f"{name}_s"] = statistics.median(times)
            log(f"{name}: median {results[f'{name}_s']:.2f} s of {repeats}")
    return results


if __name__ == "__main__":
    run()
