"""Standalone check of simt's CUDA driver layer on a real GPU (not a pytest file).

Run on a GPU machine:  PYTHONPATH=src python3 tests/gpu_driver_check.py
It runs hand-written PTX kernels through simt.backends.cuda, checks results against
NumPy, checks the error paths (the sticky ones in subprocesses, since they kill the
context), and prints a launch-overhead table. Exit status 1 if any check failed.
"""

import ctypes
import datetime
import subprocess
import sys
import threading
import time
import traceback

import numpy as np

from simt.backends.cuda import driver
from simt.backends.cuda.device import CudaBackend, device_count, device_properties
from simt.backends.cuda.launch import Launcher, launch, launch_cooperative
from simt.backends.cuda.module import Module, find_libdevice
from simt import errors

HEADER = ".version {version}\n.target {target}\n.address_size 64\n"

SAXPY = """
.visible .global .align 4 .u32 gcount;
.visible .const .align 4 .f32 cscale;

.visible .entry saxpy(.param .u64 out, .param .u64 x, .param .u64 y,
                      .param .f32 a, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<11>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [x];
    ld.param.u64 %rd3, [y];
    ld.param.f32 %f1, [a];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd5, %rd7;
    ld.global.f32 %f2, [%rd8];
    add.s64 %rd9, %rd6, %rd7;
    ld.global.f32 %f3, [%rd9];
    fma.rn.f32 %f4, %f1, %f2, %f3;
    add.s64 %rd10, %rd4, %rd7;
    st.global.f32 [%rd10], %f4;
DONE:
    ret;
}

.visible .entry scale(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<7>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.const.f32 %f2, [cscale];
    mul.rn.f32 %f3, %f1, %f2;
    st.global.f32 [%rd4], %f3;
    atom.global.add.u32 %r6, [gcount], 1;
DONE:
    ret;
}

.extern .shared .align 16 .b8 dyn[];

.visible .entry shared_rev(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, dyn;
    shl.b32 %r4, %r2, 2;
    add.s32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r2;
    bar.sync 0;
    sub.s32 %r6, %r1, 1;
    sub.s32 %r6, %r6, %r2;
    shl.b32 %r6, %r6, 2;
    add.s32 %r6, %r3, %r6;
    ld.shared.u32 %r7, [%r6];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
    ret;
}

.visible .entry bad_store(.param .u64 p, .param .u32 offset)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [offset];
    cvt.u64.u32 %rd2, %r1;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""

F32, U32, PTR = ctypes.c_float, ctypes.c_uint32, ctypes.c_void_p
results = []


def check(name):
    """Decorator: run a check, record pass/fail with the traceback."""
    def wrap(fn):
        def run(*args):
            try:
                fn(*args)
                results.append((name, "ok", ""))
            except Exception:
                results.append((name, "FAIL", traceback.format_exc()))
            print(f"[{results[-1][1]}] {name}", flush=True)
        return run
    return wrap


def expect(exc_type, fn, *args):
    """Call fn and return the exception of exc_type it must raise."""
    try:
        fn(*args)
    except exc_type as exc:
        return exc
    raise AssertionError(f"{fn} did not raise {exc_type.__name__}")


def to_device(backend, host):
    alloc = backend.alloc(host.nbytes)
    backend.copy_htod(alloc.ptr, host)
    return alloc


def from_device(backend, ptr, like):
    out = np.empty_like(like)
    backend.copy_dtoh(out, ptr)
    return out


def ptx_versions():
    """Which .version/.target pairs the driver's JIT accepts, and the module to use."""
    accepted, chosen = [], None
    for version in ("7.8", "8.0", "8.3", "8.5", "8.7", "8.8", "9.0", "9.1"):
        for target in ("sm_90", "sm_90a"):
            try:
                mod = Module(HEADER.format(version=version, target=target) + SAXPY)
                accepted.append(f"{version}/{target}")
                if version == "8.0" and target == "sm_90":
                    chosen = mod
            except errors.CudaError as exc:
                print(f"  PTX {version} {target} refused: {str(exc).splitlines()[0]}")
    print("PTX accepted:", ", ".join(accepted))
    return chosen


