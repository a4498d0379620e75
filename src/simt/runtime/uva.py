"""``simt.copy(dst, src)``: a copy between any two memories, each side's kind found from
the object itself, as cudaMemcpy with cudaMemcpyDefault finds it from the pointers under
unified addressing (guide 3.2.2: "Unified Virtual Address Space")."""
from typing import Any

import numpy as np

from simt.runtime import devices
from simt.runtime.arrays import DeviceArray


def copy(dst: Any, src: Any, stream: Any = None) -> Any:
    """Copy ``src`` into ``dst`` (cudaMemcpy / cudaMemcpyAsync with cudaMemcpyDefault) and
    return ``dst``. Either side may be a NumPy array (pageable, pinned, mapped or
    registered), a DeviceArray of any device (managed arrays included), a module-level
    ``simt.Global`` / ``Managed`` symbol (its storage on the current device) or another
    library's GPU array (``__cuda_array_interface__`` / DLPack). Both must have the same
    shape and dtype: copies do not convert. With ``stream`` the copy is ordered in it
    (asynchronous where CUDA's is: device memory and pinned host memory); without, it is
    ordered after the work of the legacy default stream and done on return. Between two
    host arrays the copy waits for that work (a kernel may be writing managed memory the
    host array views), then NumPy moves the bytes."""
    given = dst
    dst, src = _side(dst, "dst"), _side(src, "src")
    if dst.shape != src.shape:
        raise ValueError(f"simt.copy: dst has shape {dst.shape}, src {src.shape}; both "
                         "sides of a copy have one shape (reshape a view first)")
    if dst.dtype != src.dtype:
        raise TypeError(f"simt.copy: dst holds {dst.dtype}, src {src.dtype}; copies do not "
                        f"convert. Convert first: .astype(np.{dst.dtype})")
    if isinstance(src, DeviceArray) and isinstance(dst, DeviceArray):
        src.copy_to_device(dst, stream=stream)
    elif isinstance(src, DeviceArray):
        src.copy_to_host(out=dst, stream=stream)
    elif isinstance(dst, DeviceArray):
        dst.copy_from(src, stream=stream)
    else:
        _host_to_host(dst, src, stream)
    return given


def _side(value, name):
    """A DeviceArray or a NumPy array for one side of a copy."""
    if isinstance(value, (DeviceArray, np.ndarray)):
        return value
    if hasattr(value, "device_array") and hasattr(value, "placements"):   # a symbol
        return value.device_array()
    if hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack__"):
        from simt.runtime.interop import asarray
        return asarray(value)
    raise TypeError(f"simt.copy: {name} is a {type(value).__name__}; each side is a NumPy "
                    "array, a DeviceArray, a simt.Global / Managed symbol, or an array of "
                    "another library (CUDA array interface or DLPack)")


def _host_to_host(dst, src, stream):
    if not dst.flags.writeable:
        raise ValueError("simt.copy: dst is a read-only NumPy array; a copy never writes "
                         "read-only memory")
    if stream is not None and hasattr(stream, "synchronize"):
        stream.synchronize()
    else:
        devices.synchronize()
    np.copyto(dst, src, casting="no")
