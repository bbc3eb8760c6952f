"""Where in the code, as the report shows it: each hint's top locations and each hot kernel's
stall reasons, read from the analysis JSON's ``locations`` (:mod:`advisor.report.locations`).

* :func:`where_of`: a hint's :class:`Where` -- the top source lines (or function + PC offset and
  SASS without line info) of its criterion's own waste, with their share of it; or, where the
  report cannot show them, which locations are missing and how to collect them;
* :func:`stalls_of`: a kernel's top PC-sampling stall reasons (:class:`Stall`), each with its
  share of the stall samples, its top lines, a plain explanation and the usual remedies
  (:data:`STALL_REASONS`, in our words after NVIDIA's Nsight Compute documentation of the warp
  stall reasons, "Kernel Profiling Guide: Warp Stall Reasons").

docs/locations.md ("In the report") states what is shown where.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: each PC-sampling stall reason (the suffix of ``smsp__pcsamp_warps_issue_stalled_*``): what the
#: warp waits on, and the usual remedies
STALL_REASONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "long_scoreboard": (
        "waiting for data from L1TEX: a global, local, texture or surface memory access",
        (
            "keep more independent loads in flight (load early, unroll, more warps per SM)",
            "keep reused data in shared memory or registers",
            "coalesce the accesses so each request needs fewer sectors",
        ),
    ),
    "short_scoreboard": (
        "waiting for a result of the MIO unit: a shared-memory access or a special math "
        "instruction (sin, exp, reciprocal square root)",
        (
            "remove shared-memory bank conflicts (padding, a swizzled layout)",
            "place independent work between a shared load and its use",
            "use fewer special math instructions (precompute, or cheaper arithmetic)",
        ),
    ),
    "mio_throttle": (
        "the MIO instruction queue is full: too many shared-memory, special math or shuffle "
        "instructions at once",
        (
            "issue fewer, wider shared-memory accesses (64- or 128-bit)",
            "remove shared-memory bank conflicts, which replay accesses",
            "interleave the shared-memory work with arithmetic",
        ),
    ),
    "lg_throttle": (
        "the local/global memory instruction queue is full: many small global or local accesses",
        (
            "use wider (vectorised) loads and stores: fewer instructions for the same bytes",
            "remove register spills to local memory",
            "load a value once and reuse it from registers",
        ),
    ),
    "tex_throttle": (
        "the texture unit's queue is full (texture fetches; on some GPUs also FP64 work)",
        (
            "issue fewer texture fetches (combine them, reuse fetched values)",
            "read through ordinary global loads where texture filtering is not needed",
        ),
    ),
    "barrier": (
        "waiting at a block barrier (__syncthreads) for the other warps of the block",
        (
            "balance the work of the warps between barriers",
            "use fewer barriers, or warp-level synchronisation (__syncwarp) where only a warp "
            "exchanges data",
            "use smaller blocks, so fewer warps wait for the slowest",
        ),
    ),
    "membar": (
        "waiting at a memory barrier (__threadfence) for earlier writes to become visible",
        (
            "use fewer memory fences, at the narrowest scope that is correct (block, not device)",
            "avoid ordering (volatile, strong atomics) that the algorithm does not need",
        ),
    ),
    "math_pipe_throttle": (
        "waiting for a busy arithmetic pipe: the kernel issues more of one kind of arithmetic "
        "than that pipe can take",
        (
            "move work to a less busy pipe (FP32 instead of FP64, tensor cores for matrix work)",
            "do less arithmetic (precompute, strength-reduce)",
        ),
    ),
    "wait": (
        "a fixed-latency wait on the result of a previous arithmetic instruction",
        (
            "put independent instructions between dependent ones (unroll, several accumulators)",
            "run more warps per SM so another warp can issue meanwhile",
        ),
    ),
    "not_selected": (
        "ready to issue but another warp was chosen: the scheduler had work, no loss in itself",
        (
            "nothing needed; where it dominates, fewer warps with more work each (more "
            "registers per thread) may run as fast",
        ),
    ),
    "branch_resolving": (
        "waiting for a branch's target to be computed",
        (
            "use fewer branches: branch-free arithmetic (select, min/max) for short conditions",
            "keep branch conditions warp-uniform",
        ),
    ),
    "no_instructions": (
        "no instruction fetched: an instruction-cache miss, or the fetch after a taken branch",
        (
            "keep the hot loop's code small (less unrolling or inlining there)",
            "with very short kernels, do more work per launch",
        ),
    ),
    "dispatch_stall": (
        "the dispatcher could not issue the selected instruction (a pipeline conflict)",
        ("rarely the limiter; mix instruction types so consecutive instructions use other pipes",),
    ),
    "drain": (
        "at the warp's exit, waiting for its memory writes to drain",
        (
            "give each thread more work so the exit is a smaller share of its time",
            "write results with fewer, wider stores",
        ),
    ),
    "imc_miss": (
        "waiting for the immediate constant cache: a constant-memory miss",
        (
            "make a warp's constant-memory reads uniform (all lanes the same address)",
            "keep fewer distinct constants in the hot loop, or hold them in registers",
        ),
    ),
    "sleeping": (
        "the warp sleeps (__nanosleep) or waits for its diverged threads to reconverge",
        ("check the sleep and yield calls and the reconvergence points of divergent code",),
    ),
    "misc": ("a stall of no other category", ("see Nsight Compute's Source page for the lines",)),
    "selected": ("issued an instruction (not a stall)", ()),
    # the reasons nvprof's PC sampling names (CUpti_ActivityPCSamplingStallReason), in our words
    # after CUPTI's documentation of that enumeration; nvprof's SYNC is ``barrier`` above
    "inst_fetch": (
        "the next instruction is not fetched yet: an instruction-cache miss or a jump to code "
        "not in the cache",
        (
            "shrink the hot loop's code (less unrolling, fewer template instances inlined)",
            "avoid large jump tables and deeply inlined cold paths in the kernel",
        ),
    ),
    "exec_dependency": (
        "an input of the instruction is not ready: it waits for the result of an earlier "
        "arithmetic instruction",
        (
            "give each thread more independent work (unroll independent iterations)",
            "run more warps per SM so others issue while one waits",
        ),
    ),
    "memory_dependency": (
        "an input of the instruction is a load from memory that has not returned yet",
        (
            "keep more independent loads in flight (load early, unroll, more warps per SM)",
            "keep reused data in shared memory or registers",
            "coalesce the accesses so each request needs fewer transactions",
        ),
    ),
    "texture": (
        "the texture unit is busy or a texture fetch has not returned yet",
        ("fetch fewer texels per result, or read through global/shared memory instead",),
    ),
    "pipe_busy": (
        "the pipeline the instruction needs (arithmetic or load/store) is busy",
        (
            "spread the work over other pipelines (mix integer and floating-point work)",
            "use cheaper instructions (lower precision, fused multiply-add)",
        ),
    ),
    "memory_throttle": (
        "too many memory requests are pending: the memory pipeline cannot take more",
        (
            "use wider (vectorised) loads and stores: fewer requests for the same bytes",
            "coalesce the accesses so each warp request needs fewer transactions",
        ),
    ),
    "constant_memory_dependency": (
        "a constant-cache miss: the constant (or a kernel parameter) is fetched from memory",
        (
            "read constants the same way from every thread of a warp (uniform addresses)",
            "keep the constant working set small, or move per-thread tables to global memory",
        ),
    ),
    "other": ("a stall of no other category", ("see the Visual Profiler's source view",)),
}
#: locations written per hint in the pull-request comment (the HTML lists all of the JSON's)
COMMENT_LOCATIONS = 1


@dataclass(frozen=True)
class Location:
    """One line (or, without line info, one instruction) and its share of a measure."""

    location: str  # file:line or function+0xOFFSET, as the JSON has it
    file: str | None
    line: int | None
    function: str
    opcodes: str
    sass: str  # the instruction's SASS (without line info; empty otherwise)
    share: float  # of the kernel's total of the measure
    amount: float  # the line's waste or samples
    source: str  # the source line's text where the report embeds the source

    @property
    def short(self) -> str:
        """``conv.cu:54`` (the file's base name); without line info the PC offset in the
        kernel's function, ``+0x00a0`` (``@0x1200+0x00a0`` in a called function)."""
        if self.file and self.line:
            return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"
        _, plus, offset = self.location.rpartition("+")
        if not plus:
            return self.location
        called = self.function.rpartition("@")[2] if "@" in self.function else ""
        return f"{'@' + called if called else ''}+{offset}"


@dataclass(frozen=True)
class BranchKind:
    """What DIVERGENCE's divergent branches test (:mod:`advisor.report.branches`)."""

    kind: str  # thread_index | data | mixed | unknown
    branches: int
    evidence: str


@dataclass(frozen=True)
class Where:
    """A hint's locations in one kernel, or why the report cannot show them."""

    kernel: str
    criterion: str
    measure: str
    top: tuple[Location, ...]
    #: (kind of data, how to collect it) for each kind the report lacks (docs/locations.md)
    missing: tuple[tuple[str, str], ...]
    branch: BranchKind | None = None

    @property
    def text(self) -> str:
        """``50% of the excessive shared wavefronts: sharedMemory.cu:22 (ST.E)``, the top
        location in words (the kernel's name is the caller's)."""
        if not self.top:
            return self.cannot
        t = self.top[0]
        what = f" ({t.opcodes})" if t.opcodes else ""
        return f"{t.share * 100:.0f}% of the {self.measure}: {t.short}{what}"

    @property
    def cannot(self) -> str:
        """Which locations cannot be shown and how to get them (empty: nothing missing that
        the hint's locations need)."""
        kinds = dict(self.missing)
        if "instructions" in kinds:
            return f"no per-instruction data, so no location: {kinds['instructions']}"
        if "line_info" in kinds:
            return f"function and SASS only, no source lines: {kinds['line_info']}"
        return ""


@dataclass(frozen=True)
class Stall:
    """One stall reason of a kernel's PC samples, with its lines and what it means."""

    reason: str
    samples: float
    share: float  # of all stall samples of the kernel
    explanation: str
    remedies: tuple[str, ...]
    top: tuple[Location, ...]

    @property
    def text(self) -> str:
        """``long_scoreboard 50% of the stall samples (at conv.cu:54): waiting for ...``."""
        at = f" (at {', '.join(t.short for t in self.top[:1])})" if self.top else ""
        return f"{self.reason} {self.share * 100:.0f}% of the stall samples{at}: {self.explanation}"


def stall_words(reason: str) -> tuple[str, tuple[str, ...]]:
    """A stall reason's explanation and remedies (:data:`STALL_REASONS`); a reason this table
    does not know is named as the profiler names it."""
    return STALL_REASONS.get(
        reason, (f"stalled on {reason.replace('_', ' ')}", ("see Nsight Compute's Source page",))
    )


def _location(e: Mapping[str, Any], amount: str) -> Location:
    return Location(
        location=str(e.get("location") or ""),
        file=e.get("file"),
        line=e.get("line"),
        function=str(e.get("function") or ""),
        opcodes=str(e.get("opcodes") or ""),
        sass=str(e.get("sass") or ""),
        share=float(e.get("share") or 0.0),
        amount=float(e.get(amount) or 0.0),
        source=str(e.get("source") or ""),
    )


def _missing(locations: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in (locations.get("missing") or {}).items()))


