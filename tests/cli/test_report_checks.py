"""``report``'s checks of its command line and inputs: output suffixes, repeated inputs, traces of
several GPUs, gates that cannot be evaluated, text files that are no profile, the help texts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from advisor.report import gates
from tests.cli_helpers import assert_one_line_error, one_line_error, run
from tests.conftest import REPO

RAW = "synthetic_ncu_raw.csv"  # Nsight Compute, NVIDIA A100-SXM4-40GB, 3 kernels
NSYS = "synthetic_nsys_cuda_gpu_trace.csv"  # Nsight Systems, NVIDIA A100-SXM4-40GB
NVPROF = "synthetic_nvprof_gputrace.csv"  # nvprof, Tesla V100-SXM2-16GB


# --------------------------------------------------------------------------- 1. output suffixes


@pytest.mark.parametrize(
    ("option", "name", "use"),
    [
        ("-o", "x.md", "--markdown"),
        ("-o", "x.MARKDOWN", "--markdown"),
        ("-o", "x.json", "--json"),
        ("--markdown", "x.html", "-o"),
        ("--markdown", "x.json", "--json"),
        ("--json", "x.htm", "-o"),
        ("--json", "x.md", "--markdown"),
    ],
)
def test_output_suffix_of_another_format_is_usage_error(
    samples: Path, tmp_path: Path, option: str, name: str, use: str
) -> None:
    out = tmp_path / name
    code, stdout, err = run("report", str(samples / RAW), option, str(out))
    assert code == 2
    assert_one_line_error(err, str(out), f"use {use} {out}")
    assert not out.exists() and stdout == ""


@pytest.mark.parametrize(
    ("option", "name"),
    [("-o", "x.htm"), ("-o", "report"), ("--markdown", "x.markdown"), ("--json", "x.txt")],
)
def test_matching_other_or_no_suffix_is_accepted(
    samples: Path, tmp_path: Path, option: str, name: str
) -> None:
    out = tmp_path / name
    code, _, err = run("report", str(samples / RAW), option, str(out), "-q")
    assert code == 0, err
    assert out.is_file()


def test_compare_shares_the_suffix_check(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    code, _, err = run(
        "compare", "--version", f"a={samples / RAW}", "--version", f"b={samples / RAW}",
        "-o", str(out),
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, str(out), "use --json")


def test_per_file_output_folders_are_not_suffix_checked(samples: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / RAW).write_bytes((samples / RAW).read_bytes())
    folder = tmp_path / "reports.md"  # a folder: its name says nothing of its contents' format
    code, _, err = run("report", str(runs), "--per-file", "--jobs", "1", "-o", str(folder), "-q")
    assert code == 0, err
    assert (folder / "index.html").is_file()


# --------------------------------------------------------------------------- 2. repeated inputs


def _spellings(samples: Path, tmp_path: Path) -> dict[str, str]:
    source = tmp_path / RAW
    source.write_bytes((samples / RAW).read_bytes())
    (tmp_path / "symlink.csv").symlink_to(source)
    os.link(source, tmp_path / "hardlink.csv")
    (tmp_path / "sub").mkdir()
    return {
        "same": str(source),
        "dotdot": str(tmp_path / "sub" / ".." / RAW),
        "symlink": str(tmp_path / "symlink.csv"),
        "hardlink": str(tmp_path / "hardlink.csv"),
    }


@pytest.mark.parametrize("spelling", ["same", "dotdot", "symlink", "hardlink"])
def test_same_file_twice_is_usage_error(samples: Path, tmp_path: Path, spelling: str) -> None:
    paths = _spellings(samples, tmp_path)
    out = tmp_path / "a.json"
    code, _, err = run("report", paths["same"], paths[spelling], "--json", str(out))
    assert code == 2
    assert_one_line_error(err, paths[spelling], "given twice")
    assert not out.exists()


def test_distinct_files_still_merge(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, err = run("report", str(samples / NSYS), str(samples / RAW), "--json", str(out))
    assert code == 0, err


def test_missing_file_twice_is_still_an_input_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.csv")
    code, _, err = run("report", missing, missing, "--json", str(tmp_path / "a.json"))
    assert code == 3
    assert_one_line_error(err, missing, "no such file")


# --------------------------------------------------------------------------- 3. several GPUs

WARNING = "cuda-advisor: warning: the inputs name several GPUs "


def test_traces_of_two_gpus_warn_once(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, err = run("report", str(samples / NSYS), str(samples / NVPROF), "--json", str(out))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("cuda-advisor: warning:")]
    assert warnings == [
        f"{WARNING}(NVIDIA A100-SXM4-40GB, Tesla V100-SXM2-16GB); every kernel is scored as "
        "running on Tesla V100-SXM2-16GB (the one with the most GPU time); give the traces of "
        "one GPU per report"
    ]


def test_traces_of_two_gpus_warn_with_device_too(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / NSYS), str(samples / NVPROF), "--json", str(out), "--device", "H100"
    )  # fmt: skip
    assert code == 0, err
    assert err.count(WARNING) == 1
    assert "(--device)" in err


def test_one_gpu_in_several_files_does_not_warn(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, err = run("report", str(samples / NSYS), str(samples / RAW), "--json", str(out))
    assert code == 0, err
    assert "warning" not in err


# --------------------------------------------------------------------------- 4. gates


def test_gate_on_a_criterion_not_computable_exits_4_with_its_reason(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / RAW), "--json", str(out), "-q",
        "--fail-if", "L2_GRANULARITY<0.5", "--fail-if", "HOSTSYNC<0.5",
    )  # fmt: skip
    assert code == 4
    assert out.is_file()  # the outputs are still written
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        "cuda-advisor: gate not evaluated: L2_GRANULARITY is not computable (for 3 of 3 kernels; "
    )
    assert "missing lts__t_sectors_srcunit_tex_op_read.sum" in lines[0]  # Nsight Compute names
    assert "--fail-if L2_GRANULARITY<0.5" in lines[0] and "--allow-missing" in lines[0]
    assert lines[1].startswith(
        "cuda-advisor: gate not evaluated: HOSTSYNC is not computable (missing launch start_ns"
    )


def test_allow_missing_lets_an_unevaluated_gate_pass_with_a_note(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / RAW), "--json", str(out), "-q",
        "--fail-if", "L2_GRANULARITY<0.5", "--allow-missing",
    )  # fmt: skip
    assert code == 0
    assert err.startswith("cuda-advisor: note: gate not evaluated: L2_GRANULARITY")
    assert err.rstrip().endswith("passed (--allow-missing)")


def test_allow_missing_does_not_hide_a_gate_that_fails(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / RAW), "--json", str(out), "-q",
        "--fail-if", "SHMEM_EFFICIENCY<0.5", "--allow-missing",
    )  # fmt: skip
    assert code == 4
    assert err == (
        "cuda-advisor: gate failed: SHMEM_EFFICIENCY<0.5 (kernel transposeCoalesced(float*, "
        "const float*, int, int): SHMEM_EFFICIENCY = 0.0606)\n"
    )


def test_a_kernel_the_criterion_does_not_apply_to_cannot_fail_or_block(
    samples: Path, tmp_path: Path
) -> None:
    """transposeNaive makes no shared-memory access: SHMEM_EFFICIENCY is not applicable to it,
    which is no missing input; the gate is evaluated on the other kernels."""
    out = tmp_path / "a.json"
    code, _, err = run(
        "report", str(samples / RAW), "--json", str(out), "-q", "--fail-if", "SHMEM_EFFICIENCY>2"
    )
    assert (code, err) == (0, "")


def test_per_file_gates_that_cannot_be_evaluated(samples: Path, tmp_path: Path) -> None:
    """A trace alone has no L2 counters: its gate is not evaluated (exit 4) unless
    --allow-missing lets it pass, in --per-file mode as in a single report."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "trace.csv").write_bytes((samples / "synthetic_nvprof_gputrace.csv").read_bytes())
    gate = ("--fail-if", "L2_GRANULARITY<0.5")
    args = ("report", str(runs), "--per-file", "--jobs", "1", "-q", *gate)
    code, _, err = run(*args, "--json", str(tmp_path / "strict"))
    assert code == 4 and "gate not evaluated: L2_GRANULARITY is not computable" in err
    code, _, err = run(*args, "--json", str(tmp_path / "lenient"), "--allow-missing")
    assert code == 0, err


