"""The few OpenGL calls CUDA by Example's chapter 8 makes on buffer objects, through
ctypes: making a buffer (glGenBuffers, glBindBuffer, glBufferData), writing and reading
it (glBufferSubData, glGetBufferSubData) and deleting it (glDeleteBuffers). PyOpenGL
does the same and more; these spare the examples and tests a dependency.

Every call needs an OpenGL context current on the calling thread (without one GLVND's
entry points do nothing), so each function checks that first.
"""
import ctypes
import threading
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .libs import available, opengl as _load_opengl

GL_VENDOR, GL_RENDERER, GL_VERSION = 0x1F00, 0x1F01, 0x1F02
GL_BUFFER_SIZE = 0x8764
GL_COPY_READ_BUFFER = 0x8F36
TARGETS = {"array": 0x8892, "element_array": 0x8893, "pixel_pack": 0x88EB,
           "pixel_unpack": 0x88EC, "copy_read": 0x8F36, "copy_write": 0x8F37,
           "shader_storage": 0x90D2}
USAGES = {"stream_draw": 0x88E0, "stream_read": 0x88E1, "stream_copy": 0x88E2,
          "static_draw": 0x88E4, "static_read": 0x88E5, "static_copy": 0x88E6,
          "dynamic_draw": 0x88E8, "dynamic_read": 0x88E9, "dynamic_copy": 0x88EA}
_ERRORS = {0x500: "GL_INVALID_ENUM", 0x501: "GL_INVALID_VALUE", 0x502: "GL_INVALID_OPERATION",
           0x505: "GL_OUT_OF_MEMORY"}

_U = ctypes.c_uint32
_SIZE = ctypes.c_ssize_t            # GLsizeiptr and GLintptr
_SIGNATURES = {
    "glGetString": (ctypes.c_char_p, [_U]),
    "glGetError": (_U, []),
    "glGenBuffers": (None, [ctypes.c_int32, ctypes.POINTER(_U)]),
    "glBindBuffer": (None, [_U, _U]),
    "glBufferData": (None, [_U, _SIZE, ctypes.c_void_p, _U]),
    "glBufferSubData": (None, [_U, _SIZE, _SIZE, ctypes.c_void_p]),
    "glGetBufferSubData": (None, [_U, _SIZE, _SIZE, ctypes.c_void_p]),
    "glGetBufferParameteri64v": (None, [_U, _U, ctypes.POINTER(ctypes.c_int64)]),
    "glDeleteBuffers": (None, [ctypes.c_int32, ctypes.POINTER(_U)]),
    "glFinish": (None, []),
}

_lock = threading.Lock()
_gl = None


def _library():
    global _gl
    with _lock:
        if _gl is None:
            lib = _load_opengl()
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            _gl = lib
    return _gl


def current() -> Optional[str]:
    """The current OpenGL context's version string, or None when no context is current on
    this thread (also when the libraries are missing)."""
    if available() is not None:
        return None
    version = _library().glGetString(GL_VERSION)
    return version.decode() if version else None


def require_context(what: str):
    """The OpenGL library, once a context is known to be current on this thread."""
    lib = _library()
    if not lib.glGetString(GL_VERSION):
        raise RuntimeError(f"{what}: no OpenGL context is current on this thread; make one "
                           "current first: simt.gl.egl_context() (no display needed), or "
                           "your window toolkit's (GLUT, glfw, Qt...)")
    return lib


def _check(lib, call):
    error = lib.glGetError()
    if error:
        raise RuntimeError(f"{call} failed with {_ERRORS.get(error, hex(error))}")


def strings():
    """(vendor, renderer, version) of the current context."""
    lib = require_context("glGetString")
    return tuple(lib.glGetString(name).decode() for name in (GL_VENDOR, GL_RENDERER, GL_VERSION))


