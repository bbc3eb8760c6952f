"""The paper's Fig. 2 checks, automated: are the measured instructions still there after compiling?

Seed 002 section III-A (Fig. 2): a microbenchmark is written in CUDA with inline PTX (a), then
(b) its PTX is inspected to verify that the compiler front end kept the measured instruction
sequence, and (c) its SASS (the disassembled binary) is inspected for the same after ptxas.  Here
every kernel has a *timed region* between two ``clock64`` reads (PTX ``mov.u64 %rd, %clock64``,
SASS ``CS2R Rn, SR_CLOCKLO``; the seeds read the 32-bit ``%clock``); :data:`EXPECTATIONS` says
which instructions must appear there and how many times, and :func:`check_text` counts them.

What the checks caught while the benchmarks were written (each is now a guarded expectation):
ptxas fuses a chain of ``add.s32`` into three-input ``IADD3`` (half the count) and, with an
immediate operand, folds it into one instruction hoisted out of the timed region; it cancels
``rcp.approx`` pairs (an even chain vanishes); it deletes loads whose result is unused even in
``asm volatile``; it merges four adjacent 4-byte shared stores into one ``STS.128``; it runs a
warp-uniform integer chain on the uniform datapath (``UIADD3``); and the LLVM front end sinks
identical ``asm`` from the branches of an ``if``/``else`` into the join block, removing the
divergence that the F_Divergence benchmark is meant to create.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from advisor.microbench.build import built_files
from advisor.microbench.layout import (
    CHAIN,
    DIVERGENCE_CONFIGS,
    ILP,
    INTENSITY_KERNEL_FMAS,
    SHMEM_LOADS_PER_ITERATION,
)
from advisor.microbench.toolchain import (
    CUOBJDUMP_HINT,
    QUERY_TIMEOUT_S,
    ToolMissing,
    find_cuobjdump,
)

PTX = "ptx"
SASS = "sass"
TIMED = "timed"  # between the two clock64 reads
KERNEL = "kernel"  # anywhere in the kernel
LOOP = "loop"  # SASS only: the body of the loop that the timed region's last backward branch closes

#: translation units that define measured kernels (main.cu is the host driver)
_UNITS_WITH_KERNELS = ("arith", "memory", "shmem", "divergence")
_PTX_TIMER = re.compile(r"%clock64\b")
_SASS_TIMER = re.compile(r"^CS2U?R U?R\d+, SR_CLOCKLO$")
_PTX_ENTRY = re.compile(r"^\.(?:visible\s+)?\.entry\s+(\w+)\s*\(", re.MULTILINE)
_SASS_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$", re.MULTILINE)
_SASS_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]*?)\s*;")
#: a branch and its target; a uniform-predicate operand may come first (sm_100's loop back edge
#: ``BRA.U UP0, 0x110``, ``BRA.DIV ~URZ, 0x...``)
_SASS_BRANCH = re.compile(
    r"\bBRA(?:\.[A-Z.]+)?\s+(?:[!~]?U?(?:P(?:T|\d+)|RZ)\s*,\s*)?(?:`\()?0x([0-9a-f]+)"
)


@dataclass(frozen=True)
class Expect:
    """``count`` instructions of ``kernel`` matching ``pattern`` (a regex on the instruction
    text, predicate included) in the timed region (or the whole kernel) at ``level``."""

    kernel: str
    level: str  # PTX or SASS
    pattern: str
    count: int
    what: str
    scope: str = TIMED


@dataclass(frozen=True)
class CheckResult:
    arch: str  # "sm_80"
    level: str
    kernel: str
    what: str
    expected: int
    found: int | None  # None: the kernel or its timed region is missing
    source: str  # the file that was read

    @property
    def ok(self) -> bool:
        return self.found == self.expected

    def line(self) -> str:
        found = "missing" if self.found is None else str(self.found)
        mark = "ok  " if self.ok else "FAIL"
        return (
            f"{mark} {self.arch:7s} {self.level:4s} {self.kernel:28s} {self.what}:"
            f" expected {self.expected}, found {found}"
        )


def _only(pattern: str) -> str:
    """A pattern matching every instruction other than ``pattern``, NOP (the scheduler's padding,
    e.g. between dependent DFMA on sm_120) and uniform-datapath instructions (ptxas schedules the
    pass loop's uniform predicate into the region on sm_100 and sm_120)."""
    return rf"^(?!(?:{pattern}|NOP\b|U[A-Z0-9.]*\s))"


def _arith(name: str, ptx: tuple[str, ...], sass: tuple[tuple[str, str], ...]) -> list[Expect]:
    """``sass``: (regex, label) of each measured SASS instruction."""
    out: list[Expect] = []
    for kernel, n in ((f"mb_{name}_latency", CHAIN), (f"mb_{name}_throughput", CHAIN * ILP)):
        for op in ptx:
            out.append(Expect(kernel, PTX, rf"^{re.escape(op)}\b", n, f"{op} in the timed region"))
        for pattern, label in sass:
            out.append(Expect(kernel, SASS, rf"^{pattern}\b", n, f"{label} in the timed region"))
        joined = "|".join(rf"{pattern}\b" for pattern, _ in sass)
        out.append(Expect(kernel, SASS, _only(f"(?:{joined})"), 0, "other SASS in the region"))
    return out


def _memory() -> list[Expect]:
    out: list[Expect] = []
    chase = {"shared": "ld.shared.u32", "l1": "ld.global.ca.u64", "l2": "ld.global.cg.u64"}
    chase["dram"] = chase["l2"]
    chase_sass = {"shared": r"LDS(?:\.U)?", "l1": r"LDG\.E\S*?\.64", "l2": r"LDG\.E\S*?\.64"}
    chase_sass["dram"] = chase_sass["l2"]
    store = {
        "shared": ("st.shared.u32", "membar.cta", r"STS(?:\.U)?"),
        "l1": ("st.global.wb.u32", "membar.gl", r"STG\.E(?:\.[A-Z]+)*"),
        "l2": ("st.global.cg.u32", "membar.gl", r"STG\.E(?:\.[A-Z]+)*"),
        "dram": ("st.global.cs.u32", "membar.gl", r"STG\.E(?:\.[A-Z]+)*"),
    }
    wide = {
        ("shared", "load"): ("ld.shared.v4.u32", r"LDS\S*\.128"),
        ("shared", "store"): ("st.shared.v4.u32", r"STS\S*\.128"),
        ("l1", "load"): ("ld.global.ca.v4.u32", r"LDG\.E\S*\.128"),
        ("l1", "store"): ("st.global.wb.v4.u32", r"STG\.E\S*\.128"),
        ("l2", "load"): ("ld.global.cg.v4.u32", r"LDG\.E\S*\.128"),
        ("l2", "store"): ("st.global.cg.v4.u32", r"STG\.E\S*\.128"),
        ("dram", "load"): ("ld.global.cg.v4.u32", r"LDG\.E\S*\.128"),
        ("dram", "store"): ("st.global.cs.v4.u32", r"STG\.E\S*\.128"),
    }
    for level, op in chase.items():
        kernel = f"mb_{level}_load_latency"
        out.append(Expect(kernel, PTX, rf"^{re.escape(op)}\b", CHAIN, f"{op} chain"))
        out.append(Expect(kernel, SASS, rf"^{chase_sass[level]}\b", CHAIN, "dependent loads"))
        out.append(
            Expect(kernel, SASS, _only(rf"{chase_sass[level]}\b"), 0, "other SASS in the region")
        )
    out.append(Expect("mb_shared_load_latency", PTX, r"^bar\.sync\b", 1, "bar.sync", KERNEL))
    for level, (op, barrier, sass_op) in store.items():
        kernel = f"mb_{level}_store_latency"
        out.append(Expect(kernel, PTX, rf"^{re.escape(op)}\b", CHAIN, f"{op} sequence"))
        out.append(Expect(kernel, PTX, rf"^{re.escape(barrier)}\b", 1, barrier))
        out.append(Expect(kernel, SASS, rf"^{sass_op}\s", CHAIN, "stores"))
        out.append(Expect(kernel, SASS, r"^MEMBAR\b", 1, "MEMBAR"))
    for (level, access), (op, sass_op) in wide.items():
        kernel = f"mb_{level}_{access}_throughput"
        out.append(Expect(kernel, PTX, rf"^{re.escape(op)}\b", ILP, f"{op} per iteration"))
        out.append(
            Expect(kernel, SASS, rf"^{sass_op}\b", ILP, "16-byte accesses in the loop", LOOP)
        )
    for n in (1, 2, 4, 8):
        kernel = f"mb_dram_sweep_ilp{n}"
        out.append(Expect(kernel, PTX, r"^ld\.global\.cg\.v4\.u32\b", n, "loads in flight"))
        out.append(Expect(kernel, SASS, r"^LDG\.E\S*\.128\b", n, "16-byte loads in the loop", LOOP))
    return out


def _characterization_sweeps() -> list[Expect]:
    out: list[Expect] = []
    for fmas in INTENSITY_KERNEL_FMAS:
        kernel = f"mb_arith_intensity_{fmas}"
        out.append(Expect(kernel, PTX, r"^ld\.global\.cg\.v4\.f32\b", 1, "one 16-byte load"))
        out.append(Expect(kernel, PTX, r"^fma\.rn\.f32\b", fmas, "fma.rn.f32 per load"))
        out.append(Expect(kernel, SASS, r"^LDG\.E\S*\.128\b", 1, "one 16-byte load"))
        out.append(Expect(kernel, SASS, r"^FFMA\b", fmas, "FFMA per load"))
    kernel = "mb_shmem_conflicts"
    out.append(
        Expect(kernel, PTX, r"^ld\.shared\.u32\b", SHMEM_LOADS_PER_ITERATION, "ld.shared.u32 chain")
    )
    out.append(Expect(kernel, PTX, r"^bar\.sync\b", 1, "bar.sync", KERNEL))
    out.append(
        Expect(kernel, SASS, r"^LDS(?:\.U)?\b", SHMEM_LOADS_PER_ITERATION, "dependent shared loads")
    )
    for ways, uni, div in DIVERGENCE_CONFIGS:
        kernel = f"mb_divergence_w{ways}_u{uni}_d{div}"
        fmas = uni + ways * div
        out.append(Expect(kernel, PTX, r"^fma\.rn\.f32\b", fmas, "fma.rn.f32 (UNI + WAYS*DIV)"))
        out.append(
            Expect(kernel, PTX, r"^@!?%p\d+ bra\b", ways + 1, "predicated branches (WAYS + 1)")
        )
        out.append(Expect(kernel, SASS, r"^FFMA\b", fmas, "FFMA (UNI + WAYS*DIV)"))
        if ways > 1:
            out.append(Expect(kernel, SASS, r"^BSSY\b", 1, "reconvergence barrier BSSY"))
    return out


EXPECTATIONS: tuple[Expect, ...] = (
    *_arith(
        "int",
        ("add.s32", "xor.b32"),
        ((r"(?:IADD3|IMAD\.IADD)", "IADD3 or IMAD.IADD"), (r"LOP3\.LUT", "LOP3.LUT")),
    ),
    *_arith("fp32", ("fma.rn.f32",), (("FFMA", "FFMA"),)),
    *_arith("sfu", ("rsqrt.approx.ftz.f32",), ((r"MUFU\.RSQ", "MUFU.RSQ"),)),
    *_arith("fp64", ("fma.rn.f64",), (("DFMA", "DFMA"),)),
    *_memory(),
    *_characterization_sweeps(),
)


# ----------------------------------------------------------------------------------- parsing


def ptx_kernels(text: str) -> dict[str, list[str]]:
    """Kernel name -> its PTX instructions (predicate kept, no comments, labels, directives)."""
    out: dict[str, list[str]] = {}
    matches = list(_PTX_ENTRY.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out[match.group(1)] = _ptx_instructions(text[match.end() : end])
    return out


def _ptx_instructions(body: str) -> list[str]:
    out: list[str] = []
    for raw in body.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line or line[0] in ".{}$(" or line.endswith(":") or line.startswith(")"):
            continue
        out.append(" ".join(line.rstrip(";").split()))
    return out


def sass_kernels(text: str) -> dict[str, list[str]]:
    """Kernel name -> its SASS instructions, from ``cuobjdump -sass`` output."""
    return _instructions(_sass_addressed(text))


def _instructions(addressed: Mapping[str, list[tuple[int, str]]]) -> dict[str, list[str]]:
    return {name: [ins for _, ins in listed] for name, listed in addressed.items()}


def _sass_addressed(text: str) -> dict[str, list[tuple[int, str]]]:
    """Kernel name -> (address, instruction) of each SASS instruction."""
    out: dict[str, list[tuple[int, str]]] = {}
    matches = list(_SASS_FUNCTION.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        out[match.group(1)] = [
            (int(m.group(1), 16), " ".join(m.group(2).split()))
            for m in _SASS_INSTRUCTION.finditer(body)
        ]
    return out


def sass_loop_bodies(text: str) -> dict[str, list[str] | None]:
    """Kernel name -> the instructions of the loop that the timed region's last backward branch
    closes (its target through the branch); None without a timed region or such a branch.

    A per-iteration count in the timed region cannot tell a load in the loop from one that ptxas
    hoisted in front of it (both lie between the clock reads): with loop-invariant addresses it
    moved the four loads of the shared and L1 throughput kernels out of their loop, which then
    timed nothing but the XOR of the loaded words."""
    return _loop_bodies(_sass_addressed(text))


def _loop_bodies(addressed: Mapping[str, list[tuple[int, str]]]) -> dict[str, list[str] | None]:
    out: dict[str, list[str] | None] = {}
    for name, listed in addressed.items():
        marks = [i for i, (_, ins) in enumerate(listed) if _SASS_TIMER.match(ins)]
        out[name] = None
        if len(marks) != 2:
            continue
        region = listed[marks[0] + 1 : marks[1]]
        for address, ins in reversed(region):
            branch = _SASS_BRANCH.search(ins)
            if branch and region[0][0] <= int(branch.group(1), 16) < address:
                target = int(branch.group(1), 16)
                out[name] = [i for a, i in region if target <= a <= address]
                break
    return out


def timed_region(instructions: list[str], level: str) -> list[str] | None:
    """The instructions between the kernel's two clock64 reads; None unless exactly two."""
    if level == PTX:
        marks = [i for i, ins in enumerate(instructions) if _PTX_TIMER.search(ins)]
    else:
        marks = [i for i, ins in enumerate(instructions) if _SASS_TIMER.match(ins)]
    if len(marks) != 2:
        return None
    return instructions[marks[0] + 1 : marks[1]]


def count(instructions: Iterable[str], pattern: str) -> int:
    rx = re.compile(pattern)
    return sum(1 for ins in instructions if rx.search(ins))


def check_text(
    text: str, level: str, arch: str, source: str, expectations: Iterable[Expect] = EXPECTATIONS
) -> list[CheckResult]:
    """Check the kernels of one PTX file or one ``cuobjdump -sass`` listing.

    Only expectations whose kernel is defined in ``text`` are checked (one file holds one
    translation unit's kernels); :func:`missing_kernels` finds kernels that no file defines.
    """
    loops: dict[str, list[str] | None] = {}
    if level == PTX:
        kernels = ptx_kernels(text)
    else:  # the listing parsed once for both scopes
        addressed = _sass_addressed(text)
        kernels = _instructions(addressed)
        loops = _loop_bodies(addressed)
    out: list[CheckResult] = []
    for exp in expectations:
        if exp.level != level or exp.kernel not in kernels:
            continue
        instructions = kernels[exp.kernel]
        scope: list[str] | None
        if exp.scope == KERNEL:
            scope = instructions
        elif exp.scope == LOOP:
            scope = loops.get(exp.kernel)
        else:
            scope = timed_region(instructions, level)
        found = None if scope is None else count(scope, exp.pattern)
        out.append(CheckResult(arch, level, exp.kernel, exp.what, exp.count, found, source))
    return out


def missing_kernels(results: Iterable[CheckResult], level: str) -> list[str]:
    """Kernels with expectations at ``level`` that no checked file defined."""
    seen = {r.kernel for r in results if r.level == level}
    return sorted({e.kernel for e in EXPECTATIONS if e.level == level} - seen)


def check_files(files: Mapping[str, Iterable[Path]], level: str) -> list[CheckResult]:
    """Check PTX files (or SASS listings) grouped by architecture."""
    out: list[CheckResult] = []
    for arch, paths in sorted(files.items()):
        for path in sorted(paths):
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            out.extend(check_text(text, level, arch, str(path)))
    return out


# ------------------------------------------------------------------------------ build folders


@dataclass(frozen=True)
class CheckReport:
    results: tuple[CheckResult, ...]
    missing: tuple[str, ...]  # "ptx mb_fp32_latency": kernels no file defined
    sass_skipped: str | None  # why the SASS checks did not run

    @property
    def ok(self) -> bool:
        return not self.missing and all(r.ok for r in self.results)

    def summary(self) -> str:
        levels = [PTX] if self.sass_skipped else [PTX, SASS]
        parts = []
        for level in levels:
            rows = [r for r in self.results if r.level == level]
            archs = sorted({r.arch for r in rows})
            failed = sum(1 for r in rows if not r.ok)
            parts.append(
                f"{level.upper()} {len(rows) - failed}/{len(rows)} passed ({', '.join(archs)})"
            )
        text = "Fig. 2 checks: " + "; ".join(parts)
        if self.missing:
            text += f"; {len(self.missing)} kernel(s) missing"
        if self.sass_skipped:
            text += f"; SASS not checked: {self.sass_skipped}"
        return text


def sass_listing(cubin: Path, cuobjdump: str, env: Mapping[str, str]) -> str:
    """``cuobjdump -sass`` of one cubin."""
    done = subprocess.run(
        [cuobjdump, "-sass", str(cubin)],
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=QUERY_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[0]
        raise ToolMissing(f"cuobjdump -sass {cubin} failed: {reason}")
    return done.stdout


def check_build(out_dir: str | Path, sass: bool = True) -> CheckReport:
    """Run every expectation on the PTX of a build folder, and on its SASS where cuobjdump is."""
    results = check_files(built_files(out_dir, "ptx"), PTX)
    missing = [f"ptx {k}" for k in missing_kernels(results, PTX)]
    skipped: str | None = None
    tool = find_cuobjdump() if sass else None
    if not sass:
        skipped = "not requested"
    elif tool is None:
        skipped = CUOBJDUMP_HINT
    else:
        cuobjdump, env = tool
        cubins = [
            (arch, cubin)
            for arch, files in built_files(out_dir, "cubin").items()
            for cubin in files
            if cubin.stem in _UNITS_WITH_KERNELS
        ]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            listings = list(pool.map(lambda job: sass_listing(job[1], cuobjdump, env), cubins))
        sass_results: list[CheckResult] = []
        for (arch, cubin), text in zip(cubins, listings, strict=True):
            sass_results.extend(check_text(text, SASS, arch, str(cubin)))
        missing += [f"sass {k}" for k in missing_kernels(sass_results, SASS)]
        results.extend(sass_results)
    return CheckReport(tuple(results), tuple(missing), skipped)
