"""A partition parsed row group by row group gives the same states as one read, whatever the chunk."""

from __future__ import annotations

import io

import numpy as np
import pyarrow.parquet as pq
import pytest

from permenum.errors import UserError
from permenum.jobs.counting.stream import StreamedPartition
from permenum.poolgen.generate import climb
from permenum.problems import get_problem


def test_chunks_across_row_groups_match_the_whole_table() -> None:
    problem = get_problem("nqueens")
    states = climb(problem, 10, 300, 4.0, "edges").states
    buf = io.BytesIO()
    pq.write_table(states.to_table(), buf, row_group_size=37)  # many small groups
    stream = StreamedPartition(buf.getvalue(), problem.mask_names, "test")
    assert stream.total == len(states) and stream.est_cost is None
    rng = np.random.default_rng(3)
    for start, end in [(0, 1), (0, 37), (36, 38), (5, 200), (0, len(states)), *(sorted(rng.integers(0, len(states), 2)) for _ in range(20))]:
        got, want = stream.take(int(start), int(end)), states.take(slice(int(start), int(end)))
        assert np.array_equal(got.prefix, want.prefix) and np.array_equal(got.weight, want.weight)
        assert all(np.array_equal(got.masks[k], want.masks[k]) for k in problem.mask_names)


def test_a_file_that_does_not_parse_is_a_clear_error() -> None:
    problem = get_problem("nqueens")
    states = climb(problem, 8, 50, 4.0, "edges").states
    buf = io.BytesIO()
    pq.write_table(states.to_table().drop_columns(["prefix"]), buf)
    stream = StreamedPartition(buf.getvalue(), problem.mask_names, "partition 3")
    with pytest.raises(UserError, match="partition 3 does not parse"):
        stream.take(0, 1)


def test_chunks_taken_at_the_parse_frontier() -> None:
    """Devices take chunks while row groups are still being appended: every chunk is whole and right."""
    problem = get_problem("nqueens")
    states = climb(problem, 10, 300, 4.0, "edges").states
    buf = io.BytesIO()
    pq.write_table(states.to_table(), buf, row_group_size=4)
    data = buf.getvalue()
    for _ in range(30):
        stream = StreamedPartition(data, problem.mask_names, "test")
        for start in range(0, len(states), 3):  # right behind the parser, across group boundaries
            end = min(start + 3, len(states))
            assert np.array_equal(stream.take(start, end).prefix, states.prefix[start:end])
