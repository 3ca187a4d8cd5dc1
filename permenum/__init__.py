"""permenum: exact, distributed enumeration of N-Queens solutions and Costas arrays.

The data flows one way: pool (poolgen) -> task (jobs + solver) -> result -> ledger (jobs.ledger.collect).
"""

__version__ = "0.1.0"
