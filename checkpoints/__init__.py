"""Atomic, verified, resumable per-partition progress: a task resumes from here, never from a bad file."""

from permenum.checkpoints.store import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint

__all__ = ["Checkpoint", "CheckpointError", "load_checkpoint", "save_checkpoint"]
