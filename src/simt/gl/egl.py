"""A headless OpenGL context through EGL: no window, no X server, no display.

The GPU's EGL device (EGL_EXT_device_enumeration, the one whose EGL_CUDA_DEVICE_NV is the
CUDA device's ordinal) gives a display (eglGetPlatformDisplayEXT with
EGL_PLATFORM_DEVICE_EXT), else the default display does; then eglInitialize,
eglBindAPI(EGL_OPENGL_API), eglChooseConfig, eglCreateContext, and eglMakeCurrent with no
surface (EGL_KHR_surfaceless_context): OpenGL then works on buffer objects, which is all
that CUDA by Example's chapter 8 needs.
"""
import ctypes
import threading
from typing import Any, Optional

from simt.errors import NotSupportedError
from .libs import INSTALL, egl as _load_egl

EGL_SUCCESS = 0x3000
EGL_NONE = 0x3038
EGL_SURFACE_TYPE = 0x3033
EGL_PBUFFER_BIT = 0x0001
EGL_RENDERABLE_TYPE = 0x3040
EGL_OPENGL_BIT = 0x0008
EGL_OPENGL_API = 0x30A2
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_CUDA_DEVICE_NV = 0x323A

_P = ctypes.c_void_p
_INT = ctypes.c_int32
_SIGNATURES = {         # name: (restype, argtypes) of the entry points libEGL exports
    "eglGetProcAddress": (_P, [ctypes.c_char_p]),
    "eglGetError": (_INT, []),
    "eglGetDisplay": (_P, [_P]),
    "eglInitialize": (ctypes.c_uint32, [_P, ctypes.POINTER(_INT), ctypes.POINTER(_INT)]),
    "eglBindAPI": (ctypes.c_uint32, [ctypes.c_uint32]),
    "eglChooseConfig": (ctypes.c_uint32, [_P, ctypes.POINTER(_INT), ctypes.POINTER(_P),
                                          _INT, ctypes.POINTER(_INT)]),
    "eglCreateContext": (_P, [_P, _P, _P, ctypes.POINTER(_INT)]),
    "eglMakeCurrent": (ctypes.c_uint32, [_P, _P, _P, _P]),
    "eglDestroyContext": (ctypes.c_uint32, [_P, _P]),
    "eglGetCurrentContext": (_P, []),
}
# extensions, found through eglGetProcAddress
_QUERY_DEVICES = ctypes.CFUNCTYPE(ctypes.c_uint32, _INT, ctypes.POINTER(_P), ctypes.POINTER(_INT))
_PLATFORM_DISPLAY = ctypes.CFUNCTYPE(_P, ctypes.c_uint32, _P, ctypes.POINTER(_INT))
_QUERY_DEVICE_ATTRIB = ctypes.CFUNCTYPE(ctypes.c_uint32, _P, _INT, ctypes.POINTER(ctypes.c_ssize_t))

_lock = threading.Lock()
_egl = None


def _library():
    global _egl
    with _lock:
        if _egl is None:
            lib = _load_egl()
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            _egl = lib
    return _egl


def _extension(lib, name, prototype):
    address = lib.eglGetProcAddress(name.encode())
    return prototype(address) if address else None


def _fail(lib, call):
    raise NotSupportedError(f"{call} failed with EGL error {lib.eglGetError():#x}: EGL could "
                            f"not make a headless OpenGL context here; {INSTALL}")


def _devices(lib):
    """The EGL devices (EGLDeviceEXT handles), or [] without EGL_EXT_device_enumeration."""
    query = _extension(lib, "eglQueryDevicesEXT", _QUERY_DEVICES)
    if query is None:
        return []
    handles, count = (_P * 16)(), _INT()
    if not query(16, handles, ctypes.byref(count)):
        return []
    return [handles[i] for i in range(count.value)]


def _cuda_ordinal(lib, device):
    """The EGL device's CUDA ordinal (EGL_CUDA_DEVICE_NV), or None (another vendor's)."""
    query = _extension(lib, "eglQueryDeviceAttribEXT", _QUERY_DEVICE_ATTRIB)
    value = ctypes.c_ssize_t(-1)
    if query is None or not query(device, EGL_CUDA_DEVICE_NV, ctypes.byref(value)):
        return None
    return value.value


