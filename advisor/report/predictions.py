"""The time models in the report: BSP (seed 000; MODELS.md §3) for the profile's kernels and for
an application description, MAX/SUM (seed 001; MODELS.md §4) for a kernel description, each
beside the measured time.  Plain frozen values; :mod:`advisor.render.report` lays them out.

**BSP from the profile.**  For every kernel (report rank order, at most
:data:`BSP_KERNELS`) whose per-thread counts :func:`advisor.models.bsp.profile.counts_from_profile`
can take from the profile, T_k(λ = 1) is computed on the report's GPU (R = boost clock, P = SMs ×
FP32 cores per SM).  Each kernel with a measured time implies λ_k = T_k(λ = 1) / T_measured
(seed 000 §IV).  **Decision (report):** the report uses *one* λ for the run, the geometric mean
of the λ_k, as the paper uses one λ per application; predicted / measured then shows which
kernels the one-parameter model explains (ratio near 1) and which it does not; a prediction
under the GPU's physical floor (:mod:`advisor.models.bsp.floor`) is raised to it.  With a single
kernel the prediction equals the measurement by construction (said in a note); with no measured
time λ = 1 (the default, said).  Missing counts give the metrics and the command that collects
them.

**BSP from an application description** (``report --app FILE --app-size N``): T_k at N with
λ = 1, beside the measured time of the profile kernel the description names (its ``name``
equals the kernel's base name, or starts with it followed by ``-`` / ``_``), and the λ that
measurement implies (the value ``predict bsp --calibrate`` would fit).

**BSP on other GPUs** (``report --predict-gpu "A,B"``): every kernel with counts predicted on
each named GPU in the default form of ``predict bsp`` (:data:`advisor.models.bsp.arch.DEFAULT_FORM`,
chosen per kernel by :func:`advisor.models.bsp.floor.choose_form`: the roofline form for a kernel
memory-bound by its measured DRAM bytes on the report's GPU, else the architecture form;
docs/bsp.md Decisions B1-B3), calibrated on the kernel's own measured time on the report's GPU:
arch form λ_app = λ_k / η_arch(report GPU), T_k on GPU g with λ_app · η_arch(g); roofline form
λ_app = model(report GPU) / T_measured, T = model(g) / λ_app.  A prediction under the GPU's
physical floor max(instructions / peak issue rate, DRAM bytes / peak bandwidth)
(:mod:`advisor.models.bsp.floor`) is raised to it and says so.  Each kernel on each GPU names
the roofline part that dominates there (compute or memory,
:func:`advisor.models.bsp.arch.bound_parts`).  A kernel without a measured time is not carried.

**MAX/SUM** (``report --kernels FILE``): the bounds of every described kernel per launch, the
measured time the mean duration of the profile's launches whose name contains the kernel's
``profile_name`` (as ``predict maxsum --profile`` does), and where it falls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from advisor.devices.database import DeviceSpec, find_device
from advisor.errors import InputError, UsageError
from advisor.models import bsp
from advisor.models.bsp.arch import (
    DEFAULT_FORM,
    FORM_ARCH,
    FORM_AUTO,
    FORM_ROOFLINE,
    ArchFactors,
    arch_factors,
    bound_parts,
)
from advisor.models.bsp.floor import Floor, choose_form, physical_floor, raise_to_floor
from advisor.models.bsp.profile import (
    COLLECT_HINT,
    counts_from_profile,
    launches_by_kernel,
)
from advisor.profile import Profile
from advisor.report.roofline import metric_means

if TYPE_CHECKING:  # the description readers and the MAX/SUM model: only when given (_maxsum)
    from advisor.models.bsp.app import AppDescription
    from advisor.models.maxsum.description import KernelDescription

#: kernels given a BSP prediction (the ones with the largest share of GPU time)
BSP_KERNELS = 20
BSP_FORMULA = "T_k = t · (Comp + Comm_GM + Comm_SM) / (R · P · λ)"
MAXSUM_FORMULA = "T(K) = N_B · N_w · N_t · C_T(K) / (N_c · D · R)"
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class BspKernel:
    rank: int | None  # in the report's kernel table; None for an application description
    kernel: str
    threads: float
    cycles_per_thread: float
    unscaled_ms: float  # T_k with λ = 1, per launch
    predicted_ms: float  # T_k with the λ used
    measured_ms: float | None  # mean per launch
    implied_lambda: float | None  # T_k(λ = 1) / measured
    sources: tuple[tuple[str, str], ...]
    assumed: tuple[str, ...]
    counts: bsp.ThreadCounts | None = None  # per thread, for the other GPUs' predictions
    floor_ms: float | None = None  # physical floor on the report's GPU (models.bsp.floor)
    raised: str = ""  # "memory"/"compute" when predicted_ms was raised to that floor

    @property
    def ratio(self) -> float | None:
        """predicted / measured (1 = exact)."""
        return None if not self.measured_ms else self.predicted_ms / self.measured_ms


@dataclass(frozen=True)
class OtherGpu:
    """The report's kernels predicted on another GPU (``report --predict-gpu``)."""

    gpu: str
    clock_hz: float
    cores: int
    eta_arch: float
    factors: str  # ArchFactors.describe()
    predicted_ms: tuple[tuple[int | None, str, float], ...]  # (rank, kernel, ms per launch)
    form: str = DEFAULT_FORM
    dominant: tuple[tuple[int | None, str], ...] = ()  # (rank, "compute" or "memory")
    forms: tuple[tuple[int | None, str], ...] = ()  # (rank, form used: "arch" or "roofline")
    floor_ms: tuple[tuple[int | None, float], ...] = ()  # (rank, physical floor per launch)
    raised: tuple[tuple[int | None, str], ...] = ()  # (rank, "memory"/"compute" raised, or "")
    model_ms: tuple[tuple[int | None, float], ...] = ()  # (rank, the form's value before it)


