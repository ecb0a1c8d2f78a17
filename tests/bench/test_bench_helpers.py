"""The helpers every bench shares: ratios of figures and the data-set command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import dataset_parser, ratio


@pytest.mark.parametrize(
    ("numerator", "denominator", "expected"),
    [(3.0, 2.0, 1.5), (0.0, 4.0, 0.0), (5.0, 0.0, 0.0), (7, 2, 3.5)],
)
def test_a_ratio_is_zero_when_there_is_nothing_to_divide_by(
    numerator: float, denominator: float, expected: float
) -> None:
    assert ratio(numerator, denominator) == expected


def test_the_data_set_command_line_has_data_and_seed_with_their_defaults() -> None:
    parser = dataset_parser("First line.\n\nMore.", Path("/data/x.csv"), 13)
    assert parser.description == "First line."
    args = parser.parse_args([])
    assert (args.data, args.seed) == (Path("/data/x.csv"), 13)
    args = parser.parse_args(["--data", "y.csv", "--seed", "7"])
    assert (args.data, args.seed) == (Path("y.csv"), 7)
