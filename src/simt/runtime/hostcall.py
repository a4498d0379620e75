"""``__host__ __device__``: a ``@simt.device`` function called from host Python.

The call compiles the function for the CPU device and runs it there, in a one-thread
kernel that calls it, so that it computes what it computes in a kernel: the same typing
(float32 stays float32, integers wrap, Python numbers are typed as kernel arguments are),
the same math library, the same bounds checks. The kernels below are that wrapper, one
per number of arguments (the kernel language has no ``f(*args)``); the result comes back
through a one-element array of the return type, which a first compile of the statement
form (``f(a0, ...)``, result dropped) finds.
"""
import numpy as np

from ..errors import NotSupportedError
from ..ir import nodes as ir, types as T, walk
from . import devices
from .launch import arg_types


def _void0(f):
    f()


def _void1(f, a0):
    f(a0)


def _void2(f, a0, a1):
    f(a0, a1)


def _void3(f, a0, a1, a2):
    f(a0, a1, a2)


def _void4(f, a0, a1, a2, a3):
    f(a0, a1, a2, a3)


def _void5(f, a0, a1, a2, a3, a4):
    f(a0, a1, a2, a3, a4)


def _void6(f, a0, a1, a2, a3, a4, a5):
    f(a0, a1, a2, a3, a4, a5)


def _value0(f, out):
    out[0] = f()


def _value1(f, out, a0):
    out[0] = f(a0)


def _value2(f, out, a0, a1):
    out[0] = f(a0, a1)


def _value3(f, out, a0, a1, a2):
    out[0] = f(a0, a1, a2)


def _value4(f, out, a0, a1, a2, a3):
    out[0] = f(a0, a1, a2, a3)


def _value5(f, out, a0, a1, a2, a3, a4):
    out[0] = f(a0, a1, a2, a3, a4)


def _value6(f, out, a0, a1, a2, a3, a4, a5):
    out[0] = f(a0, a1, a2, a3, a4, a5)


_VOID = [_void0, _void1, _void2, _void3, _void4, _void5, _void6]
_VALUE = [_value0, _value1, _value2, _value3, _value4, _value5, _value6]
_wrappers = {}       # the wrapper function -> its Kernel (made at the first host call)
HOST_DEVICE = "cpu"  # the device that runs host calls


def call(function, args, kernel_class):
    """``function(*args)`` on the host: its return value (a NumPy scalar of the type a
    kernel would get), or None for a function that returns nothing."""
    if len(args) >= len(_VOID):
        raise NotSupportedError(
            f"device function '{function.__name__}' called from the host with {len(args)} "
            f"arguments: host calls take at most {len(_VOID) - 1}; call it from a kernel")
    with devices.use_device(HOST_DEVICE) as device:
        statement = _kernel(_VOID[len(args)], kernel_class)
        returned = _return_type(statement, function, args, device)
        if returned == T.VOID:
            statement[1, 1](function, *args)
            devices.synchronize()
            return None
        if not isinstance(returned, T.Scalar):
            raise NotSupportedError(
                f"device function '{function.__name__}' returns {returned}: a host call "
                "returns numbers (or nothing); call it from a kernel for other values")
        out = np.empty(1, returned.dtype)
        _kernel(_VALUE[len(args)], kernel_class)[1, 1](function, out, *args)
        devices.synchronize()
        return out[0]


def _kernel(pyfunc, kernel_class):
    made = _wrappers.get(pyfunc)
    if made is None:
        made = _wrappers.setdefault(pyfunc, kernel_class(pyfunc))
    return made


def _return_type(statement, function, args, device):
    """The type the call returns for these arguments: its node in the typed IR of the
    statement wrapper (typed as a launch on ``device`` would type it)."""
    fn = statement.typed_ir(arg_types(statement, (function, *args)), device.backend.warp)
    for node in walk.walk(*fn.body):
        if isinstance(node, ir.CallDevice):
            return node.type
    raise AssertionError("the host-call wrapper calls no device function")
