"""Reading a file of cited links (`factnote sources coverage`)."""

from __future__ import annotations

import csv
from pathlib import Path

from pipeline.sources.citations import read_cited_urls


def test_a_long_note_in_a_csv_is_read_without_changing_the_process_wide_field_limit(
    tmp_path: Path,
) -> None:
    note = "see https://who.int/x " + "word " * 40_000  # over csv's default 128 KiB field
    path = tmp_path / "notes.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["summary"], [note]])
    before = csv.field_size_limit()
    assert read_cited_urls(path) == ["https://who.int/x"]
    assert csv.field_size_limit() == before  # the publisher table's own limit still holds
