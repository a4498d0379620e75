"""The one door to NVIDIA's driver API: lazy loading, cuInit, and error mapping.

Every driver call in simt goes through ``call(fn, *args)`` (or ``check(err, name)`` on
hot paths that call the binding directly). A failing call raises the simt exception
that fits the CUDA error, naming the call, the CUDA error name, and what to do.

Sticky errors (an illegal address, a device assert, ...) poison the CUDA context for
good, as in CUDA: after one, every later call on that device raises
``ContextUnusableError`` without touching the driver.

Importing this module never imports ``cuda.bindings``; ``api()`` does, once.
"""

import threading

from simt.errors import (
    ContextUnusableError, CudaError, DeviceAssertError, IllegalAddressError,
    InvalidConfiguration, LaunchError, MisalignedAddressError, OutOfMemoryError,
)

_lock = threading.Lock()
_api = None             # the cuda.bindings.driver module once cuInit succeeded
_init_error = None      # why the driver could not be loaded, when it could not
_dead = {}              # device ordinal -> message of the sticky error that killed it
# device ordinal -> a function returning the error a kernel recorded before it trapped (or
# None): whichever driver call first meets a trap's sticky error raises the recorded error
# (the kernel, line, block and thread) instead of the driver's bare one
recorded_errors = {}
_local = threading.local()   # .device: the ordinal whose context this thread made current

# What the 'cu13' and 'cu12' extras of pyproject.toml install, spelled so that it works where
# simt was installed from a wheel or a clone: simt is not on PyPI (tests/test_packaging.py
# keeps the two in step).
INSTALL_CUDA = ("pip install 'cuda-bindings==13.*' 'cuda-pathfinder>=1.3.1' 'nvidia-nvvm==13.*' "
                "for a driver whose nvidia-smi says \"CUDA Version: 13.x\"; for 12.x, pip install "
                "'cuda-bindings>=12.6,<13' 'cuda-pathfinder>=1.3.1' nvidia-cuda-nvcc-cu12 (in a "
                "clone of simt: pip install '.[cu13]' or '.[cu12]')")

_RESTART = "the CUDA context is unusable (as in CUDA); restart the process to use the GPU again"
_LAUNCH_CALLS = ("cuLaunchKernel", "cuLaunchCooperativeKernel", "cuLaunchKernelEx")

_NOT_SUPPORTED_LAUNCH = (
    "the driver refuses this launch. If the kernel calls the graph launch (simt.graph_launch), "
    "it must itself run as a kernel node of a graph: add it to a simt.Graph and launch that "
    "graph (cudaErrorNotSupported; the CPU device reports this at the simt.graph_launch line, "
    "as cudaErrorInvalidValue)")

_CAPTURED = ("captured work is recorded into the graph, not run, so nothing can wait for it; "
             "end the `with stream.capture()` block first, then launch the graph and wait "
             "for that")

# CUDA error name -> (exception class, sticky?, what to do)
_ERRORS = {
    "CUDA_ERROR_OUT_OF_MEMORY": (OutOfMemoryError, False,
                                 "free arrays you no longer need or ask for less"),
    "CUDA_ERROR_ILLEGAL_ADDRESS": (IllegalAddressError, True,
                                   "a kernel accessed memory out of bounds; run it on the "
                                   "'cpu' device (it checks every index) to find the line"),
    "CUDA_ERROR_ASSERT": (DeviceAssertError, True, "an assert in a kernel failed"),
    "CUDA_ERROR_MISALIGNED_ADDRESS": (MisalignedAddressError, True,
                                      "a kernel accessed memory at an address not "
                                      "aligned to the access size"),
    "CUDA_ERROR_LAUNCH_FAILED": (LaunchError, True, "the kernel failed while running"),
    "CUDA_ERROR_HARDWARE_STACK_ERROR": (LaunchError, True,
                                        "the call stack overflowed (deep recursion?)"),
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": (LaunchError, True, "a kernel ran an illegal instruction"),
    "CUDA_ERROR_INVALID_ADDRESS_SPACE": (LaunchError, True,
                                         "a kernel used a pointer in the wrong address space"),
    "CUDA_ERROR_INVALID_PC": (LaunchError, True, "a kernel jumped to an invalid address"),
    "CUDA_ERROR_LAUNCH_TIMEOUT": (LaunchError, True,
                                  "the kernel ran past the display watchdog's limit"),
    "CUDA_ERROR_ECC_UNCORRECTABLE": (LaunchError, True, "the GPU reported a memory ECC error"),
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": (InvalidConfiguration, False,
                                           "use fewer threads per block (the kernel needs "
                                           "too many registers for this block size)"),
    "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED": (CudaError, False, _CAPTURED),
    "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED": (CudaError, False, _CAPTURED),
    "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT": (CudaError, False,
                                           "work on the legacy default stream waits for the "
                                           "capturing stream, whose work is only recorded; "
                                           "put the work in the captured stream, or make it "
                                           "in a Stream(non_blocking=True)"),
    "CUDA_ERROR_STREAM_CAPTURE_UNJOINED": (CudaError, False,
                                           "work of another stream was not joined back into "
                                           "the capturing one: record an event in that "
                                           "stream after its work and have the capturing "
                                           "stream wait for it before the block ends"),
    "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE": (CudaError, False,
                                             "the new graph does not have the same nodes, of "
                                             "the same kinds, with the same dependencies as "
                                             "the instantiated one; only parameters may "
                                             "change. Instantiate the new graph instead"),
    "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT": (CudaError, False,
                                            "no OpenGL context of this GPU is current on "
                                            "this thread: make one current (simt.gl."
                                            "egl_context() without a display) on the thread "
                                            "that registers, maps and unmaps the buffer"),
    "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE": (InvalidConfiguration, False,
                                                "a cooperative grid must fit on the device "
                                                "at once: launch fewer blocks"),
}


