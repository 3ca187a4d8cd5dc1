"""The SLURM half without a cluster: the rendered script (against a saved copy, and run by bash), the
parsers on output recorded from the real daemons (tests/data/), the state tables and the decision rules."""

from __future__ import annotations

import json
import shlex
import os
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from permenum.errors import UserError
from permenum.task_options import TaskOptions
from permenum.ranges import compact_ranges
from permenum.layout import RunLayout
from permenum.slurm import queue
from permenum.slurm.backend import pyslurm_matches
from permenum.slurm.queue import TaskState
from permenum.slurm.queue import parse_key_values
from permenum.slurm.requeue import classify_end
from permenum.slurm.script import SbatchOptions, check_sbatch_arg, render
from permenum.slurm.status import Evidence, classify, spread_workers
from permenum.slurm.submit import plan_arrays

DATA = Path(__file__).parent / "data"
HOSTILE_RUN = Path("/shared/runs/it's a \"quoted\" run")
OPTIONS = SbatchOptions(throttle=4, gpus_per_task=1, time="02:00:00", partition="gpu", account="proj x",
                        extra=("--mem=4G", "--comment=N-Queens 20"), task=TaskOptions(device="NVIDIA CUDA:0"))
#: Every task option that `submit` passes on (the saved copy above predates --kernel and --count-nodes).
TASK = TaskOptions(device="NVIDIA CUDA:0", kernel="skip-all", count_nodes=True, chunk_seconds=2.5)
TITLE = "permenum array job: nqueens n=20, 1000 partitions, run 0123456789abcdef0123456789abcdef"


def _render(run: Path, bin_dir: Path, options: SbatchOptions = OPTIONS, title: str = "") -> str:
    return render(RunLayout(run), "permenum-nqueens20-0123456789ab", 1000, options, bin_dir, title or TITLE)


def test_script_matches_saved_copy() -> None:
    text = _render(HOSTILE_RUN, Path("/opt/perm enum/bin"))
    assert text == (DATA / "array.sbatch.expected").read_text()
    assert text.rstrip().splitlines()[-1].startswith("exec permenum task ")


