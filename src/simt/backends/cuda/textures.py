"""CUDA arrays, mipmapped arrays, texture objects and surface objects through the driver
API (cuArray3DCreate, cuMipmappedArrayCreate, cuMipmappedArrayGetLevel, cuMemcpy3D,
cuTexObjectCreate, cuSurfObjectCreate).

runtime/textures.py owns the user-facing objects and reaches these through the
backend's texture hooks (CudaBackend.texture_array, texture_object, surface_object);
this module owns their driver handles and frees them when the Python objects die.
"""
import numpy as np

from .driver import api, call, destroy

_FORMATS = {"int8": "CU_AD_FORMAT_SIGNED_INT8", "uint8": "CU_AD_FORMAT_UNSIGNED_INT8",
            "int16": "CU_AD_FORMAT_SIGNED_INT16", "uint16": "CU_AD_FORMAT_UNSIGNED_INT16",
            "int32": "CU_AD_FORMAT_SIGNED_INT32", "uint32": "CU_AD_FORMAT_UNSIGNED_INT32",
            "float16": "CU_AD_FORMAT_HALF", "float32": "CU_AD_FORMAT_FLOAT"}
_ADDRESS = {"wrap": "CU_TR_ADDRESS_MODE_WRAP", "clamp": "CU_TR_ADDRESS_MODE_CLAMP",
            "mirror": "CU_TR_ADDRESS_MODE_MIRROR", "border": "CU_TR_ADDRESS_MODE_BORDER"}
# driver flag values (cuda.h): CUDA_ARRAY3D_* and CU_TRSF_*
ARRAY3D_LAYERED, ARRAY3D_SURFACE_LDST, ARRAY3D_CUBEMAP, ARRAY3D_TEXTURE_GATHER = \
    0x01, 0x02, 0x04, 0x08
TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES = 0x01, 0x02
MAX_GATHER_EXTENT = 32768


def _format(dtype):
    return getattr(api().CUarray_format, _FORMATS[np.dtype(dtype).name])


def _array_descriptor(d, array, flags):
    """CUDA_ARRAY3D_DESCRIPTOR of a CudaArray or MipmappedArray (level 0's extents); a
    cubemap's depth is its 6 faces per layer."""
    width, height, depth, layers = array.extent
    desc = d.CUDA_ARRAY3D_DESCRIPTOR()
    desc.Width = width
    desc.Height = height if array.ndim >= 2 else 0
    desc.Depth = depth if array.ndim == 3 else \
        (layers if array.layered or array.cubemap else 0)
    desc.Format = _format(array.dtype)
    desc.NumChannels = array.channels
    desc.Flags = flags
    return desc


class GpuArray:
    """The CUarray of a runtime CudaArray (``handle`` given: a mipmapped array's level,
    which the mipmapped array owns)."""

    def __init__(self, backend, array, handle=None):
        d = api()
        backend.make_current()
        self.backend, self.array = backend, array
        if handle is not None:
            self.handle, self.owned = handle, False
            return
        width, height = array.extent[:2]
        flags = ARRAY3D_LAYERED if array.layered else 0
        flags |= ARRAY3D_CUBEMAP if array.cubemap else 0
        flags |= ARRAY3D_SURFACE_LDST if array.surface else 0
        if array.ndim == 2 and not array.layered and not array.surface and \
                not array.cubemap and max(width, height) <= MAX_GATHER_EXTENT:
            flags |= ARRAY3D_TEXTURE_GATHER        # so that tex2Dgather works on it
        self.handle = call(d.cuArray3DCreate, _array_descriptor(d, array, flags))
        self.owned = True

    def _copy_params(self):
        width, height, depth, layers = self.array.extent
        row = width * self.array.channels * self.array.dtype.itemsize
        rows = height if self.array.ndim >= 2 else 1
        slices = depth if self.array.ndim == 3 else layers
        return row, rows, slices

    def _memcpy(self, host_ptr=None, device_ptr=None, to_array=True):
        d = api()
        self.backend.make_current()
        row, rows, slices = self._copy_params()
        p = d.CUDA_MEMCPY3D()
        linear = d.CUmemorytype.CU_MEMORYTYPE_HOST if host_ptr is not None else \
            d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        side = "src" if to_array else "dst"
        other = "dst" if to_array else "src"
        setattr(p, side + "MemoryType", linear)
        if host_ptr is not None:
            setattr(p, side + "Host", host_ptr)
        else:
            setattr(p, side + "Device", d.CUdeviceptr(device_ptr))
        setattr(p, side + "Pitch", row)
        setattr(p, side + "Height", rows)
        setattr(p, other + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_ARRAY)
        setattr(p, other + "Array", self.handle)
        p.WidthInBytes, p.Height, p.Depth = row, rows, slices
        call(d.cuMemcpy3D, p)

    def copy_from_host(self, host):
        self._memcpy(host_ptr=host.ctypes.data, to_array=True)

    def copy_from_device(self, source):
        if not (source.flags["C_CONTIGUOUS"]):
            source = source.copy()
        self._memcpy(device_ptr=source.ptr, to_array=True)

    def copy_to_host(self, out):
        host = out if out.flags["C_CONTIGUOUS"] else np.empty(out.shape, out.dtype)
        self.backend.synchronize()
        self._memcpy(host_ptr=host.ctypes.data, to_array=False)
        if host is not out:
            out[...] = host

    def __del__(self):
        if getattr(self, "owned", False):
            _destroy(self, "cuArrayDestroy")


