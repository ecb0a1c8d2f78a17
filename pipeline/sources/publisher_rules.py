"""Class rules: how hosts the publisher table does not list are rated, by the kind of site.

A rule matches a public suffix on label boundaries (`gov` matches `cdc.gov`, `lg.jp` matches
`city.yokohama.lg.jp`) or, for `by_domain` rules, a platform's own domain and its subdomains.
The first matching rule in `CLASS_RULES` decides; table entries always win over rules.

Every suffix and domain here is a deliberate decision of this project, not a `gov.*` pattern:
adding a country's government says that the state's own pages are the primary source for what it
says and counts. States whose official sites we do not treat as reliable primary sources are left
to the table (their state media are Excluded there) rather than listed.

Wikipedia is Medium, a reference but never High: it is user-edited, yet its verifiability and
sourcing policies and fast vandalism reverts make it a fair first stop for context; a note should
cite the primary source that Wikipedia cites. Edited encyclopedias and dictionaries with named
expert contributors are High in the table (`britannica.com` here, for its class rule heritage).

Beyond states and universities, a few classes are rated by what admits a site to them: the
registries of `edu.<cc>` and `ac.<cc>` second-level domains admit only accredited schools and
universities (Medium, as `academic`); `or.jp` and `or.kr` only registered organisations, one
domain each (Medium: accountable, but speaking for their own members' interests); the `.museum`
top-level domain only museums (Medium: curated collections, not news); and a closed list of
treaty-based organisations and standards bodies whose sites have no `.int` or government
suffix (High: the primary source of what they decide, publish and measure).

User-generated content (social networks, video sites, blog and newsletter hosts, fan wikis,
Q&A and review sites) is Unknown by rule, with that reason: the platform vouches for no one, so
the author, or the source the author cites, is what has to be judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.records import Tier
from pipeline.web.redirectors import redirector_hosts


@dataclass(frozen=True)
class ClassRule:
    """A rule for hosts not in the table, by public suffix or by platform domain."""

    name: str  # "government", "academic", ...
    tier: Tier
    reason: str
    reference: bool
    suffixes: tuple[str, ...]  # matched on label boundaries: "gov" matches "cdc.gov"
    by_domain: bool = False  # True: the suffixes are platforms' own domains, not public suffixes

    @property
    def source(self) -> str:
        return f"rule:{self.name}"

    def match(self, host: str) -> str | None:
        for suffix in self.suffixes:
            if suffix.endswith(".*"):
                # "edu.*": that second-level label under any two-letter country code.
                labels = host.split(".")
                country = labels[-1]
                if (
                    len(labels) >= 3
                    and labels[-2] == suffix[:-2]
                    and len(country) == 2
                    and country.isalpha()
                ):
                    return f"{suffix[:-2]}.{country}"
            elif host == suffix or host.endswith("." + suffix):
                return suffix
        return None

    def pattern(self, suffix: str) -> str:
        return suffix if self.by_domain else f"*.{suffix}"


GOVERNMENT_SUFFIXES: tuple[str, ...] = (
    # North America, UK and Ireland (UK police forces and the MoD have their own suffixes).
    "gov", "mil", "fed.us", "gov.uk", "gov.scot", "gov.wales", "police.uk", "mod.uk", "gc.ca",
    "canada.ca", "gouv.qc.ca", "gov.bc.ca", "gov.on.ca", "ontario.ca", "gov.ab.ca", "alberta.ca",
    "gov.sk.ca", "gov.mb.ca", "gov.ns.ca", "gnb.ca", "gov.nl.ca", "gov.pe.ca", "gov.yk.ca",
    "gov.nt.ca", "gov.nu.ca", "quebec.ca", "gov.ie",
    # Europe: national suffixes, EU institutions, German Länder portals, Luxembourg's state.
    "gouv.fr", "bund.de", "bayern.de", "nrw.de", "niedersachsen.de", "hessen.de", "sachsen.de",
    "baden-wuerttemberg.de", "rlp.de", "thueringen.de", "brandenburg.de", "sachsen-anhalt.de",
    "schleswig-holstein.de", "saarland.de", "gv.at", "admin.ch", "gob.es", "gov.it", "gov.pt",
    "europa.eu", "fgov.be", "belgium.be", "public.lu", "gov.pl", "gov.cz", "gov.sk", "gov.si",
    "gov.ro", "gov.gr", "gov.mt", "gov.cy", "gov.lv", "gov.lt", "gov.hr", "gov.is", "gov.ua",
    # Asia-Pacific: Japan's national (go.jp) and local (lg.jp) governments, Korea's policy portal.
    "go.jp", "lg.jp", "go.kr", "korea.kr", "gov.tw", "gov.hk", "gov.sg", "gov.in", "nic.in",
    "gov.ph", "go.id", "gov.my", "go.th", "gov.au", "govt.nz", "gov.il",
    # Latin America: Brazil's executive, legislature, courts and prosecutors; Spanish-speaking
    # states' gob/gub/gov suffixes.
    "gov.br", "leg.br", "jus.br", "mp.br", "gob.mx", "gob.ar", "gov.co", "gob.cl", "gob.pe",
    "gub.uy", "gov.py", "gob.ec", "gob.bo", "gob.gt", "gob.do", "gob.pa", "gob.sv", "gob.hn",
    # Africa.
    "gov.za", "gov.ng", "go.ke", "gov.gh", "go.tz", "gov.bw", "gov.na", "gov.mu",
)  # fmt: skip
ACADEMIC_SUFFIXES: tuple[str, ...] = (
    "edu", "ac.uk", "edu.au", "ac.jp", "ac.nz", "edu.cn", "ac.in", "ac.kr", "ac.il", "ac.za",
    "edu.sg", "edu.hk", "edu.tw", "ac.at", "ac.be", "ac.th", "edu.my", "edu.pl", "edu.tr",
    "ac.id", "edu.ar", "edu.co", "edu.br", "edu.mx", "edu.pe", "edu.es", "ac.cy", "edu.ph",
)  # fmt: skip
# Intergovernmental (treaty-based) organisations outside `.int` and the table: research
# organisations, UN programmes and funds, regional and development bodies.
INTERGOVERNMENTAL_DOMAINS: tuple[str, ...] = (
    "cern.ch", "eso.org", "iter.org", "oecd-ilibrary.org", "pca-cpa.org", "ifad.org",
    "unido.org", "undrr.org", "imo.org", "unrwa.org", "unhabitat.org", "unitar.org",
    "unicri.org", "ipbes.net", "gbif.org", "aiib.org", "apec.org", "caricom.org",
    "ungeneva.org", "unog.ch",
)  # fmt: skip
# Standards and measurement bodies: the normative text of their own standards.
STANDARDS_DOMAINS: tuple[str, ...] = (
    "iso.org", "iec.ch", "ietf.org", "rfc-editor.org", "w3.org", "ieee.org", "bipm.org",
    "etsi.org", "cencenelec.eu", "unicode.org", "ecma-international.org", "astm.org",
    "ansi.org", "din.de", "bsigroup.com", "afnor.org", "codexalimentarius.org",
)  # fmt: skip
PREPRINT_DOMAINS: tuple[str, ...] = (
    "arxiv.org", "biorxiv.org", "medrxiv.org", "ssrn.com", "osf.io", "researchsquare.com",
    "preprints.org", "chemrxiv.org", "psyarxiv.com", "zenodo.org",
)  # fmt: skip
# Wikipedia's sister projects are user-edited references of the same kind.
WIKI_REFERENCE_DOMAINS: tuple[str, ...] = (
    "wikipedia.org", "wikiwand.com", "wiktionary.org", "wikisource.org", "wikidata.org",
    "wikivoyage.org", "wikibooks.org", "wikiquote.org", "wikinews.org", "wikiversity.org",
    "species.wikimedia.org", "meta.wikimedia.org", "wikibrief.org",
)  # fmt: skip
SOCIAL_DOMAINS: tuple[str, ...] = (
    "x.com", "twitter.com", "facebook.com", "fb.com", "instagram.com", "tiktok.com",
    "youtube.com", "youtu.be", "reddit.com", "bsky.app", "threads.net", "medium.com",
    "substack.com", "t.me", "telegram.org", "rumble.com", "linkedin.com", "quora.com",
    "pinterest.com", "truthsocial.com", "gab.com", "vk.com", "weibo.com", "mastodon.social",
)  # fmt: skip
# Beyond social networks: video and audio hosts, blog and newsletter hosts, wikis anyone can
# edit, Q&A, review and petition sites, file and paste hosts, and their Japanese, Chinese and
# Korean counterparts (frequent in Community Notes written in those languages).
USER_CONTENT_DOMAINS: tuple[str, ...] = (
    "fandom.com", "wikia.org", "imdb.com", "wikihow.com", "knowyourmeme.com",
    "urbandictionary.com", "genius.com", "goodreads.com", "letterboxd.com", "yelp.com",
    "tripadvisor.com", "trustpilot.com", "stackexchange.com", "stackoverflow.com",
    "github.com", "pastebin.com", "scribd.com", "change.org",
    "gofundme.com", "patreon.com", "discord.com", "twitch.tv", "kick.com", "vimeo.com",
    "dailymotion.com", "bitchute.com", "odysee.com", "soundcloud.com", "tumblr.com",
    "blogspot.com", "blogger.com", "wordpress.com", "wixsite.com", "weebly.com",
    "sites.google.com", "docs.google.com", "drive.google.com", "ghost.io", "beehiiv.com",
    "linktr.ee", "imgur.com", "flickr.com", "commons.wikimedia.org", "upload.wikimedia.org",
    "4chan.org", "miraheze.org", "tvtropes.org", "liquipedia.net", "numbeo.com",
    "inaturalist.org",
    "gettr.com", "parler.com", "minds.com", "snapchat.com", "rationalwiki.org",
    "note.com", "ameblo.jp", "hatenablog.com", "hatenablog.jp", "hatena.ne.jp",
    "togetter.com", "posfie.com", "nicovideo.jp", "pixiv.net", "5ch.net",
    "chiebukuro.yahoo.co.jp", "livedoor.blog", "fc2.com", "seesaa.net", "namu.wiki",
    "baike.baidu.com", "zhihu.com", "bilibili.com", "douyin.com", "blog.naver.com",
    "cafe.naver.com", "tistory.com",
)  # fmt: skip

CLASS_RULES: tuple[ClassRule, ...] = (
    ClassRule(
        "government",
        Tier.HIGH,
        "official government publication: the primary source for what a state says and counts",
        True,
        GOVERNMENT_SUFFIXES,
    ),
    ClassRule(
        "intergovernmental",
        Tier.HIGH,
        "intergovernmental organisation (.int): official statements and data",
        True,
        ("int",),
    ),
    ClassRule(
        "intergovernmental",
        Tier.HIGH,
        "intergovernmental organisation: official statements and data",
        True,
        INTERGOVERNMENTAL_DOMAINS,
        by_domain=True,
    ),
    ClassRule(
        "standards",
        Tier.HIGH,
        "standards or measurement body: the normative text of its own standards",
        True,
        STANDARDS_DOMAINS,
        by_domain=True,
    ),
    ClassRule(
        "academic",
        Tier.MEDIUM,
        "academic domain: a university page is expert but not peer-reviewed",
        True,
        # The listed suffixes, then any country's edu./ac. second level, which registries
        # reserve for accredited schools and universities.
        (*ACADEMIC_SUFFIXES, "edu.*", "ac.*"),
    ),
    ClassRule(
        "registered-organisation",
        Tier.MEDIUM,
        "registered organisation (the registry issues this suffix only to incorporated "
        "associations, foundations and other legal bodies): accountable, but it speaks for "
        "its own interests",
        False,
        ("or.jp", "or.kr"),
    ),
    ClassRule(
        "museum",
        Tier.MEDIUM,
        "museum (.museum is issued only to museums): curated collections, not news",
        True,
        ("museum",),
    ),
    ClassRule(
        "encyclopedia",
        Tier.MEDIUM,
        "tertiary, user-edited encyclopedia: good for context, cite the primary source",
        True,
        WIKI_REFERENCE_DOMAINS,
        by_domain=True,
    ),
    ClassRule(
        "encyclopedia",
        Tier.HIGH,
        "edited encyclopedia with named expert contributors and fact-checking",
        True,
        ("britannica.com",),
        by_domain=True,
    ),
    ClassRule(
        "preprint",
        Tier.LOW,
        "preprint server: not peer-reviewed",
        False,
        PREPRINT_DOMAINS,
        by_domain=True,
    ),
    ClassRule(
        "user-generated",
        Tier.UNKNOWN,
        "user-generated content: the platform vouches for no one; judge the author or the "
        "source they cite",
        False,
        SOCIAL_DOMAINS + USER_CONTENT_DOMAINS,
        by_domain=True,
    ),
    ClassRule(
        "redirector",
        Tier.UNKNOWN,
        "link shortener or DOI resolver: the publisher is the link's target; resolve it to rate",
        False,
        redirector_hosts(),
        by_domain=True,
    ),
)


def class_rule(host: str) -> tuple[ClassRule | None, str | None]:
    """The first rule that matches `host`, and the suffix or domain it matched on."""
    for rule in CLASS_RULES:
        suffix = rule.match(host)
        if suffix is not None:
            return rule, suffix
    return None, None
