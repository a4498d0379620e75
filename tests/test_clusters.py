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
from conftest import marked_line, poison, random_array


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


# ------------------------------------------------------------ cluster extras (issue 32)
@simt.kernel
def cluster_facts(info, ranks):
    """Thread 0 of every block writes its cluster's facts; every thread its thread_rank()."""
    c = cg.this_cluster()
    bx, by, bz = simt.blockIdx.x, simt.blockIdx.y, simt.blockIdx.z
    if simt.threadIdx.x == 0 and simt.threadIdx.y == 0:
        dims = c.dim_blocks()
        index = c.block_index()
        info[bz, by, bx, 0] = dims.x
        info[bz, by, bx, 1] = dims.y
        info[bz, by, bx, 2] = dims.z
        info[bz, by, bx, 3] = index.x
        info[bz, by, bx, 4] = index.y
        info[bz, by, bx, 5] = index.z
        info[bz, by, bx, 6] = c.block_rank()
        info[bz, by, bx, 7] = c.num_blocks()
    ranks[bz, by, bx, simt.threadIdx.y, simt.threadIdx.x] = c.thread_rank()


def expected_facts(grid, cluster, block):
    """What cluster_facts writes, from CUDA's definitions."""
    gx, gy, gz = grid
    cx, cy, cz = cluster
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    info = np.empty((gz, gy, gx, 8), np.int32)
    info[..., 0], info[..., 1], info[..., 2] = cx, cy, cz
    info[..., 3], info[..., 4], info[..., 5] = x % cx, y % cy, z % cz
    rank = x % cx + (y % cy) * cx + (z % cz) * cx * cy
    info[..., 6], info[..., 7] = rank, cx * cy * cz
    threads = block[0] * block[1]
    in_block = np.arange(threads).reshape(block[1], block[0])
    ranks = rank[..., None, None] * threads + in_block
    return info, ranks.astype(np.int32)


@pytest.mark.parametrize("grid, cluster", [((4, 2, 2), (2, 1, 2)), ((6, 4, 1), (3, 2, 1)),
                                           ((4, 1, 1), None)])
def test_cluster_shape_index_and_thread_rank(device, grid, cluster):
    block = (8, 2, 1)
    info = poison((grid[2], grid[1], grid[0], 8), np.int32)
    ranks = poison((grid[2], grid[1], grid[0], block[1], block[0]), np.int32)
    cluster_facts[grid, block, 0, None, cluster](info, ranks)
    want_info, want_ranks = expected_facts(grid, cluster or (1, 1, 1), block)
    np.testing.assert_array_equal(info, want_info)
    np.testing.assert_array_equal(ranks, want_ranks)


@simt.device
def rank_in_device_function(scale):
    return cg.this_cluster().block_rank() * scale


@simt.kernel
def ranks_through_a_call(out):
    if simt.threadIdx.x == 0:
        out[simt.blockIdx.x] = rank_in_device_function(np.int32(3))


def test_cluster_queries_in_device_functions(device):
    """The CPU device found its cluster table through the kernel's launch record, which a
    device function does not have: there every block was rank 0."""
    out = poison(8, np.int32)
    ranks_through_a_call[8, 32, 0, None, (4, 1, 1)](out)
    np.testing.assert_array_equal(out, np.arange(8) % 4 * 3)


@simt.kernel
def split_barrier(a, out):
    """Every block writes its shared memory and arrives; work that needs no other block runs
    before the wait; after it each thread reads the next block of the cluster's memory."""
    mine = simt.shared.array(64, np.float32)
    c = cg.this_cluster()
    t = simt.threadIdx.x
    i = simt.blockIdx.x * 64 + t
    mine[t] = a[i] * np.float32(2)
    c.barrier_arrive()
    own = a[i] + np.float32(1)
    c.barrier_wait()
    other = c.map_shared_rank(mine, (c.block_rank() + 1) % c.num_blocks())
    out[i] = other[(t + 1) % 64] + own
    c.barrier_arrive()                 # no block leaves while its shared memory is read
    c.barrier_wait()


@pytest.mark.parametrize("size", [2, 4, 8])
def test_split_cluster_barrier_orders_distributed_shared_memory(device, rng, size):
    blocks = 8
    a = random_array(rng, (blocks, 64), np.float32)
    out = poison((blocks, 64), np.float32)
    split_barrier[blocks, 64, 0, None, (size, 1, 1)](a.ravel(), out.ravel())
    nxt = np.arange(blocks) // size * size + (np.arange(blocks) % size + 1) % size
    want = 2 * a[nxt][:, (np.arange(64) + 1) % 64] + (a + 1)     # in float32, as the kernel
    np.testing.assert_array_equal(out, want)


