"""``cuda-advisor predict``: time predictions from the papers' models (MODELS.md §3-4).

The group is ``predict_group``; each model is a subcommand (``predict bsp`` here).  The commands
parse options, call :mod:`advisor.models`, and print; errors become one line and an exit code.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import click

from advisor.cli import loading, options
from advisor.devices.database import find_device
from advisor.errors import UsageError
from advisor.models.bsp import DEFAULT_LATENCIES, GpuSpec, Latencies, ThreadCounts
from advisor.models.bsp.app import read_app
from advisor.models.bsp.arch import DEFAULT_FORM, FORMS
from advisor.models.bsp.result import profile_per_thread, render_text, run_bsp, to_json

CALIBRATE_SYNTAX = "GPU:N:TIME, e.g. 'GeForce GTX 680:1024:26.2' (N the input size, TIME in ms)"


@click.group(name="predict")
def predict_group() -> None:
    """Predict kernel times from analytic models (BSP, MAX/SUM bounds).

    \f
    bsp: seed 000 (MODELS.md §3); maxsum: seed 001 (MODELS.md §4).
    """


def find_gpu(name: str, option: str) -> GpuSpec:
    """The GPU database entry for ``name``; unknown names are usage errors with close matches."""
    try:
        return find_device(name)
    except UsageError as exc:
        raise UsageError(f"{option}: {exc}") from None


def parse_calibration(text: str) -> tuple[str, float, float]:
    """``GPU:N:TIME`` -> (GPU name, N, time in seconds).  The GPU name may contain ':'."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[0].strip():
        raise UsageError(f"--calibrate {text!r}: expected {CALIBRATE_SYNTAX}")
    gpu, size_text, time_text = (p.strip() for p in parts)
    size = _positive(size_text, f"--calibrate {text!r}: N")
    time_ms = _positive(time_text, f"--calibrate {text!r}: TIME (ms)")
    return gpu, size, time_ms * 1e-3


def parse_sizes(text: str) -> list[float]:
    """``N1,N2,...`` -> sizes (positive numbers), in the given order."""
    items = [item.strip() for item in text.split(",")]
    if not items or any(not item for item in items):
        raise UsageError(f"--sizes {text!r}: expected N1,N2,... (positive numbers)")
    return [_positive(item, f"--sizes {text!r}: {item!r}") for item in items]


