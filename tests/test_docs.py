"""The documentation builds as a site with no broken link, and every page is in its menu."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
DOCS = os.path.join(ROOT, "docs")


def test_every_page_is_in_the_menu():
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        menu = set(re.findall(r":\s*([\w./-]+\.md)\s*$", f.read(), re.M))
    pages = {name for name in os.listdir(DOCS) if name.endswith(".md")}
    assert not pages - menu, f"add these pages to the nav of mkdocs.yml: {sorted(pages - menu)}"
    assert not menu - pages, f"mkdocs.yml names pages that do not exist: {sorted(menu - pages)}"


def test_the_site_builds_with_no_broken_link(tmp_path):
    pytest.importorskip("mkdocs", reason="pip install '.[docs]' (the test extra has it)")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_host_api_reference_is_up_to_date():
    try:                     # with ml_dtypes simt.bfloat16 is its type: other signature and doc
        import ml_dtypes     # noqa: F401
        pytest.skip("docs/api.md is generated without ml_dtypes installed")
    except ImportError:
        pass
    text = _load(os.path.join(ROOT, "tools", "gen_api.py")).render()
    assert "### `simt.to_device(" in text and "### `simt.Stream(" in text
    assert "simt.syncthreads" not in text       # kernel names live in intrinsics.md
    with open(os.path.join(DOCS, "api.md")) as f:
        assert f.read() == text, "docs/api.md is out of date: run python tools/gen_api.py"


def test_checked_in_gallery_is_up_to_date():
    generator = _load(os.path.join(ROOT, "tools", "gen_gallery.py"))
    text = generator.render()
    assert "| `julia` |" in text and "| `hashtable_gpu` |" in text
    with open(os.path.join(DOCS, "gallery.md")) as f:
        assert f.read() == text, "docs/gallery.md is out of date: run python tools/gen_gallery.py"
    for name in generator.PICTURES:
        size = os.path.getsize(os.path.join(DOCS, "gallery", f"{name}.png"))
        assert 0 < size < 60_000, f"docs/gallery/{name}.png is {size} bytes: keep pictures small"
