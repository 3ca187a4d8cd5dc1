"""The run's records, typed, each with one reader and one writer: a module a contract.

These files are the contracts between the pool generator, the tasks, the scheduler's status and the
collector (pool -> task -> result -> ledger); everything else handles them as objects with named fields,
and only these modules know their JSON keys:

* ``seal``: the sealed JSON every record is written in (its content's sha256 beside it), in one place;
* ``manifest``: ``manifest.json``, the pool's partitions (Manifest, PartitionEntry);
* ``origin``: the process a record was made by (Origin), which results and failures carry;
* ``result``: ``results/part-NNNNN.json`` (ResultRecord) and the kept duplicates beside it;
* ``failure``: ``logs/part-NNNNN.error.json`` (FailureRecord);
* ``search``: a `search`'s plan and its tasks' results;
* ``verification``: a `verify`'s plan and checks.

The names below are the package's public ones, as callers import them. The run directory's paths are
RunLayout's (permenum.layout).
"""

from __future__ import annotations

from permenum.records.seal import now_utc, parse_count, parse_fields, read_record, write_record
from permenum.records.manifest import (
    Generator, MANIFEST_FORMAT, Manifest, PartitionEntry, RUN_ID, SHUFFLE, identity_difference, load_manifest,
    not_a_run, read_manifest, write_manifest
)
from permenum.records.origin import Origin
from permenum.records.result import (
    AttemptDevices, DeviceUse, RESULT_FORMAT, ResultConflict, ResultRecord, Seconds, SolutionsSeal, attempts_so_far,
    check_solutions_file, kept_conflicts, read_result, sound_result, verified_result, write_result
)
from permenum.records.failure import FAILURE_FORMAT, FailureRecord, read_failure, write_failure
from permenum.records.search import (
    SEARCH_PLAN_FORMAT, SEARCH_RESULT_FORMAT, SEED_STRIDE, SearchPlan, SearchResult, load_search_plan,
    read_search_result, write_search_plan, write_search_result
)
from permenum.records.verification import (
    Comparison, Counted, VERIFICATION_CHECK_FORMAT, VERIFICATION_FORMAT, VerificationCheck, VerificationPlan,
    check_verification_options, load_verification_plan, partition_scope, write_verification_check,
    write_verification_plan
)
