"""`factnote check --help` stays a cold start of a fraction of a second: the check's runtime
(the pipeline, the LLM client, the platform SDKs, the model runtimes) is imported only when a
post is really checked. (`--help`, `guard` and `status` are pinned in tests/bot/test_cli.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.bot.cli_runs import probe_cli

# Runs Python or the bot as child processes: left out of `make test-fast`.
pytestmark = pytest.mark.process

HEAVY = ("bot.ops.runtime", "pipeline.check", "torch", "onnxruntime", "openai", "atproto", "tweepy")


def test_check_help_imports_neither_the_runtime_nor_the_model_or_llm_libraries(
    tmp_path: Path,
) -> None:
    probe = (
        "r = CliRunner().invoke(cli.app, ['check', '--help'])\n"
        f"print(json.dumps([r.exit_code, 'Check one post' in r.output, "
        f"sorted(m for m in {HEAVY!r} if m in sys.modules)]))\n"
    )
    assert probe_cli(probe, tmp_path / "help.db") == [0, True, []]


def test_check_without_an_llm_never_imports_the_openai_sdk(tmp_path: Path) -> None:
    # A real check, run to its decision: with no endpoint configured the SDK (most of a second
    # of imports) has nothing to do, so only a configured client may load it.
    probe = (
        "r = CliRunner().invoke(cli.app, ['check', 'Flu shots cause autism', '--json'])\n"
        "status = json.loads(r.stdout)['status'] if r.exit_code == 0 else r.output\n"
        "print(json.dumps([status, 'openai' in sys.modules]))\n"
    )
    # No FACTNOTE_*/OPENAI_* variable of the machine running the tests: one could configure an LLM.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTNOTE_", "OPENAI_"))}
    env["HF_HUB_OFFLINE"] = "1"
    assert probe_cli(probe, tmp_path / "check.db", env=env, timeout=300) == ["needs_llm", False]
