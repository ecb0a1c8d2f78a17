"""The check's own deadline (`Checker(deadline_s=...)`, the bot's `runtime.check_deadline_s`):
whatever the run is blocked in, the checker answers `failed` on time, naming the stage (issue
33). The stall here is a search provider dripping its answer, on loopback (testing/fakes), shaped
after SearXNG's JSON API as in tests/pipeline/search/test_deadlines.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pipeline.check import Checker
from pipeline.config import CredibilityConfig, PipelineConfig, SearchConfig
from pipeline.post.describe import detect_language
from pipeline.records import DecisionStatus
from pipeline.search.searxng import SearxngSearch
from pipeline.search.tiered import TieredSearch
from pipeline.sources.credibility import PublisherTable
from testing import indexes
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.scenarios import POST, TIERS, build_index

# The helper thread's wake-up on a loaded test machine; the search drips a byte every 0.5 s
# and has 30 s of its own, so only the check's deadline can end this run on time.
MARGIN_S = 0.5


def test_a_stalled_stage_ends_the_check_failed_at_its_deadline(
    http_server: LocalHTTPServer, tmp_path: Path
) -> None:
    answer = json.dumps({"results": [{"url": "https://www.cdc.gov/flu/", "title": "Flu"}]})
    http_server.add(
        "/searx/search",
        Route(body=answer, content_type="application/json", chunk_size=1, chunk_delay_s=0.5),
    )
    cfg = PipelineConfig(credibility=CredibilityConfig(overrides=TIERS))
    search_cfg = SearchConfig(searxng_url=http_server.url("/searx"), timeout_s=30.0)
    search = TieredSearch([SearxngSearch(search_cfg)], PublisherTable.from_config(cfg.credibility))
    shared = indexes.build_parts(
        cfg, index_path=build_index(tmp_path / "index.sqlite"), search=search
    )
    detect_language(POST)  # loads its model (seconds, once a process), so the run gets to research
    try:
        t0 = time.monotonic()
        decision = Checker(shared, deadline_s=1.0).check(POST)
        elapsed = time.monotonic() - t0
    finally:
        shared.close()
    assert elapsed < 1.0 + MARGIN_S
    assert decision.status is DecisionStatus.FAILED
    assert (
        decision.error
        == "DeadlineExceeded in research: deadline: check exceeded 1 s during research"
    )
    assert decision.reasons == ["technical failure in research"]
