from collections.abc import Sequence

import httpx
import pytest
from pydantic import SecretStr

from pipeline.config import SearchConfig
from pipeline.records import SearchResult
from pipeline.search.base import SearchError
from pipeline.search.brave import BraveSearch
from pipeline.search.registry import build_providers
from pipeline.search.searxng import SearxngSearch
from pipeline.search.serper import SerperSearch
from tests.pipeline.search.scripted import CFG, FIXTURES, Script


class StubLocal:
    name = "local"
    max_sites = 0

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        return []


def test_providers_follow_the_configured_order_with_local_in_place() -> None:
    local = StubLocal()
    cfg = CFG.model_copy(update={"providers": ["brave", "local", "Serper", "searxng"]})
    providers = build_providers(cfg, local=local)
    assert [p.name for p in providers] == ["brave", "local", "serper", "searxng"]
    assert isinstance(providers[0], BraveSearch)
    assert providers[1] is local
    assert isinstance(providers[2], SerperSearch)
    assert isinstance(providers[3], SearxngSearch)


def test_built_providers_use_the_given_client() -> None:
    script = Script([httpx.Response(200, content=(FIXTURES / "serper.json").read_bytes())])
    cfg = CFG.model_copy(update={"providers": ["serper"]})
    (serper,) = build_providers(cfg, client=httpx.Client(transport=httpx.MockTransport(script)))
    assert len(serper.search("q", limit=3)) == 3
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    ("name", "env"),
    [
        ("google", "GOOGLE_API_KEY"),
        ("serper", "SERPER_API_KEY"),
        ("brave", "BRAVE_API_KEY"),
        ("searxng", "SEARXNG_URL"),
    ],
)
def test_missing_key_fails_at_build_time_naming_the_variable(name: str, env: str) -> None:
    cfg = SearchConfig(providers=["local", name])
    with pytest.raises(SearchError, match=rf"^{name}: FACTNOTE_SEARCH__{env} is not set$"):
        build_providers(cfg, local=StubLocal())


def test_google_needs_the_engine_id_too() -> None:
    cfg = SearchConfig(providers=["google"], google_api_key=SecretStr("k"))
    with pytest.raises(SearchError, match="FACTNOTE_SEARCH__GOOGLE_CX"):
        build_providers(cfg)


def test_local_without_a_local_index_fails() -> None:
    with pytest.raises(SearchError, match="local"):
        build_providers(SearchConfig(providers=["local"]))


def test_unknown_provider_fails_listing_the_known_ones() -> None:
    with pytest.raises(SearchError, match=r"unknown search provider 'bing'.*serper"):
        build_providers(CFG.model_copy(update={"providers": ["bing"]}))


def test_no_providers_fails() -> None:
    with pytest.raises(SearchError, match="no search providers"):
        build_providers(CFG.model_copy(update={"providers": []}))
