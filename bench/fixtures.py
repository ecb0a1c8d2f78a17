"""The benchmark world: 20 social posts and the web pages about them, all written for this bench.

The scenarios are data, one TOML file per post in `bench/data/scenarios/`; this module validates
them and generates the pages' HTML from them. Each post comes with what a model would say about
it (claims, queries, a reply) and the pages a search engine would find for each query, on
fictional `.example` publishers in all three tiers.
The mix is meant to look like a week of a fact-checker's queue, not to flatter the pipeline:

* 8 posts settled by the High tier alone (two High pages refute: the stop rule);
* 4 posts that need the Medium (or Low) tier, because High has one refuting page or none;
* 3 posts whose first round finds only background pages, so a second round (requery) is needed;
* 1 post misleading (context only), 1 refuted by a single page plus context (no stop rule, so
  every tier is read), 1 true post (supported), 1 with no evidence after three rounds,
  1 opinion (not checkable).

Pages are news articles and official pages of 600-2,500 words, generated deterministically from the
scenario's sentences and the prose pools below: a lead with the page's key sentences, topic
paragraphs, general reporting, and the boilerplate real articles carry (newsletter plugs,
corrections notes, author bios, comment rules), inside a page with navigation, cookie banner and
footer. A page's `stance` is what a model reading its key sentences would answer; "none" pages are
on the topic but settle nothing, "offtopic" pages share a word with the query and nothing else.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pipeline.records import Document, Post
from pipeline.web.html_text import extract_document

Stance = Literal["refutes", "context", "supports", "none", "offtopic"]

# Sources must predate this (live mode: dateless High pages are allowed).
AS_OF = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Publisher:
    domain: str
    name: str
    tier: Literal["high", "medium", "low"]
    section: str


PUBLISHERS: tuple[Publisher, ...] = (
    Publisher("health-ministry.example", "Ministry of Health", "high", "guidance"),
    Publisher("stats-office.example", "National Statistics Office", "high", "releases"),
    Publisher("met-service.example", "National Meteorological Service", "high", "news"),
    Publisher("wire-agency.example", "Continental Wire", "high", "world"),
    Publisher("space-agency.example", "Space Agency", "high", "explore"),
    Publisher("factcheck-desk.example", "Factcheck Desk", "high", "checks"),
    Publisher("science-academy.example", "Academy of Sciences", "high", "briefings"),
    Publisher("env-office.example", "Environment Office", "high", "advice"),
    Publisher("daily-courier.example", "The Daily Courier", "medium", "news"),
    Publisher("metro-tribune.example", "Metro Tribune", "medium", "local"),
    Publisher("valley-gazette.example", "Valley Gazette", "medium", "community"),
    Publisher("harbour-herald.example", "Harbour Herald", "medium", "city"),
    Publisher("tech-weekly.example", "Tech Weekly", "medium", "features"),
    Publisher("viral-digest.example", "Viral Digest", "low", "trending"),
    Publisher("trendwire.example", "TrendWire", "low", "stories"),
    Publisher("morning-buzz.example", "Morning Buzz", "low", "buzz"),
)
_BY_DOMAIN = {p.domain: p for p in PUBLISHERS}
TIERS: dict[str, str] = {p.domain: p.tier for p in PUBLISHERS}
HOSTS: list[str] = [p.domain for p in PUBLISHERS]


@dataclass(frozen=True)
class FixturePage:
    url: str
    publisher: Publisher
    title: str
    stance: Stance
    key: tuple[str, ...]  # sentences a model would quote, in the lead paragraph
    found_by: tuple[int, ...]  # indices into the post's queries (round 1, then requeries)
    published: datetime | None
    facts: tuple[str, ...]  # the topic sentences the body is written from
    topic: str
    words: int  # target length of the article body


@dataclass(frozen=True)
class FixturePost:
    id: str
    scenario: str
    text: str
    created_at: datetime
    checkable: bool
    claims: tuple[str, ...]
    questions: tuple[str, ...]
    queries: tuple[str, ...]
    requeries: tuple[tuple[str, ...], ...]  # one batch per extra round
    reply: str
    reason: str = ""  # why not checkable
    pages: tuple[FixturePage, ...] = field(default_factory=tuple)

    def all_queries(self) -> list[str]:
        return [*self.queries, *(q for batch in self.requeries for q in batch)]

    def to_post(self) -> Post:
        return Post(
            id=self.id, author=f"user_{self.id}", text=self.text, created_at=self.created_at
        )


# --- shared prose ---------------------------------------------------------------------------

_OPENERS = (
    "On Tuesday",
    "In a statement released this week",
    "Speaking to reporters",
    "According to figures seen by this publication",
    "In an interview",
    "At a public hearing last month",
    "Earlier this year",
    "In a briefing for journalists",
    "Later the same day",
    "In its annual report",
    "During a radio programme on Sunday",
    "In written evidence to a committee",
    "In a post on its website",
    "At a community meeting on Thursday evening",
    "When asked for comment",
)
_SUBJECTS = (
    "a spokesperson for {org}",
    "officials",
    "two senior researchers",
    "a local councillor",
    "the opposition's spokesperson",
    "independent analysts",
    "a group of residents",
    "the regional director",
    "representatives of several charities",
    "the chair of the scrutiny committee",
    "an economist at the university",
    "staff at the agency",
    "volunteers who run a helpline",
    "a retired engineer who follows the issue closely",
    "the press office",
)
_PREDICATES = (
    "said the public deserved clear information about {topic}",
    "noted that the discussion online had moved faster than the official updates",
    "promised to publish the underlying data in full",
    "warned against sharing screenshots without checking where they came from",
    "said more questions had arrived in the past week than in the whole previous month",
    "explained that the review followed the same method as in previous years",
    "said they had received hundreds of messages from worried members of the public",
    "acknowledged that earlier guidance could have been written more plainly",
    "described the response so far as measured and proportionate",
    "said a fuller report would follow before the end of the season",
    "pointed out that similar rumours had circulated several times before",
    "called for calm and asked people to rely on official channels",
    "said the figures were broadly consistent with those published last year",
    "stressed that no decision had been taken behind closed doors",
    "said staff had spent several days answering calls about {topic}",
    "declined to comment on individual cases",
    "said the questions raised were reasonable and deserved a proper answer",
    "added that the information would be translated into several languages",
    "said it was too early to draw firm conclusions about long-term trends",
    "noted that posts about {topic} had been shared widely in messaging groups",
    "suggested that schools and libraries could help explain the facts",
    "confirmed that the next scheduled update is due in the spring",
    "said that volunteers had been trained to answer the most common questions",
    "argued that the debate showed how much trust in public information matters",
    "said the matter would be discussed again at the next council meeting",
)
_SUBHEADS = (
    "What we know",
    "What the figures show",
    "Background",
    "Reaction",
    "What happens next",
    "How we checked",
    "The wider picture",
    "Questions and answers",
)
_BOILERPLATE = (
    "Sign up for the {org} morning briefing: the day's most important stories, delivered to "
    "your inbox before breakfast. You can unsubscribe at any time, and we will never share your "
    "email address with advertisers or other third parties.",
    "This article was amended to correct the spelling of a name and the date of a meeting. We "
    "are committed to accuracy; if you spot an error, please contact our readers' editor using "
    "the form at the bottom of this page, and we will review it within two working days.",
    "Related coverage: our reporters have followed this story since it began. Read our earlier "
    "explainers, our live blog from the day of the announcement, and the answers to the "
    "questions readers asked us most often in the weeks that followed.",
    "Support independent journalism. {org} is funded by its readers. Every contribution, however "
    "small, helps us keep our reporting open to everyone, with no paywall, and lets our "
    "reporters spend the time that careful checking takes.",
    "Comments on this article are moderated. Please keep the discussion civil and on topic; "
    "comments that include personal attacks, spam, advertising or misleading health advice "
    "will be removed, and repeat offenders will be blocked.",
    "About the author: {author} has covered public affairs for more than a decade and previously "
    "worked as a regional correspondent. Her reporting has won two national awards. You can "
    "follow her work on our website and in our weekly newsletter.",
    "Listen to this article. An audio version read by a synthetic voice is available to "
    "subscribers; the audio may differ slightly from the published text, which remains the "
    "authoritative version of this article.",
    "Photographs in this article are for illustration only and do not show the people or "
    "places described unless this is stated in the caption. Some images have been cropped.",
    "Was this page useful? Tell us how we can improve it. This page is reviewed regularly by "
    "the communications team, and the date of the last review is shown at the top of the page.",
    "Share this page: copy the link, or send it by email. Printing this page will include only "
    "the main content and the list of sources, without the navigation or related links.",
)
_AUTHORS = (
    "Mara Ellison",
    "Tomas Reyne",
    "Ada Kowal",
    "Noor Haddad",
    "Ines Carvel",
    "Jon Aldous",
    "Priya Menon",
    "Lena Vos",
)
_MOST_READ = (
    "Council approves new cycle lanes",
    "Five things to do this weekend",
    "Schools prepare for winter term",
    "Markets steady after rate decision",
    "Local choir wins national prize",
    "Roadworks to close ring road at night",
)

_OFFTOPIC: dict[str, tuple[str, ...]] = {
    "garden": (
        "Autumn is the best time to plant spring bulbs such as tulips and daffodils.",
        "Leaves collected from lawns make a rich compost after a year in a wire cage.",
        "Gardeners are advised to protect young shrubs from the first frosts with fleece.",
        "Raised beds warm up earlier in spring and drain better in wet weather.",
        "Pruning fruit trees in winter encourages a better harvest the following year.",
        "Bird feeders should be cleaned regularly to stop disease spreading between visitors.",
    ),
    "transport": (
        "The winter timetable adds two early trains on weekdays between the coast and the city.",
        "Ticket machines at six stations will be replaced over the coming months.",
        "The ring road will close overnight for resurfacing in three stages.",
        "Bus passes for pensioners will be valid on the new express routes.",
        "Cycle parking at the main station has been doubled to 800 spaces.",
        "Passengers can now plan journeys across all operators in a single app.",
    ),
    "sport": (
        "The city football club won its third match in a row on Saturday.",
        "The new swimming pool will host the regional championships next summer.",
        "Volunteers are needed to marshal the half marathon in March.",
        "The women's rugby team has reached the cup semi-final for the first time.",
        "Tennis courts in the park will be resurfaced before the spring season.",
        "Junior leagues report record numbers of players signing up this year.",
    ),
    "food": (
        "A slow-cooked stew of beans, carrots and barley makes an easy winter supper.",
        "Farmers' markets return to the main square every Saturday morning.",
        "The bakery on the high street has won an award for its sourdough.",
        "Seasonal apples keep for months in a cool, dark and airy place.",
        "A new food festival will celebrate local cheese makers in the spring.",
        "Chefs recommend toasting spices briefly before adding them to a sauce.",
    ),
}


# --- page builder -----------------------------------------------------------------------------


def _rng(url: str) -> random.Random:
    seed = int.from_bytes(hashlib.sha256(url.encode()).digest()[:8], "big")
    return random.Random(seed)  # a fixed, per-page seed: the bench is reproducible


def _generic(rng: random.Random, org: str, topic: str, used: set[tuple[int, int, int]]) -> str:
    while True:
        pick = (
            rng.randrange(len(_OPENERS)),
            rng.randrange(len(_SUBJECTS)),
            rng.randrange(len(_PREDICATES)),
        )
        if pick not in used:
            used.add(pick)
            break
    opener, subject, predicate = (
        _OPENERS[pick[0]],
        _SUBJECTS[pick[1]].format(org=org),
        _PREDICATES[pick[2]].format(topic=topic),
    )
    return f"{opener}, {subject} {predicate}."


def _paragraphs(page: FixturePage) -> list[tuple[str, str]]:
    """The article body as (kind, text) pairs, kind "p" or "h2"."""
    rng = _rng(page.url)
    org, topic = page.publisher.name, page.topic
    author = _AUTHORS[rng.randrange(len(_AUTHORS))]
    used: set[tuple[int, int, int]] = set()
    facts = list(page.facts)
    rng.shuffle(facts)
    lead = [*page.key, *facts[:2]]
    facts = facts[2:]
    body: list[tuple[str, str]] = [("p", " ".join(lead))]
    boiler = list(_BOILERPLATE)
    rng.shuffle(boiler)
    boiler_slots = {4: boiler[0], 9: boiler[1], 15: boiler[2]}
    subheads = list(_SUBHEADS)
    rng.shuffle(subheads)
    words = len(body[0][1].split())
    n = 1
    while words < page.words:
        if n in boiler_slots:
            text = boiler_slots[n].format(org=org, author=author)
        elif facts and rng.random() < 0.6:
            take = facts[: rng.randint(1, 2)]
            facts = facts[len(take) :]
            text = " ".join([*take, _generic(rng, org, topic, used)])
        else:
            text = " ".join(_generic(rng, org, topic, used) for _ in range(rng.randint(3, 5)))
        if n % 5 == 3 and subheads:
            body.append(("h2", subheads.pop()))
        body.append(("p", text))
        words += len(text.split())
        n += 1
    body.append(("p", boiler[3].format(org=org, author=author)))
    body.append(("p", boiler[4].format(org=org, author=author)))
    return body


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@cache
def page_html(url: str) -> str:
    page = page_by_url(url)
    if page is None:
        raise KeyError(url)
    pub = page.publisher
    meta = (
        f'<meta property="article:published_time" content="{page.published.isoformat()}">'
        if page.published
        else ""
    )
    dateline = page.published.strftime("%d %B %Y") if page.published else "Reviewed regularly"
    author = _AUTHORS[_rng(page.url).randrange(len(_AUTHORS))]
    article = "\n".join(
        f"<h2>{_html_escape(t)}</h2>" if kind == "h2" else f"<p>{_html_escape(t)}</p>"
        for kind, t in _paragraphs(page)
    )
    most_read = "".join(f'<li><a href="/read/{i}">{t}</a></li>' for i, t in enumerate(_MOST_READ))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_html_escape(page.title)} | {pub.name}</title>
{meta}
<meta name="description" content="{_html_escape(page.facts[0] if page.facts else page.title)}">
</head><body>
<header><div class="logo">{pub.name}</div><nav><ul>
<li><a href="/">Home</a></li><li><a href="/{pub.section}">{pub.section.title()}</a></li>
<li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li></ul></nav></header>
<div class="cookie-banner"><p>We use cookies to improve your experience and to measure how our
site is used. By continuing you agree to our cookie policy.</p><button>Accept</button></div>
<main><article>
<h1>{_html_escape(page.title)}</h1>
<p class="byline">By {author} | {dateline}</p>
{article}
</article>
<aside><h3>Most read</h3><ul>{most_read}</ul></aside>
</main>
<footer><p>Copyright 2026 {pub.name}. All rights reserved.</p>
<p><a href="/privacy">Privacy</a> | <a href="/terms">Terms</a> | <a href="/cookies">Cookies</a></p>
</footer></body></html>
"""


