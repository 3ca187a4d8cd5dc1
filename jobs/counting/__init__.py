"""One partition counted on a node's devices: what a SLURM array task (or a local worker) runs, from the
partition's verified states to its sealed result. Entry: ``task.run_task``."""