def _kernel(name: str, value: float | None, status: str, missing: list[str]) -> dict[str, Any]:
    criterion = {"value": value, "status": status, "missing": missing, "notes": []}
    return {"name": name, "criteria": {"SHMEM_EFFICIENCY": criterion}}


def _data(*kernels: dict[str, Any], **application: Any) -> dict[str, Any]:
    app = {
        "potential_speedup": 1.5,
        "potential_speedup_basis": "x",
        "gpu_time_ns": 2e6,
        "hints": [],
        "HOSTSYNC": {"value": 0.9, "status": "computed", "missing": [], "notes": []},
    }
    app.update(application)
    return {"application": app, "kernels": list(kernels), "inputs": []}


def test_gates_check_separates_failed_and_unevaluated() -> None:
    cond = [gates.parse("SHMEM_EFFICIENCY<0.5")]
    ok = _kernel("a", 0.9, "computed", [])
    low = _kernel("b", 0.2, "computed", [])
    unknown = _kernel("c", None, "not_computable", ["shared_load_transactions"])
    na = _kernel("d", None, "not_applicable", [])
    assert gates.check(cond, _data(ok, na)) == ([], [])
    failed, unevaluated = gates.check(cond, _data(ok, unknown, na))
    assert failed == []
    assert unevaluated == [
        "gate not evaluated: SHMEM_EFFICIENCY is not computable (for 1 of 3 kernels; kernel c: "
        "missing shared_load_transactions) for --fail-if SHMEM_EFFICIENCY<0.5"
    ]
    # a kernel that fails decides: the missing one could not make it pass
    failed, unevaluated = gates.check(cond, _data(low, unknown))
    assert len(failed) == 1 and failed[0].startswith("gate failed: SHMEM_EFFICIENCY<0.5 (kernel b")
    assert unevaluated == []
    assert gates.failures(cond, _data(ok, unknown), allow_missing=True) == []
    assert gates.failures(cond, _data(ok, unknown))[0].endswith(gates.ADVICE)


