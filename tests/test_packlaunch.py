"""The native launch function (backends/cuda/packlaunch.py), checked without a GPU: its
machine code made for the baseline CPU, bound to a descriptor whose cuLaunchKernel is a
ctypes callback that reads the parameter buffer. Every flat parameter must hold what the
Python path (params.values, struct layout of params.layout) packs; arguments of another
class, a missing one, a Python int beyond int64, an array whose flat values do not match
its plan, or another current device go to ``refused`` with the arguments as given, without
a launch and without an exception left set; a driver error goes to ``failed``."""
import threading
import copy
import ctypes
import struct

import numpy as np
import pytest

import simt
from simt.backends.cuda import packlaunch, params as P, trampoline
from simt.ir import types as T

CU_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
SEEN = []
RESULT = [0]
SIZES = []            # per flat parameter, its size: the callback reads that many bytes


@CU_LAUNCH
def _fake_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    pointers = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
    values = [ctypes.string_at(pointers[j], size) for j, size in enumerate(SIZES)]
    SEEN.append(((f, gx, gy, gz, bx, by, bz, shared, stream, extra), values))
    return RESULT[0]


@pytest.fixture(scope="module")
def code():
    if trampoline.DATA_OFFSET is None or packlaunch.TYPE_OFFSET is None:
        pytest.skip("objects of unknown layout in this interpreter")
    address = trampoline.make(packlaunch.ir(trampoline.DATA_OFFSET), packlaunch.NAME)
    assert address is not None, "the pack-and-launch code must have no relocations"
    return address


class _Owner:
    error_source = None


LOCAL, DEVICE, OWNER = threading.local(), object(), _Owner()
REFUSED, FAILED = [], []


def _refused(*args):
    REFUSED.append(args)
    return "refused"


def _failed(err, *args):
    FAILED.append((err, args))
    return "failed"


def _plan(classes, types, kinds):
    _, offsets, size = P.layout(kinds)
    return packlaunch.plan(classes, types, kinds, offsets, size)


def _bind(code, args):
    classes = tuple(map(type, args))
    types = [T.typeof(a) for a in args]
    kinds = [k for t in types for k in P.kinds(t)]
    planned = _plan(classes, types, kinds)
    assert planned is not None
    LOCAL.device = DEVICE
    go = packlaunch.launch_function(
        code, planned, 0x1234, ctypes.cast(_fake_launch, ctypes.c_void_p).value, (3, 2, 1),
        (64, 2, 1), 512, 0x5678, dict(local=LOCAL, device=DEVICE, refused=_refused,
                                      failed=_failed, error_owner=OWNER, error_value=("src", 1)))
    SIZES[:] = [P.field(k)[1] for k in kinds]
    return go, types, kinds


def _expected(types, kinds, args):
    """The bytes of each flat parameter as the Python path packs them."""
    fmt, offsets, size = P.layout(kinds)
    buffer = bytearray(size)
    values = [v for t, a in zip(types, args) for v in P.values(t, a, lambda x: int(x.ptr))]
    struct.pack_into(fmt, buffer, 0, *values)
    return [bytes(buffer[o:o + P.field(k)[1]]) for o, k in zip(offsets, kinds)]


RECORD = np.dtype([("n", np.int8), ("x", np.float64), ("z", np.complex64),
                   ("v", np.int16, (3,)), ("inner", [("u", np.uint32), ("f", np.float32)])])


def _record(seed):
    rng = np.random.default_rng(seed)
    value = np.zeros((), RECORD)
    value["n"], value["x"], value["z"] = -5 - seed, rng.random(), complex(rng.random(), -seed)
    value["v"] = rng.integers(-999, 999, 3)
    value["inner"]["u"], value["inner"]["f"] = 4000000000 + seed, rng.random()
    return value[()]