@dataclass(frozen=True)
class BspPrediction:
    gpu: str
    clock_hz: float
    cores: int
    lam: float
    lam_source: str
    kernels: tuple[BspKernel, ...]
    missing: tuple[str, ...]  # kernels without counts: "name: what is missing"
    collect: str  # the profiler options that collect the counts
    app: BspKernel | None
    app_note: str | None
    notes: tuple[str, ...]
    other_gpus: tuple[OtherGpu, ...] = ()
    eta_arch: float | None = None  # of the report's GPU, when other GPUs are predicted
    # (rank, form, why) of each carried kernel under the default form (choose_form)
    form_choice: tuple[tuple[int | None, str, str], ...] = ()


@dataclass(frozen=True)
class MaxSumKernel:
    kernel: str
    max_ms: float
    sum_ms: float
    measured_ms: float | None
    verdict: str | None  # maxsum.BETWEEN / BELOW_MAX / ABOVE_SUM


@dataclass(frozen=True)
class MaxSumView:
    path: str
    gpu: str
    kernels: tuple[MaxSumKernel, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ModelInputs:
    """What the predictions use besides the profile: the GPU (clock, cores) and the optional
    descriptions given on the command line (``report --app FILE --app-size N --kernels FILE``)."""

    device: DeviceSpec | None = None
    app: AppDescription | None = None
    app_size: float | None = None
    kernel_description: KernelDescription | None = None
    predict_gpus: tuple[DeviceSpec, ...] = ()  # report --predict-gpu

    def on(self, characterization: Any) -> ModelInputs:
        """These inputs on the analysis' resolved device (an ``advisor.devices.database``
        characterization; None when the device was not identified: no device)."""
        if characterization is None:
            return self
        return replace(self, device=characterization.device)


@dataclass(frozen=True)
class Predictions:
    bsp: BspPrediction | None
    bsp_unavailable: str | None  # why there is no BSP prediction at all
    maxsum: MaxSumView | None


def build_predictions(
    profile: Profile, kernels: Sequence[Mapping[str, Any]], inputs: ModelInputs
) -> Predictions:
    """The predictions for ``kernels`` (analysis JSON kernels in the report's rank order)."""
    bsp_view: BspPrediction | None = None
    reason: str | None = None
    if inputs.device is None:
        reason = "BSP needs the GPU's clock and cores: the device was not identified (--device)"
    else:
        bsp_view = _bsp(profile, kernels, inputs.device, inputs.app, inputs.app_size)
        if inputs.predict_gpus:
            bsp_view = _on_other_gpus(bsp_view, inputs.device, inputs.predict_gpus)
    description = inputs.kernel_description
    ms_view = _maxsum(profile, description) if description is not None else None
    return Predictions(bsp=bsp_view, bsp_unavailable=reason, maxsum=ms_view)


def _on_other_gpus(
    view: BspPrediction, device: DeviceSpec, gpus: Sequence[DeviceSpec]
) -> BspPrediction:
    """Each kernel with a measured time carried to ``gpus`` in :data:`DEFAULT_FORM` (module
    docstring), raised to each GPU's physical floor, with the roofline part that dominates."""
    home: ArchFactors = arch_factors(device)
    carried = [k for k in view.kernels if k.implied_lambda is not None and k.counts is not None]
    choice: list[tuple[int | None, str, str]] = []
    for k in carried:
        assert k.counts is not None
        form, why = _form_of(k.counts, device)
        choice.append((k.rank, form, why))
    others = []
    for gpu in gpus:
        factors = arch_factors(gpu)
        clock, cores = float(gpu.boost_clock_hz), bsp.gpu_cores(gpu)
        rows, dominant, floors, raised, model = [], [], [], [], []
        for k, (_, form, _) in zip(carried, choice, strict=True):
            assert k.counts is not None and k.implied_lambda is not None and k.measured_ms
            parts = bound_parts(k.counts, gpu, factors.eta_issue)
            if form == FORM_ROOFLINE:
                lam_app = bound_parts(k.counts, device).combined() * 1e3 / k.measured_ms
                ms = parts.combined() * 1e3 / lam_app
            else:
                eta = factors.eta / home.eta if form == FORM_ARCH else 1.0
                ms = k.threads * k.cycles_per_thread / (clock * cores) * 1e3
                ms /= k.implied_lambda * eta
            floor = Floor.of_parts(gpu.name, parts, k.counts)
            final_s, limiter = raise_to_floor(ms * 1e-3, floor)
            rows.append((k.rank, k.kernel, final_s * 1e3))
            dominant.append((k.rank, parts.dominant))
            floors.append((k.rank, floor.seconds * 1e3))
            raised.append((k.rank, limiter))
            model.append((k.rank, ms))
        others.append(
            OtherGpu(
                gpu=gpu.name,
                clock_hz=clock,
                cores=cores,
                eta_arch=factors.eta,
                factors=factors.describe(),
                predicted_ms=tuple(rows),
                form=DEFAULT_FORM,
                dominant=tuple(dominant),
                forms=tuple((rank, form) for rank, form, _ in choice),
                floor_ms=tuple(floors),
                raised=tuple(raised),
                model_ms=tuple(model),
            )
        )
    return replace(view, other_gpus=tuple(others), eta_arch=home.eta, form_choice=tuple(choice))


def _form_of(counts: bsp.ThreadCounts, device: DeviceSpec) -> tuple[str, str]:
    """(form, why) of one kernel under :data:`DEFAULT_FORM` calibrated on ``device``."""
    if DEFAULT_FORM == FORM_AUTO:
        return choose_form(counts, bound_parts(counts, device), device.name)
    return DEFAULT_FORM, f"{DEFAULT_FORM} form: the default"


def other_gpus_json(predictions: Predictions | None) -> list[dict[str, Any]]:
    """``report --predict-gpu`` in the JSON: per GPU, η_arch and each kernel's predicted ms."""
    if predictions is None or predictions.bsp is None:
        return []
    return [
        {
            "gpu": o.gpu,
            "clock_hz": o.clock_hz,
            "cores": o.cores,
            "eta_arch": o.eta_arch,
            "eta_arch_report_gpu": predictions.bsp.eta_arch,
            "factors": o.factors,
            "form": o.form,
            "kernels": _kernels_json(o, predictions.bsp.form_choice),
        }
        for o in predictions.bsp.other_gpus
    ]


def _kernels_json(
    o: OtherGpu, choice: Sequence[tuple[int | None, str, str]]
) -> list[dict[str, Any]]:
    """Each carried kernel on GPU ``o``: the prediction, the form and why, the floor."""
    return [
        {
            "rank": rank,
            "name": name,
            "predicted_ms": ms,
            "dominant": o.dominant[i][1],
            "form": o.forms[i][1],
            "form_reason": choice[i][2],
            "model_ms": o.model_ms[i][1],
            "floor_ms": o.floor_ms[i][1],
            "raised_to_floor": o.raised[i][1] or None,
        }
        for i, (rank, name, ms) in enumerate(o.predicted_ms)
    ]


def database_device(device: Mapping[str, Any]) -> DeviceSpec | None:
    """The GPU database entry of an analysis' ``device`` object, or None (not identified, or
    a characterization file's device the database lacks)."""
    name = device.get("name")
    if not name or not device.get("identified", True):
        return None
    try:
        return find_device(str(name))
    except UsageError:
        return None


def _finite_means(profile: Profile, names: Sequence[str]) -> dict[str, dict[str, float]]:
    """:func:`advisor.models.bsp.profile.metric_means_by_kernel` of ``names`` (each kernel's
    finite metric means, an empty dict for a kernel without any), read from the report's
    means of every kernel (:func:`advisor.report.roofline.metric_means`, computed once)."""
    every = metric_means(profile)
    return {
        name: {metric: mean for metric, mean in every.get(name, ()) if math.isfinite(mean)}
        for name in dict.fromkeys(names)
    }


def _bsp(
    profile: Profile,
    kernels: Sequence[Mapping[str, Any]],
    device: DeviceSpec,
    app: AppDescription | None,
    app_size: float | None,
) -> BspPrediction:
    clock, cores = float(device.boost_clock_hz), bsp.gpu_cores(device)
    found: list[tuple[int, Any, float | None]] = []
    missing: list[str] = []
    modelled = kernels[:BSP_KERNELS]
    names = [str(k["name"]) for k in modelled]
    rows, means = launches_by_kernel(profile, names), _finite_means(profile, names)
    for rank, k in enumerate(modelled, start=1):
        try:
            counts = counts_from_profile(
                profile, str(k["name"]), rows[str(k["name"])], means[str(k["name"])]
            )
        except (InputError, ValueError) as exc:
            detail = exc.detail if isinstance(exc, InputError) else str(exc)
            missing.append(f"{_short(str(k['name']))}: {_reason(detail, str(k['name']))}")
            continue
        found.append((rank, counts, _measured_ms(k)))
    unscaled = [bsp.kernel_time_s(c.counts, clock, cores) * 1e3 for _, c, _ in found]  # λ = 1, ms
    implied = [u / m for u, (_, _, m) in zip(unscaled, found, strict=True) if m and u > 0]
    notes: list[str] = []
    if implied:
        lam = math.exp(sum(math.log(x) for x in implied) / len(implied))
        source = (
            f"geometric mean of λ_k = T_k(λ = 1) / T_measured over {len(implied)} kernel(s) "
            "of this profile"
        )
        if len(implied) == 1:
            notes.append(
                "one kernel calibrates λ: its prediction equals its measurement by construction"
            )
    else:
        lam, source = 1.0, "default λ = 1 (no kernel with counts has a measured time)"
    views = tuple(
        _floored(
            BspKernel(
                rank=rank,
                kernel=c.kernel,
                threads=c.counts.threads,
                cycles_per_thread=bsp.cycles_per_thread(c.counts),
                unscaled_ms=u,
                predicted_ms=u / lam,
                measured_ms=m,
                implied_lambda=u / m if m else None,
                sources=c.sources,
                assumed=c.assumed,
                counts=c.counts,
            ),
            device,
        )
        for (rank, c, m), u in zip(found, unscaled, strict=True)
    )
    app_view, app_note = (None, None)
    if app is not None and app_size is not None:
        app_view, app_note = _app(app, app_size, kernels, clock, cores)
    return BspPrediction(
        gpu=device.name,
        clock_hz=clock,
        cores=cores,
        lam=lam,
        lam_source=source,
        kernels=views,
        missing=tuple(missing),
        collect=COLLECT_HINT,
        app=app_view,
        app_note=app_note,
        notes=tuple(notes),
    )


def _floored(k: BspKernel, device: DeviceSpec) -> BspKernel:
    """``k`` with its physical floor on ``device``, its prediction raised to it when under it
    (docs/bsp.md Decision B3)."""
    try:
        floor = physical_floor(k.counts, device) if k.counts is not None else None
    except ValueError:  # a device without clock, cores or bandwidth: no floor known
        floor = None
    if floor is None:
        return k
    predicted_s, raised = raise_to_floor(k.predicted_ms * 1e-3, floor)
    return replace(k, predicted_ms=predicted_s * 1e3, floor_ms=floor.seconds * 1e3, raised=raised)


def _app(
    app: AppDescription,
    size: float,
    kernels: Sequence[Mapping[str, Any]],
    clock: float,
    cores: int,
) -> tuple[BspKernel, str]:
    counts = app.counts(size)
    try:
        unscaled = bsp.kernel_time_s(counts, clock, cores, 1.0, app.latencies) * 1e3
    except ValueError as exc:
        raise UsageError(f"--app {app.path}: {exc}") from None
    matches = match_app_kernel(app.name, [str(k["name"]) for k in kernels])
    measured = None
    if len(matches) == 1:
        k = next(k for k in kernels if k["name"] == matches[0])
        measured = _measured_ms(k)
        note = f"Measured: profile kernel {matches[0]}"
    elif matches:
        note = f"{len(matches)} profile kernels match {app.name!r}; none compared"
    else:
        note = f"No profile kernel is named like {app.name!r}; nothing measured to compare"
    view = BspKernel(
        rank=None,
        kernel=f"{app.name} (N = {size:g})",
        threads=counts.threads,
        cycles_per_thread=bsp.cycles_per_thread(counts, app.latencies),
        unscaled_ms=unscaled,
        predicted_ms=unscaled,
        measured_ms=measured,
        implied_lambda=unscaled / measured if measured else None,
        sources=tuple(app.expressions().items()),
        assumed=(),
    )
    return view, note


def match_app_kernel(app_name: str, kernel_names: Sequence[str]) -> list[str]:
    """Kernels whose base name (identifier before ``(``/``<``, after ``::``) equals ``app_name``
    or its leading identifier (``matMul`` of ``matMul-Gm-SP``)."""
    lead = _IDENT.match(app_name)
    wanted = {app_name.lower(), lead.group(0).lower() if lead else app_name.lower()}
    return sorted(n for n in kernel_names if base_name(n).lower() in wanted)


def base_name(kernel: str) -> str:
    """``void ns::matMul<32>(float*, int)`` -> ``matMul``."""
    head = re.split(r"[(<\[]", kernel, maxsplit=1)[0].strip()
    return head.split()[-1].split("::")[-1] if head else kernel


def _maxsum(profile: Profile, description: KernelDescription) -> MaxSumView:
    from advisor.models import maxsum
    from advisor.models.maxsum.measured import measured_like

    notes: list[str] = []
    kernels = []
    measured = measured_like(profile, description.profile_names)
    for model, wanted in zip(description.kernels, description.profile_names, strict=True):
        found = measured[wanted]
        measured_ns = None if found is None else found.mean_ns
        if measured_ns is None:
            notes.append(f"{model.name}: no profile kernel named like {wanted!r}; not measured")
        kernels.append(
            replace(model, measured_s=None if measured_ns is None else measured_ns * 1e-9)
        )
    try:
        prediction = maxsum.predict_program(kernels, description.gpu)
    except ValueError as exc:
        raise UsageError(f"--kernels {description.path}: {exc}") from None
    return MaxSumView(
        path=description.path,
        gpu=description.gpu.name,
        kernels=tuple(
            MaxSumKernel(
                kernel=b.kernel.name,
                max_ms=b.time_max_s * 1e3,
                sum_ms=b.time_sum_s * 1e3,
                measured_ms=None if b.kernel.measured_s is None else b.kernel.measured_s * 1e3,
                verdict=b.verdict,
            )
            for b in prediction.kernels
        ),
        notes=tuple(notes),
    )


def _measured_ms(k: Mapping[str, Any]) -> float | None:
    """Mean time per launch of an analysis kernel, ms."""
    duration, launches = k.get("duration_ns"), int(k.get("launches") or 0)
    if not duration or launches <= 0:
        return None
    return float(duration) / launches / 1e6


def _short(name: str) -> str:
    """The report's display form of a kernel name (the full name is in the kernels table)."""
    from advisor.render.display import shorten

    return shorten(name)


def _reason(detail: str, kernel: str) -> str:
    """The model's message without its long collect hint (shown once for all kernels)."""
    text = detail.split("; collect them with", 1)[0].split("; profile with", 1)[0]
    return text.removeprefix(f"kernel {kernel!r}: ")