def _positive(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{what} must be > 0, got {text!r}")
    return value


def _constant(counts: ThreadCounts) -> Callable[[float], ThreadCounts]:
    """Counts that do not depend on N (a profile describes one run)."""

    def counts_at(_n: float) -> ThreadCounts:
        return counts

    return counts_at


@predict_group.command(name="bsp")
@click.option("--app", "app_path", type=options.INPUT_PATH, help="Application file.")
@click.option(
    "--profile",
    "profile_paths",
    multiple=True,
    type=options.INPUT_PATH,
    help="Profile(s) of one run to take per-thread counts from (instead of --app).",
)
@click.option("--kernel", help="Kernel of the profile to model (substring of its name).")
@click.option(
    "--calibrate",
    "calibrate",
    metavar="GPU:N:TIME",
    help="Measured run, TIME in ms (with --profile: default the profile's own GPU and time).",
)
@click.option(
    "--device",
    "device",
    metavar="NAME|FILE.json",
    help="--profile only: the profiled GPU, when the profile does not name it, or a device "
    "characterization file (its measured DRAM latency enters η_arch).",
)
@click.option("--gpu", "gpus", multiple=True, metavar="NAME[,NAME...]", help="GPUs to predict for.")
@click.option("--sizes", metavar="N1,N2,...", help="Input sizes to predict (--app only).")
@click.option(
    "--form",
    type=click.Choice(FORMS),
    default=DEFAULT_FORM,
    show_default=True,
    help="auto: roofline for a kernel memory-bound by its measured DRAM bytes on the "
    "calibration GPU, else arch; arch: λ = λ_app·η_arch, carried across GPU generations; "
    "roofline: smooth maximum of a compute part and a DRAM-bandwidth part over one λ_app (all "
    "this project's extensions); paper: the original model's one λ for every GPU.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def bsp_cmd(
    app_path: str | None,
    profile_paths: tuple[str, ...],
    kernel: str | None,
    calibrate: str | None,
    device: str | None,
    gpus: tuple[str, ...],
    sizes: str | None,
    form: str,
    as_json: bool,
) -> None:
    """Predict a kernel's time on other GPUs and sizes from one measured run (BSP model).

    T_k = t·(Comp + Comm_GM + Comm_SM)/(R·P·λ): t threads, each with Comp compute cycles and
    Comm_GM, Comm_SM cycles of global and shared memory accesses (their counts times the
    latencies), over R (clock) · P (cores); λ absorbs what the model leaves out (latency
    hiding, caches, occupancy).

    λ is fitted on the measured run given by --calibrate GPU:N:TIME (TIME in milliseconds), then
    T_k is predicted for every --gpu (default: the calibration GPU) and every --sizes value
    (default: the calibration N).  Per-thread counts come from an application file (--app,
    expressions of N) or from a profile of one run (--profile; it fixes the size).  With
    --profile, --calibrate defaults to the profile's own GPU and its kernel's measured time:
    predict a kernel on a GPU you do not have from one profile of it.

    The default form carries λ across GPU generations: λ = λ_app·η_arch, where η_arch of a GPU
    is its issue slots per SM over its FP32 cores per SM times 500 cycles over its DRAM
    latency; --form roofline predicts a smooth maximum of a compute part and a memory part over
    λ_app instead, the compute part the instructions over the GPU's issue rate, the memory part
    the DRAM bytes over its bandwidth; --form paper keeps the paper's one λ for every GPU.
    The default (auto) uses the roofline form for a kernel whose measured DRAM bytes
    dominate on its own GPU, the arch form otherwise, and prints which and why.  Every form
    prints, per GPU, which of the two parts dominates, and no prediction is under the GPU's
    floor (its instructions at the peak issue rate, its measured DRAM bytes at the peak
    bandwidth): one that would be is raised to it and marked.

    \f
    Seed 000 §IV, equations (3)-(5); MODELS.md §3; docs/bsp.md Decisions B1 (architecture form)
    and B2 (roofline form), B3 (physical floor, per-kernel default).
    """
    if (app_path is None) == (not profile_paths):
        raise UsageError("give exactly one of --app FILE or --profile FILE")
    if device is not None and not profile_paths:
        raise UsageError("--device applies to --profile only")
    if calibrate is None and not profile_paths:
        raise UsageError(f"--app needs --calibrate {CALIBRATE_SYNTAX}")
    characterizations: dict[str, object] = {}
    cal_gpu: GpuSpec | None = None
    cal_size, measured_s = 1.0, 0.0
    if calibrate is not None:
        cal_gpu_name, cal_size, measured_s = parse_calibration(calibrate)
        cal_gpu = find_gpu(cal_gpu_name, "--calibrate")
    target_specs = [find_gpu(name, "--gpu") for name in options.gpu_names(gpus, "--gpu")]
    counts_at: Callable[[float], ThreadCounts]
    latencies: Latencies = DEFAULT_LATENCIES
    paths: tuple[str, ...]
    per_thread: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    if app_path is not None:
        if kernel is not None:
            raise UsageError("--kernel applies to --profile only")
        app = read_app(app_path)
        counts_at, latencies = app.counts, app.latencies
        kind, name, paths = "app", app.name, (app_path,)
        per_thread, notes = tuple(app.expressions().items()), ()
        size_list = parse_sizes(sizes) if sizes is not None else [cal_size]
    else:
        if sizes is not None:
            raise UsageError(
                "--sizes needs --app: counts from a profile hold for the profiled run only; "
                "write an application file to predict other sizes"
            )
        with loading.modules():  # pandas loads here, not for --help
            from advisor import pipeline
            from advisor.models.bsp import profile as bsp_profile

        profile = pipeline.read(profile_paths)
        found = bsp_profile.counts_from_profile(profile, bsp_profile.pick_kernel(profile, kernel))
        counts_at = _constant(found.counts)
        kind, name, paths = "profile", found.kernel, profile_paths
        per_thread = profile_per_thread(found.counts, found.sources)
        notes = (*found.assumed, bsp_profile.profiled_time_note(found))
        if cal_gpu is None or device is not None:
            characterization, why = pipeline.device_for(profile, device)
            if characterization is not None:
                characterizations[characterization.device.name] = characterization
            if cal_gpu is None:
                if characterization is None:
                    raise UsageError(
                        f"predict bsp: {why}; give --device NAME or --calibrate {CALIBRATE_SYNTAX}"
                    )
                if found.measured_s is None or not found.measured_s > 0:
                    raise UsageError(
                        f"predict bsp: the profile holds no duration of {found.kernel!r}; "
                        f"give --calibrate {CALIBRATE_SYNTAX}"
                    )
                cal_gpu, measured_s = characterization.device, found.measured_s
                notes = (*notes, f"calibrated on the profile's own run ({cal_gpu.name})")
        size_list = [cal_size]
    assert cal_gpu is not None  # --app requires --calibrate; --profile sets it above
    targets = target_specs or [cal_gpu]
    try:
        result = run_bsp(
            input_kind=kind,
            input_name=name,
            input_paths=paths,
            per_thread=per_thread,
            notes=notes,
            counts_at=counts_at,
            latencies=latencies,
            calibration_gpu=cal_gpu,
            calibration_size=cal_size,
            measured_s=measured_s,
            gpus=targets,
            sizes=size_list,
            form=form,
            characterizations=characterizations,
        )
    except ValueError as exc:
        raise UsageError(f"predict bsp: {exc}") from None
    if as_json:
        text = json.dumps(to_json(result), indent=2, sort_keys=True, allow_nan=False)
        click.echo(text)
    else:
        click.echo(render_text(result), nl=False)


COMMANDS: list[click.Command] = [predict_group]
