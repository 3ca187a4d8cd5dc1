"""One device's side of a task: build its kernels, then count the chunks the task's scheduler hands it.

The same loop runs on a thread of the task's process (one device) or in a process of its own
(several devices: jobs.counting.device_process), where it reaches the scheduler through a pipe. So it sees
the scheduler only through ``Handout``, bound to its device, and its partition only as the verified
states (jobs.counting.stream); everything it reports comes back through ``Handout`` too.

Each chunk is claimed, parsed, refined and its first launch staged on a thread of its own while the
chunk before counts (jobs.counting.refine says why and how deep); a refined chunk is counted in slices sized by
time.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from permenum.errors import UserError
from permenum.jobs.counting.partial import OpenChunk, Partial
from permenum.jobs.counting.refine import RefiningSolver, deepen, next_slice
from permenum.jobs.counting.stream import StreamedPartition
from permenum.problems import Problem, StateBatch
from permenum.problems.base import ChildBatch, exact_sum
from permenum.solver.devices import DeviceRef
from permenum.solver.opencl import BatchCounts, Staged, device_context
from permenum.solver.registry import make_solver, variant_for
from permenum.task_options import TaskOptions


class Handout(Protocol):
    """The task's scheduler as one device sees it (jobs.counting.schedule.Scheduler, bound to the device)."""

    def claim(self) -> tuple[int, int] | None: ...  # None: done, or (a chunk held) not yet
    def open_chunk(self, start: int) -> OpenChunk | None: ...
    def expected_seconds(self, start: int, end: int) -> float | None: ...
    def advance(self, start: int, end: int, depth: int, fine_total: int, fine_done: int, sums: Partial,
                slice_states: int) -> None: ...
    def finish(self, start: int, end: int, sums: Partial, kernel_seconds: float, share: float, line: str) -> None: ...
    def stopping(self) -> bool: ...
    def log(self, line: str) -> None: ...
    def account(self, report: "DeviceReport") -> None: ...


@dataclass(frozen=True)
class Spec:
    """What a device's loop needs to know of its task (picklable: it crosses to a device's process)."""

    problem: str
    n: int
    symmetry: str
    options: TaskOptions
    target: int | None  # states per launch that fill the device where the pool is coarser (jobs.counting.refine)
    t_start: float  # the attempt's start on the task's clock (log lines say how far into it)


@dataclass(frozen=True)
class DeviceReport:
    """What the loop tells the task at its end, for the result's DeviceUse."""

    setup_seconds: float  # the context (kernels are built on the refining thread)
    busy_seconds: float  # inside the solver: host preparation, transfers, kernels
    variant: str
    builds: tuple[str, ...]


@dataclass(frozen=True)
class _Refined:
    """A claimed chunk made ready on the claim-ahead thread: its coarse states, refined (``fine``; the
    chunk itself where it is not refined), where counting resumes in them, and the first launch staged."""

    chunk: StateBatch
    fine: StateBatch | ChildBatch
    resumed: int
    first: Staged


@dataclass(frozen=True)
class _Claim:
    """A device's chunk: its span of coarse states, the part of it an earlier attempt counted, the kernel
    seconds the scheduler expected of it when it was claimed, and its states made ready (on the
    claim-ahead thread, which asks again where that was not known)."""

    span: tuple[int, int]
    begun: OpenChunk | None
    expected: float | None
    ready: Future[_Refined]


def _check_begun(begun: OpenChunk | None, fine_total: int, start: int, end: int) -> int:
    """Where a chunk begun in an earlier attempt resumes: refined again to its depth, it must hold as
    many states as then (else its counted part cannot be matched to states, and the task fails)."""
    if begun is None:
        return 0
    if begun.fine_total != fine_total:
        raise UserError(f"states {start}-{end} refined again to depth {begun.depth} give {fine_total} states, the "
                        f"checkpoint counted {begun.fine_done} of {begun.fine_total}: it is not this pool's")
    return begun.fine_done


