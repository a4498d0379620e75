"""The documentation builds as a site with no broken link, and every page is in its menu."""
import html
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
DOCS = os.path.join(ROOT, "docs")


def test_every_page_is_in_the_menu():
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:    # "Title: page.md" or "- page.md"
        menu = set(re.findall(r"[:-]\s*([\w./-]+\.md)\s*$", f.read(), re.M))
    pages = {name for name in os.listdir(DOCS) if name.endswith(".md")}
    assert not pages - menu, f"add these pages to the nav of mkdocs.yml: {sorted(pages - menu)}"
    assert not menu - pages, f"mkdocs.yml names pages that do not exist: {sorted(menu - pages)}"


def test_the_site_builds_with_no_broken_link(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="pip install '.[docs]' (the test extra has it)")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "site" / "api" / "index.html") as f:        # mkdocstrings rendered
        api = f.read()
    assert 'id="simt.to_device"' in api and "Source code in" in api
    with open(tmp_path / "site" / "gallery" / "index.html") as f:    # sources included
        gallery = f.read()
    assert "--8&lt;--" not in gallery and gallery.count("<details") >= 10
    with open(tmp_path / "site" / "changelog" / "index.html") as f:
        assert "Unreleased" in f.read()


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_host_api_reference_is_up_to_date():
    import simt
    generator = _load(os.path.join(ROOT, "tools", "gen_api.py"))
    text = generator.render()
    assert "::: simt.to_device\n" in text and "::: simt.Stream\n" in text
    assert "\n## Errors\n" in text and "::: simt.CompileError\n" in text
    assert "simt.syncthreads" not in text       # kernel names live in intrinsics.md
    host = {name for name in simt.__all__ if not _kernel_side(getattr(simt, name))}
    missing = sorted(host - generator.documented())
    assert not missing, f"add these to a section of tools/gen_api.py: {missing}"
    with open(os.path.join(DOCS, "api.md")) as f:
        assert f.read() == text, "docs/api.md is out of date: run python tools/gen_api.py"


def _kernel_side(obj):
    """Intrinsics, namespaces (simt.atomic, simt.shared), threadIdx & co, cg, vector types."""
    return type(obj).__name__ == "module" or type(obj).__module__.startswith("simt.lang.") or \
        (isinstance(obj, type) and obj.__module__ == "simt.lang.vectors")


def test_intrinsic_docs_render_as_written():
    """A docstring in the kernel language reference is text, not Markdown: unescaped,
    `child[grid, block](args)` rendered as a link to 'args' and `wait_prior<n>` lost its <n>."""
    markdown = pytest.importorskip("markdown")
    cell = _load(os.path.join(ROOT, "tools", "gen_intrinsics.py"))._cell
    for text in ["child[grid, block](args) or child[grid, block, shared](args)",
                 "CUDA's wait_prior<n>; a*b + c*d, __hfma and x | y", "a `b` c \\ d"]:
        page = markdown.markdown(f"| doc |\n| --- |\n| {cell(text)} |", extensions=["tables"])
        body = page[page.index("<td>") + 4:page.index("</td>")]
        assert "<" not in body, (text, body)        # no link, tag, emphasis or code span
        assert html.unescape(body) == text


def test_checked_in_gallery_is_up_to_date():
    from simt.cli import find_examples
    generator = _load(os.path.join(ROOT, "tools", "gen_gallery.py"))
    text = generator.render()
    with open(os.path.join(DOCS, "gallery.md")) as f:
        assert f.read() == text, "docs/gallery.md is out of date: run python tools/gen_gallery.py"
    for name in find_examples():             # every example, with its source
        assert f"\n### {name}\n" in text and f"| [`{name}`](#{name}) |" in text
    assert text.count('--8<-- "src/simt/examples/') == len(generator._groups(
        generator._examples()))
    assert set(generator.SAME_PICTURE.values()) <= set(generator.PICTURES)
    for name in generator.PICTURES:
        size = os.path.getsize(os.path.join(DOCS, "gallery", f"{name}.png"))
        assert 0 < size < 60_000, f"docs/gallery/{name}.png is {size} bytes: keep pictures small"
        assert f"![{name}](gallery/{name}.png)" in text


def test_the_changelog_is_in_the_docs():
    with open(os.path.join(DOCS, "changelog.md")) as f:
        assert '--8<-- "CHANGELOG.md"' in f.read()
