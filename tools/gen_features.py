"""Write docs/features.md: the CUDA C++ Programming Guide's features and, per device, whether
the tests that prove each one passed there, read from pytest's JUnit XML results.

    python tools/gen_features.py                      # newest bench/results/junit-<device>-<date>.xml of each device
    python tools/gen_features.py junit-cpu-X.xml ...  # these files (the device is the name's second word)

Make a result file with ``PYTHONPATH=src python -m pytest -q -p no:cacheprovider --junitxml=FILE
tests`` (add ``--device sim`` or ``--device cuda:0``; ``python tools/gen_features.py --files``
lists the test files the rows name, enough for a device's run); name it
``junit-<device>-<date>.xml`` (``cuda`` for a GPU's).
The rows and their tests are tools/features.py. It also rewrites the README's summary line (the
line after ``<!-- features -->``). A device's cell, from the tests of the row found in its file:

- ``yes``: every one ran and passed;
- ``partial``: some passed, the others were skipped (the evidence says how many);
- ``refused``: none passed, and they were skipped because the device refuses the feature
  (a ``NotSupportedError``: the sim device's skips say ``sim: ...``; GPU-only tests say so);
  a row's ``!`` tests (in tools/features.py) show the refusal and are listed beside it;
- ``skipped``: none ran, skipped for another reason (a missing tool, one GPU where two are needed);
- ``fails``: one failed or raised an error;
- ``not run``: the row has tests but the file holds none of them;
- ``no tests``: no test proves the feature yet.
"""

import fnmatch
import glob
import os
import re
import sys
import xml.etree.ElementTree as ElementTree

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
RESULTS = os.path.join(ROOT, "bench", "results")
OUT = os.path.join(ROOT, "docs", "features.md")
README = os.path.join(ROOT, "README.md")
MARKER = "<!-- features -->"
DEVICE_ORDER = ("cpu", "sim", "cuda")
STATUSES = ("yes", "partial", "refused", "skipped", "fails", "not run", "no tests")

# A skip whose reason says the device refuses the feature (simt.NotSupportedError's message,
# or a test's "GPU only: ..." for a feature another test shows the CPU devices refuse).
REFUSAL = re.compile(r"^sim: |NotSupportedError|not supported|not on the \w+ device|GPU only|refuse", re.I)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mdtext import escape   # noqa: E402


def _features():
    from features import FEATURES
    return FEATURES


def read_junit(path):
    """{test id: (outcome, skip reason)} of one JUnit XML file; a test id is
    ``test_file.py::test_function[params]`` (classes as ``::Class::``), outcome one of
    passed, skipped, failed."""
    results = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        while parts and not parts[0].startswith("test_"):      # "tests.test_x" -> "test_x"
            parts.pop(0)
        if not parts:
            continue
        test_id = "::".join([parts[0] + ".py", *parts[1:], case.get("name", "")])
        outcome, reason = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                break
            if child.tag == "skipped":
                outcome, reason = "skipped", child.get("message", "")
        results[test_id] = (outcome, reason)
    return results


def matches(pattern, test_id):
    """Whether a tools/features.py pattern names ``test_id`` (its parameters left out)."""
    return fnmatch.fnmatchcase(_base(test_id), pattern)


def parse(pattern):
    """A row's test pattern as (refusal, file::function pattern, devices or None):
    ``!`` before it marks a test that shows devices refuse the feature, ``@cpu,sim`` after it
    the device columns it counts for (a test that picks its device itself, whatever the run's)."""
    refusal = pattern.startswith("!")
    pattern, _, devices = pattern.lstrip("!").partition("@")
    return refusal, pattern, (tuple(devices.split(",")) if devices else None)


def status(feature, results, device=None):
    """(cell, the row's test ids found in ``results``[, a note]) for one row on ``device``.

    A test function counts as passed when any of its parametrizations passed, as skipped
    when all were skipped. A row's refusal tests (``!``) are evidence: they must not fail,
    and they make the cell "refused" only where none of the row's other tests applies."""
    if not feature.tests:
        return "no tests", []
    patterns = [parse(p) for p in feature.tests]
    patterns = [(r, p) for r, p, devices in patterns if devices is None or device in devices]
    found = sorted(t for t in results if any(matches(p, t) for _, p in patterns))
    if not found:
        return "not run", found
    failed = sum(results[t][0] == "failed" for t in found)
    if failed:
        return "fails", found, f"{failed} of {len(found)} failed"
    functions = {}                            # base id -> outcomes of its parametrizations
    for t in found:
        if any(matches(p, t) for refusal, p in patterns if not refusal):
            functions.setdefault(_base(t), []).append(results[t])
    if not functions:                         # only refusal tests apply here
        return ("refused" if any(results[t][0] == "passed" for t in found) else "not run"), found
    passed = [f for f, outs in functions.items() if any(o == "passed" for o, _ in outs)]
    skips = [reason for f, outs in functions.items() if f not in passed for _, reason in outs]
    if passed:
        if len(passed) < len(functions):
            return "partial", found, f"{len(functions) - len(passed)} of {len(functions)} skipped"
        return "yes", found
    if all(REFUSAL.search(reason) for reason in skips):
        return "refused", found
    return "skipped", found