def where_of(locations: Mapping[str, Any] | None, kernel: str, criterion: str) -> Where | None:
    """The :class:`Where` of ``criterion``'s hint in ``kernel`` from the kernel's JSON
    ``locations``; None where the input holds no per-instruction data at all (not an Nsight
    Compute report: no ``locations``), where the kernel was not read, or where the criterion
    has no per-instruction measure (docs/locations.md)."""
    from advisor.report.locations import MEASURES

    if not locations or criterion not in MEASURES or locations.get("not_read") == "not shown":
        return None
    found = (locations.get("criteria") or {}).get(criterion)
    if found is None:
        return Where(kernel, criterion, MEASURES[criterion], (), _missing(locations))
    branch = found.get("branch")
    return Where(
        kernel=kernel,
        criterion=criterion,
        measure=str(found.get("measure") or MEASURES[criterion]),
        top=tuple(_location(e, "waste") for e in found.get("top") or ()),
        missing=_missing(locations),
        branch=(
            BranchKind(str(branch["kind"]), int(branch["branches"]), str(branch["evidence"]))
            if branch
            else None
        ),
    )


def stalls_of(locations: Mapping[str, Any] | None) -> tuple[Stall, ...]:
    """A kernel's top stall reasons (:func:`advisor.report.locations.top_stalls` in the JSON)
    with their explanations and remedies; empty without PC samples."""
    out = []
    for s in (locations or {}).get("stalls") or ():
        explanation, remedies = stall_words(str(s["reason"]))
        out.append(
            Stall(
                reason=str(s["reason"]),
                samples=float(s["samples"]),
                share=float(s["share"]),
                explanation=explanation,
                remedies=remedies,
                top=tuple(_location(e, "samples") for e in s.get("top") or ()),
            )
        )
    return tuple(out)


