"""Nsight Compute plain-text output (``ncu ./app`` without ``--csv``): format ``ncu-text``.

The synthetic texts are built here, table by table, the way ncu lays them out (names
left-aligned, units and values right-aligned, column widths from the dash rule line): the 2019–2022
layout (dated kernel header, fixed 70/15/30 columns, no header row) and the 2023+ one (grid and
block, device and CC in the header, ``Metric Name  Metric Unit  Metric Value`` header row, ``Est.
Speedup`` rule results).  The real files are read in place from
``../shared/tuning_families/cuda-training-series`` (ncu 2021/2022 on a Tesla P40 and an RTX 3070
Laptop GPU); the expected values were read off those files by hand (line named in each comment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

import parsers
from advisor.errors import MalformedInput, NoKernelData
from parsers.ncu.text import sniff_ncu_text
from parsers.ncu.values import canonical
from tests.cli_helpers import assert_one_line_error, run

Row = tuple[str, str, str]  # name, unit, value


def table(rows: Sequence[Row], widths: tuple[int, int, int] | None = None, indent: int = 4) -> str:
    """One section table as ncu prints it: fixed ``widths`` and no header row (2019–2022), or,
    without widths, columns fitted to the cells under a ``Metric Name`` header row (2023+)."""
    pad = " " * indent
    header = widths is None
    if widths is None:
        cells = [("Metric Name", "Metric Unit", "Metric Value"), *rows]
        widths = (
            max(len(c[0]) for c in cells),
            max(len(c[1]) for c in cells),
            max(len(c[2]) for c in cells),
        )
    rule = pad + " ".join("-" * w for w in widths)

    def line(row: Row) -> str:
        return f"{pad}{row[0]:<{widths[0]}} {row[1]:>{widths[1]}} {row[2]:>{widths[2]}}"

    head = [rule, line(("Metric Name", "Metric Unit", "Metric Value"))] if header else []
    return "\n".join([*head, rule, *(line(r) for r in rows), rule])


OLD = (70, 15, 30)


def old_launch(kernel: str, duration: Row, registers: str) -> str:
    return "\n".join(
        [
            f"  {kernel}, 2022-Jun-02 19:46:33, Context 1, Stream 7",
            "    Section: GPU Speed Of Light Throughput",
            table(
                [
                    ("DRAM Frequency", "cycle/nsecond", "5.96"),
                    ("Elapsed Cycles", "cycle", "9,284,529"),
                    ("Memory [%]", "%", "72.28"),
                    duration,
                    ("SOL L2", "%", "(!) nan"),
                ],
                OLD,
            ),
            "    WRN   Memory is more heavily utilized than Compute: Look at the Memory Workload",
            "          Analysis section to identify the L1 bottleneck. Check memory replay",
            "          (coalescing) metrics.",
            "",
            "    Section: Launch Statistics",
            table(
                [
                    ("Block Size", "", "256"),
                    ("Function Cache Configuration", "", "cudaFuncCachePreferNone"),
                    ("Grid Size", "", "64"),
                    ("Registers Per Thread", "register/thread", registers),
                    ("Static Shared Memory Per Block", "Kbyte/block", "1.02"),
                    ("Waves Per SM", "", "0.27"),
                ],
                OLD,
            ),
            "",
            "    Section: Memory Workload Analysis",
            table(
                [("Memory Throughput", "Gbyte/second", "286.36"), ("L1 Hit Rate", "%", "0")], OLD
            ),
            "",
        ]
    )


#: ncu 2022 and older: two kernels, the first printed twice (two launches), application output
#: and a --metrics block of raw metric names
OLD_TEXT = "\n".join(
    [
        "==PROF== Connected to process 5341 (/home/u/matrix_sums)",
        '==PROF== Profiling "row_sums" - 0: 0%....50%....100% - 9 passes',
        "row sums correct!",
        "==PROF== Disconnected from process 5341",
        "[5341] matrix_sums@127.0.0.1",
        old_launch(
            "row_sums(const float *, float *, unsigned long)",
            ("Duration", "msecond", "11.97"),
            "20",
        ),
        old_launch(
            "column_sums(const float *, float *, unsigned long)",
            ("Duration", "usecond", "302.50"),
            "22",
        ),
        old_launch(
            "row_sums(const float *, float *, unsigned long)",
            ("Duration", "msecond", "1,011.50"),
            "20",
        ),
        "column sums correct!",
        "  column_sums(const float *, float *, unsigned long), 2022-Jun-02 19:46:43, Context 1, "
        "Stream 7",
        "    Section: Command line profiler metrics",
        table(
            [
                ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request", "8,388,608"),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "268,427,291"),
            ],
            OLD,
        ),
        "",
    ]
)

#: ncu 2023+: header with grid, block, device and CC; header rows; speedup estimates; a section
#: with rule results only, separated by a two-group rule line; re-indented by a paste (the
#: kernel header at column 0) and with the trailing blanks trimmed
NEW_TEXT = "\n".join(
    [
        "==PROF== Connected to process 77 (/tmp/app)",
        "==PROF== Disconnected from process 77",
        "[77] app@127.0.0.1",
        "scale(float *, int) (128, 2, 1)x(256, 1, 1), Context 1, Stream 13, Device 0, CC 8.6",
        "    Section: GPU Speed Of Light Throughput",
        table(
            [
                ("DRAM Frequency", "Ghz", "6.99"),
                ("Elapsed Cycles", "cycle", "2107384"),
                ("Duration", "ms", "1.90"),
                ("Compute (SM) Throughput", "%", "19.26"),
            ]
        ),
        "",
        "    OPT   Est. Speedup: 40.5%",
        "          This kernel grid is too small to fill the available resources on this device,",
        "          resulting in only 0.5 full waves across all SMs.",
        "",
        "    Section: Memory Workload Analysis Tables",
        "    OPT   Est. Local Speedup: 83.33%",
        "          The memory access pattern for global loads from L1TEX might not be optimal.",
        "    ----- " + "-" * 110,
        "    WRN   Estimated Speedup: 1,250.5%",
        "          A second result.",
        "",
        "    Section: Launch Statistics",
        table(
            [
                ("Block Size", "", "256"),
                ("Function Cache Configuration", "", "CachePreferNone"),
                ("Registers Per Thread", "register/thread", "32"),
                ("Dynamic Shared Memory Per Block", "Kbyte/block", "49.15"),
                ("# SMs", "SM", "46"),
                ("Waves Per SM", "", "0.50"),
            ]
        ),
        "",
        "  scale(float *, int) (128, 2, 1)x(256, 1, 1), Context 1, Stream 13, Device 0, CC 8.6",
        "    Section: Command line profiler metrics",
        table(
            [
                ("device__attribute_display_name", "", "NVIDIA GeForce RTX 3070"),
                ("gpu__time_duration.sum", "us", "250.50"),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "12,345,678"),
            ]
        ),
        "",
    ]
)


def write(tmp_path: Path, text: str, name: str = "ncu.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def metric(profile: parsers.Profile, tool_metric: str, launch_id: int = 0) -> pd.Series:
    m = profile.metrics
    rows = m[(m["tool_metric"] == tool_metric) & (m["launch_id"] == launch_id)]
    assert len(rows) == 1, (tool_metric, len(rows))
    return rows.iloc[0]


# --- the 2019–2022 layout --------------------------------------------------------------------


def test_old_layout_launches(tmp_path: Path) -> None:
    path = write(tmp_path, OLD_TEXT)
    assert parsers.detect(path) == "ncu-text"
    p = parsers.read(path)
    launches = p.launches
    row_sums = "row_sums(const float *, float *, unsigned long)"
    column_sums = "column_sums(const float *, float *, unsigned long)"
    # every kernel header is a launch, in file order: row_sums printed twice is two launches
    assert list(launches["name"]) == [row_sums, column_sums, row_sums, column_sums]
    assert list(launches["launch_id"]) == [0, 1, 2, 3]
    assert launches["duration_ns"].iloc[:3].tolist() == pytest.approx(
        [11_970_000, 302_500, 1_011_500_000]
    )
    assert pd.isna(launches["duration_ns"].iloc[3])  # the --metrics block has no duration
    assert launches["registers_per_thread"].iloc[:3].tolist() == [20, 22, 20]
    assert launches["static_shared_bytes"].iloc[0] == pytest.approx(1020)  # 1.02 Kbyte/block
    assert launches[["context", "stream"]].iloc[0].tolist() == [1, 7]
    # the old header prints neither grid and block nor the device; Launch Statistics gives
    # the totals (Grid Size 64, Block Size 256), the --metrics block (launch 3) nothing
    assert list(launches["grid_x"].iloc[:3]) == [64, 64, 64]
    assert list(launches["block_x"].iloc[:3]) == [256, 256, 256]
    assert pd.isna(launches["grid_x"].iloc[3]) and launches["device_id"].isna().all()
    assert p.devices.empty
    [prov] = p.provenance
    assert (prov.format, prov.profiler, prov.modes) == ("ncu-text", "ncu", ("details", "rules"))
    assert any("flagged with '(!)'" in n for n in prov.notes)
    # "column sums correct!" between two kernel blocks
    assert any(n.startswith("1 line(s) after the first kernel header") for n in prov.notes)


def test_old_layout_values_and_units(tmp_path: Path) -> None:
    p = parsers.read(write(tmp_path, OLD_TEXT))
    assert metric(p, "Elapsed Cycles")["value"] == 9_284_529  # thousands separators
    assert metric(p, "DRAM Frequency")["value"] == pytest.approx(5.96e9)  # cycle/nsecond
    assert metric(p, "DRAM Frequency")["unit"] == "hz"
    assert metric(p, "Memory [%]")["value"] == pytest.approx(0.7228)  # % -> fraction
    assert metric(p, "Memory Throughput")["value"] == pytest.approx(286.36e9)  # Gbyte/second
    assert metric(p, "Memory Throughput")["unit"] == "byte/s"
    flagged = metric(p, "SOL L2")  # "(!) nan": the flag dropped, the value missing (as n/a)
    assert pd.isna(flagged["value"]) and flagged["text"] == "nan"
    cache = metric(p, "Function Cache Configuration")  # a text value
    assert pd.isna(cache["value"]) and cache["text"] == "cudaFuncCachePreferNone"
    assert metric(p, "Block Size")["value"] == 256  # blank unit
    assert metric(p, "Waves Per SM")["unit"] == ""  # a name ending in a unit word, no unit


def test_old_layout_metrics_form_maps_raw_names(tmp_path: Path) -> None:
    p = parsers.read(write(tmp_path, OLD_TEXT))
    name = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    row = metric(p, name, launch_id=3)
    assert row["section"] == "Command line profiler metrics"
    assert row["value"] == 268_427_291
    assert row["metric"] == canonical(name, "sector")[0] != name  # through the metric map


def test_old_layout_wrapped_rules(tmp_path: Path) -> None:
    rules = parsers.read(write(tmp_path, OLD_TEXT)).rules
    assert list(rules["launch_id"]) == [0, 1, 2]  # one WRN per full launch
    first = rules.iloc[0]
    assert first["rule_type"] == "WRN"
    assert first["section"] == "GPU Speed Of Light Throughput"
    assert pd.isna(first["rule"])  # the text does not name the rule
    assert first["description"] == (
        "Memory is more heavily utilized than Compute: Look at the Memory Workload Analysis "
        "section to identify the L1 bottleneck. Check memory replay (coalescing) metrics."
    )
    assert rules["estimated_speedup_frac"].isna().all()


# --- the 2023+ layout --------------------------------------------------------------------------


def test_new_layout_header_and_device(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(line.rstrip() for line in NEW_TEXT.splitlines()))
    assert parsers.detect(path) == "ncu-text"
    p = parsers.read(path)
    launches = p.launches
    assert list(launches["name"]) == ["scale(float *, int)"] * 2
    first = launches.iloc[0]
    assert (first["grid_x"], first["grid_y"], first["grid_z"]) == (128, 2, 1)
    assert (first["block_x"], first["block_y"], first["block_z"]) == (256, 1, 1)
    assert (first["stream"], first["device_id"]) == (13, 0)
    assert first["dynamic_shared_bytes"] == pytest.approx(49_150)
    assert launches["duration_ns"].tolist() == pytest.approx([1_900_000, 250_500])
    # Device 0, CC 8.6 from the header; the name from the device attribute row; # SMs
    [device] = p.devices.to_dict("records")
    assert device["device_id"] == 0
    assert device["compute_capability"] == "8.6"
    assert device["name"] == "NVIDIA GeForce RTX 3070"
    assert device["sm_count"] == 46
    assert metric(p, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 1)["value"] == 12_345_678


def test_new_layout_rules_with_speedups(tmp_path: Path) -> None:
    rules = parsers.read(write(tmp_path, NEW_TEXT)).rules
    got = rules[["section", "rule_type", "speedup_type", "estimated_speedup_frac"]]
    assert got.to_dict("records") == [
        {
            "section": "GPU Speed Of Light Throughput",
            "rule_type": "OPT",
            "speedup_type": "global",
            "estimated_speedup_frac": pytest.approx(0.405),
        },
        {
            "section": "Memory Workload Analysis Tables",
            "rule_type": "OPT",
            "speedup_type": "local",
            "estimated_speedup_frac": pytest.approx(0.8333),
        },
        {
            "section": "Memory Workload Analysis Tables",
            "rule_type": "WRN",
            "speedup_type": "global",
            "estimated_speedup_frac": pytest.approx(12.505),
        },
    ]
    assert rules["description"].iloc[0] == (
        "This kernel grid is too small to fill the available resources on this device, "
        "resulting in only 0.5 full waves across all SMs."
    )
    assert rules["description"].iloc[2] == "A second result."


def test_text_and_csv_details_give_the_same_frames(tmp_path: Path) -> None:
    """The text is read through the --page details reader: the same launch printed as text and
    exported as CSV gives the same launches and metrics."""
    text = "\n".join(
        [
            "  k(int) (4, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 9.0",
            "    Section: GPU Speed Of Light Throughput",
            table([("Duration", "usecond", "12.50"), ("Elapsed Cycles", "cycle", "1,234,567")]),
            "    Section: Launch Statistics",
            table([("Registers Per Thread", "register/thread", "40")]),
        ]
    )
    header = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"'
    )
    prefix = '"0","1","app","127.0.0.1","k(int)","1","7","(64, 1, 1)","(4, 1, 1)","0","9.0"'
    csv_text = "\n".join(
        [
            header,
            f'{prefix},"GPU Speed Of Light Throughput","Duration","usecond","12.50"',
            f'{prefix},"GPU Speed Of Light Throughput","Elapsed Cycles","cycle","1,234,567"',
            f'{prefix},"Launch Statistics","Registers Per Thread","register/thread","40"',
        ]
    )
    from_text = parsers.read(write(tmp_path, text, "k.txt"))
    from_csv = parsers.read(write(tmp_path, csv_text, "k.csv"))
    assert parsers.detect(tmp_path / "k.csv") == "ncu-csv"
    pd.testing.assert_frame_equal(from_text.launches, from_csv.launches)
    pd.testing.assert_frame_equal(from_text.metrics, from_csv.metrics)
    pd.testing.assert_frame_equal(from_text.devices, from_csv.devices)


def test_wide_cells_push_the_row_right(tmp_path: Path) -> None:
    """A name or value wider than its column (the old fixed widths) pushes the rest of the row
    right; such a row is split at whitespace."""
    long_name = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed.max_rate"
    wide_value = "Prefer none (a value wider than its column)"
    assert len(long_name) > OLD[0] and len(wide_value) > OLD[2]
    rule = "    " + " ".join("-" * w for w in OLD)
    text = "\n".join(
        [
            "  k(int), 2021-Jan-05 10:00:00, Context 1, Stream 7",
            "    Section: Command line profiler metrics",
            rule,
            f"    {'gpu__time_duration.sum':<70} {'nsecond':>15} {'1,024':>30}",
            f"    {long_name:<70} {'inst/cycle':>15} {'3.5':>30}",
            f"    {'launch__func_cache_config':<70} {'':>15} {wide_value:>30}",
            rule,
        ]
    )
    p = parsers.read(write(tmp_path, text))
    assert metric(p, "gpu__time_duration.sum")["value"] == 1024
    wide = metric(p, long_name)
    assert (wide["value"], wide["unit"]) == (3.5, "inst/cycle")
    assert metric(p, "launch__func_cache_config")["text"] == wide_value


# --- sniffing ----------------------------------------------------------------------------------


def test_sniff_needs_a_kernel_header_and_a_section_table() -> None:
    section = ["    Section: GPU Speed Of Light", "    " + " ".join("-" * w for w in OLD)]
    kernel = "  k(int), 2022-Jun-02 19:46:33, Context 1, Stream 7"
    assert sniff_ncu_text([kernel, *section])
    assert sniff_ncu_text(["k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7", *section])
    assert not sniff_ncu_text(section)  # no kernel header
    assert not sniff_ncu_text([*section, kernel])  # the header must come first
    assert not sniff_ncu_text([kernel, section[0], "    WRN   text"])  # no table under it
    assert not sniff_ncu_text([kernel, section[0], "    ----- " + "-" * 40])  # a rule separator


@pytest.mark.parametrize(
    "lines",
    [
        [
            "==PROF== Connected to process 1 (/bin/app)",
            "==PROF== Disconnected from process 1",
            "==WARNING== No kernels were profiled.",
        ],
        ['"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream"'],
        ["==1== Profiling result:", "            Type  Time(%)      Time     Calls       Avg"],
        ["    Kernel: k(int)", "          1   achieved_occupancy   Achieved Occupancy   0.5"],
    ],
)
def test_sniff_rejects_other_formats(lines: list[str]) -> None:
    assert not sniff_ncu_text(lines)


def test_status_lines_only_is_no_kernel_data(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "==PROF== Connected to process 9 (/bin/app)\n==PROF== Disconnected from process 9\n",
    )
    with pytest.raises(NoKernelData):
        parsers.read(path)


# --- bad input: one-line errors naming the line ------------------------------------------------


def test_text_cut_inside_a_table(tmp_path: Path) -> None:
    lines = OLD_TEXT.splitlines()
    cut = next(i for i, line in enumerate(lines) if "Memory [%]" in line)
    path = write(tmp_path, "\n".join(lines[: cut + 1]) + "\n")
    with pytest.raises(MalformedInput) as err:
        parsers.read(path)
    assert err.value.line == cut + 1
    assert "ends inside the table of section 'GPU Speed Of Light Throughput'" in str(err.value)
    code, _, stderr = run("inspect", str(path))
    assert code == 3
    assert_one_line_error(stderr, f"{path}:{cut + 1}:", "cut short")


def test_row_cut_short_of_its_value(tmp_path: Path) -> None:
    lines = OLD_TEXT.splitlines()
    at = next(i for i, line in enumerate(lines) if "Duration" in line)
    lines[at] = lines[at][:-8]  # "   11.97" lost: the row stops before its value column
    path = write(tmp_path, "\n".join(lines))
    code, _, stderr = run("inspect", str(path))
    assert code == 3
    assert_one_line_error(stderr, f"{path}:{at + 1}:", "before the end of its value column")


def test_garbled_table_and_trailing_header(tmp_path: Path) -> None:
    lines = OLD_TEXT.splitlines()
    at = next(i for i, line in enumerate(lines) if "Registers Per Thread" in line)
    garbled = [*lines[:at], "", *lines[at:]]  # a blank line splits the table
    code, _, stderr = run("inspect", str(write(tmp_path, "\n".join(garbled), "g.txt")))
    assert code == 3
    assert_one_line_error(stderr, f"g.txt:{at + 1}:", "stops without its closing rule line")
    header_only = "\n".join([*lines, "  k(int), 2022-Jun-02 19:46:50, Context 1, Stream 7"])
    code, _, stderr = run("inspect", str(write(tmp_path, header_only, "h.txt")))
    assert code == 3
    assert_one_line_error(stderr, f"h.txt:{len(lines) + 1}:", "no section under it")


# --- report ------------------------------------------------------------------------------------


def test_report_scores_text_launches(tmp_path: Path) -> None:
    path = write(tmp_path, NEW_TEXT)
    out = tmp_path / "r.json"
    html = tmp_path / "r.html"
    code, _, stderr = run("report", str(path), "--json", str(out), "-o", str(html), "-q")
    assert code == 0, stderr
    [kernel] = json.loads(out.read_text())["kernels"]
    assert kernel["launches"] == 2
    assert [r["rule_type"] for r in kernel["ncu_rules"]] == ["OPT", "OPT", "WRN"]
    # no rule name printed: the HTML shows the section alone
    assert "<td>GPU Speed Of Light Throughput</td>" in html.read_text()


# --- real files (ncu 2021/2022, read in place) -------------------------------------------------

HW = "cuda-training-series/exercises"
HW4_SIMPLE = f"{HW}/hw4/Profile Output - RTX 3070/matrix_sums.profile1-simple.output"
HW4_FLAGS = f"{HW}/hw4/Profile Output - RTX 3070/matrix_sums.profile2-flags.output"
ROW_SUMS = "row_sums(const float *, float *, unsigned long)"
COLUMN_SUMS = "column_sums(const float *, float *, unsigned long)"
VADD = "vadd(float const *,float const *,float*,int)"

REAL = {
    # file: [(kernel, duration in ns)] per launch, from each block's "Duration" row
    f"{HW}/hw3/Profile Output - TeslaP40/vector_add_1b_1t.profile.output": [
        (VADD, 7.85e9),  # line 16: second 7.85
    ],
    f"{HW}/hw3/Profile Output - TeslaP40/vector_add_1b_1024t.profile.output": [
        (VADD, 12.93e6),  # line 16: msecond 12.93
    ],
    f"{HW}/hw3/Profile Output - TeslaP40/vector_add_160b_1024t.profile.output": [
        (VADD, 1.67e6),  # line 16
    ],
    HW4_SIMPLE: [
        (ROW_SUMS, 11.97e6),  # line 15: msecond 11.97
        (COLUMN_SUMS, 3.02e6),  # line 67
    ],
    HW4_FLAGS: [
        (ROW_SUMS, None),  # --metrics: no duration
        (COLUMN_SUMS, None),
    ],
    f"{HW}/hw5/outputs-rtx-3070/nsight-profile.1.reductions-a-8M.output": [
        ("atomic_red(const float *, float *)", 30.51e6),  # line 18
        ("reduce_a(float *, float *)", 114.85e3),  # line 68: usecond 114.85
        ("reduce_ws(float *, float *)", 111.71e3),  # line 114
    ],
    f"{HW}/hw5/outputs-rtx-3070/nsight-profile.1.reductions-b-160K.output": [
        ("atomic_red(const float *, float *)", 600.64e3),  # line 18
        ("reduce_a(float *, float *)", 15.78e3),  # line 77
        ("reduce_ws(float *, float *)", 10.66e3),  # line 126
    ],
    f"{HW}/hw5/outputs-rtx-3070/nsight-profile.3.matrix_sums.output": [
        (ROW_SUMS, 3.04e6),  # line 16
        (COLUMN_SUMS, 3.02e6),  # line 61
    ],
}


@pytest.mark.real_profiles
@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_files(tuning_families: Path, rel: str) -> None:
    path = tuning_families / rel
    assert parsers.detect(path) == "ncu-text"
    p = parsers.read(path)
    expected = REAL[rel]
    assert list(p.launches["name"]) == [k for k, _ in expected]
    for got, (_, duration) in zip(p.launches["duration_ns"], expected, strict=True):
        if duration is None:
            assert pd.isna(got)
        else:
            assert got == pytest.approx(duration)
    assert p.devices.empty  # these ncu versions name neither the GPU nor its index


@pytest.mark.real_profiles
def test_real_file_rules_and_metrics(tuning_families: Path) -> None:
    p = parsers.read(tuning_families / HW4_SIMPLE)
    # lines 19-22: the WRN under row_sums' Speed Of Light table, wrapped over four lines
    rules = p.rules
    sol = rules[(rules["launch_id"] == 0) & (rules["section"] == "GPU Speed Of Light Throughput")]
    [description] = sol["description"]
    assert sol["rule_type"].tolist() == ["WRN"]
    assert description.startswith("Memory is more heavily utilized than Compute: Look at the")
    assert description.endswith("whether there are values you can (re)compute.")
    assert len(p.rules) == 6  # three per launch
    assert metric(p, "Elapsed Cycles")["value"] == 9_284_529  # line 12
    assert metric(p, "Registers Per Thread", 1)["value"] == 22  # line 79
    flags = parsers.read(tuning_families / HW4_FLAGS)
    # line 11: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum  sector  268,427,291
    assert metric(flags, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")["value"] == 268_427_291
