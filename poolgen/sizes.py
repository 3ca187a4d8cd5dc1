"""The pool generator's default sizes, apart from its code: the command line's help names them, and every
command's start (`status` too) would otherwise import numpy and pyarrow with poolgen.write (0.45 s here)."""

DEFAULT_TARGET = 1 << 16
#: States per partition the default target aims at: LPT balances hundreds of estimates well, and a task
#: refines its states to its device's grain. A climb the hard limit stops short of it is written a level
#: deeper, partition by partition (N-Queens 27 with 20,000 partitions: 80 a partition at depth 5, 1,139
#: at depth 6).
STATES_PER_PARTITION = 128