def where_json(w: Where | None) -> dict[str, Any] | None:
    """A hint's ``where`` in ``report --json``'s verdict (the top location as the Markdown
    writes it; every location stays in the kernel's ``locations``)."""
    if w is None:
        return None
    top = w.top[0] if w.top else None
    return {
        "kernel": w.kernel,
        "measure": w.measure,
        "location": top.location if top else None,
        "share": top.share if top else None,
        "opcodes": top.opcodes if top else None,
        "text": w.text,
        "missing": dict(w.missing),
        "branch": w.branch.kind if w.branch else None,
    }


def stalls_json(stalls: tuple[Stall, ...]) -> list[dict[str, Any]]:
    """A limiter's ``stalls`` in ``report --json``'s verdict."""
    return [
        {
            "reason": s.reason,
            "samples": s.samples,
            "share": s.share,
            "explanation": s.explanation,
            "remedies": list(s.remedies),
            "top": [t.location for t in s.top],
        }
        for s in stalls
    ]


#: DIVERGENCE's first action by what its divergent branches test (:mod:`advisor.report.branches`)
BRANCH_ACTIONS: dict[str, str] = {
    "thread_index": (
        "the divergent branch tests the thread's index ({evidence}): restructure the work so "
        "all 32 threads of a warp take the same side, e.g. branch on threadIdx.x / 32 instead of "
        "threadIdx.x, give boundary threads a clamped (or padded) copy of the work, or launch "
        "just the threads that have work"
    ),
    "data": (
        "the divergent branch tests loaded data ({evidence}): reorder the data so neighbouring "
        "threads see alike values (sort or bin the elements by the condition, or process the "
        "two cases in separate passes or kernels)"
    ),
    "mixed": (
        "the divergent branch tests both the thread's index and loaded data ({evidence}): make "
        "the index part warp-uniform first, then group the data by the condition"
    ),
}


def branch_actions(where: Where, actions: tuple[str, ...]) -> tuple[str, ...]:
    """``actions`` of a hint, led by the action that follows from what DIVERGENCE's branches
    test where the SASS tells it (:data:`BRANCH_ACTIONS`); unchanged otherwise."""
    if where.criterion != "DIVERGENCE" or where.branch is None:
        return actions
    lead = BRANCH_ACTIONS.get(where.branch.kind)
    if lead is None:
        return actions
    return (lead.format(evidence=where.branch.evidence), *actions)
