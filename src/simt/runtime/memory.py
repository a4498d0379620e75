"""Memory beyond plain arrays (issue 14 item 7; API.md sections 3 and 10): pitched
allocations, 2-D and 3-D copies between any two of host arrays, device arrays, pitched
arrays and CUDA arrays, page-locking an existing NumPy array, and memset of 8-, 16- and
32-bit values.

A copy is described as CUDA's cudaMemcpy3D describes it: per side, what the memory is
('host', 'device' or 'array'), where it starts, the bytes from one row to the next
(pitch) and the rows from one slice to the next; and the extent, (row bytes, rows,
slices). The backend's ``copy_3d`` moves it (cuMemcpy3D on a GPU).
"""
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from . import devices, memrecords
from .arrays import DeviceArray, DeviceSpec, HostArray, Shape, _normalize_shape
from .textures import CudaArray
from .graphs import element_bits
from ..lang import devmem, registry


class Side:
    """One side of a 2-D/3-D copy: kind ('host', 'device', 'array'), where (an address,
    or the CudaArray's backend object), pitch (bytes per row) and height (rows per slice)."""

    def __init__(self, kind, where, pitch, height):
        self.kind, self.where, self.pitch, self.height = kind, where, pitch, height


def pitched_array(shape: Shape, dtype: DTypeLike = np.float64,
                  device: DeviceSpec = None) -> DeviceArray:
    """A 2-D (height, width) or 3-D (depth, height, width) device array whose rows start
    ``pitch`` bytes apart, padded for aligned access (cudaMallocPitch, cudaMalloc3D).
    ``array.pitch`` is that row pitch; ``array.strides`` are (pitch, itemsize) or
    (height * pitch, pitch, itemsize)."""
    shape, dtype = _normalize_shape(shape), np.dtype(dtype)
    if len(shape) not in (2, 3) or 0 in shape:
        raise ValueError(f"pitched_array takes a (height, width) or (depth, height, width) "
                         f"shape with no zero extent, got {shape}")
    device = devices.lookup(device)
    rows = int(np.prod(shape[:-1]))
    alloc, pitch = device.backend.alloc_pitch(shape[-1] * dtype.itemsize, rows,
                                              dtype.itemsize)
    strides = (pitch, dtype.itemsize) if len(shape) == 2 else \
        (shape[1] * pitch, pitch, dtype.itemsize)
    return DeviceArray(shape, dtype, strides, alloc=alloc, device=device)


def copy_2d(dst: Any, src: Any, stream: Any = None) -> Any:
    """Copy the 2-D array ``src`` into ``dst`` (cudaMemcpy2D): each a NumPy array, a device
    array (pitched or not) or a 2-D CudaArray of one channel, of one shape and dtype, with
    contiguous rows. On a stream, the copy is ordered in it (cudaMemcpy2DAsync)."""
    _copy(dst, src, stream, 2, "copy_2d")
    return dst


def copy_3d(dst: Any, src: Any, stream: Any = None) -> Any:
    """Copy the 3-D array ``src`` into ``dst`` (cudaMemcpy3D), as copy_2d does in 2-D: a
    3-D or layered CudaArray, or arrays whose slices are ``height`` rows of ``pitch``."""
    _copy(dst, src, stream, 3, "copy_3d")
    return dst


def _copy(dst, src, stream, ndim, what):
    device = _device_of(dst, src, what)
    shape, dtype = _shape(dst, ndim, what, "dst"), _dtype(dst)
    if _shape(src, ndim, what, "src") != shape or _dtype(src) != dtype:
        raise ValueError(f"{what}: dst is {dtype} {shape}, src {_dtype(src)} "
                         f"{_shape(src, ndim, what, 'src')}; a copy needs one shape and "
                         "dtype (copies do not convert)")
    if isinstance(dst, np.ndarray) and not dst.flags.writeable:
        raise ValueError(f"{what}: dst is a read-only NumPy array")
    width = shape[-1] * dtype.itemsize
    extent = (width, shape[-2], shape[0] if ndim == 3 else 1)
    handle = devices.stream_handle_of(stream, device, what)
    if 0 in shape:
        return
    device.backend.copy_3d(_side(dst, ndim, what, "dst"), _side(src, ndim, what, "src"),
                           extent, handle)


