"""The launch path: later launches of a signature take a prepared path (runtime/launch.py,
runtime/binder.py around backends/*/native_launch). These check that it packs every kind
of argument as the full path does, and that a change of array layout, scalar type or
device is noticed."""

import numpy as np
import pytest

import simt
from conftest import poison, random_array


@simt.kernel
def mix(out, a, f, u, flag, h, z):
    i = simt.grid(1)
    if i < out.shape[0]:
        v = a[i] * f + u
        if flag:
            v = v + h
        out[i] = v + z.real - z.imag


def reference(a, f, u, flag, h, z):
    v = a * f + u
    if flag:
        v = v + h
    return v + z.real - z.imag


def test_repeated_launches_pack_every_argument(device, rng):
    n = 300
    for trial in range(4):                     # first: full path; then: the prepared one
        a = simt.to_device(random_array(rng, n, np.float64))
        out = simt.to_device(poison(n, np.float64))
        args = (np.float32(1.5 + trial), np.uint32(7 + trial), trial % 2 == 1,
                np.float16(0.25 * trial), complex(trial, 0.5))
        mix[(n + 63) // 64, 64](out, a, *args)
        expected = reference(a.copy_to_host(), *[np.float64(np.real(x)) if not
                                                 isinstance(x, complex) else x for x in args])
        np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-12)


def test_layout_change_is_noticed(device, rng):
    n = 256
    base = random_array(rng, 2 * n, np.float64)
    d = simt.to_device(base)
    for view, host in ((d[:n], base[:n]), (d[::2], base[::2]), (d[n:], base[n:]),
                       (d[1::2], base[1::2])):
        out = simt.to_device(poison(n, np.float64))
        mix[4, 64](out, view, 2.0, np.uint32(1), False, np.float16(0), 0j)
        np.testing.assert_allclose(out.copy_to_host(), host * 2.0 + 1)


def test_scalar_type_change_is_noticed(device, rng):
    n = 64
    a = simt.to_device(random_array(rng, n, np.float32))
    for f in (np.float32(3), 3.0, np.float32(0.5), 0.5):
        out = simt.to_device(poison(n, np.float64))
        mix[1, 64](out, a, f, np.uint32(0), False, np.float16(0), 0j)
        expected = a.copy_to_host() * f            # NumPy's promotion, as the kernel's
        np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)


def test_device_change_is_noticed(device, rng):
    n = 64
    host = random_array(rng, n, np.float64)
    for spec in (device, "cpu", device):
        with simt.use_device(spec):
            a = simt.to_device(host)
            out = simt.to_device(poison(n, np.float64))
            mix[1, 64](out, a, 1.0, np.uint32(2), False, np.float16(0), 0j)
            np.testing.assert_allclose(out.copy_to_host(), host + 2)


@simt.kernel
def no_parameters():
    pass


def test_kernel_without_parameters(device):
    for _ in range(3):                       # the full path, then the prepared one
        no_parameters[1, 1]()
    simt.synchronize()


def test_native_trampoline_passes_every_launch_argument():
    """The GPU launch trampoline (backends/cuda/launch.py), checked without a GPU: its
    descriptor's cuLaunchKernel entry is replaced by a Python callback."""
    import ctypes
    from simt.backends import hostjit as jit
    from simt.backends.cuda import launch as L
    module = jit.optimize(L._trampoline_ir(), speed=2)
    loaded = jit.LoadedObject(jit.emit_object(module))
    seen = []
    entry_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    entry = entry_type(lambda *args: (seen.append(args), 719)[1])
    go = L.builtin(loaded.address("simt_cuda_launch"),
                   L.descriptor(0x1234, ctypes.cast(entry, ctypes.c_void_p).value, (7, 6, 5),
                                (4, 3, 2), 4096, 0xABC0, 0x5678))
    assert go() == 719
    assert seen == [(0x1234, 7, 6, 5, 4, 3, 2, 4096, 0xABC0, 0x5678, None)]


