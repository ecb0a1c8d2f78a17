"""SSRF guard: decide whether a URL may be fetched, and connect only to addresses that were checked.

Every link the bot fetches comes from untrusted posts or search results, so a link must never make
the bot reach its own host, the internal network or a cloud metadata service. Two layers:

* `check_url` refuses non-HTTP schemes, credentials in URLs, odd numeric IPv4 spellings, and any
  host that resolves (via `socket.getaddrinfo`) to a non-public address. The fetcher runs it on the
  first URL and on every redirect hop, which yields precise refusal messages early.
* `guarded_transport` builds an httpx transport whose network backend repeats that check at
  connect time and then opens the TCP connection to one of the very addresses it checked. This
  closes the DNS-rebinding gap (a name that resolves to a public address for the check and to
  127.0.0.1 for the connection), and TLS still uses the real host name for SNI and certificate
  verification because the URL is never rewritten. Environment proxies are disabled, since a proxy
  would make the checked address irrelevant.

Residual risk: pinning lives in the transport. A caller that hands the fetcher its own
`httpx.Client` only gets the per-hop `check_url`, which resolves the name separately from the
connection. The transport also swaps the connection pool that httpx keeps in a private attribute;
if a future httpx changes that, `guarded_transport` raises instead of silently losing the pinning.

`allow_hosts` exempts exact host names or IP strings from the address check. It exists for tests
(a local server on 127.0.0.1) and is empty by default; an allowed name is not even resolved.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Iterable
from typing import Any, Self

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Cloud instance-metadata endpoints (AWS/GCP/Azure/OpenStack, AWS IPv6, Alibaba). They fall in
# refused ranges anyway; naming them makes the refusal message say what was at stake.
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)

_SHARED_V4 = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT
_UNIQUE_LOCAL_V6 = ipaddress.ip_network("fc00::/7")
# Prefixes whose last 32 bits are an IPv4 address the packet ends up at: NAT64 (well-known and
# local-use) and IPv4-translated (RFC 2765). Python calls some of them global, so unwrap them.
_EMBEDDING_V6 = (
    ipaddress.ip_network("64:ff9b::/96"),
    ipaddress.ip_network("64:ff9b:1::/48"),
    ipaddress.ip_network("::ffff:0:0:0/96"),
)


class SSRFError(Exception):
    """A URL or address the fetcher must not connect to. The message says which and why."""


class UnresolvableHostError(SSRFError):
    """The host name did not resolve. A subclass so that callers catching SSRFError fail closed,
    while the fetcher can still report it as a DNS failure rather than a refusal."""


def address_problem(ip: IPAddress) -> str | None:
    """Why `ip` must not be contacted (e.g. "loopback"), or None for a public address."""
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is not None:
            inner = address_problem(embedded)
            return None if inner is None else f"{inner}, embedded {embedded}"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_V4:
        return "shared"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _UNIQUE_LOCAL_V6:
            return "unique-local"
        if ip.is_site_local:
            return "site-local"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "non-global"
    return None


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    for net in _EMBEDDING_V6:
        if ip in net:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _normalise_allow(allow_hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(h.strip().lower().strip("[]").rstrip(".") for h in allow_hosts if h.strip())


def _odd_ipv4_spelling(host: str) -> str | None:
    """The dotted-quad that `host` denotes if it is a numeric IPv4 spelling other than the
    canonical one (2130706433, 0177.0.0.1, 0x7f.1, 127.1); such spellings only serve to slip past
    filters, so they are refused whatever address they denote."""
    if not host or any(c not in "0123456789abcdefx." for c in host):
        return None
    try:
        packed = socket.inet_aton(host)
    except OSError:
        return None
    dotted = socket.inet_ntoa(packed)
    return None if dotted == host else dotted


def check_host(host: str, port: int, allow_hosts: Collection[str] = ()) -> list[IPAddress]:
    """Resolve `host` and return its addresses if every one of them is public.

    Raises SSRFError naming the first refused address, or UnresolvableHostError. Allowed hosts
    are returned unresolved: their IP if `host` is an IP literal, else an empty list.
    """
    name = host.strip().lower().strip("[]").rstrip(".")
    if not name:
        raise SSRFError("refused URL without a host")
    literal: IPAddress | None
    try:
        literal = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        literal = None
    if name in _normalise_allow(allow_hosts):
        return [literal] if literal is not None else []
    odd = _odd_ipv4_spelling(name)
    if odd is not None:
        raise SSRFError(f"refused {host} (non-canonical IPv4 spelling of {odd})")
    if literal is not None:
        problem = address_problem(literal)
        if problem is not None:
            raise SSRFError(f"refused {literal} ({problem})")
        return [literal]
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnresolvableHostError(f"cannot resolve host {host}: {exc}") from exc
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        # Drop an IPv6 zone id ("fe80::1%eth0"); the address itself is what gets classified.
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        problem = address_problem(ip)
        if problem is not None:
            raise SSRFError(f"refused {ip} ({problem}) for host {host}")
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise UnresolvableHostError(f"cannot resolve host {host}: no IP addresses")
    return addresses


def check_url(url: str, allow_hosts: Collection[str] = ()) -> list[IPAddress]:
    """Refuse `url` unless it is plain http(s) to a public host; return the checked addresses.

    The URL is parsed with httpx, the same parser the client uses, so that the guard and the
    connection cannot disagree about which host a tricky URL names.
    """
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise SSRFError(f"refused invalid URL: {exc}") from exc
    scheme = parsed.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise SSRFError(f"refused scheme {scheme}" if scheme else "refused URL without scheme")
    if parsed.userinfo:
        raise SSRFError("refused URL with credentials")
    try:
        host = parsed.raw_host.decode("ascii")
    except UnicodeDecodeError as exc:
        raise SSRFError(f"refused invalid host: {exc}") from exc
    port = parsed.port or (443 if scheme == "https" else 80)
    return check_host(host, port, allow_hosts)


def check_hop(
    url: str, allow_hosts: Collection[str], refused: Callable[[str, bool], Exception]
) -> None:
    """`check_url` on one hop of a request, a refusal raised as the caller's own error,
    `refused(reason, transient)`: "dns: ..." for a host that does not resolve (transient: it
    may resolve later), else "ssrf: ..."."""
    try:
        check_url(url, allow_hosts)
    except UnresolvableHostError as exc:
        raise refused(f"dns: {exc}", True) from exc
    except SSRFError as exc:
        raise refused(f"ssrf: {exc}", False) from exc


class _GuardedBackend(httpcore.SyncBackend):
    """Connects only to addresses that passed `check_host`, resolved once per connection."""

    def __init__(self, allow_hosts: Collection[str]) -> None:
        self._allow_hosts = _normalise_allow(allow_hosts)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = check_host(host, port, self._allow_hosts)
        if not addresses:  # an allowed host name: the test setup vouches for it
            return super().connect_tcp(host, port, timeout, local_address, socket_options)
        last_error: Exception | None = None
        for ip in addresses:
            try:
                return super().connect_tcp(str(ip), port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error


def guarded_transport(allow_hosts: Collection[str] = ()) -> httpx.HTTPTransport:
    """An httpx transport that re-checks and pins the address of every new connection."""
    ssl_context = httpx.create_ssl_context()
    transport = httpx.HTTPTransport(verify=ssl_context, trust_env=False)
    if not isinstance(getattr(transport, "_pool", None), httpcore.ConnectionPool):
        raise RuntimeError("httpx internals changed: cannot install the SSRF-pinning backend")
    transport._pool.close()
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        network_backend=_GuardedBackend(allow_hosts),
    )
    return transport


class GuardedHttp:
    """Owner of one HTTP client whose every connection goes through the SSRF guard, with
    redirects left to the caller (each hop is checked again). A client passed in (tests, a
    shared pool) stays the caller's to close."""

    def __init__(self, client: httpx.Client | None, allow_hosts: Collection[str] = ()) -> None:
        self._owns_client = client is None
        self._client = client or httpx.Client(
            transport=guarded_transport(allow_hosts), follow_redirects=False, trust_env=False
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_client:
            self._client.close()
