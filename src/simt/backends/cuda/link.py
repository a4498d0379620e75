"""Linking a kernel that launches kernels with the CUDA device runtime (libcudadevrt.a,
which defines cudaGetParameterBufferV2 and cudaLaunchDeviceV2), through the driver's
linker: the PTX is compiled as relocatable code, the library's objects resolve its
calls, and the linked cubin is what module.Module loads."""
import ctypes
import glob
import os

from ...errors import NotSupportedError
from .driver import api, call
from .module import LOG_BYTES, log_text, raise_jit_error, toolkit_roots

LIBRARY = "libcudadevrt.a"


def _candidates():
    for root in toolkit_roots():
        yield os.path.join(root, "lib64")
        yield os.path.join(root, "lib")
        yield from glob.glob(os.path.join(root, "targets", "*", "lib"))


def find_devrt():
    """The path of libcudadevrt.a, or None."""
    for folder in _candidates():
        path = os.path.join(folder, LIBRARY)
        if os.path.isfile(path):
            return path
    return None


def require_devrt(kernel_name):
    """The path of libcudadevrt.a; NotSupportedError naming what is missing when the CUDA
    toolkit's library cannot be found."""
    library = find_devrt()
    if library is None:
        raise NotSupportedError(
            f"kernel '{kernel_name}' calls the CUDA device runtime (it launches kernels or "
            "graphs, or sets a graph's condition), which needs "
            f"the CUDA toolkit's {LIBRARY} to link with, and none was found (looked in "
            "$CUDA_HOME/lib64, next to nvcc, /usr/local/cuda/lib64 and NVIDIA's pip "
            "wheels): install the CUDA toolkit or set CUDA_HOME")
    return library


def link_devrt(ptx, kernel_name, line_info=False):
    """The cubin of ``ptx`` linked with the device runtime (require_devrt)."""
    library = require_devrt(kernel_name)
    driver = api()
    info, error = bytearray(LOG_BYTES), bytearray(LOG_BYTES)
    opt = driver.CUjit_option
    options = {
        opt.CU_JIT_INFO_LOG_BUFFER: info,
        opt.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: LOG_BYTES,
        opt.CU_JIT_ERROR_LOG_BUFFER: error,
        opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: LOG_BYTES,
        opt.CU_JIT_GENERATE_LINE_INFO: int(line_info),
    }
    state = call(driver.cuLinkCreate, len(options), list(options), list(options.values()))
    try:
        data = ptx.encode() + b"\0"
        kind = driver.CUjitInputType
        err, = driver.cuLinkAddData(state, kind.CU_JIT_INPUT_PTX, data, len(data),
                                    f"{kernel_name}.ptx".encode(), 0, None, None)
        if not err:
            err, = driver.cuLinkAddFile(state, kind.CU_JIT_INPUT_LIBRARY, library.encode(),
                                        0, None, None)
        if not err:
            err, cubin, size = driver.cuLinkComplete(state)
        if err:
            raise_jit_error(err, log_text(error), "cuLink")
        return ctypes.string_at(int(cubin), int(size))   # the state owns it: copy it out
    finally:
        call(driver.cuLinkDestroy, state)
