"""Memory: peak resident set size of one `factnote check --json "<post>"` process.

The command runs as a user would run it, in a child process with a clean environment pointing
at a temporary database (`FACTNOTE_DATABASE_URL`) and a temporary local index
(`FACTNOTE_INDEX_PATH`) filled beforehand with the fixture pages of a few posts (extracted and
embedded by the real `LocalIndex`). Search is the local index (the default provider), so the
run needs no network. The fixture publishers' tiers are passed as
`FACTNOTE_CREDIBILITY__OVERRIDES`.

Two measurements:

* without an LLM (no `FACTNOTE_LLM_*` set): the `needs_llm` path, which still loads the
  embedding model, searches, reads and scores pages;
* with the fake LLM of `bench.world` configured through `FACTNOTE_LLM_BASE_URL` and
  `FACTNOTE_LLM_MODEL` (the fake server runs in this process; its answers cost no memory
  there).

Peak RSS is the `factnote` process's own `ru_maxrss`, from `os.wait4` in a small intermediate
Python process that starts it. Not `getrusage(RUSAGE_CHILDREN)` here, which reports the largest
child so far; and not `wait4` on a child of this process either: Linux carries the parent's
high-water mark into a (v)forked child up to its `exec`, so every child of a benchmark process
that already holds the model (about 2 GiB) would report at least that. The intermediate process
is small (about 10 MiB), so the floor it passes on is far below what `factnote` itself uses.

The decision's timings do not include start-up, so start-up (imports, settings, database
migration, model load) is reported as the process wall time minus the decision's
`timings.total`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import fixtures
from bench.world import FixtureModel
from pipeline.config import RelevanceConfig
from pipeline.relevance.embedding_onnx import export_dir
from pipeline.relevance.scoring import get_embedder
from pipeline.search.local_index import LocalIndex
from storage.indexes import open_document_rows
from testing.fakes.openai_server import FakeLLM

Log = Callable[[str], None]
_CLEARED_PREFIXES = ("FACTNOTE_", "OPENAI_")
ONNX_DIR = export_dir(RelevanceConfig().onnx_dir)
# Run by a small intermediate interpreter: it starts `factnote`, waits for it, and writes the
# child's own peak RSS (KiB) to argv[1]. See the module docstring for why not directly.
_MEASURE = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class MemoryConfig:
    post_id: str = "p01"
    # Pages of these posts go into the index (the checked post's pages plus distractors).
    index_post_ids: tuple[str, ...] = ("p01", "p07")
    with_llm: bool = True
    timeout_s: float = 300.0
    # The embedding runtime (`RelevanceConfig.backend`): "auto" is the ONNX export.
    backend: str = "auto"


@dataclass(frozen=True)
class ProcessRun:
    returncode: int
    max_rss_mib: float
    wall_s: float
    output: dict[str, Any]

    @property
    def decision_s(self) -> float:
        timings = self.output.get("timings") or {}
        return float(timings.get("total", 0.0))

    @property
    def status(self) -> str:
        return str(self.output.get("status", "?"))


def factnote_command() -> list[str]:
    """The installed `factnote` script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("factnote")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "bot.cli"]


def build_index(target: Path | str, post_ids: tuple[str, ...]) -> int:
    embedder = get_embedder(RelevanceConfig())
    with LocalIndex(open_document_rows(target), embedder=embedder) as index:
        for post in fixtures.POSTS:
            if post.id in post_ids:
                for page in post.pages:
                    index.add(fixtures.document(page.url))
        return len(index)


def child_env(
    workdir: Path, index_path: Path, name: str, llm_url: str | None, backend: str = "auto"
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED_PREFIXES)}
    env.update(
        {
            # The ONNX export built at `make setup`, not a fresh one in the temporary directory.
            "FACTNOTE_RELEVANCE__ONNX_DIR": str(ONNX_DIR),
            "FACTNOTE_RELEVANCE__BACKEND": backend,
            "FACTNOTE_DATABASE_URL": f"sqlite:///{workdir / f'{name}.db'}",
            "FACTNOTE_DATA_DIR": str(workdir / "data"),
            "FACTNOTE_INDEX_PATH": str(index_path),
            "FACTNOTE_CREDIBILITY__OVERRIDES": json.dumps(fixtures.TIERS),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    if llm_url is not None:
        env["FACTNOTE_LLM_BASE_URL"] = llm_url
        env["FACTNOTE_LLM_MODEL"] = "fake-model"
    return env


def run_check(text: str, env: dict[str, str], workdir: Path, timeout_s: float) -> ProcessRun:
    out_path, err_path, rss_path = (workdir / n for n in ("stdout.json", "stderr.txt", "rss"))
    start = time.perf_counter()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        command = [*factnote_command(), "check", "--json", text]
        proc = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, str(rss_path), *command],
            stdout=out,
            stderr=err,
            env=env,
            cwd=workdir,
        )
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"factnote check ran past {timeout_s}s") from None
    wall = time.perf_counter() - start
    raw = out_path.read_text(encoding="utf-8")
    try:
        output = json.loads(raw)
    except json.JSONDecodeError:
        stderr = err_path.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise RuntimeError(
            f"factnote check exited {returncode} without JSON output:\n{raw[-500:]}\n{stderr}"
        ) from None
    # ru_maxrss is in KiB on Linux.
    return ProcessRun(returncode, int(rss_path.read_text()) / 1024, wall, output)


def run(cfg: MemoryConfig | None = None, log: Log | None = None) -> dict[str, float]:
    cfg = cfg or MemoryConfig()
    post = next(p for p in fixtures.POSTS if p.id == cfg.post_id)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="factnote-bench-") as tmp:
        workdir = Path(tmp)
        index_path = workdir / "index.sqlite"  # a side-file path only: the index is in the db
        for name in ("no_llm", "with_llm"):  # each child's database holds its local index
            database = f"sqlite:///{workdir / f'{name}.db'}"
            out["index_documents"] = float(build_index(database, cfg.index_post_ids))

        runs: list[tuple[str, ProcessRun]] = []
        env = child_env(workdir, index_path, "no_llm", None, cfg.backend)
        runs.append(("no_llm", run_check(post.text, env, workdir, cfg.timeout_s)))
        if cfg.with_llm:
            model = FixtureModel()
            with FakeLLM() as fake:
                model.install(fake)
                env = child_env(workdir, index_path, "with_llm", fake.base_url, cfg.backend)
                runs.append(("with_llm", run_check(post.text, env, workdir, cfg.timeout_s)))
        for name, result in runs:
            if log:
                log(
                    f"{name}: status={result.status} exit={result.returncode} "
                    f"peak RSS {result.max_rss_mib:.0f} MiB, wall {result.wall_s:.1f}s, "
                    f"decision {result.decision_s:.1f}s"
                )
            out[f"{name}_peak_rss_mib"] = result.max_rss_mib
            out[f"{name}_wall_s"] = result.wall_s
            out[f"{name}_decision_s"] = result.decision_s
            out[f"{name}_startup_s"] = max(result.wall_s - result.decision_s, 0.0)
            out[f"{name}_exit_code"] = float(result.returncode)
            out[f"{name}_needs_llm"] = float(result.status == "needs_llm")
            out[f"{name}_llm_calls"] = float((result.output.get("llm") or {}).get("calls", 0))
    return out
