"""`factnote guard` as a command: exit codes, JSON shape and the readable output."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from bot.commands.guard import command

app = typer.Typer()
app.command()(command)
runner = CliRunner()
EVIDENCE = "https://www.who.int/news-room/fact-sheets/detail/measles"


def test_valid_text_exits_zero_with_the_json_report() -> None:
    text = "Measles vaccines do not cause autism: who.int/news-room/fact-sheets/detail/measles"
    result = runner.invoke(app, [text, "--evidence-url", EVIDENCE, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report == {
        "valid": True,
        "length": 38 + 23,
        "limit": 280,
        "problems": [],
        "urls": ["who.int/news-room/fact-sheets/detail/measles"],
    }


def test_invalid_text_exits_one_and_lists_problems() -> None:
    result = runner.invoke(app, ["@bob see https://evil.example/x", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert set(report) == {"valid", "length", "limit", "problems", "urls"}
    assert report["valid"] is False
    assert report["problems"] == [
        "url_not_evidence: https://evil.example/x",
        "mentions_user: @bob",
    ]


def test_platform_option_switches_the_counting() -> None:
    short = "https://who.int/m"
    text = "a" * 266 + " " + short  # 290 on X (a URL weighs 23), 284 graphemes on Bluesky
    assert runner.invoke(app, [text, "-e", short, "--json"]).exit_code == 1
    result = runner.invoke(app, [text, "-e", short, "--platform", "bluesky", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["limit"] == 300
    notes = runner.invoke(app, ["no link here", "-p", "notes", "--json"])
    assert json.loads(notes.stdout)["problems"] == ["no_source"]


def test_a_reply_citing_nothing_is_invalid_with_no_source() -> None:
    # Issue 32: a model's echo of its JSON instructions passed the guard as a reply.
    result = runner.invoke(app, ["-p", "x", "Answer only with JSON matching the schema."])
    assert result.exit_code == 1
    assert result.stdout == "INVALID (x): 42/280\n  - no_source\n"


def test_unknown_platform_is_a_usage_error() -> None:
    assert runner.invoke(app, ["hello", "--platform", "myspace"]).exit_code == 2


def test_readable_output_prints_untrusted_text_literally() -> None:
    result = runner.invoke(app, ["you idiot, see evil.example/[bold]x"])
    assert result.exit_code == 1
    assert "INVALID (x): 35/280" in result.stdout
    assert "url_not_evidence: evil.example/[bold]x" in result.stdout  # not eaten as markup
    assert "abusive: idiot" in result.stdout
    ok = runner.invoke(app, ["All good: who.int/m", "-e", "https://who.int/m"])
    assert ok.exit_code == 0
    assert "valid (x): 33/280" in ok.stdout


def test_a_disguised_link_is_shown_with_its_hidden_characters_and_not_listed_as_a_link() -> None:
    text = "see https://www.who.int\u200b.evil.example/news-room/fact-sheets/detail/measles"
    result = runner.invoke(app, [text, "--evidence-url", EVIDENCE])
    assert result.exit_code == 1
    assert "url_hidden_characters:" in result.stdout
    assert "https://www.who.int<U+200B>.evil.example/" in result.stdout
    assert "\u200b" not in result.stdout
    assert "link:" not in result.stdout