def _arguments(seed=5):
    rng = np.random.default_rng(seed)
    a = simt.to_device(rng.random(37).astype(np.float32))
    b = simt.to_device(rng.random((6, 8)))[1:5, ::2]          # strided: shape and strides
    return (a, -(2 ** 40) - 3 - seed, 2.75 + seed, True, np.int16(-7 - seed), np.float32(1.5),
            np.complex64(2 - 3j), np.uint8(250), np.bool_(True), np.float16(0.3), b, 17,
            simt.float4(1.5, -2, seed, 4), simt.short2(-3, seed), _record(seed))


def test_every_flat_parameter_as_the_python_path_packs_it(code):
    args = _arguments()
    go, types, kinds = _bind(code, args)
    SEEN.clear()
    RESULT[0] = 0
    OWNER.error_source = None
    assert go(*args) is None
    assert OWNER.error_source == ("src", 1), "a kernel that can fail records its source"
    assert len(SEEN) == 1
    config, values = SEEN[0]
    assert config == (0x1234, 3, 2, 1, 64, 2, 1, 512, 0x5678, None)
    assert values == _expected(types, kinds, args)
    other = _arguments(seed=9)                # new objects of the same classes: new values
    assert go(*other) is None
    assert SEEN[1][1] == _expected(types, kinds, other)
    assert SEEN[1][1] != SEEN[0][1]


def test_a_record_of_an_equal_dtype_is_read_as_one_of_the_same(code):
    args = _arguments()
    go, types, kinds = _bind(code, args)
    copy_of_dtype = np.dtype(RECORD.descr)              # equal, another object
    assert copy_of_dtype == RECORD and copy_of_dtype is not RECORD
    other = list(args)
    other[-1] = np.frombuffer(args[-1].tobytes(), copy_of_dtype)[0]
    SEEN.clear()
    assert go(*other) is None
    assert SEEN[0][1] == _expected(types, kinds, args)


def test_a_driver_error_goes_to_failed(code):
    args = _arguments()
    go, _, _ = _bind(code, args)
    RESULT[0] = 719
    FAILED.clear()
    try:
        assert go(*args) == "failed"
    finally:
        RESULT[0] = 0
    assert len(FAILED) == 1 and FAILED[0][0] == 719
    assert all(a is b for a, b in zip(FAILED[0][1], args)) and len(FAILED[0][1]) == len(args)


def test_what_failed_raises_comes_out(code):
    """An exception raised by the hand-over (the driver layer's error) reaches the caller."""
    args = (np.int32(3),)
    planned = _plan((np.int32,), [T.typeof(args[0])], [ctypes.c_int32])

    def failed(err, *a):
        raise RuntimeError(f"driver error {err}")
    LOCAL.device = DEVICE
    go = packlaunch.launch_function(
        code, planned, 1, ctypes.cast(_fake_launch, ctypes.c_void_p).value, (1, 1, 1),
        (1, 1, 1), 0, None, dict(local=LOCAL, device=DEVICE, refused=_refused, failed=failed,
                                 error_owner=None, error_value=None))
    SIZES[:] = [4]
    RESULT[0] = 2
    try:
        with pytest.raises(RuntimeError, match="driver error 2"):
            go(*args)
    finally:
        RESULT[0] = 0


@pytest.mark.parametrize("change", ["class", "missing", "extra", "wide int", "flat values",
                                    "none", "record dtype", "vector item", "device",
                                    "no device"])
def test_arguments_not_as_planned_are_refused(code, change):
    args = list(_arguments())
    go, _, _ = _bind(code, args)
    if change == "class":
        args[5] = np.float64(1.5)
    elif change == "missing":
        args.pop()
    elif change == "extra":
        args.append(1)
    elif change == "wide int":
        args[1] = 2 ** 64
    elif change == "flat values":
        args[0] = copy.copy(args[0])
        args[0]._flat = args[0]._flat[:1]
    elif change == "none":
        args[0] = None
    elif change == "record dtype":
        args[-1] = np.zeros((), [("n", np.int8), ("x", np.float64)])[()]
    elif change == "vector item":
        args[12] = simt.float4(1, 2, 3, 4)
        args[12]._items = (np.float64(1),) * 4
    elif change == "device":
        LOCAL.device = object()
    elif change == "no device":
        del LOCAL.device
    SEEN.clear()
    REFUSED.clear()
    assert go(*args) == "refused"
    assert SEEN == []
    assert len(REFUSED) == 1 and all(a is b for a, b in zip(REFUSED[0], args))
    assert len(REFUSED[0]) == len(args)
    LOCAL.device = DEVICE
    assert go(*_arguments()) is None          # no exception was left set: the next call works