def test_binder_packs_once_per_new_object():
    """A launch function as the GPU path has it (runtime/binder.py with a packing plan),
    checked without a GPU: it packs each parameter's flat values as params.plan says,
    skips the packing when the same objects come again, and hands other classes, a
    missing argument or another device to the full path."""
    from simt.backends.cuda import params as P
    from simt.ir import types as T
    from simt.runtime import binder
    from simt.runtime.backend import Native
    from simt.runtime.devices import get_device

    class Flat:
        _flat = (0x1000, 8)
    packed, launched, slow = [], [], []
    types = [T.Array(np.dtype(np.float32), 1, "C"), T.Scalar(np.dtype(np.uint32)),
             T.Scalar(np.dtype(np.bool_)), T.Scalar(np.dtype(np.float16)),
             T.Scalar(np.dtype(np.complex64))]
    plan, helpers = P.plan(types)
    native = Native(["launched.append({slot})"], dict(
        helpers, launched=launched, storage0=None, storage1=None,
        pack=lambda storage, offset, *values: packed.append(values)), plan, slots=2)
    array, u, h = Flat(), np.uint32(7), np.float16(0.5)
    args = (array, u, True, h, 1 + 2j)
    fast = binder.bind("k", tuple(map(type, args)), get_device(), lambda *a: slow.append(a),
                       native)
    fast(*args)
    fast(*args)
    assert packed == [(0x1000, 8, 7, 1, int(h.view(np.uint16)), 1.0, 2.0)]
    assert launched == [0, 0]
    u8 = np.uint32(8)
    fast(array, u8, True, h, 1 + 2j)            # new values: the other buffer
    assert packed[-1][2] == 8 and launched == [0, 0, 1]
    for _ in range(2):                          # swapping between the two packs nothing
        fast(*args)
        fast(array, u8, True, h, 1 + 2j)
    assert len(packed) == 2 and launched == [0, 0, 1, 0, 1, 0, 1]
    fast(array, np.uint32(9), True, h, 1 + 2j)  # a third: into the buffer packed first
    assert len(packed) == 3 and launched[-1] == 0
    fast(array, u8, True, h, 1 + 2j)
    assert len(packed) == 3 and launched[-1] == 1
    del launched[3:]
    fast(array, 7, True, h, 1 + 2j)             # an int, not a uint32: the full path
    fast(array, u, True, h)                      # an argument missing
    with simt.use_device("cpu", boundscheck=False):      # another Device object
        fast(*args)
    assert len(slow) == 3 and len(launched) == 3


def test_scalars_and_device_arrays_reach_the_prepared_path(device, rng):
    """NumPy scalars beside device arrays: the second launch binds a launch function
    (a full path at every launch costs ten times the host time)."""
    n = 64
    a, out = simt.to_device(random_array(rng, n, np.float64)), simt.to_device(poison(n, np.float64))
    for _ in range(3):
        mix[1, 64](out, a, np.float32(2), np.uint32(1), False, np.float16(0), 0j)
    assert mix.launches[(1, 64)].prepared, "no launch function was bound"


@simt.kernel
def through_texture(tex, scale, out, rec, vec):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = tex.fetch(i) * scale + rec["w"] + vec.y


RECORD = np.dtype([("w", np.float32), ("k", np.int32)])


def test_textures_and_records_reach_the_prepared_path(device, rng):
    """New texture objects, records and vector values at every launch launch fast too
    (a texture's class records its type and device; a record's dtype is checked; on a GPU
    one native call checks and packs them all: backends/cuda/packlaunch.py), and a
    texture of another format goes to the full path, which compiles for it."""
    gpu = device.backend.kind == "cuda"
    if gpu:                  # made in the background at a first kernel load: wait for it here
        from simt.backends.cuda import packlaunch
        assert packlaunch.PACK_LAUNCH.address() is not None
    host = random_array(rng, 64, np.float32)
    out = simt.to_device(poison(64, np.float32))
    launch = through_texture[1, 64]
    for k in range(5):                  # new texture, record and vector objects at every launch
        rec = np.array((np.float32(k), k), RECORD)[()]
        vec = simt.float2(7, np.float32(k) / 4)
        out.copy_from(poison(64, np.float32))
        launch(simt.Texture(simt.to_device(host)), np.float32(2), out, rec, vec)
        np.testing.assert_array_equal(out.copy_to_host(),
                                      host * 2 + np.float32(k) + np.float32(k) / 4)
    prepared = through_texture.launches[(1, 64)].prepared
    assert prepared, "no launch function was bound"
    if gpu:
        (_, fast), = prepared.values()
        assert type(fast).__name__ == "builtin_function_or_method", \
            "the GPU launch function packs in Python"
    host16 = rng.integers(1, 100, 64).astype(np.int16)
    launch(simt.Texture(simt.to_device(host16)), np.float32(2), out, rec, vec)   # another format
    np.testing.assert_array_equal(out.copy_to_host(),
                                  host16 * np.float32(2) + np.float32(4) + np.float32(1))


def test_gpu_record_packing_matches_the_full_path(rng):
    """The GPU launch function reads a record's parameters with one struct unpack; they
    are the values the full path computes leaf by leaf (padding skipped, nested records
    and array fields, bool, half and complex leaves)."""
    from simt.backends.cuda import params as P
    from simt.ir import types as T
    inner = np.dtype([("x", np.float32), ("n", np.int32), ("w", np.float64),
                      ("v", np.int16, 3), ("b", np.bool_), ("h", np.float16),
                      ("c", np.complex64)])
    for dtype in (inner, np.dtype([("a", np.int8), ("s", inner), ("z", np.uint64)],
                                  align=True)):
        t = T.Record(dtype)
        values = np.zeros(4, dtype)
        for name in dtype.names:
            values[name] = rng.integers(1, 100, values[name].shape)
        for v in values:
            assert list(P._record_reader(t)(v)) == P._record_values(t, v)