def test_null_application_figures_are_not_evaluated() -> None:
    data = _data(
        potential_speedup=None,
        potential_speedup_basis="not computable: no timeline for HOSTSYNC and no kernel estimate",
        gpu_time_ns=None,
    )
    conds = [gates.parse("potential_speedup>2"), gates.parse("gpu_time_ms>10")]
    failed, unevaluated = gates.check(conds, data)
    assert failed == []
    assert unevaluated == [
        "gate not evaluated: potential_speedup is not computable (no timeline for HOSTSYNC and "
        "no kernel estimate) for --fail-if potential_speedup>2",
        "gate not evaluated: gpu_time_ms is not computable (the profile has no kernel durations) "
        "for --fail-if gpu_time_ms>10",
    ]
    # evaluable application gates behave as before
    assert gates.check([gates.parse("hints>=0")], data)[0] == [
        "gate failed: hints>=0 (application: hints = 0)"
    ]
    assert gates.check([gates.parse("HOSTSYNC<0.5")], data) == ([], [])


# --------------------------------------------------------------------------- 5. text files

NOT_A_PROFILE = """# Troubleshooting

When the run fails the file holds the profiler's `==ERROR==` / `No kernels were profiled` line.
An example of what ncu prints:

```
==PROF== Connected to process 1 (/bin/app)
==ERROR== The application returned an error code (1).
```

No kernels were profiled. is what nvprof says when its filter matched nothing.
Check the filter, rebuild, and run again.
"""


def test_markdown_quoting_profiler_lines_is_not_a_recognised_profile(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOT_A_PROFILE)
    code, _, err = run("report", str(notes), "--json", str(tmp_path / "a.json"))
    assert code == 3
    line = one_line_error(err)
    assert f"{notes}: unrecognised content (known formats: " in line
    assert "profiler said" not in line


def test_the_readme_is_not_a_recognised_profile(tmp_path: Path) -> None:
    code, _, err = run("report", str(REPO / "README.md"), "--json", str(tmp_path / "a.json"))
    assert code == 3
    line = one_line_error(err)
    assert "unrecognised content" in line and "profiler said" not in line


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "==PROF== Connected to process 1 (/bin/app)\n"
            "Traceback (most recent call last):\n  File app.py\nRuntimeError: boom\n"
            "==ERROR== The application returned an error code (1).\n",
            "==ERROR== The application returned an error code (1).",
        ),
        (
            "4096,==17733== Profiling result:\n4096,No kernels were profiled.\n",
            "No kernels were profiled.",
        ),
        ("No kernels were profiled.\n", "No kernels were profiled."),
    ],
)
def test_a_failed_profiler_run_still_quotes_the_profiler(
    tmp_path: Path, text: str, said: str
) -> None:
    log = tmp_path / "failed.txt"
    log.write_text(text)
    code, _, err = run("report", str(log), "--json", str(tmp_path / "a.json"))
    assert code == 3
    assert_one_line_error(err, f"the profiler said: {said}")


# --------------------------------------------------------------------------- 6. help texts


def test_top_level_help_lists_every_exit_code() -> None:
    code, out, _ = run("--help")
    assert code == 0
    for line in ("0  success", "1  internal error", "2  bad usage", "3  input problem", "4  a CI"):
        assert line in out, out


@pytest.mark.parametrize("command", ["report", "compare"])
def test_option_help_has_no_internal_words(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0
    for word in ("Decision", "seed", "Fig."):
        assert word not in out, word


def test_report_help_documents_allow_missing() -> None:
    code, out, _ = run("report", "--help")
    assert code == 0
    assert "--allow-missing" in out
    assert "could not be computed" in " ".join(out.split())