@check("properties")
def check_properties(backend):
    props = device_properties(0)
    for key, value in props.items():
        print(f"  {key}: {value}")
    assert props["warp_size"] == 32 and len(props["max_grid_dim"]) == 3
    try:
        wrapped = backend.properties()
        print("  DeviceProperties:", type(wrapped).__name__, getattr(wrapped, "name", "?"))
    except Exception as exc:   # simt.runtime.devices is someone else's, maybe unfinished
        print("  DeviceProperties wrapping failed:", repr(exc))


@check("saxpy + resources + globals")
def check_saxpy(backend, mod):
    n = 1_000_003
    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dx, dy, dout = to_device(backend, x), to_device(backend, y), backend.alloc(4 * n)
    backend.memset(dout.ptr, 0xFF, 4 * n)
    saxpy = mod.get_function("saxpy")
    launch(saxpy, ((n + 255) // 256, 1, 1), (256, 1, 1), (dout.ptr, dx.ptr, dy.ptr, 2.5, n),
           [PTR, PTR, PTR, F32, U32], backend=backend)
    backend.synchronize()
    np.testing.assert_allclose(from_device(backend, dout.ptr, x), 2.5 * x + y, rtol=1e-6)
    print("  resources:", saxpy.resources())
    cptr, csize = mod.get_global("cscale")
    gptr, gsize = mod.get_global("gcount")
    assert csize == 4 and gsize == 4
    backend.copy_htod(cptr, np.array([3.0], np.float32))
    backend.memset(gptr, 0, 4)
    launch(mod.get_function("scale"), ((n + 255) // 256, 1, 1), (256, 1, 1), (dout.ptr, n),
           [PTR, U32], backend=backend)
    backend.synchronize()
    np.testing.assert_allclose(from_device(backend, dout.ptr, x), 3 * (2.5 * x + y), rtol=1e-6)
    assert from_device(backend, gptr, np.zeros(1, np.uint32))[0] == n


@check("dynamic shared memory > 48 KB (opt-in)")
def check_shared(backend, mod):
    fn = mod.get_function("shared_rev")
    n, shared = 1024, 100 * 1024
    out = backend.alloc(4 * n)
    launcher = Launcher(fn, [PTR, U32], backend)
    exc = expect(errors.InvalidConfiguration, launcher, (1, 1, 1), (n, 1, 1), (out.ptr, n), shared)
    print("  without opt-in:", str(exc).splitlines()[0])
    fn.ensure_dynamic_shared(shared)
    launcher((1, 1, 1), (n, 1, 1), (out.ptr, n), shared)
    backend.synchronize()
    got = from_device(backend, out.ptr, np.zeros(n, np.uint32))
    assert (got == np.arange(n)[::-1]).all()


@check("invalid configuration (block too large)")
def check_bad_config(backend, mod):
    out = backend.alloc(16)
    exc = expect(errors.InvalidConfiguration, launch, mod.get_function("scale"), (1, 1, 1),
                 (4096, 1, 1), (out.ptr, 1), [PTR, U32])
    print("  ", str(exc).splitlines()[0])


@check("cooperative launch")
def check_cooperative(backend, mod):
    n = 4096
    x = np.arange(n, dtype=np.float32)
    dx, dout = to_device(backend, x), backend.alloc(4 * n)
    launch_cooperative(mod.get_function("saxpy"), (16, 1, 1), (256, 1, 1),
                       (dout.ptr, dx.ptr, dx.ptr, 1.0, n), [PTR, PTR, PTR, F32, U32])
    backend.synchronize()
    np.testing.assert_array_equal(from_device(backend, dout.ptr, x), 2 * x)


@check("launch from a new host thread (context made current)")
def check_thread(backend, mod):
    n = 1000
    x = np.ones(n, np.float32)
    dx, dout = to_device(backend, x), backend.alloc(4 * n)
    launcher = Launcher(mod.get_function("saxpy"), [PTR, PTR, PTR, F32, U32], backend)
    failures = []

    def body():
        try:
            launcher((4, 1, 1), (256, 1, 1), (dout.ptr, dx.ptr, dx.ptr, 2.0, n))
            backend.synchronize()
        except Exception as exc:
            failures.append(exc)
    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert not failures, failures
    np.testing.assert_array_equal(from_device(backend, dout.ptr, x), 3 * x)


@check("out of memory")
def check_oom(backend):
    free, total = backend.mem_get_info()
    print(f"  mem_get_info: free {free}, total {total}")
    exc = expect(errors.OutOfMemoryError, backend.alloc, 1 << 50)
    print("  ", exc)
    exc = expect(errors.OutOfMemoryError, backend.alloc_managed, 2 * total)
    print("  ", exc)


@check("pinned, mapped and managed memory; async copies")
def check_host_memory(backend, mod):
    n = 1 << 16
    pinned = backend.alloc_pinned(4 * n).view(np.float32)
    pinned[:] = np.arange(n)
    stream = backend.create_stream(non_blocking=True, priority=-1)
    dev = backend.alloc(4 * n)
    backend.copy_htod(dev.ptr, pinned, stream)
    back = backend.alloc_pinned(4 * n).view(np.float32)
    backend.copy_dtoh(back, dev.ptr, stream)
    stream.synchronize()
    np.testing.assert_array_equal(back, pinned)
    mapped, mapped_ptr = backend.alloc_mapped(4 * n)
    mapped = mapped.view(np.float32)
    mapped[:] = -1
    saxpy = Launcher(mod.get_function("saxpy"), [PTR, PTR, PTR, F32, U32], backend)
    saxpy((n // 256, 1, 1), (256, 1, 1), (mapped_ptr, dev.ptr, dev.ptr, 1.0, n))
    backend.synchronize()
    np.testing.assert_array_equal(mapped, 2 * pinned)
    managed = backend.alloc_managed(4 * n)
    saxpy((n // 256, 1, 1), (256, 1, 1), (managed.ptr, dev.ptr, dev.ptr, 2.0, n))
    backend.synchronize()
    view = np.ctypeslib.as_array((ctypes.c_float * n).from_address(managed.ptr))
    np.testing.assert_array_equal(view, 3 * pinned)
    backend.copy_dtod(dev.ptr, managed.ptr, 4 * n)
    np.testing.assert_array_equal(from_device(backend, dev.ptr, pinned), 3 * pinned)


@check("streams, events, host functions")
def check_streams(backend, mod):
    s1 = backend.create_stream(non_blocking=True)
    s2 = backend.create_stream(priority=-1)
    start, stop = backend.create_event(), backend.create_event()
    dout = backend.alloc(4 * 256)
    empty = Launcher(mod.get_function("scale"), [PTR, U32], backend)
    start.record(s1)
    for _ in range(1000):
        empty((1, 1, 1), (32, 1, 1), (dout.ptr, 0), 0, s1.handle)
    stop.record(s1)
    seen = []
    s1.launch_host_func(seen.append, "ran")
    s2.wait_event(stop)
    s2.launch_host_func(seen.append, "after")
    s2.synchronize()
    s1.synchronize()
    assert stop.query() and s1.query()
    stop.synchronize()
    ms = start.elapsed_time(stop)
    print(f"  1000 launches on a stream: {ms:.3f} ms between events; host funcs: {seen}")
    assert ms > 0 and sorted(seen) == ["after", "ran"]
    s1.launch_host_func(lambda: 1 / 0)
    expect(ZeroDivisionError, s1.synchronize)


@check("JIT error log")
def check_jit_error(backend):
    bad = HEADER.format(version="8.0", target="sm_90") + ".visible .entry k() { bogus; }"
    exc = expect(errors.CudaError, Module, bad)
    print("  ", str(exc).replace("\n", " | ")[:300])
    assert "bogus" in str(exc) or "syntax" in str(exc).lower()


def empty_ptx(nargs):
    """PTX of an empty kernel taking nargs parameters (even: pointer, odd: s32)."""
    params = ", ".join(f".param .{'u64' if i % 2 == 0 else 's32'} p{i}" for i in range(nargs))
    return f".visible .entry empty{nargs}({params})\n{{\n    ret;\n}}\n"


def empty_cuda_c(nargs):
    params = ", ".join(f"float* p{i}" if i % 2 == 0 else f"int p{i}" for i in range(nargs))
    return f'extern "C" __global__ void empty{nargs}({params}) {{}}\n'


def timed(launch_once, sync, count=10_000):
    """Microseconds per launch: count launches, then one synchronize."""
    for _ in range(200):
        launch_once()
    sync()
    start = time.perf_counter()
    for _ in range(count):
        launch_once()
    sync()
    return (time.perf_counter() - start) / count * 1e6


def bench_simt(backend, fn, kinds, values):
    launcher = Launcher(fn, kinds, backend)
    one = (1, 1, 1)
    return timed(lambda: launcher.launch(one, one, values), backend.synchronize)


def bench_simt_call(backend, fn, kinds, values):
    launcher = Launcher(fn, kinds, backend)
    one = (1, 1, 1)
    return timed(lambda: launcher(one, one, values), backend.synchronize)


def bench_raw(backend, fn, kinds, values):
    """The simplest raw call: kernelParams as a (values, types) tuple built per launch."""
    cu = driver.api()
    types = tuple(None if k is PTR else k for k in kinds)
    handles = [cu.CUdeviceptr(v) if k is PTR else v for k, v in zip(kinds, values)]

    def once():
        cu.cuLaunchKernel(fn.handle, 1, 1, 1, 1, 1, 1, 0, 0, (tuple(handles), types), 0)
    return timed(once, backend.synchronize)


def bench_raw_address(backend, fn, kinds, values):
    """Floor: cuLaunchKernel given a prebuilt kernelParams address, no packing at all."""
    cu = driver.api()
    launcher = Launcher(fn, kinds, backend)
    launcher.pack(launcher.storage, 0, *values)
    handle, params, go = fn.handle, launcher.params, cu.cuLaunchKernel
    return timed(lambda: go(handle, 1, 1, 1, 1, 1, 1, 0, None, params, 0),
                 backend.synchronize)


def bench_ctypes(backend, fn, kinds, values):
    """For comparison: libcuda's cuLaunchKernel called through ctypes, bypassing the bindings."""
    lib = ctypes.CDLL("libcuda.so.1")
    go = lib.cuLaunchKernel
    go.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    go.restype = ctypes.c_int
    launcher = Launcher(fn, kinds, backend)
    pack, storage, params, handle = launcher.pack, launcher.storage, launcher.params, int(fn.handle)

    def once():
        pack(storage, 0, *values)
        go(handle, 1, 1, 1, 1, 1, 1, 0, None, params, None)
    return timed(once, backend.synchronize)


def bench_cuda_core(nargs, values):
    try:
        try:
            import cuda.core as cc
            cc.Device
        except (ImportError, AttributeError):
            import cuda.core.experimental as cc
        dev = cc.Device(0)
        dev.set_current()
        stream = dev.create_stream()
        code = HEADER.format(version="8.0", target="sm_90") + empty_ptx(nargs)
        kernel = cc.Program(code, code_type="ptx").compile("cubin").get_kernel(f"empty{nargs}")
        config = cc.LaunchConfig(grid=1, block=1)
        args = [np.uint64(v) if i % 2 == 0 else np.int32(v) for i, v in enumerate(values)]
        label = f"cuda.core {getattr(cc, '__version__', '')}".strip()
        return label, timed(lambda: cc.launch(stream, config, kernel, *args), stream.sync)
    except Exception as exc:
        return "cuda.core", f"n/a ({type(exc).__name__}: {str(exc)[:80]})"


def bench_cupy(nargs, dbuf):
    try:
        import cupy as cp
        kernel = cp.RawKernel(empty_cuda_c(nargs), f"empty{nargs}")
        args = tuple(dbuf if i % 2 == 0 else np.int32(i) for i in range(nargs))
        sync = cp.cuda.Device().synchronize
        return f"CuPy {cp.__version__}", timed(lambda: kernel((1,), (1,), args), sync)
    except Exception as exc:
        return "CuPy", f"n/a ({type(exc).__name__}: {str(exc)[:80]})"


ROUNDS = 5


def _median(samples):
    numbers = sorted(v for v in samples if isinstance(v, float))
    return numbers[len(numbers) // 2] if numbers else samples[0]


def launch_table(backend):
    """Print microseconds per launch for each path and argument count."""
    import cupy as cp
    dbuf = cp.zeros(16, cp.float32)
    rows = {}
    for nargs in (1, 5, 26) * ROUNDS:
        mod = Module(HEADER.format(version="8.0", target="sm_90") + empty_ptx(nargs), backend)
        fn = mod.get_function(f"empty{nargs}")
        kinds = [PTR if i % 2 == 0 else ctypes.c_int32 for i in range(nargs)]
        values = tuple(dbuf.data.ptr if i % 2 == 0 else i for i in range(nargs))
        rows.setdefault("simt Launcher.launch (pack_into + int kernelParams)", []).append(
            bench_simt(backend, fn, kinds, values))
        rows.setdefault("simt Launcher() (__call__, one frame more)", []).append(
            bench_simt_call(backend, fn, kinds, values))
        rows.setdefault("raw cuLaunchKernel, prebuilt int kernelParams", []).append(
            bench_raw_address(backend, fn, kinds, values))
        rows.setdefault("raw cuLaunchKernel, (values, types) tuple", []).append(
            bench_raw(backend, fn, kinds, values))
        rows.setdefault("ctypes libcuda cuLaunchKernel + pack_into", []).append(
            bench_ctypes(backend, fn, kinds, values))
        label, value = bench_cuda_core(nargs, values)
        rows.setdefault(label, []).append(value)
        backend.make_current(force=True)
        label, value = bench_cupy(nargs, dbuf)
        rows.setdefault(label, []).append(value)
        backend.make_current(force=True)
    print(f"\nLaunch overhead, µs per launch (10,000 one-block empty launches, then sync; "
          f"median of {ROUNDS} interleaved rounds)")
    print(f"device: {device_properties(0)['name']}, {datetime.date.today()}")
    print(f"{'path':52s} {'1 arg':>10s} {'5 args':>10s} {'26 args':>10s}")
    for label, values in rows.items():
        values = [_median(values[i::3]) for i in range(3)]
        cells = [f"{v:10.2f}" if isinstance(v, float) else f" {v}" for v in values]
        print(f"{label:52s} {' '.join(cells)}")


def sticky_child(mode):
    """In a subprocess: fault a kernel, expect the mapped error, then ContextUnusableError."""
    backend = CudaBackend(0)
    mod = Module(HEADER.format(version="8.0", target="sm_90") + SAXPY, backend)
    bad = mod.get_function("bad_store")
    buf = backend.alloc(64)
    ptr, offset, expected = {
        "illegal": (0, 0, errors.IllegalAddressError),
        "misaligned": (buf.ptr, 1, errors.MisalignedAddressError),
    }[mode]
    launch(bad, (1, 1, 1), (1, 1, 1), (ptr, offset), [PTR, U32], backend=backend)
    exc = expect(expected, backend.synchronize)
    print(f"  {type(exc).__name__}: {exc}")
    later = expect(errors.ContextUnusableError, backend.alloc, 16)
    print(f"  then: {type(later).__name__}: {later}")
    later = expect(errors.ContextUnusableError, launch, bad, (1, 1, 1), (1, 1, 1),
                   (ptr, offset), [PTR, U32])
    print(f"  launch: {later}")
    print("STICKY-OK")


@check("sticky errors in subprocesses")
def check_sticky():
    for mode in ("illegal", "misaligned"):
        proc = subprocess.run([sys.executable, __file__, "--sticky", mode],
                              capture_output=True, text=True, timeout=120)
        print(proc.stdout + proc.stderr)
        assert "STICKY-OK" in proc.stdout, mode


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--sticky":
        sticky_child(sys.argv[2])
        return
    print("cuda devices:", device_count())
    print("libdevice:", find_libdevice())
    backend = CudaBackend(0)
    mod = ptx_versions()
    mod.backend = backend
    check_properties(backend)
    check_saxpy(backend, mod)
    check_shared(backend, mod)
    check_bad_config(backend, mod)
    check_cooperative(backend, mod)
    check_thread(backend, mod)
    check_oom(backend)
    check_host_memory(backend, mod)
    check_streams(backend, mod)
    check_jit_error(backend)
    try:
        launch_table(backend)
    except Exception:
        traceback.print_exc()
    check_sticky()
    failed = [r for r in results if r[1] != "ok"]
    for name, _, tb in failed:
        print(f"\nFAILED {name}:\n{tb}")
    print(f"\n{len(results) - len(failed)} of {len(results)} checks passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
