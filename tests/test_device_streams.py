"""The device runtime's named streams for launches inside kernels (CUDA 12):
simt.stream_fire_and_forget and simt.stream_tail_launch (lang/launches.py,
backends/devqueue.py, backends/*/devlaunch.py): their orderings against NumPy on every
device, the errors, and the stream values the GPU back end passes to the device runtime."""
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.compiler import pipeline
from simt.compiler.options import CompileOptions
from simt.errors import CompileError, InvalidConfiguration
from simt.ir import types as T
from conftest import poison

PARTS, COUNT = 4, 96


@simt.kernel
def square_part(tmp, a, first, count):
    i = simt.blockIdx.x * simt.blockDim.x + simt.threadIdx.x
    if i < count:
        tmp[first + i] = a[first + i] * a[first + i]


@simt.kernel
def sum_part(out, tmp, part, first, count):
    """One thread sums a part that another block's fire-and-forget child wrote."""
    if simt.threadIdx.x == 0:
        total = tmp[first] - tmp[first]
        for i in range(count):
            total += tmp[first + i]
        out[part] = total


@simt.kernel
def squares_then_sums(out, tmp, a, count):
    """Block b squares part b fire-and-forget, then tail-launches the sum of part b + 1:
    the tail launch waits for every block's fire-and-forget child, not just its own."""
    b = simt.blockIdx.x
    if simt.threadIdx.x == 0:
        square_part[(count + 31) // 32, 32, 0, simt.stream_fire_and_forget](
            tmp, a, b * count, count)
        other = (b + 1) % simt.gridDim.x
        sum_part[1, 32, 0, simt.stream_tail_launch](out, tmp, b, other * count, count)


def test_a_tail_launch_consumes_what_fire_and_forget_children_wrote(device, rng):
    values = rng.integers(-1000, 1000, PARTS * COUNT).astype(np.int64)
    a = simt.to_device(values)
    tmp = simt.to_device(poison(PARTS * COUNT, np.int64))
    out = simt.to_device(poison(PARTS, np.int64))
    squares_then_sums[PARTS, 32](out, tmp, a, COUNT)
    simt.synchronize()
    squares = values * values
    np.testing.assert_array_equal(tmp.copy_to_host(), squares)
    expected = squares.reshape(PARTS, COUNT).sum(axis=1)
    np.testing.assert_array_equal(out.copy_to_host(), np.roll(expected, -1))


@simt.kernel
def record(log, counter, tag):
    if simt.threadIdx.x == 0:
        log[simt.atomic.add(counter, 0, 1)] = tag


@simt.kernel
def tail_step(log, counter, tag):
    """Records tag, then tag + 1 in a block-stream child and tag + 2 in a tail launch
    made before it: the tail launch runs last all the same."""
    if simt.threadIdx.x == 0:
        log[simt.atomic.add(counter, 0, 1)] = tag
        record[1, 32, 0, simt.stream_tail_launch](log, counter, tag + 2)
        record[1, 32](log, counter, tag + 1)


@simt.kernel
def tails_among_others(log, counter):
    if simt.threadIdx.x == 0:
        tail_step[1, 32, 0, simt.stream_tail_launch](log, counter, 10)
        record[1, 32, 0, simt.stream_fire_and_forget](log, counter, 1)
        tail_step[1, 32, 0, simt.stream_tail_launch](log, counter, 20)
        record[1, 32, 0, None](log, counter, 2)
        tail_step[1, 32, 0, simt.stream_tail_launch](log, counter, 30)


def test_tail_launches_run_in_order_after_everything_else(device):
    """Each tail launch starts after the grid's other launches and the tail launch before
    it, with all its descendants (its own tail launch included)."""
    log = simt.to_device(np.full(16, -1, np.int64))
    counter = simt.to_device(np.zeros(1, np.int32))
    tails_among_others[1, 32](log, counter)
    simt.synchronize()
    assert counter.copy_to_host()[0] == 11
    seen = [int(v) for v in log.copy_to_host()[:11]]
    assert sorted(seen[:2]) == [1, 2]
    assert seen[2:] == [10, 11, 12, 20, 21, 22, 30, 31, 32]


