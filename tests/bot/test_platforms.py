"""The adapter registry (`bot/platforms.py`): every spec has its config section and a known reply
format, and a platform registered here, in the test only, is built, polled, triaged by its own
policy, checked by its reply format, posted, dispatched and reset by `--mode` with no other
edit to the bot."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import grimp
import pytest
import typer
from pydantic import Field
from sqlalchemy import select
from typer.testing import CliRunner

from adapters.base import (
    AdapterConfig,
    FetchResult,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
)
from bot import overrides, platforms
from bot.cli import app
from bot.commands.run import apply_mode
from bot.config import ConfigError, Settings
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, build_adapters
from bot.platforms import AdapterSpec, TriagePolicy
from bot.requests.to_pipeline import reply_platform
from bot.web import dispatch
from pipeline.records import Platform, utcnow
from pipeline.reply.formats import REPLY_FORMATS
from storage.models import OptOut, Request, RequestState
from testing.fakes.openai_server import FakeLLM
from testing.scenarios import TIERS, build_index, script_happy_path
from tests.bot.quiet_platform import QuietPlatform

CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."
NAME = "fakesocial"


class FakeSocialConfig(AdapterConfig):
    bot_handle: str = "fact_fake"


class PluginSettings(Settings):
    """The settings with the fake platform's section, as `Settings` gets a field per platform."""

    fakesocial: FakeSocialConfig = Field(default_factory=FakeSocialConfig)


class FakeSocial(QuietPlatform):
    """A platform that serves fixed summonses and keeps what it is sent."""

    name = NAME

    def __init__(self, summonses: Sequence[Summons] = ()) -> None:
        self.summonses = list(summonses)
        self.posted: dict[str, str] = {}

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        return FetchResult(summons=[] if cursor else self.summonses, cursor="read")

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        self.posted[summons.id] = text
        return ReplyReceipt(reply_id=f"reply-{summons.id}", posted_at=utcnow())

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        if summons.id not in self.posted:
            return None
        return ReplyReceipt(reply_id=f"reply-{summons.id}", posted_at=utcnow())


def summons(sid: str, author: str, text: str) -> Summons:
    now = utcnow()
    return Summons(
        platform=NAME,
        id=sid,
        author=author,
        text=text,
        created_at=now,
        parent_id=f"p{sid}",
        target=SocialPost(
            id=f"p{sid}", author="claimer", text=CLAIM, created_at=now - timedelta(minutes=5)
        ),
        target_status=TargetStatus.OK,
    )


def register_fake(
    adapter: FakeSocial,
    reply_format: Platform = Platform.BLUESKY,
    triage: TriagePolicy | None = None,
) -> AdapterSpec:
    return platforms.register(
        AdapterSpec(
            name=NAME,
            label="FakeSocial",
            config=FakeSocialConfig,
            build=lambda settings: adapter,
            reply_format=reply_format,
            triage=triage or TriagePolicy(),
        )
    )


@pytest.fixture
def fake_platform() -> Iterator[FakeSocial]:
    adapter = FakeSocial()
    register_fake(adapter)
    yield adapter
    platforms.unregister(NAME)


# --- the registry ----------------------------------------------------------------------------


def test_the_built_in_platforms_are_registered_in_order() -> None:
    assert [spec.name for spec in platforms.specs()] == ["local", "x", "bluesky", "x_notes"]


def test_each_built_in_registry_is_a_new_one_that_a_plugin_registration_leaves_alone() -> None:
    mine = platforms.builtin_registry()
    mine.register(
        AdapterSpec(NAME, "FakeSocial", FakeSocialConfig, lambda _: FakeSocial(), Platform.X)
    )
    assert NAME not in [spec.name for spec in platforms.builtin_registry().specs()]
    assert mine.spec_for(NAME) is not None
    with pytest.raises(ValueError, match="already registered"):
        mine.register(
            AdapterSpec(NAME, "Again", FakeSocialConfig, lambda _: FakeSocial(), Platform.X)
        )


def test_looking_up_a_platform_before_start_up_installed_the_registry_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(platforms, "_installed", [])
    with pytest.raises(platforms.PlatformsNotInstalled, match="install"):
        platforms.spec_for("x")


def test_the_cli_installs_the_built_in_platforms_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(platforms, "_installed", [])
    result = CliRunner().invoke(app, ["config", "check"])
    assert result.exit_code == 0, result.output
    installed = platforms.installed()
    assert installed is not None
    assert [spec.name for spec in installed.specs()] == ["local", "x", "bluesky", "x_notes"]


def test_a_registry_the_host_installed_is_kept_by_the_cli(fake_platform: FakeSocial) -> None:
    mine = platforms.registry()
    assert CliRunner().invoke(app, ["config", "check"]).exit_code == 0
    assert platforms.registry() is mine
    assert platforms.spec_for(NAME) is not None


def test_a_platforms_own_code_does_not_import_the_registry_back() -> None:
    """The registry imports Community Notes' gates (bot/notes/decision_to_note.py) to build its
    spec; they name the spec types from `bot.platform_specs`, so no import chain leads back."""
    graph = grimp.build_graph("bot", "adapters", "pipeline", "storage", cache_dir=None)
    assert graph.find_shortest_chain(
        importer="bot.platforms", imported="bot.notes.decision_to_note"
    )
    for module in ("bot.notes.decision_to_note", "bot.notes.adapter_setup", "bot.platform_specs"):
        assert graph.find_shortest_chain(importer=module, imported="bot.platforms") is None