def _no_capture_advice(cuda_name, call_name):
    return None


# capture.advice once capture.py is imported (this layer imports nothing above it): the
# captures under way, named in the errors of the calls they forbid
capture_advice = _no_capture_advice

# Stream host functions queued and not yet run: key -> (stream, fn, args) (streams.py);
# launch.py makes no GIL-holding launch while any is pending (the host function needs it).
pending_host_functions = {}


def api():
    """Return ``cuda.bindings.driver`` after ``cuInit(0)``; raise CudaError if unavailable."""
    if _api is None:
        _load()
    if _api is None:
        raise CudaError(f"the CUDA driver is not available: {_init_error}. "
                        f"Install an NVIDIA driver and cuda-bindings ({INSTALL_CUDA}), "
                        "or use the 'cpu' device")
    return _api


def available():
    """True when cuda.bindings imports and cuInit succeeds."""
    if _api is None:
        _load()
    return _api is not None


def why_unavailable():
    """Why the driver API cannot be used, as advice (None when it can)."""
    if available():
        return None
    error = _init_error or ""
    if "No module named 'cuda" in error:
        return f"cuda-bindings is not installed: {INSTALL_CUDA}"
    if "libcuda" in error or "NOT_FOUND" in error:
        return f"no NVIDIA driver was found ({error})"
    if "INSUFFICIENT_DRIVER" in error or "COMPAT" in error:
        return (f"the NVIDIA driver is too old for the installed cuda-bindings ({error}): "
                "update the driver or install the cuda-bindings matching its CUDA version")
    if "NO_DEVICE" in error:
        return "the NVIDIA driver sees no GPU (check CUDA_VISIBLE_DEVICES)"
    return error


def _load():
    global _api, _init_error
    with _lock:
        if _api is not None or _init_error is not None:
            return
        try:
            _choose_default_stream()
            from cuda.bindings import driver
            (err,) = driver.cuInit(0)
        except Exception as exc:      # ImportError, or the driver library is missing
            _init_error = f"{type(exc).__name__}: {exc}"
            return
        if err:
            _init_error = f"cuInit failed with {error_name(err, driver)}"
            return
        _api = driver


