"""simt is installable as its documents and messages say: every `pip install` line in README.md,
docs/ and simt's own messages works from a clone (simt is not on PyPI), each extra it names
exists, and the distribution's metadata is whole. .ci/run builds the sdist and the wheel and
runs the wheel from a fresh venv."""
import glob
import os
import re

import pytest

tomllib = pytest.importorskip("tomllib")      # Python 3.11 on; the checks are not version-bound

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), os.pardir))
INSTALL = re.compile(r"pip install\s+((?:-\S+\s+)*)(['\"]?)([^\s'\"`)]+)")


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _install_lines():
    """[(file, what `pip install` installs)] over README.md, docs/*.md and src/simt/, with
    line breaks read as spaces (a command may wrap in a paragraph)."""
    files = [os.path.join(ROOT, "README.md"), *glob.glob(os.path.join(ROOT, "docs", "*.md")),
             *glob.glob(os.path.join(ROOT, "src", "simt", "**", "*.py"), recursive=True)]
    found = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"\s+", " ", f.read())
        found += [(os.path.relpath(path, ROOT), m.group(3)) for m in INSTALL.finditer(text)]
    return found


def test_no_install_line_asks_the_index_for_simt():
    lines = _install_lines()
    assert len(lines) > 10
    wrong = [(path, target) for path, target in lines if re.match(r"simt\b", target)]
    assert not wrong, f"simt is not on PyPI: install from a clone ('.' or '.[extra]'): {wrong}"


def test_every_extra_named_in_an_install_line_exists():
    extras = set(_pyproject()["project"]["optional-dependencies"])
    named = [(path, target) for path, target in _install_lines() if target.startswith(".[")]
    assert named
    for path, target in named:
        for extra in target[2:target.index("]")].split(","):
            assert extra in extras, f"{path}: pip install '{target}': no extra {extra!r}"


def test_the_cuda_install_advice_is_what_the_extras_install():
    from simt.backends.cuda.driver import INSTALL_CUDA
    extras = _pyproject()["project"]["optional-dependencies"]
    for name in ("cu13", "cu12"):
        for requirement in extras[name]:
            assert requirement in INSTALL_CUDA, (name, requirement)
        assert f"'.[{name}]'" in INSTALL_CUDA


def test_the_metadata_is_whole():
    import simt
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    with open(os.path.join(ROOT, "LICENSE")) as f:
        assert "MIT License" in f.read()
    assert project["readme"] == "README.md" and project["requires-python"]
    assert project["classifiers"] and project["keywords"]
    assert project["dynamic"] == ["version"]      # from simt/version.py: one place
    assert re.fullmatch(r"\d+\.\d+\.\d+", simt.__version__)
    with open(os.path.join(ROOT, "MANIFEST.in")) as f:
        assert "include CHANGELOG.md" in f.read()
