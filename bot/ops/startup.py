"""What `factnote run` says when it starts: what it will do, and what will make it do nothing.

A bot started with the defaults (the Docker image's `CMD`, a fresh checkout) polls only the
local inbox and searches only the local index. Started so, it waits quietly for ever; an
operator who expected it to answer mentions on X sees nothing and no reason. So the start is
described in one INFO line per part (mode, adapters, search, LLM, database) and each condition
under which nothing useful can happen is a WARNING that names the setting to change.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from bot import platforms
from bot.config import Settings
from pipeline.redaction import shown_url
from pipeline.shared_parts import SharedParts

log = logging.getLogger("factnote.run")


@dataclass
class StartupReport:
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def inbox_entries(inbox: Path) -> int:
    """Summonses waiting in a local inbox: `*.json` files in a directory, lines in a file."""
    try:
        if inbox.is_dir():
            return sum(1 for _ in inbox.glob("*.json"))
        if inbox.is_file():
            with inbox.open("rb") as handle:
                return sum(1 for line in handle if line.strip())
    except OSError:
        return 0
    return 0


def startup_report(settings: Settings, shared: SharedParts) -> StartupReport:
    report = StartupReport()
    enabled = [s.name for s in platforms.specs() if s.section(settings).enabled]
    modes = ", ".join(f"{name} {settings.adapter_mode(name)}" for name in enabled)
    report.lines.append(f"mode: {modes or settings.mode}")
    report.lines.append(f"adapters: {', '.join(enabled) or 'none'}")
    if enabled == ["local"]:
        inbox = Path(settings.local.inbox)
        waiting = inbox_entries(inbox)
        report.lines.append(f"local inbox: {inbox} ({waiting} summons waiting)")
        if waiting == 0:
            report.warnings.append(
                f"the local inbox ({inbox}) is empty and no other adapter is enabled: nothing "
                "will be answered until summons files arrive there, or a platform is enabled "
                "([x] enabled = true or [bluesky] enabled = true, with its credentials)"
            )
    elif not enabled:
        report.warnings.append("no adapter is enabled: the bot has nothing to poll")
    providers = list(shared.cfg.search.providers)
    documents = len(shared.local_index) if shared.local_index is not None else 0
    report.lines.append(
        f"search: {', '.join(providers) or 'none'}; local index in the database "
        f"({documents} documents)"
    )
    if set(providers) <= {"local"}:
        report.warnings.append(
            f"search uses only the local index ({documents} documents): posts about anything "
            "it does not hold are abstained on; add a web search provider ([search] providers "
            'such as "serper" or "brave", with its key) or documents (factnote index add)'
        )
    if settings.memory.mode != "off" and settings.memory.use_proposed:
        report.warnings.append(
            "memory.use_proposed is on: what the bot learned from its own episodes reaches "
            "later prompts without a moderator's approval, so a stranger's post can steer them"
        )
    llm = shared.cfg.llm
    report.lines.append(
        f"LLM: {llm.model} at {shown_url(llm.base_url) or 'the OpenAI API'}"
        if shared.llm.configured
        else "LLM: none configured (posts that need one end as needs_llm)"
    )
    report.lines.append(f"database: {shown_url(settings.database_url)}")
    return report


def announce(settings: Settings, shared: SharedParts) -> StartupReport:
    """Log what the bot is about to do (INFO) and why it may do nothing (WARNING)."""
    report = startup_report(settings, shared)
    for line in report.lines:
        log.info("%s", line)
    for warning in report.warnings:
        log.warning("%s", warning)
    return report
