"""One reading of dates for every command (issue 18 item 11): a bare date is midnight UTC."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from typer.testing import CliRunner

from bot import cli
from bot.dates import parse_when


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-29", datetime(2026, 11, 29, tzinfo=UTC)),
        (" 2026-11-29 ", datetime(2026, 11, 29, tzinfo=UTC)),
        ("2026-11-29T08:30", datetime(2026, 11, 29, 8, 30, tzinfo=UTC)),
        ("2026-11-29T08:30:00Z", datetime(2026, 11, 29, 8, 30, tzinfo=UTC)),
        (
            "2026-11-29T08:30:00+02:00",
            datetime(2026, 11, 29, 8, 30, tzinfo=timezone(timedelta(hours=2))),
        ),
    ],
)
def test_a_bare_date_is_midnight_utc_and_a_naive_time_is_utc(text: str, expected: datetime) -> None:
    parsed = parse_when(text)
    assert parsed == expected
    assert parsed.tzinfo is not None


@pytest.mark.parametrize("text", ["last week", "2026-13-01", "29/11/2026", ""])
def test_anything_else_is_refused_saying_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a date|empty"):
        parse_when(text)


def walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, param) for param in command.params]
    for name, sub in getattr(command, "commands", {}).items():
        found += walk(sub, (*path, name))
    return found


def test_every_date_option_of_every_command_reads_dates_the_same_way() -> None:
    date_options = [
        (path, param)
        for name in cli.COMMANDS
        for path, param in walk(cli.load_command(name), (name,))
        if param.name in {"since", "until", "as_of", "published", "before", "after"}
    ]
    assert len(date_options) >= 5  # report, export, fetch and check --since/--as-of, index
    for path, param in date_options:
        assert param.metavar == "DATE", (path, param.name)


def test_fetch_and_export_take_a_bare_date_as_midnight_utc(tmp_path: Any) -> None:
    env = {"FACTNOTE_DATABASE_URL": f"sqlite:///{tmp_path / 'd.db'}"}
    # A loopback URL is refused by the fetcher's SSRF guard before any network use; the
    # snapshot still says which moment it was judged against.
    fetched = CliRunner().invoke(
        cli.app, ["fetch", "http://127.0.0.1/", "--json", "--as-of", "2026-11-29"], env=env
    )
    assert json.loads(fetched.stdout)["as_of"] == "2026-11-29T00:00:00+00:00"
    exported = CliRunner().invoke(cli.app, ["export", "--since", "2026-11-29"], env=env)
    assert exported.exit_code == 0, exported.output
    refused = CliRunner().invoke(cli.app, ["export", "--since", "yesterday"], env=env)
    assert refused.exit_code == 2
    assert "not a date: 'yesterday'" in refused.output
