"""``cuda-advisor microbench``: build, check, run and fit the GPU microbenchmarks (seed 002
section III).  Registered on the ``cuda-advisor`` group by advisor/cli/group.py.  The help texts
say what is measured and checked; the paper's figures are named after click's ``\\f``.

Exit codes: 0 success; 1 nvcc rejected the sources, a Fig. 2 check failed, or the benchmark
driver failed on the GPU; 2 bad usage, nvcc or cuobjdump missing (the message says how to
install it), or no NVIDIA GPU (``run``); 3 an unreadable or malformed raw-samples file (``fit``).
"""

from __future__ import annotations

from pathlib import Path

import click

from advisor.cli import options
from advisor.devices.characterization import dump_characterization
from advisor.errors import AdvisorError, UsageError
from advisor.microbench.build import (
    DEFAULT_BUILD_DIR,
    MANIFEST,
    build_microbenchmarks,
    built_files,
)
from advisor.microbench.checks import CheckReport, check_build
from advisor.microbench.fit import fit_characterization
from advisor.microbench.layout import BINARY_NAME, GROUPS
from advisor.microbench.raw import read_raw
from advisor.microbench.run import DEFAULT_REPS, run_microbenchmarks
from advisor.output import refuse_inputs, write_atomic


class ChecksFailed(AdvisorError):
    """A measured instruction sequence did not survive compilation (exit 1)."""


@click.group(name="microbench")
def microbench_group() -> None:
    """GPU microbenchmarks: build, check, run, fit a device characterization.

    They measure instruction latency and throughput, load latency per memory level, DRAM
    bandwidth against loads in flight, FLOP/s against arithmetic intensity, shared-memory bank
    conflicts and warp divergence on the local GPU; the fitted JSON is what --device FILE.json
    reads.

    \b
    cuda-advisor microbench build [--arch sm_80 ...] [-o DIR]
    cuda-advisor microbench check [DIR]
    cuda-advisor microbench run [--out raw.json]       (needs an NVIDIA GPU)
    cuda-advisor microbench fit raw.json -o device.json

    \f
    The benchmarks and their checks follow seed 002 section III (its Fig. 2 and Fig. 3).
    """


@microbench_group.command(name="build")
@click.option(
    "--arch",
    "archs",
    multiple=True,
    help="Real architecture to compile for (repeatable), e.g. sm_80."
    " Default: sm_75, sm_80, sm_90 (those this nvcc supports).",
)
@click.option(
    "-o", "--output", "out_dir", default=DEFAULT_BUILD_DIR, show_default=True, help="Build folder."
)
@click.option(
    "--no-check",
    is_flag=True,
    help="Skip the check that every timed region kept its instructions after building.",
)
def build_command(archs: tuple[str, ...], out_dir: str, no_check: bool) -> None:
    """Compile the microbenchmarks with nvcc (keeps PTX and cubins for the checks)."""
    result = build_microbenchmarks(out_dir, archs)
    click.echo(
        f"built {result.binary} for {', '.join(result.archs)} with nvcc {result.nvcc_version}"
        f" ({result.seconds:.0f} s)"
    )
    if not no_check:
        _report(check_build(out_dir), verbose=False)


@microbench_group.command(name="check")
@click.argument("build_dir", default=DEFAULT_BUILD_DIR, required=False)
@click.option("-v", "--verbose", is_flag=True, help="Print every check, not only failures.")
@click.option("--no-sass", is_flag=True, help="Check the PTX only.")
def check_command(build_dir: str, verbose: bool, no_sass: bool) -> None:
    """Check that nvcc kept the measured instructions in every timed region.

    For every benchmark kernel, count the measured instructions between its two clock64 reads
    in the PTX and in the SASS (cuobjdump) against the count the benchmark needs: none
    optimized away, fused or hoisted out of the timed region.

    \f
    Seed 002's Fig. 2 checks (b: PTX, c: SASS).
    """
    if not built_files(build_dir, "ptx"):
        raise UsageError(
            f"{build_dir}: no PTX files; run `cuda-advisor microbench build -o {build_dir}` first"
        )
    _report(check_build(build_dir, sass=not no_sass), verbose)


def _report(report: CheckReport, verbose: bool) -> None:
    for result in report.results:
        if verbose or not result.ok:
            click.echo(result.line())
    for kernel in report.missing:
        click.echo(f"FAIL missing kernel: {kernel}")
    click.echo(report.summary())
    if not report.ok:
        failed = sum(1 for r in report.results if not r.ok) + len(report.missing)
        raise ChecksFailed(f"{failed} Fig. 2 check(s) failed (listed above)")


@microbench_group.command(name="run")
@click.option(
    "-o", "--out", "out", default="raw.json", show_default=True, help="Raw samples file to write."
)
@click.option(
    "--build-dir",
    default=DEFAULT_BUILD_DIR,
    show_default=True,
    help="Build folder (built first if it lacks this GPU's architecture).",
)
@click.option("--reps", default=DEFAULT_REPS, show_default=True, help="Repetitions per point.")
@click.option(
    "--only",
    "only",
    default="",
    help=f"Comma-separated groups to run ({', '.join(GROUPS)}); default all.",
)
@click.option("--gpu", "gpu", default=0, show_default=True, help="Index of the GPU to run on.")
def run_command(out: str, build_dir: str, reps: int, only: str, gpu: int) -> None:
    """Run the microbenchmarks on the local NVIDIA GPU and write the raw samples."""
    groups = tuple(g for g in only.split(",") if g)
    # the driver binary and the build manifest the run reads are never its output; refused at
    # once, not after minutes of measuring
    used = [Path(build_dir) / BINARY_NAME, Path(build_dir) / MANIFEST]
    refuse_inputs([out], used)
    text = run_microbenchmarks(build_dir, reps=reps, only=groups, gpu_index=gpu)
    write_atomic(out, text, inputs=used)
    click.echo(f"wrote {out}; next: cuda-advisor microbench fit {out} -o device.json")


@microbench_group.command(name="fit")
@click.argument("raw_file", type=options.INPUT_PATH)
@click.option(
    "-o", "--output", required=True, type=options.OUTPUT_PATH, help="Device JSON to write."
)
@click.option(
    "--device",
    default=None,
    help="Database GPU name to use instead of the name in the samples.",
)
def fit_command(raw_file: str, output: str, device: str | None) -> None:
    """Fit raw samples into a device characterization JSON (for --device FILE.json)."""
    characterization = fit_characterization(read_raw(raw_file), device)
    write_atomic(output, dump_characterization(characterization), inputs=[raw_file])
    functions = ", ".join(characterization.functions) or "none"
    latencies = ", ".join(f"{k} {v:g}" for k, v in characterization.latencies_cycles.items())
    click.echo(f"wrote {output} for {characterization.device.name}")
    click.echo(f"  functions: {functions}")
    click.echo(f"  load latencies (cycles): {latencies}")


COMMANDS: list[click.Command] = [microbench_group]
