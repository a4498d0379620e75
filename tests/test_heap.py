"""The device heap, limits, trap and local arrays (issue 15 item 10, guide B.30):
per-thread malloc'd arrays against NumPy, exhaustion, limits, bad frees and traps as
launch errors on the CPU device, and the PTX's malloc, free and trap."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import simt
from conftest import marked_line, poison, random_array


SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


@simt.kernel
def per_thread(counts, values, sums, sizes):
    """Each thread mallocs counts[i] floats, fills them from values, sums them after a
    barrier (the array outlives it) and frees them."""
    i = simt.grid(1)
    p = simt.malloc(counts[i], np.float64)
    sizes[i] = p.size
    for j in range(p.size):
        p[j] = values[i, j] * (j + 1)
    simt.syncthreads()
    total = 0.0
    for j in range(p.size):
        total += p[j]
    sums[i] = total
    simt.free(p)


def test_per_thread_arrays(device, rng):
    n = 48
    counts = rng.integers(1, 20, n).astype(np.int32)
    values = random_array(rng, (n, 20), np.float64)
    sums, sizes = poison(n, np.float64), poison(n, np.int64)
    per_thread[2, 24](counts, values, sums, sizes)
    np.testing.assert_array_equal(sizes, counts)
    want = [(values[i, :c] * np.arange(1, c + 1)).sum() for i, c in enumerate(counts)]
    np.testing.assert_allclose(sums, want, rtol=1e-12)


@simt.kernel
def grab(nbytes, got):
    """Each thread asks for nbytes; got[i] is 1 when it had them. Frees after a barrier,
    so that every thread asks while the others still hold theirs."""
    i = simt.grid(1)
    p = simt.malloc(nbytes, np.uint8)
    got[i] = p.size == nbytes
    if p.size > 0:
        p[0] = 1
        p[p.size - 1] = 2
    simt.syncthreads()
    simt.free(p)


def test_a_full_heap_gives_empty_arrays(device):
    limit = simt.get_limit("malloc_heap_size")
    got = poison(1, np.bool_)
    grab[1, 1](limit + 1, got)                     # more than the heap holds
    assert not got[0]
    got = poison(16, np.bool_)
    grab[1, 16](limit // 8, got)                   # 16 eighths: at most 8 fit
    assert 0 < got.sum() <= 8
    if device.kind == "cpu":
        from simt.backends.cpu import heap
        assert got.sum() == 8 and heap.get_heap().bytes_in_use() == 0   # all freed
    if device.kind == "sim":
        assert got.sum() == 8 and device.backend.device_heap().bytes_in_use() == 0


LIMITS_SCRIPT = """
import sys
import numpy as np
import simt
simt.set_device(sys.argv[1])
print(simt.get_limit("malloc_heap_size"))
simt.set_limit("malloc_heap_size", 1 << 16)
print(simt.get_limit("malloc_heap_size"))

@simt.kernel
def grab(got):
    i = simt.grid(1)
    p = simt.malloc(40000, np.uint8)
    got[i] = p.size
    simt.syncthreads()
    simt.free(p)

got = np.full(2, -1, np.int64)
grab[1, 2](got)
print(sorted(got.tolist()))
try:
    simt.set_limit("malloc_heap_size", 1 << 20)
    print("accepted")
except simt.CudaError as exc:
    print("refused:", exc)
for name in ("printf_fifo_size", "stack_size"):
    try:
        print(name, simt.get_limit(name))
    except simt.NotSupportedError as exc:
        print(exc)
try:
    simt.set_limit("heap", 1)
except ValueError as exc:
    print(exc)
