"""`make notes-demo`: the Community Notes writer end to end, offline.

Starts, on loopback ports, the fake Community Notes API (testing/fakes/x_notes_api.py), the
scripted LLM (testing/fakes/openai_server.py, the lemon-water script of testing/scenarios.py) and a
web server with the evidence pages of testing/scenarios.py. The pages keep their publishers' names
(`http://ministry.example:PORT/...`, so the credibility table tiers them) and this process
resolves `*.example` to 127.0.0.1, as a hosts file would: the live URL check of each note goes
through the real SSRF-guarded fetcher. Then it runs `factnote run --once` (in this process) with
`[x_notes] enabled = true` and test_mode on, once in dry-run and once in live mode (each on a
fresh database), and prints for each:

    notes: read N, skipped N, drafted N, evaluated N, submitted N (test_mode)

read: posts of the feed recorded as requests; skipped: by triage (with reasons below);
drafted: notes that passed the verdict, tag and URL gates; evaluated: evaluate answers stored;
submitted: notes X accepted.
"""

from __future__ import annotations

import socket
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from bot import platforms
from bot.cli import app
from bot.notes.admission import NotesCycle, notes_cycle
from pipeline.search.local_index import LocalIndex
from pipeline.web.html_text import extract_document
from storage.db import Database
from storage.indexes import open_document_rows
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM
from testing.fakes.x_notes_api import FakeNotesApi, post
from testing.scenarios import DOCS, TIERS, script_happy_path

CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."
_getaddrinfo = socket.getaddrinfo


def _resolve_example(host: object, *args: object, **kwargs: object) -> object:
    """The demo's hosts file: every *.example publisher is this machine."""
    if isinstance(host, str) and host.endswith(".example"):
        host = "127.0.0.1"
    return _getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


def feed(now: datetime) -> list[list[dict[str, object]]]:
    """Two pages, not in time order, with a repeat: one note-worthy post and three that triage
    skips (too old, video only with nothing but an HLS playlist to read, a photo we cannot
    read)."""
    return [
        [
            post("1860000000000000011", CLAIM, now - timedelta(hours=2), note_requests=2),
            post("1860000000000000012", CLAIM, now - timedelta(hours=30)),
        ],
        [
            post(
                "1860000000000000013", "Watch this!", now - timedelta(hours=1), media=["video/hls"]
            ),
            post("1860000000000000011", CLAIM, now - timedelta(hours=2), note_requests=2),
            post("1860000000000000014", CLAIM, now - timedelta(hours=3), media=["photo", "gif?"]),
        ],
    ]


def serve_pages(web: LocalHTTPServer, databases: list[str]) -> list[str]:
    """Serve each page and index it under `http://<its publisher>:PORT/<path>` in the local
    index of each bot database (the index is a table of the database it searches from)."""
    hosts = []
    for url, html in DOCS.items():
        host, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
        web.add(path, Route(body=html.encode(), content_type="text/html; charset=utf-8"))
        hosts.append(host)
    for database in databases:
        with LocalIndex(open_document_rows(database)) as index:
            for url, html in DOCS.items():
                host, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
                index.add(extract_document(f"http://{host}:{web.port}{path}", html, "text/html"))
    return hosts


def config(tmp: Path, mode: str, api: FakeNotesApi, llm: FakeLLM, hosts: list[str]) -> Path:
    path = tmp / f"{mode}.toml"
    allow = ", ".join(f'"{h}"' for h in sorted(set(hosts)))
    tiers = ", ".join(f'"{d}" = "{t}"' for d, t in TIERS.items())
    path.write_text(
        f'''database_url = "sqlite:///{tmp / mode}.db"
index_path = "{tmp / "index.sqlite"}"
mode = "{mode}"

[llm]
base_url = "{llm.base_url}"
model = "fake-model"

[fetch]
allow_hosts = [{allow}]

[credibility]
overrides = {{ {tiers} }}

[runtime]
retry_backoff_s = 0.0

[local]
enabled = false

[x_notes]
enabled = true
test_mode = true
base_url = "{api.base_url}"
max_pages = 5
''',
        encoding="utf-8",
    )
    return path


ENV = {
    "FACTNOTE_X_BEARER_TOKEN": "demo-bearer",
    "FACTNOTE_X_CONSUMER_KEY": "demo-consumer-key",
    "FACTNOTE_X_CONSUMER_SECRET": "demo-consumer-secret",
    "FACTNOTE_X_ACCESS_TOKEN": "demo-access-token",
    "FACTNOTE_X_ACCESS_TOKEN_SECRET": "demo-access-secret",
    "FACTNOTE_X_BOT_USER_ID": "1",
    "FACTNOTE_X_BOT_USERNAME": "factnote",
    "FACTNOTE_LLM_API_KEY": "demo",
}


def figures(db_url: str, since: datetime, posted: int) -> NotesCycle:
    db = Database(db_url)
    cycle = notes_cycle(db, since, test_mode=True)
    db.dispose()
    assert cycle.submitted == posted, "the database and the fake API disagree"
    return cycle


def run(mode: str, tmp: Path, hosts: list[str], llm: FakeLLM) -> None:
    now = datetime.now(UTC)
    with FakeNotesApi(feed(now)) as api:
        cfg = config(tmp, mode, api, llm, hosts)
        started = datetime.now(UTC)
        done = CliRunner().invoke(app, ["--config", str(cfg), "run", "--once"], env=ENV)
        if done.exit_code != 0:
            print(done.output)
            if done.exception is not None and not isinstance(done.exception, SystemExit):
                raise done.exception
        cycle = figures(f"sqlite:///{tmp / mode}.db", started, len(api.notes))
        printed = [ln for ln in done.output.splitlines() if ln.startswith("notes: ")]
        assert printed == [cycle.line()], f"factnote printed {printed}, the database says {cycle}"
        print(f"[{mode}] factnote run --once exited {done.exit_code}; it printed:")
        print(printed[0])
        for reason, count in sorted(cycle.skipped.items()):
            print(f"  skipped {count}: {reason}")
        print(
            f"  fake API calls: feed {api.calls('GET /2/notes/search/posts_eligible_for_notes')},"
            f" evaluate {api.calls('POST /2/notes/evaluate')}, notes {api.calls('POST /2/notes')},"
            f" notes_written {api.calls('GET /2/notes/search/notes_written')}"
        )
        for note in api.notes:
            print(f"  note {note.id} on post {note.post_id} (test_mode={note.test_mode}):")
            print(f"    {note.info['text']}")
            print(
                f"    tags {note.info['misleading_tags']}, "
                f"trustworthy_sources {note.info['trustworthy_sources']}"
            )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="notes-demo-") as raw, FakeLLM() as llm:
        tmp = Path(raw)
        script_happy_path(llm)
        socket.getaddrinfo = _resolve_example  # type: ignore[assignment]
        try:
            with LocalHTTPServer() as web:
                modes = ("dry-run", "live")
                hosts = serve_pages(web, [f"sqlite:///{tmp / mode}.db" for mode in modes])
                for mode in ("dry-run", "live"):
                    run(mode, tmp, hosts, llm)
        finally:
            socket.getaddrinfo = _getaddrinfo


if __name__ == "__main__":
    platforms.install()
    main()
