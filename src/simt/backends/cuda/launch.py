"""The launch fast path: a parameter buffer prepared once per kernel signature.

``Launcher(function, kinds)`` lays out storage for every argument once and an array of
``void*`` pointing into it (the ``kernelParams`` of cuLaunchKernel). A launch then does
one ``struct.pack_into`` of the argument values into that storage and one
``cuLaunchKernel`` call given the array's address as a plain int, which cuda.bindings
passes through without converting anything.

A Launcher's storage is shared by its launches, in every host thread: packing and the
cuLaunchKernel that reads the values (the driver copies them during the call, so reuse
right after it returns is safe) hold the Launcher's lock, as one thread's values must not
replace another's in between.
"""

import ctypes
import struct
import threading

from simt.backends.cuda.driver import api, check, error_name
from . import trampoline
from .params import layout as _layout
from .trampoline import (DATA_OFFSET as _DATA_OFFSET, builtin, cu_launch_address as
                         _cu_launch_address, python_api)


class Launcher:
    """Launches one kernel with a fixed list of parameter kinds, as fast as Python can.

    ``function``: a module.Function (or anything with ``.handle``, a CUfunction).
    ``kinds``: one entry per kernel parameter: a ctypes scalar type (c_void_p for
    pointers, passed as ints) or an int, the byte size of a by-value blob (passed as bytes).
    ``backend``: the CudaBackend, made current again if this thread had no context.
    """

    def __init__(self, function, kinds, backend=None):
        fmt, self.offsets, size = _layout(kinds)
        offsets = self.offsets
        self.kinds = kinds
        self.function = function
        self.backend = backend
        self.pack = struct.Struct(fmt).pack_into
        self.lock = threading.Lock()
        self.storage = (ctypes.c_char * size)()      # aligned as malloc aligns (16)
        base = ctypes.addressof(self.storage)
        self.pointers = (ctypes.c_void_p * max(len(kinds), 1))(*[base + o for o in offsets])
        self.params = ctypes.addressof(self.pointers) if kinds else None
        driver = api()
        self._handle = function.handle
        self._launch = driver.cuLaunchKernel
        self._cooperative = driver.cuLaunchCooperativeKernel
        self.launch = _binder(self.pack, self.storage, self._launch, self._handle,
                              self.params, self._retry, self.lock)

    def __call__(self, grid, block, args, shared=0, stream=None):
        """Launch on ``grid`` x ``block`` (3-tuples) with ``args`` in parameter order.

        ``stream`` is a CUstream handle or None for the default stream. ``self.launch``
        is the same function without this method's extra call: use it in hot loops.
        """
        self.launch(grid, block, args, shared, stream)

    def cooperative(self, grid, block, args, shared=0, stream=None):
        """Launch with cuLaunchCooperativeKernel (grid-wide sync allowed); same arguments."""
        gx, gy, gz = grid
        bx, by, bz = block
        call_args = (self._handle, gx, gy, gz, bx, by, bz, shared, stream, self.params)
        with self.lock:
            self.pack(self.storage, 0, *args)
            (err,) = self._cooperative(*call_args)
            if err:
                self._retry(self._cooperative, err, "cuLaunchCooperativeKernel", call_args)

    def extended(self, grid, block, args, shared=0, stream=None, cluster=None,
                 programmatic=False):
        """Launch with cuLaunchKernelEx and its launch attributes: in clusters of ``cluster``
        blocks (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) and, with ``programmatic``, allowed
        to start before the stream's previous kernel ends, at its
        griddepcontrol.launch_dependents (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
        the other arguments as ``__call__``'s."""
        d = api()
        config = d.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes = shared
        config.hStream = stream if stream is not None else d.CUstream(0)
        config.attrs = launch_attributes(cluster, programmatic)
        config.numAttrs = len(config.attrs)
        call_args = (config, self._handle, self.params, 0)
        with self.lock:
            self.pack(self.storage, 0, *args)
            (err,) = d.cuLaunchKernelEx(*call_args)
            if err:
                self._retry(d.cuLaunchKernelEx, err, "cuLaunchKernelEx", call_args)

    def _retry(self, fn, err, name, call_args):
        """A thread with no current context gets it made current and one more try."""
        if self.backend is not None and error_name(err) == "CUDA_ERROR_INVALID_CONTEXT":
            self.backend.make_current(force=True)
            (err,) = fn(*call_args)
        check(err, f"{name} of '{self.function.name}'"
              if hasattr(self.function, "name") else name)


    # ------------------------------------------------------------ the prepared fast path
    def new_buffer(self):
        """(storage, pointers): a parameter buffer of this kernel's layout and its
        ``kernelParams`` array, for a launch function that keeps its own (and keeps them
        alive: ``ctypes.addressof(pointers)`` is what the driver is given)."""
        storage = (ctypes.c_char * len(self.storage))()
        base = ctypes.addressof(storage)
        pointers = (ctypes.c_void_p * max(len(self.offsets), 1))(
            *[base + o for o in self.offsets])
        return storage, pointers

    def native_call(self, grid, block, shared=0, stream=None, params=None):
        """A function of no arguments making one launch of this kernel with this
        configuration (after the caller packed the values into the buffer at ``params``)
        and returning the CUresult (falsy on success). With VIA 'native' it is ``go``, a
        builtin function made over the native trampoline (``_trampoline_ir``) bound to
        this launch's cuLaunchKernel arguments: calling it costs what calling any builtin
        does, where cuda.bindings converts eleven arguments per call and a ctypes call of
        the same code cost ~0.5 us more (H100 host, bench/gpu/launch_parts.py)."""
        params = self.params if params is None else params
        cu, args = self._launch, (self._handle, *grid, *block, shared, stream, params, 0)

        def bindings():
            return cu(*args)[0]
        if VIA != "native" or _cu_launch_address() is None or _DATA_OFFSET is None:
            return bindings
        data = descriptor(_address(self._handle), _cu_launch_address(), grid, block,
                          shared, _address(stream), params)
        code = native_trampoline(wait=False)
        if code is not None:
            # the call gives up the GIL (see native_trampoline): a stream host function may
            # be waiting for it while cuLaunchKernel waits for that host function
            return builtin(code, data)
        made = []       # the trampoline is being made (build_trampoline_soon): its builtin then
        TRAMPOLINE.when_made(lambda: made.append(builtin(TRAMPOLINE.made[0], data)))

        def later():
            return made[0]() if made else bindings()
        return later

    def packed_route(self, classes, types, grid, block, shared=0, stream=None, error=None):
        """For arguments of these classes and kernel types, ``make(local, device,
        refused)``: the launch function as one native call (packlaunch.py). It checks that
        ``local.device`` is ``device`` and each argument's class, packs the values, sets
        ``error = (owner, value)`` as ``owner.error_source`` (kernels that can fail), gives up
        the GIL around cuLaunchKernel and returns None; arguments not as planned, or another
        current device, go to ``refused(*args)``; a driver error, after making the context
        current and one more try, raises. None where the arguments have no native route or
        the native code cannot be had (yet: it is made in the background, and a launch
        function bound meanwhile packs in Python: ``packed_later``)."""
        from . import packlaunch
        planned = self._packed_plan(classes, types)
        code = packlaunch.PACK_LAUNCH.address(wait=False) if planned is not None else None
        if code is None:
            return None
        owner, value = error if error is not None else (None, None)

        def make(local, device, refused):
            made, retrying = [], threading.local()

            def failed(err, *args):
                if getattr(retrying, "on", False) or self.backend is None:
                    check(api().CUresult(int(err)),      # raises the driver layer's error
                          f"cuLaunchKernel of '{getattr(self.function, 'name', 'kernel')}'")
                    return None
                retrying.on = True
                try:                 # this thread had no current context, or another one
                    self.backend.make_current(force=True)
                    return made[0](*args)
                finally:
                    retrying.on = False
            made.append(packlaunch.launch_function(
                code, planned, _address(self._handle), _cu_launch_address(), grid, block,
                shared, _address(stream), dict(local=local, device=device, refused=refused,
                                               failed=failed, error_owner=owner,
                                               error_value=value)))
            return made[0]
        return make

    def _packed_plan(self, classes, types):
        from . import packlaunch
        if VIA != "native" or _cu_launch_address() is None or _DATA_OFFSET is None:
            return None
        return packlaunch.plan(classes, types, self.kinds, self.offsets, len(self.storage))

    def packed_later(self, classes, types):
        """Where ``packed_route`` found its native code still being made for arguments it
        has a route for: ``when(hook)``, which calls ``hook()`` once the code is there (so
        that the runtime binds it then); else None."""
        from . import packlaunch
        if packlaunch.PACK_LAUNCH.made or self._packed_plan(classes, types) is None:
            return None
        return packlaunch.PACK_LAUNCH.when_made

    def native_failed(self, grid, block, shared=0, stream=None, params=None):
        """What the prepared path calls with a nonzero CUresult: one retry after making
        this device's context current (the thread never used it, or another library
        made another context current), else the error as the driver layer raises it."""
        gx, gy, gz = grid
        bx, by, bz = block
        params = self.params if params is None else params
        args = (self._handle, gx, gy, gz, bx, by, bz, shared, stream, params, 0)

        def failed(err):
            driver = api()
            err = driver.CUresult(int(err))
            if self.backend is not None:
                self.backend.make_current(force=True)
                (err,) = self._launch(*args)
            check(err, f"cuLaunchKernel of '{getattr(self.function, 'name', 'kernel')}'")
        return failed


