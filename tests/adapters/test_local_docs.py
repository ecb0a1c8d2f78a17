"""docs/inbox.md cannot drift from the local adapter: its summons example and its .jsonl lines
are read by the adapter as documented, and the example's image is read from the inbox folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from adapters.base import TargetStatus
from adapters.local import LocalAdapter
from bot.config import load_settings
from pipeline.config import FetchConfig
from pipeline.images.intake import take_in
from pipeline.web.fetch import Fetcher
from testing.image_samples import encode, sentence

DOC = Path(__file__).resolve().parents[2] / "docs" / "inbox.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)


def test_the_documented_summons_is_read_and_its_image_found_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "screenshots").mkdir(parents=True)
    (inbox / "1004.json").write_text(blocks("json")[0], encoding="utf-8")
    (inbox / "screenshots" / "mast.png").write_bytes(encode(sentence("dead birds"), "PNG"))
    (summons,) = LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons
    assert (summons.id, summons.target_status) == ("1004", TargetStatus.OK)
    assert summons.target is not None and summons.target.id == "904"
    assert [m.url for m in summons.target.media] == ["screenshots/mast.png"]
    # The settings' images folder follows the inbox; the name is read there from anywhere.
    for name in list(os.environ):
        if name.upper().startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "factnote.toml").write_text(f'[local]\ninbox = "{inbox}"\n', encoding="utf-8")
    images = load_settings("factnote.toml").images
    monkeypatch.chdir("/")
    read = take_in(summons.target.media[0].url, Fetcher(FetchConfig()), images)
    assert read.format == "PNG"


def test_the_documented_jsonl_lines_are_two_summons(tmp_path: Path) -> None:
    (lines,) = blocks("jsonl")
    inbox = tmp_path / "inbox.jsonl"
    inbox.write_text(lines, encoding="utf-8")
    read = LocalAdapter(inbox, tmp_path / "outbox.jsonl").fetch_summons(None).summons
    assert [(s.id, s.target_status) for s in read] == [
        ("2001", TargetStatus.OK),
        ("2002", TargetStatus.SELF),
    ]
