"""Safe reports: every string from a profile is inert in the HTML, Markdown and JSON outputs.

Hostile kernel, device, process, section, metric and rule strings and a hostile file name go
through ``report`` and ``compare``; the HTML is parsed back (html.parser) and must hold no tag or
attribute beyond the template's own, the Markdown no raw HTML and no live link, the JSON must
load without NaN or Infinity; a 100 kB name keeps the outputs bounded; same input, same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import main
from advisor.render import display
from advisor.render import report as render

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
MD_LINK = "](javascript:alert(1))"
MD_FULL_LINK = "[x](javascript:alert(1))"
CONTROLS = "".join(chr(c) for c in range(1, 32) if c not in (10, 13)) + "\x7f\u202e"
HOSTILE = (SCRIPT, IMG, MD_LINK, MD_FULL_LINK, "ctl" + CONTROLS + "end")
BIG_NAME = "big<" + "T" * 100_000 + ">(int)"

NAIVE = "transposeNaive(float*, const float*, int, int)"
COALESCED = "transposeCoalesced(float*, const float*, int, int)"
NO_CONFLICTS = "transposeNoBankConflicts(float*, const float*, int, int)"
V100 = "Tesla V100-SXM2-16GB"

_BAD_TAGS = {"script", "img", "iframe", "object", "embed", "link", "form", "base", "svg:a"}
_RAW_HTML = re.compile(r"<[A-Za-z/!?]")
_LIVE_LINK = re.compile(r"(?<!\\)\]\(|<[a-z]+:|(?<!\\)\[[^\]]*(?<!\\)\]\(")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: what the Markdown may hold that looks like markup: its own folding tags, and code spans (a
#: kernel name: shown as text, never a tag, link or mention)
_MD_FOLDING = re.compile(r"^(?:<details><summary>[^<>]*</summary>|</details>)$", re.MULTILINE)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")


def _outside_code(markdown: str) -> str:
    """The Markdown less its folding tags and its code spans."""
    return _CODE_SPAN.sub("", _MD_FOLDING.sub("", markdown))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Tags:
    page = _Tags()
    page.feed(html)
    page.close()
    return page


def _rewrite_csv(source: Path, target: Path, fields: dict[str, str]) -> None:
    """Copy a sample CSV, replacing whole field values (quoting done by the csv module)."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith(("#", "==")):
            out.write(line + "\n")
            continue
        row = next(csv.reader([line]))
        writer.writerow([fields.get(value, value) for value in row])
    target.write_text(out.getvalue(), encoding="utf-8")


def _hostile_inputs(samples: Path, folder: Path) -> list[Path]:
    """nvprof trace + metrics with hostile kernel and device names, under a hostile file name."""
    fields = {NAIVE: SCRIPT, COALESCED: MD_FULL_LINK, NO_CONFLICTS: HOSTILE[-1]}
    fields.update({f"{V100} (0)": f"{IMG}{MD_LINK} (0)"})
    paths = []
    for name in ("synthetic_nvprof_gputrace.csv", "synthetic_nvprof_metrics.csv"):
        target = folder / f"<img src=x onerror=alert(1)>{name}"
        _rewrite_csv(samples / name, target, fields)
        paths.append(target)
    return paths


def _hostile_ncu(samples: Path, folder: Path) -> Path:
    """ncu details with hostile kernel, process, section, metric-free rule name and text."""
    target = folder / "ncu[x](javascript:alert(1)).csv"
    source = (samples / "synthetic_ncu_details.csv").read_text(encoding="utf-8")
    rules = set(re.findall(r'"(?:OPT|WRN|INF)","([^"]+)"', source))
    fields = {NAIVE: SCRIPT, "transpose": IMG, "SpeedOfLight": MD_LINK}
    fields.update({text: f"{SCRIPT} {text} {IMG}" for text in rules})
    fields.update({"SOLBottleneck": MD_FULL_LINK, "UncoalescedGlobalAccess": HOSTILE[-1]})
    _rewrite_csv(samples / "synthetic_ncu_details.csv", target, fields)
    return target


def _outputs(args: list[str], folder: Path, stem: str) -> tuple[str, str, str]:
    html, md, js = (folder / f"{stem}.{ext}" for ext in ("html", "md", "json"))
    result = CliRunner().invoke(
        main, [*args, "-o", str(html), "--markdown", str(md), "--json", str(js)]
    )
    assert result.exit_code == 0, result.output
    return tuple(p.read_text(encoding="utf-8") for p in (html, md, js))  # type: ignore[return-value]


def _reject(name: str) -> float:
    raise AssertionError(f"JSON holds {name}")


def _assert_safe(html: str, markdown: str, text_json: str) -> _Tags:
    page = _parse(html)
    for tag, attrs in page.tags:
        assert tag not in _BAD_TAGS, (tag, attrs)
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert "javascript:" not in (value or "").lower() or name == "title", (tag, name)
            if name in ("href", "src", "xlink:href", "action"):
                assert (value or "").startswith("#"), (tag, name, value)  # in-page links only
    metas = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert metas == [{"http-equiv": "Content-Security-Policy", "content": render.CSP}]
    assert _CONTROL.search(html) is None and _CONTROL.search(markdown) is None
    prose = _outside_code(markdown)
    assert _RAW_HTML.search(prose) is None, _RAW_HTML.search(prose)
    assert _LIVE_LINK.search(prose) is None, _LIVE_LINK.search(prose)
    json.loads(text_json, parse_constant=_reject)
    return page