def _base(test_id):
    return re.sub(r"\[.*\]$", "", test_id)


def device_of(path):
    """``junit-cpu-2026-12-02.xml`` -> ``cpu``."""
    name = os.path.basename(path)
    match = re.match(r"junit-([a-z0-9_]+?)-", name)
    if not match:
        raise ValueError(f"{name}: name a result file junit-<device>-<date>.xml")
    return match.group(1)


def newest_results(folder=RESULTS):
    """The newest junit-<device>-<date>.xml of each device in ``folder``, as {device: path}."""
    newest = {}
    for path in sorted(glob.glob(os.path.join(folder, "junit-*-*.xml"))):
        newest[device_of(path)] = path          # names sort by date
    return newest


def _order(devices):
    return sorted(devices, key=lambda d: (DEVICE_ORDER.index(d) if d in DEVICE_ORDER else 99, d))


def _cell(state, found, note=""):
    return f"{state} ({note})" if note else state


def _evidence(pattern):
    refusal, pattern, devices = parse(pattern)
    return (("refusal: " if refusal else "") + f"`{pattern}`"
            + (f" ({', '.join(devices)} only)" if devices else ""))


def render(features, runs):
    """The page's text for ``runs`` {device: (file name, results)}."""
    devices = _order(runs)
    table = {device: [status(f, runs[device][1], device) for f in features] for device in devices}
    lines = [
        "# Features of the CUDA programming guide",
        "",
        "Every feature of the CUDA C++ Programming Guide (by its sections; then the CUDA 12 and PTX",
        "rows of the API's section 11), with whether its tests passed on each device. Generated by",
        "`python tools/gen_features.py` from pytest's JUnit results; do not edit by hand. The rows",
        "and the tests that prove them are `tools/features.py`.",
        "",
        "A cell is `yes` (every test of the row ran and passed there), `partial` (some passed, the",
        "others were skipped), `refused` (skipped because the device raises `NotSupportedError` for",
        "the feature), `skipped` (skipped for another reason: a missing tool, a second GPU),",
        "`fails`, `not run` (the results hold none of the row's tests) or `no tests`.",
        "",
        "Results read: " + ", ".join(f"{d}: `{runs[d][0]}`" for d in devices) + ".",
        "",
        summary(features, runs, devices, table) + ".",
        "",
        "| § | Feature | " + " | ".join(devices) + " | Tests |",
        "| --- | --- | " + " | ".join("---" for _ in devices) + " | --- |",
    ]
    for i, feature in enumerate(features):
        cells = [_cell(*table[d][i]) for d in devices]
        tests = ", ".join(_evidence(p) for p in feature.tests) or "none yet"
        name = escape(feature.name)
        lines.append(f"| {feature.section} | {name} | " + " | ".join(cells) + f" | {tests} |")
    return "\n".join(lines) + "\n"


def summary(features, runs, devices=None, table=None):
    """One line of counts per device: "cpu: 150 yes, 3 partial, ..."."""
    devices = devices or _order(runs)
    table = table or {d: [status(f, runs[d][1], d) for f in features] for d in devices}
    parts = []
    for device in devices:
        counts = [(s, sum(cell[0] == s for cell in table[device])) for s in STATUSES]
        parts.append(f"{device}: " + ", ".join(f"{n} {s}" for s, n in counts if n))
    return f"{len(features)} features; " + "; ".join(parts)


def update_readme(line, path=README):
    """Put ``line`` on the line after the README's ``<!-- features -->``, indented as it."""
    with open(path) as f:
        lines = f.read().split("\n")
    at = [i for i, text in enumerate(lines) if text.strip() == MARKER]
    if len(at) != 1 or at[0] + 1 >= len(lines):
        raise SystemExit(f"{path} needs one {MARKER!r} line, followed by the line to replace")
    indent = lines[at[0]][:len(lines[at[0]]) - len(lines[at[0]].lstrip())]
    lines[at[0] + 1] = indent + line
    with open(path, "w") as f:
        f.write("\n".join(lines))


def test_files(features=None):
    """The test files the rows name, as tests/test_x.py paths (what a device's run needs)."""
    names = {parse(p)[1].split("::")[0] for f in features or _features() for p in f.tests}
    return [f"tests/{name}" for name in sorted(names)]


def main(argv):
    if argv == ["--files"]:
        print(" ".join(test_files()))
        return
    paths = {device_of(p): p for p in argv} if argv else newest_results()
    if not paths:
        raise SystemExit(f"no junit-<device>-<date>.xml in {RESULTS}")
    features = _features()
    runs = {d: (os.path.basename(p), read_junit(p)) for d, p in paths.items()}
    text = render(features, runs)
    with open(OUT, "w") as f:
        f.write(text)
    line = summary(features, runs) + "."
    update_readme(line)
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
