"""Thread block clusters (lang/cluster.py, backends/cpu/cluster.py): ranks, cluster sync and
distributed shared memory against NumPy, launches without clusters, the PTX, the errors."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt import cg
from simt.ir import types as T
from conftest import poison, random_array


@simt.kernel
def cluster_sum(a, out, ranks):
    """Every block sums its 64 values into shared memory; after cluster.sync() block rank 0
    adds up the partial sums of the cluster's blocks through their shared memory."""
    part = simt.shared.array(1, np.float32)
    buf = simt.shared.array(64, np.float32)
    cluster = cg.this_cluster()
    t = simt.threadIdx.x
    b = simt.blockIdx.x
    buf[t] = a[b * 64 + t]
    simt.syncthreads()
    if t == 0:
        s = np.float32(0)
        for i in range(64):
            s += buf[i]
        part[0] = s
    if t == 1:
        ranks[b] = cluster.block_rank() * 100 + cluster.num_blocks()
    cluster.sync()
    if cluster.block_rank() == 0 and t == 0:
        total = np.float32(0)
        for r in range(cluster.num_blocks()):
            total += cluster.map_shared_rank(part, r)[0]
        out[b // cluster.num_blocks()] = total
    cluster.sync()                     # no block leaves while its shared memory is read


@pytest.mark.parametrize("size", [2, 4])
def test_cluster_reduction_through_distributed_shared_memory(device, rng, size):
    blocks = 8
    a = random_array(rng, blocks * 64, np.float32)
    out, ranks = poison(blocks // size, np.float32), poison(blocks, np.int32)
    cluster_sum[blocks, 64, 0, None, (size, 1, 1)](a, out, ranks)
    sums = a.reshape(blocks, 64).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(out, sums.reshape(-1, size).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(ranks, np.arange(blocks) % size * 100 + size)


def test_configure_names_the_cluster(device, rng):
    """kernel.configure(grid, block, cluster=...) is kernel[grid, block, 0, None, cluster]."""
    a = random_array(rng, 4 * 64, np.float32)
    out, ranks = poison(2, np.float32), poison(4, np.int32)
    cluster_sum.configure(4, 64, cluster=(2, 1, 1))(a, out, ranks)
    sums = a.reshape(4, 64).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(out, sums.reshape(-1, 2).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(ranks, np.arange(4) % 2 * 100 + 2)
    out1 = poison(4, np.float32)
    cluster_sum.configure(4, 64)(a, out1, ranks)                   # no cluster: blocks alone
    np.testing.assert_allclose(out1, sums, rtol=1e-5)


def test_without_a_cluster_every_block_is_its_own(device, rng):
    a = random_array(rng, 3 * 64, np.float32)
    out, ranks = poison(3, np.float32), poison(3, np.int32)
    cluster_sum[3, 64](a, out, ranks)
    np.testing.assert_allclose(out, a.reshape(3, 64).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(ranks, [1, 1, 1])


@simt.kernel
def two_d(ranks):
    if simt.threadIdx.x == 0:
        c = cg.this_cluster()
        ranks[simt.blockIdx.y, simt.blockIdx.x] = c.block_rank()


def test_ranks_of_a_two_dimensional_cluster(device):
    ranks = poison((4, 4), np.int32)
    two_d[(4, 4), 32, 0, None, (2, 2, 1)](ranks)
    expected = (np.arange(4)[None, :] % 2) + (np.arange(4)[:, None] % 2) * 2
    np.testing.assert_array_equal(ranks, expected)


def test_cluster_errors():
    with simt.use_device("cpu"):
        with pytest.raises(simt.InvalidConfiguration, match="not a whole number of clusters"):
            two_d[(3, 4), 32, 0, None, (2, 1, 1)](np.zeros((4, 4), np.int32))
        with pytest.raises(simt.InvalidConfiguration, match="over the portable limit of 8"):
            two_d[(16, 1), 32, 0, None, (16, 1, 1)](np.zeros((4, 16), np.int32))


@simt.kernel
def bad_rank(out):
    part = simt.shared.array(1, np.int32)
    part[0] = 1
    out[0] = cg.this_cluster().map_shared_rank(part, 2)[0]


def test_a_rank_outside_the_cluster_is_a_launch_error():
    with simt.use_device("cpu"), pytest.raises(simt.LaunchError, match="not a block of this"):
        bad_rank[2, 1, 0, None, (2, 1, 1)](np.zeros(1, np.int32))


@pytest.fixture(scope="module")
def cluster_ptx():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions
    sig = T.parse_signature("(float32[::1], float32[::1], int32[::1])")
    return compile_kernel(cluster_sum.typed_ir(sig), CompileOptions(), "sm_90").ptx


def test_ptx_has_the_cluster_instructions(cluster_ptx):
    for text in ("%cluster_ctarank", "%cluster_nctarank", "barrier.cluster.arrive",
                 "barrier.cluster.wait"):
        assert text in cluster_ptx, text
    assert re.search(r"mapa\.u64\s+%rd\d+, %rd\d+, %r\d+;", cluster_ptx)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_cluster_ptx(cluster_ptx, tmp_path):
    path = tmp_path / "cluster.ptx"
    path.write_text(cluster_ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
