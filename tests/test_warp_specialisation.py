"""Warp specialisation (lang/warpspec.py): elect_one, named barriers, setmaxnreg and
griddepcontrol on every device; a producer warpgroup feeding consumer warpgroups through
shared memory with bar.arrive/bar.sync (and setmaxnreg) on GPUs and the sim device, and
the CPU device's NotSupportedError for it; the CompileErrors; the PTX that ptxas assembles."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.backends.cuda.archspecific import target_for
from simt.backends.cuda.compile import compile_kernel
from simt.compiler.options import CompileOptions
from simt.ir import types as T
from conftest import poison, random_array

I32 = T.Array(np.dtype(np.int32), 1, "C")
F32 = T.Array(np.dtype(np.float32), 1, "C")
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")


# ------------------------------------------------------------------ elect_one
@simt.kernel
def elect(counts, lanes, odd_counts, odd_lanes):
    t = simt.threadIdx.x
    w = t // 32
    if simt.elect_one():
        simt.atomic.add(counts, w, 1)
        lanes[w] = simt.laneid()
    if simt.laneid() % 2 == 1:           # only the odd lanes call it
        if simt.elect_one():
            simt.atomic.add(odd_counts, w, 1)
            odd_lanes[w] = simt.laneid()


@pytest.mark.parametrize("threads", [96, 80])         # 80: a warp of 16 lanes
def test_elect_one_is_true_in_exactly_one_lane_of_each_warp(device, threads):
    warps = (threads + 31) // 32
    counts, odd_counts = np.zeros(warps, np.int32), np.zeros(warps, np.int32)
    lanes, odd_lanes = poison(warps, np.int32), poison(warps, np.int32)
    elect[1, threads](counts, lanes, odd_counts, odd_lanes)
    np.testing.assert_array_equal(counts, 1)
    np.testing.assert_array_equal(odd_counts, 1)
    assert ((lanes >= 0) & (lanes < 32)).all()
    assert (odd_lanes % 2 == 1).all()
    if device.kind != "cuda":            # elect.sync names no lane; these devices the lowest
        np.testing.assert_array_equal(lanes, 0)
        np.testing.assert_array_equal(odd_lanes, 1)


# ------------------------------------------------------------------ named barriers of the block
@simt.kernel
def whole_block(a, out):
    s = simt.shared.array(256, np.float32)
    t = simt.threadIdx.x
    n = simt.blockDim.x
    s[t] = a[t]
    simt.barrier_sync(1)
    v = s[n - 1 - t]
    simt.barrier_sync(2, 128)
    s[t] = v * 2.0
    simt.barrier_sync(3, simt.blockDim.x)
    out[t] = s[(t + 1) % n]


def test_a_named_barrier_of_the_whole_block_is_syncthreads(device, rng):
    a = random_array(rng, 128, np.float32)
    out = poison(128, np.float32)
    whole_block[1, 128](a, out)
    np.testing.assert_array_equal(out, a[::-1][(np.arange(128) + 1) % 128] * 2)




@simt.kernel
def halves(a, out):
    """Each half of the block has its own barrier (ids 1 and 2, 64 threads each)."""
    s = simt.shared.array(128, np.float32)
    t = simt.threadIdx.x
    s[t] = a[t]
    if t < 64:
        simt.barrier_sync(1, 64)
        out[t] = s[63 - t]
    else:
        simt.barrier_sync(2, 64)
        out[t] = s[191 - t]


def test_a_named_barrier_counts_as_on_the_gpu(device, rng):
    """Each half of the block meets at its own barrier: on the CPU device the kernel's warps
    run as fibers (docs/cpu-device.md)."""
    a = random_array(rng, 128, np.float32)
    out = poison(128, np.float32)
    halves[1, 128](a, out)
    np.testing.assert_array_equal(out, np.concatenate([a[:64][::-1], a[64:][::-1]]))


@simt.kernel
def too_few(out):
    t = simt.threadIdx.x
    if t < 32:
        simt.barrier_sync(1, 64)
    out[t] = t


def test_the_sim_device_reports_a_named_barrier_that_never_completes():
    with simt.use_device("sim"), pytest.raises(
            simt.BarrierDivergenceError, match=r"named barrier 1 waits for 64 threads and only "
            r"32 arrived"):
        too_few[1, 64](np.zeros(64, np.int32))


def test_checked_mode_refuses_named_barriers_of_part_of_the_block():
    """Checked mode runs a block in thread loops (as it checks them): there a named barrier
    must be met by the whole block at one line; elsewhere the CPU device counts it as a GPU
    does."""
    with simt.use_device("cpu", checks=True), pytest.raises(
            simt.NotSupportedError, match=r"simt.barrier_sync in a branch or loop that only "
            r"some threads of the block take is not supported on the cpu device in checked "
            r"mode: .*without checks=True the kernel's warps run as fibers"):
        halves[1, 128](np.zeros(128, np.float32), np.zeros(128, np.float32))


def test_checked_mode_checks_the_count_when_the_block_gets_there():
    """A kernel compiled for any block shape (checked mode) checks the count as it runs."""
    with simt.use_device("cpu", checks=True):
        a = np.arange(128, dtype=np.float32)
        out = poison(128, np.float32)
        whole_block[1, 128](a, out)
        np.testing.assert_array_equal(out, a[::-1][(np.arange(128) + 1) % 128] * 2)
        with pytest.raises(simt.LaunchError, match=r"with a count other than the block's "
                           r"threads is not supported on the cpu device"):
            whole_block[1, 256](np.zeros(256, np.float32), np.zeros(256, np.float32))


# ------------------------------------------------------------------ producer and consumers
@simt.kernel
def two_warpgroups(a, out, tiles):
    """Warpgroup 0 copies tiles of 128 into a double buffer in shared memory, warpgroup 1
    reads them: bar.arrive(full) after a copy, bar.sync(full) before the read;
    bar.arrive(empty) after it, bar.sync(empty) before the buffer is refilled."""
    buf = simt.shared.array((2, 128), np.float32)
    t = simt.threadIdx.x
    base = simt.blockIdx.x * tiles * 128
    if t < 128:
        for it in range(tiles + 2):
            s = it % 2
            if it >= 2:
                simt.barrier_sync(3 + s, 256)
            if it < tiles:
                buf[s, t] = a[base + it * 128 + t]
                simt.barrier_arrive(1 + s, 256)
    else:
        c = t - 128
        for it in range(tiles):
            s = it % 2
            simt.barrier_sync(1 + s, 256)
            out[base + it * 128 + c] = buf[s, 127 - c] + 1.0
            simt.barrier_arrive(3 + s, 256)


@simt.kernel(launch_bounds=(384, 1))
def specialised(a, out, tiles, producers):
    """Warpgroup 0 produces with few registers (setmaxnreg 40), warpgroups 1 and 2 consume
    with many (232): 128 * 40 + 256 * 232 = 384 * 168, the registers at entry."""
    buf = simt.shared.array((2, 256), np.float32)
    t = simt.threadIdx.x
    base = simt.blockIdx.x * tiles * 256
    if t < 128:
        simt.setmaxnreg(40, "dec")
        for it in range(tiles + 2):
            s = it % 2
            if it >= 2:
                simt.barrier_sync(3 + s, 384)
            if it < tiles:
                buf[s, t] = a[base + it * 256 + t]
                buf[s, t + 128] = a[base + it * 256 + t + 128]
                if simt.elect_one():
                    simt.atomic.add(producers, simt.blockIdx.x, 1)
                simt.barrier_arrive(1 + s, 384)
    else:
        simt.setmaxnreg(232, "inc")
        c = t - 128
        for it in range(tiles):
            s = it % 2
            simt.barrier_sync(1 + s, 384)
            x = buf[s, c]
            out[base + it * 256 + c] = x * x - 2.0 * x
            simt.barrier_arrive(3 + s, 384)


def test_a_producer_warpgroup_feeds_a_consumer_warpgroup(device, rng):
    blocks, tiles = 6, 7
    a = random_array(rng, blocks * tiles * 128, np.float32)
    out = poison(a.size, np.float32)
    two_warpgroups[blocks, 256](a, out, tiles)
    expected = a.reshape(-1, 128)[:, ::-1] + np.float32(1)
    np.testing.assert_array_equal(out, expected.reshape(-1))


def test_setmaxnreg_in_a_warp_specialised_kernel(device, rng):
    blocks, tiles = 8, 5
    a = random_array(rng, blocks * tiles * 256, np.float32)
    out = poison(a.size, np.float32)
    producers = np.zeros(blocks, np.int32)
    specialised[blocks, 384](a, out, tiles, producers)
    np.testing.assert_allclose(out, a * a - 2 * a, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(producers, tiles * 4)      # one elected lane per warp


@simt.kernel
def named_in_a_branch(a, out):
    s = simt.shared.array(64, np.float32)
    t = simt.threadIdx.x
    if t < 32:
        s[t] = a[t]
        simt.barrier_sync(1, 64)
    else:
        simt.barrier_sync(1, 64)
        out[t - 32] = s[t - 32]


def test_warps_meeting_at_a_named_barrier_from_two_lines(device, rng):
    """Legal on a GPU, the sim device and the CPU device (its warps run as fibers)."""
    a = random_array(rng, 32, np.float32)
    out = poison(32, np.float32)
    named_in_a_branch[1, 64](a, out)
    np.testing.assert_array_equal(out, a)


# ------------------------------------------------------------------ setmaxnreg, griddepcontrol
@simt.kernel(maxnreg=128)
def registers_and_dependents(a, out):
    simt.griddepcontrol.wait()
    i = simt.grid(1)
    if simt.threadIdx.x < 128:
        simt.setmaxnreg(56, "dec")
    else:
        simt.setmaxnreg(200, "inc")
    if i < out.size:
        out[i] = a[i] + 1.0
    simt.griddepcontrol.launch_dependents()


def test_setmaxnreg_and_griddepcontrol_run_everywhere(device, rng):
    """No-ops on the CPU and sim devices; on the GPU 128 * 56 + 128 * 200 = 256 * 128."""
    a = random_array(rng, 1024, np.float32)
    out = poison(1024, np.float32)
    registers_and_dependents[4, 256](a, out)
    np.testing.assert_array_equal(out, a + 1)


@simt.kernel
def unbounded(out):
    simt.setmaxnreg(40, "dec")
    out[0] = 1


def test_setmaxnreg_needs_the_registers_at_entry_fixed():
    with simt.use_device("cpu"), pytest.raises(
            simt.CompileError, match=r"simt.setmaxnreg needs the kernel's register count at "
            r"entry fixed") as info:
        unbounded[1, 1](np.zeros(1, np.int32))
    assert "launch_bounds=(384, 1)" in str(info.value)
    assert info.value.line == unbounded.pyfunc.__code__.co_firstlineno + 2


# ------------------------------------------------------------------ compile errors
def _error(line):
    namespace = {"np": np, "simt": simt}
    code = f"@simt.kernel\ndef bad(out):\n    t = simt.threadIdx.x\n    {line}\n"
    filename = f"<warpspec-test-{abs(hash(line))}>"
    import linecache
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), namespace)
    with pytest.raises(simt.CompileError) as info:
        namespace["bad"].typed_ir([I32])
    assert info.value.line == 4
    return str(info.value)


@pytest.mark.parametrize("line, message", [
    ('simt.setmaxnreg(44, "inc")', r"the register count is 44; it must be a multiple of 8 "
                                   r"from 24 to 256"),
    ('simt.setmaxnreg(264, "dec")', r"the register count is 264"),
    ('simt.setmaxnreg(t, "dec")', r"register count must be a compile-time constant"),
    ('simt.setmaxnreg(64, "up")', r"the action is 'up'; it must be 'inc'"),
    ("simt.barrier_sync(16)", r"the barrier id is 16; it must be 0 to 15"),
    ("simt.barrier_sync(1, 48)", r"the thread count is 48; it must be a multiple of 32"),
    ("simt.barrier_sync(1.0)", r"the barrier id is 1.0"),
    ("simt.barrier_arrive(1)", r"needs the barrier id and the number of threads"),
    ("simt.barrier_arrive(1, 2048)", r"the thread count is 2048"),
    ("out[0] = simt.elect_one(1)", r"simt.elect_one\(\) takes no arguments"),
    ("simt.griddepcontrol.wait(1)", r"simt.griddepcontrol.wait\(\) takes no arguments"),
])
def test_bad_calls_are_compile_errors_at_the_line(line, message):
    assert re.search(message, _error(line)), _error(line)


# ------------------------------------------------------------------ the PTX
def _ptx(kernel, types, options=None):
    fn = kernel.typed_ir(types)
    arch = target_for(fn, "sm_90")
    return compile_kernel(fn, CompileOptions(**(options or kernel.options)), arch).ptx


KERNELS = [(elect, [I32] * 4), (whole_block, [F32] * 2), (two_warpgroups, [F32, F32, T.INT64]),
           (specialised, [F32, F32, T.INT64, I32]), (registers_and_dependents, [F32] * 2)]


def test_the_ptx_has_the_instructions():
    ptx = "\n".join(_ptx(k, types) for k, types in KERNELS)
    for pattern in (r"elect\.sync _\|%simt_elected, %simt_lanes;", r"bar\.sync \t1;",
                    r"bar\.sync \t2, 128;", r"bar\.sync \t%r\d+, 256;",
                    r"bar\.arrive \t%r\d+, 384;", r"setmaxnreg\.dec\.sync\.aligned\.u32 40;",
                    r"setmaxnreg\.inc\.sync\.aligned\.u32 232;", r"griddepcontrol\.wait;",
                    r"griddepcontrol\.launch_dependents;", r"\.target sm_90a"):
        assert re.search(pattern, ptx), pattern


def test_setmaxnreg_makes_the_kernel_arch_specific():
    assert target_for(specialised.typed_ir([F32, F32, T.INT64, I32]), "sm_90") == "sm_90a"
    assert target_for(two_warpgroups.typed_ir([F32, F32, T.INT64]), "sm_90") == "sm_90"
    with pytest.raises(simt.NotSupportedError, match=r"simt.setmaxnreg \(kernel 'specialised'\) "
                       r"needs a GPU of compute capability 9.0 exactly"):
        target_for(specialised.typed_ir([F32, F32, T.INT64, I32]), "sm_100")


@needs_ptxas
@pytest.mark.parametrize("kernel, types", KERNELS, ids=lambda v: getattr(v, "__name__", ""))
def test_ptxas_assembles_the_ptx(kernel, types, tmp_path):
    ptx = _ptx(kernel, types)
    arch = re.search(r"\.target (\w+)", ptx).group(1)
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", f"-arch={arch}", "-v", str(path), "-o",
                           str(tmp_path / "k.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "setmaxnreg' ignored" not in done.stderr, done.stderr
