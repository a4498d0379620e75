"""The feature table (tools/features.py, docs/features.md): every test a row names exists, and
tools/gen_features.py reads JUnit results into the right cells."""
import ast
import glob
import importlib.util
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
TOOLS = os.path.join(ROOT, "tools")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(TOOLS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _test_functions():
    """Every test function of tests/ as "test_file.py::test_name" (classes as ::Class::)."""
    ids = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "test_*.py")):
        base = os.path.basename(path)
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                ids.add(f"{base}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                ids.update(f"{base}::{node.name}::{m.name}" for m in node.body
                           if isinstance(m, ast.FunctionDef) and m.name.startswith("test"))
    return ids


def test_every_row_names_tests_that_exist():
    gen = _load("gen_features")
    features = gen._features()
    existing = _test_functions()
    assert len(features) >= 150
    missing = [(f.name, p) for f in features for p in f.tests
               if not any(gen.matches(gen.parse(p)[1], test_id) for test_id in existing)]
    assert not missing, f"tools/features.py names tests that do not exist: {missing}"
    names = [(f.section, f.name) for f in features]
    assert len(names) == len(set(names)), "a row is listed twice"
    # Rows without tests are few and deliberate: each is listed as "no tests" in the table.
    untested = [f.name for f in features if not f.tests]
    assert len(untested) <= 12, untested


def _junit(path, cases):
    body = []
    for classname, name, kind, message in cases:
        inner = {"passed": "",
                 "skipped": f'<skipped type="pytest.skip" message="{message}">x</skipped>',
                 "failed": '<failure message="assert 0">trace</failure>',
                 "error": '<error message="fixture">trace</error>'}[kind]
        body.append(f'<testcase classname="{classname}" name="{name}" time="0.1">{inner}</testcase>')
    path.write_text('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
                    + "".join(body) + "</testsuite></testsuites>")
    return str(path)


def test_generated_table_for_a_small_run(tmp_path):
    gen = _load("gen_features")
    F = _load("features").Feature
    features = [
        F("1", "all pass", ("test_a.py::test_one", "test_a.py::test_two")),
        F("2", "some skipped", ("test_a.py::test_one", "test_b.py::test_skip_*")),
        F("3", "refused", ("test_c.py::test_refused",)),
        F("4", "a failure", ("test_a.py::test_one", "test_c.py::test_broken")),
        F("5", "untested", ()),
        F("6", "absent here", ("test_d.py::test_elsewhere",)),
        F("7", "skipped for a tool", ("test_c.py::test_needs_tool",)),
        F("8", "an error", ("test_c.py::test_error",)),
        F("9", "refused, shown by a test", ("test_e.py::test_gpu_only", "!test_e.py::test_cpu_refuses")),
        F("10", "pinned", ("test_f.py::test_on_cpu@cpu", "test_f.py::test_on_sim@sim")),
    ]
    cpu = _junit(tmp_path / "junit-cpu-2026-01-01.xml", [
        ("tests.test_a", "test_one[cpu]", "passed", ""),
        ("tests.test_a", "test_two", "passed", ""),
        ("tests.test_b", "test_skip_me[cpu]", "skipped", "needs CUDA's ptxas"),
        ("tests.test_c", "test_refused[cpu]", "skipped", "GPU only: the CPU device refuses it"),
        ("tests.test_c", "test_broken[cpu]", "failed", ""),
        ("tests.test_c", "test_needs_tool", "skipped", "needs gcc"),
        ("tests.test_c", "test_error[cpu]", "error", ""),
        ("tests.test_e", "test_gpu_only[cpu]", "skipped", "GPU only: test_cpu_refuses covers the CPU"),
        ("tests.test_e", "test_cpu_refuses", "passed", ""),
        ("tests.test_f", "test_on_cpu", "passed", ""),
        ("tests.test_f", "test_on_sim", "failed", ""),
    ])
    sim = _junit(tmp_path / "junit-sim-2026-01-01.xml", [
        ("tests.test_a", "test_one[sim]", "passed", ""),
        ("tests.test_a", "test_two", "passed", ""),
        ("tests.test_b", "test_skip_me[sim]", "passed", ""),
        ("tests.test_c", "test_refused[sim]", "skipped", "sim: records are not supported on the sim device"),
        ("tests.test_c", "test_broken[sim]", "passed", ""),
        ("tests.test_d", "test_elsewhere[sim]", "passed", ""),
        ("tests.test_c", "test_needs_tool", "passed", ""),
        ("tests.test_c", "test_error[sim]", "passed", ""),
        ("tests.test_e", "test_cpu_refuses", "passed", ""),
        ("tests.test_f", "test_on_cpu", "failed", ""),
    ])
    runs = {gen.device_of(p): (os.path.basename(p), gen.read_junit(p)) for p in (sim, cpu)}
    assert set(runs) == {"cpu", "sim"}
    cells = {d: [gen.status(f, runs[d][1], d)[0] for f in features] for d in runs}
    assert cells["cpu"] == ["yes", "partial", "refused", "fails", "no tests", "not run", "skipped", "fails",
                            "refused", "yes"]
    assert cells["sim"] == ["yes", "yes", "refused", "yes", "no tests", "yes", "yes", "yes", "refused",
                            "not run"]
    text = gen.render(features, runs)
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == len(features)
    assert text.index("| cpu | sim |") > 0                 # devices in their order
    assert rows[1] == ("| 2 | some skipped | partial (1 of 2 skipped) | yes | "
                       "`test_a.py::test_one`, `test_b.py::test_skip_*` |")
    assert rows[3].startswith("| 4 | a failure | fails (1 of 2 failed) | yes |")
    assert rows[4] == "| 5 | untested | no tests | no tests | none yet |"
    assert rows[8].endswith("| refused | refused | `test_e.py::test_gpu_only`, refusal: `test_e.py::test_cpu_refuses` |")
    assert rows[9].endswith("| yes | not run | `test_f.py::test_on_cpu` (cpu only), `test_f.py::test_on_sim` (sim only) |")
    assert ("10 features; cpu: 2 yes, 1 partial, 2 refused, 1 skipped, 2 fails, 1 not run, 1 no tests; "
            "sim: 6 yes, 2 refused, 1 not run, 1 no tests") in text


def test_newest_result_of_each_device(tmp_path):
    gen = _load("gen_features")
    for name in ("junit-cpu-2026-01-01.xml", "junit-cpu-2026-02-01.xml", "junit-cuda-2026-01-05.xml",
                 "other.xml"):
        (tmp_path / name).write_text("<testsuites/>")
    newest = gen.newest_results(str(tmp_path))
    assert {d: os.path.basename(p) for d, p in newest.items()} == {
        "cpu": "junit-cpu-2026-02-01.xml", "cuda": "junit-cuda-2026-01-05.xml"}


def test_checked_in_table_is_what_the_results_give():
    gen = _load("gen_features")
    paths = gen.newest_results()
    assert {"cpu", "sim"} <= set(paths), "bench/results needs junit-cpu-*.xml and junit-sim-*.xml"
    runs = {d: (os.path.basename(p), gen.read_junit(p)) for d, p in paths.items()}
    with open(os.path.join(ROOT, "docs", "features.md")) as f:
        assert f.read() == gen.render(gen._features(), runs), \
            "docs/features.md is out of date: run python tools/gen_features.py"
    with open(os.path.join(ROOT, "README.md")) as f:
        assert gen.summary(gen._features(), runs) + "." in f.read(), \
            "README.md's feature counts are out of date: run python tools/gen_features.py"
