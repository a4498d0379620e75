"""Dynamic parallelism (lang/launches.py, compiler/family.py, backends/*/devlaunch.py):
kernels launching kernels against NumPy, the device runtime's ordering rules, the
guide's examples, the errors, and the PTX the GPU back end makes."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler import pipeline
from simt.compiler.options import CompileOptions
from simt.errors import CompileError, LaunchError
from simt.examples import dynamic
from simt.ir import types as T
from conftest import poison, random_array


@simt.kernel
def scale_part(out, a, first, count, factor):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if i < count:
        out[first + i] = a[first + i] * factor


@simt.kernel
def split_scale(out, a, parts, factor):
    """Each thread launches a child grid for its part of the array."""
    t = simt.threadIdx.x
    count = a.shape[0] // parts
    if t < parts:
        scale_part[(count + 63) // 64, 64](out, a, t * count, count, factor)


def test_children_compute_the_parts(device, rng):
    a = simt.to_device(random_array(rng, 4096, np.float32))
    out = simt.to_device(poison(4096, np.float32))
    split_scale[1, 32](out, a, 8, np.float32(3))
    np.testing.assert_array_equal(out.copy_to_host(), a.copy_to_host() * np.float32(3))


@simt.kernel
def record(log, counter, tag):
    if simt.threadIdx.x == 0:
        log[simt.atomic.add(counter, 0, 1)] = tag


@simt.kernel
def ordered_children(log, counter, chain):
    """One thread per block launches a chain of children: each runs after the one before
    (the block's stream), and their own children finish before the next starts."""
    if simt.threadIdx.x == 0:
        for k in range(3):
            nested_then_record[1, 32](log, counter, simt.blockIdx.x * 100 + k * 10, chain)


@simt.kernel
def nested_then_record(log, counter, tag, chain):
    if simt.threadIdx.x == 0:
        record[1, 32](log, counter, tag + 1)
        if chain > 0:
            record[1, 1](log, counter, tag + 2)


def test_children_of_a_block_run_in_launch_order(device):
    log = simt.to_device(np.full(64, -1, np.int64))
    counter = simt.to_device(np.zeros(1, np.int32))
    ordered_children[2, 32](log, counter, 1)
    assert counter.copy_to_host()[0] == 12
    seen = log.copy_to_host()[:12]
    for block in (0, 1):
        mine = [int(v) for v in seen if v // 100 == block]
        assert mine == [block * 100 + k * 10 + j for k in range(3) for j in (1, 2)]


def test_recursive_quicksort(device, rng):
    values = random_array(rng, 3000, np.float32)
    np.testing.assert_array_equal(dynamic.sort(values), np.sort(values))


def test_quicksort_sorts_integers_with_repeats(device, rng):
    values = rng.integers(0, 50, 700).astype(np.int32)
    np.testing.assert_array_equal(dynamic.sort(values), np.sort(values))


def test_mariani_silver_matches_every_pixel(device):
    size = 32 if device.kind == "sim" else 256     # the sim device's Python: 1/64 the pixels
    dwells = dynamic.mandelbrot(size)
    expected = dynamic.reference(size)
    assert (dwells == dynamic.MAX_DWELL).sum() > size * size // 66   # the set is in the picture
    assert len(np.unique(dwells)) > 20
    assert (dwells != expected).mean() <= 1e-3


@simt.kernel
def runaway(out, depth):
    out[depth % 64] = depth
    runaway[1, 1](out, depth + 1)


def test_a_runaway_recursion_fails_the_launch(device):
    """Every level stays unfinished until the one below finishes, so the device runtime
    runs out of pending launches (the GPU's bound is its own; the CPU device's is the
    limit, 2048 by default)."""
    out = simt.to_device(np.zeros(64, np.int64))
    with pytest.raises(LaunchError, match=r"(?s)launch of kernel 'runaway' in kernel "
                       r"'runaway' failed: too many launches pending.*"
                       r"test_dynamic_parallelism.py:\d+\n\s+runaway\[1, 1\]"):
        runaway[1, 1](out, 0)
        simt.synchronize()
    assert out.copy_to_host().max() >= 24


def test_the_pending_launch_limit_is_the_devices(device):
    previous = simt.get_limit("dev_runtime_pending_launch_count")
    simt.set_limit("dev_runtime_pending_launch_count", 4096)
    try:
        assert simt.get_limit("dev_runtime_pending_launch_count") == 4096
    finally:
        simt.set_limit("dev_runtime_pending_launch_count", previous)


@simt.kernel
def bad_shape(out, threads):
    scale_part[1, threads](out, out, 0, 1, np.float32(1))


def test_a_bad_configuration_fails_the_launch_at_its_line(device):
    out = simt.to_device(np.ones(4, np.float32))
    with pytest.raises(LaunchError, match=r"(?s)launch of kernel 'scale_part' in kernel "
                                          r"'bad_shape' failed: invalid configuration"
                                          r".*block \(0, 0, 0\), thread \(0, 0, 0\)"):
        bad_shape[1, 1](out, 2048)
        simt.synchronize()


def _compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return str(info.value)


def test_shared_memory_cannot_be_passed():
    @simt.kernel
    def passes_shared(out):
        s = simt.shared.array(4, np.float32)
        scale_part[1, 4](s, s, 0, 4, np.float32(2))
    text = _compile_error(passes_shared, np.zeros(4, np.float32))
    assert "shared memory" in text and "global" in text


def test_a_stream_of_ones_own_inside_a_kernel_is_refused():
    @simt.kernel
    def with_stream(out):
        scale_part[1, 4, 0, 7](out, out, 0, 4, np.float32(2))
    text = _compile_error(with_stream, np.zeros(4, np.float32))
    assert "simt.stream_fire_and_forget, simt.stream_tail_launch, or None or 0" in text
    assert "not 7: device-side streams of one's own" in text


def test_wrong_argument_count_names_the_parameters():
    @simt.kernel
    def too_few(out):
        scale_part[1, 4](out, out, 0)
    text = _compile_error(too_few, np.zeros(4, np.float32))
    assert "takes 5 arguments (out, a, first, count, factor)" in text


def test_a_kernel_named_without_launch_is_refused():
    @simt.kernel
    def names_kernel(out):
        scale_part(out, out, 0, 4, np.float32(2))
    assert "without a launch" in _compile_error(names_kernel, np.zeros(4, np.float32))


def test_gpu_code_calls_the_device_runtime():
    """The PTX (made without a GPU) gets a parameter buffer for the child's entry, fills it
    and launches it; the child is an entry of the same module."""
    a = T.Array(np.float32, 1, "C", "global")
    fn = pipeline.typed_ir(split_scale.pyfunc, (a, a, T.INT64, T.FLOAT32))
    from simt.backends.cuda.compile import compile_kernel
    binary = compile_kernel(fn, CompileOptions())
    ptx = binary.ptx
    assert binary.device_launches
    assert ".entry simt_kernel_scale_part_1(" in ptx
    assert "call.uni (retval0), __cudaCDP2GetParameterBufferV2" in ptx
    assert "call.uni (retval0), __cudaCDP2LaunchDeviceV2" in ptx
    assert "mov.b64" in ptx and "simt_kernel_scale_part_1;" in ptx


def test_a_child_with_options_of_its_own_is_refused():
    @simt.kernel(fastmath=True)
    def fast_child(out):
        out[0] = 1.0

    @simt.kernel
    def plain_parent(out):
        fast_child[1, 1](out)
    text = _compile_error(plain_parent, np.zeros(4, np.float32))
    assert "declares the options {'fastmath': True}" in text and "none on 'fast_child'" in text


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
def test_ptxas_accepts_the_family_as_relocatable_code(tmp_path):
    """The module calls the device runtime, so it is compiled relocatable (-c) and linked
    with libcudadevrt at load; inspect_sass compiles it the same way."""
    a = T.Array(np.float32, 1, "C", "global")
    fn = pipeline.typed_ir(dynamic.quicksort.pyfunc, (a, T.INT64, T.INT64, T.INT64))
    from simt.backends.cuda.compile import compile_kernel
    path = tmp_path / "quicksort.ptx"
    path.write_text(compile_kernel(fn, CompileOptions()).ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", "-c", str(path), "-o",
                           str(tmp_path / "quicksort.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@simt.kernel
def poke(out, i):
    out[i] = 1


@simt.kernel
def two_pokes(out, at):
    if simt.threadIdx.x == 0:
        poke[1, 1](out, at[0])
        poke[1, 1](out, 0)


def test_failed_replays_of_a_graph_leave_no_launches_pending(device):
    """A graph replays one prepared launch: a child that fails (here out of bounds, which
    the CPU device checks) must not leave its launch, or its queued siblings', counted
    as pending in the replays after it."""
    if device.kind != "cpu":
        pytest.skip("the GPU does not check bounds; its device runtime counts launches")
    previous = simt.get_limit("dev_runtime_pending_launch_count")
    simt.set_limit("dev_runtime_pending_launch_count", 4)
    try:
        out, at = simt.zeros(4, np.int32), simt.to_device(np.array([100], np.int32))
        stream = simt.Stream()
        with stream.capture() as graph:
            two_pokes[1, 1, 0, stream](out, at)
        exe = graph.instantiate()
        for _ in range(3):
            with pytest.raises(LaunchError):
                exe.launch(stream)
                stream.synchronize()
        at.copy_from(np.array([2], np.int32))
        exe.launch(stream)
        stream.synchronize()
        np.testing.assert_array_equal(out.copy_to_host(), [1, 0, 1, 0])
    finally:
        simt.set_limit("dev_runtime_pending_launch_count", previous)


def test_cooperative_launches_of_launching_kernels_are_refused_on_the_cpu(device):
    if device.kind != "cpu":
        pytest.skip("the CPU device's rule")
    out, at = simt.zeros(4, np.int32), simt.to_device(np.array([1], np.int32))
    with pytest.raises(simt.NotSupportedError, match="launches kernels"):
        two_pokes.launch_cooperative(1, 1, (out, at))


# ---------------------------------------------------------------- the sim device's checks

@simt.kernel
def pair_sums(out, tmp, reach):
    i = simt.threadIdx.x
    out[i] = tmp[i] + tmp[i + reach]


@simt.kernel
def fill_then_launch(out, tmp, reach):
    """The parent writes tmp[:n], then its thread 0 launches a child reading it."""
    i = simt.threadIdx.x
    tmp[i] = i * 3 + 1
    simt.syncthreads()
    if i == 0:
        pair_sums[1, simt.blockDim.x - 1](out, tmp, reach)


def test_a_child_on_the_sim_device_sees_its_parents_writes_as_written():
    with simt.use_device("sim"):
        tmp = simt.device_array(64, np.int64)              # nothing written yet
        out = simt.to_device(poison(64, np.int64))
        fill_then_launch[1, 32](out, tmp, 1)
        values = np.arange(32) * 3 + 1
        np.testing.assert_array_equal(out.copy_to_host()[:31], values[:-1] + values[1:])


def test_a_child_on_the_sim_device_is_checked_at_its_line():
    """Reading past what the parent wrote is an uninitialized read in the child."""
    with simt.use_device("sim"):
        tmp = simt.device_array(64, np.int64)
        out = simt.to_device(poison(64, np.int64))
        with pytest.raises(simt.errors.UninitializedReadError,
                           match=r"(?s)kernel 'pair_sums': tmp\[(3[2-9]|[45][0-9]|6[0-2])\] "
                                 r"is read before.*"
                                 r"out\[i\] = tmp\[i\] \+ tmp\[i \+ reach\]"):
            fill_then_launch[1, 32](out, tmp, 32)
            simt.synchronize()
