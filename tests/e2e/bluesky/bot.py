"""factnote as a process against the reference network: `factnote run` with the Bluesky adapter
on, in live mode, answering from a claim index seeded with one fact-check (the templated reply
needs no LLM), its credentials from the environment as in a deployment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.e2e.bluesky.network import REPO, Network

FACT_CHECK_URL = "https://factcheck-desk.example/checks/lemon-water-flu"
# What the test posts repeat (the parent posts the bot is asked about).
CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."
RUN_TIMEOUT_S = 180


# A second claim, for a scenario after CLAIM was answered (a claim answered before is reused,
# and reusing an answer for a new post needs an LLM).
CLAIM_2 = "Cracking your knuckles every day gives you arthritis in your hands."
FACT_CHECK_URL_2 = "https://factcheck-desk.example/checks/knuckles-arthritis"


def fact_checks(published: datetime) -> dict[str, Any]:
    """Two schema.org ClaimReviews (the shape `claims import` reads), rating the claims false."""

    def review(url: str, claim: str) -> dict[str, Any]:
        return {
            "@type": "ClaimReview",
            "url": url,
            "datePublished": published.date().isoformat(),
            "author": {
                "@type": "Organization",
                "name": "Factcheck Desk (fictional)",
                "url": "https://factcheck-desk.example",
            },
            "claimReviewed": claim,
            "reviewRating": {"@type": "Rating", "alternateName": "False"},
            "inLanguage": "en",
        }

    return {
        "@context": "https://schema.org",
        "@graph": [review(FACT_CHECK_URL, CLAIM), review(FACT_CHECK_URL_2, CLAIM_2)],
    }


@dataclass
class Bot:
    """One deployment of the bot: a directory with its config, database and session file."""

    net: Network
    home: Path
    handle: str
    password: str
    runs: list[float] = field(default_factory=list)  # wall seconds of each `run --once`

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.config = self.home / "factnote.toml"
        self.write_config()

    @property
    def database(self) -> Path:
        return self.home / "factnote.db"

    @property
    def session_file(self) -> Path:
        return self.home / "bluesky.session"

    def write_config(self) -> None:
        home = self.home.as_posix()
        self.config.write_text(
            f"""mode = "live"
database_url = "sqlite:///{home}/factnote.db"
index_path = "{home}/index.sqlite"

[claims]
path = "{home}/claims.sqlite"

[authority]
path = "{home}/authority.sqlite"

[local]
enabled = false

[bluesky]
enabled = true
poll_interval_s = 1.0
bot_handle = "{self.handle}"
session_path = "{home}/bluesky.session"
# The network's own PLC directory: a posted video's blob is found on the PDS it names.
plc_url = "{self.net.plc}"

[credibility.overrides]
"factcheck-desk.example" = "high"

[fetch]
# The AppView serves post images from its own loopback URL (/img/...): exempt from the SSRF
# guard here only, as the setting is meant for (a local server in tests).
allow_hosts = ["localhost"]

[runtime]
max_summons_age_s = 0
""",
            encoding="utf-8",
        )

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FACTNOTE_")}
        env.update(
            PYTHONPATH=str(REPO),
            FACTNOTE_BLUESKY_PDS=self.net.pds,
            FACTNOTE_BLUESKY_HANDLE=self.handle,
            FACTNOTE_BLUESKY_APP_PASSWORD=self.password,
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        )
        return env

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "bot.cli", "--config", str(self.config), *args]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=self.home,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    def seed_claims(self) -> None:
        source = self.home / "fact-checks.jsonld"
        source.write_text(json.dumps(fact_checks(datetime.now(UTC))), encoding="utf-8")
        done = self.cli("claims", "import", str(source))
        assert done.returncode == 0, done.stdout + done.stderr

    def run_once(self) -> subprocess.CompletedProcess[str]:
        """`factnote run --once` in live mode, after the AppView has indexed every write."""
        self.net.process()
        started = datetime.now(UTC)
        done = self.cli("run", "--once", "--mode", "live")
        self.runs.append((datetime.now(UTC) - started).total_seconds())
        return done

    def start(self, *extra_env: tuple[str, str]) -> subprocess.Popen[str]:
        """`factnote run` (forever) in the background; its output goes to run.log."""
        env = self.env()
        env.update(dict(extra_env))
        log = (self.home / "run.log").open("a")
        return subprocess.Popen(
            self.command("run", "--mode", "live"),
            cwd=self.home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    @staticmethod
    def kill(proc: subprocess.Popen[str]) -> None:
        """Stop the process the hard way, as a crash or an OOM kill would."""
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