@cache
def document(url: str) -> Document:
    """The page as the real extractor reads it (computed once per process)."""
    return extract_document(url, page_html(url), "text/html; charset=utf-8")


# --- the posts --------------------------------------------------------------------------------
# One TOML file per scenario in bench/data/scenarios/ (named fields, prose as data); this code
# only validates them and builds the records the generator and the fake world read.

SCENARIO_DIR = Path(__file__).resolve().parent / "data" / "scenarios"
_DEFAULT_PUBLISHED = "2026-01-01T09:00:00"


class _PageSpec(BaseModel):
    """A page as a scenario file writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str
    slug: str
    title: str
    stance: Stance
    key: tuple[str, ...] = ()  # sentences a model would quote
    found_by: tuple[int, ...] = (0,)  # indices into the post's queries, requeries after them
    published: str = _DEFAULT_PUBLISHED
    undated: bool = False  # the page carries no publication date
    offtopic: str = ""  # a key of _OFFTOPIC for pages about something else
    words: int | None = None  # body length; drawn from the page's own seed when absent


class _PostSpec(BaseModel):
    """A scenario file: the post, what a model would say about it, and the pages found."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    scenario: str
    created: str
    text: str
    topic: str = ""
    reason: str = ""  # why the post is not checkable; empty when it is
    reply: str = ""
    claims: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    requeries: tuple[tuple[str, ...], ...] = ()
    facts: tuple[str, ...] = ()
    pages: tuple[_PageSpec, ...] = ()


