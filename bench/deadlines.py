"""Issue 33's reproductions, measured: how long a remote call that drips lasts against its
total deadline, and what a hostile progressive JPEG costs with the decode budget.

* An LLM endpoint sending one byte every 5 s, `llm.timeout_s = 10` (before: still waiting at
  150 s): the call's seconds.
* A search provider dripping every 2 s, `search.timeout_s = 5` (before: 240 s).
* A check whose LLM drips with `llm.timeout_s = 60` and `runtime.check_deadline_s = 10`.
* A ~190 KB progressive JPEG repeating one small scan: refused by the scan count (seconds), and,
  with that check lifted, by the 5 s CPU budget of the decode child (seconds of wall time);
  the CPU seconds per repeated scan measured in-process on a few hundred repeats.

Every server is a fake on loopback (testing/fakes).
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from pipeline.check import Checker
from pipeline.config import CredibilityConfig, ImagesConfig, PipelineConfig, SearchConfig
from pipeline.images.intake import ImageUnreadable, decode, jpeg_scans
from pipeline.llm.client import CallLedger, LLMClient, LLMError
from pipeline.search.base import SearchError
from pipeline.search.searxng import SearxngSearch
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM, Reply
from testing.image_samples import repeated_scan_jpeg
from testing.indexes import build_parts
from testing.scenarios import ANALYSIS, POST, TIERS, build_index

Log = Callable[[str], None]


def _timed(fn: Callable[[], object]) -> float:
    start = time.monotonic()
    # The failure is the expected outcome; only how long it took to come is measured.
    with contextlib.suppress(LLMError, SearchError, ImageUnreadable):
        fn()
    return time.monotonic() - start


def _llm(log: Log) -> dict[str, float]:
    with FakeLLM() as fake:
        fake.script("analyze", Reply.dripping(ANALYSIS, every_s=5.0))
        client = LLMClient(fake.config(timeout_s=10.0))
        seconds = _timed(lambda: client.text("analyze", system="s", user="u", ledger=CallLedger()))
        log(f"dripping LLM (a byte every 5 s), llm.timeout_s=10: ended after {seconds:.2f} s")
        cfg = PipelineConfig(credibility=CredibilityConfig(overrides=TIERS))
        cfg.llm = fake.config(timeout_s=60.0)
        with tempfile.TemporaryDirectory() as tmp:
            shared = build_parts(cfg, index_path=build_index(Path(tmp) / "index.sqlite"))
            try:
                start = time.monotonic()
                decision = Checker(shared, deadline_s=10.0).check(POST)
                check_s = time.monotonic() - start
            finally:
                shared.close()
        log(f"check_deadline_s=10, llm.timeout_s=60: {decision.status.value} after {check_s:.2f} s")
        log(f"  {decision.error}")
    return {"llm_timeout_10_s": seconds, "check_deadline_10_s": check_s}


def _search(log: Log) -> dict[str, float]:
    with LocalHTTPServer() as server:
        body = json.dumps({"results": [{"url": "https://www.cdc.gov/", "title": "CDC"}]})
        server.add(
            "/searx/search",
            Route(body=body, content_type="application/json", chunk_size=1, chunk_delay_s=2.0),
        )
        provider = SearxngSearch(SearchConfig(searxng_url=server.url("/searx"), timeout_s=5.0))
        seconds = _timed(lambda: provider.search("measles", limit=3))
    log(f"dripping search (a byte every 2 s), search.timeout_s=5: ended after {seconds:.2f} s")
    return {"search_timeout_5_s": seconds}


def _jpeg(log: Log) -> dict[str, float]:
    hostile = repeated_scan_jpeg(4000, side=4000)
    scans = jpeg_scans(hostile)
    log(f"hostile JPEG: {len(hostile) / 1000:.0f} KB, {scans} scans")
    refused = _timed(lambda: decode(hostile, ImagesConfig()))
    budget = ImagesConfig(max_jpeg_scans=10**6, decode_cpu_s=5.0)
    bounded = _timed(lambda: decode(hostile, budget))
    log(f"refused by the scan count in {refused:.3f} s; by the 5 s CPU budget in {bounded:.2f} s")
    sample = repeated_scan_jpeg(300, side=4000)
    start = time.process_time()
    with Image.open(io.BytesIO(sample)) as opened:
        opened.draft("RGB", (2048, 2048))
        opened.load()
    per_scan = (time.process_time() - start) / 300
    log(f"in-process CPU per repeated scan: {per_scan * 1000:.2f} ms")
    return {
        "jpeg_kb": len(hostile) / 1000,
        "jpeg_scan_check_s": refused,
        "jpeg_cpu_budget_5_s": bounded,
        "jpeg_cpu_ms_per_scan": per_scan * 1000,
        "jpeg_unbounded_estimate_s": per_scan * scans,
    }


def run(log: Log = print) -> dict[str, float]:
    return {**_llm(log), **_search(log), **_jpeg(log)}


if __name__ == "__main__":
    print(run())
