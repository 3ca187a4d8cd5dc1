"""The array-task entry (run one partition), its device scheduling, the local executor, the collector and the report."""
