"""The streams section of the HTML report stays bounded for traces with many sequences."""

from __future__ import annotations

from advisor.render import report as render
from advisor.report.build import StreamsSequence


def _seq(index: int, measured: float | None, optimal: float | None) -> StreamsSequence:
    return StreamsSequence(
        index=index,
        model_title="model",
        optimal_n=4,
        measured_streams=1,
        measured_ms=measured,
        predicted_1_ms=measured,
        predicted_optimal_ms=optimal,
        saving_frac=None,
        curve_ms=(),
        notes=(),
    )


def test_few_sequences_are_all_drawn() -> None:
    seqs = tuple(_seq(i, 10.0, 5.0) for i in range(1, 4))
    detail, table = render.streams_sections(seqs)
    assert [s.index for s in detail] == [1, 2, 3]
    assert table == ()


def test_largest_savings_are_drawn_next_tabulated_rest_counted() -> None:
    # sequence i saves i ms (measured 1000, optimal 1000 - i); sequence 7 has no prediction
    seqs = tuple(_seq(i, 1000.0, None if i == 7 else 1000.0 - i) for i in range(1, 1001))
    detail, table = render.streams_sections(seqs)
    # the five largest savings are sequences 996..1000, shown in sequence order
    assert [s.index for s in detail] == [996, 997, 998, 999, 1000]
    assert len(table) == render.STREAMS_TABLE
    # the next hundred savings: 896..995, in sequence order
    assert [s.index for s in table] == list(range(896, 996))
    assert 7 not in {s.index for s in detail + table}


def test_unknown_savings_rank_last_by_index() -> None:
    seqs = (_seq(3, None, None), _seq(1, None, None), _seq(2, 5.0, 4.0))
    detail, _ = render.streams_sections(seqs)
    assert [s.index for s in detail] == [1, 2, 3]
