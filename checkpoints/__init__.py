"""Atomic, verified, resumable per-partition progress (see checkpoints/store.py)."""