def _recording_permenum(bin_dir: Path, argv_file: Path) -> None:
    """A stand-in `permenum` in ``bin_dir`` that writes the arguments it was given to ``argv_file``."""
    bin_dir.mkdir()
    fake = bin_dir / "permenum"
    fake.write_text(f"#!/usr/bin/env python3\nimport json, sys\njson.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)


def test_script_hands_hostile_paths_to_the_task_intact(tmp_path: Path) -> None:
    """Run the script with bash and a stand-in `permenum` that records its argv: quoting must survive."""
    bin_dir, argv_file = tmp_path / "bin dir 'x'", tmp_path / "argv.json"
    _recording_permenum(bin_dir, argv_file)
    run = tmp_path / "it's a \"run\" $HOME `x`"
    script = tmp_path / "array.sbatch"
    script.write_text(_render(run, bin_dir, replace(OPTIONS, task=TASK)))
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_JOB_ID": "12", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "permenum: partition 7, job 12_7" in proc.stdout
    assert json.loads(argv_file.read_text()) == ["task", str(run), "--index", "7", "--device", "NVIDIA CUDA:0",
                                                 "--kernel", "skip-all", "--count-nodes", "--chunk-seconds", "2.5"]
    # An offset handed as the script's argument (an array beyond MaxArraySize) shifts the partition...
    proc = subprocess.run(["bash", str(script), "1000"], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 0 and "permenum: partition 1007, job 12_7" in proc.stdout, proc.stderr
    assert json.loads(argv_file.read_text())[:4] == ["task", str(run), "--index", "1007"]
    # ...and anything but a number is refused, never evaluated by bash's arithmetic.
    argv_file.unlink()
    proc = subprocess.run(["bash", str(script), "a[$(touch x)]"], env=env, capture_output=True, text=True,
                          timeout=30, check=False, cwd=tmp_path)
    assert proc.returncode == 2 and "partition offset" in proc.stderr and not argv_file.exists()
    assert not (tmp_path / "x").exists()
    # Without an array task id the script refuses instead of running partition "".
    env.pop("SLURM_ARRAY_TASK_ID")
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode != 0 and "array job" in proc.stderr


@pytest.mark.parametrize("task", [None, TaskOptions()])
def test_script_minimal_has_no_optional_lines(task: TaskOptions | None) -> None:
    text = _render(Path("/r"), Path("/b"), SbatchOptions(task=task))
    assert "#SBATCH --array=0-999\n" in text
    for absent in ("--gres", "--time", "--partition=", "--account", "--device", "--kernel", "--count-nodes",
                   "--chunk-seconds", "--max-seconds"):
        assert absent not in text


def test_script_passes_every_task_option_quoted() -> None:
    task = TaskOptions(device="gpu; rm -rf ~", kernel="skip all", count_nodes=True, chunk_seconds=1e-3, max_seconds=60)
    last = _render(Path("/r"), Path("/b"), SbatchOptions(task=task)).rstrip().splitlines()[-1]
    assert last == ("""exec permenum task /r --index "$partition" --device 'gpu; rm -rf ~' """
                    "--kernel 'skip all' --count-nodes --chunk-seconds 0.001 --max-seconds 60.0")


@pytest.mark.parametrize("arg", ["--array=1-3", "-a1", "--job-name=x", "-J", "--output=/tmp/x", "-e", "--wrap=ls",
                                 "--time=1", "--gres=gpu:2", "mem=4G", "--mem=1G\n#SBATCH --array=0",
                                 "--out=/tmp/x", "--job=x", "--sig=USR1@1", "--arr=0", "-Jx", "--parsab", "--err=e",
                                 "-vJx", "-HJname", "--no-requeue"])
def test_protected_and_malformed_sbatch_args_are_refused(arg: str) -> None:
    with pytest.raises(UserError):
        check_sbatch_arg(arg)


@pytest.mark.parametrize("arg", ["--mem=4G", "--constraint=a100", "--exclusive", "-N1", "--qos=long", "--gres-flags=x",
                                 "--time-min=10", "--open-mode=append"])
def test_other_sbatch_args_pass(arg: str) -> None:
    check_sbatch_arg(arg)


@pytest.mark.parametrize("options", [SbatchOptions(throttle=0), SbatchOptions(gpus_per_task=0),
                                     SbatchOptions(time="2 hours"), SbatchOptions(partition=" "),
                                     SbatchOptions(time="99999999999"), SbatchOptions(time="9999999-00:00:00"),
                                     SbatchOptions(time="90\n"),
                                     SbatchOptions(task=TaskOptions(chunk_seconds=0)),
                                     SbatchOptions(task=TaskOptions(device=" ")),
                                     SbatchOptions(task=TaskOptions(kernel="skip\n#SBATCH --array=0"))])
def test_bad_options_are_refused(options: SbatchOptions) -> None:
    with pytest.raises(UserError):
        options.validate()


def test_time_formats() -> None:
    for t in ("90", "01:30:00", "2-00:00:00", "2-12", "UNLIMITED", "10:00"):
        SbatchOptions(time=t).validate()


def test_ranges_round_trip() -> None:
    assert queue.expand_ranges("3,7,12-14%2") == [3, 7, 12, 13, 14]
    assert queue.expand_ranges("[0-15:4]") == [0, 4, 8, 12]
    assert queue.array_spec([14, 3, 12, 13, 7], 2) == "3,7,12-14%2"
    assert queue.array_spec([0, 1, 2]) == "0-2"
    for indices in ([0], [1, 2, 3, 9], list(range(0, 50, 3)) + [51, 52]):
        assert queue.expand_ranges(compact_ranges(indices)) == indices
    with pytest.raises(ValueError):
        queue.expand_ranges("1-x")


def test_state_tables() -> None:
    tables = [queue.PENDING_STATES, queue.RUNNING_STATES, queue.FAILED_STATES, queue.COMPLETED_STATES]
    assert sum(len(t) for t in tables) == len(set().union(*tables)), "a state in two tables"
    assert queue.category("TIMEOUT") == "failed" and queue.category("REQUEUED") == "pending"
    assert queue.category("COMPLETING") == "running" and queue.category("WEIRD") == "unknown"
    assert queue.normalize_state("CANCELLED by 0") == "CANCELLED"


NAME = "permenum-nqueens12-c77a0a76ba60"


def test_parse_recorded_squeue() -> None:
    records = queue.parse_squeue((DATA / "squeue_r.txt").read_text(), NAME)
    # Six held elements of job 28, one running task of job 29; non-array and foreign jobs skipped.
    assert [(t.array_job_id, t.partition, t.state) for t in records] == (
        [(28, i, "PENDING") for i in range(6)] + [(29, 6, "RUNNING")])
    assert records[0].reason == "JobHeldUser"


def test_parse_recorded_scontrol_with_spaces_and_quotes_in_paths() -> None:
    text = (DATA / "scontrol_show_job.txt").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("JobId=12 "))
    kv = queue.parse_key_values(line)
    assert kv["StdOut"] == "/tmp/ex/run 'q' x/logs/9_2.out" and kv["JobState"] == "COMPLETED"
    ours = {(t.array_job_id, t.partition): t.state for t in queue.parse_scontrol_jobs(text, NAME)}
    assert ours == {(9, 2): "COMPLETED", (9, 7): "COMPLETED", (29, 6): "RUNNING",
                    **{(28, i): "PENDING" for i in range(6)}}  # the pending record "0-5%2" expanded
    other = queue.parse_scontrol_jobs(text, "permenum-nqueens12-85984be2fa60")
    failed = [t for t in other if t.state == "FAILED"]
    assert [(t.slurm_id, t.reason, t.exit_code) for t in failed] == [("17_2", "NonZeroExitCode", "2:0")]
    assert {t.slurm_id: t.state for t in other}["26_2"] == "CANCELLED"


def test_parse_recorded_jobcomp_and_config() -> None:
    records = queue.parse_jobcomp((DATA / "jobcomp.txt").read_text(), "permenum-nqueens12-85984be2fa60")
    assert [(t.slurm_id, t.state, t.exit_code) for t in records] == [("17_2", "FAILED", "2:0")]
    cfg = queue.parse_config((DATA / "scontrol_show_config.txt").read_text())
    assert cfg["MaxArraySize"] == "1001" and cfg["AccountingStorageType"] == "accounting_storage/none"
    assert queue.parse_version(cfg["SLURM_VERSION"]) == (22, 5)


def test_parse_sacct() -> None:
    # Hand-written in sacct --parsable2 --noheader -X -o JobID,JobName,State,ExitCode,Reason,Elapsed form (no
    # accounting daemon here to record from).
    text = ("41_3|permenum-x|FAILED|1:0|NonZeroExitCode|00:01:02\n41_4|permenum-x|CANCELLED by 0|0:15|None|00:00:07\n"
            "41_[5-7%2]|permenum-x|PENDING|0:0|JobArrayTaskLimit|00:00:00\n42|other|COMPLETED|0:0|None|00:00:01\n"
            "43_[0-1]|permenum-x|CANCELLED by 0|0:0|JobArrayTaskLimit|00:00:00\n")
    got = [(t.slurm_id, t.state, t.started) for t in queue.parse_sacct(text, "permenum-x")]
    assert got == [("41_3", "FAILED", True), ("41_4", "CANCELLED", True), ("41_5", "PENDING", False),
                   ("41_6", "PENDING", False), ("41_7", "PENDING", False), ("43_0", "CANCELLED", False),
                   ("43_1", "CANCELLED", False)]


def test_partitions_beyond_max_array_size_are_split_into_offset_arrays() -> None:
    def plan(partitions: list[int], limit: str) -> list[tuple[int, list[int]]]:
        return [(p.offset, p.indices) for p in plan_arrays(partitions, {"MaxArraySize": limit})]

    assert plan(list(range(1001)), "1001") == [(0, list(range(1001)))]  # index = partition while it fits
    assert plan([2, 5], "1001") == [(0, [2, 5])]
    assert plan(list(range(8)), "5") == [(0, [0, 1, 2, 3, 4]), (5, [0, 1, 2])]
    assert plan([2, 5, 6, 7, 30], "5") == [(2, [0, 3, 4]), (7, [0]), (30, [0])]  # as few arrays as fit
    split = plan_arrays(list(range(2500)), {"MaxArraySize": "1001"})
    assert [p.partitions for p in split] == [list(range(0, 1001)), list(range(1001, 2002)), list(range(2002, 2500))]
    assert all(max(p.indices) < 1001 for p in split)
    for bad in ({}, {"MaxArraySize": "0"}, {"MaxArraySize": "x"}):
        with pytest.raises(UserError, match="MaxArraySize"):
            plan_arrays([0], bad)


def test_pyslurm_is_chosen_only_for_the_same_major_minor() -> None:
    assert pyslurm_matches("22.5.1", "slurm-wlm 22.05.8")
    assert pyslurm_matches("25.11.0", "slurm 25.11.2")
    assert not pyslurm_matches("25.11.0", "slurm-wlm 22.05.8")
    assert not pyslurm_matches("?", "slurm 25.11.0")


def _t(job: int, p: int, state: str, source: str = "scontrol", reason: str = "") -> TaskState:
    return TaskState(job, p, state, source, reason)


def test_classify_precedence() -> None:
    ev = Evidence(
        num_partitions=9,
        done={0, 1},
        queue=[_t(20, 2, "PENDING", "squeue"), _t(20, 3, "RUNNING", "squeue"), _t(21, 3, "PENDING", "squeue"),
               _t(20, 9, "PENDING", "squeue")],
        ended=[_t(10, 1, "FAILED"), _t(10, 2, "FAILED"), _t(10, 4, "TIMEOUT", reason="TimeLimit"),
               _t(10, 4, "TIMEOUT", "jobcomp"), _t(10, 5, "COMPLETED"), _t(10, 8, "RUNNING")],
        errors={6: "UserError: corrupted"},
        logs={7: (Path("/r/logs/10_7.out"), "slurmstepd: error: *** JOB 17 ON vm CANCELLED AT 2026 ***")},
    )
    states, evidence, queued_jobs, notes = classify(ev)
    assert states == {"done": [0, 1], "running": [3], "pending": [2], "failed": [4, 5, 6, 7], "missing": [8]}
    assert evidence[4] == ["job 10_4 TIMEOUT (TimeLimit) [jobcomp, scontrol]"]
    assert "without writing a result" in evidence[5][0]
    assert "CANCELLED" in evidence[7][0]
    assert queued_jobs == {"pending": [20, 21], "running": [20]}
    assert any("20_9" in n for n in notes)
    # A done partition queued again stays done, and its job is not shown as holding queued partitions.
    ev2 = Evidence(3, {0}, [_t(30, 0, "PENDING", "squeue")], [], {}, {})
    states, _, queued_jobs, notes = classify(ev2)
    assert states["done"] == [0] and states["missing"] == [1, 2] and queued_jobs == {}
    assert notes == ["partitions 0 are done and queued again: their tasks find the result and end without counting"]


@pytest.mark.parametrize("state", ["RUNNING", "COMPLETING"])
def test_a_done_partition_whose_task_is_ending_is_done_without_a_duplicate_note(state: str) -> None:
    """A task writes its result, then exits: meanwhile squeue lists it RUNNING, then COMPLETING. It said "done
    but queued again (a second result is kept as a duplicate)", and no duplicate was there."""
    [ending] = queue.parse_squeue(f"41|5|{state}|None|permenum-q", "permenum-q")
    states, _, queued_jobs, notes = classify(Evidence(8, {5}, [ending], [], {}, {}))
    assert states["done"] == [5] and states["running"] == [] and queued_jobs == {} and notes == []
    # a duplicate is reported where results/duplicates/ holds one, and only there
    _, _, _, notes = classify(Evidence(8, {5}, [ending], [], {}, {}, duplicates={5}))
    assert notes == ["partitions 5 were counted more than once: the later results are kept in results/duplicates/"]


def test_a_task_that_checkpointed_and_exited_75_is_stopped_not_cancelled_before_it_started() -> None:
    """scontrol's record of an element that checkpointed on USR1 (exit 75:0), was requeued (RunTime starts
    again from 0) and was then cancelled while pending: the recorded element 2 of
    scontrol_cancelled_pending.txt with the fields such an element has (ExitCode=75:0, Restarts=1)."""
    recorded = (DATA / "scontrol_cancelled_pending.txt").read_text().splitlines()[1]
    line = (recorded.replace("ArrayTaskId=2-5%1", "ArrayTaskId=4").replace("ExitCode=0:0", "ExitCode=75:0")
            .replace("Reason=JobArrayTaskLimit", "Reason=None").replace("Restarts=0", "Restarts=1"))
    assert "RunTime=00:00:00" in line and "JobState=CANCELLED" in line and line.count("=1 ") > recorded.count("=1 ")
    records = queue.parse_scontrol_jobs(line, "permenum-nqueens13-bfc0c57cfe76")
    assert [(t.partition, t.exit_code, t.started) for t in records] == [(4, "75:0", True)]
    states, evidence, _, _ = classify(Evidence(8, set(), [], records, {}, {}, checkpoints={4: (1200, 3000)}))
    assert states["failed"] == [4]  # resubmit resumes it from its checkpoint
    assert evidence[4] == ["stopped, checkpointed at 1200 of 3000 states (resubmit resumes it)",
                           "job 1_4 CANCELLED (exit 75:0) [scontrol]"]
    _, evidence, _, _ = classify(Evidence(8, set(), [], records, {}, {}))
    assert evidence[4][0] == "stopped before its first checkpoint"


def test_a_live_claim_is_running_whatever_the_queue_says() -> None:
    """A claim held by a live task (jobs.counting.claims.live_claims) is the task itself: running, local or not;
    a task's own queue entry still names its job."""
    from permenum.jobs.counting.claims import Holder

    local = Holder("node1", 4242, None, "2026-11-27T10:00:00+00:00")
    slurm = Holder("node2", 77, "50_3", "2026-11-27T10:00:00+00:00")
    ev = Evidence(5, {0}, [_t(50, 3, "RUNNING", "squeue"), _t(50, 4, "PENDING", "squeue")], [], {}, {},
                  claims={1: local, 2: None, 3: slurm})
    states, _, queued_jobs, _ = classify(ev)
    assert states == {"done": [0], "running": [1, 2, 3], "pending": [4], "failed": [], "missing": []}
    assert queued_jobs == {"pending": [50], "running": [50]}


def test_dry_run_prints_the_script_and_writes_nothing(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "dry 'run'"
    cli("pool", "nqueens", 8, run, "--num-partitions", 3, check=True)
    proc = cli("submit", run, "--dry-run", "--throttle", 2, "--gpus-per-task", 1, check=True)
    assert proc.stdout.startswith("#!/bin/bash\n") and "#SBATCH --array=0-2%2" in proc.stdout
    assert "#SBATCH --gres=gpu:1" in proc.stdout and proc.stdout.rstrip().splitlines()[-1].startswith("exec permenum task")
    assert not (run / "slurm").exists() and not (run / "submissions.jsonl").exists()
    bad = cli("submit", run, "--dry-run", "--sbatch-arg=--array=0-1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--array is set by permenum" in bad.stderr
    # The options of `permenum task` and `run` reach every task, through the same decorator.
    proc = cli("submit", run, "--dry-run", "--kernel", "skip-all", "--count-nodes", "--chunk-seconds", 5, "-d", "cpu",
               check=True)
    assert proc.stdout.rstrip().endswith(" --device cpu --kernel skip-all --count-nodes --chunk-seconds 5.0")
    bad = cli("submit", run, "--dry-run", "--kernel", "no-such")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "'no-such' is not one of" in bad.stderr
    bad = cli("submit", run, "--dry-run", "--kernel", "dfs")  # the pool's symmetry is edges: dfs cannot run it
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "has no symmetry 'edges'" in bad.stderr
    assert cli("status", tmp_path / "nope").returncode == 2


def test_nothing_reaches_the_script_unquoted_and_no_log_lands_outside(tmp_path: Path) -> None:
    text = _render(Path("/r"), Path("/b"), SbatchOptions(), title="run abc\ntouch /tmp/owned")
    assert "\ntouch /tmp/owned" not in text and "# run abc?touch /tmp/owned" in text
    for bad in ("100%", "a\\b", "two\nlines"):
        with pytest.raises(UserError, match="pattern"):
            _render(tmp_path / bad, Path("/b"), SbatchOptions())


def test_why_an_element_was_signalled_from_recorded_scontrol_lines() -> None:
    """Recorded on the test cluster (Slurm 22.05) in a SIGTERM trap: after `scancel` and after
    `scontrol requeue` the element reads COMPLETING either way; the other fields tell them apart."""
    cancelled = parse_key_values((DATA / "scontrol_cancelling.txt").read_text().splitlines()[0])
    requeued = parse_key_values((DATA / "scontrol_requeueing.txt").read_text().splitlines()[0])
    assert cancelled["JobState"] == requeued["JobState"] == "COMPLETING"
    assert classify_end(cancelled, 0) == "cancelled"
    assert classify_end(requeued, 0) == "requeued"
    timed_out = {**cancelled, "StartTime": "2026-11-23T10:00:00", "EndTime": "2026-11-23T10:02:00", "TimeLimit": "00:02:00"}
    assert classify_end(timed_out, 0) == "time limit"
    assert classify_end({**cancelled, "PreemptTime": "2026-11-23T10:01:00"}, 0) == "preempted"
    assert classify_end({**cancelled, "EndTime": "Unknown"}, 0) == "unknown"
    assert classify_end({**requeued, "Restarts": "3"}, 3) != "requeued"  # its own restarts are not a new requeue


def test_a_task_cancelled_while_pending_is_failed_however_it_was_cancelled() -> None:
    """Recorded (scontrol show job -o, Slurm 22.05): array 1's pending elements 2-5 after `scancel 1`
    (one CANCELLED record, RunTime 00:00:00) beside element 1, cancelled while running."""
    records = queue.parse_scontrol_jobs((DATA / "scontrol_cancelled_pending.txt").read_text(),
                                        "permenum-nqueens13-bfc0c57cfe76")
    assert [(t.partition, t.state, t.started) for t in records] == [
        (1, "CANCELLED", True), (2, "CANCELLED", False), (3, "CANCELLED", False), (4, "CANCELLED", False),
        (5, "CANCELLED", False)]
    # element 6 was cancelled alone while pending: SLURM keeps no record, submissions.jsonl says it was sent
    submitted = {i: f"1_{i}" for i in range(7)}
    states, evidence, _, _ = classify(Evidence(8, {0}, [], records, {}, {}, submitted=submitted))
    assert states["failed"] == [1, 2, 3, 4, 5, 6] and states["missing"] == [7]
    assert evidence[1] == ["job 1_1 CANCELLED (exit 0:15) [scontrol]"]
    assert evidence[2] == ["job 1_2 CANCELLED before it started (JobArrayTaskLimit) [scontrol]"]
    assert evidence[6][0].startswith("job 1_6 never started") and "[submissions.jsonl]" in evidence[6][0]


def test_latest_submission_reads_only_what_permenum_wrote(tmp_path: Path) -> None:
    from permenum.layout import RunLayout
    from permenum.slurm.submissions import array_offsets, latest_submission

    layout = RunLayout(tmp_path)
    layout.submissions.write_text('{"job_id": 7, "array": "0-3%2"}\n{"note": "a hand edit"}\n'
                                  '{"job_id": 9, "array": "2,5"}\n{"job_id": "x", "array": "1"}\n'
                                  '{"job_id": 11, "array": "bad"}\n{"job_id": 12, "array": "0-1%2", "offset": 5}\n')
    assert latest_submission(layout) == {0: "7_0", 1: "7_1", 2: "9_2", 3: "7_3", 5: "12_0", 6: "12_1"}
    assert array_offsets(layout) == {7: 0, 9: 0, 11: 0, 12: 5}


def test_a_command_run_to_outlive_term_survives_it_with_its_children() -> None:
    """A requeue TERMs every process of the job, the `scontrol requeue` it runs about itself too: with
    ``outlive_term`` the command and what it starts ignore TERM (a real shell TERMs itself and its child);
    without, it dies of it and says so. The TERM goes to those pids only, not to this test's process group."""
    from permenum.slurm.commands import SlurmCommandError, run

    script = 'sleep 0.3 & kill -TERM $! $$; wait $!; echo "sleep exited $?"'
    assert run(["sh", "-c", script], timeout=10, outlive_term=True) == "sleep exited 0\n"
    with pytest.raises(SlurmCommandError, match=r"failed \(exit -15\)"):
        run(["sh", "-c", script], timeout=10)


def _recorded(monkeypatch: pytest.MonkeyPatch, answers: dict[str, str]) -> None:
    """`commands.run` answers each query (by its first three words) with recorded output."""
    from permenum.slurm import commands

    monkeypatch.setattr(commands, "run", lambda cmd, *a, **k: answers[" ".join(cmd[:3])])


def test_a_task_list_cut_short_is_refused_and_every_query_asks_for_whole_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded (Slurm 22.05): a held array of 286 scattered tasks, `scontrol show job -o` with the default
    SLURM_BITSTR_LEN (its task list cut at 64 characters) and with SLURM_BITSTR_LEN=0 (whole)."""
    from permenum.slurm.backend import Backend
    from permenum.slurm.commands import SlurmCommandError, run

    name = "permenum-nqueens12-0d4be2c7a1f6"
    _recorded(monkeypatch, {"scontrol show job": (DATA / "scontrol_whole.txt").read_text()})
    tasks = Backend().jobs(name)
    assert [t.partition for t in tasks] == [i for i in range(400) if i % 7 not in (1, 4)]  # squeue -r listed 286
    _recorded(monkeypatch, {"scontrol show job": (DATA / "scontrol_cut_short.txt").read_text()})
    with pytest.raises(SlurmCommandError, match=r"cut short: '0,2-3,.*37-\.\.\.%3'") as cut:
        Backend().jobs(name)
    assert "\n" not in cut.value.summary()
    with pytest.raises(ValueError, match="cut short"):  # sacct's unstarted tasks too, never skipped as foreign
        queue.parse_sacct("41_[0,2-3,5-...%3]|permenum-x|PENDING|0:0|JobArrayTaskLimit|00:00:00\n", "permenum-x")
    monkeypatch.undo()
    monkeypatch.setenv("SLURM_BITSTR_LEN", "64")
    assert run(["sh", "-c", 'echo "$SLURM_BITSTR_LEN"'], timeout=10) == "0\n"


def test_the_task_squeue_leaves_out_of_a_stepped_range_is_queued_not_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded (Slurm 22.05): array 15 submitted as --array=0-95:5%1, task 0 running. `squeue -r` lists 0 to
    90 and leaves out 95; `scontrol show job -o` holds the pending rest as one record, 5-95:5%1."""
    from types import SimpleNamespace

    from permenum.slurm.backend import Backend
    from permenum.slurm.status import ask_scheduler

    name = "permenum-nqueens12-5e1f0c2a9b31"
    _recorded(monkeypatch, {"squeue -h -r": (DATA / "squeue_r_stepped.txt").read_text(),
                            "scontrol show job": (DATA / "scontrol_stepped.txt").read_text(),
                            "scontrol show config": (DATA / "scontrol_show_config.txt").read_text()})
    listed = sorted(t.partition for t in Backend().queue(name))
    assert listed == list(range(0, 95, 5))  # squeue's own omission: our parser reads all it prints
    view = ask_scheduler(Backend(), name, SimpleNamespace(created="2026-11-27T10:00:00+00:00"))  # type: ignore[arg-type]
    submitted = {i: f"15_{i}" for i in range(0, 100, 5)}
    states, evidence, queued_jobs, _ = classify(Evidence(100, set(), view.queue, view.ended, {}, {}, submitted=submitted))
    assert not states["failed"] and not evidence, evidence
    assert states["running"] == [0] and states["pending"] == list(range(5, 100, 5)) and queued_jobs["pending"] == [15]
    assert view.notes == ["squeue left out tasks that scontrol holds pending or running (counted as queued): job 15 tasks 95"]


def test_a_refusal_names_a_scattered_queue_in_one_short_line() -> None:
    """Every third of 20,000 partitions still queued: the refusal shows the first ranges and how many in all."""
    from permenum.ranges import brief_ranges
    from permenum.slurm.status import STATES, StatusReport
    from permenum.slurm.submit import _refuse_while_queued

    queued = list(range(0, 20000, 3))
    report = StatusReport(Path("/r"), "permenum-x", 20000, {**{s: [] for s in STATES}, "pending": queued},
                          queued_jobs={"pending": [41, 42]})
    with pytest.raises(UserError) as refused:
        _refuse_while_queued(report, False, "resubmit")
    line = str(refused.value)
    assert "\n" not in line and len(line) < 300, line
    assert "partitions 0,3,6,9,12,15,18,21,24,27,30,33 and 6655 more (6667 in all) of this run" in line
    assert "(job 41, 42)" in line
    _refuse_while_queued(report, True, "resubmit")  # --force: no refusal
    shown = brief_ranges([1, 2, 3, 7, 9, 10], most=2)
    assert shown == "1-3,7 and 2 more (6 in all)" and brief_ranges([1, 2, 3, 7], most=2) == compact_ranges([1, 2, 3, 7])


def test_a_dry_run_shows_the_sbatch_commands_the_submission_runs_past_max_array_size(tmp_path: Path) -> None:
    """20,000 partitions under MaxArraySize=1001: 20 arrays with their offsets, each after the one before; the
    dry run's lines are the commands the real path hands sbatch, with JOBk for the k-th array's job id."""
    from permenum.slurm.backend import Backend, Submitted
    from permenum.slurm.submit import _submit_arrays, dry_run_message

    class Recording(Backend):
        def __init__(self) -> None:
            super().__init__()
            self._config = {"MaxArraySize": "1001"}
            self.commands: list[list[str]] = []

        def submit(self, script: Path, sbatch_args: list[str], script_args: list[str] | None = None) -> Submitted:
            self.commands.append(self.submit_command(script, sbatch_args, script_args))
            return Submitted(500 + len(self.commands), None, self.commands[-1])

    layout = RunLayout(tmp_path / "a 'run'")
    backend = Recording()
    plans = plan_arrays(list(range(20000)), backend.config())
    said = dry_run_message(layout, backend, plans, 4).splitlines()
    assert said[0].startswith("dry run: would submit 20 array jobs (20000 partitions; MaxArraySize=1001")
    _submit_arrays(layout, backend, plans, 4, "submit", None)
    ran = [shlex.join(cmd) for cmd in backend.commands]
    shown = [line.strip().split("  # ")[0] for line in said[1:]]
    for k in range(20, 0, -1):  # JOB20 before JOB2
        shown = [line.replace(f"afterany:JOB{k}", f"afterany:{500 + k}") for line in shown]
    assert shown == ran and len(ran) == 20
    assert ran[1].endswith(f"--array=0-1000%4 --dependency=afterany:501 {shlex.quote(str(layout.sbatch_script))} 1001")
    assert said[-1].endswith("# JOB20: partitions 19019-19999") and "--array=0-980%4" in said[-1]


def test_worker_script_hands_its_list_to_the_task_and_refuses_anything_else(tmp_path: Path) -> None:
    """`submit --workers`: each array task runs `permenum task RUN --only LIST` with the list the script is handed."""
    bin_dir, argv_file = tmp_path / "bin", tmp_path / "argv.json"
    _recording_permenum(bin_dir, argv_file)
    run = tmp_path / "it's a run"
    script = tmp_path / "array.sbatch"
    text = _render(run, bin_dir, SbatchOptions(workers=4, task=TASK))
    assert "#SBATCH --array=0-3\n" in text and "submit --workers" in text
    script.write_text(text)
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_JOB_ID": "12", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["bash", str(script), "0-63,70"], env=env, capture_output=True, text=True, timeout=30,
                          check=False)
    assert proc.returncode == 0 and "worker over partitions 0-63,70, job 12_2" in proc.stdout, proc.stderr
    assert json.loads(argv_file.read_text())[:4] == ["task", str(run), "--only", "0-63,70"]
    argv_file.unlink()
    for bad in ("", "0-3; touch x", "$(touch x)"):
        proc = subprocess.run(["bash", str(script), bad], env=env, capture_output=True, text=True, timeout=30,
                              check=False, cwd=tmp_path)
        assert proc.returncode != 0 and not argv_file.exists() and not (tmp_path / "x").exists(), proc.stderr


def test_workers_and_throttle_are_one_or_the_other() -> None:
    with pytest.raises(UserError, match="--workers and --throttle"):
        SbatchOptions(workers=2, throttle=2).validate()
    with pytest.raises(UserError, match="--workers must be at least 1"):
        SbatchOptions(workers=0).validate()
    (plan,) = plan_arrays([3, 5, 6, 7], {"MaxArraySize": "5"}, workers=8)
    assert (plan.workers, plan.indices, plan.script_args) == (4, [0, 1, 2, 3], ["3,5-7"])  # never more than partitions


def test_a_worker_arrays_tasks_stand_for_its_partitions() -> None:
    """While any worker is queued, each of its partitions is pending; once all ended, each partition stands with
    the telling end (the worker that stopped with a checkpoint), and a plain array's tasks stay as they are."""
    queued = [TaskState(40, 1, "RUNNING", "squeue"), TaskState(41, 3, "PENDING", "squeue")]
    queue, ended = spread_workers(queued, [], {40: [5, 6, 9]})
    assert sorted((t.partition, t.state, t.array_job_id) for t in queue) == [
        (3, "PENDING", 41), (5, "PENDING", 40), (6, "PENDING", 40), (9, "PENDING", 40)] and not ended
    over = [TaskState(40, 0, "COMPLETED", "scontrol", exit_code="0:0"),
            TaskState(40, 1, "CANCELLED", "scontrol", exit_code="75:0"), TaskState(40, 1, "CANCELLED", "sacct")]
    queue, ended = spread_workers([], over, {40: [5, 6, 7]}, done={7}, checkpointed={5})
    assert not queue and sorted((t.partition, t.slurm_id, t.source, t.exit_code) for t in ended) == [
        (5, "40_1", "sacct", ""), (5, "40_1", "scontrol", "75:0"),  # stopped inside partition 5...
        (6, "40_1", "sacct", ""), (6, "40_1", "scontrol", "")]  # ...not inside 6, which it never started
