"""The fetcher turns URLs into Document snapshots safely, and `usability` decides what is evidence.

Network tests run against a real HTTP server on 127.0.0.1; the allowlist that lets the fetcher
reach it is set by each test, never by default.
"""

from __future__ import annotations

import gzip
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from pipeline.config import FetchConfig
from pipeline.records import Document
from pipeline.web.fetch import Fetcher, MemoryDocumentStore, usability
from pipeline.web.urls import canonical_url
from testing.fakes.http_server import LocalHTTPServer, RecordedRequest, Route
from tests.pages import FIXTURE_PAGES

LOCAL = ["127.0.0.1"]
AS_OF = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer(root=FIXTURE_PAGES) as srv:
        yield srv


def _fetcher(**overrides: Any) -> Fetcher:
    settings: dict[str, Any] = {"allow_hosts": LOCAL, "timeout_s": 5.0}
    settings.update(overrides)
    return Fetcher(FetchConfig(**settings))


def _fetch(url: str, **overrides: Any) -> Document:
    with _fetcher(**overrides) as fetcher:
        return fetcher.fetch(url)


def _usable(doc: Document, **kwargs: Any) -> str | None:
    args: dict[str, Any] = {
        "as_of": AS_OF,
        "replay": False,
        "reference_ok": False,
        "cfg": FetchConfig(),
    }
    args.update(kwargs)
    return usability(doc, **args)


# successful fetches


@pytest.mark.parametrize(
    ("path", "published", "source"),
    [
        (
            "/meta_published.html",
            datetime(2024, 3, 5, 13, 30, tzinfo=UTC),
            "meta:article:published_time",
        ),
        (
            "/jsonld_published.html",
            datetime(2023, 11, 20, 8, 15, tzinfo=UTC),
            "json-ld:datePublished",
        ),
        ("/time_element.html", datetime(2022, 6, 1, tzinfo=UTC), "time-element"),
    ],
)
def test_fetch_reads_page_and_its_publication_date(
    server: LocalHTTPServer, path: str, published: datetime, source: str
) -> None:
    before = datetime.now(UTC)
    doc = _fetch(server.url(path))
    assert doc.ok, doc.error
    assert doc.error is None
    assert doc.status_code == 200
    assert doc.content_type == "text/html"
    assert doc.published == published
    assert doc.date_source == source
    assert doc.word_count > 150
    assert doc.content_hash == hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    assert doc.canonical_url == canonical_url(server.url(path))
    assert before <= doc.fetched_at <= datetime.now(UTC)
    assert _usable(doc) is None


def test_fetch_sends_configured_user_agent(server: LocalHTTPServer) -> None:
    _fetch(server.url("/short.html"), user_agent="factnote-test/9")
    assert server.requests[0].headers["User-Agent"] == "factnote-test/9"


