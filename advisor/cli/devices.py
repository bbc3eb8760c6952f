"""``cuda-advisor devices``: the GPU database and device characterizations.

Without NAME it lists the database; with NAME (a GPU name, resolved like ``--device NAME``, or a
characterization file) it shows that device and its characterization.  Registered on the
``cuda-advisor`` group by advisor/cli/group.py.
"""

from __future__ import annotations

import json
import os

import click

from advisor.cli import options
from advisor.devices.characterization import (
    LATENCY_LEVELS,
    Characterization,
    default_characterization,
    device_to_dict,
    dump_characterization,
    load_characterization,
)
from advisor.devices.database import DeviceSpec, all_devices, find_device
from advisor.output import write_atomic


@click.command(name="devices")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option(
    "-o",
    "--output",
    type=options.OUTPUT_PATH,
    help="Write the characterization JSON of NAME to this file (a template for measured values).",
)
def devices_cmd(name: str | None, as_json: bool, output: str | None) -> None:
    """List the GPU database, or show one GPU (NAME) and its characterization.

    NAME is a GPU name as profilers print it ("NVIDIA GeForce RTX 4090", "Tesla K40c") or a
    characterization file; unknown names exit with code 2 and list close matches.
    """
    if name is None:
        if output:
            raise click.UsageError("--output needs a NAME")
        specs = all_devices()
        if as_json:
            rows = [_summary(s) for s in specs]
            click.echo(json.dumps(rows, indent=2, sort_keys=True, allow_nan=False))
        else:
            click.echo(render_table(specs), nl=False)
        return
    ch = _characterization(name)
    text = dump_characterization(ch)
    if output:
        write_atomic(output, text, inputs=options.run_inputs((), name))
    if as_json:
        click.echo(text, nl=False)
    elif not output:
        click.echo(render_device(ch), nl=False)


def _characterization(name: str) -> Characterization:
    if os.path.isfile(name):
        return load_characterization(name)
    return default_characterization(find_device(name))


def _summary(spec: DeviceSpec) -> dict[str, object]:
    out = device_to_dict(spec)
    out["peak_fp32_flops"] = spec.peak_fp32_flops
    out["peak_fp64_flops"] = spec.peak_fp64_flops
    return out


_COLUMNS = ("GPU", "CC", "SMs", "cores/SM", "boost MHz", "GB/s", "FP32 GFLOP/s")


def render_table(specs: tuple[DeviceSpec, ...]) -> str:
    """The database as an aligned text table, one GPU per line."""
    rows = [_COLUMNS] + [
        (
            s.name,
            s.compute_capability,
            str(s.sm_count),
            str(s.fp32_cores_per_sm),
            f"{s.boost_clock_hz / 1e6:.0f}",
            f"{s.memory_bandwidth_bytes_per_s / 1e9:.1f}",
            f"{s.peak_fp32_flops / 1e9:.0f}",
        )
        for s in specs
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_device(ch: Characterization) -> str:
    """One device and its characterization as text."""
    s = ch.device
    fp64 = "not known" if s.peak_fp64_flops is None else f"{s.peak_fp64_flops / 1e9:.0f} GFLOP/s"
    l2 = "-" if s.l2_bytes is None else f"{s.l2_bytes / 1024:.0f} KiB"
    base = "-" if s.base_clock_hz is None else f"{s.base_clock_hz / 1e6:.0f} MHz"
    lines = [
        f"{s.name} ({s.chip}, {s.architecture}, compute capability {s.compute_capability})",
        f"  aliases:          {', '.join(s.aliases) or '-'}",
        f"  SMs x cores/SM:   {s.sm_count} x {s.fp32_cores_per_sm}",
        f"  clocks:           boost {s.boost_clock_hz / 1e6:.0f} MHz, base {base}",
        f"  peak FP32:        {s.peak_fp32_flops / 1e9:.0f} GFLOP/s (2 x SMs x cores/SM x boost)",
        f"  peak FP64:        {fp64}",
        f"  DRAM bandwidth:   {s.memory_bandwidth_bytes_per_s / 1e9:.1f} GB/s",
        f"  L2:               {l2}",
        f"  warps/SM, banks:  {s.max_warps_per_sm}, {s.shared_banks}",
        f"characterization: {ch.source} (measured: {'yes' if ch.measured else 'no'})",
        "  latencies (cycles): "
        + ", ".join(f"{lvl} {ch.latencies_cycles[lvl]:g}" for lvl in LATENCY_LEVELS),
        "  functions:        "
        + (
            ", ".join(f"{k} ({len(f.x)} points)" for k, f in sorted(ch.functions.items()))
            or "F = 1"
        ),
        "sources:",
        *(f"  - {src}" for src in s.sources),
    ]
    if s.notes or ch.notes:
        lines += ["notes:", *(f"  - {n}" for n in (*s.notes, *ch.notes))]
    return "\n".join(lines) + "\n"


COMMANDS: list[click.Command] = [devices_cmd]
