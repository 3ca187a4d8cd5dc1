"""State-pool generation: ladder climbing, shuffling, partitioning, Parquet writing (the manifest is permenum.records')."""

from permenum.poolgen.generate import LadderResult, climb
from permenum.poolgen.write import PoolSettings, write_pool

__all__ = ["LadderResult", "PoolSettings", "climb", "write_pool"]