@simt.kernel
def tail_of_every_block(log, counter):
    record[1, 1, 0, simt.stream_tail_launch](log, counter, 100 + simt.blockIdx.x)
    record[1, 1, 0, simt.stream_fire_and_forget](log, counter, simt.blockIdx.x)


def test_every_threads_tail_launch_waits_for_the_whole_grid(device):
    log = simt.to_device(np.full(64, -1, np.int64))
    counter = simt.to_device(np.zeros(1, np.int32))
    tail_of_every_block[3, 8](log, counter)
    simt.synchronize()
    seen = [int(v) for v in log.copy_to_host()]
    assert counter.copy_to_host()[0] == 48
    assert sorted(seen[:24]) == sorted([b for b in range(3) for _ in range(8)])
    assert sorted(seen[24:48]) == sorted([100 + b for b in range(3) for _ in range(8)])


def test_a_named_stream_on_the_host_is_refused(device):
    out = simt.zeros(4, np.int32)
    with pytest.raises(InvalidConfiguration, match=r"launching 'record': "
                       r"simt.stream_tail_launch \(cudaStreamTailLaunch\) is a stream of the "
                       r"device runtime: it names a stream only for a launch inside a kernel"):
        record[1, 1, 0, simt.stream_tail_launch](out, out, 1)
    with pytest.raises(InvalidConfiguration, match="simt.stream_fire_and_forget"):
        record.configure(1, 1, stream=simt.stream_fire_and_forget)(out, out, 1)
    with pytest.raises(InvalidConfiguration, match="a copy: simt.stream_tail_launch"):
        out.copy_to_host(stream=simt.stream_tail_launch)
    with pytest.raises(InvalidConfiguration, match="Stream.from_handle"):
        simt.Stream.from_handle(simt.stream_fire_and_forget)


def _compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return str(info.value)


def test_a_stream_computed_at_run_time_is_refused():
    @simt.kernel
    def run_time_stream(log, counter):
        record[1, 1, 0, counter[0]](log, counter, 1)
    text = _compile_error(run_time_stream, np.zeros(4, np.int64), np.zeros(1, np.int32))
    assert "not a run-time int32" in text and "simt.stream_tail_launch" in text


def test_a_cluster_item_inside_a_kernel_is_refused():
    @simt.kernel
    def five_items(log, counter):
        record[1, 1, 0, None, (2, 1, 1)](log, counter, 1)
    text = _compile_error(five_items, np.zeros(4, np.int64), np.zeros(1, np.int32))
    assert "got 5 items in the brackets" in text


def _family_ptx():
    log, counter = T.Array(np.int64, 1, "C", "global"), T.Array(np.int32, 1, "C", "global")
    fn = pipeline.typed_ir(tails_among_others.pyfunc, (log, counter))
    from simt.backends.cuda.compile import compile_kernel
    return compile_kernel(fn, CompileOptions()).ptx


def test_gpu_code_passes_the_device_runtimes_stream_values():
    """cudaStreamTailLaunch is (cudaStream_t)0x3 and cudaStreamFireAndForget 0x4
    (cuda_device_runtime_api.h); the block's stream is 0."""
    lines = _family_ptx().splitlines()
    streams = [lines[i - 1].split(",")[-1].strip(" ;") for i, line in enumerate(lines)
               if "call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1)" in line]
    assert all("[param1]" in lines[i - 1] for i, line in enumerate(lines)
               if "__cudaCDP2LaunchDeviceV2, (" in line)
    # the parent's five launches in order, then tail_step's tail launch and block child
    assert streams == ["3", "4", "3", "0", "3", "3", "0"]


@pytest.mark.skipif(shutil.which("ptxas") is None or shutil.which("nvlink") is None,
                    reason="needs CUDA's ptxas and nvlink")
def test_ptxas_and_nvlink_take_the_named_stream_launches(tmp_path):
    from simt.backends.cuda.link import find_devrt
    library = find_devrt()
    if library is None:
        pytest.skip("needs libcudadevrt.a")
    (tmp_path / "tails.ptx").write_text(_family_ptx())
    for command in (["ptxas", "-arch=sm_90", "-c", "tails.ptx", "-o", "tails.o"],
                    ["nvlink", "-arch=sm_90", "tails.o", str(library), "-o", "tails.cubin"]):
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
