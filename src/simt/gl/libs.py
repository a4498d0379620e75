"""Loading the system's EGL and OpenGL libraries (GLVND's libEGL.so.1 and libOpenGL.so.0)
with ctypes, once, and the error that says what to install when they are missing."""
import ctypes
import threading

from simt.errors import NotSupportedError

_lock = threading.Lock()
_loaded = {}            # soname -> CDLL, or the OSError that loading raised

INSTALL = ("install the NVIDIA driver's EGL and OpenGL libraries (GLVND's libEGL.so.1 and "
           "libOpenGL.so.0 with libEGL_nvidia; Debian and Ubuntu: the packages libegl1, "
           "libopengl0 and libnvidia-gl-<driver version>)")


def library(*sonames):
    """The first of ``sonames`` that loads, as a ctypes CDLL; NotSupportedError naming them
    all and what to install when none does."""
    errors = []
    for soname in sonames:
        with _lock:
            if soname not in _loaded:
                try:
                    _loaded[soname] = ctypes.CDLL(soname)
                except OSError as exc:
                    _loaded[soname] = exc
        found = _loaded[soname]
        if not isinstance(found, OSError):
            return found
        errors.append(f"{soname}: {found}")
    raise NotSupportedError(f"OpenGL interop needs {' or '.join(sonames)}, which could not be "
                            f"loaded ({'; '.join(errors)}): {INSTALL}")


def egl():
    return library("libEGL.so.1", "libEGL.so")


def opengl():
    # libOpenGL is GLVND's OpenGL without GLX; libGL.so.1 dispatches the same calls
    return library("libOpenGL.so.0", "libGL.so.1")


def available():
    """None when both libraries load, else why not (the NotSupportedError's text)."""
    try:
        egl()
        opengl()
    except NotSupportedError as exc:
        return str(exc)
    return None
