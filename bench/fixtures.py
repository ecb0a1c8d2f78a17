"""The benchmark world: 20 social posts and the web pages about them, all written for this bench.

Each post comes with what a model would say about it (claims, queries, a reply) and the pages a
search engine would find for each query, on fictional `.example` publishers in all three tiers.
The mix is meant to look like a week of a fact-checker's queue, not to flatter the pipeline:

* 8 posts settled by the High tier alone (two High pages refute: the stop rule);
* 4 posts that need the Medium (or Low) tier, because High has one refuting page or none;
* 3 posts whose first round finds only background pages, so a second round (requery) is needed;
* 1 post misleading (context only), 1 refuted by a single page plus context (no stop rule, so
  every tier is read), 1 true post (supported), 1 with no evidence after three rounds,
  1 opinion (not checkable).

Pages are news articles and official pages of 600-2,500 words, generated deterministically from
sentences written here: a lead with the page's key sentences, topic paragraphs, general
reporting, and the boilerplate real articles carry (newsletter plugs, corrections notes, author
bios, comment rules), inside a page with navigation, cookie banner and footer. A page's `stance`
is what a model reading its key sentences would answer; "none" pages are on the topic but settle
nothing, "offtopic" pages share a word with the query and nothing else.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Literal

from pipeline.extract import extract_document
from pipeline.records import Document, Post

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


def _date(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value).replace(tzinfo=UTC) if value else None


@dataclass(frozen=True)
class _P:
    """Shorthand for a page inside a post definition."""

    domain: str
    slug: str
    title: str
    stance: Stance
    key: tuple[str, ...] = ()
    q: tuple[int, ...] = (0,)
    date: str | None = "2026-01-01T09:00:00"
    offtopic: str = ""  # a key of _OFFTOPIC for pages about something else
    words: int | None = None


def _post(
    id: str,
    scenario: str,
    created: str,
    text: str,
    *,
    topic: str = "",
    claims: tuple[str, ...] = (),
    questions: tuple[str, ...] = (),
    queries: tuple[str, ...] = (),
    requeries: tuple[tuple[str, ...], ...] = (),
    reply: str = "",
    facts: tuple[str, ...] = (),
    pages: tuple[_P, ...] = (),
    reason: str = "",
) -> FixturePost:
    built = []
    for p in pages:
        pub = _BY_DOMAIN[p.domain]
        published = _date(p.date)
        url = f"http://{p.domain}/{pub.section}/{p.slug}"
        rng = _rng(url)
        built.append(
            FixturePage(
                url=url,
                publisher=pub,
                title=p.title,
                stance=p.stance,
                key=p.key,
                found_by=p.q,
                published=published,
                facts=_OFFTOPIC[p.offtopic] if p.offtopic else facts,
                topic=p.offtopic or topic,
                words=p.words or rng.randint(550, 2400),
            )
        )
    return FixturePost(
        id=id,
        scenario=scenario,
        text=text,
        created_at=datetime.fromisoformat(created).replace(tzinfo=UTC),
        checkable=not reason,
        claims=claims,
        questions=questions,
        queries=queries,
        requeries=requeries,
        reply=reply,
        reason=reason,
        pages=tuple(built),
    )


POSTS: tuple[FixturePost, ...] = (
    _post(
        "p01",
        "high",
        "2026-11-10T08:00:00",
        "Doctors won't tell you this: hot lemon water every hour kills the flu virus in your "
        "throat before it can spread. Share before it's deleted!",
        topic="the lemon water claim",
        claims=("Drinking hot lemon water every hour kills the flu virus in the throat.",),
        questions=(
            "Can lemon water or hot drinks kill influenza viruses?",
            "Where does the influenza virus multiply in the body?",
        ),
        queries=(
            "lemon water kills flu virus",
            "hot drinks influenza throat evidence",
            "does lemon cure flu",
        ),
        reply="Hot lemon water does not kill flu viruses: they multiply inside airway cells "
        "that a drink never reaches. Vaccination and rest are what help.",
        facts=(
            "Influenza viruses infect the cells lining the nose, throat and lungs and multiply "
            "inside them.",
            "A drink passes through the throat in a few seconds and does not reach the cells "
            "where the virus replicates.",
            "Warm drinks can soothe a sore throat and help people stay hydrated while they are "
            "ill.",
            "Lemons contain vitamin C, but studies have not shown that extra vitamin C prevents "
            "or cures influenza in the general population.",
            "Seasonal flu vaccination remains the most effective way to reduce the risk of "
            "severe illness.",
            "People with flu are advised to rest, drink fluids and stay at home until the fever "
            "has gone.",
            "Antiviral medicines prescribed by a doctor can shorten the illness when taken early.",
            "Claims about home remedies for flu circulate every winter, often with the same "
            "wording.",
        ),
        pages=(
            _P(
                "health-ministry.example",
                "lemon-water-flu",
                "Does lemon water kill the flu virus?",
                "refutes",
                (
                    "There is no evidence that lemon water, hot or cold, kills influenza viruses "
                    "in the throat or anywhere else in the body.",
                ),
                (0, 1, 2),
                "2026-01-14T09:00:00",
            ),
            _P(
                "science-academy.example",
                "hot-drinks-viruses",
                "Hot drinks and viruses: what the research says",
                "refutes",
                (
                    "Drinking hot liquids does not destroy influenza viruses, because the virus "
                    "multiplies inside airway cells that a drink never reaches.",
                ),
                (0, 1),
                "2025-12-02T10:00:00",
            ),
            _P(
                "wire-agency.example",
                "flu-season-hospitals",
                "Flu season starts early as hospitals prepare",
                "none",
                (),
                (1, 2),
                "2026-10-30T07:30:00",
            ),
            _P(
                "daily-courier.example",
                "winter-remedies-tested",
                "Readers' remedies for winter colds, tested",
                "refutes",
                (
                    "Doctors we spoke to said lemon water does not kill the flu virus, although "
                    "it can ease a sore throat.",
                ),
                (0, 2),
                "2026-02-03T12:00:00",
            ),
            _P(
                "metro-tribune.example",
                "vitamin-c-sells-out",
                "Vitamin C supplements sell out as flu cases rise",
                "none",
                (),
                (2,),
                "2026-11-02T15:00:00",
            ),
            _P(
                "viral-digest.example",
                "kitchen-cures",
                "10 kitchen cures grandma swore by",
                "supports",
                (
                    "Hot lemon water flushes the flu virus out of your throat, according to many "
                    "of our readers.",
                ),
                (0,),
                "2026-10-01T18:00:00",
            ),
        ),
    ),
    _post(
        "p02",
        "high",
        "2026-10-11T19:00:00",
        "Hundreds of birds dropped dead in Elmfield park the day after the new 5G mast was "
        "switched on. Coincidence? Radiation from 5G is killing wildlife.",
        topic="the dead birds in Elmfield",
        claims=(
            "Radiation from a newly switched-on 5G mast killed hundreds of birds in Elmfield park.",
        ),
        questions=(
            "What killed the birds found in Elmfield park?",
            "Was the 5G mast near the park switched on?",
            "Can 5G radio signals harm birds?",
        ),
        queries=(
            "5G mast birds dead Elmfield",
            "5G radiation kills birds",
            "Elmfield park dead birds cause",
        ),
        reply="The Elmfield birds were not killed by 5G: tests found avian influenza, and the "
        "mast was not yet in public use that day. 5G signals are far below harmful levels.",
        facts=(
            "Radio signals used by 5G networks are non-ionising and are emitted at power levels "
            "far below international exposure limits.",
            "Wildlife vets examined the dead starlings found in Elmfield park in early October.",
            "Mass deaths of birds are usually caused by disease, poisoning, storms or collisions.",
            "The mobile operator said the mast near the park was still being tested and had not "
            "carried public traffic.",
            "Starlings gather in large flocks in autumn, so a single cause can affect many birds "
            "at once.",
            "The regional environment office asked residents not to touch dead birds and to "
            "report them.",
            "Laboratory tests on dead birds look for avian influenza, toxins and injuries.",
            "Claims linking mobile networks to bird deaths first spread in 2018 and have been "
            "investigated several times.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "elmfield-starlings-avian-flu",
                "Avian flu confirmed in Elmfield starlings",
                "refutes",
                (
                    "Laboratory tests confirmed that the starlings found dead in Elmfield park "
                    "died of avian influenza, not radiation.",
                ),
                (0, 2),
                "2026-10-12T11:00:00",
            ),
            _P(
                "science-academy.example",
                "5g-wildlife-evidence",
                "5G and wildlife: the evidence",
                "refutes",
                (
                    "There is no scientific evidence that radio waves from 5G masts harm or kill "
                    "birds.",
                ),
                (1,),
                "2025-06-20T09:00:00",
            ),
            _P(
                "health-ministry.example",
                "radio-frequency-questions",
                "Radio frequency exposure: questions and answers",
                "none",
                (),
                (1,),
                None,
            ),
            _P(
                "valley-gazette.example",
                "dead-birds-park",
                "Residents shocked by dead birds in park",
                "none",
                (),
                (0, 2),
                "2026-10-10T17:00:00",
            ),
            _P(
                "tech-weekly.example",
                "elmfield-mast-testing",
                "Operator confirms Elmfield 5G mast was still in testing",
                "refutes",
                (
                    "The operator confirmed the mast near Elmfield park was not switched on for "
                    "public use until nine days after the birds were found.",
                ),
                (0,),
                "2026-10-14T08:00:00",
            ),
            _P(
                "trendwire.example",
                "5g-killing-birds",
                "5G is killing our birds, say campaigners",
                "supports",
                ("Campaigners claim the 5G mast in Elmfield killed hundreds of birds overnight.",),
                (1, 2),
                "2026-10-11T20:00:00",
            ),
            _P(
                "morning-buzz.example",
                "autumn-park-walks",
                "The best parks for autumn walks",
                "offtopic",
                (),
                (2,),
                "2026-09-28T10:00:00",
                offtopic="garden",
            ),
        ),
    ),
    _post(
        "p03",
        "high",
        "2026-07-20T21:00:00",
        "The Apollo moon landing footage was filmed in a studio. Look at the flag waving - "
        "there's no wind on the moon!",
        topic="the moon landing footage",
        claims=(
            "The Apollo moon landing footage was filmed in a studio.",
            "The flag in the footage waves because of wind.",
        ),
        questions=(
            "Why does the flag appear to move in the Apollo footage?",
            "What independent evidence shows the landings happened?",
        ),
        queries=(
            "moon landing flag waving wind",
            "Apollo footage filmed in studio",
            "moon landing hoax evidence",
        ),
        reply="The flag moved only while astronauts twisted its pole into the ground; it hung "
        "from a rod, with no air to stop it swinging. Reflectors left on the Moon are still used.",
        facts=(
            "The Apollo flags were hung from a horizontal rod so that they would stay extended "
            "in the vacuum.",
            "In the footage the flag moves only while astronauts are handling the pole.",
            "Without air, a disturbed flag keeps swinging longer than it would on Earth.",
            "Astronauts left retroreflectors on the lunar surface that observatories still use "
            "to measure the distance to the Moon.",
            "More than 380 kilograms of lunar rock and soil were brought back and studied by "
            "laboratories in many countries.",
            "Independent orbiters have photographed the landing sites, including the descent "
            "stages and the astronauts' tracks.",
            "Dust kicked up by the rover falls in clean arcs, as expected in low gravity without "
            "air.",
            "Moon landing conspiracy theories have circulated since the 1970s.",
        ),
        pages=(
            _P(
                "space-agency.example",
                "flag-wave",
                "Why did the flag appear to wave?",
                "refutes",
                (
                    "The flag appeared to wave only because the astronauts were twisting the "
                    "pole into the ground; there was no wind.",
                ),
                (0, 2),
                "2024-07-20T12:00:00",
            ),
            _P(
                "science-academy.example",
                "apollo-sites-evidence",
                "Evidence from the Apollo landing sites",
                "refutes",
                (
                    "Retroreflectors placed by Apollo astronauts are still used today, which "
                    "would be impossible if the landings had been filmed in a studio.",
                ),
                (1, 2),
                "2025-03-11T09:00:00",
            ),
            _P(
                "factcheck-desk.example",
                "moon-hoax-resurfaces",
                "Moon landing hoax claim resurfaces on anniversary",
                "refutes",
                ("The claim that the moon landing footage was filmed in a studio is false.",),
                (1, 2),
                "2026-07-21T08:00:00",
            ),
            _P(
                "metro-tribune.example",
                "moon-myth-persists",
                "Why the moon hoax myth persists",
                "none",
                (),
                (2,),
                "2025-07-20T10:00:00",
            ),
            _P(
                "tech-weekly.example",
                "orbiter-apollo-tracks",
                "Lunar orbiter images show Apollo tracks",
                "refutes",
                (
                    "Photographs taken from lunar orbit show the Apollo descent stages and the "
                    "tracks left by the astronauts.",
                ),
                (1,),
                "2025-11-30T09:00:00",
            ),
            _P(
                "viral-digest.example",
                "moon-photos-hidden",
                "Shocking moon photos they don't want you to see",
                "supports",
                ("The waving flag proves the moon landing was staged in a studio.",),
                (0,),
                "2026-07-15T22:00:00",
            ),
        ),
    ),
    _post(
        "p04",
        "lower_tiers",
        "2026-10-06T09:00:00",
        "From next month you won't be able to pay with cash anywhere in Port Avalon. The "
        "council has banned it to track everyone's spending.",
        topic="the cash payment rumour",
        claims=(
            "Port Avalon council has banned cash payments everywhere in the city from next month.",
        ),
        questions=(
            "What did Port Avalon council decide about cash?",
            "Can a council ban shops from accepting cash?",
        ),
        queries=(
            "Port Avalon cash ban",
            "Port Avalon council cash payments",
            "city bans cash payments next month",
        ),
        reply="Port Avalon has not banned cash. The council is only moving its own parking "
        "meters to card and app payments; shops can still take cash.",
        facts=(
            "Port Avalon council voted in September to replace coin-operated parking meters "
            "with card and app payments.",
            "The change applies only to the council's own parking meters.",
            "Shops, markets and other businesses in the city decide for themselves which "
            "payments they accept.",
            "Under national law, councils have no power to ban private businesses from accepting "
            "cash.",
            "The council said the old meters were expensive to empty and often broken.",
            "Residents without a bank card can buy parking vouchers at libraries.",
            "Consumer groups have asked for cash to remain available for people who rely on it.",
            "Several cities have reduced the number of cash machines in recent years.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "port-avalon-meters-cashless",
                "Port Avalon parking meters to go cashless",
                "refutes",
                (
                    "The council's decision covers only its own parking meters and does not "
                    "stop shops from accepting cash.",
                ),
                (0, 1),
                "2026-09-18T10:00:00",
            ),
            _P(
                "stats-office.example",
                "payment-methods-survey",
                "Payment methods survey 2025",
                "none",
                (),
                (2,),
                "2026-02-01T09:30:00",
            ),
            _P(
                "harbour-herald.example",
                "no-cash-ban",
                "No, Port Avalon is not banning cash",
                "refutes",
                (
                    "A council spokesperson said there was no ban on cash in Port Avalon and "
                    "that businesses could accept whatever payments they chose.",
                ),
                (0, 1),
                "2026-10-05T14:00:00",
            ),
            _P(
                "daily-courier.example",
                "cashless-meters-drivers",
                "What the cashless meters mean for drivers",
                "context",
                (
                    "From next month, drivers will need a card or the parking app to pay at "
                    "council meters, or a voucher from a library.",
                ),
                (1,),
                "2026-09-20T08:00:00",
            ),
            _P(
                "morning-buzz.example",
                "port-avalon-cashless",
                "Port Avalon goes cashless - are you ready?",
                "supports",
                ("Port Avalon will become a completely cashless city next month.",),
                (0, 2),
                "2026-10-04T19:00:00",
            ),
            _P(
                "trendwire.example",
                "ring-road-closures",
                "Ring road closures this winter",
                "offtopic",
                (),
                (2,),
                "2026-09-25T07:00:00",
                offtopic="transport",
            ),
        ),
    ),
    _post(
        "p05",
        "high",
        "2026-10-03T13:00:00",
        "The new flu vaccine contains microchips small enough to pass through a needle. "
        "They're using it to track us. Wake up.",
        topic="the vaccine microchip rumour",
        claims=("The new flu vaccine contains tracking microchips.",),
        questions=(
            "What are the ingredients of the flu vaccine?",
            "Could a chip pass through a vaccine needle and track someone?",
        ),
        queries=(
            "flu vaccine microchip",
            "vaccine tracking chip needle",
            "flu vaccine ingredients list",
        ),
        reply="Vaccines contain no microchips: the ingredients are published and every batch is "
        "tested, and no chip could track anyone without a power source and antenna.",
        facts=(
            "Every vaccine batch is tested by the national medicines regulator before it is "
            "released.",
            "The full list of ingredients of each vaccine is published in its product "
            "information leaflet.",
            "Flu vaccines contain inactivated virus or purified proteins, water, salts and small "
            "amounts of stabilisers.",
            "A tracking device needs a power source and an antenna far larger than a vaccine "
            "needle could deliver.",
            "Vaccine needles used for adults have an internal diameter of a fraction of a "
            "millimetre.",
            "The microchip rumour has been checked by fact-checkers in many countries since 2020.",
            "Health workers are advised to answer questions about vaccine ingredients openly.",
            "The regulator publishes reports on side effects every month.",
        ),
        pages=(
            _P(
                "health-ministry.example",
                "flu-vaccine-ingredients",
                "What is in the flu vaccine?",
                "refutes",
                ("Flu vaccines do not contain microchips or any electronic components.",),
                (0, 2),
                None,
            ),
            _P(
                "factcheck-desk.example",
                "vaccines-cannot-track",
                "No, vaccines cannot track you",
                "refutes",
                (
                    "No microchip small enough to pass through a vaccine needle could transmit "
                    "a location, because it would have no power source or antenna.",
                ),
                (0, 1),
                "2026-10-02T09:00:00",
            ),
            _P(
                "science-academy.example",
                "vaccine-batch-testing",
                "How vaccine batches are tested",
                "none",
                (),
                (2,),
                "2025-09-09T10:00:00",
            ),
            _P(
                "metro-tribune.example",
                "vaccine-rumours-groups",
                "Vaccine rumours spread in messaging groups",
                "none",
                (),
                (1,),
                "2026-09-29T16:00:00",
            ),
            _P(
                "daily-courier.example",
                "flu-jab-appointments",
                "Flu jab appointments open this week",
                "none",
                (),
                (2,),
                "2026-09-15T08:00:00",
            ),
            _P(
                "trendwire.example",
                "chips-in-jabs",
                "Insider: what they put in the jabs",
                "supports",
                (
                    "An insider says the new vaccines contain chips that can be read by phone "
                    "masts.",
                ),
                (0, 1),
                "2026-09-30T23:00:00",
            ),
        ),
    ),
    _post(
        "p06",
        "context",
        "2026-05-12T10:00:00",
        "Eat carrots every day and you'll be able to see in the dark. That's how RAF pilots "
        "shot down bombers at night.",
        topic="carrots and eyesight",
        claims=(
            "Eating carrots lets people see in the dark.",
            "Pilots shot down bombers at night because they ate carrots.",
        ),
        questions=(
            "Does vitamin A improve night vision?",
            "Where does the wartime carrot story come from?",
        ),
        queries=("carrots night vision", "RAF pilots carrots myth", "vitamin A eyesight dark"),
        reply="Carrots supply vitamin A, which only restores night vision in people who lack "
        "it. The wartime pilot story was cover for airborne radar.",
        facts=(
            "The body turns beta-carotene from carrots into vitamin A.",
            "Vitamin A is part of the pigment the eye uses to see in dim light.",
            "Vitamin A deficiency is a leading cause of preventable blindness in children "
            "worldwide.",
            "People who already get enough vitamin A do not gain better night vision from eating "
            "more.",
            "During the war, night fighter crews used a new airborne radar that was kept secret.",
            "Posters at the time encouraged people to eat carrots to see better in the blackout.",
            "Liver, eggs and dairy products also contain vitamin A.",
            "Very high doses of vitamin A supplements can be harmful.",
        ),
        pages=(
            _P(
                "health-ministry.example",
                "vitamin-a-eye-health",
                "Vitamin A and eye health",
                "context",
                (
                    "Vitamin A is needed for vision in dim light, and a lack of it causes night "
                    "blindness, but extra vitamin A does not improve eyesight in people who "
                    "already get enough.",
                ),
                (0, 2),
                "2025-11-20T09:00:00",
            ),
            _P(
                "wire-agency.example",
                "wartime-carrot-story",
                "The wartime carrot story",
                "context",
                (
                    "The story that pilots saw in the dark thanks to carrots was spread during "
                    "the war to hide the use of airborne radar.",
                ),
                (1,),
                "2024-05-08T10:00:00",
            ),
            _P(
                "valley-gazette.example",
                "grow-carrots",
                "Grow your own carrots this spring",
                "offtopic",
                (),
                (0,),
                "2026-03-01T10:00:00",
                offtopic="garden",
            ),
            _P(
                "harbour-herald.example",
                "eyesight-myths",
                "Myths about eyesight, explained",
                "context",
                (
                    "Carrots can help prevent night blindness in people with a vitamin A "
                    "deficiency, but they will not give anyone the ability to see in the dark.",
                ),
                (0, 2),
                "2026-01-22T11:00:00",
            ),
            _P(
                "morning-buzz.example",
                "winter-stew",
                "A warming winter stew",
                "offtopic",
                (),
                (0,),
                "2026-01-05T12:00:00",
                offtopic="food",
            ),
        ),
    ),
    _post(
        "p07",
        "high",
        "2026-10-17T07:00:00",
        "Unemployment in Norland TRIPLED last year. The government is hiding the real numbers.",
        topic="the unemployment figures",
        claims=("Unemployment in Norland tripled last year.",),
        questions=(
            "How much did Norland's unemployment rate change last year?",
            "How is unemployment measured?",
        ),
        queries=(
            "Norland unemployment rate last year",
            "Norland unemployment tripled",
            "Norland labour market statistics",
        ),
        reply="Norland's unemployment rate did not triple: official figures show it rose from "
        "4.1% to 4.6% last year, and the survey's method and data are public.",
        facts=(
            "The unemployment rate is measured by the quarterly labour force survey of about "
            "40,000 households.",
            "Norland's unemployment rate rose from 4.1 per cent to 4.6 per cent over the last "
            "year.",
            "The number of people in work reached a record high in the third quarter.",
            "The survey follows the international definition of unemployment.",
            "Claims for jobseeker benefits rose more slowly than the survey measure.",
            "Youth unemployment rose faster than the overall rate, to 11.2 per cent.",
            "The statistics office publishes its methods and revisions on its website.",
            "Economists expect the unemployment rate to stabilise next year.",
        ),
        pages=(
            _P(
                "stats-office.example",
                "labour-market-october",
                "Labour market overview: October 2026",
                "refutes",
                ("The unemployment rate was 4.6 per cent, up from 4.1 per cent a year earlier.",),
                (0, 2),
                "2026-10-15T09:30:00",
            ),
            _P(
                "wire-agency.example",
                "unemployment-edges-up",
                "Unemployment edges up as employment hits record",
                "refutes",
                (
                    "Unemployment rose by half a percentage point last year, far from the "
                    "tripling claimed on social media.",
                ),
                (0, 1),
                "2026-10-16T10:00:00",
            ),
            _P(
                "stats-office.example",
                "measuring-unemployment",
                "How we measure unemployment",
                "none",
                (),
                (2,),
                None,
            ),
            _P(
                "metro-tribune.example",
                "job-market-cools",
                "Job market cools, economists say",
                "none",
                (),
                (0,),
                "2026-10-16T15:00:00",
            ),
            _P(
                "daily-courier.example",
                "young-people-jobs",
                "Young people hit hardest as jobs market slows",
                "context",
                ("Youth unemployment rose faster than the overall rate, to 11.2 per cent.",),
                (2,),
                "2026-10-16T18:00:00",
            ),
            _P(
                "morning-buzz.example",
                "real-unemployment",
                "The REAL unemployment rate, according to insiders",
                "supports",
                ("Insiders say the real unemployment rate in Norland is now over 13 per cent.",),
                (1,),
                "2026-10-16T21:00:00",
            ),
        ),
    ),
    _post(
        "p08",
        "high",
        "2026-07-09T16:00:00",
        "Yesterday Norland hit 52°C in Southport, the hottest temperature ever recorded on "
        "Earth. The media is silent!",
        topic="the Southport temperature",
        claims=(
            "Southport in Norland recorded 52°C yesterday.",
            "This was the hottest temperature ever recorded on Earth.",
        ),
        questions=(
            "What was the official temperature in Southport?",
            "What is the world temperature record?",
        ),
        queries=(
            "Southport 52 degrees record",
            "Norland temperature record",
            "hottest temperature ever recorded",
        ),
        reply="Southport's highest official reading yesterday was 38.7°C; the 52°C figure comes "
        "from a car dashboard photo. The world record is 56.7°C.",
        facts=(
            "Official temperatures are measured in the shade, in ventilated screens, about 1.5 "
            "metres above grass.",
            "Car dashboard thermometers and phone apps often show readings far above the air "
            "temperature in direct sun.",
            "Norland's national temperature record is 41.2 degrees, set in 2022.",
            "The highest air temperature recognised by the World Meteorological Organization is "
            "56.7 degrees, recorded in 1913.",
            "Heat warnings remain in force for the southern coast until the weekend.",
            "Hospitals reported more patients with heat exhaustion than usual.",
            "Forecasters expect cooler air from the west next week.",
            "Night-time temperatures in Southport did not fall below 24 degrees.",
        ),
        pages=(
            _P(
                "met-service.example",
                "heat-update-highest",
                "Heat update: highest temperatures yesterday",
                "refutes",
                (
                    "The highest temperature recorded in Southport yesterday was 38.7 degrees "
                    "Celsius, well below the national record.",
                ),
                (0, 1),
                "2026-07-09T09:00:00",
            ),
            _P(
                "wire-agency.example",
                "viral-52c-dashboard",
                "Viral 52C photo shows a car dashboard, not an official reading",
                "refutes",
                (
                    "The 52 degree figure comes from a photo of a car dashboard thermometer, not "
                    "from an official weather station.",
                ),
                (0,),
                "2026-07-09T12:00:00",
            ),
            _P(
                "science-academy.example",
                "heat-records-explained",
                "Extreme heat records explained",
                "context",
                (
                    "The highest air temperature recognised by the World Meteorological "
                    "Organization is 56.7 degrees, recorded in 1913.",
                ),
                (2,),
                "2025-08-01T09:00:00",
            ),
            _P(
                "harbour-herald.example",
                "beaches-packed",
                "Beaches packed as heatwave continues",
                "none",
                (),
                (1,),
                "2026-07-08T17:00:00",
            ),
            _P(
                "valley-gazette.example",
                "heat-warning-extended",
                "Heat warning extended to the weekend",
                "none",
                (),
                (1, 2),
                "2026-07-08T19:00:00",
            ),
            _P(
                "viral-digest.example",
                "southport-melts",
                "52C! Southport melts",
                "supports",
                ("Southport hit an incredible 52 degrees yesterday, a new world record.",),
                (0,),
                "2026-07-08T22:00:00",
            ),
        ),
    ),
    _post(
        "p09",
        "lower_tiers",
        "2026-09-07T08:30:00",
        "BREAKING: the Kettle Bridge in Millbrook collapsed this morning with cars on it. "
        "Dozens feared dead.",
        topic="the Kettle Bridge",
        claims=(
            "The Kettle Bridge in Millbrook collapsed with cars on it.",
            "Dozens of people are feared dead after the bridge collapse.",
        ),
        questions=(
            "Did the Kettle Bridge collapse?",
            "Where does the photo of the collapse come from?",
        ),
        queries=(
            "Kettle Bridge Millbrook collapse",
            "Millbrook bridge collapsed cars",
            "Kettle Bridge closed",
        ),
        reply="The Kettle Bridge has not collapsed: it is closed for planned repairs, and the "
        "photo shows a bridge abroad in 2018. No incident was reported.",
        facts=(
            "The Kettle Bridge in Millbrook was closed to traffic on Monday for planned repairs "
            "to its expansion joints.",
            "Engineers inspect the bridge every two years and found wear on two joints this "
            "spring.",
            "The closure is expected to last six weeks, with a signed diversion through the "
            "town centre.",
            "A photograph shared with the claim shows a bridge that collapsed abroad in 2018.",
            "Emergency services said they had received no reports of any incident on the bridge.",
            "Buses are running on a diverted route during the works.",
            "The bridge was opened in 1964 and carries about 12,000 vehicles a day.",
            "The council has published a timetable of the repair works.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "bridge-photo-2018",
                "Photo of collapsed bridge is from 2018, not Millbrook",
                "refutes",
                (
                    "The photograph shows a bridge that collapsed in another country in 2018, "
                    "not the Kettle Bridge in Millbrook.",
                ),
                (0,),
                "2026-09-08T07:00:00",
            ),
            _P(
                "valley-gazette.example",
                "kettle-bridge-repairs",
                "Kettle Bridge closed for six weeks of repairs",
                "refutes",
                (
                    "The Kettle Bridge is closed for planned repairs and has not collapsed, the "
                    "council said.",
                ),
                (0, 1, 2),
                "2026-09-07T10:00:00",
            ),
            _P(
                "harbour-herald.example",
                "millbrook-diversions",
                "Diversions in place as Millbrook bridge shuts",
                "context",
                ("Buses are running on a diverted route while the bridge is closed for repairs.",),
                (2,),
                "2026-09-06T16:00:00",
            ),
            _P(
                "metro-tribune.example",
                "millbrook-traffic",
                "Millbrook traffic slow on first day of closure",
                "none",
                (),
                (1,),
                "2026-09-07T18:00:00",
            ),
            _P(
                "morning-buzz.example",
                "bridge-rumour",
                "Bridge collapse rumour sweeps Millbrook",
                "context",
                (
                    "Residents rushed to the river after a photo of a collapsed bridge spread "
                    "online.",
                ),
                (0,),
                "2026-09-07T12:00:00",
            ),
            _P(
                "trendwire.example",
                "kettle-bridge-down",
                "Kettle Bridge DOWN",
                "supports",
                ("The Kettle Bridge has collapsed with cars on it, witnesses say.",),
                (1,),
                "2026-09-07T08:15:00",
            ),
        ),
    ),
    _post(
        "p10",
        "lower_tiers",
        "2026-11-01T23:00:00",
        "RIP Dana Whitlow. The singer died last night after a car crash, her family confirmed. "
        "Heartbroken.",
        topic="the reports about Dana Whitlow",
        claims=("Singer Dana Whitlow died last night in a car crash.",),
        questions=("Is Dana Whitlow alive?", "Where did the report of her death come from?"),
        queries=("Dana Whitlow died", "Dana Whitlow car crash", "Dana Whitlow news"),
        reply="Dana Whitlow is alive: her management called the death report a hoax, and she "
        "played her Riverton concert as scheduled.",
        facts=(
            "Dana Whitlow performed at the Riverton Arena on Saturday night as scheduled.",
            "Her management described the reports of her death as a cruel hoax.",
            "The fake report was first posted by an account imitating a news website.",
            "Whitlow's tour continues with three more dates this month.",
            "Death hoaxes about celebrities often use invented quotes from family members.",
            "Police said no crash involving the singer had been reported.",
            "The singer's latest album reached the top of the charts in the spring.",
            "Fans shared videos from the concert on Saturday night.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "entertainment-roundup",
                "Entertainment roundup: autumn tours announced",
                "none",
                (),
                (2,),
                "2026-10-20T09:00:00",
            ),
            _P(
                "metro-tribune.example",
                "whitlow-hoax",
                "Dana Whitlow death report is a hoax, management says",
                "refutes",
                (
                    "Dana Whitlow is alive and well, her management said, calling the report of "
                    "her death a cruel hoax.",
                ),
                (0, 1),
                "2026-11-02T08:00:00",
            ),
            _P(
                "daily-courier.example",
                "whitlow-riverton",
                "Whitlow thrills Riverton crowd",
                "refutes",
                ("Whitlow played a two-hour set at the Riverton Arena on Saturday night.",),
                (2,),
                "2026-11-01T23:30:00",
            ),
            _P(
                "tech-weekly.example",
                "fake-news-sites",
                "How fake news sites imitate real ones",
                "context",
                ("The fake report was first posted by an account imitating a news website.",),
                (0,),
                "2026-06-12T09:00:00",
            ),
            _P(
                "viral-digest.example",
                "whitlow-dead",
                "Dana Whitlow dead at 34?",
                "supports",
                ("Dana Whitlow has died in a car crash, her family told us.",),
                (0, 1),
                "2026-11-01T22:00:00",
            ),
            _P(
                "morning-buzz.example",
                "fans-react-hoax",
                "Fans react to Whitlow hoax",
                "refutes",
                ("Fans were relieved to learn that the report of Whitlow's death was a hoax.",),
                (0,),
                "2026-11-02T10:00:00",
            ),
        ),
    ),
    _post(
        "p11",
        "second_round",
        "2026-10-22T09:00:00",
        "A shark swimming in the flooded Central station in Riverton this morning! Stay out of "
        "the water!",
        topic="the flooded station photo",
        claims=("A shark was swimming in the flooded Central station in Riverton.",),
        questions=(
            "Was there a shark in Central station?",
            "Where does the shark photo come from?",
        ),
        queries=(
            "Riverton flood Central station",
            "Riverton flooding today",
            "Riverton station closed water",
        ),
        requeries=(
            (
                "shark photo Riverton station fake",
                "flooded subway shark image hoax",
                "shark picture storm viral",
            ),
        ),
        reply="There was no shark in Riverton's Central station: the image is an edited picture "
        "shared after floods since 2011. The flooding itself is real.",
        facts=(
            "Central station in Riverton was closed on Thursday after heavy rain flooded its "
            "lower platforms.",
            "Pumps removed most of the water within a day and trains resumed on Friday afternoon.",
            "The same shark image has been shared after floods in several countries since 2011.",
            "Image searches show the shark was added to a photograph of a flooded road.",
            "Sharks cannot survive for long in shallow fresh rainwater.",
            "The transit authority asked passengers to check its website before travelling.",
            "Forecasters had issued a warning for heavy rain on Wednesday evening.",
            "Insurance companies said claims for flood damage were rising.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "riverton-station-flooded",
                "Riverton station flooded after record rain",
                "none",
                (),
                (0, 1),
                "2026-10-22T08:00:00",
            ),
            _P(
                "met-service.example",
                "heavy-rain-riverton",
                "Heavy rain warning: Riverton",
                "none",
                (),
                (1,),
                "2026-10-21T12:00:00",
            ),
            _P(
                "harbour-herald.example",
                "trains-resume-central",
                "Trains resume at Central station",
                "none",
                (),
                (2,),
                "2026-10-23T15:00:00",
            ),
            _P(
                "daily-courier.example",
                "flood-clean-up",
                "Flood clean-up continues across Riverton",
                "none",
                (),
                (1, 2),
                "2026-10-22T18:00:00",
            ),
            _P(
                "trendwire.example",
                "winter-timetable",
                "Winter timetable: what changes",
                "offtopic",
                (),
                (0,),
                "2026-10-01T07:00:00",
                offtopic="transport",
            ),
            _P(
                "factcheck-desk.example",
                "shark-station-fake",
                "Shark in flooded station photo is fake",
                "refutes",
                (
                    "The picture of a shark in the flooded station is a fake that has been "
                    "shared after floods around the world since 2011.",
                ),
                (3, 4),
                "2026-10-22T11:00:00",
            ),
            _P(
                "tech-weekly.example",
                "spot-doctored-flood-photo",
                "How to spot a doctored flood photo",
                "refutes",
                ("The shark was digitally added to a photograph of a flooded road.",),
                (4, 5),
                "2025-05-14T09:00:00",
            ),
            _P(
                "morning-buzz.example",
                "shark-riverton",
                "Shark in Riverton station?!",
                "supports",
                ("A shark was filmed swimming in Riverton's flooded Central station.",),
                (3,),
                "2026-10-22T09:30:00",
            ),
        ),
    ),
    _post(
        "p12",
        "second_round",
        "2026-06-11T12:00:00",
        "It's now illegal to collect rainwater in your own garden in Norland. Fines of 5,000 "
        "for a water butt!",
        topic="the rainwater rules",
        claims=(
            "Collecting rainwater in a private garden is now illegal in Norland.",
            "People face fines of 5,000 for using a water butt.",
        ),
        questions=(
            "What do Norland's new water rules cover?",
            "Do households need a licence to collect rainwater?",
        ),
        queries=("Norland rainwater law", "water butt fine", "illegal collect rainwater garden"),
        requeries=(
            (
                "Norland water abstraction rules household rainwater",
                "rainwater harvesting permit Norland households",
                "water butt legal Norland environment office",
            ),
        ),
        reply="Collecting rainwater in your garden is legal in Norland. The new rules cover "
        "large-scale abstraction from rivers and boreholes, not household water butts.",
        facts=(
            "The new water abstraction rules apply to businesses taking more than 20 cubic "
            "metres a day from rivers or boreholes.",
            "Households collecting rainwater from their own roofs do not need a licence.",
            "The environment office encourages gardeners to use water butts during dry summers.",
            "Fines under the abstraction rules apply to unlicensed commercial users.",
            "The rules were introduced after two dry summers lowered river levels.",
            "Farmers' groups asked for more time to apply for licences.",
            "Similar rumours about rainwater bans have circulated in other countries.",
            "A standard water butt holds about 200 litres.",
        ),
        pages=(
            _P(
                "stats-office.example",
                "household-water-use",
                "Water use by households",
                "none",
                (),
                (0,),
                "2026-03-03T09:30:00",
            ),
            _P(
                "valley-gazette.example",
                "gardeners-save-water",
                "Gardeners urged to save water",
                "none",
                (),
                (1, 2),
                "2026-05-28T10:00:00",
            ),
            _P(
                "metro-tribune.example",
                "farmers-water-licences",
                "Farmers face new water licence rules",
                "none",
                (),
                (0,),
                "2026-05-30T12:00:00",
            ),
            _P(
                "morning-buzz.example",
                "bulbs-autumn",
                "Plant these bulbs now",
                "offtopic",
                (),
                (1,),
                "2026-05-01T10:00:00",
                offtopic="garden",
            ),
            _P(
                "env-office.example",
                "rainwater-rules",
                "Rainwater collection: what the new rules mean",
                "refutes",
                (
                    "Households do not need a licence to collect rainwater from their own roofs, "
                    "and using a water butt remains legal.",
                ),
                (3, 4, 5),
                "2026-06-02T09:00:00",
            ),
            _P(
                "wire-agency.example",
                "rainwater-fines-false",
                "Viral claim about rainwater fines is false",
                "refutes",
                (
                    "The fines apply only to unlicensed commercial abstraction of more than 20 "
                    "cubic metres a day, not to garden water butts.",
                ),
                (3, 5),
                "2026-06-10T14:00:00",
            ),
            _P(
                "daily-courier.example",
                "water-butt-sales",
                "Water butt sales surge in dry spell",
                "none",
                (),
                (4,),
                "2026-06-05T08:00:00",
            ),
        ),
    ),
    _post(
        "p13",
        "supported",
        "2026-11-15T11:00:00",
        "The Millbrook public library reopened today after two years of renovation, with a new "
        "children's wing.",
        topic="the Millbrook library",
        claims=(
            "Millbrook public library reopened after two years of renovation.",
            "The renovated library has a new children's wing.",
        ),
        questions=("Has Millbrook library reopened?", "What does the renovated library include?"),
        queries=(
            "Millbrook library reopens",
            "Millbrook library renovation children's wing",
            "Millbrook library opening date",
        ),
        reply="Correct: Millbrook library has reopened after a two-year renovation, and its new "
        "children's wing is open. Opening hours are now longer on weekdays.",
        facts=(
            "Millbrook library reopened on Saturday after a renovation that began two years ago.",
            "The renovated building includes a new children's wing with a reading garden.",
            "The works cost 4.2 million and were funded by the council and a national grant.",
            "The library's collection was stored in a warehouse during the works.",
            "Opening hours have been extended to eight in the evening on weekdays.",
            "Volunteers will run homework clubs three afternoons a week.",
            "The library building dates from 1911 and is listed for its architecture.",
            "Solar panels on the roof will cover part of the building's electricity use.",
        ),
        pages=(
            _P(
                "stats-office.example",
                "public-libraries-2025",
                "Public library statistics 2025",
                "none",
                (),
                (0,),
                "2026-04-10T09:30:00",
            ),
            _P(
                "valley-gazette.example",
                "library-reopens",
                "Millbrook library reopens with new children's wing",
                "supports",
                (
                    "Millbrook's public library reopened on Saturday after two years of "
                    "renovation, with a new children's wing.",
                ),
                (0, 1),
                "2026-11-14T16:00:00",
            ),
            _P(
                "harbour-herald.example",
                "inside-new-library",
                "Inside the new Millbrook library",
                "supports",
                ("The new children's wing includes a reading garden and a craft room.",),
                (1, 2),
                "2026-11-15T09:00:00",
            ),
            _P(
                "daily-courier.example",
                "library-budget",
                "Library renovation came in over budget",
                "context",
                ("The renovation cost 4.2 million, about ten per cent more than first planned.",),
                (2,),
                "2026-11-13T12:00:00",
            ),
            _P(
                "morning-buzz.example",
                "weekend-sport",
                "Weekend sport round-up",
                "offtopic",
                (),
                (2,),
                "2026-11-14T20:00:00",
                offtopic="sport",
            ),
        ),
    ),
    _post(
        "p14",
        "not_checkable",
        "2026-11-18T20:00:00",
        "Honestly pineapple on pizza is the best thing ever invented and I will not be taking "
        "questions.",
        reason="an opinion about food, with no factual claim",
    ),
    _post(
        "p15",
        "no_evidence",
        "2026-10-28T14:00:00",
        "There's a secret tunnel connecting the Norland parliament to the central bank. MPs use "
        "it to avoid protesters.",
        topic="the parliament building",
        claims=(
            "A secret tunnel connects the Norland parliament to the central bank.",
            "MPs use a tunnel to avoid protesters.",
        ),
        questions=("Is there a tunnel between the parliament and the central bank?",),
        queries=(
            "parliament central bank tunnel Norland",
            "secret tunnel parliament",
            "MPs avoid protesters tunnel",
        ),
        requeries=(
            (
                "Norland parliament building underground passages history",
                "central bank building plans tunnel",
                "parliament security protesters entrances",
            ),
            (
                "parliament estate map underground",
                "Norland parliament tunnel rumour",
                "central bank vault access tunnel",
            ),
        ),
        facts=(
            "The parliament building was completed in 1889 and extended in the 1960s.",
            "The central bank moved to its current headquarters in 1974.",
            "Protests outside parliament are usually held on the square in front of the main "
            "entrance.",
            "Members of parliament can enter the building through three public entrances.",
            "Guided tours of parliament take place on Saturdays.",
            "The central bank's visitor centre explains the history of the currency.",
            "Security arrangements for the parliament are reviewed every year.",
            "The two buildings are about 900 metres apart.",
        ),
        pages=(
            _P(
                "wire-agency.example",
                "protest-parliament-peaceful",
                "Protest outside parliament passes peacefully",
                "none",
                (),
                (2,),
                "2026-10-26T18:00:00",
            ),
            _P(
                "metro-tribune.example",
                "parliament-renovation",
                "Parliament renovation plan approved",
                "none",
                (),
                (0, 1),
                "2026-09-10T12:00:00",
            ),
            _P(
                "trendwire.example",
                "secret-places-capital",
                "Secret places in the capital",
                "none",
                (),
                (1,),
                "2026-08-01T10:00:00",
            ),
            _P(
                "harbour-herald.example",
                "parliament-history",
                "A short history of the parliament building",
                "none",
                (),
                (3, 5),
                "2025-02-14T10:00:00",
            ),
            _P(
                "daily-courier.example",
                "central-bank-visitors",
                "Central bank opens visitor centre",
                "none",
                (),
                (7, 8),
                "2026-03-20T09:00:00",
            ),
        ),
    ),
    _post(
        "p16",
        "refuted_all_tiers",
        "2026-03-02T10:00:00",
        "Electric cars produce more CO2 than petrol cars because of their batteries. Going "
        "electric is pointless.",
        topic="electric car emissions",
        claims=(
            "Electric cars produce more CO2 than petrol cars over their lifetime because of "
            "their batteries.",
        ),
        questions=(
            "How do lifetime emissions of electric and petrol cars compare?",
            "How much do batteries add?",
        ),
        queries=(
            "electric car lifetime CO2 petrol",
            "battery production emissions electric car",
            "are electric cars worse for climate",
        ),
        reply="Battery production makes an electric car's emissions higher at first, but over "
        "its lifetime it emits far less CO2 than a petrol car.",
        facts=(
            "Producing an electric car's battery causes more emissions than building a petrol "
            "engine.",
            "Over a typical lifetime of 200,000 kilometres, electric cars in Europe emit far less "
            "carbon dioxide than petrol cars.",
            "The gap depends on how the electricity used for charging is generated.",
            "Battery recycling can recover most of the lithium, nickel and cobalt.",
            "Larger batteries take longer to make up their production emissions.",
            "Life-cycle studies count mining, manufacturing, driving and disposal.",
            "The share of renewable electricity in the grid has grown every year.",
            "Petrol cars emit carbon dioxide every time they are driven.",
        ),
        pages=(
            _P(
                "science-academy.example",
                "car-lifecycle-emissions",
                "Life-cycle emissions of cars",
                "refutes",
                (
                    "Over their lifetime, electric cars produce far less carbon dioxide than "
                    "petrol cars, even when battery manufacturing is counted.",
                ),
                (0, 2),
                "2025-10-10T09:00:00",
            ),
            _P(
                "env-office.example",
                "battery-production-emissions",
                "Battery production and emissions",
                "context",
                (
                    "Building the battery makes an electric car's emissions higher at the "
                    "start, a gap that is usually made up within one to two years of driving.",
                ),
                (1,),
                "2026-02-14T09:00:00",
            ),
            _P(
                "tech-weekly.example",
                "truth-ev-batteries",
                "The truth about EV batteries",
                "context",
                (
                    "How quickly an electric car makes up its battery emissions depends on how "
                    "the electricity is generated.",
                ),
                (1, 2),
                "2026-01-19T09:00:00",
            ),
            _P(
                "metro-tribune.example",
                "electric-share-grows",
                "Car sales: electric share grows",
                "none",
                (),
                (0,),
                "2026-02-05T10:00:00",
            ),
            _P(
                "trendwire.example",
                "charging-points-map",
                "Where the new charging points are",
                "none",
                (),
                (2,),
                "2026-02-20T10:00:00",
            ),
        ),
    ),
    _post(
        "p17",
        "high",
        "2026-03-28T15:00:00",
        "Fun fact: the Great Wall of China is the only man-made structure you can see from "
        "space with the naked eye.",
        topic="seeing the Great Wall from space",
        claims=(
            "The Great Wall of China is visible from space with the naked eye.",
            "It is the only man-made structure visible from space.",
        ),
        questions=(
            "Can astronauts see the Great Wall unaided?",
            "Which structures are visible from orbit?",
        ),
        queries=(
            "Great Wall visible from space naked eye",
            "man-made structures visible from orbit",
            "astronauts see Great Wall",
        ),
        reply="Astronauts say the Great Wall is very hard to see unaided from orbit: it is narrow "
        "and the colour of the land around it. Cities and airports are easier to spot.",
        facts=(
            "The Great Wall is mostly less than ten metres wide.",
            "From the International Space Station, about 400 kilometres up, the wall is very "
            "hard to distinguish from its surroundings.",
            "Many structures, such as cities, airports and large reservoirs, are easier to see "
            "from low orbit.",
            "Astronauts have photographed parts of the wall using telephoto lenses.",
            "The wall is built from materials with much the same colour as the surrounding land.",
            "The claim appeared in print decades before anyone had flown in space.",
            "From the Moon, no individual human structure can be seen with the naked eye.",
            "Visibility from orbit depends on lighting, snow cover and the contrast with the "
            "ground.",
        ),
        pages=(
            _P(
                "space-agency.example",
                "great-wall-from-space",
                "Can you see the Great Wall from space?",
                "refutes",
                (
                    "The Great Wall is not visible to the naked eye from the Moon and is very "
                    "difficult to see even from low Earth orbit.",
                ),
                (0, 2),
                "2025-04-04T10:00:00",
            ),
            _P(
                "science-academy.example",
                "seen-from-orbit",
                "What astronauts can see from orbit",
                "refutes",
                (
                    "Cities, airports and reservoirs are much easier to see from orbit than the "
                    "Great Wall, so it is not the only human-made structure visible from space.",
                ),
                (1,),
                "2024-09-12T09:00:00",
            ),
            _P(
                "factcheck-desk.example",
                "great-wall-myth",
                "The Great Wall myth that will not die",
                "refutes",
                ("It is false that the Great Wall is the only structure visible from space.",),
                (0, 2),
                "2026-03-30T08:00:00",
            ),
            _P(
                "tech-weekly.example",
                "astronaut-photos-earth",
                "Astronaut photographs of Earth",
                "none",
                (),
                (1,),
                "2025-12-01T09:00:00",
            ),
            _P(
                "harbour-herald.example",
                "visiting-great-wall",
                "Travel: visiting the Great Wall",
                "none",
                (),
                (0,),
                "2025-06-15T09:00:00",
            ),
            _P(
                "viral-digest.example",
                "amazing-space-facts",
                "Amazing facts about space",
                "supports",
                ("The Great Wall of China is the only man-made object you can see from space.",),
                (0,),
                "2026-02-01T10:00:00",
            ),
        ),
    ),
    _post(
        "p18",
        "high",
        "2026-08-04T09:00:00",
        "Fluoride in tap water lowers children's IQ. They're poisoning the water supply on "
        "purpose.",
        topic="fluoride in tap water",
        claims=("Fluoride in tap water at the levels used lowers children's IQ.",),
        questions=(
            "What fluoride level is used in tap water?",
            "Do studies find IQ effects at that level?",
        ),
        queries=(
            "fluoride tap water IQ children",
            "water fluoridation safety levels",
            "fluoride poisoning water supply",
        ),
        reply="At the 0.7 mg per litre used in tap water, reviews find no effect on children's "
        "IQ. Studies reporting lower IQ looked at levels more than twice as high.",
        facts=(
            "Community water fluoridation adds fluoride to about 0.7 milligrams per litre to "
            "reduce tooth decay.",
            "Studies that found lower IQ scores looked at water with more than 1.5 milligrams "
            "per litre, often from natural sources.",
            "Several large reviews found no effect on IQ at the levels used in tap water.",
            "Water companies test fluoride levels daily and publish the results.",
            "Too much fluoride can cause white marks on children's teeth, called fluorosis.",
            "Dental researchers say fluoridation reduces tooth decay most in poorer areas.",
            "Some countries add fluoride to salt or milk instead of water.",
            "The regulator reviews the safety limits for drinking water every five years.",
        ),
        pages=(
            _P(
                "health-ministry.example",
                "water-fluoridation-safety",
                "Water fluoridation: safety",
                "refutes",
                (
                    "At the level used in tap water, 0.7 milligrams per litre, fluoride has not "
                    "been found to affect children's IQ.",
                ),
                (0, 1),
                "2026-05-05T09:00:00",
            ),
            _P(
                "science-academy.example",
                "fluoride-neurodevelopment",
                "Review: fluoride and neurodevelopment",
                "context",
                (
                    "Studies that reported lower IQ scores involved fluoride levels above 1.5 "
                    "milligrams per litre, more than twice the level used in tap water.",
                ),
                (0,),
                "2025-12-12T09:00:00",
            ),
            _P(
                "factcheck-desk.example",
                "water-not-poisoned",
                "No, the water supply is not being poisoned",
                "refutes",
                (
                    "Fluoride levels in tap water are tested daily and kept at about 0.7 "
                    "milligrams per litre, which reviews have found to be safe.",
                ),
                (2,),
                "2026-08-01T08:00:00",
            ),
            _P(
                "daily-courier.example",
                "dentists-back-fluoridation",
                "Dentists back fluoridation",
                "none",
                (),
                (1,),
                "2026-04-18T10:00:00",
            ),
            _P(
                "valley-gazette.example",
                "town-votes-fluoride",
                "Town votes on fluoride",
                "none",
                (),
                (2,),
                "2026-07-01T18:00:00",
            ),
            _P(
                "morning-buzz.example",
                "fluoride-hidden-poison",
                "Fluoride: the hidden poison",
                "supports",
                ("Fluoride in our tap water is making children less intelligent.",),
                (0, 2),
                "2026-07-30T20:00:00",
            ),
        ),
    ),
    _post(
        "p19",
        "second_round",
        "2026-11-10T17:00:00",
        "The government just announced a new national holiday on 3 March every year starting "
        "next year! Enjoy the long weekend.",
        topic="the holiday announcement",
        claims=(
            "The Norland government announced a new national holiday on 3 March every year "
            "from next year.",
        ),
        questions=(
            "Has a new national holiday been announced?",
            "What is on next year's official calendar?",
        ),
        queries=(
            "new national holiday announced",
            "bank holiday 3 March",
            "public holidays next year Norland",
        ),
        requeries=(
            (
                "3 March holiday claim government denies",
                "Norland holiday calendar official",
                "fake announcement national holiday",
            ),
        ),
        reply="No new national holiday has been announced: next year's official calendar keeps "
        "the same holidays as this year, and the 3 March post began on a satire site.",
        facts=(
            "The official calendar of public holidays for next year was published in September.",
            "It contains the same nine public holidays as this year.",
            "Adding a public holiday requires a change in the law, voted by parliament.",
            "The 3 March claim first appeared on a satirical website.",
            "Employers' groups have previously argued against adding holidays.",
            "A petition for an extra spring holiday gathered 80,000 signatures last year.",
            "The government's press office said no such announcement had been made.",
            "Some regions have local holidays that do not apply nationwide.",
        ),
        pages=(
            _P(
                "stats-office.example",
                "working-days-tables",
                "Working days and holidays: data tables",
                "none",
                (),
                (2,),
                "2026-01-20T09:30:00",
            ),
            _P(
                "metro-tribune.example",
                "spring-holiday-petition",
                "Petition for spring holiday reaches parliament",
                "none",
                (),
                (0, 1),
                "2026-03-02T12:00:00",
            ),
            _P(
                "harbour-herald.example",
                "best-long-weekends",
                "The best long weekends next year",
                "none",
                (),
                (1, 2),
                "2026-10-01T09:00:00",
            ),
            _P(
                "viral-digest.example",
                "holiday-recipes",
                "Holiday recipes to try",
                "offtopic",
                (),
                (0,),
                "2026-09-01T10:00:00",
                offtopic="food",
            ),
            _P(
                "wire-agency.example",
                "no-new-holiday",
                "Government denies new 3 March holiday",
                "refutes",
                (
                    "The government's press office said no new national holiday had been "
                    "announced and that the 3 March claim was false.",
                ),
                (3, 4),
                "2026-11-11T09:00:00",
            ),
            _P(
                "factcheck-desk.example",
                "holiday-satire",
                "The 3 March holiday post comes from a satire site",
                "refutes",
                (
                    "The claim about a 3 March national holiday was first published by a satirical "
                    "website.",
                ),
                (3, 5),
                "2026-11-12T08:00:00",
            ),
            _P(
                "daily-courier.example",
                "holiday-calendar-published",
                "Official holiday calendar published",
                "context",
                (
                    "The official calendar for next year contains the same nine public holidays as "
                    "this year.",
                ),
                (4,),
                "2026-09-15T10:00:00",
            ),
        ),
    ),
    _post(
        "p20",
        "lower_tiers",
        "2026-11-16T18:00:00",
        "Rice prices in Port Avalon doubled this week. Stock up now before the shelves are empty!",
        topic="rice prices",
        claims=("Rice prices in Port Avalon doubled this week.",),
        questions=(
            "How much have rice prices in Port Avalon changed?",
            "Is there a rice shortage?",
        ),
        queries=(
            "Port Avalon rice price",
            "rice prices doubled",
            "rice shortage Port Avalon shops",
        ),
        reply="Rice prices in Port Avalon rose about 6% last month, not 100%. Retailers report "
        "normal supplies and ask shoppers not to panic-buy.",
        facts=(
            "The price of a one-kilogram bag of rice in Port Avalon rose by about six per cent "
            "last month.",
            "Retailers said supplies were normal and warehouses were well stocked.",
            "Panic buying can empty shelves temporarily even when there is no shortage.",
            "Global rice prices have risen this year because of poor harvests in some exporting "
            "countries.",
            "The consumer price index is published monthly by the statistics office.",
            "Food banks said demand for staples had grown over the year.",
            "Shops in two districts limited rice purchases to three bags per customer after the "
            "post spread.",
            "Importers expect a new shipment to arrive at the port next week.",
        ),
        pages=(
            _P(
                "stats-office.example",
                "consumer-prices-october",
                "Consumer prices: October 2026",
                "refutes",
                ("Rice prices rose by 6.1 per cent in October compared with September.",),
                (1,),
                "2026-11-12T09:30:00",
            ),
            _P(
                "stats-office.example",
                "cpi-method",
                "How the consumer price index is calculated",
                "none",
                (),
                (1,),
                None,
            ),
            _P(
                "harbour-herald.example",
                "shops-limit-rice",
                "Shops limit rice sales after viral post",
                "refutes",
                (
                    "Retailers said rice prices had risen only slightly and that there was no "
                    "shortage, but shops limited sales after the viral post.",
                ),
                (0, 2),
                "2026-11-17T08:00:00",
            ),
            _P(
                "daily-courier.example",
                "global-rice-prices",
                "Global rice prices climb after poor harvests",
                "context",
                (
                    "Global rice prices have risen this year because of poor harvests in some "
                    "exporting countries.",
                ),
                (1,),
                "2026-10-30T10:00:00",
            ),
            _P(
                "trendwire.example",
                "rice-crisis",
                "Rice crisis: prices double!",
                "supports",
                ("Rice prices have doubled in Port Avalon in a single week.",),
                (0,),
                "2026-11-16T17:00:00",
            ),
            _P(
                "morning-buzz.example",
                "autumn-apples",
                "Make the most of autumn apples",
                "offtopic",
                (),
                (2,),
                "2026-10-10T10:00:00",
                offtopic="food",
            ),
        ),
    ),
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
