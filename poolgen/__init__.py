"""State-pool generation: ladder climbing, shuffling, partitioning, Parquet + manifest writing."""

from permenum.poolgen.generate import LadderResult, climb
from permenum.poolgen.manifest import Manifest, load_manifest
from permenum.poolgen.write import PoolSettings, write_pool

__all__ = ["LadderResult", "Manifest", "PoolSettings", "climb", "load_manifest", "write_pool"]
