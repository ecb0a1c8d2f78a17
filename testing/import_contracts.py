"""An import-linter contract type that the built-in ones cannot express: no module imports a test
module (`test_*`) or a `conftest`. Shared test code belongs in `testing/` or in a helper module
beside the tests; a test module imported by another runs its module-level code twice over and
ties the two together, and pytest itself warns against importing a conftest
(https://docs.pytest.org/en/stable/how-to/fixtures.html#using-fixtures-from-other-projects).

Registered in pyproject.toml under `[tool.importlinter] contract_types`; the contract class
follows import-linter's documented extension point
(https://import-linter.readthedocs.io/en/stable/custom_contract_types.html)."""

from __future__ import annotations

from typing import Any, cast

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


def _is_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


class NoTestModuleImportsContract(Contract):
    """Configuration options:

    - packages: the packages whose test modules and conftests nothing may import.
    """

    type_name = "no_test_module_imports"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        # The field is replaced by its parsed value when the contract is built.
        roots = tuple(cast(list[str], self.packages))
        imports: list[dict[str, Any]] = []
        for imported in sorted(graph.modules):
            if not imported.startswith(roots) or not _is_test_module(imported):
                continue
            for importer in sorted(graph.find_modules_that_directly_import(imported)):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    imports.append(
                        {
                            "importer": importer,
                            "imported": imported,
                            "line_number": detail["line_number"],
                        }
                    )
        return ContractCheck(kept=not imports, metadata={"imports": imports})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for found in check.metadata["imports"]:
            output.print_error(
                f"{found['importer']} imports {found['imported']} "
                f"(l. {found['line_number']}): move what they share into testing/ or a "
                "helper module beside the tests",
                bold=False,
            )
            output.new_line()