def test_launch_function_code_comes_from_the_disk_cache(device, rng, tmp_path, monkeypatch):
    """A launch function's code is compiled once and kept in the disk cache: a later
    process (here: the in-process copies forgotten) binds without compiling, and the
    function it makes launches right. (On a GPU these arguments' launch function is
    native code, no Python: the Python one is asked for by taking the bindings route.)"""
    import builtins
    from simt.config import config
    from simt.runtime import binder
    if device.backend.kind == "cuda":
        from simt.backends.cuda import launch as cuda_launch
        monkeypatch.setattr(cuda_launch, "VIA", "bindings")
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "cache", True)
    monkeypatch.setattr(binder, "_codes", {})

    @simt.kernel
    def scaled(x, y, a):
        i = simt.grid(1)
        if i < x.size:
            y[i] = a * x[i]

    x = simt.to_device(random_array(rng, 64, np.float64))
    for _ in range(2):                           # the second launch binds
        scaled[1, 64](x, simt.device_array(64, np.float64), 2.0)
    assert list(tmp_path.glob("launch/*.code")), "no launch function code was kept"
    binder._codes.clear()
    compiled = []
    real = builtins.compile
    monkeypatch.setattr(builtins, "compile",
                        lambda *a, **k: compiled.append(a[1]) or real(*a, **k))
    y = simt.device_array(64, np.float64)
    y.copy_from(poison(64, np.float64))
    launch = scaled[2, 32]                       # another configuration: bound again
    launch(x, simt.device_array(64, np.float64), 2.0)
    launch(x, y, 3.0)
    launch(x, y, 3.0)
    simt.synchronize()
    np.testing.assert_array_equal(y.copy_to_host(), 3.0 * x.copy_to_host())
    assert not [f for f in compiled if f.startswith("<simt launch")], compiled


def test_a_launch_function_is_bound_again_when_faster_code_is_made(monkeypatch):
    """A configuration bound while the back end's native launch code was still being made
    (a process with an empty cache) gets the faster function once the code is there, in
    ``kernel[...]`` and in the prepared table, and the function handed out before hands
    its calls to it (a caller may have kept it: ``f = kernel[grid, block]``)."""
    from simt.runtime.backend import Native
    backend = simt.get_device().backend
    hooks, python_calls, fast_calls = [], [], []
    ready = []

    def native_launch(self, kernel, loaded, types, grid, block, shared, stream, classes=None):
        if ready:           # the native code is there: the whole launch function, made
            def complete(local, device, refused):
                def launch(*args):
                    fast_calls.append(args)
                return launch
            return Native(complete=complete)
        # still being made: statements for binder.py's Python function (stand-ins that
        # launch nothing), and when to bind again
        return Native(["python_calls.append(({args}))"], {"python_calls": python_calls},
                      None, 1, later=hooks.append)
    monkeypatch.setattr(type(backend), "native_launch", native_launch)

    @simt.kernel
    def fill(out, v):
        i = simt.grid(1)
        if i < out.shape[0]:
            out[i] = v

    out = simt.device_array(64, np.int32)
    for v in (1, 2):
        fill[2, 32](out, v)             # the full path; the second binds
    python_route = fill[2, 32]
    assert len(hooks) == 1 and python_route is not fill.launches[(2, 32)]
    fill[2, 32](out, 3)
    assert python_calls == [(out, 3)] and fast_calls == []
    ready.append(True)
    hooks[0]()
    assert fill[2, 32] is not python_route
    fill[2, 32](out, 4)
    assert fast_calls == [(out, 4)]
    python_route(out, 5)                # a caller who kept the first function
    assert fast_calls == [(out, 4), (out, 5)] and python_calls == [(out, 3)]
    assert (out.copy_to_host() == 2).all()      # the stand-ins launched nothing


@simt.kernel
def scatter(out, values, at):
    i = simt.grid(1)
    if i < values.shape[0]:
        out[at + i] = values[i]


def test_cpu_bound_launches_run_every_block_and_report_faults(rng):
    """On the CPU device a configuration's bound launch (the direct path: no stream, no
    NumPy arguments) runs one block and many blocks alike, and a fault in a later launch
    is reported naming the kernel, block and thread, as the full path reports it."""
    with simt.use_device("cpu"):
        n = 300
        values = simt.to_device(random_array(rng, n, np.float32))
        for blocks in (1, 10):
            out = simt.to_device(poison(n + 64, np.float32))
            count = blocks * 32 if blocks > 1 else 32
            for at in (0, 64, 7):
                scatter[blocks, 32](out, values, at)
            expected = poison(n + 64, np.float32)
            for at in (0, 64, 7):
                expected[at:at + min(count, n)] = values.copy_to_host()[:min(count, n)]
            np.testing.assert_array_equal(out.copy_to_host(), expected)
            assert "go" in scatter[blocks, 32].__globals__      # the direct path was bound
        with pytest.raises(simt.CudaError) as caught:
            scatter[10, 32](out, values, 100)                    # 100 + 299 > n + 63
            simt.synchronize()
        message = str(caught.value)
        assert "scatter" in message and "block" in message and "thread" in message
        scatter[10, 32](out, values, 0)                          # the configuration still launches
        simt.synchronize()
        np.testing.assert_array_equal(out.copy_to_host()[:n], values.copy_to_host())
