"""SLURM for permenum: the array job's sbatch script (render, submit, resubmit), the queue and its states
through the command line or pyslurm, the status of a run's partitions, requeue inside a task, and the
bring-up of a private single-node cluster (munge, slurmctld, slurmd) for tests and demos."""