class GpuMipmap:
    """The CUmipmappedArray of a runtime MipmappedArray; ``level(l, array)`` wraps the
    CUarray of level l (cuMipmappedArrayGetLevel) for copies."""

    def __init__(self, backend, mipmap):
        d = api()
        backend.make_current()
        self.backend = backend
        self.handle = call(d.cuMipmappedArrayCreate, _array_descriptor(d, mipmap, 0),
                           mipmap.levels)

    def level(self, index, array):
        self.backend.make_current()
        handle = call(api().cuMipmappedArrayGetLevel, self.handle, index)
        return GpuArray(self.backend, array, handle=handle)

    def __del__(self):
        _destroy(self, "cuMipmappedArrayDestroy")


def _resource(d, source, kind):
    """CUDA_RESOURCE_DESC of a texture's or surface's source (``kind`` 'array', 'linear'
    or 'pitch2d': a CudaArray, a 1D or a pitched 2D device array)."""
    res = d.CUDA_RESOURCE_DESC()
    if kind == "array":
        res.resType = d.CUresourcetype.CU_RESOURCE_TYPE_ARRAY
        res.res.array.hArray = source._impl.handle
    elif kind == "mipmap":
        res.resType = d.CUresourcetype.CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
        res.res.mipmap.hMipmappedArray = source._impl.handle
    elif kind == "linear":
        res.resType = d.CUresourcetype.CU_RESOURCE_TYPE_LINEAR
        res.res.linear.devPtr = d.CUdeviceptr(source.ptr)
        res.res.linear.format = _format(source.dtype)
        res.res.linear.numChannels = 1
        res.res.linear.sizeInBytes = source.nbytes
    else:
        res.resType = d.CUresourcetype.CU_RESOURCE_TYPE_PITCH2D
        res.res.pitch2D.devPtr = d.CUdeviceptr(source.ptr)
        res.res.pitch2D.format = _format(source.dtype)
        res.res.pitch2D.numChannels = 1
        res.res.pitch2D.width = source.shape[1]
        res.res.pitch2D.height = source.shape[0]
        res.res.pitch2D.pitchInBytes = source.strides[0]
    return res


class TextureObject:
    """A CUtexObject for a runtime Texture; ``value`` is the 64-bit handle kernels get."""

    def __init__(self, backend, texture):
        d = api()
        backend.make_current()
        self.backend = backend
        t = texture._simt_type
        desc = d.CUDA_TEXTURE_DESC()
        modes = [getattr(d.CUaddress_mode, _ADDRESS[m]) for m in t.address]
        desc.addressMode = modes + [modes[-1]] * (3 - len(modes))
        desc.filterMode = _filter(d, t.filter)
        if t.source == "mipmap":
            desc.mipmapFilterMode = _filter(d, t.mipmap_filter)
            (desc.mipmapLevelBias, desc.minMipmapLevelClamp,
             desc.maxMipmapLevelClamp) = texture.mipmap_levels
        flags = TRSF_NORMALIZED_COORDINATES if t.normalized_coords else 0
        if t.read_mode == "element" and t.dtype.kind in "iu":
            flags |= TRSF_READ_AS_INTEGER
        desc.flags = flags
        desc.borderColor = [0.0, 0.0, 0.0, 0.0]
        self.handle = call(d.cuTexObjectCreate, _resource(d, texture.source, t.source), desc, None)
        self.value = int(self.handle)

    def __del__(self):
        _destroy(self, "cuTexObjectDestroy")


def _filter(d, mode):
    return (d.CUfilter_mode.CU_TR_FILTER_MODE_LINEAR if mode == "linear"
            else d.CUfilter_mode.CU_TR_FILTER_MODE_POINT)


class SurfaceObject:
    """A CUsurfObject for a runtime Surface."""

    def __init__(self, backend, surface):
        d = api()
        backend.make_current()
        self.backend = backend
        self.handle = call(d.cuSurfObjectCreate, _resource(d, surface.source, "array"))
        self.value = int(self.handle)

    def __del__(self):
        _destroy(self, "cuSurfObjectDestroy")


def _destroy(obj, fn_name):
    backend = getattr(obj, "backend", None)
    if backend is not None:
        destroy(fn_name, getattr(obj, "handle", None), backend=backend)