"""


def _run_script(tmp_path, text, *args):
    """Run ``text`` as a script in a process of its own (a fresh device); its stdout lines."""
    script = tmp_path / "script.py"
    script.write_text(text)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=SRC), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_limits_in_a_fresh_process(device, tmp_path):
    """The heap's size is settable until a kernel mallocs, and bounds what malloc gives."""
    lines = _run_script(tmp_path, LIMITS_SCRIPT, device.name)
    if device.kind == "cuda":        # the driver rounds the heap up (4 MiB on an H100)
        assert int(lines[0]) > 0 and int(lines[1]) >= 1 << 16
        assert lines[2] == ("[0, 40000]" if int(lines[1]) < 80000 else "[40000, 40000]")
        assert lines[3].startswith(("refused:", "accepted"))
    else:
        assert lines[:3] == [str(8 << 20), str(1 << 16), "[0, 40000]"]
        assert lines[3].startswith("refused:")
    assert lines[6].startswith("unknown limit 'heap'; the limits are 'malloc_heap_size'")
    if device.kind == "cpu":
        assert "set_limit('malloc_heap_size') after a kernel called simt.malloc" in lines[3]
        assert "does not support the limit 'printf_fifo_size': its printf writes" in lines[4]
        assert lines[5] == f"stack_size {256 << 10}"     # host stack bytes (backends/cpu/stack.py)
    elif device.kind == "sim":
        assert "set_limit('malloc_heap_size') after a kernel called simt.malloc" in lines[3]
        assert "does not support the limit 'printf_fifo_size': its print writes" in lines[4]
        assert "does not support the limit 'stack_size'" in lines[5]
    else:
        assert lines[4].startswith("printf_fifo_size ") and int(lines[4].split()[1]) > 0
        assert lines[5].startswith("stack_size ")      # the driver's values (8650752 on an H100)


TRAP_SCRIPT = """
import sys
import numpy as np
import simt
simt.set_device(sys.argv[1])

@simt.kernel
def trapping(a):
    if simt.grid(1) == 40:
        simt.trap()
    a[simt.grid(1)] = 1.0

out = simt.to_device(np.zeros(64))
stream = simt.Stream()

def launch_again():
    trapping[2, 32](out)
    simt.synchronize()

def event():
    done = simt.Event()
    done.record(stream)
    done.synchronize()

wait = {"synchronize": simt.synchronize, "copy": out.copy_to_host, "stream": stream.synchronize,
        "launch": launch_again, "event": event}[sys.argv[2]]
try:
    trapping[2, 32, 0, stream](out)
    wait()
except simt.LaunchError as exc:
    print(type(exc).__name__, exc.line, exc.block, exc.thread)
try:
    simt.to_device(np.zeros(4))
    simt.synchronize()
    print("usable")
except simt.CudaError as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize("wait", ["synchronize", "copy", "stream", "event", "launch"])
def test_trap_in_a_fresh_process(device, tmp_path, wait):
    """On the CPU device a trap is a LaunchError and the device stays usable; on a GPU the
    same LaunchError, whichever call meets the trap first (issue 33 item 10: a stream's
    synchronize met it as ContextUnusableError), and the context is lost, as in CUDA."""
    lines = _run_script(tmp_path, TRAP_SCRIPT, device.name, wait)
    assert lines[0] == "LaunchError 10 (1, 0, 0) (8, 0, 0)"
    assert lines[1] == ("ContextUnusableError" if device.kind == "cuda" else "usable")


@simt.kernel
def free_a_view(out):
    p = simt.malloc(8, np.int32)
    p[0] = 3
    out[0] = p[0]
    simt.free(p[1:])


@simt.kernel
def trapping(a, out):
    i = simt.grid(1)
    out[i] = a[i]
    if a[i] < 0:
        simt.trap()                      # the trap
    out[i] = a[i] * 2


def _line_of(text):
    return next(n for n, line in enumerate(open(__file__).read().splitlines(), 1)
                if text in line)


def test_trap_and_bad_free_are_launch_errors_on_the_cpu(device, rng):
    if device.kind != "cpu":
        pytest.skip("on a GPU a trap leaves the context unusable, as in CUDA")
    a = rng.integers(1, 100, 64).astype(np.int32)
    a[37] = -5
    out = poison(64, np.int32)
    with pytest.raises(simt.LaunchError) as info:
        trapping[2, 32](a, out)
        simt.synchronize()
    text = str(info.value)
    assert "simt.trap() in kernel 'trapping' stopped the kernel" in text
    assert "block (1, 0, 0), thread (5, 0, 0)" in text
    line = _line_of("# the trap")
    assert info.value.line == line and f"test_heap.py:{line}" in text
    assert info.value.block == (1, 0, 0) and info.value.thread == (5, 0, 0)
    assert out[37] == -5                       # the trapping thread stopped at the trap
    from simt.backends.cpu import heap
    live = set(heap.get_heap().used)
    with pytest.raises(simt.LaunchError, match=r"simt.free in kernel 'free_a_view' of memory "
                                               r"simt.malloc did not hand out"):
        free_a_view[1, 1](poison(1, np.int32))
        simt.synchronize()
    for offset in set(heap.get_heap().used) - live:        # what the failed kernel held
        assert heap.get_heap().free(heap.get_heap().base + offset) == 0
    ok = poison(64, np.int32)                  # the device stays usable
    trapping[2, 32](np.abs(a), ok)
    np.testing.assert_array_equal(ok, np.abs(a) * 2)


N = 5
SHAPE = (2, 3)


@simt.kernel
def local_arrays(out):
    """Local arrays sized by compile-time constant expressions (alloca-like)."""
    a = simt.local.array(N * 2 + 1, np.float32)
    b = simt.local.array(SHAPE, np.int32)
    c = simt.local.array((N, N // 2), np.float64)
    d = simt.local.array(len(SHAPE) * 3, np.int64)
    i = simt.grid(1)
    for j in range(a.shape[0]):
        a[j] = i + j
    out[i, 0] = a.size + b.size + c.size + d.size
    out[i, 1] = a[N * 2] + c.shape[1]


def test_local_arrays_of_constant_expressions(device):
    out = poison((8, 2), np.float64)
    local_arrays[1, 8](out)
    np.testing.assert_array_equal(out[:, 0], 11 + 6 + 10 + 6)
    np.testing.assert_array_equal(out[:, 1], np.arange(8) + N * 2 + N // 2)


def test_ptx_calls_the_runtime_malloc_free_and_trap():
    text = per_thread.inspect_ptx("void(int32[::1], float64[:, ::1], float64[::1], int64[::1])")
    assert ".extern .func  (.param .b64 func_retval0) malloc" in text
    assert ".extern .func free" in text
    assert "call.uni (retval0), malloc" in text and "call.uni free" in text
    trap_ptx = trapping.inspect_ptx("void(int32[::1], int32[::1])")
    assert "trap;" in trap_ptx and "simt_error_record" in trap_ptx


# ---------------------------------------------------------------- on the sim device
@pytest.mark.parametrize("test", [test_per_thread_arrays, test_a_full_heap_gives_empty_arrays],
                         ids=lambda test: test.__name__[5:])
def test_sim(test, rng):
    """The device heap on the sim device: the cpu device's tests, against NumPy."""
    import inspect
    with simt.use_device("sim") as sim:
        test(sim, *([rng] if "rng" in inspect.signature(test).parameters else []))


