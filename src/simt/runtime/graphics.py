"""Graphics interop (guide 3.2.13): a graphics API's resource registered with a device,
mapped for kernels as a DeviceArray and unmapped for the graphics API again.

``GraphicsResource`` is what ``simt.gl.register_buffer`` returns (the OpenGL part lives
in simt/gl/); the device's back end does the driver calls (``register_gl_buffer``).
GPU only: the other devices refuse with NotSupportedError.
"""
import contextlib
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np
from numpy.typing import DTypeLike

from . import devices
from .arrays import DeviceArray
from .backend import Allocation

FLAGS = ("none", "read_only", "write_discard")


class GraphicsResource:
    """A registered graphics resource (cudaGraphicsResource). ``map()`` gives kernels its
    memory as a DeviceArray, ``unmap()`` hands it back to the graphics API, ``unregister()``
    (or the end of a ``with`` block over the resource) releases it."""

    def __init__(self, impl: Any, device: Any, flags: str, what: str):
        self.impl, self.device, self.flags, self.what = impl, device, flags, what
        self._mapped: Optional[tuple] = None       # (address, bytes) while mapped

    @property
    def is_mapped(self) -> bool:
        """Whether the resource is mapped for CUDA now."""
        return self._mapped is not None

    @property
    def size(self) -> int:
        """Bytes of the mapped memory (cudaGraphicsResourceGetMappedPointer's size)."""
        return self._require_mapped("size")[1]

    def map(self, stream: Any = None, dtype: DTypeLike = np.uint8,
            shape: Union[int, Sequence[int], None] = None) -> DeviceArray:
        """Map the resource for CUDA in ``stream``'s order (cudaGraphicsMapResources: the
        graphics API's earlier work finishes before the stream's later work starts) and
        return its memory as a DeviceArray (cudaGraphicsResourceGetMappedPointer) of
        ``dtype`` and ``shape`` (default: 1-D over the whole buffer). The graphics API
        must not use the resource until ``unmap``."""
        if self._mapped is not None:
            raise RuntimeError(f"{self.what} is mapped already; unmap() it first (CUDA "
                               "refuses to map a mapped resource)")
        self._require_registered("map")
        handle = devices.stream_handle_of(stream, self.device, f"mapping {self.what}")
        self.impl.map(handle)
        try:
            self._mapped = self.impl.pointer()
            return self.array(dtype, shape)
        except BaseException:
            self._mapped = (0, 0)           # mapped, even where the pointer was refused
            self.unmap(stream)
            raise

    def array(self, dtype: DTypeLike = np.uint8,
              shape: Union[int, Sequence[int], None] = None) -> DeviceArray:
        """The mapped memory as a DeviceArray of ``dtype`` and ``shape`` (again; the
        address can change from one mapping to the next, so take it after each map)."""
        ptr, nbytes = self._require_mapped("array")
        dtype = np.dtype(dtype)
        if shape is None:
            if nbytes % dtype.itemsize:
                raise ValueError(f"{self.what} holds {nbytes} bytes, not a whole number of "
                                 f"{dtype} elements; give a shape")
            shape = (nbytes // dtype.itemsize,)
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
        need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if need > nbytes:
            raise ValueError(f"a {shape} array of {dtype} needs {need} bytes; {self.what} "
                             f"holds {nbytes}")
        alloc = Allocation(ptr, nbytes, self.device.backend, keepalive=self.impl)
        array = DeviceArray(shape, dtype, alloc=alloc, device=self.device)
        if self.flags == "read_only":
            array.readonly = True
        return array

    def unmap(self, stream: Any = None) -> None:
        """Hand the resource back to the graphics API (cudaGraphicsUnmapResources): the
        stream's earlier work finishes before the graphics API's later work starts. Arrays
        from ``map`` must not be used afterwards (CUDA does not catch that)."""
        self._require_mapped("unmap")
        handle = devices.stream_handle_of(stream, self.device, f"unmapping {self.what}")
        self.impl.unmap(handle)
        self._mapped = None

    @contextlib.contextmanager
    def mapped(self, stream: Any = None, dtype: DTypeLike = np.uint8,
               shape: Union[int, Sequence[int], None] = None) -> Iterator[DeviceArray]:
        """``with resource.mapped(stream, dtype, shape) as array:`` maps, gives the
        DeviceArray, and unmaps at the end of the block (in ``stream``'s order)."""
        array = self.map(stream, dtype, shape)
        try:
            yield array
        finally:
            if self._mapped is not None:
                self.unmap(stream)

    def unregister(self) -> None:
        """Release the registration (cudaGraphicsUnregisterResource), unmapping first
        if mapped. Later calls do nothing."""
        if self.impl is None:
            return
        if self._mapped is not None:
            self.unmap()
        impl, self.impl = self.impl, None
        impl.unregister()

    def __enter__(self) -> "GraphicsResource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()

    def _require_registered(self, what):
        if self.impl is None:
            raise RuntimeError(f"{what}: {self.what} was unregistered; register the buffer "
                               "again")

    def _require_mapped(self, what):
        self._require_registered(what)
        if self._mapped is None:
            raise RuntimeError(f"{what}: {self.what} is not mapped; call map() first "
                               "(or use `with resource.mapped() as array:`)")
        return self._mapped

    def __repr__(self):
        state = "unregistered" if self.impl is None else \
            "mapped" if self._mapped is not None else "registered"
        return f"<simt GraphicsResource {self.what} on {self.device.name}, {state}>"


def require_gpu(device: Any, feature: str) -> None:
    """NotSupportedError naming ``feature`` and ``device`` unless it is a GPU."""
    backend = device.backend
    if not backend.cuda_pointers:
        raise backend.unsupported(f"{feature}{backend._GPU_ONLY}")
