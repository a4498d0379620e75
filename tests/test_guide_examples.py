"""The CUDA C++ Programming Guide's examples (src/simt/examples/guide.py) against NumPy, on
random inputs, every output array poisoned; and docs/guide-examples.md shows that code."""
import ast
import os
import re

import numpy as np
import pytest

import simt
from conftest import poison, random_array
from simt.examples import guide

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)


@pytest.fixture
def poisoned(monkeypatch):
    """Every simt.device_array the examples make starts as poison, not zeros."""
    monkeypatch.setattr(simt, "device_array",
                        lambda shape, dtype, **kw: simt.to_device(poison(shape, dtype)))


@pytest.mark.parametrize("multiply", [guide.mat_mul, guide.mat_mul_shared])
def test_matrix_multiplication(device, rng, poisoned, multiply):
    A = random_array(rng, (32, 48), np.float32)
    B = random_array(rng, (48, 64), np.float32)
    np.testing.assert_allclose(multiply(A, B), A @ B, rtol=1e-4, atol=1e-4)


def test_two_streams(device, rng, poisoned):
    values = random_array(rng, 2 * 3000, np.float32)
    np.testing.assert_allclose(guide.two_streams(values), 2 * values + 1, rtol=1e-6)


@pytest.mark.parametrize("build", [guide.graph_explicit, guide.graph_captured])
def test_graph(device, rng, build):
    x, y, z, w = (random_array(rng, 1000, np.float32) for _ in range(4))
    y2 = 2 * x + y                       # A
    z2 = y2 + z                          # B
    w2 = 3 * y2 + w                      # C
    x2 = z2 + x                          # D
    for got, want in zip(build(x, y, z, w), (x2, y2, z2, w2)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)   # a*x+y may be one fma


def test_cooperative_groups(device, rng, poisoned):
    values = rng.integers(-1000, 1000, 1024).astype(np.int32)
    np.testing.assert_array_equal(guide.block_sums(values), values.reshape(-1, 256).sum(1))
    np.testing.assert_array_equal(guide.tile_sums(values), values.reshape(-1, 32).sum(1))


def test_grid_sync(device, rng, poisoned):
    values = rng.integers(-1000, 1000, 5000).astype(np.int32)
    assert guide.grid_total(values) == values.sum()


def test_the_page_shows_the_code():
    """Each ```python block of the page is the source of one function of guide.py, and every
    function of guide.py is on the page."""
    with open(os.path.join(ROOT, "docs", "guide-examples.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    with open(guide.__file__) as f:
        source = f.read()
    tree = ast.parse(source)
    functions = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            functions[node.name] = "\n".join(source.splitlines()[start - 1:node.end_lineno])
    shown = "\n".join(blocks)
    for name, text in functions.items():
        assert text in shown, f"docs/guide-examples.md does not show guide.py's {name} as it is"
    for block in blocks:
        assert block.strip() in source, f"a code block of the page is not in guide.py:\n{block}"
