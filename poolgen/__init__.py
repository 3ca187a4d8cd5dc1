"""State-pool generation: ladder climbing (generate), cost estimates (cost), shuffling, partitioning and
Parquet writing (write); the manifest is permenum.records'. Nothing is imported here: a command that only
names a default size (sizes) must not pay numpy and pyarrow."""
