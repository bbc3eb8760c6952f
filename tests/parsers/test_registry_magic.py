"""The registry loads a binary format's module only for a file whose first bytes start as its
formats' files do (parsers.registry.BINARY_MODULES): every file a binary sniffer claims must
pass its module's check, and a text file loads no binary reader."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from parsers import SNIFF_BYTES, registry
from parsers.source import read_bytes

ROOT = Path(__file__).resolve().parents[2]

#: the module that registers each binary format
MODULE_OF = {
    "ncu-rep": "parsers.ncu.rep",
    "kineto": "parsers.kineto.trace",
    "sqlite": "parsers.sqlite.nsys",
}


def _heads(real_profiles: Path, tuning_families: Path, tmp: Path) -> list[bytes]:
    files = [p for folder in (real_profiles, tuning_families, ROOT / "sample_profiles")
             for p in sorted(folder.rglob("*")) if p.is_file()]  # fmt: skip
    trace = b'{"schemaVersion": 1, "deviceProperties": [], "traceEvents": []}'
    (tmp / "t.json.gz").write_bytes(gzip.compress(trace))
    crafted = [b"\xef\xbb\xbf \n\t" + trace, b"\r\n  " + trace, (tmp / "t.json.gz").read_bytes()]
    return [read_bytes(p, SNIFF_BYTES) for p in files] + crafted


def test_every_file_a_binary_sniffer_claims_passes_its_modules_check(
    real_profiles: Path, tuning_families: Path, tmp_path: Path
) -> None:
    formats = registry.binary_formats()  # every binary module loaded
    assert sorted(MODULE_OF) == sorted(f.name for f in formats)
    claimed = 0
    for head in _heads(real_profiles, tuning_families, tmp_path):
        for fmt in formats:
            if fmt.sniff(head):
                claimed += 1
                assert registry.BINARY_MODULES[MODULE_OF[fmt.name]](head), (fmt.name, head[:40])
    assert claimed > 30  # reports, traces and databases among them: the check can fail


def test_a_text_file_loads_no_binary_reader() -> None:
    script = (
        "import json, sys, parsers\n"
        "parsers.read(sys.argv[1])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in sys.argv[2:])))\n"
    )
    sample = ROOT / "sample_profiles" / "synthetic_nvprof_gputrace.csv"
    done = subprocess.run(
        [sys.executable, "-c", script, str(sample), *registry.BINARY_MODULES, "parsers.ncu.csv"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(done.stdout.splitlines()[-1]) == ["parsers.ncu.csv"]  # text modules do load


def test_each_text_module_registers_no_format_before_its_priority() -> None:
    """Loaded in the order of their declared priorities, each text module registers only
    formats of that priority or later, so sniff_text may decide before loading the rest."""
    script = (
        "import importlib, json\n"
        "from parsers import registry\n"
        "out = []\n"
        "for module, first in sorted(registry.TEXT_MODULES.items(), key=lambda i: i[1]):\n"
        "    known = set(registry.TEXT_FORMATS)\n"
        "    importlib.import_module(module)\n"
        "    new = [f for n, f in registry.TEXT_FORMATS.items() if n not in known]\n"
        "    out.append([module, first, [f.priority for f in new]])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert sum(len(priorities) for _, _, priorities in loaded) >= 8  # every text format
    for module, first, priorities in loaded:
        assert all(p >= first for p in priorities), (module, first, priorities)
        assert not priorities or min(priorities) == first, (module, first, priorities)


def test_the_text_format_sniffed_is_the_first_that_claims_the_file(
    real_profiles: Path, tuning_families: Path, tmp_path: Path
) -> None:
    from parsers import SNIFF_LINES
    from parsers.source import Source

    every = registry.text_formats()
    claimed = 0
    for head in _heads(real_profiles, tuning_families, tmp_path):
        if any(fmt.sniff(head) for fmt in registry.binary_formats()):
            continue
        lines = Source.from_bytes("x", head).head(SNIFF_LINES)
        first = next((fmt for fmt in every if fmt.sniff(lines)), None)
        assert registry.sniff_text(lines) is first
        claimed += first is not None
    assert claimed > 50


def test_an_ncu_csv_loads_no_other_text_reader() -> None:
    script = (
        "import json, sys, parsers\n"
        "parsers.read(sys.argv[1])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m in sys.argv[2:])))\n"
    )
    sample = ROOT / "sample_profiles" / "synthetic_ncu_raw.csv"
    done = subprocess.run(
        [sys.executable, "-c", script, str(sample), *registry.TEXT_MODULES],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(done.stdout.splitlines()[-1]) == ["parsers.ncu.csv"]