def _choose_default_stream():
    """SIMT_DEFAULT_STREAM=per-thread: cuda-bindings then calls the driver's per-thread
    default stream entry points (_ptds/_ptsz) wherever stream 0 is given. It reads its
    switch when it loads the driver, so the setting counts before the first GPU use."""
    import os
    from simt.config import config
    if config.default_stream == "per-thread":
        os.environ["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"


def error_name(err, driver=None):
    """'CUDA_ERROR_...' for a CUresult."""
    driver = driver or _api
    try:
        name_err, name = driver.cuGetErrorName(err)
        if not name_err:
            return name.decode()
    except Exception:
        pass
    return getattr(err, "name", str(err))


def _error_string(err):
    try:
        str_err, text = _api.cuGetErrorString(err)
        if not str_err:
            return text.decode()
    except Exception:
        pass
    return ""


def set_thread_device(ordinal):
    """Record which device's context this host thread has made current."""
    _local.device = ordinal


def thread_device():
    """The ordinal recorded by set_thread_device on this thread, or None."""
    return getattr(_local, "device", None)


def context_dead(ordinal=None):
    """The sticky-error message for the device (this thread's by default), or None."""
    if not _dead:
        return None
    return _dead.get(thread_device() if ordinal is None else ordinal)


def forget_dead(ordinal):
    """A device reset (cuDevicePrimaryCtxReset) made a new context: its calls may go on."""
    _dead.pop(ordinal, None)


def _unusable(name, ordinal):
    return ContextUnusableError(
        f"{name} on cuda:{ordinal}: an earlier {_dead[ordinal]} left the CUDA context "
        "unusable (as in CUDA); restart the process to use the GPU again")


def check(err, name, request=None):
    """Raise the simt exception for a failed CUresult ``err`` from driver call ``name``.

    ``request`` is the byte size asked for, added to out-of-memory messages.
    Returns quietly when ``err`` is CUDA_SUCCESS.
    """
    if not err:
        return
    ordinal = thread_device()
    if _dead and ordinal in _dead:
        raise _unusable(name, ordinal)
    cuda_name = error_name(err)
    cls, sticky, advice = _ERRORS.get(cuda_name, (CudaError, False, _error_string(err)))
    if cuda_name.startswith("CUDA_ERROR_STREAM_CAPTURE"):
        advice = capture_advice(cuda_name, name) or advice
    if cuda_name == "CUDA_ERROR_INVALID_VALUE" and name.startswith(_LAUNCH_CALLS):
        cls, advice = InvalidConfiguration, ("the launch configuration is invalid: check grid "
                                             "and block sizes and dynamic shared memory")
    if cuda_name == "CUDA_ERROR_NOT_SUPPORTED" and name.startswith(_LAUNCH_CALLS):
        cls, advice = LaunchError, _NOT_SUPPORTED_LAUNCH
    message = f"{name} failed with {cuda_name}"
    if cls is OutOfMemoryError:
        message += _oom_detail(request)
    if advice:
        message += f": {advice}"
    if not sticky:
        raise cls(message)
    _dead[ordinal] = cuda_name
    error = cls(f"{message}. {_RESTART}")
    recorded = recorded_errors.get(ordinal, lambda: None)()
    if recorded is None:
        raise error
    _dead[ordinal] = str(recorded).splitlines()[0]
    raise recorded from error


def _oom_detail(request):
    parts = []
    if request is not None:
        parts.append(f"{request} bytes requested")
    try:
        err, free, total = _api.cuMemGetInfo()
        if not err:
            parts.append(f"{free} of {total} bytes free")
    except Exception:
        pass
    return f" ({', '.join(parts)})" if parts else ""


def call(fn, *args, request=None):
    """Call a cuda.bindings driver function and check its CUresult.

    Returns None, the single result, or a tuple of results (the CUresult removed).
    """
    if _dead:
        ordinal = thread_device()
        if ordinal in _dead:
            raise _unusable(fn.__name__, ordinal)
    result = fn(*args)
    check(result[0], fn.__name__, request)
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


deferred_destroys = []     # (name, args, backend) kept by destroy for destroy_deferred


def _never():
    return False


# runtime.backend.in_host_function, set by device.py, and capture.under_way, set by
# capture.py (this module imports neither)
in_host_function = _never
capture_under_way = _never


def destroy(name, handle, *more, backend=None):
    """Free a driver object with ``name`` (cuStreamDestroy, cuModuleUnload, cuMemFreeAsync
    ...; ``handle`` and ``more`` its arguments) from a ``__del__``, with ``backend``'s context
    current if given: nothing when the handle or the context is gone. Kept for
    ``destroy_deferred`` (which the next allocation or synchronize runs) where the call
    must not happen now: on a stream host function's thread (or a driver callback thread,
    where the garbage collector may run it) it would wait for the stream that waits for
    that thread, and while a stream capture is under way the garbage collector may run it
    in the middle of the ``with`` block, where an unload's implicit synchronization or a
    free on the legacy stream invalidates the capture."""
    if handle is None or context_dead(None if backend is None else backend.index):
        return
    if in_host_function() or capture_under_way():
        deferred_destroys.append((name, (handle, *more), backend))
        return
    try:
        if backend is not None:
            backend.make_current()
        call(getattr(api(), name), handle, *more)
    except Exception:
        pass   # interpreter shutdown, or another thread's context: nothing to do


def destroy_deferred():
    """Destroy what host functions' threads dropped (see destroy)."""
    while deferred_destroys:
        name, args, backend = deferred_destroys.pop()
        destroy(name, *args, backend=backend)
