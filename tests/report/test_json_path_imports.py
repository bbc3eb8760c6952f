"""What ``report --json`` builds without loading: the pages' timeline and the MAX/SUM model.

The JSON report still builds the report's values (the verdict) but not the timeline nor the
predictions only the HTML and Markdown pages show, nor the MAX/SUM model without ``--kernels``;
their modules load where they are used.  Each check runs a fresh interpreter (this process
has long imported everything) and reads its ``sys.modules`` after the build.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from advisor import pipeline
run = pipeline.analyse([sys.argv[1]])
report = pipeline.build(run, pages=sys.argv[2] == "pages")
if sys.argv[2] == "pages":
    assert report.predictions is not None and report.predictions.bsp is not None
else:
    assert report.predictions is None  # (no --predict-gpu, --app nor --kernels)
modules = ("advisor.report.timeline", "advisor.models.maxsum", "advisor.models.maxsum.measured")
print(json.dumps([m for m in modules if m in sys.modules]))
"""


def _loaded(page: Path, pages: bool) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(page), "pages" if pages else "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loaded: list[str] = json.loads(out.splitlines()[-1])
    return loaded


def test_the_json_report_loads_neither_the_timeline_nor_the_maxsum_model(samples: Path) -> None:
    page = samples / "synthetic_ncu_raw.csv"
    assert _loaded(page, pages=False) == []
    assert _loaded(page, pages=True) == ["advisor.report.timeline"]
