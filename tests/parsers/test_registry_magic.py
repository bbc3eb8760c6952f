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
