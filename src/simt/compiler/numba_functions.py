"""numba's CPU functions called in ``cuda.jit`` kernels: numba-cuda compiles a function
made by ``@numba.jit`` / ``@numba.njit`` as a device function when a kernel calls it, so
one function serves the CPU and the GPU. Here such a dispatcher (numba installed, its
``py_func`` the Python function) is called as a device function made from that Python
function, once per dispatcher. simt.kernel code refuses it, as any Python callable."""
import weakref

from ..lang.registry import PlainDeviceFunction

_made = weakref.WeakKeyDictionary()


def device_function(fc, callee):
    """The device function for numba CPU dispatcher ``callee`` in cuda.jit code, or None."""
    if not fc.wraparound or not type(callee).__module__.startswith("numba.") or \
            not callable(getattr(callee, "py_func", None)):
        return None
    try:
        made = _made.get(callee)
    except TypeError:
        return PlainDeviceFunction(callee.py_func)
    if made is None:
        made = _made[callee] = PlainDeviceFunction(callee.py_func)
    return made
