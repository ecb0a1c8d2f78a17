"""`factnote check --post-json FILE`: a file that is not a post is a usage error, never a
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from bot.commands.check import load_post

POST = '{"id": "1", "author": "a", "text": "café", "created_at": "2026-01-01T00:00:00Z"}'


@pytest.mark.parametrize(
    "content",
    [
        POST.encode("latin-1"),  # é as the single byte 0xE9: not UTF-8
        b"[" * 100_000,
        b'{"id": "1"}',
    ],
)
def test_a_post_file_that_cannot_be_read_is_a_bad_parameter(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "post.json"
    path.write_bytes(content)
    with pytest.raises(typer.BadParameter, match="not a valid post"):
        load_post(None, path)


def test_a_valid_post_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "post.json"
    path.write_text(POST, encoding="utf-8")
    assert load_post(None, path).text == "café"