def test_fetch_decodes_page_by_its_meta_charset(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/latin1.html"))
    assert doc.title == "Les élèves répètent la pièce de théâtre"
    assert "La municipalité a prêté la salle" in doc.text


def test_fetch_decodes_by_declared_header_charset(server: LocalHTTPServer) -> None:
    body = "<html><body><p>Le café coûte deux euros à Noël.</p></body></html>"
    server.add(
        "/cp1252", Route(body=body.encode("cp1252"), content_type="text/html; charset=cp1252")
    )
    assert "Le café coûte deux euros à Noël" in _fetch(server.url("/cp1252")).text


def test_fetch_accepts_plain_text(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/plain.txt"))
    assert doc.ok
    assert doc.content_type == "text/plain"
    assert doc.text.startswith("Notice to residents")
    assert doc.published is None


def test_fetch_accepts_untyped_body_only_if_it_is_html(server: LocalHTTPServer) -> None:
    server.add("/untyped-html", Route(body=_page_bytes("short.html"), content_type=None))
    server.add("/untyped-bin", Route(body=b"\x00\x01binary", content_type=None))
    assert _fetch(server.url("/untyped-html")).word_count == 37
    assert _fetch(server.url("/untyped-bin")).error == "unsupported content type: (none)"


def _page_bytes(name: str) -> bytes:
    return (FIXTURE_PAGES / name).read_bytes()


# usability rules


def test_dateless_page_under_each_policy(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/dateless.html"))
    assert doc.ok
    assert doc.published is None
    assert doc.word_count >= 100

    exclude = FetchConfig(dateless="exclude")
    allow = FetchConfig(dateless="allow")
    reference = FetchConfig(dateless="reference_only")
    assert FetchConfig().dateless == "reference_only"

    assert _usable(doc, cfg=exclude, reference_ok=True) == "no publication date (policy: exclude)"
    assert _usable(doc, cfg=allow, replay=True) is None
    assert _usable(doc, cfg=reference, reference_ok=True) is None
    assert _usable(doc, cfg=reference, reference_ok=True, replay=True) == (
        "no publication date (replay: cannot show it predates as-of)"
    )
    assert _usable(doc, cfg=reference, reference_ok=False) == (
        "no publication date (not a reference publisher)"
    )


def test_page_under_100_words_is_not_used(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/short.html"))
    assert doc.ok
    assert _usable(doc) == "under 100 words (37)"
    assert _usable(doc, cfg=FetchConfig(min_words=30)) is None


def test_page_published_after_as_of_is_not_used(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/meta_published.html"))
    before = datetime(2024, 3, 5, 13, 0, tzinfo=UTC)
    assert _usable(doc, as_of=before) == (
        "published after as-of (2024-03-05T13:30:00+00:00 > 2024-03-05T13:00:00+00:00)"
    )
    # Strictly after: a page published at the as-of instant may be used.
    assert _usable(doc, as_of=datetime(2024, 3, 5, 13, 30, tzinfo=UTC)) is None


def test_as_of_rule_applies_before_word_count_and_naive_as_of_is_utc() -> None:
    doc = Document(
        url="https://x.example/",
        canonical_url="https://x.example/",
        ok=True,
        published=datetime(2024, 6, 1, 12, tzinfo=UTC),
        word_count=10,
    )
    assert _usable(doc, as_of=datetime(2024, 6, 1, 11)).startswith("published after as-of")
    assert _usable(doc, as_of=datetime(2024, 6, 1, 13)) == "under 100 words (10)"


def test_failed_fetch_is_not_used_and_says_why() -> None:
    doc = Document(url="u", canonical_url="u", ok=False, error="http 404")
    assert _usable(doc, cfg=FetchConfig(dateless="allow")) == "fetch failed: http 404"


# failures recorded, never raised


def test_huge_page_is_cut_by_byte_cap(server: LocalHTTPServer) -> None:
    server.add("/huge", Route(body=b"<p>" + b"a " * 200_000 + b"</p>"))
    doc = _fetch(server.url("/huge"), max_bytes=50_000)
    assert not doc.ok
    assert doc.error == "too large: over 50000 bytes"
    assert doc.status_code == 200


def test_byte_cap_stops_reading_a_body_of_unknown_length(server: LocalHTTPServer) -> None:
    server.add("/endless", Route(body=b"<p>more text</p>" * 1000, endless=True))
    started = time.monotonic()
    doc = _fetch(server.url("/endless"), max_bytes=100_000)
    assert doc.error == "too large: over 100000 bytes"
    assert time.monotonic() - started < 3


def test_byte_cap_counts_decompressed_bytes(server: LocalHTTPServer) -> None:
    bomb = gzip.compress(b"<p>" + b"0" * 2_000_000 + b"</p>")
    server.add("/bomb", Route(body=bomb, headers={"Content-Encoding": "gzip"}))
    assert len(bomb) < 100_000
    assert _fetch(server.url("/bomb"), max_bytes=100_000).error == "too large: over 100000 bytes"


def test_slow_server_hits_the_page_deadline(server: LocalHTTPServer) -> None:
    server.add("/slow", Route(body=_page_bytes("short.html"), delay_s=5.0))
    started = time.monotonic()
    doc = _fetch(server.url("/slow"), timeout_s=0.5)
    assert doc.error == "timeout after 0.5s"
    assert time.monotonic() - started < 2


def test_dripping_body_hits_the_page_deadline_not_a_per_chunk_timeout(
    server: LocalHTTPServer,
) -> None:
    # Each chunk arrives well within the timeout, but the whole page would take 6 s.
    server.add("/drip", Route(body=b"x" * 60, chunk_size=2, chunk_delay_s=0.2))
    started = time.monotonic()
    doc = _fetch(server.url("/drip"), timeout_s=0.8)
    assert doc.error == "timeout after 0.8s"
    assert time.monotonic() - started < 2


def test_non_html_content_is_refused(server: LocalHTTPServer) -> None:
    doc = _fetch(server.url("/report.pdf"))
    assert not doc.ok
    assert doc.error == "unsupported content type: application/pdf"
    assert doc.content_type == "application/pdf"


@pytest.mark.parametrize("status", [404, 410, 500, 503])
def test_http_error_status_is_recorded(server: LocalHTTPServer, status: int) -> None:
    server.add("/broken", Route(status=status, body=b"<p>error page</p>"))
    doc = _fetch(server.url("/broken"))
    assert not doc.ok
    assert doc.error == f"http {status}"
    assert doc.status_code == status
    assert _usable(doc) == f"fetch failed: http {status}"


def test_missing_static_page_is_http_404(server: LocalHTTPServer) -> None:
    assert _fetch(server.url("/no-such-page.html")).error == "http 404"


def test_connection_refused_is_recorded() -> None:
    with LocalHTTPServer() as gone:
        url = gone.url("/x")
    doc = _fetch(url)
    assert not doc.ok
    assert doc.error is not None and doc.error.startswith("connection failed")


def test_unresolvable_host_is_a_dns_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def fake(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "nowhere.example.com":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    doc = _fetch("https://nowhere.example.com/story", allow_hosts=[])
    assert not doc.ok
    assert doc.error is not None and doc.error.startswith("dns: cannot resolve host nowhere")


# redirects


def test_redirect_chain_is_followed(server: LocalHTTPServer) -> None:
    server.redirect("/a", "/b", status=301)
    server.redirect("/b", server.url("/meta_published.html"), status=307)
    doc = _fetch(server.url("/a"))
    assert doc.ok
    assert doc.url == server.url("/a")
    assert doc.final_url == server.url("/meta_published.html")
    assert doc.canonical_url == canonical_url(server.url("/meta_published.html"))
    assert [r.route_path for r in server.requests] == ["/a", "/b", "/meta_published.html"]


def test_redirect_loop_stops_at_max_redirects(server: LocalHTTPServer) -> None:
    server.redirect("/loop1", "/loop2")
    server.redirect("/loop2", "/loop1")
    doc = _fetch(server.url("/loop1"), max_redirects=3)
    assert doc.error == "too many redirects"
    assert server.hits() == 4  # the first request plus three redirects


def test_malformed_redirect_location_is_recorded_not_raised(server: LocalHTTPServer) -> None:
    server.redirect("/bad", "http://[::1/")
    doc = _fetch(server.url("/bad"))
    assert not doc.ok
    assert doc.error is not None
    assert doc.error.startswith("http error: ")
    assert "location" in doc.error


def test_url_without_scheme_is_refused() -> None:
    assert _fetch("example.com/page").error == "ssrf: refused URL without scheme"


def test_redirect_without_location_is_recorded(server: LocalHTTPServer) -> None:
    server.add("/nowhere", Route(status=302, content_type=None))
    assert _fetch(server.url("/nowhere")).error == "http 302 without location"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "http://localhost:{port}/short.html",
            "ssrf: refused 127.0.0.1 (loopback) for host localhost",
        ),
        ("http://127.0.0.2:{port}/short.html", "ssrf: refused 127.0.0.2 (loopback)"),
        ("http://169.254.169.254/latest/meta-data/", "ssrf: refused 169.254.169.254 (metadata)"),
        ("file:///etc/passwd", "ssrf: refused scheme file"),
    ],
)
def test_redirect_to_internal_target_is_refused(
    server: LocalHTTPServer, target: str, message: str
) -> None:
    server.redirect("/jump", target.format(port=server.port))
    doc = _fetch(server.url("/jump"))
    assert not doc.ok
    assert doc.error == message
    assert [r.route_path for r in server.requests] == ["/jump"]


# SSRF without allowlist


def test_default_config_refuses_the_local_server(server: LocalHTTPServer) -> None:
    assert FetchConfig().allow_hosts == []
    with Fetcher(FetchConfig()) as fetcher:
        doc = fetcher.fetch(server.url("/meta_published.html"))
    assert not doc.ok
    assert doc.error == "ssrf: refused 127.0.0.1 (loopback)"
    assert server.hits() == 0


def test_dns_rebinding_to_loopback_is_refused_at_connect_time(
    monkeypatch: pytest.MonkeyPatch, server: LocalHTTPServer
) -> None:
    real = socket.getaddrinfo
    answers = iter(["93.184.216.34", "127.0.0.1"])

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with Fetcher(FetchConfig()) as fetcher:
        doc = fetcher.fetch(f"http://rebind.example.com:{server.port}/meta_published.html")
    assert doc.error == "ssrf: refused 127.0.0.1 (loopback) for host rebind.example.com"
    assert server.hits() == 0


def test_each_hop_is_checked_even_with_a_caller_supplied_client() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://10.0.0.1/internal"})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    fetcher = Fetcher(FetchConfig(allow_hosts=["news.example"]), client=client)
    doc = fetcher.fetch("https://news.example/story")
    assert doc.error == "ssrf: refused 10.0.0.1 (private)"
    assert seen == ["https://news.example/story"]
    client.close()


# cache


def test_cache_hit_makes_no_second_request(server: LocalHTTPServer) -> None:
    with _fetcher() as fetcher:
        first = fetcher.fetch(server.url("/meta_published.html"))
        second = fetcher.fetch(server.url("/meta_published.html?utm_source=share#top"))
    assert server.hits() == 1
    assert second.ok
    assert second.content_hash == first.content_hash
    assert second.fetched_at == first.fetched_at
    assert second.url == server.url("/meta_published.html?utm_source=share#top")


def test_redirected_url_is_a_cache_hit_too(server: LocalHTTPServer) -> None:
    server.redirect("/go", "/time_element.html")
    with _fetcher() as fetcher:
        fetcher.fetch(server.url("/go"))
        doc = fetcher.fetch(server.url("/go"))
    assert doc.ok
    assert server.hits("/go") == 1
    assert server.hits("/time_element.html") == 1


def test_expired_cache_entry_is_fetched_again(server: LocalHTTPServer) -> None:
    fetcher = Fetcher(FetchConfig(allow_hosts=LOCAL), cache_ttl_s=0)
    fetcher.fetch(server.url("/short.html"))
    fetcher.fetch(server.url("/short.html"))
    fetcher.close()
    assert server.hits() == 2


def test_failures_are_not_cached(server: LocalHTTPServer) -> None:
    calls: list[RecordedRequest] = []

    def flaky(request: RecordedRequest) -> Route:
        calls.append(request)
        if len(calls) == 1:
            return Route(status=503)
        return Route(body=_page_bytes("short.html"))

    server.add("/flaky", flaky)
    with _fetcher() as fetcher:
        assert fetcher.fetch(server.url("/flaky")).error == "http 503"
        assert fetcher.fetch(server.url("/flaky")).ok
    assert len(calls) == 2


def test_snapshots_go_to_the_given_store(server: LocalHTTPServer) -> None:
    store = MemoryDocumentStore()
    with Fetcher(FetchConfig(allow_hosts=LOCAL), store=store) as fetcher:
        doc = fetcher.fetch(server.url("/short.html"))
    assert store.get(doc.canonical_url) == doc
    # A stale snapshot in the store is refetched; a fresh one is served from it.
    store.put(doc.model_copy(update={"fetched_at": datetime.now(UTC) - timedelta(days=2)}))
    with Fetcher(FetchConfig(allow_hosts=LOCAL), store=store) as fetcher:
        fetcher.fetch(server.url("/short.html"))
        fetcher.fetch(server.url("/short.html"))
    assert server.hits() == 2


def test_concurrent_fetches_share_one_fetcher(server: LocalHTTPServer) -> None:
    paths = ["/meta_published.html", "/jsonld_published.html", "/time_element.html", "/short.html"]
    results: dict[str, Document] = {}
    with _fetcher() as fetcher:

        def run(path: str) -> None:
            results[path] = fetcher.fetch(server.url(path))

        threads = [threading.Thread(target=run, args=(p,)) for p in paths * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert all(doc.ok for doc in results.values())
    assert {doc.title for doc in results.values()} == {
        "City council approves new water treatment plant",
        "Study finds no link between the vaccine and hair loss",
        "Drought forces farmers to cut wheat planting",
        "Road closed after landslide",
    }
