"""One reading of dates and times for every command that takes one.

A bare date (`2026-11-29`) is midnight UTC of that day; a time without a zone (`2026-11-29T08:00`)
is UTC; `Z` and offsets (`+02:00`) are honoured. `--since`, `--as-of`, `--published` and the
`published` of an index sidecar all go through `parse_when` (as an option:
`typer.Option(None, "--since", parser=parse_when, metavar="DATE")`), so the same words mean the
same moment everywhere.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

FORMATS_HELP = "YYYY-MM-DD (midnight UTC) or an ISO-8601 time (UTC unless it has a zone)"


def parse_when(value: str | datetime) -> datetime:
    """The moment `value` names, always timezone-aware; ValueError when it names none."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = value.strip()
    if not text:
        raise ValueError("empty date")
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a date: {value!r} (use {FORMATS_HELP})") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
