"""The launch path: ``kernel[grid, block, shared_bytes, stream](*args)``: the launch
configuration, its checks, the arguments' types, and the handing out of launch
functions (binder.py) from a configuration's second launch on."""
import numpy as np

from ..ir import types as T
from .devices import _local, get_device
from ..errors import InvalidConfiguration
from .streams import stream_handle
from ..lazy import lazy_module

binder = lazy_module("simt.runtime.binder")         # loaded at a second launch
access = lazy_module("simt.runtime.access")         # loaded at a first launch


def dim3_tuple(value, what):
    """(x, y, z) from an int, a tuple of 1-3 ints or a dim3."""
    if isinstance(value, (int, np.integer)):
        dims = (int(value), 1, 1)
    elif hasattr(value, "x") and hasattr(value, "y"):
        dims = (int(value.x), int(value.y), int(getattr(value, "z", 1)))
    else:
        try:
            items = tuple(int(v) for v in value)
        except TypeError:
            raise InvalidConfiguration(f"the {what} must be an int, a tuple of 1 to 3 ints or a "
                                       f"simt.dim3, got {value!r}") from None
        if not 1 <= len(items) <= 3:
            raise InvalidConfiguration(f"the {what} has {len(items)} dimensions; CUDA allows 1 to 3")
        dims = items + (1,) * (3 - len(items))
    if min(dims) < 1:
        raise InvalidConfiguration(f"the {what} {dims} has a dimension below 1; every "
                                   "dimension must be at least 1")
    return dims


class dim3:
    """CUDA's dim3: ``simt.dim3(x, y=1, z=1)``."""

    def __init__(self, x=1, y=1, z=1):
        self.x, self.y, self.z = int(x), int(y), int(z)

    def __iter__(self):
        return iter((self.x, self.y, self.z))

    def __repr__(self):
        return f"dim3({self.x}, {self.y}, {self.z})"


def check_config(kernel_name, device, grid, block, shared_bytes, static_shared=0):
    p = device.properties
    threads = block[0] * block[1] * block[2]
    where = f"launching '{kernel_name}' on {device.name}"
    if threads > p.max_threads_per_block:
        raise InvalidConfiguration(f"{where}: a block of {block} has {threads} threads; the "
                                   f"device allows {p.max_threads_per_block} per block. Use "
                                   "smaller blocks and more of them")
    for axis, (n, limit) in enumerate(zip(block, p.max_block_dim)):
        if n > limit:
            raise InvalidConfiguration(f"{where}: block dimension {'xyz'[axis]} is {n}, over the "
                                       f"device's limit of {limit}")
    for axis, (n, limit) in enumerate(zip(grid, p.max_grid_dim)):
        if n > limit:
            raise InvalidConfiguration(f"{where}: grid dimension {'xyz'[axis]} is {n}, over the "
                                       f"device's limit of {limit}")
    limit = getattr(p, "shared_memory_per_block_optin", 0) or p.shared_memory_per_block
    total = shared_bytes + static_shared
    if shared_bytes < 0 or total > limit:
        raise InvalidConfiguration(f"{where}: {total} bytes of shared memory per block "
                                   f"({static_shared} static + {shared_bytes} dynamic); the device "
                                   f"allows {limit}")


def arg_type(value):
    simt_type = getattr(value, "simt_type", None)
    if simt_type is not None:
        return simt_type()
    if isinstance(value, (np.ndarray,)) or hasattr(value, "__cuda_array_interface__") or \
            (hasattr(value, "ptr") and hasattr(value, "shape")):
        return T.Array(value.dtype, value.ndim, T.layout_of(value))
    return T.typeof(value)


class Launch:
    """A kernel with its launch configuration, called with the arguments.

    A call with new argument types on a device goes the full way (types, compile,
    configuration checks); from the second call of a configuration on, that also asks
    the backend for its native launch and has binder.py write a launch function for the
    signature; ``kernel[...]`` then hands out that
    function, which checks its arguments' classes (a DeviceArray's class records its
    dtype, ndim and layout) and the current device, and falls back to this object's
    full path when they differ."""

    def __init__(self, kernel, grid, block, shared_bytes=0, stream=None):
        self.kernel = kernel
        self.grid = dim3_tuple(grid, "grid")
        self.block = dim3_tuple(block, "block")
        self.shared_bytes = int(shared_bytes or 0)
        self.stream = stream
        self.prepared = {}      # argument classes -> (device, launch function)
        self.call = self        # what kernel[...] returns: the latest prepared launch
        self.used = False       # launched before: a configuration met once is not prepared

    def __call__(self, *args):
        entry = self.prepared.get(tuple(map(type, args)))
        if entry is not None and entry[0] is getattr(_local, "device", None):
            self.call = entry[1]
            entry[1](*args)
        else:
            self._launch(get_device(), args)

    def _launch(self, device, args):
        kernel = self.kernel
        nparams = kernel.pyfunc.__code__.co_argcount
        if len(args) != nparams:
            raise TypeError(f"kernel '{kernel.__name__}' takes {nparams} arguments, got {len(args)}")
        try:
            types = [arg_type(a) for a in args]
        except TypeError as exc:
            raise TypeError(f"kernel '{kernel.__name__}': {exc}") from None
        loaded = kernel.binary_for(types, device)
        access.check_writes(kernel, types, args)
        check_config(kernel.__name__, device, self.grid, self.block, self.shared_bytes,
                     loaded.binary.shared_static_bytes)
        stream = self.stream
        if stream is not None:
            stream = stream_handle(stream, device, f"launching '{kernel.__name__}'")
        backend = device.backend
        backend.run_launch(kernel, loaded, self.grid, self.block, self.shared_bytes,
                           stream, args)
        used, self.used = self.used, True
        if used and types_fixed_by_class(types, args):
            native = backend.native_launch(kernel, loaded, types, self.grid, self.block,
                                           self.shared_bytes, stream)
            if native is not None:
                classes = tuple(map(type, args))
                fast = binder.bind(kernel.__name__, classes, device, self.__call__, native)
                if len(self.prepared) >= 16:
                    self.prepared.clear()
                self.prepared[classes] = (device, fast)
                self.call = fast


def types_fixed_by_class(types, args):
    """Whether each argument's Python type alone fixes its kernel type: scalars, and
    DeviceArrays (one class per dtype, ndim and layout). A NumPy or foreign array, a
    tuple or a texture always takes the full path."""
    for t, a in zip(types, args):
        if isinstance(t, T.Array):
            if getattr(type(a), "_sig", None) is not t:
                return False
        elif not isinstance(t, T.Scalar):
            return False
    return True
