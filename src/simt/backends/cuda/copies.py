"""2-D and 3-D copies on a GPU (cuMemcpy3D): host memory, device memory at a pitch and
CUDA arrays, in any pairing, described as runtime/memory.Side describes each side."""
from .driver import api, call


def memcpy3d(backend, dst, src, extent, stream=None):
    """Copy ``extent`` = (row bytes, rows, slices) from ``src`` to ``dst``."""
    d = api()
    backend.make_current()
    p = d.CUDA_MEMCPY3D()
    for name, side in (("src", src), ("dst", dst)):
        if side.kind == "array":
            setattr(p, name + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_ARRAY)
            setattr(p, name + "Array", side.where.handle)
        elif side.kind == "device":
            setattr(p, name + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_DEVICE)
            setattr(p, name + "Device", d.CUdeviceptr(side.where))
        else:
            setattr(p, name + "MemoryType", d.CUmemorytype.CU_MEMORYTYPE_HOST)
            setattr(p, name + "Host", side.where)
        if side.kind != "array":
            setattr(p, name + "Pitch", side.pitch)
            setattr(p, name + "Height", side.height)
    p.WidthInBytes, p.Height, p.Depth = extent
    if stream is None:
        call(d.cuMemcpy3D, p)
    else:
        call(d.cuMemcpy3DAsync, p, stream)


def alloc_pitch(backend, width_bytes, height, element_size):
    """(device pointer, pitch) from cuMemAllocPitch; its element size is 4, 8 or 16."""
    backend.make_current()
    size = min(16, max(4, element_size))
    ptr, pitch = call(api().cuMemAllocPitch, max(width_bytes, 1), max(height, 1), size,
                      request=width_bytes * height)
    return int(ptr), int(pitch)