@simt.kernel
def arrive_sync_mixed(a, out):
    """barrier_arrive/barrier_wait and sync() are one barrier, phase after phase."""
    cell = simt.shared.array(1, np.int32)
    c = cg.this_cluster()
    rank = c.block_rank()
    n = c.num_blocks()
    if simt.threadIdx.x == 0:
        cell[0] = a[simt.blockIdx.x]
    c.sync()
    left = c.map_shared_rank(cell, (rank + n - 1) % n)[0]
    c.barrier_arrive()
    c.barrier_wait()                   # every block has read before anyone writes again
    if simt.threadIdx.x == 0:
        cell[0] = left * 10
    c.barrier_arrive()
    c.barrier_wait()
    if simt.threadIdx.x == 0:
        out[simt.blockIdx.x] = c.map_shared_rank(cell, (rank + 1) % n)[0]
    c.sync()


def test_sync_and_split_barrier_phases(device, rng):
    a = random_array(rng, 8, np.int32)
    out = poison(8, np.int32)
    arrive_sync_mixed[8, 32, 0, None, (4, 1, 1)](a, out)
    idx = np.arange(8)
    # block r's cell ends as 10 * a[r - 1]; block r reads block r + 1's: 10 * a[r]
    base = idx // 4 * 4
    left_of_next = base + ((idx % 4 + 1) % 4 + 3) % 4
    np.testing.assert_array_equal(out, a[left_of_next] * 10)


@simt.kernel(cluster_dims=(2, 1, 2))
def fixed_cluster(info, ranks):
    c = cg.this_cluster()
    bx, by, bz = simt.blockIdx.x, simt.blockIdx.y, simt.blockIdx.z
    if simt.threadIdx.x == 0 and simt.threadIdx.y == 0:
        dims = c.dim_blocks()
        index = c.block_index()
        info[bz, by, bx, 0] = dims.x
        info[bz, by, bx, 1] = dims.y
        info[bz, by, bx, 2] = dims.z
        info[bz, by, bx, 3] = index.x
        info[bz, by, bx, 4] = index.y
        info[bz, by, bx, 5] = index.z
        info[bz, by, bx, 6] = c.block_rank()
        info[bz, by, bx, 7] = c.num_blocks()
    ranks[bz, by, bx, simt.threadIdx.y, simt.threadIdx.x] = c.thread_rank()


def test_cluster_dims_shapes_launches_without_a_cluster(device):
    grid, block = (4, 2, 2), (8, 2, 1)
    want_info, want_ranks = expected_facts(grid, (2, 1, 2), block)
    for cluster in (None, (2, 1, 2), (2, 1, 2)):   # naming the same shape is allowed
        info = poison((2, 2, 4, 8), np.int32)
        ranks = poison((2, 2, 4, 2, 8), np.int32)
        fixed_cluster[grid, block, 0, None, cluster](info, ranks)
        np.testing.assert_array_equal(info, want_info)
        np.testing.assert_array_equal(ranks, want_ranks)


def test_cluster_dims_errors(device):
    info, ranks = np.zeros((2, 2, 4, 8), np.int32), np.zeros((2, 2, 4, 2, 8), np.int32)
    with pytest.raises(simt.InvalidConfiguration,
                       match=r"launch of 'fixed_cluster': it asks for clusters \(4, 1, 1\) but "
                             r"the kernel was declared with cluster_dims=\(2, 1, 2\)"):
        fixed_cluster[(4, 2, 2), (8, 2), 0, None, (4, 1, 1)](info, ranks)
    with pytest.raises(simt.InvalidConfiguration,
                       match=r"the grid \(3, 2, 2\) is not a whole number of clusters "
                             r"\(2, 1, 2\)"):
        fixed_cluster[(3, 2, 2), (8, 2)](info, ranks)


@pytest.mark.parametrize("value, error, text", [
    ((4, 4), ValueError, r"cluster_dims \(4, 4, 1\) is a cluster of 16 blocks, over the "
                         r"portable limit of 8"),
    ((2, 0), ValueError, r"cluster_dims \(2, 0, 1\) has a dimension below 1"),
    ((2.0, 1), TypeError, r"cluster_dims is \(x, y, z\)"),
    ((1, 1, 1, 1), TypeError, r"cluster_dims is \(x, y, z\)")])
def test_bad_cluster_dims_are_refused_at_the_decorator(value, error, text):
    def k(out):
        out[0] = 1
    with pytest.raises(error, match=r"@simt.kernel 'k': " + text):
        simt.kernel(cluster_dims=value)(k)


