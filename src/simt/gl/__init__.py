"""OpenGL interop (guide 3.2.13.1, CUDA by Example chapter 8): an OpenGL buffer object
registered with a GPU, mapped for kernels as a DeviceArray, unmapped for OpenGL again.

    ctx = simt.gl.egl_context()                 # headless; or a window toolkit's context
    pbo = simt.gl.create_buffer(512 * 512 * 4)  # glGenBuffers + glBindBuffer + glBufferData
    res = simt.gl.register_buffer(pbo)          # cudaGraphicsGLRegisterBuffer
    with res.mapped(dtype=np.uint8, shape=(512 * 512, 4)) as pixels:
        kernel[grid, block](pixels)             # writes what OpenGL draws
    image = simt.gl.read_buffer(pbo)            # glGetBufferSubData

GPU only: the cpu and sim devices raise NotSupportedError. The OpenGL context that owns
the buffer must be current on the thread that registers, maps and unmaps it.
"""
from typing import Any

from simt.errors import NotSupportedError
from simt.runtime import devices
from simt.runtime.graphics import FLAGS, GraphicsResource, require_gpu
from .egl import EglContext
from .libs import INSTALL, available
from .opengl import (buffer_size, create_buffer, current, delete_buffer, finish, read_buffer,
                     require_context, write_buffer)

__all__ = ["register_buffer", "egl_context", "GraphicsResource", "EglContext",
           "create_buffer", "read_buffer", "write_buffer", "delete_buffer", "buffer_size",
           "finish", "current", "available"]


def register_buffer(buffer_id: int, flags: str = "none", device: Any = None) -> GraphicsResource:
    """Register OpenGL buffer object ``buffer_id`` (of the context current on this thread)
    with the current GPU, or ``device`` (cudaGraphicsGLRegisterBuffer). ``flags``: 'none'
    (kernels read and write it), 'read_only' (kernels only read it; the mapped arrays are
    marked read-only) or 'write_discard' (kernels overwrite all of it: OpenGL's contents
    are not kept). Map the returned resource for kernels; unregister it before deleting
    the buffer. GPU only."""
    device = devices.lookup(device)
    require_gpu(device, "OpenGL interop (simt.gl.register_buffer)")
    if flags not in FLAGS:
        raise ValueError(f"register_buffer: unknown flags {flags!r}; one of "
                         f"{', '.join(map(repr, FLAGS))}")
    require_context(f"simt.gl.register_buffer({buffer_id})")
    impl = device.backend.register_gl_buffer(int(buffer_id), flags)
    return GraphicsResource(impl, device, flags, f"OpenGL buffer {buffer_id}")


def egl_context(device: Any = None) -> EglContext:
    """A headless OpenGL context on the current GPU (or ``device``), made current on the
    calling thread: EGL's device platform (the EGL device whose CUDA ordinal is the GPU's),
    else EGL's default display; no window, X server or display needed. It needs the
    driver's libEGL.so.1 and libOpenGL.so.0 (NotSupportedError says what to install).
    ``with simt.gl.egl_context() as ctx:`` destroys it at the end. GPU only."""
    device = devices.lookup(device)
    require_gpu(device, "OpenGL interop (simt.gl.egl_context)")
    context = EglContext(device.backend.index)
    if "NVIDIA" not in context.vendor:
        context.destroy()
        raise NotSupportedError(
            f"simt.gl.egl_context: EGL made the context on {context.renderer!r} "
            f"({context.vendor}), not on {device.name}, so CUDA cannot map its buffers: "
            f"NVIDIA's EGL driver (libEGL_nvidia.so.0) is missing; {INSTALL}")
    return context