def test_what_has_no_native_route():
    """Big-endian records, and a Python int served by an int32 parameter (an eager
    signature), pack in Python."""
    record = np.zeros((), np.dtype([("a", ">i4"), ("b", np.float64)]))[()]
    types = [T.typeof(record)]
    assert _plan((type(record),), types, [k for t in types for k in P.kinds(t)]) is None
    assert _plan((int,), [T.Scalar(np.dtype(np.int32))], [ctypes.c_int32]) is None


def test_binder_hands_a_complete_launch_function_its_retry():
    """A back end that makes the whole launch function (Native(complete=...)): binder
    writes no code, gives it the current-device holder and the device, and its refusals
    reach retry with the function itself as the caller."""
    from simt.runtime import binder
    from simt.runtime.backend import Native
    from simt.runtime.devices import _local, get_device
    retried, seen = [], []

    def make(local, device, refused):
        seen.append((local, device))

        def launch(*args):
            return refused(*args) if args[0] == "refuse" else None
        return launch
    device = get_device()
    fast = binder.bind("k", (str, int), device, None, Native(complete=make),
                       retry=lambda caller, *a: retried.append((caller, a)))
    assert seen == [(_local, device)]
    fast("ok", 1)
    fast("refuse", 2)
    assert retried == [(fast, ("refuse", 2))]


def test_launcher_packed_route_end_to_end(code, monkeypatch):
    """Launcher.packed_route as the GPU back end uses it, with the stand-in driver call: the
    function it makes launches with the kernel's layout, records the error source, and
    after a driver error makes the context current and tries once more (a second error
    raises the driver layer's error)."""
    from simt.backends.cuda import launch as L
    entry = ctypes.cast(_fake_launch, ctypes.c_void_p).value
    monkeypatch.setattr(L, "_cu_launch_address", lambda: entry)
    monkeypatch.setattr(packlaunch.PACK_LAUNCH, "made", [code, None])
    args = _arguments()
    types = [T.typeof(a) for a in args]
    kinds = [k for t in types for k in P.kinds(t)]
    made_current = []

    class Backend:
        def make_current(self, force=False):
            made_current.append(force)
    launcher = L.Launcher.__new__(L.Launcher)           # no driver here: its layout only
    _, launcher.offsets, size = P.layout(kinds)
    launcher.kinds, launcher.storage = kinds, bytearray(size)
    launcher._handle, launcher.backend, launcher.function = 0x1234, Backend(), None
    owner = _Owner()
    make = launcher.packed_route(tuple(map(type, args)), types, (2, 1, 1), (32, 1, 1), 0, None,
                                 (owner, "source"))
    assert make is not None
    LOCAL.device = DEVICE
    go = make(LOCAL, DEVICE, _refused)
    SIZES[:] = [P.field(k)[1] for k in kinds]
    SEEN.clear()
    assert go(*args) is None and owner.error_source == "source"
    assert SEEN[0][1] == _expected(types, kinds, args)
    RESULT[0] = 1                                   # the driver fails both tries
    checked = []
    monkeypatch.setattr(L, "check", lambda err, where: checked.append((int(err), where)))
    monkeypatch.setattr(L, "api", lambda: type("Api", (), {"CUresult": int}))
    try:
        go(*args)
    finally:
        RESULT[0] = 0
    assert made_current == [True] and len(SEEN) == 3 and checked == [(1, "cuLaunchKernel of 'kernel'")]