def test_max_active_clusters(device):
    sig = "void(float32[::1], float32[::1])"
    split_barrier.compile(sig)
    n = split_barrier.max_active_clusters(8, 64, (2, 1, 1), signature=sig)
    if device.kind == "cpu":
        assert n == 1                  # the CPU device runs one cluster at a time
    else:
        assert n >= 1
    fixed_cluster.compile("void(int32[:, :, :, ::1], int32[:, :, :, :, ::1])")
    assert fixed_cluster.max_active_clusters((4, 2, 2), (8, 2)) >= 1   # its cluster_dims
    with pytest.raises(simt.InvalidConfiguration, match="max_active_clusters: it asks for"):
        fixed_cluster.max_active_clusters((4, 2, 2), (8, 2), (2, 1, 1))
    with pytest.raises(simt.InvalidConfiguration, match="name the cluster shape"):
        split_barrier.max_active_clusters(8, 64, signature=sig)
    with pytest.raises(simt.InvalidConfiguration, match="not a whole number of clusters"):
        split_barrier.max_active_clusters(6, 64, (4, 1, 1), signature=sig)


def test_max_active_clusters_is_0_for_blocks_that_cannot_run():
    with simt.use_device("cpu"):
        sig = "void(float32[::1], float32[::1])"
        too_much = simt.get_device().properties.shared_memory_per_block_optin + 1
        assert split_barrier.max_active_clusters(8, 64, (2, 1, 1), too_much, sig) == 0


@simt.kernel
def only_sync(out):
    cg.this_cluster().sync()
    out[0] = 1


def test_sim_runs_a_cluster_sync_alone_as_a_block_barrier():
    """Without a cluster shape every block is a cluster of one: cluster.sync() is a
    barrier of the block (it was a 'needs a cooperative launch' grid sync once)."""
    with simt.use_device("sim"):
        out = poison(1, np.int32)
        only_sync[1, 1](out)
        assert out[0] == 1


@simt.kernel(cluster_dims=2)
def fixed_pairs(out):
    if simt.threadIdx.x == 0:
        out[simt.blockIdx.x] = simt.blockIdx.x


def test_cluster_dims_launches(device):
    """A kernel with cluster_dims and no cluster functions runs as any other on the CPU;
    the sim device, which has no clusters, refuses its launches."""
    out = poison(6, np.int32)
    fixed_pairs[6, 32](out)
    np.testing.assert_array_equal(out, np.arange(6))


def test_cooperative_launches_of_cluster_dims_kernels_are_refused():
    with simt.use_device("cpu"), pytest.raises(simt.NotSupportedError,
                                               match="kernel 'fixed_pairs' has cluster_dims: "
                                                     "cooperative launches"):
        fixed_pairs.launch_cooperative(4, 32, (np.zeros(4, np.int32),))


# ---------------------------------------------------------------- on the sim device
@pytest.mark.parametrize("test, kwargs", [
    (test_cluster_reduction_through_distributed_shared_memory, {"size": 2}),
    (test_cluster_reduction_through_distributed_shared_memory, {"size": 4}),
    (test_configure_names_the_cluster, {}),
    (test_ranks_of_a_two_dimensional_cluster, {}),
    (test_cluster_shape_index_and_thread_rank, {"grid": (4, 2, 2), "cluster": (2, 1, 2)}),
    (test_cluster_shape_index_and_thread_rank, {"grid": (6, 4, 1), "cluster": (3, 2, 1)}),
    (test_cluster_queries_in_device_functions, {}),
    (test_split_cluster_barrier_orders_distributed_shared_memory, {"size": 2}),
    (test_split_cluster_barrier_orders_distributed_shared_memory, {"size": 8}),
    (test_sync_and_split_barrier_phases, {}),
    (test_cluster_dims_shapes_launches_without_a_cluster, {}),
    (test_cluster_dims_launches, {})],
    ids=lambda x: x.__name__[5:] if callable(x) else "-".join(map(str, x.values())) or "-")
def test_sim(test, kwargs, rng):
    """The cpu device's cluster tests on the sim device: a cluster's blocks take turns
    between cluster syncs, distributed shared memory is each block's checked array."""
    import inspect
    given = dict(kwargs, rng=rng)
    with simt.use_device("sim") as sim:
        params = list(inspect.signature(test).parameters)[1:]
        test(sim, **{name: given[name] for name in params})


