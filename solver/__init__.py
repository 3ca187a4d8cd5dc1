"""OpenCL execution: device choice, program building, and the per-problem kernel wrappers."""