def _device_of(dst, src, what):
    """The device that does the copy: that of its device side (they must agree)."""
    found = {a.device for a in (dst, src) if isinstance(a, (DeviceArray, CudaArray))}
    if len(found) > 1:
        raise ValueError(f"{what}: dst and src live on different devices "
                         f"({', '.join(sorted(d.name for d in found))})")
    return found.pop() if found else devices.get_device()


def _dtype(array):
    return np.dtype(array.dtype)


def _shape(array, ndim, what, name):
    if isinstance(array, CudaArray):
        if array.channels != 1:
            raise ValueError(f"{what}: {name} is a CudaArray of {array.channels} channels; "
                             "2-D/3-D copies move 1-channel CUDA arrays (use "
                             "CudaArray.copy_from and copy_to_host for the others)")
        shape = array.shape
    elif isinstance(array, (DeviceArray, np.ndarray)):
        shape = tuple(array.shape)
    else:
        raise TypeError(f"{what}: {name} must be a NumPy array, a device array or a "
                        f"simt.CudaArray, got {type(array).__name__}")
    if len(shape) != ndim:
        raise ValueError(f"{what} copies {ndim}-D arrays; {name} has shape {shape}")
    return shape


def _side(array, ndim, what, name):
    if isinstance(array, CudaArray):
        row = array.shape[-1] * array.dtype.itemsize
        return Side("array", array._impl, row, array.shape[-2])
    strides = tuple(array.strides)
    itemsize = array.dtype.itemsize
    pitch = strides[-2]
    height, rest = divmod(strides[0], pitch) if ndim == 3 and pitch else (array.shape[-2], 0)
    if strides[-1] != itemsize or pitch < array.shape[-1] * itemsize or rest or \
            height < array.shape[-2]:
        raise ValueError(f"{what}: {name} (strides {strides}) does not have contiguous rows "
                         "at a fixed pitch (and, in 3-D, slices a whole number of rows "
                         "apart); copy it to such an array first (np.ascontiguousarray)")
    if isinstance(array, DeviceArray):
        return Side("device", array.ptr, pitch, height)
    return Side("host", array.ctypes.data, pitch, height)


def host_register(array: HostArray) -> HostArray:
    """Page-lock an existing NumPy array's memory (cudaHostRegister), so that copies with
    it on a stream are asynchronous, as with simt.pinned_array; returns the array. On the
    CPU device host memory is the device's memory already: registering changes nothing
    but makes stream copies with it asynchronous, as on a GPU. Undo with host_unregister."""
    device = devices.get_device()
    device.backend.host_register(_host_span(array, "host_register"))
    memrecords.record(array, array.ctypes.data, array.nbytes, "host", device)
    return array


def host_unregister(array: HostArray) -> None:
    """Undo host_register (cudaHostUnregister) for the same array."""
    devices.get_device().backend.host_unregister(_host_span(array, "host_unregister"))
    memrecords.forget(array.ctypes.data)


def _host_span(array, what):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what} takes a NumPy array, got {type(array).__name__}")
    if not array.flags.c_contiguous and not array.flags.f_contiguous:
        raise ValueError(f"{what}: the array is not contiguous; register its base array")
    return array


def memset(array: DeviceArray, value: int, stream: Any = None) -> DeviceArray:
    """Set every element of a contiguous device array of 1-, 2- or 4-byte elements to
    ``value`` (cudaMemsetD8/D16/D32; a float32 array takes the bits of float32(value)),
    in the order of ``stream``. In a kernel, ``simt.memset(dst, value, n)`` sets n
    elements of a 1-d array (lang/devmem.py)."""
    bits, size = element_bits(array, value, "memset")
    handle = devices.stream_handle_of(stream, array.device, "memset")
    if array.size:
        array.device.backend.memset_elements(array.ptr, bits, size, array.size, handle)
    return array


registry.also_callable(memset, devmem.memset)     # simt.memset(dst, value, n) in kernels
