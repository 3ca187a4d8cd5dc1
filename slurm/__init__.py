"""Throwaway real SLURM clusters for integration tests."""
