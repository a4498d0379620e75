"""The documentation builds as a site with no broken link, and every page is in its menu."""
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
