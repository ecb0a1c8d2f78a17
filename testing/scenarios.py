"""Test corpus and scripted LLM answers shared by pipeline and runtime tests: fictional
pages on `.example` publishers, and responders that answer like a model would."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.config import CredibilityConfig, PipelineConfig, ResearchConfig
from pipeline.records import Post
from pipeline.search.local_index import LocalIndex
from pipeline.shared_parts import SharedParts
from pipeline.web.html_text import extract_document
from testing import indexes
from testing.fakes.openai_server import FakeLLM, Reply

POST = Post(
    id="p1",
    author="someone_demo",
    text="Drinking hot lemon water every hour kills the flu virus in your throat.",
    created_at=datetime(2026, 11, 29, 8, 0, tzinfo=UTC),
)

FILLER = (
    "The agency publishes guidance for the public on seasonal illnesses and reviews the "
    "evidence behind popular remedies every year, with independent experts from several "
    "universities taking part in each review and publishing their methods in full. "
)
FILLER_2 = (
    "Readers who want to know more can consult the full list of sources at the end of this "
    "article, together with contact details for the press office and a short explanation of "
    "how claims are selected for review by the editorial team each week. "
)


def page(title: str, body: str, published: str | None) -> str:
    meta = f'<meta property="article:published_time" content="{published}">' if published else ""
    return (
        f"<html><head><title>{title}</title>{meta}</head><body><article><h1>{title}</h1>"
        f"<p>{body}</p><p>{FILLER}</p><p>{FILLER_2}</p></article></body></html>"
    )


DOCS = {
    "https://ministry.example/flu/lemon": page(
        "Lemon water does not kill flu",
        "There is no evidence that lemon water kills influenza viruses in the throat. "
        "Influenza viruses multiply inside airway cells, where a drink cannot reach them.",
        "2026-01-10T09:00:00Z",
    ),
    "https://institute.example/drinks": page(
        "Can hot drinks destroy viruses?",
        "Hot drinks do not kill influenza viruses because a drink passes the throat in seconds. "
        "Warm fluids can relieve a sore throat but do not shorten the flu.",
        "2025-11-03T14:30:00Z",
    ),
    "https://paper.example/lemon-remedy": page(
        "Readers ask about lemon water and flu",
        "Doctors say lemon water does not kill the flu virus; vaccination protects best. "
        "Lemon water is a pleasant drink that keeps people hydrated while they are ill.",
        "2026-02-01T10:00:00Z",
    ),
    "https://ministry.example/flu/late": page(
        "Lemon water and flu: a later note",
        "Lemon water taken every hour does not kill the flu virus in the throat, the ministry "
        "repeated in a statement.",
        "2026-12-15T10:00:00Z",
    ),
}

TIERS = {
    "ministry.example": "high",
    "institute.example": "high",
    "paper.example": "medium",
}


def build_index(target: Path | str) -> Path | str:
    """Fill the local index with `DOCS`: a standalone index file (a path), or the local index
    table of a bot's main database (a URL), migrated first as the bot would."""
    if isinstance(target, str) and "://" in target:
        from storage.db import Database  # only callers that run the bot need the migrations

        db = Database(target)
        try:
            _fill(indexes.local_index(db.engine))
        finally:
            db.dispose()
    else:
        _fill(indexes.local_index(target))
    return target


def _fill(index: LocalIndex) -> None:
    with index:
        for url, html in DOCS.items():
            index.add(extract_document(url, html, "text/html"))


def make_shared_parts(fake: FakeLLM | None, index_path: Path, **research: Any) -> SharedParts:
    cfg = PipelineConfig(
        credibility=CredibilityConfig(overrides=TIERS),
        research=ResearchConfig(**research),
    )
    if fake is not None:
        cfg.llm = fake.config()
    return indexes.build_parts(cfg, index_path=index_path)


def quotes_from_page(body: dict[str, Any], stance: str = "refutes") -> Reply:
    """An extractor that quotes the first sentence of each page it was given, like a model."""
    user = body["messages"][-1]["content"]
    blocks = re.findall(r'<page n="(\d+)"[^>]*>\n(.*?)\n</page>', user, re.S)
    assert blocks, "the pages must arrive inside numbered <page> data blocks"
    items = []
    for number, text in blocks:
        first_sentence = text.split(". ")[0]
        if "lemon" in first_sentence.lower() or "hot drinks" in first_sentence.lower():
            items.append(
                {"page": int(number), "quote": first_sentence, "stance": stance, "confidence": 0.9}
            )
    return Reply.json({"items": items})


def cite_first_two(body: dict[str, Any]) -> Reply:
    urls = re.findall(r'url="([^"]+)"', body["messages"][-1]["content"])
    return Reply.json({"text": f"Lemon water does not kill flu viruses. {urls[0]} {urls[1]}"})


ANALYSIS = {
    "checkable": True,
    "reason": "",
    "claims": ["Hot lemon water kills the flu virus in the throat"],
    "questions": ["Does lemon water kill influenza viruses?"],
    "queries": ["lemon water kills flu virus", "hot drinks influenza throat", "lemon flu"],
}


def script_happy_path(fake: FakeLLM) -> None:
    fake.script("analyze", Reply.json(ANALYSIS))
    fake.script("evidence", quotes_from_page)
    fake.script(("write", "rewrite"), cite_first_two)