def test_hostile_names_in_report(samples: Path, tmp_path: Path) -> None:
    files = [str(p) for p in [*_hostile_inputs(samples, tmp_path), _hostile_ncu(samples, tmp_path)]]
    html, markdown, text_json = _outputs(["report", *files], tmp_path, "r")
    page = _assert_safe(html, markdown, text_json)
    text = "".join(page.text)
    for hostile in (SCRIPT, MD_FULL_LINK, IMG + MD_LINK):  # shown as text, not dropped
        assert hostile in text, hostile
    assert render.visible_controls(HOSTILE[-1]) in text  # controls shown as \x01 ...
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "`<script>alert(1)</script>`" in markdown  # kernel names: code spans
    assert "`[x](javascript:alert(1))`" in markdown
    data = json.loads(text_json)
    names = {k["name"] for k in data["kernels"]}
    assert {SCRIPT, MD_FULL_LINK, HOSTILE[-1]} <= names  # JSON keeps the exact names
    rules = [r for k in data["kernels"] for r in k["ncu_rules"]]
    assert any(r["description"].startswith(SCRIPT) for r in rules)
    assert {MD_FULL_LINK, HOSTILE[-1]} <= {r["rule"] for r in rules}
    assert "NVIDIA Nsight Compute rules" in text and f"{SCRIPT} " in text  # rule text shown


def test_hostile_version_names_in_compare(samples: Path, tmp_path: Path) -> None:
    files = ",".join(str(p) for p in _hostile_inputs(samples, tmp_path))
    args = ["compare", "--version", f"{SCRIPT}={files}", "--version", f"{MD_FULL_LINK}={files}"]
    html, markdown, text_json = _outputs(args, tmp_path, "c")
    page = _assert_safe(html, markdown, text_json)
    assert SCRIPT in "".join(page.text) and MD_FULL_LINK in "".join(page.text)
    assert "| &lt;script&gt;alert(1)&lt;/script&gt; |" in markdown
    assert _outputs(args, tmp_path, "c2") == (html, markdown, text_json)  # same bytes again


def test_hundred_kilobyte_name_stays_bounded(samples: Path, tmp_path: Path) -> None:
    clean = _outputs(["report", str(samples / "synthetic_nvprof_gputrace.csv")], tmp_path, "clean")
    target = tmp_path / "big.csv"
    _rewrite_csv(samples / "synthetic_nvprof_gputrace.csv", target, {NAIVE: BIG_NAME})
    html, markdown, text_json = _outputs(["report", str(target)], tmp_path, "big")
    _assert_safe(html, markdown, text_json)
    # the full name is kept once per place that lists it in full (the table row's title, the
    # kernel section's "full name"); everything else shows the shortened name
    assert html.count("T" * 100_000) <= 2
    assert len(html) <= len(clean[0]) + 4 * len(BIG_NAME)
    assert len(markdown) <= len(clean[1]) + 2 * display.DISPLAY_NAME_CHARS * 4
    assert "T" * 200 not in markdown
    assert "`big<…>(int)`" in markdown  # the display name


def test_outputs_are_byte_identical_across_runs(samples: Path, tmp_path: Path) -> None:
    files = [str(p) for p in [*_hostile_inputs(samples, tmp_path), _hostile_ncu(samples, tmp_path)]]
    first = _outputs(["report", *files], tmp_path, "a")
    second = _outputs(["report", *files], tmp_path, "b")
    assert first == second


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<b>&", "&lt;b&gt;&amp;"),
        ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
        ("a|b`c*d_e#f~g\\h", "a\\|b\\`c\\*d\\_e\\#f\\~g\\\\h"),
        ("line\nbreak\ttab", "line break tab"),
        ("esc\x1b[31m", "esc\\\\x1b\\[31m"),  # ESC shown as \x1b, then backslash-escaped
        ("rtl\u202eevil", "rtl\\\\u202eevil"),
        ('say "hi"', "say &quot;hi&quot;"),
    ],
)
def test_md_escape(text: str, expected: str) -> None:
    assert render.md_escape(text) == expected


def test_visible_controls_keeps_text_and_line_breaks() -> None:
    assert render.visible_controls("a\tb\nc\x00d\x7fe\u2066f") == "a\tb\nc\\x00d\\x7fe\\u2066f"
    assert render.visible_controls("kernel<int>(float*) é 漢") == "kernel<int>(float*) é 漢"


def test_stderr_notes_escape_control_characters(samples: Path, tmp_path: Path) -> None:
    """The "device not identified" note quotes the profile's device name: a terminal escape or
    a bidi override in it is printed escaped, on one line."""
    fields = {f"{V100} (0)": "evil\x1b[31mGPU\u202e (0)"}
    target = tmp_path / "trace.csv"
    _rewrite_csv(samples / "synthetic_nvprof_gputrace.csv", target, fields)
    result = CliRunner().invoke(main, ["report", str(target), "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if "note:" in line]
    assert notes and all(_CONTROL.search(line) is None for line in notes)
    assert any("evil\\x1b[31mGPU\\u202e" in line for line in notes)
