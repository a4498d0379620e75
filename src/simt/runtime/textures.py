"""CUDA arrays, texture objects and surface objects (guide 3.2.12; API.md sections 5, 11).

``CudaArray(shape, dtype, channels=1, layered=False, surface=False, cubemap=False)`` holds
texels in NumPy order: x is the last axis of ``shape`` (before the channel axis, when
``channels`` is 2 or 4), y the one before, then z; a layered array has the layer
first, a cubemap its 6 faces (after the layer, when layered). ``MipmappedArray(shape,
dtype, levels)`` holds levels of halving extents. ``Texture(source, ...)`` reads a
CudaArray, a MipmappedArray, a 1D device array (linear memory,
fetched with ``tex.fetch(i)``) or a 2D device array whose rows are 32-byte aligned
(pitched memory). ``Surface(cuda_array)`` reads and writes a CudaArray made with
``surface=True``. Textures and surfaces are kernel arguments.

Each object's device half comes from its device's backend (``texture_array``,
``texture_object``, ``surface_object``): on the CPU device a CudaArray is a host buffer
and a texture a descriptor of it (backends/cpu/texmem.py); on a GPU they are a real
CUDA array and texture/surface objects (backends/cuda/textures.py).
"""
import functools
from typing import Any

import numpy as np

from ..ir import types as T
from ..lang.textures import TEXEL_DTYPES
from . import devices
from .arrays import DeviceArray, HostArray
from ..errors import NotSupportedError

FILTERS = ("point", "linear")
ADDRESS_MODES = ("clamp", "wrap", "mirror", "border")
READ_MODES = ("element", "normalized_float")
PITCH_ALIGNMENT = 32          # bytes per row of pitched 2D textures (texturePitchAlignment)


class CudaArray:
    """An opaque CUDA array of ``dtype`` texels with 1, 2 or 4 channels (cudaMalloc3DArray).

    ``cubemap=True`` makes a cubemap (cudaArrayCubemap): shape ``(6, w, w)``, the faces in
    the guide's order (+x, -x, +y, -y, +z, -z); with ``layered=True`` a cubemap layered
    array of shape ``(layers, 6, w, w)``.
    """

    def __init__(self, shape, dtype, channels=1, layered=False, surface=False, device=None,
                 cubemap=False):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        if self.dtype not in TEXEL_DTYPES:
            raise TypeError(f"CudaArray elements must be one of "
                            f"{', '.join(d.name for d in TEXEL_DTYPES)}; got {self.dtype.name}")
        if channels not in (1, 2, 4):
            raise ValueError(f"CudaArray channels must be 1, 2 or 4, got {channels}")
        if cubemap:
            _check_cubemap_shape(shape, layered)
            ndim, lead = 2, 1 + bool(layered)
        else:
            ndim, lead = len(shape) - bool(layered), int(bool(layered))
        if not (1 <= ndim <= (2 if layered else 3)) or min(shape, default=0) < 1:
            raise ValueError(f"a {'layered ' if layered else ''}CudaArray has shape "
                             f"{'(layers, [height,] width)' if layered else '([depth, [height,]] width)'}"
                             f" with every extent >= 1; got {shape}")
        self.shape, self.channels, self.ndim = shape, channels, ndim
        self.layered, self.surface, self.cubemap = bool(layered), bool(surface), bool(cubemap)
        self.lead_axes = lead          # axes before x, y, z: the layer, or (layer,) face
        self.device = devices.lookup(device)
        self._impl = self.device.backend.texture_array(self)

    @classmethod
    def _level(cls, mipmap, level, impl):
        """Level ``level`` of a MipmappedArray: a CudaArray over the level's texels."""
        self = cls.__new__(cls)
        self.dtype, self.channels, self.ndim = mipmap.dtype, mipmap.channels, mipmap.ndim
        self.shape = tuple(max(1, n >> level) for n in mipmap.shape)
        self.layered = self.surface = self.cubemap = False
        self.lead_axes, self.device, self.mipmap = 0, mipmap.device, mipmap
        self._impl = impl(self)
        return self

    @property
    def host_shape(self) -> "tuple[int, ...]":
        """The shape of host arrays copied in and out (with the channel axis if any)."""
        return self.shape + ((self.channels,) if self.channels > 1 else ())

    @property
    def extent(self) -> "tuple[int, ...]":
        """(width, height, depth, layers): CUDA's extents, 1 where a dimension is absent."""
        spatial = self.shape[self.lead_axes:]
        dims = list(reversed(spatial)) + [1] * (3 - self.ndim)
        return tuple(dims) + (int(np.prod(self.shape[:self.lead_axes], dtype=np.int64)),)

    def copy_from(self, source: Any, stream: Any = None) -> "CudaArray":
        """Fill the array from a host array or a device array of ``host_shape`` and its dtype."""
        if isinstance(source, DeviceArray):
            self._check_shape(source.shape, source.dtype)
            self._impl.copy_from_device(source)
            return self
        host = np.ascontiguousarray(source)
        self._check_shape(host.shape, host.dtype)
        self._impl.copy_from_host(host)
        return self

    def copy_to_host(self, out: Any = None, stream: Any = None) -> HostArray:
        """A host array of ``host_shape`` with the texels (cudaMemcpy3D from the array)."""
        out = np.empty(self.host_shape, self.dtype) if out is None else out
        self._check_shape(out.shape, out.dtype)
        self._impl.copy_to_host(out)
        return out

    def _check_shape(self, shape, dtype):
        if tuple(shape) != self.host_shape or np.dtype(dtype) != self.dtype:
            raise ValueError(f"CudaArray of shape {self.host_shape} and dtype {self.dtype.name} "
                             f"cannot copy an array of shape {tuple(shape)} and dtype "
                             f"{np.dtype(dtype).name}; convert it first")

    def __repr__(self):
        return (f"CudaArray(shape={self.shape}, dtype={self.dtype.name}, channels={self.channels}"
                f"{', layered' if self.layered else ''}{', cubemap' if self.cubemap else ''}"
                f"{', surface' if self.surface else ''}, device={self.device.name})")


