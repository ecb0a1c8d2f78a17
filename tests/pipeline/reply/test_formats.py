"""The reply-format registry (`pipeline/reply/formats.py`): one format per platform, read by the
guard, the writer and the claims templates instead of rules of their own."""

from __future__ import annotations

import pytest

from pipeline.config import GuardConfig
from pipeline.records import Platform, Problem, ProblemCode
from pipeline.reply import guard
from pipeline.reply import writer as write
from pipeline.reply.formats import REPLY_FORMATS, Budget, ReplyFormat, reply_format, utf8_bytes


def test_every_platform_has_exactly_one_reply_format() -> None:
    assert set(REPLY_FORMATS) == set(Platform)
    for platform, form in REPLY_FORMATS.items():
        assert form.platform is platform
        assert form.budgets


@pytest.mark.parametrize("platform", list(Platform))
def test_the_writer_is_told_the_limit_the_guard_enforces_by_default(platform: Platform) -> None:
    form = reply_format(platform)
    limit = form.budgets[0].limit(GuardConfig())
    assert f"at most {limit} characters" in form.prompt_rules
    assert write.writing_rules(platform, "de") == f"{form.prompt_rules}\n\nLanguage: de"


def test_every_format_requires_a_url_and_tells_the_writer_so() -> None:
    # Every reply cites (issue 32): X and Bluesky replies as well as notes.
    assert {p for p, f in REPLY_FORMATS.items() if f.url_required} == set(Platform)
    assert all("at least one URL" in f.prompt_rules for f in REPLY_FORMATS.values())


def test_guard_and_writer_read_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    strict = ReplyFormat(
        platform=Platform.X,
        name="a test reply",
        budgets=(Budget(len, lambda cfg: 40),),
        url_required=True,
        prompt_rules="TEST RULES",
    )
    monkeypatch.setitem(REPLY_FORMATS, Platform.X, strict)
    text = "a" * 50
    assert guard.measure(text, Platform.X, GuardConfig()) == (50, 40)
    report = guard.check_text(text, Platform.X, evidence_urls=[], cfg=GuardConfig())
    assert [str(p) for p in report.problems] == ["too_long: 50 > 40", "no_source"]
    assert (report.length, report.limit) == (50, 40)
    assert write.writing_rules(Platform.X, None) == "TEST RULES\n\nLanguage: same as the post"


def test_a_format_with_several_budgets_fits_only_within_all_and_names_each() -> None:
    form = ReplyFormat(
        platform=Platform.BLUESKY,
        name="a two-budget reply",
        budgets=(
            Budget(len, lambda cfg: 10, "characters"),
            Budget(utf8_bytes, lambda cfg: 12, "bytes"),
        ),
        url_required=False,
        prompt_rules="",
    )
    cfg = GuardConfig()
    assert form.fits("é" * 6, cfg)  # 6 characters, 12 bytes
    assert form.length_problems("é" * 6, cfg) == []
    assert not form.fits("é" * 7, cfg)  # 7 characters, 14 bytes
    assert form.length_problems("é" * 7, cfg) == [
        Problem(code=ProblemCode.TOO_LONG, detail="7/10 characters, 14/12 bytes")
    ]
    assert form.measure("é" * 7, cfg) == (7, 10)  # the first budget is the one shown


def test_limits_come_from_the_guard_config() -> None:
    cfg = GuardConfig(x_limit=100, bluesky_graphemes=50, bluesky_bytes=60, notes_limit=70)
    assert reply_format(Platform.X).measure("abc", cfg) == (3, 100)
    assert reply_format(Platform.BLUESKY).measure("abc", cfg) == (3, 50)
    assert reply_format(Platform.NOTES).measure("abc", cfg) == (3, 70)
    assert not reply_format(Platform.BLUESKY).fits("€" * 21, cfg)  # 21 graphemes, 63 bytes
