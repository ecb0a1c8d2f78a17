"""A post's video is read from its blob on the author's PDS (adapters/bluesky/video.py): the
record's `app.bsky.embed.video` `video` blob (lexicons/app/bsky/embed/video.json: blob, accept
video/mp4, maxSize 300,000,000) fetched by `com.atproto.sync.getBlob?did=&cid=`
(lexicons/com/atproto/sync/getBlob.json: "Returns the full blob as originally uploaded. Does not
require auth; implemented by PDS"), the PDS named by the author's DID document.

The post is tests/fixtures/bluesky/{notifications,thread_quinn}_video.json (the shapes of
thread_kim_video.json, SOURCES.md), the PDS the in-process fake of helpers.py, and the PLC
directory a loopback HTTP server answering `GET /:did` with the DID document, shaped after the
did:plc method (did-method-plc README, "DID Resolution": the W3C document with `alsoKnownAs`
at:// handles, `verificationMethod` Multikey `#atproto`, `service` `#atproto_pds` of type
`AtprotoPersonalDataServer`) and atproto's DID spec (atproto.com/specs/did), as
atproto_identity's `DidPlcResolver` reads it (404: no such DID).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from atproto import models
from atproto_client.models.blob_ref import BlobRef, IpldLink
from atproto_client.models.utils import get_or_create

from adapters.base import MediaRef, VideoCaps
from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.video import VideoFiles
from adapters.bluesky.views import post_from_view
from bot.requests.to_pipeline import to_post
from testing.fakes.http_server import LocalHTTPServer, Route
from tests.adapters.bluesky.helpers import FIXTURES, FakePDS

QUINN = "did:plc:quinnv2de3oc4ab5yz6xw7ts"
POST = f"at://{QUINN}/app.bsky.feed.post/3lquinnvideo2"
CID = "bafkreihwihm6kpd6zuwhhlro75p5qks5qtrcu55jp3gddbv7dcj3pt4asq"
QUINN_PDS = "https://morel.us-east.host.bsky.network"
BLOB_URL = (
    f"{QUINN_PDS}/xrpc/com.atproto.sync.getBlob?did=did%3Aplc%3Aquinnv2de3oc4ab5yz6xw7ts&cid={CID}"
)


def did_document(did: str, pds: str) -> dict[str, Any]:
    return {
        "@context": [
            "https://www.w3.org/ns/did/v1",
            "https://w3id.org/security/multikey/v1",
            "https://w3id.org/security/suites/secp256k1-2019/v1",
        ],
        "id": did,
        "alsoKnownAs": ["at://quinn.bsky.social"],
        "verificationMethod": [
            {
                "id": f"{did}#atproto",
                "type": "Multikey",
                "controller": did,
                "publicKeyMultibase": "zQ3shXjHeiBuRCKmM36cuYnm7YEMzhGnCmCyW92sRJ9pribSF",
            }
        ],
        "service": [
            {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": pds}
        ],
    }


@pytest.fixture
def plc() -> Iterator[LocalHTTPServer]:
    with LocalHTTPServer() as server:
        body = json.dumps(did_document(QUINN, QUINN_PDS))
        server.add(f"/{QUINN}", Route(body=body, content_type="application/did+ld+json"))
        yield server


def clip(adapter: BlueskyAdapter, pds: FakePDS) -> MediaRef:
    pds.notifications_file = "notifications_video.json"
    [summons] = adapter.fetch_summons("2026-03-01T10:30:00.000Z").summons
    assert summons.id == POST and summons.target is not None
    [media] = summons.target.media
    return media


def adapter_target(adapter: BlueskyAdapter, pds: FakePDS) -> Any:
    [summons] = adapter.fetch_summons("2026-03-01T10:30:00.000Z").summons
    return summons.target


def test_a_video_is_its_blob_on_the_authors_pds_named_by_the_plc_directory(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, plc: LocalHTTPServer
) -> None:
    adapter = make_adapter(video_caps=VideoCaps(max_bytes=50_000_000), plc_url=plc.base_url)
    video = clip(adapter, pds)

    assert video.kind == "video" and video.note is None
    assert video.video_url == BLOB_URL
    assert parse_qs(urlsplit(BLOB_URL).query) == {"did": [QUINN], "cid": [CID]}
    # The thumbnail stays what a person is shown; the pipeline reads the blob.
    assert video.url.endswith(f"/{CID}/thumbnail.jpg")
    assert [v.source for v in to_post(adapter_target(adapter, pds), "bluesky").videos] == [BLOB_URL]
    assert plc.hits(f"/{QUINN}") == 1  # the second read came from the cache


def test_a_blob_declared_over_the_byte_cap_is_not_located_and_says_why(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, plc: LocalHTTPServer
) -> None:
    adapter = make_adapter(video_caps=VideoCaps(max_bytes=1_000_000), plc_url=plc.base_url)
    video = clip(adapter, pds)

    assert video.video_url is None
    assert video.note == f"video blob {CID} is 4,812,345 bytes, over the cap of 1,000,000"
    assert plc.hits() == 0  # refused before any lookup


def test_an_author_the_plc_directory_does_not_know_leaves_the_video_unread_with_why(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS
) -> None:
    with LocalHTTPServer() as empty:
        adapter = make_adapter(video_caps=VideoCaps(), plc_url=empty.base_url)
        video = clip(adapter, pds)

    assert video.video_url is None
    assert video.note == f"PDS of {QUINN} not resolved: LookupError: not in the PLC directory"


def test_without_video_caps_a_video_is_recorded_not_located(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    video = clip(adapter, pds)

    assert (video.kind, video.video_url, video.note) == ("video", None, None)


def blob(mime: str = "video/mp4", size: int = 1000) -> BlobRef:
    return BlobRef(mime_type=mime, size=size, ref=IpldLink(link=CID))


def test_a_did_web_author_is_not_resolved_from_here() -> None:
    files = VideoFiles(plc_url="http://127.0.0.1:9")
    url, note = files.file_of("did:web:videos.example.com", blob())

    assert url is None
    assert note == "video of did:web:videos.example.com: only did:plc authors' PDS is resolved"


def test_a_blob_that_is_not_mp4_is_not_located() -> None:
    url, note = VideoFiles(plc_url="http://127.0.0.1:9").file_of(QUINN, blob("video/quicktime"))

    assert url is None
    assert note == f"video blob {CID} is video/quicktime, not video/mp4"


def quote_with_video() -> dict[str, Any]:
    """Quinn's post as a quote with a video beside it: `app.bsky.embed.recordWithMedia`, whose
    `media` may be an `app.bsky.embed.video` (lexicons/app/bsky/embed/recordWithMedia.json; its
    view's `media` the `app.bsky.embed.video#view`)."""
    view = json.loads((FIXTURES / "thread_quinn_video.json").read_text())["thread"]["post"]
    quoted = {"uri": f"at://{QUINN}/app.bsky.feed.post/3lquinnorig22", "cid": "bafyreiquoted"}
    view["record"]["embed"] = {
        "$type": "app.bsky.embed.recordWithMedia",
        "record": {"$type": "app.bsky.embed.record", "record": quoted},
        "media": view["record"]["embed"],
    }
    view["embed"] = {
        "$type": "app.bsky.embed.recordWithMedia#view",
        "record": {
            "$type": "app.bsky.embed.record#view",
            "record": {
                "$type": "app.bsky.embed.record#viewNotFound",
                "uri": quoted["uri"],
                "notFound": True,
            },
        },
        "media": view["embed"],
    }
    return view


def test_a_video_beside_a_quoted_post_is_located_too(plc: LocalHTTPServer) -> None:
    view = get_or_create(quote_with_video(), models.AppBskyFeedDefs.PostView)
    files = VideoFiles(VideoCaps(max_bytes=50_000_000), plc_url=plc.base_url)

    post = post_from_view(view, lambda author: False, files.file_of)

    [video] = post.media
    assert (video.kind, video.video_url, video.note) == ("video", BLOB_URL, None)
