"""Every reply cites (issue 32): a draft with no URL fails `no_source` on every platform; the
round trip through the writer is pinned in tests/pipeline/test_check.py."""

from __future__ import annotations

import pytest

from pipeline.config import GuardConfig
from pipeline.records import GuardReport, Platform
from pipeline.reply.guard import check_text

URL = "https://www.who.int/news-room/fact-sheets/detail/measles"


def text_report(
    text: str, platform: Platform = Platform.X, evidence_urls: tuple[str, ...] = (URL,)
) -> GuardReport:
    return check_text(text, platform, evidence_urls=evidence_urls, cfg=GuardConfig())


def texts(report: GuardReport) -> list[str]:
    return [str(p) for p in report.problems]


@pytest.mark.parametrize("platform", list(Platform))
def test_a_reply_citing_no_url_fails_no_source_on_every_platform(platform: Platform) -> None:
    report = text_report("This claim is false according to the WHO.", platform)
    assert texts(report) == ["no_source"]
    assert not report.valid
    assert text_report("This claim is false according to the WHO." + " " + URL, platform).valid


def test_a_reply_citing_only_a_url_outside_the_evidence_is_refused_for_that_url() -> None:
    report = text_report("False, see https://evil.example/x", evidence_urls=(URL,))
    assert texts(report) == ["url_not_evidence: https://evil.example/x"]


def test_the_schema_echo_a_confused_model_returns_fails_no_source() -> None:
    # What a model answered when it echoed the JSON instructions instead of drafting (issue 32).
    report = text_report("Answer only with JSON matching the schema.", evidence_urls=())
    assert texts(report) == ["no_source"]