@simt.kernel
def heap_misuse(out, how):
    p = simt.malloc(4, np.float32)
    p[0] = 1.0
    if how == 1:
        out[0] = p[1]                    # <- unwritten
    simt.free(p)
    if how == 2:
        out[0] = p[0]                    # <- after free
    if how == 3:
        simt.free(p)                     # <- twice
    if how == 4:
        q = simt.malloc(4, np.float32)   # the same block again: unwritten again
        out[0] = q[0]                    # <- reused
        simt.free(q)


def test_sim_checks_the_heap():
    """On the sim device a malloc'd element starts unwritten (also when the block comes
    back from a free), an access after the free is a use after free, and freeing twice or
    a view is the cpu device's LaunchError; the device stays usable."""
    line = lambda marker: f"test_heap.py:{marked_line(__file__, marker)}"  # noqa: E731
    with simt.use_device("sim") as sim:
        out = poison(1, np.float32)
        cases = [(1, simt.UninitializedReadError, "unwritten", "is read before anything wrote"),
                 (2, simt.IllegalAddressError, "after free", "Use after free"),
                 (3, simt.LaunchError, "twice", "of memory simt.malloc did not hand out"),
                 (4, simt.UninitializedReadError, "reused", "is read before anything wrote")]
        for how, error, marker, text in cases:
            with pytest.raises(error) as info:
                heap_misuse[1, 1](out, how)
                simt.synchronize()
            assert text in str(info.value) and line(marker) in str(info.value), how
        with pytest.raises(simt.LaunchError, match=r"simt.free in kernel 'free_a_view' of "
                                                   r"memory simt.malloc did not hand out"):
            free_a_view[1, 1](poison(1, np.int32))
            simt.synchronize()
        used = sim.backend.device_heap().bytes_in_use()
        heap_misuse[1, 1](out, 0)            # frees what it takes
        assert out[0] != out[0] or out[0] == 1.0
        assert sim.backend.device_heap().bytes_in_use() == used
