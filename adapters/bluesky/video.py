"""Which file of a Bluesky video the pipeline reads: the video blob itself, from the author's PDS.

A post's video is the record's `app.bsky.embed.video` `video` blob ("The mp4 video file",
`accept: ["video/mp4"]`, `maxSize` 300,000,000: lexicons/app/bsky/embed/video.json), and the
AppView's `#view` gives only a thumbnail and an HLS `playlist` of the re-encoded stream. Two ways
to its content, and the one taken:

* **The blob, via `com.atproto.sync.getBlob?did=&cid=`** on the author's PDS ("Returns the full
  blob as originally uploaded. Does not require auth; implemented by PDS":
  lexicons/com/atproto/sync/getBlob.json). Chosen: it is one MP4 file, the intake's one fetch
  through the SSRF-guarded fetcher with its byte cap, and the record declares its size, so a
  file over the cap is refused before any fetch, and the fetcher stops reading at the cap if
  the PDS sends more than declared.
* The HLS playlist's segments: a master playlist, a media playlist per rendition, then many
  segment files, each a fetch of its own, reassembled before FFmpeg could read them (or FFmpeg
  fetching them itself, outside the SSRF guard). No declared size to check first. Not taken.

The PDS is the author's DID document's `#atproto_pds` service (atproto_identity's `DidResolver`
and `DidDocument.get_pds_endpoint`): a `did:plc` is looked up in the configured PLC directory.
A `did:web` is not resolved: its document lives on a host the author names, fetched from here
outside the SSRF guard; such a video stays "video not analysed" with a note saying why. The PDS
endpoint itself comes from the author's document too: the pipeline's fetcher, which refuses
private and loopback addresses, is what reaches it. Endpoints are cached for an hour per DID.
Nothing says how long a blob's video runs: the decoder's seconds cap applies after the fetch.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from atproto_client.models.blob_ref import IpldLink
from atproto_identity.did.resolver import DidResolver

from adapters.base import VideoCaps, storable

DEFAULT_PLC = "https://plc.directory"
MP4 = "video/mp4"
# did:plc is "did:plc:" and 24 characters of lowercase base32 (the did:plc method spec): a DID
# that is not one is never put into a URL.
_DID_PLC = re.compile(r"did:plc:[a-z2-7]{24}")
_TTL_S = 3600.0
_MAX_CACHED = 1024


class VideoFiles:
    """Locates the video blob of a post record: `file_of(did, blob)` is its getBlob URL on the
    author's PDS, or None and why not."""

    def __init__(
        self,
        caps: VideoCaps = VideoCaps(),
        *,
        plc_url: str = DEFAULT_PLC,
        timeout_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._caps = caps
        self._resolver = DidResolver(plc_url=plc_url.rstrip("/"), timeout=timeout_s)
        self._clock = clock
        self._pds: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def file_of(self, did: str, blob: Any) -> tuple[str | None, str | None]:
        cid = blob_cid(blob)
        if cid is None:
            return None, "video blob without a readable CID"
        mime = str(getattr(blob, "mime_type", "") or "")
        if mime.lower() != MP4:
            return None, f"video blob {cid} is {storable(mime)[:60] or 'untyped'}, not {MP4}"
        size = getattr(blob, "size", None)
        cap = self._caps.max_bytes
        if cap is not None and isinstance(size, int) and size > cap:
            return None, f"video blob {cid} is {size:,} bytes, over the cap of {cap:,}"
        if not _DID_PLC.fullmatch(did):
            return None, f"video of {storable(did)[:80]}: only did:plc authors' PDS is resolved"
        try:
            pds = self._endpoint(did)
        except Exception as exc:  # the resolver's errors are many and its own: recorded, one line
            return None, f"PDS of {did} not resolved: {type(exc).__name__}: {exc}"[:300]
        if pds is None:
            return None, f"PDS of {did} not resolved: no #atproto_pds service in its DID document"
        query = urlencode({"did": did, "cid": cid})
        return f"{pds.rstrip('/')}/xrpc/com.atproto.sync.getBlob?{query}", None

    def _endpoint(self, did: str) -> str | None:
        now = self._clock()
        cached = self._pds.get(did)
        if cached is not None and now - cached[1] < _TTL_S:
            return cached[0]
        doc = self._resolver.resolve(did)
        if doc is None:
            raise LookupError("not in the PLC directory")
        pds = doc.get_pds_endpoint()
        if pds is None or urlsplit(pds).scheme not in ("https", "http"):
            return None
        self._pds[did] = (pds, now)
        self._pds.move_to_end(did)
        while len(self._pds) > _MAX_CACHED:
            self._pds.popitem(last=False)
        return pds


def blob_cid(blob: Any) -> str | None:
    """The CID of a blob ref as a string, whichever representation the SDK kept."""
    ref = getattr(blob, "ref", None)
    if isinstance(ref, IpldLink):
        return ref.link
    try:
        return str(blob.cid)
    except Exception:  # bytes that are no CID: a record that does not fit the lexicon
        return None