def _display(lib, ordinal):
    """The display of the EGL device of CUDA device ``ordinal`` (the first device for None,
    or where no device says its ordinal), else the default display."""
    found = _devices(lib)
    ordinals = [_cuda_ordinal(lib, device) for device in found]
    chosen = next((d for d, o in zip(found, ordinals) if o == ordinal is not None), None)
    if chosen is None and found and (ordinal is None or all(o is None for o in ordinals)):
        chosen = found[0]
    platform = _extension(lib, "eglGetPlatformDisplayEXT", _PLATFORM_DISPLAY)
    if chosen is not None and platform is not None:
        display = platform(EGL_PLATFORM_DEVICE_EXT, chosen, None)
        if display:
            return display
    return lib.eglGetDisplay(None)      # EGL_DEFAULT_DISPLAY


def _config(lib, display):
    """An EGLConfig for desktop OpenGL (with pbuffers where the driver offers them)."""
    wishes = ([EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE],
              [EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE])
    for wish in wishes:
        attributes = (_INT * len(wish))(*wish)
        config, count = _P(), _INT()
        if lib.eglChooseConfig(display, attributes, ctypes.byref(config), 1,
                               ctypes.byref(count)) and count.value:
            return config
    _fail(lib, "eglChooseConfig (desktop OpenGL)")


class EglContext:
    """A headless OpenGL context (EGL, no surface), current on the thread that made it:
    on the EGL device of CUDA device ``ordinal`` (None: EGL's first device, which needs no
    GPU, e.g. Mesa's software renderer; simt.gl.egl_context() picks the current GPU's).

    ``make_current()`` makes it current on the calling thread (an OpenGL context is current
    on one thread at a time), ``release()`` makes no context current, ``destroy()`` (or the
    end of a ``with`` block) destroys it. ``vendor``, ``renderer`` and ``version`` are
    OpenGL's strings for it (glGetString)."""

    def __init__(self, ordinal: Optional[int] = None):
        lib = self._lib = _library()
        self.display = _display(lib, ordinal)
        if not self.display:
            _fail(lib, "eglGetDisplay")
        major, minor = _INT(), _INT()
        if not lib.eglInitialize(self.display, ctypes.byref(major), ctypes.byref(minor)):
            _fail(lib, "eglInitialize")
        self.egl_version = (major.value, minor.value)
        if not lib.eglBindAPI(EGL_OPENGL_API):
            _fail(lib, "eglBindAPI(EGL_OPENGL_API)")
        config = _config(lib, self.display)
        self.context = lib.eglCreateContext(self.display, config, None, None)
        if not self.context:
            _fail(lib, "eglCreateContext")
        self.make_current()
        from .opengl import strings
        self.vendor, self.renderer, self.version = strings()

    def make_current(self) -> "EglContext":
        """Make this context current on the calling thread (eglMakeCurrent, no surface)."""
        if self.context is None:
            raise RuntimeError("this EGL context was destroyed")
        if not self._lib.eglMakeCurrent(self.display, None, None, self.context):
            _fail(self._lib, "eglMakeCurrent (no surface: EGL_KHR_surfaceless_context)")
        return self

    def release(self) -> None:
        """Make no context current on the calling thread."""
        self._lib.eglMakeCurrent(self.display, None, None, None)

    def destroy(self) -> None:
        """Destroy the context (its buffers with it); unregister CUDA's resources of it
        first. Later calls do nothing."""
        if self.context is None:
            return
        if self._lib.eglGetCurrentContext() == self.context:
            self.release()
        self._lib.eglDestroyContext(self.display, self.context)
        self.context = None

    def __enter__(self) -> "EglContext":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.destroy()

    def __repr__(self):
        state = "destroyed" if self.context is None else self.renderer
        return f"<simt.gl EglContext: {state}, OpenGL {self.version}>"