def _check_cubemap_shape(shape, layered):
    want = "(layers, 6, w, w)" if layered else "(6, w, w)"
    lead = 2 if layered else 1
    if len(shape) != lead + 2 or shape[lead - 1] != 6 or shape[-1] != shape[-2] or \
            min(shape) < 1:
        raise ValueError(f"a {'layered ' if layered else ''}cubemap CudaArray has shape {want} "
                         f"(six square faces); got {shape}")


class MipmappedArray:
    """A CUDA mipmapped array (cudaMallocMipmappedArray): ``levels`` CUDA arrays, level l
    of extent max(1, floor(n / 2^l)) in each dimension of ``shape`` (1D, 2D or 3D, NumPy
    order). ``level(l)`` is level l as a CudaArray (cudaGetMipmappedArrayLevel) to copy
    texels in and out; a Texture over the mipmapped array filters between levels
    (``mipmap_filter``) at the level of detail tex1DLod/2DLod/3DLod/2DGrad ask for.
    """

    def __init__(self, shape, dtype, levels, channels=1, device=None):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        if self.dtype not in TEXEL_DTYPES:
            raise TypeError(f"MipmappedArray elements must be one of "
                            f"{', '.join(d.name for d in TEXEL_DTYPES)}; got {self.dtype.name}")
        if channels not in (1, 2, 4):
            raise ValueError(f"MipmappedArray channels must be 1, 2 or 4, got {channels}")
        if not 1 <= len(shape) <= 3 or min(shape) < 1:
            raise ValueError(f"a MipmappedArray has shape ([depth, [height,]] width) with "
                             f"every extent >= 1; got {shape}")
        most = 1 + int(max(shape)).bit_length() - 1           # 1 + floor(log2(max extent))
        if not 1 <= int(levels) <= most:
            raise ValueError(f"a MipmappedArray of shape {shape} has 1 to {most} levels "
                             f"(1 + floor(log2(max extent))); got levels={levels}")
        self.shape, self.channels, self.ndim, self.levels = shape, channels, len(shape), int(levels)
        self.layered = self.cubemap = self.surface = False
        self.device = devices.lookup(device)
        self._impl = self.device.backend.mipmapped_array(self)
        self._levels = [CudaArray._level(self, l, functools.partial(self._impl.level, l))
                        for l in range(self.levels)]

    @property
    def extent(self) -> "tuple[int, ...]":
        """Level 0's (width, height, depth, layers), 1 where a dimension is absent."""
        return tuple(reversed(self.shape)) + (1,) * (3 - self.ndim) + (1,)

    def level(self, level: int) -> CudaArray:
        """Level ``level`` (0 is the full size) as a CudaArray."""
        if not 0 <= level < self.levels:
            raise IndexError(f"MipmappedArray level {level} out of range [0, {self.levels})")
        return self._levels[level]

    def __repr__(self):
        return (f"MipmappedArray(shape={self.shape}, dtype={self.dtype.name}, "
                f"levels={self.levels}, channels={self.channels}, device={self.device.name})")


