"""The array-task entry (run one partition), result records, the local executor and the collector."""
