"""Test doubles and shared scenarios used by both the test suite and the benchmarks.

Kept apart from `tests/` so `bench/` never imports the test suite, and apart from the
production packages, which must never import it (import-linter checks both)."""
