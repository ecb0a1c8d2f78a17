"""`factnote claims import --images`: the images reviews carry are fetched (from a local HTTP
server, through the SSRF-guarded fetcher) and remembered in the main database with their
fact-check; without the option nothing is fetched."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.commands.claims import app
from bot.config import Settings
from pipeline.config import FetchConfig, ImagesConfig
from storage.db import Database
from storage.images import SqlImageStore
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.image_samples import encode, photo

runner = CliRunner()


def settings(tmp_path: Path) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp_path / 'factnote.db'}",
        fetch=FetchConfig(allow_hosts=["127.0.0.1"]),
        images=ImagesConfig(embedding=False, ocr=False),
    )


def review_file(tmp_path: Path, image_url: str) -> Path:
    # schema.org ClaimReview with its claim's image (https://schema.org/ClaimReview).
    path = tmp_path / "review.json"
    path.write_text(
        json.dumps(
            {
                "@type": "ClaimReview",
                "url": "https://checkers.example/fact-check/palace",
                "claimReviewed": "This palace burned down last week.",
                "itemReviewed": {"@type": "Claim", "image": image_url},
                "reviewRating": {"alternateName": "False"},
            }
        ),
        encoding="utf-8",
    )
    return path


def test_import_with_images_remembers_each_reviews_image_in_the_main_database(
    tmp_path: Path,
) -> None:
    cfg = settings(tmp_path)
    with LocalHTTPServer() as server:
        body = encode(photo("china.jpg"), "JPEG")
        server.add("/palace.jpg", Route(body=body, content_type="image/jpeg"))
        source = review_file(tmp_path, server.url("/palace.jpg"))
        index = str(tmp_path / "claims.sqlite")
        plain = runner.invoke(app, ["import", str(source), "--index", index], obj=cfg)
        assert plain.exit_code == 0, plain.output
        assert server.hits("/palace.jpg") == 0  # off by default: nothing fetched
        result = runner.invoke(app, ["import", str(source), "--index", index, "--images"], obj=cfg)
        assert server.hits("/palace.jpg") == 1
    assert result.exit_code == 0, result.output
    assert f"{source}: 1 image(s) of its reviews remembered" in result.stdout
    db = Database(cfg.database_url)
    try:
        store = SqlImageStore(db)
        anything = 64  # every stored image is within 64 bits of any hash
        [(seen, _)] = store.near("0" * 16, anything)
        assert seen.fact_check is not None
        assert seen.fact_check["review_url"] == "https://checkers.example/fact-check/palace"
        assert seen.source.endswith("/palace.jpg")
        assert (store.content(seen.sha256) or b"").startswith(b"\xff\xd8\xff")
    finally:
        db.dispose()


def test_an_image_that_cannot_be_read_is_a_failure_line_and_the_review_is_kept(
    tmp_path: Path,
) -> None:
    cfg = settings(tmp_path)
    with LocalHTTPServer() as server:
        server.add("/x.jpg", Route(body=b"<html>gone</html>", content_type="text/html"))
        source = review_file(tmp_path, server.url("/x.jpg"))
        index = str(tmp_path / "claims.sqlite")
        result = runner.invoke(app, ["import", str(source), "--index", index, "--images"], obj=cfg)
    assert result.exit_code == 1
    assert "1 review(s), 1 new or changed" in result.stdout
    assert f"failed: {source}: image of https://checkers.example/fact-check/palace" in (
        result.stderr
    )
