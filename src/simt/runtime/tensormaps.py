"""TMA tensor maps (CUDA's ``cuTensorMapEncodeTiled``): ``simt.tensor_map(array, box,
swizzle=None, oob_fill='zero')`` describes a tiled view of a device array that kernels
copy a box at a time with ``simt.tma.load`` and ``simt.tma.store`` (lang/tma.py).

``box`` is in NumPy axis order (slowest first), as every n-d simt API; the driver's order
is the reverse, and simt reverses it. The GPU gets the driver's 128-byte CUtensorMap as a
kernel parameter (backends/cuda/tensormaps.py); the CPU device gets the description (base
address, extents, byte strides) and emulates the copies with the same swizzle."""
from typing import Any

import numpy as np

from ..ir import types as T

SWIZZLES = {None: "none", "none": "none", "32B": "32B", "64B": "64B", "128B": "128B"}
SPAN = {"none": None, "32B": 32, "64B": 64, "128B": 128}    # bytes of a swizzled box row
FILLS = ("zero", "nan")
MAX_RANK = 5
MAX_BOX = 256


class TensorMap:
    """A tiled tensor map over a device array: pass it to a kernel, use it with
    ``simt.tma.load`` / ``simt.tma.store``. ``shape`` and ``strides`` (bytes) are the
    array's; ``box`` the extents of one copy, NumPy axis order."""

    def __init__(self, array, box, swizzle=None, oob_fill="zero"):
        dtype = _check_array(array)
        box = _check_box(array, box)
        if swizzle not in SWIZZLES:
            raise ValueError(f"simt.tensor_map: swizzle must be None, '32B', '64B' or '128B', "
                             f"got {swizzle!r}")
        swizzle = SWIZZLES[swizzle]
        _check_swizzle(box, dtype, swizzle)
        if oob_fill not in FILLS:
            raise ValueError(f"simt.tensor_map: oob_fill must be 'zero' or 'nan', got "
                             f"{oob_fill!r}")
        if oob_fill == "nan" and dtype.kind != "f" and not T.is_bfloat16_dtype(dtype):
            raise ValueError(f"simt.tensor_map: oob_fill='nan' needs a floating-point "
                             f"array, not {dtype.name}")
        self.array = array                 # kept alive while the map is
        self.device = array.device
        self.ptr = int(array.ptr)
        self.shape = tuple(int(n) for n in array.shape)
        self.strides = tuple(int(s) for s in array.strides)
        self.box, self.swizzle, self.oob_fill = box, swizzle, oob_fill
        self._simt_type = T.TensorMap(dtype, len(box), box, swizzle, oob_fill)
        self._descriptor = self.device.backend.tensor_map(self)

    def simt_type(self):
        """Its kernel parameter type (runtime/launch.py)."""
        return self._simt_type

    @property
    def dtype(self) -> "np.dtype[Any]":
        return self._simt_type.dtype

    def __repr__(self):
        return (f"TensorMap(shape={self.shape}, dtype={self.dtype.name}, box={self.box}, "
                f"swizzle={self.swizzle}, device={self.device.name})")


def tensor_map(array: Any, box: Any, swizzle: Any = None, oob_fill: str = "zero") -> "TensorMap":
    """A TMA tensor map over ``array`` (a simt DeviceArray of 1 to 5 dimensions whose last
    axis is contiguous) copying boxes of extents ``box`` (NumPy axis order, each at most
    256; the innermost ``box[-1] * itemsize`` a multiple of 16 bytes and, with a swizzle,
    at most its span: 32, 64 or 128 bytes). The array's base address and its strides
    must be multiples of 16 bytes. Out-of-bounds elements read as zero (``oob_fill='nan'``:
    NaN, for floating-point arrays) and are not written by stores."""
    return TensorMap(array, box, swizzle, oob_fill)


def _check_array(array):
    from .arrays import DeviceArray
    if not isinstance(array, DeviceArray):
        raise ValueError(f"simt.tensor_map needs a simt DeviceArray (simt.to_device(...)), "
                         f"got {type(array).__name__}")
    dtype = T.element_type(array.dtype)
    if not isinstance(dtype, T.Scalar) or dtype.kind not in "iuf" or \
            dtype.dtype.itemsize not in (1, 2, 4, 8):
        raise ValueError(f"simt.tensor_map: elements of {array.dtype} cannot be copied by "
                         "TMA: use 1-, 2-, 4- or 8-byte integers or floats")
    if not 1 <= array.ndim <= MAX_RANK:
        raise ValueError(f"simt.tensor_map: the array has {array.ndim} dimensions; TMA "
                         f"takes 1 to {MAX_RANK}")
    item = array.dtype.itemsize
    if array.strides[-1] != item:
        raise ValueError(f"simt.tensor_map: the array's last axis must be contiguous (stride "
                         f"{item} bytes), got stride {array.strides[-1]}")
    if int(array.ptr) % 16:
        raise ValueError(f"simt.tensor_map: the array's base address must be 16-byte aligned "
                         f"(it is {int(array.ptr):#x})")
    for axis, stride in enumerate(array.strides[:-1]):
        if stride % 16 or stride <= 0 or stride >= 1 << 40:
            raise ValueError(f"simt.tensor_map: every stride but the last must be a positive "
                             f"multiple of 16 bytes below 2**40; axis {axis} has {stride}")
    if any(n <= 0 or n > 1 << 32 for n in array.shape):
        raise ValueError(f"simt.tensor_map: extents must be 1 to 2**32, got {array.shape}")
    return dtype.dtype


def _check_box(array, box):
    box = (box,) if isinstance(box, (int, np.integer)) else tuple(box)
    if len(box) != array.ndim:
        raise ValueError(f"simt.tensor_map: box {box} needs one extent per dimension of the "
                         f"{array.ndim}-d array (NumPy axis order, slowest first)")
    if any(not isinstance(b, (int, np.integer)) or not 1 <= b <= MAX_BOX for b in box):
        raise ValueError(f"simt.tensor_map: box extents must be integers 1 to {MAX_BOX}, "
                         f"got {box}")
    inner = box[-1] * array.dtype.itemsize
    if inner % 16:
        raise ValueError(f"simt.tensor_map: the box's innermost extent times the itemsize "
                         f"must be a multiple of 16 bytes, got {box[-1]} x "
                         f"{array.dtype.itemsize} = {inner}")
    return tuple(int(b) for b in box)


def _check_swizzle(box, dtype, swizzle):
    span, inner = SPAN[swizzle], box[-1] * dtype.itemsize
    if span is not None and inner > span:
        raise ValueError(f"simt.tensor_map: with swizzle {swizzle!r} the box's innermost "
                         f"extent times the itemsize must be at most {span} bytes, got "
                         f"{box[-1]} x {dtype.itemsize} = {inner}")
