"""Solutions a task found (Costas arrays): ``solutions/part-NNNNN.parquet``, one row per array.

Written atomically before the result record, so a result always has its solutions beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from permenum.atomic import write_atomic
from permenum.layout import RunLayout


def write_arrays(path: Path, arrays: np.ndarray) -> Path:
    """Arrays (k, n) as zstd Parquet, column ``rows`` = fixed-size list<uint8>[n], written atomically."""
    n = arrays.shape[1] if arrays.ndim == 2 else 0
    flat = pa.array(np.ascontiguousarray(arrays, np.uint8).reshape(-1))
    rows = pa.FixedSizeListArray.from_arrays(flat, n) if n else pa.array([], pa.list_(pa.uint8()))
    table = pa.table({"rows": rows})
    write_atomic(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
    return path


def write_solutions(layout: RunLayout, partition: int, arrays: np.ndarray) -> Path:
    return write_arrays(layout.solutions_file(partition), arrays)


def read_solutions(path: Path) -> list[tuple[int, ...]]:
    column = pq.read_table(path).column("rows").combine_chunks()
    if len(column) == 0:
        return []
    n = column.type.list_size
    flat = column.values.to_numpy(zero_copy_only=False)
    return [tuple(int(x) for x in row) for row in flat.reshape(len(column), n)]


def collected_arrays(layout: RunLayout, expand: bool) -> list[tuple[int, ...]]:
    """Every array of a finished run (stored_arrays), each checked for the Costas property by host code."""
    from permenum.problems.costas_symmetry import is_costas

    found = stored_arrays(layout, expand)
    bad = [a for a in found if not is_costas(a)]
    if bad:
        raise RuntimeError(f"{len(bad)} stored arrays are not Costas arrays, e.g. {bad[0]}")
    return found


def stored_arrays(layout: RunLayout, expand: bool) -> list[tuple[int, ...]]:
    """Every array stored by a finished run, unchecked.

    One line per symmetry class, at its representative (the smallest of its 8 images, what the counts
    count); ``expand`` lists every member of every class instead. Refuses a run whose partitions are not all done (the list would be partial).
    """
    from permenum.errors import UserError
    from permenum.ranges import compact_ranges
    from permenum.problems import get_problem
    from permenum.records import load_manifest, scan_results
    from permenum.problems.costas_symmetry import representative, symmetries

    manifest = load_manifest(layout)
    if not get_problem(manifest.problem).reports_solutions:
        raise UserError(f"`arrays` lists Costas arrays; {layout.root} is a {manifest.problem} run")
    done = scan_results(layout, manifest).done
    missing = [i for i in range(manifest.num_partitions) if i not in done]
    if missing:
        raise UserError(f"partitions {compact_ranges(missing)} have no sound result yet: the list would be incomplete")
    found: set[tuple[int, ...]] = set()
    for i in range(manifest.num_partitions):
        path = layout.solutions_file(i)
        if not path.exists():
            raise UserError(f"partition {i} has a result but {path} is missing")
        try:
            arrays = read_solutions(path)
        except (pa.ArrowException, OSError) as exc:
            raise UserError(f"partition {i}: {path} is unreadable ({exc})") from None
        for array in arrays:
            found.update(set(symmetries(array)) if expand else {representative(array)})
    return sorted(found)