def create_buffer(nbytes: Optional[int] = None, data: Optional[ArrayLike] = None,
                  usage: str = "dynamic_draw", target: str = "pixel_unpack") -> int:
    """A new OpenGL buffer object of ``nbytes`` (or holding ``data``'s bytes), left bound to
    ``target`` as CUDA by Example leaves its pixel buffer (glGenBuffers, glBindBuffer,
    glBufferData); returns its name, the id ``register_buffer`` takes."""
    lib = require_context("create_buffer")
    source = None if data is None else np.ascontiguousarray(data)
    size = source.nbytes if nbytes is None and source is not None else nbytes
    if size is None or int(size) <= 0:
        raise ValueError(f"create_buffer needs a positive size in bytes (nbytes or data), "
                         f"not {size}")
    if source is not None and source.nbytes != int(size):
        raise ValueError(f"data holds {source.nbytes} bytes; nbytes says {size}")
    name = _U()
    lib.glGenBuffers(1, ctypes.byref(name))
    lib.glBindBuffer(_enum(TARGETS, target, "target"), name.value)
    pointer = None if source is None else source.ctypes.data
    lib.glBufferData(TARGETS[target], int(size), pointer, _enum(USAGES, usage, "usage"))
    _check(lib, f"glBufferData({size} bytes)")
    return name.value


def _enum(table, key, what):
    if key not in table:
        raise ValueError(f"unknown {what} {key!r}; one of {', '.join(table)}")
    return table[key]


def buffer_size(buffer_id: int) -> int:
    """Bytes of buffer ``buffer_id`` (GL_BUFFER_SIZE)."""
    lib = require_context("buffer_size")
    return _with_bound(lib, buffer_id, lambda: _size(lib))


def _size(lib):
    size = ctypes.c_int64()
    lib.glGetBufferParameteri64v(GL_COPY_READ_BUFFER, GL_BUFFER_SIZE, ctypes.byref(size))
    return size.value


def _with_bound(lib, buffer_id, work):
    """``work()`` with the buffer bound to GL_COPY_READ_BUFFER, which no drawing uses."""
    lib.glBindBuffer(GL_COPY_READ_BUFFER, int(buffer_id))
    try:
        _check(lib, f"glBindBuffer(buffer {buffer_id})")
        return work()
    finally:
        lib.glBindBuffer(GL_COPY_READ_BUFFER, 0)


def read_buffer(buffer_id: int, dtype: DTypeLike = np.uint8, count: Optional[int] = None,
                offset: int = 0) -> np.ndarray:
    """``count`` elements of ``dtype`` (default: to the end) from byte ``offset`` of the
    buffer, copied to a new host array (glGetBufferSubData)."""
    lib = require_context("read_buffer")
    dtype = np.dtype(dtype)

    def work():
        available = (_size(lib) - int(offset)) // dtype.itemsize
        n = available if count is None else int(count)
        if n < 0 or n > available:
            raise ValueError(f"buffer {buffer_id} holds {max(available, 0)} {dtype} elements "
                             f"after byte {offset}, not {n}")
        out = np.empty(n, dtype)
        lib.glGetBufferSubData(GL_COPY_READ_BUFFER, int(offset), out.nbytes, out.ctypes.data)
        _check(lib, f"glGetBufferSubData(buffer {buffer_id})")
        return out
    return _with_bound(lib, buffer_id, work)


def write_buffer(buffer_id: int, data: ArrayLike, offset: int = 0) -> None:
    """Write ``data``'s bytes into the buffer from byte ``offset`` (glBufferSubData)."""
    lib = require_context("write_buffer")
    source = np.ascontiguousarray(data)

    def work():
        lib.glBufferSubData(GL_COPY_READ_BUFFER, int(offset), source.nbytes, source.ctypes.data)
        _check(lib, f"glBufferSubData(buffer {buffer_id}, {source.nbytes} bytes)")
    _with_bound(lib, buffer_id, work)


def delete_buffer(buffer_id: int) -> None:
    """Delete the buffer (glDeleteBuffers); unregister it from CUDA first."""
    lib = require_context("delete_buffer")
    name = _U(int(buffer_id))
    lib.glDeleteBuffers(1, ctypes.byref(name))
    _check(lib, f"glDeleteBuffers({buffer_id})")


def finish() -> None:
    """Wait until OpenGL's queued work is done (glFinish)."""
    require_context("finish").glFinish()
