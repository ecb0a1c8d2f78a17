"""`factnote claims import --videos`: the video files reviews carry are fetched (from a local
HTTP server, through the SSRF-guarded fetcher), decoded into keyframes by the budgeted child and
each keyframe remembered in the main database with its fact-check and its time; without the
option nothing is fetched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.commands.claims import app
from bot.config import Settings
from pipeline.config import FetchConfig, ImagesConfig
from storage.db import Database
from storage.images import SqlImageStore
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.video_samples import render_pictures, scene_shots

pytestmark = pytest.mark.process
runner = CliRunner()
REVIEW_URL = "https://checkers.example/fact-check/dam-clip"


def review_file(tmp_path: Path, video_url: str) -> Path:
    # schema.org ClaimReview whose claim appeared as a VideoObject (https://schema.org/Claim,
    # https://schema.org/VideoObject: `contentUrl` is the media file).
    path = tmp_path / "review.json"
    path.write_text(
        json.dumps(
            {
                "@type": "ClaimReview",
                "url": REVIEW_URL,
                "claimReviewed": "A clip shows the dam upstream bursting.",
                "itemReviewed": {
                    "@type": "Claim",
                    "appearance": {"@type": "VideoObject", "contentUrl": video_url},
                },
                "reviewRating": {"alternateName": "False"},
            }
        ),
        encoding="utf-8",
    )
    return path


def test_import_with_videos_remembers_each_keyframe_with_its_time(tmp_path: Path) -> None:
    cfg = Settings(
        database_url=f"sqlite:///{tmp_path / 'factnote.db'}",
        fetch=FetchConfig(allow_hosts=["127.0.0.1"]),
        images=ImagesConfig(embedding=False, ocr=False),
    )
    clip = render_pictures(tmp_path / "clip.mp4", scene_shots(3, ["", "Dam burst", ""]))
    with LocalHTTPServer() as server:
        server.add("/clip.mp4", Route(body=clip.read_bytes(), content_type="video/mp4"))
        url = server.url("/clip.mp4")
        source = review_file(tmp_path, url)
        index = str(tmp_path / "claims.sqlite")
        plain = runner.invoke(app, ["import", str(source), "--index", index, "--images"], obj=cfg)
        assert plain.exit_code == 0, plain.output
        assert server.hits("/clip.mp4") == 0  # images only: the video is not fetched
        result = runner.invoke(app, ["import", str(source), "--index", index, "--videos"], obj=cfg)
        assert server.hits("/clip.mp4") == 1
    assert result.exit_code == 0, result.output
    assert f"{source}: 1 video(s) of its reviews remembered, 3 keyframes" in result.stdout
    db = Database(cfg.database_url)
    try:
        stored = SqlImageStore(db).near("0" * 16, 64)  # every stored picture
    finally:
        db.dispose()
    assert sorted(seen.source for seen, _ in stored) == [f"{url}#t=0", f"{url}#t=2", f"{url}#t=4"]
    assert all((seen.fact_check or {}).get("review_url") == REVIEW_URL for seen, _ in stored)