class DeviceLoop:
    """One device counting a partition's chunks: ``build`` its solver (a slow PoCL build does not hold
    the GPUs back), then ``serve`` until the hand-out has nothing left or asks it to stop."""

    def __init__(self, ref: DeviceRef, spec: Spec, problem: Problem, handout: Handout):
        self.ref, self.spec, self.problem, self.handout = ref, spec, problem, handout
        self.solver: RefiningSolver | None = None
        self.setup_seconds = 0.0
        self.busy_seconds = 0.0

    def build(self) -> RefiningSolver:
        """The device's context; its kernels are built where their first batch is staged (jobs.counting.refine)."""
        t0 = time.perf_counter()
        s, o, dev = self.spec, self.spec.options, device_context(self.ref)
        self.solver = RefiningSolver(lambda depth: make_solver(s.problem, dev, s.n, depth, o.kernel, s.symmetry,
                                                               o.count_nodes),
                                     variant_for(s.problem, dev, o.kernel, s.symmetry), self.problem, s.n, s.symmetry, s.target,
                                     dev.launching)
        self.setup_seconds = time.perf_counter() - t0
        return self.solver

    def report(self) -> DeviceReport:
        solver = self.solver
        return DeviceReport(self.setup_seconds, self.busy_seconds, solver.variant if solver else "",
                            solver.builds if solver else ())

    def serve(self, states: StreamedPartition) -> None:
        """Count chunks, each claimed, parsed and refined on another thread while the one before counts (a
        claim the scheduler deferred, the peers to take the rest before this chunk ends, is asked again
        when it has)."""
        solver = self.solver or self.build()
        with ThreadPoolExecutor(1, thread_name_prefix="refine") as ahead:
            nxt = self._claim_ahead(solver, states, ahead)
            while nxt is not None:
                claim = nxt
                ready = claim.ready.result()
                nxt = self._claim_ahead(solver, states, ahead)
                self._count_chunk(solver, claim, ready)
                if nxt is None:
                    nxt = self._claim_ahead(solver, states, ahead)
                elif self.handout.stopping():
                    if nxt.ready.exception() is None:  # a chunk that failed to get ready does not fail the stop
                        solver.discard(nxt.ready.result().first)  # dropped: not in the checkpoint, counted on resume
                    break

    def _count_chunk(self, solver: RefiningSolver, claim: _Claim, ready: _Refined) -> None:
        """Count one chunk and hand its sums over; a refined chunk in slices sized by time (jobs.counting.refine; the
        first one staged ahead), stopping between them when asked."""
        (start, end), t0 = claim.span, time.perf_counter()
        fine = ready.fine
        if fine is ready.chunk:
            out = solver.count(ready.first)
            self.busy_seconds += time.perf_counter() - t0
            self._finish_chunk(claim, self._sums(fine, out), out.kernel_seconds, t0, "")
            return
        done = resumed = ready.resumed
        launches, kernel, staged = 0, 0.0, ready.first
        while True:
            out = solver.count(staged)
            launches, kernel, done = launches + 1, kernel + out.kernel_seconds, done + len(staged.batch)
            sums = self._sums(staged.batch, out)
            if done == len(fine):
                break
            self.handout.account(self.report())  # before the sums: the checkpoint they lead to names its builds
            self.handout.advance(start, end, fine.depth, len(fine), done, sums, len(staged.batch))
            if self.handout.stopping():  # the chunk stays open in the checkpoint
                self.busy_seconds += time.perf_counter() - t0
                self.handout.log(f"{self.ref.label}: states {start}-{end} (refined to {len(fine)} at depth "
                                 f"{fine.depth}) stopped after {done} of them, kernel {kernel:.2f} s")
                return
            size = self._slice(claim.begun, claim.expected, len(fine), done, kernel)
            staged = solver.stage(fine.take(slice(done, done + size)))
        self.busy_seconds += time.perf_counter() - t0
        how = (f" in {launches} launches" if launches > 1 else "") + (f", from {resumed}" if resumed else "")
        self._finish_chunk(claim, sums, kernel, t0, f" (refined to {len(fine)} at depth {fine.depth}{how})",
                           (len(fine) - resumed) / len(fine))

    def _slice(self, begun: OpenChunk | None, expected: float | None, total: int, done: int, kernel: float) -> int:
        """Fine states of a refined chunk's next launch, ``done`` of ``total`` counted (``kernel`` seconds
        by this attempt): at the rate measured on it so far, in an earlier attempt too (jobs.counting.refine)."""
        measured = begun.sums.kernel_seconds if begun else 0.0
        return next_slice(done, total, done, measured + kernel, expected, self.spec.options.chunk_seconds)

    def _finish_chunk(self, claim: _Claim, sums: Partial, kernel_seconds: float, t0: float, refinement: str,
                      share: float = 1.0) -> None:
        start, end = claim.span
        line = (f"{self.ref.label}: states {start}-{end}{refinement}, kernel {kernel_seconds:.2f} s, "
                f"{time.perf_counter() - t0:.2f} s in all, ended {time.perf_counter() - self.spec.t_start:.2f} s "
                "into the attempt")
        self.handout.account(self.report())  # before the sums: the checkpoint they lead to names its builds
        self.handout.finish(start, end, sums, kernel_seconds, share, line)

    def _claim_ahead(self, solver: RefiningSolver, states: StreamedPartition, ahead: ThreadPoolExecutor) -> _Claim | None:
        """The device's next chunk, its states parsed, refined and first launch staged in ``ahead`` (None:
        no more chunks)."""
        span = self.handout.claim()
        if span is None:
            return None
        begun = self.handout.open_chunk(span[0])
        expected = self.handout.expected_seconds(*span)
        chunk_seconds = self.spec.options.chunk_seconds

        def ready() -> _Refined:
            chunk = states.take(*span)  # waits for its row groups to be parsed
            if begun is not None:
                fine = solver.refine(chunk, depth=begun.depth)
            else:
                fine = solver.refine(chunk, deepen(expected, chunk_seconds))
            if fine is chunk:
                return _Refined(chunk, fine, 0, solver.stage(chunk))
            resumed = _check_begun(begun, len(fine), *span)
            # a rate may have been measured while it was refined (the chunk before, or its first slice)
            now_expected = expected if expected is not None else self.handout.expected_seconds(*span)
            size = self._slice(begun, now_expected, len(fine), resumed, 0.0)
            return _Refined(chunk, fine, resumed, solver.stage(fine.take(slice(resumed, resumed + size))))

        return _Claim(span, begun, expected, ahead.submit(ready))

    def _sums(self, chunk: StateBatch | ChildBatch, out: BatchCounts) -> Partial:
        tally = self.problem.tally(chunk, out.counts, out.solutions, self.spec.symmetry)
        nodes = exact_sum(out.nodes) if out.nodes is not None else None
        found = out.solutions.tolist() if out.solutions is not None else None
        return Partial(tally.weighted, tally.raw, tally.classes, nodes, out.kernel_seconds, found, 1)
