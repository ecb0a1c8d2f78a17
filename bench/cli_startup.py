"""Cold start per command: wall time of a fresh `factnote` process, median of a few runs.

What a user waits for before the first line: interpreter start, imports, config. Each command is
run in a new process against a throwaway SQLite database so that nothing is cached in-process;
the operating system's file cache is warm after the first run, as it is in daily use.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pipeline.config import RelevanceConfig
from pipeline.relevance.embedding_onnx import export_dir

# The embedding model's export from `make setup` (the runs' working directory is the caller's).
ONNX_DIR = export_dir(RelevanceConfig().onnx_dir)

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


# What `factnote check` pays before its first pipeline step, stage by stage, in a fresh process:
# the command's imports, settings and database migration, then the embedding model's load.
_CHECK_IMPORTS = (
    # The command module, then what its body imports when it runs (the module itself is light
    # so that `check --help` is), before the first pipeline step; `factnote` itself is bot.cli.
    "import bot.cli\n"
    "import bot.commands.check\n"
    "import bot.ops.runtime\n"
    "from bot import lifecycle, platforms\n"
    "from storage.repositories import add_decision\n"
)
_CHECK_STAGES = (
    """
import json, sys, time
t0 = time.perf_counter()
"""
    + _CHECK_IMPORTS
    + """from bot.config import Settings
from pipeline.relevance.scoring import get_embedder
from storage.db import Database
t1 = time.perf_counter()
settings = Settings()
Database(settings.database_url)
t2 = time.perf_counter()
embedder = get_embedder(settings.relevance)
t3 = time.perf_counter()
# What `factnote`'s main() sets up for the process's exit, which `total` includes.
bot.cli.freeze_at_exit()
print(json.dumps({"imports": t1 - t0, "migrations": t2 - t1, "model": t3 - t2,
                  "backend": embedder.backend, "torch": "torch" in sys.modules}))
"""
)


def check_stages(env: dict[str, str]) -> dict[str, float]:
    """One fresh process's `factnote check` start-up by stage (seconds), plus the interpreter."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHECK_STAGES],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    total = time.perf_counter() - start
    stages = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "imports": float(stages["imports"]),
        "migrations": float(stages["migrations"]),
        "model": float(stages["model"]),
        "total": total,
        "torch_imported": float(stages["torch"]),
    }


def import_profile(env: dict[str, str], top: int = 8) -> list[tuple[str, float]]:
    """Seconds of `factnote check`'s imports by top-level package (`python -X importtime`,
    each module's own time), largest first: what bounds the imports stage."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _CHECK_IMPORTS],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    totals: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        package = parts[2].strip().split(".")[0]
        totals[package] = totals.get(package, 0.0) + int(parts[0]) / 1e6
    return sorted(totals.items(), key=lambda item: -item[1])[:top]


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
        env["FACTNOTE_RELEVANCE__ONNX_DIR"] = str(ONNX_DIR)
        runs = [check_stages(env) for _ in range(repeats)]
        for stage in ("imports", "migrations", "model", "total"):
            values = [r[stage] for r in runs]
            results[f"check_startup_{stage}_s"] = statistics.median(values)
            results[f"check_startup_{stage}_min_s"] = min(values)
            results[f"check_startup_{stage}_max_s"] = max(values)
        results["check_startup_torch_imported"] = max(r["torch_imported"] for r in runs)
        log(
            "check start-up: median (min-max) "
            + ", ".join(
                f"{k} {results[f'check_startup_{k}_s']:.2f} s"
                f" ({results[f'check_startup_{k}_min_s']:.2f}-"
                f"{results[f'check_startup_{k}_max_s']:.2f})"
                for k in ("imports", "migrations", "model", "total")
            )
            + f" of {repeats}; load average {os.getloadavg()[0]:.1f}"
        )
        profile = import_profile(env)
        shares = ", ".join(f"{package} {t:.2f} s" for package, t in profile)
        log(f"check imports by package (own time): {shares}")
    return results


if __name__ == "__main__":
    run()
