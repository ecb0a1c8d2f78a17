"""`factnote check --post-json FILE`: a file that is not a post is a usage error, never a
traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from bot.commands.check import load_post

POST = '{"id": "1", "author": "a", "text": "café", "created_at": "2026-01-01T00:00:00Z"}'


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (POST.encode("latin-1"), "not UTF-8 text"),  # é as the single byte 0xE9
        (b"[" * 100_000, "not a valid post: not JSON: "),
        (b'{"id": "1"}', "not a valid post: missing field(s) author, text, created_at"),
    ],
)
def test_a_post_file_that_cannot_be_read_is_one_line_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, said: str
) -> None:
    path = tmp_path / "post.json"
    path.write_bytes(content)
    with pytest.raises(typer.Exit) as exited:
        load_post(None, path)
    assert exited.value.exit_code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"factnote: error: {path}: {said}")


def test_a_valid_post_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "post.json"
    path.write_text(POST, encoding="utf-8")
    assert load_post(None, path).text == "café"


REPO = Path(__file__).resolve().parents[3]


def summons_file(tmp_path: Path, **fields: object) -> Path:
    """A summons in the local inbox format (adapters/local.py's docstring)."""
    data = {
        "id": "1001",
        "author": "asker",
        "text": "@factnote is this true?",
        "created_at": "2026-11-29T10:00:00Z",
        "parent": None,
        "quoted": None,
        "images": [],
    } | fields
    path = tmp_path / "summons.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def post(ident: str, text: str) -> dict[str, str]:
    return {
        "id": ident,
        "author": f"author_{ident}",
        "text": text,
        "created_at": "2026-11-29T09:00:00Z",
    }


def test_a_summons_file_checks_the_parent_post_it_answers(tmp_path: Path) -> None:
    path = summons_file(tmp_path, parent=post("901", "Lemon water kills the flu."))
    checked = load_post(None, path)
    assert (checked.id, checked.text) == ("901", "Lemon water kills the flu.")


def test_a_summons_file_checks_the_quoted_post_with_the_parent_as_its_context(
    tmp_path: Path,
) -> None:
    path = summons_file(
        tmp_path,
        parent=post("901", "What a thread."),
        quoted=post("902", "Unemployment hit 25% last month."),
    )
    checked = load_post(None, path)
    assert checked.text == "Unemployment hit 25% last month."
    assert checked.quoted is not None and checked.quoted.text == "What a thread."


def test_a_summons_that_answers_no_post_checks_its_own_text_without_the_mention(
    tmp_path: Path,
) -> None:
    path = summons_file(tmp_path, text="@factnote the bridge in Riverton collapsed today")
    assert load_post(None, path).text == "the bridge in Riverton collapsed today"


def test_a_post_that_mentions_another_account_is_checked_as_it_is(tmp_path: Path) -> None:
    path = summons_file(tmp_path, text="@someone_else lemon water kills the flu")
    assert load_post(None, path).text == "@someone_else lemon water kills the flu"


def test_the_summons_is_recognised_by_the_configured_handle(tmp_path: Path) -> None:
    path = summons_file(
        tmp_path, text="@checkbot.example true?", parent=post("901", "Lemon water kills the flu.")
    )
    assert load_post(None, path, ["checkbot.example"]).id == "901"
    assert load_post(None, path).id == "1001"  # not our handle: the post itself


def test_a_summons_file_the_inbox_could_not_read_is_a_bad_parameter(tmp_path: Path) -> None:
    path = summons_file(tmp_path, parent={"id": "901"})
    with pytest.raises(typer.BadParameter, match="not a summons in the inbox format"):
        load_post(None, path)


def test_every_demo_summons_is_checked_for_the_post_it_asks_about() -> None:
    for path in sorted((REPO / "examples/inbox").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        target = data["quoted"] or data["parent"]
        assert load_post(None, path).text == target["text"], path.name
