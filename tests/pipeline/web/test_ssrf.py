"""The SSRF guard refuses every non-public destination and pins connections to checked addresses."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pipeline.web.ssrf import (
    SSRFError,
    UnresolvableHostError,
    address_problem,
    check_url,
    guarded_transport,
)
from testing.fakes.http_server import LocalHTTPServer
from tests.pages import FIXTURE_PAGES

_real_getaddrinfo = socket.getaddrinfo


def _fake_dns(
    monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str] | Callable[[], list[str]]]
) -> list[str]:
    """Answer getaddrinfo for the names in `table`; everything else goes to the real resolver.
    Returns the list of names looked up, in order."""
    lookups: list[str] = []

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name in table:
            lookups.append(name)
            entry = table[name]
            addresses = entry() if callable(entry) else entry
            if not addresses:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            out = []
            for addr in addresses:
                if ":" in addr:
                    out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (addr, port, 0, 0)))
                else:
                    out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (addr, port)))
            return out
        return _real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return lookups


@pytest.fixture
def pages_server() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer(root=FIXTURE_PAGES) as server:
        yield server


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1/", "refused 127.0.0.1 (loopback)"),
        ("http://10.0.0.5/admin", "refused 10.0.0.5 (private)"),
        ("http://172.16.0.1/", "refused 172.16.0.1 (private)"),
        ("http://192.168.1.1/", "refused 192.168.1.1 (private)"),
        ("http://169.254.169.254/latest/meta-data/", "refused 169.254.169.254 (metadata)"),
        ("http://100.100.100.200/", "refused 100.100.100.200 (metadata)"),
        ("http://[fd00:ec2::254]/", "refused fd00:ec2::254 (metadata)"),
        ("http://100.64.1.2/", "refused 100.64.1.2 (shared)"),
        ("http://[::1]:8080/", "refused ::1 (loopback)"),
        ("http://[::ffff:127.0.0.1]/", "(loopback, embedded 127.0.0.1)"),
        ("http://[fe80::1]/", "(link-local)"),
        ("http://[fc00::5]/", "(unique-local)"),
        ("http://0.0.0.0/", "refused 0.0.0.0 (unspecified)"),
        ("https://224.0.0.1/", "(multicast)"),
        ("http://2130706433/", "non-canonical IPv4 spelling of 127.0.0.1"),
        ("http://0x7f.1/", "non-canonical IPv4 spelling of 127.0.0.1"),
        ("http://127.1/", "non-canonical IPv4 spelling of 127.0.0.1"),
        # Odd spellings are refused even when they denote a public address.
        ("http://134744072/", "non-canonical IPv4 spelling of 8.8.8.8"),
        ("file:///etc/passwd", "refused scheme file"),
        ("ftp://ftp.example.org/file.txt", "refused scheme ftp"),
        ("gopher://example.org:70/", "refused scheme gopher"),
        ("data:text/html,<b>hi</b>", "refused scheme data"),
        ("javascript:alert(1)", "refused scheme javascript"),
        ("http://example.org\\@127.0.0.1/", "refused URL with credentials"),
        ("http://user:secret@example.org/", "refused URL with credentials"),
        ("https://admin@93.184.216.34/", "refused URL with credentials"),
    ],
)
def test_check_url_refuses_non_public_destinations(url: str, expected: str) -> None:
    with pytest.raises(SSRFError) as caught:
        check_url(url)
    assert expected in str(caught.value)


def test_check_url_refuses_octal_ipv4_spelling() -> None:
    # httpx itself rejects this spelling; the guard must refuse it either way.
    with pytest.raises(SSRFError, match=r"0177\.0\.0\.1"):
        check_url("http://0177.0.0.1/")


def test_check_url_accepts_public_ip_literal() -> None:
    assert check_url("https://93.184.216.34/page") == [ipaddress.ip_address("93.184.216.34")]


def test_public_looking_name_resolving_to_loopback_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_dns(monkeypatch, {"news.example.com": ["127.0.0.1"]})
    with pytest.raises(SSRFError, match=r"refused 127\.0\.0\.1 \(loopback\) for host news"):
        check_url("https://news.example.com/story")


def test_name_is_refused_if_any_resolved_address_is_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_dns(monkeypatch, {"mixed.example.com": ["93.184.216.34", "10.1.2.3"]})
    with pytest.raises(SSRFError, match=r"10\.1\.2\.3 \(private\)"):
        check_url("http://mixed.example.com/")


def test_name_resolving_to_public_addresses_returns_them(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_dns(monkeypatch, {"ok.example.com": ["93.184.216.34", "2606:2800:220:1::1"]})
    assert [str(ip) for ip in check_url("https://ok.example.com/a?b=c")] == [
        "93.184.216.34",
        "2606:2800:220:1::1",
    ]


def test_unresolvable_name_is_a_distinct_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_dns(monkeypatch, {"nowhere.example.com": []})
    with pytest.raises(UnresolvableHostError, match="cannot resolve host nowhere"):
        check_url("http://nowhere.example.com/")


def test_allow_hosts_bypasses_only_the_exact_host(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_url("http://127.0.0.1:8000/x", ["127.0.0.1"]) == [
        ipaddress.ip_address("127.0.0.1")
    ]
    with pytest.raises(SSRFError, match=r"127\.0\.0\.2"):
        check_url("http://127.0.0.2:8000/x", ["127.0.0.1"])
    with pytest.raises(SSRFError, match="loopback"):
        check_url("http://localhost:8000/x", ["127.0.0.1"])


def test_allowed_host_name_is_not_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    lookups = _fake_dns(monkeypatch, {"fixture.test": ["127.0.0.1"]})
    assert check_url("http://fixture.test/page", ["fixture.test"]) == []
    assert lookups == []


def test_allow_hosts_does_not_allow_other_schemes_or_credentials() -> None:
    with pytest.raises(SSRFError, match="scheme ftp"):
        check_url("ftp://127.0.0.1/", ["127.0.0.1"])
    with pytest.raises(SSRFError, match="credentials"):
        check_url("http://u:p@127.0.0.1/", ["127.0.0.1"])


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("8.8.8.8", None),
        ("2001:4860:4860::8888", None),
        ("100.64.0.1", "shared"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("64:ff9b::7f00:1", "loopback, embedded 127.0.0.1"),
        ("64:ff9b::808:808", None),
        ("::ffff:0:a00:1", "private, embedded 10.0.0.1"),
        ("2002:c0a8:101::", "private, embedded 192.168.1.1"),
        ("::ffff:169.254.169.254", "metadata, embedded 169.254.169.254"),
    ],
)
def test_address_problem_classifies_addresses(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == problem


def test_guarded_transport_refuses_loopback_at_connect_time(
    pages_server: LocalHTTPServer,
) -> None:
    with httpx.Client(transport=guarded_transport()) as client, pytest.raises(SSRFError):
        client.get(pages_server.url("/short.html"))
    assert pages_server.hits() == 0


def test_guarded_transport_connects_to_allowed_host(pages_server: LocalHTTPServer) -> None:
    with httpx.Client(transport=guarded_transport(["127.0.0.1"])) as client:
        response = client.get(pages_server.url("/short.html"))
    assert response.status_code == 200
    assert "Road closed after landslide" in response.text


def test_guarded_transport_pins_the_checked_address_against_rebinding(
    monkeypatch: pytest.MonkeyPatch, pages_server: LocalHTTPServer
) -> None:
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    lookups = _fake_dns(monkeypatch, {"rebind.example.com": lambda: next(answers)})
    url = f"http://rebind.example.com:{pages_server.port}/short.html"
    check_url(url)  # the first answer is public, so a check-then-connect guard would pass
    with (
        httpx.Client(transport=guarded_transport()) as client,
        pytest.raises(SSRFError, match=r"127\.0\.0\.1 \(loopback\)"),
    ):
        client.get(url)
    assert lookups == ["rebind.example.com", "rebind.example.com"]
    assert pages_server.hits() == 0