def launch_attributes(cluster=None, programmatic=False):
    """The CUlaunchAttribute list of a cuLaunchKernelEx (or an occupancy query's config)."""
    d = api()
    attrs = []
    if cluster is not None:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cluster
        attrs.append(attr)
    if programmatic:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        attrs.append(attr)
    return attrs


VIA = "native"          # the prepared path's route to the driver: 'native' or 'bindings'


class _LaunchDesc(ctypes.Structure):
    """What the native trampoline reads: cuLaunchKernel's arguments, then the three
    Python C-API functions it calls (giving up the GIL, taking it back, the result as an
    int object)."""
    _fields_ = [("function", ctypes.c_void_p), ("entry", ctypes.c_void_p),
                ("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint),
                ("bx", ctypes.c_uint), ("by", ctypes.c_uint), ("bz", ctypes.c_uint),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("params", ctypes.c_void_p), ("save", ctypes.c_void_p),
                ("restore", ctypes.c_void_p), ("to_int", ctypes.c_void_p)]


_PYTHON_API = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyLong_FromLongLong")


def descriptor(function, entry, grid, block, shared, stream, params):
    """A launch's descriptor as the bytes a trampoline builtin is bound to."""
    return bytes(_LaunchDesc(function, entry, *grid, *block, shared, stream, params,
                             *python_api(_PYTHON_API)))


def _trampoline_ir(offset=None):
    """LLVM IR of ``PyObject *simt_cuda_launch(PyObject *self, PyObject *unused)``, a
    METH_NOARGS builtin: ``self`` is a bytes object whose data (``offset`` bytes in) is a
    _LaunchDesc; it gives up the GIL, calls the cuLaunchKernel found there with the
    descriptor's arguments (and a null ``extra``), takes the GIL back and returns the
    CUresult as an int object. Function addresses come from the descriptor, so the code
    has no relocations (trampoline.py keeps its bytes)."""
    offset = _DATA_OFFSET if offset is None else offset
    kinds = ["ptr", "ptr"] + ["i32"] * 7 + ["ptr", "ptr", "ptr", "ptr", "ptr"]
    lines = ["%Desc = type { " + ", ".join(kinds) + " }",
             "define ptr @simt_cuda_launch(ptr %self, ptr %unused) {",
             f"  %d = getelementptr i8, ptr %self, i64 {offset}"]
    for i, kind in enumerate(kinds):
        lines += [f"  %p{i} = getelementptr %Desc, ptr %d, i32 0, i32 {i}",
                  f"  %v{i} = load {kind}, ptr %p{i}"]
    args = ", ".join(f"{kind} %v{i}" for i, kind in enumerate(kinds[:11]) if i != 1)
    lines += ["  %ts = call ptr %v11()",
              f"  %r = call i32 %v1({args}, ptr null)",
              "  call void %v12(ptr %ts)",
              "  %wide = sext i32 %r to i64",
              "  %obj = call ptr %v13(i64 %wide)",
              "  ret ptr %obj", "}"]
    return "\n".join(lines) + "\n"


def _usable_trampoline_ir():
    if _cu_launch_address() is None or _DATA_OFFSET is None:
        raise OSError("no cuLaunchKernel in libcuda.so.1, or bytes objects of unknown layout")
    return _trampoline_ir()


# It gives up the GIL around cuLaunchKernel: cuLaunchKernel can wait for the driver thread
# that runs stream host functions, and a host function waits for the GIL: a call that kept
# it was a deadlock (tools/stress.py on the H100 did not end). Keeping it only while no host
# function was pending left a race (a function registered, or already running, between the
# test and the call: the 120 s stress run of 2026-11-23 hung so), so every call gives it
# up, as cuda.bindings' do.
TRAMPOLINE = trampoline.NativeCode("simt_cuda_launch", _usable_trampoline_ir)


def build_trampoline_soon():
    """Start making the native launch helpers in the background (a kernel was loaded)."""
    TRAMPOLINE.soon()
    from .packlaunch import PACK_LAUNCH
    PACK_LAUNCH.soon()


def native_trampoline(wait=True):
    """The address of the trampoline's native code (``_trampoline_ir``, made into
    builtins by ``builtin``), or None where LLVM's host JIT or libcuda cannot be had."""
    return TRAMPOLINE.address(wait)


def _address(handle):
    """A driver handle (CUfunction, CUstream or None) as an int address for ctypes."""
    if handle is None:
        return None
    return int(handle) or None


def _binder(pack, storage, cu_launch, handle, params, retry, lock):
    """The launch function of one Launcher: everything it needs held in closure cells,
    which Python reads faster than instance attributes."""
    def launch(grid, block, args, shared=0, stream=None):
        gx, gy, gz = grid
        bx, by, bz = block
        with lock:
            pack(storage, 0, *args)
            (err,) = cu_launch(handle, gx, gy, gz, bx, by, bz, shared, stream, params, 0)
            if err:
                retry(cu_launch, err, "cuLaunchKernel",
                      (handle, gx, gy, gz, bx, by, bz, shared, stream, params, 0))
    return launch


def launch(function, grid, block, args, kinds, shared=0, stream=None, backend=None):
    """One-off launch (prepares a Launcher each time: use Launcher in loops)."""
    Launcher(function, kinds, backend)(grid, block, args, shared, stream)


def launch_cooperative(function, grid, block, args, kinds, shared=0, stream=None,
                       backend=None):
    """One-off cooperative launch through cuLaunchCooperativeKernel."""
    Launcher(function, kinds, backend).cooperative(grid, block, args, shared, stream)