def _same_names(record: type, spec: type[BaseModel]) -> set[str]:
    return {f.name for f in fields(record)} & spec.model_fields.keys()


# Fields a scenario file writes as the fixture keeps them (the others are derived).
_PAGE_AS_WRITTEN = _same_names(FixturePage, _PageSpec) - {"published", "words"}
_POST_AS_WRITTEN = _same_names(FixturePost, _PostSpec) - {"pages"}


def _date(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def _page(spec: _PageSpec, post: _PostSpec) -> FixturePage:
    pub = _BY_DOMAIN[spec.domain]
    url = f"http://{spec.domain}/{pub.section}/{spec.slug}"
    return FixturePage(
        **spec.model_dump(include=_PAGE_AS_WRITTEN),
        url=url,
        publisher=pub,
        published=None if spec.undated else _date(spec.published),
        facts=_OFFTOPIC[spec.offtopic] if spec.offtopic else post.facts,
        topic=spec.offtopic or post.topic,
        words=spec.words or _rng(url).randint(550, 2400),
    )


def load_post(path: Path) -> FixturePost:
    """One scenario file as a FixturePost; a malformed file fails with its path and field."""
    with path.open("rb") as handle:
        spec = _PostSpec.model_validate(tomllib.load(handle))
    return FixturePost(
        **spec.model_dump(include=_POST_AS_WRITTEN),
        created_at=_date(spec.created),
        checkable=not spec.reason,
        pages=tuple(_page(p, spec) for p in spec.pages),
    )


POSTS: tuple[FixturePost, ...] = tuple(
    load_post(path) for path in sorted(SCENARIO_DIR.glob("*.toml"))
)


# --- lookups ----------------------------------------------------------------------------------

_PAGES: dict[str, FixturePage] = {page.url: page for post in POSTS for page in post.pages}


def page_by_url(url: str) -> FixturePage | None:
    return _PAGES.get(url)


def all_pages() -> list[FixturePage]:
    return list(_PAGES.values())


def post_in(text: str) -> FixturePost | None:
    """The fixture post whose text appears in `text` (a prompt), if any."""
    for post in POSTS:
        if post.text in text:
            return post
    return None
