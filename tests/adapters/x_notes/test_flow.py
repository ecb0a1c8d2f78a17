"""Community Notes from decision to note: the tag table, the verdict gate, the live URL check,
the evaluate gate, dry-run and live runs of the bot, status sync and admission figures.

The X side is the loopback fake (testing/fakes/x_notes_api.py), the LLM the scripted fake
(testing/fakes/openai_server.py), the web the loopback HTTP server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import select

from adapters.base import MediaRef, SocialPost, Summons
from adapters.x_notes.note_store import text_hash
from bot.commands.run import run_command
from bot.commands.status import status_command
from bot.config import Settings, load_settings
from bot.moderation import users
from bot.notes import decision_to_note as notes
from bot.notes.adapter_setup import build_notes_adapter
from bot.notes.admission import admission
from bot.notes.decision_to_note import finish, misleading_tags, signals, trustworthy
from bot.notes.review_view import note_facts
from bot.notes.store import SqlNoteStore
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, build_adapters
from bot.web.app import create_app
from pipeline.config import FetchConfig, GuardConfig
from pipeline.records import (
    Decision,
    DecisionStatus,
    Platform,
    Stance,
    Tier,
    Trace,
    Verdict,
    utcnow,
)
from pipeline.reply.guard import check_text, notes_length
from pipeline.video.records import VideoFinding, VideoReport
from storage.db import Database
from storage.models import DecisionRow, Request, XNote
from testing import builders
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM
from testing.fakes.x_notes_api import Failure, FakeNotesApi, post
from testing.scenarios import TIERS, build_index, script_happy_path
from tests.adapters.x_notes.note_store_memory import prepare_note

URL = "https://ministry.example/flu/lemon"
NOTE = f"Lemon water does not kill flu viruses in the throat. {URL}"
CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."


def decision(verdict: Verdict = Verdict.REFUTED, **kw: Any) -> Decision:
    base: dict[str, Any] = {
        "status": DecisionStatus.REPLY,
        "verdict": verdict,
        "platform": Platform.NOTES,
        "reply": NOTE,
        "urls": [URL],
        "evidence": [builders.evidence(URL)],
        "as_of": utcnow(),
    }
    return Decision(**{**base, **kw})


# --- The tag table -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "found", "tags"),
    [
        (Verdict.REFUTED, set(), ("factual_error",)),
        (Verdict.REFUTED, {"contested"}, ("disputed_claim_as_fact",)),
        (Verdict.MISLEADING, set(), ("missing_important_context",)),
        (Verdict.REFUTED, {"altered_media"}, ("factual_error", "manipulated_media")),
        (Verdict.MISLEADING, {"outdated"}, ("missing_important_context", "outdated_information")),
        (Verdict.REFUTED, {"satire"}, ("misinterpreted_satire",)),
        (
            Verdict.REFUTED,
            {"altered_media", "outdated", "contested"},
            ("disputed_claim_as_fact", "manipulated_media"),
        ),
        (Verdict.SUPPORTED, set(), ()),
        (Verdict.NOT_ENOUGH_EVIDENCE, {"altered_media"}, ()),
        (Verdict.NOT_CHECKABLE, set(), ()),
    ],
)
def test_the_tag_table_gives_at_most_two_tags_and_none_to_non_misleading_verdicts(
    verdict: Verdict, found: set[str], tags: tuple[str, ...]
) -> None:
    assert misleading_tags(verdict, found) == tags


def test_signals_are_read_from_the_decisions_records() -> None:
    both = decision(
        evidence=[builders.evidence(URL), builders.evidence(URL, stance=Stance.SUPPORTS)]
    )
    assert signals(both) == {"contested"}
    old = decision(reasons=["the photo is old footage from 2019 shown as new"])
    assert signals(old) == {"outdated"}


def test_trustworthy_sources_only_when_a_high_tier_source_is_cited() -> None:
    assert trustworthy(decision())
    assert not trustworthy(decision(evidence=[builders.evidence(URL, tier=Tier.MEDIUM)]))
    uncited = decision(evidence=[builders.evidence("https://other.example/x")])
    assert not trustworthy(uncited)


# --- The notes format in the guard ---------------------------------------------------------


def test_notes_count_each_url_as_one_character() -> None:
    long_url = "https://www.who.int/" + "a" * 300
    text = "x" * 270 + " " + long_url
    report = check_text(text, Platform.NOTES, evidence_urls=[long_url], cfg=GuardConfig())
    assert report.length == 272 and report.valid
    over = check_text(
        "x" * 279 + " " + long_url, Platform.NOTES, evidence_urls=[long_url], cfg=GuardConfig()
    )
    assert [p.code.value for p in over.problems] == ["too_long"]


def test_notes_refuse_hashtags_and_this_post_is_false_boilerplate() -> None:
    text = f"This post is false. #FluFacts Lemon water does not kill flu. {URL}#frag"
    report = check_text(text, Platform.NOTES, evidence_urls=[URL + "#frag"], cfg=GuardConfig())
    codes = [str(p) for p in report.problems]
    assert 'notes_boilerplate: "This post is false"' in codes
    assert "notes_hashtag: #FluFacts" in codes
    # The same words in an X reply are not the notes' business.
    reply = check_text(text, Platform.X, evidence_urls=[URL + "#frag"], cfg=GuardConfig())
    assert not [p for p in reply.problems if p.code.value.startswith("notes_")]


# --- The gates on a decision ---------------------------------------------------------------


@pytest.fixture
def api() -> Iterator[FakeNotesApi]:
    with FakeNotesApi([[post("11", CLAIM, utcnow() - timedelta(hours=1))]]) as fake:
        yield fake


def settings_for(api: FakeNotesApi, tmp: Path, mode: str = "live", **x_notes: Any) -> Settings:
    settings = load_settings(database_url=f"sqlite:///{tmp / 'factnote.db'}", mode=mode)
    x = settings.x
    x.consumer_key, x.consumer_secret = SecretStr("ck"), SecretStr("cs")
    x.access_token, x.access_token_secret = SecretStr("at"), SecretStr("ats")
    x.bearer_token, x.bot_user_id, x.bot_username = SecretStr("b"), "1", "factnote"
    settings.local.enabled = False
    settings.x_notes.enabled = True
    settings.x_notes.base_url = api.base_url
    for key, value in x_notes.items():
        setattr(settings.x_notes, key, value)
    return settings


def always(ok: bool) -> Callable[[str], bool]:
    return lambda url: ok


SUMMONS = Summons(platform="x_notes", id="11", author="a", text="", created_at=utcnow())


def test_only_refuted_and_misleading_verdicts_become_notes(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path)
    adapter = build_notes_adapter(settings, db)
    for verdict in (Verdict.SUPPORTED, Verdict.NOT_ENOUGH_EVIDENCE):
        done = finish(db, settings, adapter, SUMMONS, decision(verdict), url_ok=always(True))
        assert done.decision.status is DecisionStatus.ABSTAIN
        assert (
            done.decision.reasons[0] == f"notes: a {verdict.value} verdict does not become a note"
        )
    assert api.calls("POST /2/notes/evaluate") == 0


def test_a_url_that_does_not_answer_200_live_abstains(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path)
    adapter = build_notes_adapter(settings, db)
    with LocalHTTPServer() as web:
        web.add("/ok", Route.text("fine"))
        web.add("/gone", Route(status=404, body=b"gone"))
        check = notes.url_answers_200(FetchConfig(allow_hosts=["127.0.0.1"]))
        assert check(web.url("/ok")) and not check(web.url("/gone"))
        assert not notes.url_answers_200(FetchConfig())(web.url("/ok"))  # SSRF guard holds
        dead = decision(urls=[web.url("/gone")])
        done = finish(db, settings, adapter, SUMMONS, dead, url_ok=check)
    assert done.decision.status is DecisionStatus.ABSTAIN
    assert done.decision.reasons[0].startswith("notes: URL did not answer 200")


def test_the_evaluate_floor_abstains_and_each_score_is_stored_under_its_text_hash(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path, evaluate_floor=0.5)
    adapter = build_notes_adapter(settings, db)
    api.scores["11"] = 0.4
    low = finish(db, settings, adapter, SUMMONS, decision(), url_ok=always(True))
    assert low.decision.status is DecisionStatus.ABSTAIN
    assert "claim_opinion_score 0.4 is not above the floor 0.5" in low.decision.reasons[0]

    api.scores["11"] = 0.9
    text = NOTE.replace("does not kill", "cannot kill")
    high = finish(db, settings, adapter, SUMMONS, decision(reply=text), url_ok=always(True))
    assert high.decision.status is DecisionStatus.REPLY and high.mode is None
    store = SqlNoteStore(db)
    assert store.score("11", text_hash(NOTE)) == 0.4
    assert store.score("11", text_hash(text)) == 0.9
    prepared = store.prepared("11", True)
    assert prepared is not None and prepared.misleading_tags == ("factual_error",)


def test_an_evaluate_error_sends_the_note_to_review_not_out(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path, mode="live")
    adapter = build_notes_adapter(settings, db)
    api.fail("POST /2/notes/evaluate", Failure(503, {"title": "Service Unavailable"}))
    done = finish(db, settings, adapter, SUMMONS, decision(), url_ok=always(True))
    assert done.mode == "review"
    assert done.decision.reasons[0].startswith("notes: evaluate failed, held for review")


def video_summons(*, findings: bool, error: str | None = None) -> tuple[Summons, Decision]:
    """A video-only post and a refuting decision whose trace read (or did not read) text in
    its video."""
    clip = MediaRef(
        url="https://pbs.twimg.com/ext_tw_video_thumb/7_110/pu/img/p.jpg",
        kind="video",
        video_url="https://video.twimg.com/ext_tw_video/7_110/pu/vid/480x270/v.mp4",
    )
    target = SocialPost(
        id="11", author="a", text="the dam broke, watch", created_at=utcnow(), media=[clip]
    )
    report = VideoReport(owner="post", number=1, source=clip.video_url or "", error=error)
    if findings:
        report.findings = [VideoFinding(text="DAM COLLAPSES", start=0.0, end=2.0, frames=[1])]
    summons = SUMMONS.model_copy(update={"target": target})
    return summons, decision(trace=Trace(videos=[report]))


def test_a_video_only_post_with_nothing_read_from_its_video_gets_no_note(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path)
    adapter = build_notes_adapter(settings, db)
    summons, refuted = video_summons(findings=False, error="over the cap of 600 s")
    done = finish(db, settings, adapter, summons, refuted, url_ok=always(True))
    assert done.decision.status is DecisionStatus.ABSTAIN
    assert done.decision.reasons[0] == (
        "notes: video-only post and nothing was read from its video "
        "(video 1: over the cap of 600 s)"
    )
    assert api.calls("POST /2/notes/evaluate") == 0


def test_a_video_only_post_whose_video_text_was_read_goes_on_to_evaluate(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path)
    adapter = build_notes_adapter(settings, db)
    summons, refuted = video_summons(findings=True)
    done = finish(db, settings, adapter, summons, refuted, url_ok=always(True))
    assert done.decision.status is DecisionStatus.REPLY
    assert api.calls("POST /2/notes/evaluate") == 1


# --- The bot, end to end -------------------------------------------------------------------


@pytest.fixture
def bot_env(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeNotesApi, Callable[[str], Settings]]]:
    script_happy_path(fake_llm)
    index = build_index(f"sqlite:///{tmp_path / 'factnote.db'}")
    # The evidence pages live on *.example hosts no test can reach; their live check answers
    # 200 for the indexed pages (the check itself is pinned above on a loopback server).
    monkeypatch.setattr(notes, "url_answers_200", lambda cfg: lambda url: "example/" in url)
    with FakeNotesApi([[post("11", CLAIM, utcnow() - timedelta(hours=1))]]) as fake:

        def settings(mode: str) -> Settings:
            s = settings_for(fake, tmp_path, mode=mode)
            s.index_path = str(index)
            s.credibility.overrides = dict(TIERS)
            s.llm = fake_llm.config()
            s.runtime.retry_backoff_s = 0
            return s

        yield fake, settings


@contextmanager
def database_of(settings: Settings) -> Iterator[Database]:
    """The main database the bot of `settings` wrote, disposed of afterwards."""
    db = Database(settings.database_url)
    try:
        yield db
    finally:
        db.dispose()


def run_in_review(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]], score: float
) -> tuple[FakeNotesApi, Settings, list[Request]]:
    """One run of the bot in review mode, X scoring the note `score`."""
    fake, settings = bot_env
    fake.scores["11"] = score
    review = settings("review")
    return fake, review, run_once(review)


def run_once(settings: Settings) -> list[Request]:
    with open_runtime(settings) as runtime:
        Bot(runtime, build_adapters(settings)).run_once()
        with runtime.db.session() as session:
            return list(session.scalars(select(Request).order_by(Request.id)))


def test_dry_run_evaluates_but_sends_no_note(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]],
) -> None:
    fake, settings = bot_env
    requests = run_once(settings("dry-run"))

    assert [(r.platform, r.summons_id, r.state) for r in requests] == [("x_notes", "11", "dry_run")]
    assert fake.calls("POST /2/notes/evaluate") == 1
    assert fake.calls("POST /2/notes") == 0


def test_live_mode_writes_one_test_mode_note_and_a_second_run_writes_none(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]],
) -> None:
    fake, settings = bot_env
    live = settings("live")
    requests = run_once(live)
    again = run_once(live)

    assert [r.state for r in requests] == ["posted"] and len(again) == 1
    assert len(fake.notes) == 1
    note = fake.notes[0]
    assert note.test_mode is True and note.post_id == "11"
    assert note.info["classification"] == "misinformed_or_potentially_misleading"
    assert note.info["misleading_tags"] == ["factual_error"]
    assert note.info["trustworthy_sources"] is True
    with database_of(live) as db, db.session() as session:
        row = session.scalars(select(XNote)).one()
    assert (row.state, row.test_mode, row.note_id) == ("submitted", True, note.id)
    assert row.request_id == requests[0].id


def test_run_once_prints_what_the_note_writer_did(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]], capsys: pytest.CaptureFixture[str]
) -> None:
    fake, settings = bot_env
    fake.pages[0].append(post("12", CLAIM, utcnow() - timedelta(hours=30)))

    run_command(SimpleNamespace(obj=settings("live")), once=True, mode=None)  # type: ignore[arg-type]

    out = capsys.readouterr().out
    assert "notes: read 2, skipped 1, drafted 1, evaluated 1, submitted 1 (test_mode)" in out


def test_status_shows_notes_written_and_admission_progress(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, settings = bot_env
    live = settings("live")
    run_once(live)
    with database_of(live) as db:
        build_notes_adapter(live, db).sync()
    capsys.readouterr()

    status_command(SimpleNamespace(obj=live), json_=True)  # type: ignore[arg-type]
    shown = json.loads(capsys.readouterr().out)["community_notes"]
    status_command(SimpleNamespace(obj=live), json_=False)  # type: ignore[arg-type]
    text = capsys.readouterr().out

    assert shown["written"] == 1 and shown["notes"] == 1 and shown["claim_high"] == 1.0
    assert shown["passes"] is False  # 1 of the 50 notes admission looks at
    assert "community notes written: 1; admission over the last 1 test note(s)" in text


@pytest.mark.parametrize("landed", [False, True], ids=["post-lost", "answer-lost"])
def test_after_a_failed_note_post_the_next_run_writes_exactly_one_note(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]], landed: bool
) -> None:
    fake, settings = bot_env
    # The POST fails (a 503): either it never landed, or it landed and only its answer was lost.
    fake.fail("POST /2/notes", Failure(503, {"title": "Service Unavailable"}, after=landed))
    live = settings("live")  # retry_backoff_s = 0: the retry is due within the same run

    requests = run_once(live)

    assert [r.state for r in requests] == ["posted"]
    assert post_attempts_of(live) == 2  # the second attempt asked notes_written first
    assert len(fake.notes) == 1
    assert requests[0].reply_id == fake.notes[0].id
    assert fake.calls("POST /2/notes") == (1 if landed else 2)


def post_attempts_of(settings: Settings) -> int:
    with database_of(settings) as db, db.session() as session:
        return session.scalars(select(Request.post_attempts)).one()


def test_in_live_mode_an_evaluate_error_puts_the_note_in_review_and_writes_nothing(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]],
) -> None:
    fake, settings = bot_env
    fake.fail("POST /2/notes/evaluate", Failure(503, {"title": "Service Unavailable"}))

    live = settings("live")
    requests = run_once(live)

    assert [(r.state, r.mode) for r in requests] == [("awaiting_review", "review")]
    with database_of(live) as db, db.session() as session:
        reasons = session.scalars(select(DecisionRow.reasons)).one()
    assert reasons[0].startswith("notes: evaluate failed, held for review")
    assert fake.calls("POST /2/notes") == 0


def test_review_shows_a_notes_tags_and_the_score_of_the_exact_text_in_the_draft(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]],
) -> None:
    fake, review, requests = run_in_review(bot_env, score=1.5)
    with database_of(review) as db, db.session() as session:
        request = session.get(Request, requests[0].id)
        assert request is not None and request.state == "awaiting_review"
        facts = note_facts(session, request, request.reply_text)
        edited = note_facts(session, request, (request.reply_text or "") + " (edited)")

    assert facts is not None and edited is not None
    assert (facts.tags, facts.trustworthy_sources, facts.score) == (("factual_error",), True, 1.5)
    assert facts.test_mode is True and facts.state == "prepared"
    assert edited.score is None  # an edit is evaluated again before it can go out
    assert fake.calls("POST /2/notes") == 0


def test_the_review_page_shows_the_notes_count_tags_and_score(
    bot_env: tuple[FakeNotesApi, Callable[[str], Settings]],
) -> None:
    _, review, (request,) = run_in_review(bot_env, score=1.5)
    with database_of(review) as db:
        users.add_user(db, "mod", "a long enough password 1", "moderator")
        client = TestClient(create_app(review, db, secret="test-secret"))
        form = client.get("/login").text
        token = re.search(r'name="csrf_token" value="([^"]+)"', form)
        assert token is not None
        credentials = {"username": "mod", "password": "a long enough password 1"}
        client.post("/login", data={**credentials, "csrf_token": token[1]})

        page = client.get(f"/requests/{request.id}").text

    assert "Community Note (test mode, prepared)" in page
    assert "tags <b>factual_error</b>; trustworthy sources: yes" in page
    assert "claim_opinion_score of this exact text: <b>1.50</b>" in page
    length = notes_length(request.reply_text or "")
    assert f"Length (notes rules): <b>{length} / 280</b>" in page


# --- Status sync and admission -------------------------------------------------------------


def test_status_sync_copies_buckets_and_finds_notes_whose_receipt_was_lost(
    api: FakeNotesApi, db: Database, tmp_path: Path
) -> None:
    settings = settings_for(api, tmp_path)
    adapter = build_notes_adapter(settings, db)
    prepare_note(db, "11", NOTE, at=utcnow())
    SqlNoteStore(db).mark_intent("11", NOTE, True, utcnow())
    api.buckets["ClaimOpinion"] = "Medium"
    adapter.client.create_note(  # the POST landed; the process died before its receipt
        "11", notes_info(), test_mode=True
    )

    assert adapter.sync() == 1

    with db.session() as session:
        row = session.scalars(select(XNote)).one()
    assert row.state == "submitted" and row.note_id == api.notes[0].id
    assert row.status == "needs_more_ratings"
    assert row.buckets["ClaimOpinion"] == "Medium"


def notes_info() -> Any:
    from adapters.x_notes.client import NoteInfo

    return NoteInfo(NOTE, "misinformed_or_potentially_misleading", ("factual_error",), True)


def test_admission_figures_cover_the_last_50_test_notes(db: Database) -> None:
    now = utcnow()
    with db.transaction() as session:
        for i in range(60):
            claim = "High" if i < 20 else ("Low" if i < 32 else "Medium")
            url = "Low" if i in (1, 2) else "High"
            session.add(
                XNote(
                    post_id=str(i),
                    test_mode=True,
                    state="submitted",
                    classification="m",
                    misleading_tags=[],
                    text="t",
                    buckets={
                        "UrlValidity": url,
                        "HarassmentAbuse": "High",
                        "ClaimOpinion": claim,
                    },
                    # Notes 0..9 are the oldest: outside the window of 50.
                    submitted_at=now - timedelta(hours=100 - i),
                )
            )
    figures = admission(db)

    assert figures.notes == 50
    assert figures.claim_high == pytest.approx(10 / 50)  # notes 10..19
    assert figures.claim_low == pytest.approx(12 / 50)  # notes 20..31
    assert figures.url_high == 1.0 and figures.harassment_high == 1.0
    assert not figures.passes
    assert "ClaimOpinion high 20% (>= 30%)" in figures.line()
