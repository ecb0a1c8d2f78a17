"""`factnote index add | add-url | search` via typer's runner, on real files and a real index."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from bot.commands.index import app
from pipeline.config import FetchConfig
from testing import indexes
from testing.fakes.http_server import LocalHTTPServer, Route
from tests.bot.cli_runs import json_rows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "index"
CORPUS = FIXTURES / "corpus"
ORPHAN = FIXTURES / "pages" / "orphan.txt"

runner = CliRunner(env={"COLUMNS": "250"})  # wide enough that a table never folds a URL


def search_json(index: Path, query: str) -> list[dict[str, object]]:
    return json_rows(app, "search", query, "--index", str(index))


def test_add_one_file_under_its_url_with_a_given_date(tmp_path: Path) -> None:
    index = tmp_path / "ix.sqlite"
    result = runner.invoke(
        app,
        [
            "add",
            str(ORPHAN),
            "--url",
            "https://hygiene.example/handwashing",
            "--published",
            "2020-04-01",
            "--title",
            "Handwashing",
            "--index",
            str(index),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "added https://hygiene.example/handwashing" in result.stdout
    hits = search_json(index, "soap handwashing infections")
    assert [h["url"] for h in hits] == ["https://hygiene.example/handwashing"]
    assert hits[0]["title"] == "Handwashing"
    assert hits[0]["published"] == "2020-04-01T00:00:00Z"
    assert hits[0]["provider"] == "local"

    again = runner.invoke(
        app,
        [
            "add",
            str(ORPHAN),
            "--url",
            "https://hygiene.example/handwashing/",
            "--index",
            str(index),
        ],
    )
    assert again.exit_code == 0
    assert "unchanged https://hygiene.example/handwashing/" in again.stdout


def test_add_directory_reads_sidecars_and_reports_files_without_one(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    shutil.copy(ORPHAN, corpus / "orphan.txt")
    index = tmp_path / "ix.sqlite"
    result = runner.invoke(app, ["add", str(corpus), "--index", str(index)])
    assert result.exit_code == 1  # one file failed, the others went in
    assert "orphan.txt" in result.stderr and "meta.json" in result.stderr
    assert "3 of 4 files ok; index holds 3 documents" in result.stdout

    with indexes.local_index(index) as local:
        mmr = local.get("https://health.example/mmr-autism")
        bread = local.get("https://food.example/recipes/bread")
        moon = local.get("https://space.example/apollo-11")
    assert mmr is not None and mmr.published is not None
    assert mmr.published.isoformat() == "2021-03-04T09:00:00+00:00"  # from the page's meta
    assert bread is not None and bread.title == "Simple bread"  # sidecar title and date
    assert bread.published is not None and bread.published.date().isoformat() == "2019-11-20"
    assert moon is not None and "Sea of Tranquility" in moon.text

    hits = search_json(index, "jab makes kids autistic")  # dense: no word in common
    assert hits and hits[0]["url"] == "https://health.example/mmr-autism"


def test_bad_sidecar_and_bad_date_are_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    shutil.copy(ORPHAN, page)
    (tmp_path / "page.txt.meta.json").write_text('{"title": "no url"}', encoding="utf-8")
    index = tmp_path / "ix.sqlite"
    result = runner.invoke(app, ["add", str(page), "--index", str(index)])
    assert result.exit_code == 1
    assert '"url" string' in result.stderr

    bad_date = runner.invoke(
        app, ["add", str(page), "--url", "https://a.example/", "--published", "last week"]
    )
    assert bad_date.exit_code == 2
    assert "ISO-8601" in bad_date.output


def test_url_option_needs_exactly_one_file(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "add",
            str(ORPHAN),
            str(CORPUS / "bread.txt"),
            "--url",
            "https://a.example/",
            "--index",
            str(tmp_path / "ix"),
        ],
    )
    assert result.exit_code == 2
    assert "exactly one file" in result.output
    assert not (tmp_path / "ix").exists()


def test_without_index_option_the_index_is_in_the_main_database_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "env" / "factnote.db"
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["add", str(ORPHAN), "--url", "https://hygiene.example/h"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM local_documents").fetchone() == (1,)
    assert not (tmp_path / "data").exists()
    table = runner.invoke(app, ["search", "handwashing soap"])
    assert table.exit_code == 0
    assert "https://hygiene.example/h" in table.stdout


def test_search_without_an_index_fails_clearly(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "anything", "--index", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 1
    assert "no index at" in result.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_search_table_prints_page_text_as_data(tmp_path: Path) -> None:
    page = tmp_path / "p.txt"
    page.write_text(
        "Measles [bold]outbreaks[/bold] followed falling vaccination rates in several countries.",
        encoding="utf-8",
    )
    index = tmp_path / "ix.sqlite"
    added = runner.invoke(
        app,
        [
            "add",
            str(page),
            "--url",
            "https://a.example/m",
            "--title",
            "[red]Measles[/red]",
            "--index",
            str(index),
        ],
    )
    assert added.exit_code == 0, added.output
    result = runner.invoke(app, ["search", "[i]measles outbreaks", "--index", str(index)])
    assert result.exit_code == 0
    assert "Local index: [i]measles outbreaks" in result.stdout
    assert "[red]Measles[/red]" in result.stdout
    assert "[bold]outbreaks[/bold]" in result.stdout


def test_add_url_fetches_and_reports_failures(tmp_path: Path) -> None:
    body = (CORPUS / "moon.html").read_text(encoding="utf-8")
    index = tmp_path / "ix.sqlite"
    with LocalHTTPServer() as server:
        server.add("/apollo", Route(body=body))
        server.add("/gone", Route(status=404, body="not here"))
        obj = SimpleNamespace(fetch=FetchConfig(allow_hosts=["127.0.0.1"]))
        result = runner.invoke(
            app,
            ["add-url", server.url("/apollo"), server.url("/gone"), "--index", str(index)],
            obj=obj,
        )
        assert result.exit_code == 1
        assert f"added {server.url('/apollo')}" in result.stdout
        assert f"failed {server.url('/gone')}" in result.stderr
        hits = search_json(index, "Apollo lunar module")
        assert [h["url"] for h in hits] == [server.url("/apollo")]
        assert hits[0]["published"] == "2019-07-16T00:00:00Z"


def test_add_url_obeys_the_fetch_guard_by_default(tmp_path: Path) -> None:
    with LocalHTTPServer() as server:
        server.add("/apollo", Route(body="<p>hello</p>"))
        result = runner.invoke(
            app, ["add-url", server.url("/apollo"), "--index", str(tmp_path / "ix.sqlite")]
        )
        assert server.hits("/apollo") == 0  # loopback is refused without allow_hosts
    assert result.exit_code == 1
    assert "failed" in result.stderr


def test_hostile_sidecars_fail_one_by_one_and_the_rest_are_added(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sidecars = {
        "a_javascript.txt": json.dumps({"url": "javascript:alert(1)"}),
        "b_file.txt": json.dumps({"url": "file:///etc/passwd"}),
        "c_nested.txt": "[" * 10_000 + "]" * 10_000,
        "d_latin1.txt": None,
        "e_good.txt": json.dumps({"url": "https://hygiene.example/handwashing"}),
    }
    for name, sidecar in sidecars.items():
        shutil.copy(ORPHAN, corpus / name)
        meta = corpus / (name + ".meta.json")
        if sidecar is None:
            meta.write_bytes('{"url": "https://caf\xe9.example/"}'.encode("latin-1"))
        else:
            meta.write_text(sidecar, encoding="utf-8")
    index = tmp_path / "ix.sqlite"
    result = runner.invoke(app, ["add", str(corpus), "--index", str(index)])
    assert result.exit_code == 1
    failed = [
        line for line in result.stderr.splitlines() if line.startswith("factnote: error: failed: ")
    ]
    assert len(failed) == 4
    assert "'javascript:alert(1)' is not an http(s) URL" in failed[0]
    assert "'file:///etc/passwd' is not an http(s) URL" in failed[1]
    assert "nested deeper than 64 levels" in failed[2]
    assert "d_latin1.txt.meta.json: unreadable" in failed[3]
    assert "added https://hygiene.example/handwashing" in result.stdout
    assert "1 of 5 files ok; index holds 1 documents" in result.stdout


def test_a_url_option_that_is_not_http_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "ix.sqlite"
    result = runner.invoke(
        app, ["add", str(ORPHAN), "--url", "data:text/plain,hi", "--index", str(index)]
    )
    assert result.exit_code == 1
    assert "'data:text/plain,hi' is not an http(s) URL" in result.stderr


def test_files_are_read_up_to_a_cap_and_devices_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.commands.index as index_command

    monkeypatch.setattr(index_command, "MAX_FILE_BYTES", 100)
    index = tmp_path / "ix.sqlite"
    url = "https://hygiene.example/handwashing"
    big = runner.invoke(app, ["add", str(ORPHAN), "--url", url, "--index", str(index)])
    assert big.exit_code == 1
    assert f"failed: {ORPHAN}: over 100 bytes" in big.stderr
    if Path("/dev/zero").exists():  # endless: must never be read
        device = runner.invoke(app, ["add", "/dev/zero", "--url", url, "--index", str(index)])
        assert device.exit_code == 1
        assert "failed: /dev/zero: not a file" in device.stderr
