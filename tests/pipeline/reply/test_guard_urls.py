"""How the guard reads URLs, spelling by spelling, and the link facets Bluesky would get.

The guard is the one URL finder: it reads a reply as a browser would (NFKC, then IDNA/UTS 46
for hosts), refuses hidden characters in or next to a URL, credentials and http for https
evidence, and lists the URLs it approved (`GuardReport.urls`, which becomes `Decision.urls`).
The Bluesky adapter turns exactly those strings into link facets and leaves every other
URL-looking text plain. Each row below says what the guard reports and which facet the adapter
creates, when it is handed the approved URLs and, as in the incident of issue 16, the evidence
URLs as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.bluesky.text import reply_text_builder
from pipeline.check import Checker
from pipeline.config import GuardConfig
from pipeline.records import DecisionStatus, GuardReport, Platform, ProblemCode
from pipeline.reply.guard import check_text, find_urls
from pipeline.web.urls import browser_url, has_credentials
from testing import indexes
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import ANALYSIS, POST, build_index, make_shared_parts, quotes_from_page

CFG = GuardConfig()
E = "https://www.who.int/news/item/measles"  # the evidence page of most rows
HOMOGRAPH_O = "\u043e"  # Cyrillic small o


@dataclass(frozen=True)
class Row:
    written: str  # the text around and including the URL, as the draft spells it
    rules: tuple[str, ...]  # the guard's problem codes (empty: the reply passes)
    facet: str | None  # the one link facet's URI, or None when the text stays plain
    evidence: tuple[str, ...] = (E,)


ROWS: dict[str, Row] = {
    # Plain spellings of the evidence page pass and are linked as written.
    "exact": Row(f"{E} ", (), E),
    "without-www": Row(
        "https://who.int/news/item/measles ", (), "https://who.int/news/item/measles"
    ),
    "tracking-query": Row(f"{E}?utm_source=x ", (), f"{E}?utm_source=x"),
    "fragment": Row(f"{E}#symptoms ", (), f"{E}#symptoms"),
    "upper-case-host": Row(
        "https://WWW.WHO.INT/news/item/measles ", (), "https://WWW.WHO.INT/news/item/measles"
    ),
    "trailing-slash": Row(f"{E}/ ", (), f"{E}/"),
    "bare-host-is-plain-text": Row("www.who.int/news/item/measles ", (), None),
    # Issue 33: a bare host under a public suffix twitter-text's list predates is still a link
    # a reader can follow; a file name is not.
    "bare-host-newer-tld": Row("evil.music ", ("url_not_evidence",), None),
    "bare-host-newer-tld-in-parentheses": Row("(evil.music).", ("url_not_evidence",), None),
    "file-name-is-no-host": Row(f"the index.html file of {E} ", (), E),
    "after-cjk-with-ideographic-stop": Row(f"请看{E}。谢谢", (), E),
    # Trailing punctuation stays outside the link.
    "trailing-period": Row(f"{E}.", (), E),
    "trailing-comma": Row(f"{E}, and", (), E),
    "in-parentheses": Row(f"({E}).", (), E),
    "trailing-ellipsis": Row(f"{E}...", (), E),
    "trailing-question-exclamation": Row(f"{E}?!", (), E),
    "trailing-quote": Row(f"'{E}'", (), E),
    "trailing-colon": Row(f"{E}: it", (), E),
    "guillemets": Row(f"«{E}»", (), E),
    "balanced-parentheses-kept": Row(
        "https://en.wikipedia.org/wiki/Measles_(disease).",
        (),
        "https://en.wikipedia.org/wiki/Measles_(disease)",
        evidence=("https://en.wikipedia.org/wiki/Measles_(disease)",),
    ),
    "punctuation-then-host": Row(f"{E}.evil.example ", ("url_not_evidence",), None),
    # Full-width letters and dots read as ASCII in a browser.
    "fullwidth-host-evil": Row(
        "https://ｅvil．com/login ", ("url_not_normalised", "url_not_evidence"), None
    ),
    "fullwidth-scheme": Row(
        "ｈｔｔｐｓ：／／evil.com/login ", ("url_not_normalised", "url_not_evidence"), None
    ),
    "fullwidth-evidence-host": Row(
        "https://ｗｗｗ．ｗｈｏ．ｉｎｔ/news/item/measles ", ("url_not_normalised",), None
    ),
    "fullwidth-path": Row("https://www.who.int/news/item/ｍeasles ", ("url_not_normalised",), None),
    "fullwidth-bare-host": Row(
        "ｅvil．com/login ", ("url_not_normalised", "url_not_evidence"), None
    ),
    # Ideographic full stops (and the half-width one) are dots to UTS 46.
    "ideographic-stop-host": Row(
        "https://who.int。evil.example/news/item/measles ",
        ("url_not_normalised", "url_not_evidence"),
        None,
    ),
    "ideographic-stop-bare": Row(
        "who.int。evil.example/x ", ("url_not_normalised", "url_not_evidence"), None
    ),
    "halfwidth-ideographic-stop": Row(
        "https://www.who｡int/news/item/measles ", ("url_not_normalised",), None
    ),
    "fullwidth-stop-look-alike": Row(
        "https://www.who.int．evil.example/news ",
        ("url_not_normalised", "url_not_evidence"),
        None,
    ),
    "ideographic-stop-ends-a-path": Row(f"{E}。evil ", (), E),  # a dot in hosts only
    # Zero-width characters and soft hyphens vanish from hosts in a browser.
    "zwsp-host-look-alike": Row(
        "https://who\u200b.int.evil.example/x ",
        ("url_hidden_characters", "url_not_evidence"),
        None,
    ),
    "zwsp-evidence-host": Row(
        "https://www.who\u200b.int/news/item/measles ", ("url_hidden_characters",), None
    ),
    "soft-hyphen-host": Row(
        "https://www.w\u00adho.int/news/item/measles ", ("url_hidden_characters",), None
    ),
    "zwnj-host-look-alike": Row(
        "https://www.who.int\u200c.evil.example/news ",
        ("url_hidden_characters", "url_not_evidence"),
        None,
    ),
    "word-joiner-host": Row(
        "https://www.who.int\u2060/news/item/measles ", ("url_hidden_characters",), None
    ),
    "zwsp-path": Row(
        "https://www.who.int/news/item/\u200bmeasles ", ("url_hidden_characters",), None
    ),
    "soft-hyphen-path": Row(
        "https://www.who.int/news/item/mea\u00adsles ", ("url_hidden_characters",), None
    ),
    "zwsp-after-url-joins-host": Row(
        f"{E}\u200b.evil.example ", ("url_hidden_characters", "url_not_evidence"), None
    ),
    "zwsp-before-url": Row(f"see\u200b {E} ", (), E),  # not next to it: a space between
    "zwsp-right-before-url": Row(f"\u200b{E} ", ("url_hidden_characters",), None),
    "bom-in-host": Row(
        "https://www.who\ufeff.int/news/item/measles ",
        ("invalid_characters", "url_hidden_characters"),
        None,
    ),
    # Bidi controls reorder what a reader sees.
    "rlo-inside-url": Row(
        f"{E}\u202eelpmaxe.live ",
        ("invalid_characters", "url_hidden_characters", "url_not_evidence"),
        None,
    ),
    "rlo-before-url": Row(f"\u202e{E} ", ("invalid_characters", "url_hidden_characters"), None),
    "rli-isolate-around-url": Row(
        f"\u2067{E}\u2069 ", ("invalid_characters", "url_hidden_characters"), None
    ),
    "lrm-in-host": Row(
        "https://www.who.int\u200e/news/item/measles ", ("url_hidden_characters",), None
    ),
    # Credentials: the browser opens the host after "@".
    "credentials-evil-name-evidence-host": Row(
        f"https://evil.com@{E.removeprefix('https://')} ", ("url_credentials",), None
    ),
    "credentials-evidence-name-evil-host": Row(
        "https://www.who.int@evil.example/news/item/measles ",
        ("url_credentials", "url_not_evidence"),
        None,
    ),
    "credentials-user-password": Row(
        "https://user:pass@www.who.int/news/item/measles ", ("url_credentials",), None
    ),
    "credentials-bare": Row("evil.com@www.who.int/news/item/measles ", ("url_credentials",), None),
    # Schemes: http for https evidence is a downgrade; http evidence may be cited either way.
    "http-downgrade": Row("http://www.who.int/news/item/measles ", ("url_downgrade",), None),
    "http-upper-case-downgrade": Row(
        "HTTP://www.who.int/news/item/measles ", ("url_downgrade",), None
    ),
    "http-downgrade-without-www": Row(
        "http://who.int/news/item/measles ", ("url_downgrade",), None
    ),
    "http-evidence-cited-as-http": Row(
        "http://example.org/report ",
        (),
        "http://example.org/report",
        evidence=("http://example.org/report",),
    ),
    "http-evidence-cited-as-https": Row(
        "https://example.org/report ",
        (),
        "https://example.org/report",
        evidence=("http://example.org/report",),
    ),
    "ftp-scheme": Row("ftp://www.who.int/news/item/measles ", ("url_not_evidence",), None),
    # IDN homographs: IDNA makes them other hosts.
    "cyrillic-o-host": Row(
        f"https://www.wh{HOMOGRAPH_O}.int/news/item/measles ", ("url_not_evidence",), None
    ),
    "greek-omicron-host": Row(
        "https://www.wh\u03bf.int/news/item/measles ", ("url_not_evidence",), None
    ),
    "cyrillic-i-in-tld": Row(
        "https://www.who.\u0456nt/news/item/measles ", ("url_not_evidence",), None
    ),
    "cyrillic-w-host": Row(
        "https://www.\u051dho.int/news/item/measles ", ("url_not_evidence",), None
    ),
    "punycode-homograph": Row(
        "https://www.xn--wh-gmc.int/news/item/measles ", ("url_not_evidence",), None
    ),
    "bare-cyrillic-o-host": Row(
        f"www.wh{HOMOGRAPH_O}.int/news/item/measles ", ("url_not_evidence",), None
    ),
    "bare-cyrillic-o-host-without-www": Row(
        f"wh{HOMOGRAPH_O}.int/news/item/measles ", ("url_not_evidence",), None
    ),
    # A real IDN host is the same page in Unicode or punycode; only ASCII becomes a facet.
    "idn-evidence-in-unicode": Row(
        "https://bücher.example/a ", (), None, evidence=("https://bücher.example/a",)
    ),
    "idn-evidence-in-punycode": Row(
        "https://xn--bcher-kva.example/a ",
        (),
        "https://xn--bcher-kva.example/a",
        evidence=("https://bücher.example/a",),
    ),
}


def guard(row: Row, platform: Platform = Platform.BLUESKY) -> GuardReport:
    return check_text(
        f"Measles vaccines are safe: {row.written} Thanks.",
        platform,
        evidence_urls=list(row.evidence),
        cfg=CFG,
    )


def facet_uris(text: str, links: list[str]) -> list[str]:
    builder = reply_text_builder(text, links)
    return [feature.uri for facet in builder.build_facets() for feature in facet.features]


def test_the_table_covers_at_least_forty_spellings() -> None:
    assert len(ROWS) >= 40


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_each_spelling_gets_the_guard_verdict_and_facet_in_the_table(row: Row) -> None:
    report = guard(row)
    assert [p.code for p in report.problems] == list(row.rules)
    text = f"Measles vaccines are safe: {row.written} Thanks."
    # Handed the approved URLs and, as in the incident, the evidence URLs too.
    uris = facet_uris(text, [*report.urls, *row.evidence])
    assert uris == ([row.facet] if row.facet else [])
    if row.facet:
        assert report.urls == [row.facet]


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_every_platform_applies_the_same_url_rules(row: Row) -> None:
    # Notes add their own rules (a note needs an http(s):// source X accepts), not URL rules.
    verdicts = {
        platform: (
            [p.code for p in report.problems if not p.code.value.startswith("notes_")],
            report.urls,
        )
        for platform in Platform
        for report in [guard(row, platform)]
    }
    assert len(set(map(repr, verdicts.values()))) == 1, verdicts


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_only_approved_urls_become_facets(row: Row) -> None:
    report = guard(row)
    text = f"Measles vaccines are safe: {row.written} Thanks."
    assert set(facet_uris(text, report.urls)) <= set(report.urls)


# --- The incident of issue 16, item 1 ---------------------------------------------------------

DISGUISED = [
    "https://ｅvil．com/login",  # full-width letter and dot
    "who.int。evil.example",  # ideographic full stop
    "https://who\u200b.int.evil.example/x",  # zero-width space in the host
    "https://who\u00ad.int.evil.example/x",  # soft hyphen in the host
]


@pytest.mark.parametrize("link", DISGUISED)
def test_a_disguised_link_copied_from_page_text_is_refused_and_never_linked(link: str) -> None:
    evidence = ["https://who.int/news/measles", "https://cdc.gov/measles"]
    text = f"Not true: {evidence[0]} and {evidence[1]}; also {link} for more."
    report = check_text(text, Platform.BLUESKY, evidence_urls=evidence, cfg=CFG)
    assert not report.valid
    assert any(p.code is ProblemCode.URL_NOT_EVIDENCE for p in report.problems)
    assert report.urls == evidence  # the approved links are the evidence, and only those
    # Before: the adapter linked every http(s) run itself, and browsers opened the disguised
    # one as evil.com / who.int.evil.example. Now only the approved strings become facets.
    assert facet_uris(text, report.urls) == evidence


def test_the_guard_reads_a_disguised_link_as_the_browser_would() -> None:
    [found] = find_urls("see https://who\u200b.int.evil.example/x now")
    assert found.normal == "https://who.int.evil.example/x"
    assert found.raw == "https://who\u200b.int.evil.example/x"
    assert found.hidden


def test_a_draft_with_a_disguised_link_is_rewritten_and_the_decision_lists_only_its_links(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script("analyze", Reply.json(ANALYSIS))
    fake_llm.script("evidence", quotes_from_page)
    cited: list[str] = []

    def drafts(body: dict[str, Any]) -> Reply:
        urls = re.findall(r'url="([^"]+)"', body["messages"][-1]["content"])
        disguised = "" if cited else " https://ｅvil．com/login"  # the first draft copies it
        cited[:] = urls[:2]
        return Reply.json({"text": f"False. {urls[0]} {urls[1]}{disguised}"})

    fake_llm.script(("write", "rewrite"), drafts)
    index = indexes.local_index(build_index(tmp_path / "index.sqlite"))
    index.close()
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite")
    try:
        decision = Checker(shared).check(POST, Platform.BLUESKY)
    finally:
        shared.close()
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    first = decision.trace.guard[0]
    assert "url_not_normalised" in [p.code for p in first.problems]
    assert decision.reply is not None and "ｅvil" not in decision.reply
    assert decision.urls == cited
    assert facet_uris(decision.reply, decision.urls) == cited


@pytest.mark.parametrize(
    ("written", "opened"),
    [
        ("https://ｗｈｏ．int/x", "https://who.int/x"),
        ("https://who.int。evil.example/", "https://who.int.evil.example/"),
        ("https://who\u00ad.int/a", "https://who.int/a"),
        (f"https://wh{HOMOGRAPH_O}.int/a", "https://xn--wh-gmc.int/a"),
        ("https://evil.com@WHO.int:8443/a", "https://who.int:8443/a"),
        ("who.int/a", "https://who.int/a"),
    ],
)
def test_browser_url_is_what_a_browser_opens(written: str, opened: str) -> None:
    assert browser_url(written) == opened


def test_a_host_idna_cannot_encode_is_an_error_not_a_match() -> None:
    with pytest.raises(ValueError):
        browser_url("https://bü..example/a")  # an empty label in an IDN host
    assert has_credentials("https://evil.com@who.int/") and not has_credentials("https://who.int/")