class Texture:
    """A texture object over a CudaArray, a MipmappedArray, 1D linear device memory or
    pitched 2D device memory.

    ``filter`` 'point' or 'linear' (linear needs float results: float texels or
    ``read_mode='normalized_float'``); ``address`` one mode or one per dimension
    ('clamp', 'wrap', 'mirror', 'border'; wrap and mirror need normalized coordinates);
    ``read_mode`` 'element' or 'normalized_float' (8- and 16-bit integers read as
    [0, 1] or [-1, 1]). Over a MipmappedArray (normalized coordinates only):
    ``mipmap_filter`` 'point' (nearest level) or 'linear' (between two levels), and the
    level of detail is lod + ``mipmap_level_bias`` clamped to [``min_mipmap_level_clamp``,
    ``max_mipmap_level_clamp``] (default: the last level) and to the levels there are.
    A cubemap CudaArray is always read with normalized coordinates (texCubemap).
    """

    def __init__(self, source, filter="point", address="clamp", normalized_coords=False,
                 read_mode="element", mipmap_filter="point", mipmap_level_bias=0.0,
                 min_mipmap_level_clamp=0.0, max_mipmap_level_clamp=None):
        self.source = source
        kind, ndim, layered, dtype, channels = _describe_source(source)
        cubemap = kind == "array" and source.cubemap
        normalized_coords = bool(normalized_coords) or cubemap
        addresses = (address,) * ndim if isinstance(address, str) else tuple(address)
        _check_modes(filter, addresses, ndim, normalized_coords, read_mode, dtype, kind)
        if kind == "mipmap":
            _check_modes(mipmap_filter, addresses, ndim, normalized_coords, read_mode, dtype,
                         kind)
            if not normalized_coords:
                raise ValueError("a texture over a MipmappedArray needs normalized_coords=True "
                                 "(each level has its own extent)")
            top = source.levels - 1 if max_mipmap_level_clamp is None else max_mipmap_level_clamp
            self.mipmap_levels = (float(mipmap_level_bias), float(min_mipmap_level_clamp),
                                  float(top))
        elif (mipmap_filter, mipmap_level_bias, min_mipmap_level_clamp,
              max_mipmap_level_clamp) != ("point", 0.0, 0.0, None):
            raise ValueError("mipmap_filter and the mipmap level bias and clamps apply to a "
                             "texture over a simt.MipmappedArray")
        self.device = source.device
        _sign(self, T.Texture(dtype, channels, ndim, layered, kind, filter, addresses,
                              normalized_coords, read_mode, cubemap,
                              mipmap_filter if kind == "mipmap" else None))
        self._handle = self.device.backend.texture_object(self)
        self._flat = _flat(self._handle)

    def __repr__(self):
        return f"Texture({self._simt_type!r}, device={self.device.name})"


class Surface:
    """A surface object over a CudaArray created with ``surface=True`` (cudaCreateSurfaceObject)."""

    def __init__(self, array):
        if not isinstance(array, CudaArray) or not array.surface:
            raise ValueError("simt.Surface needs a CudaArray created with surface=True")
        if array.layered and array.ndim == 1:
            raise NotSupportedError("1D layered surfaces (surf1DLayeredread/write) are not "
                                    "supported on any device; use a 2D CudaArray and "
                                    "surf2Dread/write with the layer as y")
        self.source = array
        self.device = array.device
        _sign(self, T.Surface(array.dtype, array.channels, array.ndim, array.layered,
                              array.cubemap))
        self._handle = self.device.backend.surface_object(self)
        self._flat = _flat(self._handle)

    def __repr__(self):
        return f"Surface({self._simt_type!r}, device={self.device.name})"


