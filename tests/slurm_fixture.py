"""Session-scoped real SLURM cluster fixture; import it from conftest.py.

One cluster per test session: bringing SLURM up costs ~1 s but jobs from
different tests can share it. The state dir has a space in its name on
purpose, so quoting bugs in slurm.conf or munged flags show up here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from permenum.slurm import cluster


#: Low, as a site may set it: a run of more partitions is submitted as several arrays in every SLURM test.
MAX_ARRAY_SIZE = 5
#: SLURM's default, for the few tests whose arrays must span more indices than MAX_ARRAY_SIZE allows.
WIDE_MAX_ARRAY_SIZE = 1001


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.ClusterInfo]:
    """A running single-node cluster; use ``os.environ | info.env`` for clients."""
    cluster.ensure_installed()
    state_dir = tmp_path_factory.mktemp("slurm cluster") / "state dir"
    info = cluster.up(state_dir, max_array_size=MAX_ARRAY_SIZE)
    try:
        yield info
    finally:
        cluster.down(state_dir)


@pytest.fixture(scope="session")
def wide_slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.ClusterInfo]:
    """A second cluster with SLURM's default MaxArraySize: SLURM shows a pending array as a stepped range
    (``0-36:3``) only past ten indices, beyond what ``slurm_cluster`` takes. Started only where asked for."""
    cluster.ensure_installed()
    state_dir = tmp_path_factory.mktemp("wide slurm cluster") / "state dir"
    info = cluster.up(state_dir, max_array_size=WIDE_MAX_ARRAY_SIZE)
    try:
        yield info
    finally:
        cluster.down(state_dir)
