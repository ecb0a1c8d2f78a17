"""Tests for resolving DOI and shortener links under the SSRF guard (pipeline.web.resolve).

The local HTTP server plays the redirector. Its answers are shaped after the real services:
doi.org answers a DOI with an HTTP 302 whose Location is the registrant's landing page (DOI
Handbook, section 3.8.3, https://www.doi.org/doi-handbook/HTML/index.html; a HEAD request gets
the same answer), and Bitly answers a short link with a 301 and the long URL in Location
(https://support.bitly.com/hc/en-us/articles/230650447). Some shorteners answer HEAD with 405
and others send an HTML page with `<meta http-equiv="refresh" content="0;URL=...">` (t.co does
for browsers), so both fall-backs are pinned too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.config import CredibilityConfig, FetchConfig
from pipeline.records import Tier
from pipeline.sources.credibility import PublisherTable
from pipeline.web.resolve import LinkResolver, rate_link
from testing.fakes.http_server import LocalHTTPServer, RecordedRequest, Route

LOCAL = "127.0.0.1"


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as running:
        yield running


def _resolver(
    *, timeout_s: float = 5.0, max_hops: int = 5, redirectors: tuple[str, ...] = (LOCAL,)
) -> LinkResolver:
    cfg = CredibilityConfig(resolve_timeout_s=timeout_s, resolve_max_hops=max_hops)
    # Only the test server is exempt from the address check; everything else is guarded.
    return LinkResolver(
        cfg, FetchConfig(allow_hosts=[LOCAL]), is_redirector=lambda host: host in redirectors
    )


def test_doi_link_is_rated_as_the_publisher_it_redirects_to(server: LocalHTTPServer) -> None:
    server.redirect("/10.5555/abc", "https://www.nature.com/articles/abc", status=302)
    with _resolver() as resolver:
        linked = rate_link(PublisherTable.default(), server.url("/10.5555/abc"), resolver)
    assert linked.resolution is not None
    assert (linked.resolution.status, linked.resolution.final_url, linked.resolution.hops) == (
        "resolved",
        "https://www.nature.com/articles/abc",
        1,
    )
    rating = linked.rating
    assert (rating.tier, rating.domain, rating.matched) == (Tier.HIGH, "nature.com", "nature.com")
    assert rating.query == server.url("/10.5555/abc")
    assert rating.reason.startswith("resolved 127.0.0.1 to nature.com: ")
    # One HEAD to the redirector; the publisher itself is never contacted.
    assert [(r.method, r.route_path) for r in server.requests] == [("HEAD", "/10.5555/abc")]


def test_shortener_chain_is_followed_one_checked_hop_at_a_time(server: LocalHTTPServer) -> None:
    server.redirect("/s1", server.url("/s2"), status=301)
    server.redirect("/s2", "https://www.who.int/news/item/1", status=301)
    with _resolver() as resolver:
        outcome = resolver.resolve(server.url("/s1"))
    assert (outcome.status, outcome.final_url, outcome.hops) == (
        "resolved",
        "https://www.who.int/news/item/1",
        2,
    )


def test_redirect_to_a_private_address_is_refused(server: LocalHTTPServer) -> None:
    server.redirect("/p", "http://10.0.0.7/admin")
    table = PublisherTable.default()
    with _resolver() as resolver:
        linked = rate_link(table, server.url("/p"), resolver)
    assert linked.resolution is not None
    assert linked.resolution.status == "unresolved"
    assert linked.resolution.reason == "ssrf: refused 10.0.0.7 (private)"
    assert linked.rating.tier is Tier.UNKNOWN
    assert linked.rating.reason.endswith("(unresolved: ssrf: refused 10.0.0.7 (private))")


def test_each_contacted_hop_is_rechecked_by_the_ssrf_guard(server: LocalHTTPServer) -> None:
    # "localhost" is a redirector here but not exempt: the guard resolves it and refuses it.
    server.redirect("/hop", f"http://localhost:{server.port}/next")
    with _resolver(redirectors=(LOCAL, "localhost")) as resolver:
        outcome = resolver.resolve(server.url("/hop"))
    assert outcome.status == "unresolved"
    assert outcome.reason.startswith("ssrf: refused ") and "loopback" in outcome.reason
    assert server.hits("/next") == 0


def test_dead_link_is_unresolved_with_its_status_and_never_raises(
    server: LocalHTTPServer,
) -> None:
    server.add("/dead", Route(status=404, body="gone"))
    with _resolver() as resolver:
        outcome = resolver.resolve(server.url("/dead"))
        linked = rate_link(PublisherTable.default(), server.url("/dead"), resolver)
    assert (outcome.status, outcome.final_url, outcome.reason) == ("unresolved", None, "http 404")
    assert linked.rating.tier is Tier.UNKNOWN


def test_redirect_loop_is_reported(server: LocalHTTPServer) -> None:
    server.redirect("/a", "/b")
    server.redirect("/b", "/a")
    with _resolver() as resolver:
        outcome = resolver.resolve(server.url("/a"))
    assert (outcome.status, outcome.reason) == ("unresolved", "redirect loop")


def test_chain_longer_than_the_hop_limit_is_too_many_redirects(server: LocalHTTPServer) -> None:
    for n in range(5):
        server.redirect(f"/r{n}", f"/r{n + 1}")
    with _resolver(max_hops=3) as resolver:
        outcome = resolver.resolve(server.url("/r0"))
    assert (outcome.status, outcome.reason) == ("unresolved", "too many redirects")


def test_timeout_is_unresolved_and_not_cached(server: LocalHTTPServer) -> None:
    server.add("/slow", Route(status=301, headers={"Location": "https://who.int/"}, delay_s=2))
    with _resolver(timeout_s=0.3) as resolver:
        first = resolver.resolve(server.url("/slow"))
        second = resolver.resolve(server.url("/slow"))
    assert (first.status, first.reason) == ("unresolved", "timeout after 0.3s")
    assert second.reason == first.reason
    assert server.hits("/slow") == 2


def test_connection_refused_is_unresolved(server: LocalHTTPServer) -> None:
    url = server.url("/gone")
    server.stop()
    with _resolver() as resolver:
        outcome = resolver.resolve(url)
    assert outcome.status == "unresolved"
    assert outcome.reason.startswith("connection failed")


def test_head_refused_falls_back_to_get(server: LocalHTTPServer) -> None:
    def answer(request: RecordedRequest) -> Route:
        if request.method == "HEAD":
            return Route(status=405)
        return Route.redirect("https://www.bbc.co.uk/news/x", status=301)

    server.add("/nohead", answer)
    with _resolver() as resolver:
        linked = rate_link(PublisherTable.default(), server.url("/nohead"), resolver)
    assert (linked.rating.domain, linked.rating.tier) == ("bbc.co.uk", Tier.MEDIUM)
    assert [r.method for r in server.requests] == ["HEAD", "GET"]


def test_meta_refresh_page_is_followed(server: LocalHTTPServer) -> None:
    page = (
        '<html><head><meta name="referrer" content="always">'
        '<noscript><META http-equiv="refresh" content="0;URL=https://apnews.com/article/x">'
        "</noscript></head></html>"
    )
    server.add("/mr", Route(body=page))
    with _resolver() as resolver:
        outcome = resolver.resolve(server.url("/mr"))
    assert (outcome.status, outcome.final_url) == ("resolved", "https://apnews.com/article/x")


def test_page_without_a_redirect_is_unresolved(server: LocalHTTPServer) -> None:
    server.add("/plain", Route(body="<html><body>just a page</body></html>"))
    with _resolver() as resolver:
        outcome = resolver.resolve(server.url("/plain"))
    assert (outcome.status, outcome.reason) == (
        "unresolved",
        "no redirect from 127.0.0.1 (http 200)",
    )


def test_outcomes_are_cached(server: LocalHTTPServer) -> None:
    server.redirect("/c", "https://reuters.com/x")
    server.add("/d", Route(status=404))
    with _resolver() as resolver:
        for _ in range(3):
            assert resolver.resolve(server.url("/c")).status == "resolved"
            assert resolver.resolve(server.url("/d")).reason == "http 404"
    assert server.hits("/c") == 1
    assert server.hits("/d") == 2  # HEAD, then the GET fall-back, once


def test_links_rated_offline_are_not_resolved(server: LocalHTTPServer) -> None:
    with _resolver(redirectors=("doi.org", "nyti.ms")) as resolver:
        linked = rate_link(
            PublisherTable.default(), "https://doi.org/10.1056/NEJMoa2034577", resolver
        )
        assert not resolver.handles("https://nyti.ms/3abc")
    assert linked.resolution is None
    assert (linked.rating.domain, linked.rating.tier) == ("nejm.org", Tier.HIGH)
    assert server.requests == []


def test_without_a_resolver_a_shortener_keeps_the_redirector_rule() -> None:
    linked = rate_link(PublisherTable.default(), "https://bit.ly/3xYz")
    assert linked.resolution is None
    assert (linked.rating.tier, linked.rating.source) == (Tier.UNKNOWN, "rule:redirector")
    assert "resolve it" in linked.rating.reason


def test_default_resolver_handles_bundled_shorteners_and_unknown_doi_prefixes() -> None:
    with LinkResolver(CredibilityConfig(), FetchConfig()) as resolver:
        assert resolver.handles("https://t.co/abc")
        assert resolver.handles("https://bit.ly/abc")
        assert resolver.handles("https://doi.org/10.99999/unknown-registrant")
        assert not resolver.handles("https://doi.org/10.1038/s41586-020-2012-7")
        assert not resolver.handles("https://www.bbc.co.uk/news")