@simt.kernel
def neighbour_in_cluster(out, synced):
    mine = simt.shared.array(32, np.int32)
    c = cg.this_cluster()
    t = simt.threadIdx.x
    mine[t] = simt.blockIdx.x * 100 + t         # <- own shared memory
    if synced:
        c.sync()
    other = c.map_shared_rank(mine, (c.block_rank() + 1) % c.num_blocks())
    out[simt.blockIdx.x * 32 + t] = other[t]    # <- the neighbour
    c.sync()


def test_sim_checks_distributed_shared_memory():
    """On the sim device a cluster.sync() orders the cluster's blocks' accesses; reading
    another block's shared memory without one is a race (or a read of memory nothing
    wrote yet); a rank outside the cluster is the cpu device's LaunchError."""
    want = (np.arange(4)[:, None] // 2 * 2 + (np.arange(4)[:, None] % 2 + 1) % 2) * 100 + \
        np.arange(32)
    for seed in (0, 5):
        with simt.use_device("sim", seed=seed):
            out = poison(4 * 32, np.int32)
            neighbour_in_cluster[4, 32, 0, None, (2, 1, 1)](out, True)
            np.testing.assert_array_equal(out, want.ravel())
    with simt.use_device("sim"):
        with pytest.raises((simt.RaceConditionError, simt.UninitializedReadError)) as info:
            neighbour_in_cluster[4, 32, 0, None, (2, 1, 1)](poison(4 * 32, np.int32), False)
        assert f"test_clusters.py:{marked_line(__file__, 'the neighbour')}" in str(info.value)
        with pytest.raises(simt.LaunchError, match="not a block of this"):
            bad_rank[2, 1, 0, None, (2, 1, 1)](np.zeros(1, np.int32))


@pytest.fixture(scope="module")
def extras_ptx():
    """The PTX of the kernels using every cluster extra, for sm_90a."""
    return {"split": split_barrier.ptx("void(float32[::1], float32[::1])", arch="sm_90a"),
            "facts": cluster_facts.ptx("void(int32[:, :, :, ::1], int32[:, :, :, :, ::1])",
                                       arch="sm_90a"),
            "fixed": fixed_cluster.ptx("void(int32[:, :, :, ::1], int32[:, :, :, :, ::1])",
                                       arch="sm_90a")}


def test_ptx_of_the_cluster_extras(extras_ptx):
    facts, split, fixed = extras_ptx["facts"], extras_ptx["split"], extras_ptx["fixed"]
    for axis in "xyz":
        assert f"%cluster_nctaid.{axis}" in facts and f"%cluster_ctaid.{axis}" in facts
    assert "%cluster_ctarank" in facts and ".reqnctapercluster" not in facts
    # two arrive/wait pairs, each split by other instructions
    assert split.count("barrier.cluster.arrive;") == 2
    assert split.count("barrier.cluster.wait;") == 2
    assert not re.search(r"barrier\.cluster\.arrive;\s*barrier\.cluster\.wait;", split)
    assert re.search(r"\.explicitcluster\s+\.reqnctapercluster 2, 1, 2\s*\{", fixed)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
@pytest.mark.parametrize("name", ["split", "facts", "fixed"])
def test_ptxas_accepts_the_cluster_extras(extras_ptx, name, tmp_path):
    path = tmp_path / f"{name}.ptx"
    path.write_text(extras_ptx[name])
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def leaves_early(out, last_sync):
    mine = simt.shared.array(32, np.int32)
    c = cg.this_cluster()
    t = simt.threadIdx.x
    mine[t] = simt.blockIdx.x * 100 + t
    c.sync()
    if c.block_rank() == 0:
        out[t] = c.map_shared_rank(mine, 1)[t]     # <- after the other left
    if last_sync:
        c.sync()


def test_sim_reports_shared_memory_of_an_exited_block():
    """On the sim device a block reading the shared memory of a block of its cluster that
    may have exited (no cluster.sync() before that one returns) is a use after exit, in
    whichever order the blocks run; with the last sync it is not."""
    for seed in (0, 1, 2):
        with simt.use_device("sim", seed=seed):
            out = poison(32, np.int32)
            leaves_early[2, 32, 0, None, (2, 1, 1)](out, True)
            np.testing.assert_array_equal(out, 100 + np.arange(32))
            with pytest.raises(simt.IllegalAddressError) as info:
                leaves_early[2, 32, 0, None, (2, 1, 1)](out, False)
                simt.synchronize()
            text = str(info.value)
            assert "Use after exit" in text and "map_shared_rank(mine, 1)[" in text, text
            assert f"test_clusters.py:{marked_line(__file__, 'after the other left')}" in text