@pytest.mark.parametrize("spec", platforms.builtin_registry().specs(), ids=lambda spec: spec.name)
def test_every_registered_platform_has_its_config_section_and_a_known_reply_format(
    spec: AdapterSpec,
) -> None:
    assert Settings.model_fields[spec.name].annotation is spec.config
    settings = Settings()
    assert isinstance(spec.section(settings), spec.config)
    assert spec.bot_handle(settings) == spec.section(settings).bot_handle
    assert spec.reply_format in REPLY_FORMATS


def test_replies_follow_each_platforms_reply_format() -> None:
    assert reply_platform("local") is Platform.X  # no rules of its own: X's, the strictest
    assert reply_platform("x") is Platform.X
    assert reply_platform("bluesky") is Platform.BLUESKY
    assert reply_platform("not-a-platform") is Platform.X


def test_a_platform_registered_twice_is_refused(fake_platform: FakeSocial) -> None:
    with pytest.raises(ValueError, match="fakesocial"):
        register_fake(fake_platform)


def test_a_registered_platform_without_a_config_section_fails_by_name(
    fake_platform: FakeSocial,
) -> None:
    with pytest.raises(ConfigError, match=r"\[fakesocial\] section"):
        build_adapters(Settings())


# --- a platform added in the test only ------------------------------------------------------


def test_a_registered_platform_is_built_dispatched_and_moded_without_other_edits(
    fake_platform: FakeSocial,
) -> None:
    settings = PluginSettings()
    assert NAME not in build_adapters(settings)
    assert not dispatch.posts_here(settings, NAME)
    assert "not enabled" in dispatch.approve_plan(settings, NAME)

    settings.fakesocial.enabled = True
    assert build_adapters(settings)[NAME] is fake_platform
    assert dispatch.posts_here(settings, NAME)
    assert "through the fakesocial adapter" in dispatch.approve_plan(settings, NAME)
    assert reply_platform(NAME) is Platform.BLUESKY  # its spec's, not the default X

    settings.fakesocial.mode = "review"
    assert settings.adapter_mode(NAME) == "review"
    apply_mode(settings, "live")
    assert settings.fakesocial.mode is None
    assert settings.adapter_mode(NAME) == "live"

    labels = {key: o.label for key, o in overrides.overridable().items()}
    assert labels[f"{NAME}.mode"] == "FakeSocial adapter mode (empty: global)"
    assert overrides.parse_value(f"{NAME}.mode", "review") == "review"


def test_an_unregistered_platform_has_no_mode_override() -> None:
    with pytest.raises(overrides.OverrideError):
        overrides.parse_value(f"{NAME}.mode", "review")
    with pytest.raises(typer.BadParameter):
        apply_mode(Settings(), "loud")


def test_a_registered_platform_runs_end_to_end_under_its_own_rules(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    script_happy_path(fake_llm)
    adapter = FakeSocial(
        [
            summons("1", "asker", "@fact_fake is this true?"),
            # The same person again within the hour: the per-user limit is off here.
            summons("2", "asker", "@fact_fake and this?"),
            # "stop" is not a command on this platform: no opt-out is recorded.
            summons("3", "quiet", "@fact_fake stop"),
            summons("4", "fact_fake", "@fact_fake our own post"),  # the section's bot_handle
        ]
    )
    register_fake(adapter, triage=TriagePolicy(commands=False, per_user_limit=False))
    try:
        settings = PluginSettings(
            database_url=f"sqlite:///{tmp_path / 'factnote.db'}",
            index_path=str(build_index(f"sqlite:///{tmp_path / 'factnote.db'}")),
            mode="dry-run",
        )
        settings.local.enabled = False
        settings.fakesocial.enabled = True
        settings.fakesocial.mode = "live"  # the section's mode wins over the global one
        settings.credibility.overrides = dict(TIERS)
        settings.llm = fake_llm.config()
        settings.runtime.retry_backoff_s = 0
        settings.runtime.per_user_hourly = 1
        with open_runtime(settings) as runtime:
            Bot(runtime, build_adapters(settings)).run_once()
            with runtime.db.session() as session:
                rows = {r.summons_id: r for r in session.scalars(select(Request))}
                opt_outs = list(session.scalars(select(OptOut)))
    finally:
        platforms.unregister(NAME)

    assert set(rows) == {"1", "2", "3", "4"}
    assert all(r.platform == NAME for r in rows.values())
    assert rows["1"].state == RequestState.POSTED.value
    assert adapter.posted["1"] == rows["1"].reply_text
    assert not rows["2"].reason.startswith("rate limit")
    assert rows["2"].state != RequestState.SKIPPED.value
    assert rows["3"].state != RequestState.SKIPPED.value
    assert opt_outs == []
    assert (rows["4"].state, rows["4"].reason) == (RequestState.SKIPPED.value, "our own post")
    # The writer was given the reply format the spec names (Bluesky's), not X's.
    prompts = [str(m.get("content")) for r in fake_llm.requests for m in r.messages]
    assert any("Platform: a Bluesky reply" in p for p in prompts)
    assert not any("Platform: an X reply" in p for p in prompts)
