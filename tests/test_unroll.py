"""simt.unroll (#pragma unroll, docs/kernel-options.md): LLVM loop metadata on both
devices; a constant-trip loop's PTX has no backward branch, a factor unrolls that many
times, and every form computes what the rolled loop computes."""
import linecache
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from conftest import poison, random_array

TRIPS = 64                       # more than the GPU target unrolls on its own (32)
F32 = "void(float32[:], float32[:], float32[:])"


@simt.kernel
def rolled(x, w, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in range(TRIPS):
            acc = acc * np.float32(0.5) + x[i] * w[k] - w[(k * 7) % TRIPS]
        out[i] = acc


@simt.kernel
def unrolled(x, w, out):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in simt.unroll(range(TRIPS)):
            acc = acc * np.float32(0.5) + x[i] * w[k] - w[(k * 7) % TRIPS]
        out[i] = acc


@simt.kernel
def partial(x, w, out, n):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in simt.unroll(range(n), factor=4):
            acc = acc * np.float32(0.5) + x[i] * w[k]
        out[i] = acc


@simt.kernel
def never(x, w, out, n):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in simt.unroll(range(n - 1, -1, -1), 1):
            acc = acc * np.float32(0.5) + x[i] * w[k]
        out[i] = acc


@simt.kernel
def pragma_at_run_time(x, w, out, n):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in simt.unroll(range(n)):              # #pragma unroll, n not a constant
            acc = acc * np.float32(0.5) + x[i] * w[k]
        for k in simt.unroll(range(n - 1, -1, -2), 4):
            acc = acc * np.float32(0.5) + x[i] * w[k]
        out[i] = acc


@simt.kernel
def plain_at_run_time(x, w, out, n):
    i = simt.grid(1)
    if i < out.shape[0]:
        acc = np.float32(0)
        for k in range(n):
            acc = acc * np.float32(0.5) + x[i] * w[k]
        for k in simt.unroll(range(n - 1, -1, -2), 4):
            acc = acc * np.float32(0.5) + x[i] * w[k]
        out[i] = acc


@simt.device
def weighted(w, n):
    acc = np.float32(0)
    for k in simt.unroll(range(n)):
        acc = acc * np.float32(0.5) + w[k]
    return acc


@simt.kernel
def inlined_constant(w, out):
    out[simt.grid(1)] = weighted(w, 6)


@simt.kernel
def with_barrier(x, out):
    s = simt.shared.array(32, np.float32)
    t = simt.threadIdx.x
    acc = np.float32(0)
    for k in simt.unroll(range(5)):
        s[t] = x[t] * np.float32(k + 1)
        simt.syncthreads()
        acc += s[31 - t]
        simt.syncthreads()
    out[t] = acc


def backward_branches(ptx):
    """Branches to a label defined above them (loops)."""
    seen, found = set(), []
    for line in ptx.splitlines():
        label = re.match(r"^(\$L__BB\d+_\d+):", line)
        if label:
            seen.add(label.group(1))
        target = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if target and target.group(1) in seen:
            found.append(line.strip())
    return found


def reference(x, w, n=TRIPS, order=None, scramble=True):
    acc = np.zeros_like(x)
    for k in (order if order is not None else range(n)):
        extra = w[(k * 7) % TRIPS] if scramble else np.float32(0)
        acc = acc * np.float32(0.5) + x * w[k] - extra
    return acc


def test_constant_trip_loop_has_no_backward_branch_in_ptx():
    assert backward_branches(rolled.inspect_ptx(F32))       # LLVM keeps it a loop ...
    ptx = unrolled.inspect_ptx(F32)
    assert backward_branches(ptx) == []                     # ... and unrolls it when asked
    assert "llvm.loop.unroll.full" in unrolled.inspect_llvm(F32)
    barrier = with_barrier.inspect_ptx("void(float32[:], float32[:])")
    assert backward_branches(barrier) == [] and barrier.count("bar.sync") == 10


def test_factor_reaches_llvm_and_the_ptx():
    sig = "void(float32[:], float32[:], float32[:], int64)"
    assert re.search(r'!"llvm.loop.unroll.count", i32 4', partial.inspect_llvm(sig))
    ptx = partial.inspect_ptx(sig)
    assert len(backward_branches(ptx)) >= 1
    assert ptx.count("fma.rn.f32") >= 4 + 1               # 4 copies plus the remainder
    assert '.pragma "nounroll"' in never.inspect_ptx(sig)


def test_unrolled_loops_compute_the_same(device, rng):
    n = 300
    x, w = random_array(rng, n, np.float32), random_array(rng, TRIPS, np.float32)
    out = poison(n, np.float32)
    unrolled[(n + 127) // 128, 128](x, w, out)
    np.testing.assert_allclose(out, reference(x, w), rtol=2e-5, atol=1e-5)
    for trips in (0, 1, 7, 13):              # remainders of the factor-4 unroll
        out = poison(n, np.float32)
        partial[(n + 127) // 128, 128](x, w, out, trips)
        np.testing.assert_allclose(out, reference(x, w, trips, scramble=False), rtol=2e-5,
                                   atol=1e-5)
        out = poison(n, np.float32)
        never[(n + 127) // 128, 128](x, w, out, trips)
        np.testing.assert_allclose(out, reference(x, w, order=range(trips - 1, -1, -1),
                                                  scramble=False), rtol=2e-5, atol=1e-5)


def test_run_time_trip_count_without_a_factor(device, rng):
    """simt.unroll(range(n)) with n a kernel argument compiles to the plain loop, as
    nvcc's #pragma unroll does on such a loop (issue 33 item 8: it was a CompileError)."""
    n = 300
    x, w = random_array(rng, n, np.float32), random_array(rng, TRIPS, np.float32)
    for trips in (0, 1, 7, 13, TRIPS):
        out = poison(n, np.float32)
        pragma_at_run_time[(n + 127) // 128, 128](x, w, out, trips)
        order = list(range(trips)) + list(range(trips - 1, -1, -2))
        np.testing.assert_allclose(out, reference(x, w, order=order, scramble=False),
                                   rtol=2e-5, atol=1e-5)
    out = poison(32, np.float32)
    inlined_constant[1, 32](w, out)
    np.testing.assert_allclose(out, reference(np.ones(32, np.float32), w, 6, scramble=False),
                               rtol=2e-5)


def test_run_time_trip_count_without_a_factor_is_the_plain_loop(tmp_path):
    """Its LLVM IR and PTX are the plain loop's (no llvm.loop request, so LLVM has none to
    fail and warn about on stderr); ptxas takes the PTX; a device function's loop over a
    constant argument is unrolled fully once inlined."""
    sig = "void(float32[:], float32[:], float32[:], int64)"

    def loop_requests(kernel):
        return re.findall(r'!"llvm\.loop\.unroll[\w.]*"', kernel.inspect_llvm(sig))

    def instructions(kernel):
        ptx = kernel.inspect_ptx(sig).replace(kernel.__name__, "K")
        return [line for line in ptx.splitlines() if not line.strip().startswith(".loc")]

    assert loop_requests(pragma_at_run_time) == loop_requests(plain_at_run_time)
    assert instructions(pragma_at_run_time) == instructions(plain_at_run_time)
    assert backward_branches(inlined_constant.inspect_ptx("void(float32[:], float32[:])")) == []
    ptxas = shutil.which("ptxas")
    if ptxas is not None:
        path = tmp_path / "k.ptx"
        path.write_text(pragma_at_run_time.inspect_ptx(sig))
        done = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_unrolled_loop_with_a_barrier(device, rng):
    x = random_array(rng, 32, np.float32)
    out = poison(32, np.float32)
    with_barrier[1, 32](x, out)
    np.testing.assert_allclose(out, x[::-1] * np.float32(15), rtol=1e-6)


def kernel_with(line):
    """A kernel whose line 2 is ``for k in <line>:`` (its source kept for simt by linecache)."""
    source = f"def bad(x, n):\n    for k in {line}:\n        x[k] = k\n"
    filename = f"<unroll-test {line}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"simt": simt, "FACTOR": 2.5}
    exec(compile(source, filename, "exec"), scope)
    return simt.kernel(scope["bad"])


@pytest.mark.parametrize("loop, text", [
    ("simt.unroll(range(10000))", "would unroll 10000 trips fully; at most 4096"),
    ("simt.unroll(range(n), factor=FACTOR)", "must be None or an int known at compile time"),
    ("simt.unroll(range(n), factor=0)", "unroll factor 0: it must be 1 to 1024"),
    ("simt.unroll(n)", r"wraps a range\(...\) call"),
    ("simt.unroll(range(n), 2, 3)", "takes a range and an optional factor"),
])
def test_unroll_errors_name_the_line(loop, text):
    k = kernel_with(loop)
    with pytest.raises(simt.CompileError, match=text) as info:
        k.inspect_types("void(int64[:], int64)")
    assert ":2" in str(info.value)


def test_unroll_outside_a_for_loop():
    def bad(x):
        x[0] = simt.unroll(3)
    with pytest.raises(simt.CompileError, match="only valid as the iterable of a for loop"):
        simt.kernel(bad).inspect_types("void(int64[:])")