_SIG_CLASSES = {}   # (Texture or Surface, its type, device name) -> the subclass of such objects


def _sign(obj, simt_type):
    """Give a texture or surface the subclass of its type and device (named as its class:
    users never see it), as a DeviceArray's class records its signature: a launch function
    then knows the argument's type from its class alone (runtime/launch.py)."""
    base = type(obj)
    key = (base, simt_type, obj.device.name)
    cls = _SIG_CLASSES.get(key)
    if cls is None:
        cls = _SIG_CLASSES.setdefault(key, type(base.__name__, (base,), {
            "_sig": simt_type, "__module__": base.__module__, "__qualname__": base.__qualname__}))
    obj.__class__ = cls
    obj._simt_type = cls._sig


def _flat(handle):
    """A GPU kernel's parameters for a texture or surface: its object's 64-bit handle
    (backends/cuda/packlaunch.py reads them); none on devices without one."""
    value = getattr(handle, "value", None)
    return (value,) if isinstance(value, int) else ()


def _describe_source(source):
    """(source kind, ndim, layered, dtype, channels) of what a texture reads."""
    if isinstance(source, CudaArray):
        return "array", source.ndim, source.layered, source.dtype, source.channels
    if isinstance(source, MipmappedArray):
        return "mipmap", source.ndim, False, source.dtype, source.channels
    if not isinstance(source, DeviceArray):
        raise TypeError(f"a Texture reads a simt.CudaArray or a device array, not a "
                        f"{type(source).__name__}; copy host data in with simt.to_device or "
                        "CudaArray.copy_from")
    if source.dtype not in TEXEL_DTYPES:
        raise TypeError(f"texture texels must be one of {', '.join(d.name for d in TEXEL_DTYPES)}"
                        f"; got {source.dtype.name}")
    if source.ndim == 1:
        if source.strides[0] != source.itemsize:
            raise ValueError("a 1D texture over linear memory needs a contiguous device array")
        return "linear", 1, False, source.dtype, 1
    if source.ndim == 2:
        if source.strides[1] != source.itemsize or source.strides[0] % PITCH_ALIGNMENT:
            raise ValueError(f"a 2D texture over device memory needs contiguous rows whose "
                             f"pitch is a multiple of {PITCH_ALIGNMENT} bytes (got strides "
                             f"{source.strides}); pad the rows, or use a simt.CudaArray")
        return "pitch2d", 2, False, source.dtype, 1
    raise ValueError(f"a texture over device memory is 1D or 2D, got a {source.ndim}D array; "
                     "use a simt.CudaArray for 3D and layered textures")


def _check_modes(filter, addresses, ndim, normalized, read_mode, dtype, kind):
    if filter not in FILTERS:
        raise ValueError(f"filter={filter!r}: use 'point' or 'linear'")
    if read_mode not in READ_MODES:
        raise ValueError(f"read_mode={read_mode!r}: use 'element' or 'normalized_float'")
    if len(addresses) != ndim or any(a not in ADDRESS_MODES for a in addresses):
        raise ValueError(f"address={addresses!r}: give one of {ADDRESS_MODES} or one per "
                         f"dimension ({ndim})")
    if not normalized and any(a in ("wrap", "mirror") for a in addresses):
        raise ValueError("address modes 'wrap' and 'mirror' need normalized_coords=True "
                         "(as in CUDA)")
    if read_mode == "normalized_float" and not (dtype.kind in "iu" and dtype.itemsize <= 2):
        raise ValueError(f"read_mode='normalized_float' applies to 8- and 16-bit integer "
                         f"texels, not {dtype.name}")
    if filter == "linear" and read_mode == "element" and dtype.kind != "f":
        raise ValueError(f"linear filtering returns floats: use read_mode='normalized_float' "
                         f"for {dtype.name} texels, or filter='point'")
    if kind == "linear" and (filter != "point" or normalized):
        raise ValueError("a texture over linear memory is read with tex.fetch(i) (tex1Dfetch): "
                         "no filtering and no normalized coordinates; use a CudaArray for those")
