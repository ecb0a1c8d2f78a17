"""The session's Bluesky network, and the bot's account on it.

Started once per test session (it takes ~40-90 s): a throwaway PostgreSQL cluster
(tests/postgres.py), a Redis on a free loopback port, and `harness/net.mjs` on the Node 22 that
tools/ensure-bluesky-net.sh installed. When any of it is missing the tests fail with the reason,
never skip, so a green run means they ran against Bluesky's own server code."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.bluesky.bot import Bot
from tests.e2e.bluesky.network import (
    Network,
    User,
    installed_network,
    redis_server,
    start_network,
)
from tests.postgres import Cluster

COSTS: dict[str, float] = {}


@pytest.fixture(scope="session")
def bluesky_net(postgres_cluster: Cluster) -> Iterator[Network]:
    started = time.monotonic()
    net_dir = installed_network()
    COSTS["ensure_s"] = time.monotonic() - started
    workdir = Path(tempfile.mkdtemp(prefix="factnote-bsky-"))
    pg_url = f"postgresql://{postgres_cluster.user}@{postgres_cluster.host}:{postgres_cluster.port}/postgres"
    with redis_server(workdir) as redis_host, start_network(net_dir, pg_url, redis_host) as net:
        COSTS["network_start_s"] = net.timings["start_s"]
        yield net


@pytest.fixture(scope="session")
def bot_user(bluesky_net: Network) -> User:
    return User(bluesky_net, "factnote")


@pytest.fixture(scope="session")
def asker(bluesky_net: Network) -> User:
    return User(bluesky_net, "asker")


@pytest.fixture(scope="session")
def poster(bluesky_net: Network) -> User:
    """Writes the posts the asker asks about."""
    return User(bluesky_net, "poster")


@pytest.fixture(scope="session")
def bot(bluesky_net: Network, bot_user: User, tmp_path_factory: pytest.TempPathFactory) -> Bot:
    """The deployment the cases share (one database, one session file), in live mode."""
    deployed = Bot(bluesky_net, tmp_path_factory.mktemp("bot"), bot_user.handle, bot_user.password)
    deployed.seed_claims()
    return deployed
