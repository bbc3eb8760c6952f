"""advisor.validation: summary statistics of predicted against measured speedups, checked
against values computed by hand."""

from __future__ import annotations

import math

import pytest

from advisor.validation import (
    Summary,
    bounds_share,
    error_factor,
    rank_average,
    sign_agreement,
    spearman,
    summarize,
)


def test_error_factor_is_symmetric() -> None:
    assert error_factor(2.0, 1.0) == pytest.approx(2.0)
    assert error_factor(1.0, 2.0) == pytest.approx(2.0)
    assert error_factor(3.3, 3.3) == pytest.approx(1.0)
    assert error_factor(5.8, 4.98) == pytest.approx(5.8 / 4.98)


@pytest.mark.parametrize("bad", [(0.0, 1.0), (1.0, -1.0), (math.nan, 1.0), (1.0, math.inf)])
def test_error_factor_rejects_non_positive(bad: tuple[float, float]) -> None:
    with pytest.raises(ValueError):
        error_factor(*bad)


def test_average_ranks_of_ties() -> None:
    assert rank_average([10, 20, 20, 30]).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert rank_average([3, 1, 2]).tolist() == [3.0, 1.0, 2.0]
    assert rank_average([5, 5, 5]).tolist() == [2.0, 2.0, 2.0]


def test_spearman_of_known_permutations() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ranks (1,2,3,4) vs (2,1,4,3): d^2 = 1+1+1+1 = 4, rho = 1 - 6*4/(4*15) = 0.6
    assert spearman([1, 2, 3, 4], [2, 1, 4, 3]) == pytest.approx(0.6)
    # ranks (1,2,3,4,5) vs (5,4,1,2,3)... d = -4,-2,2,2,2: sum d^2 = 32, rho = 1 - 6*32/120
    assert spearman([1, 2, 3, 4, 5], [5, 4, 1, 2, 3]) == pytest.approx(1 - 6 * 32 / 120)


def test_spearman_with_ties_uses_average_ranks() -> None:
    # x ranks (1, 2.5, 2.5, 4), y ranks (1, 2, 3, 4):
    # dx = (-1.5, 0, 0, 1.5), dy = (-1.5, -0.5, 0.5, 1.5)
    # sum dx dy = 4.5, sum dx^2 = 4.5, sum dy^2 = 5 -> rho = 4.5 / sqrt(22.5)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(22.5))


def test_spearman_undefined() -> None:
    assert spearman([1.0], [2.0]) is None
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    with pytest.raises(ValueError):
        spearman([1, 2], [1])


def test_sign_agreement_skips_the_middle() -> None:
    pairs = [
        (2.0, 3.0),  # gained, gain predicted: agree
        (1.05, 1.5),  # gained, no gain predicted: disagree
        (1.0, 0.8),  # lost, no gain predicted: agree
        (1.5, 0.9),  # lost, gain predicted: disagree
        (3.0, 1.05),  # in between: not counted
        (1.0, 1.0),  # in between: not counted
        (1.10, 1.10),  # gained exactly 10 %, 1.10 is not a predicted gain: disagree
    ]
    assert sign_agreement(pairs) == (2, 5)


def test_bounds_share() -> None:
    assert bounds_share([2.0, 1.0, 5.0, 1.2], [1.5, 1.2, 5.0, 0.5]) == pytest.approx(0.75)
    assert bounds_share([], []) is None


def test_summarize_by_hand() -> None:
    pairs = [(2.0, 1.0), (1.0, 1.0), (1.2, 1.0), (0.5, 2.0), (None, 3.0), (1.0, math.nan)]
    s = summarize(pairs)
    assert s.n == 4 and s.dropped == 2
    # |ln| = ln 2, 0, ln 1.2, ln 4 -> median = (ln 1.2 + ln 2) / 2 -> factor sqrt(2.4)
    assert s.median_error_factor == pytest.approx(math.sqrt(2.4))
    # within 25 %: 1.0/1.0 and 1.2/1.0
    assert s.within_25 == pytest.approx(0.5)
    # counted: (0.5, 2.0) gained without a predicted gain -> 0 of 1
    assert (s.sign_agree, s.sign_counted) == (0, 1)
    assert s.sign_share == pytest.approx(0.0)
    # pred ranks (4, 2, 3, 1); measured ranks (2, 2, 2, 4): measured ties averaged
    # dx = (1.5, -0.5, 0.5, -1.5), dy = (-0.5, -0.5, -0.5, 1.5): -3 / sqrt(5 * 3)
    assert s.spearman == pytest.approx(-3 / math.sqrt(15))


def test_summarize_empty() -> None:
    s = summarize([])
    assert s == Summary(0, None, None, 0, 0, None, 0)
    assert s.sign_share is None


def test_summary_is_frozen() -> None:
    s = summarize([(1.0, 1.0)])
    with pytest.raises(AttributeError):
        s.n = 3  # type: ignore[misc]
