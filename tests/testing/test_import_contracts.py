"""The `no_test_module_imports` contract (testing/import_contracts.py): an import of a test module
or a conftest breaks it, wherever it comes from; imports of helper modules beside the tests and
of the test doubles keep it."""

from __future__ import annotations

import grimp

from testing.import_contracts import NoTestModuleImportsContract


def _graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for importer, imported in imports:
        for module in (importer, imported):
            graph.add_module(module)
        graph.add_import(
            importer=importer, imported=imported, line_number=3, line_contents="import x"
        )
    return graph


def _check(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    contract = NoTestModuleImportsContract(
        name="no test module imports", session_options={}, contract_options={"packages": ["tests"]}
    )
    check = contract.check(graph, verbose=False)
    found = [(i["importer"], i["imported"]) for i in check.metadata["imports"]]
    assert check.kept == (not found)
    return found


def test_a_test_module_or_conftest_imported_by_another_module_breaks_it() -> None:
    graph = _graph(
        ("tests.bot.web.test_csrf", "tests.bot.web.test_auth"),
        ("tests.bot.web.test_admin", "tests.bot.web.conftest"),
        ("tests.bot.test_crash", "tests.bot.helpers"),
    )
    assert _check(graph) == [
        ("tests.bot.web.test_admin", "tests.bot.web.conftest"),
        ("tests.bot.web.test_csrf", "tests.bot.web.test_auth"),
    ]


def test_helper_modules_and_test_doubles_may_be_imported() -> None:
    graph = _graph(
        ("tests.bot.web.test_csrf", "tests.bot.web.app_env"),
        ("tests.bot.web.conftest", "tests.bot.web.app_env"),
        ("tests.bot.ops.test_queue", "testing.builders"),
        ("bench.smoke", "bench.test_data"),  # outside `packages`: not checked
    )
    assert _check(graph) == []
