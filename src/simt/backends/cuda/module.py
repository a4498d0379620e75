"""Loading PTX into the driver (its JIT), kernel handles, their attributes and globals."""

import glob
import os
import shutil

from simt.backends.cuda.driver import api, call, check, destroy
from simt.errors import CudaError

LOG_BYTES = 64 * 1024
_DEFAULT_SHARED_LIMIT = 48 * 1024   # dynamic shared memory allowed without opting in
_BINARY = (b"\x7fELF", b"\x50\xed\x55\xba")   # cubin (ELF) and fatbin magic: not C strings

# Function.resources() key -> CU_FUNC_ATTRIBUTE_<suffix>
_RESOURCES = {
    "registers": "NUM_REGS",
    "local_bytes": "LOCAL_SIZE_BYTES",
    "shared_bytes": "SHARED_SIZE_BYTES",
    "const_bytes": "CONST_SIZE_BYTES",
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "max_dynamic_shared_bytes": "MAX_DYNAMIC_SHARED_SIZE_BYTES",
    "ptx_version": "PTX_VERSION",
    "binary_version": "BINARY_VERSION",
}


def log_text(buffer):
    return bytes(buffer).split(b"\0", 1)[0].decode(errors="replace").strip()


def raise_jit_error(err, log, call_name):
    try:
        check(err, call_name)
    except CudaError as exc:
        raise type(exc)(f"{exc}\nthe driver's PTX JIT said:\n{log or '(nothing)'}") from None


class Module:
    """A PTX (or cubin) image loaded into the current context.

    ``info_log`` holds what the JIT said (register use with verbose logs on).
    ``backend`` (a CudaBackend) is made current before unloading, if given.
    ``line_info``: the JIT keeps the PTX's line tables (lineinfo=True) in the machine code.
    """

    def __init__(self, image, backend=None, verbose=True, line_info=False):
        driver = api()
        if backend is not None:
            backend.make_current()
        self.backend = backend
        if isinstance(image, str):
            image = image.encode()
        if not image.startswith(_BINARY) and not image.endswith(b"\0"):
            image += b"\0"          # the JIT reads PTX as a C string
        info, error = bytearray(LOG_BYTES), bytearray(LOG_BYTES)
        opt = driver.CUjit_option
        options = {
            opt.CU_JIT_INFO_LOG_BUFFER: info,
            opt.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: LOG_BYTES,
            opt.CU_JIT_ERROR_LOG_BUFFER: error,
            opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: LOG_BYTES,
            opt.CU_JIT_LOG_VERBOSE: int(verbose),
            opt.CU_JIT_GENERATE_LINE_INFO: int(line_info),
        }
        err, handle = driver.cuModuleLoadDataEx(
            image, len(options), list(options), list(options.values()))
        self.info_log = log_text(info)
        if err:
            raise_jit_error(err, log_text(error), "cuModuleLoadDataEx")
        self.handle = handle
        self._functions = {}


    def get_function(self, name):
        """The Function named ``name`` (its mangled or extern "C" name)."""
        if name not in self._functions:
            handle = call(api().cuModuleGetFunction, self.handle, name.encode())
            self._functions[name] = Function(handle, name, self)
        return self._functions[name]

    def get_global(self, name):
        """(device address, size in bytes) of a __device__ or __constant__ variable."""
        ptr, size = call(api().cuModuleGetGlobal, self.handle, name.encode())
        return int(ptr), int(size)

    def __del__(self):
        destroy("cuModuleUnload", getattr(self, "handle", None), backend=self.backend)


class Function:
    """A kernel in a loaded Module: its CUfunction handle and attributes."""

    def __init__(self, handle, name, module):
        self.handle = handle
        self.name = name
        self.module = module           # keeps the module loaded while the handle lives
        self._shared_optin = _DEFAULT_SHARED_LIMIT

    def attribute(self, suffix):
        """The CU_FUNC_ATTRIBUTE_<suffix> value of this kernel."""
        driver = api()
        attr = getattr(driver.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + suffix)
        return call(driver.cuFuncGetAttribute, attr, self.handle)

    def resources(self):
        """Registers per thread, local/shared/constant bytes and limits, as a dict."""
        return {key: self.attribute(suffix) for key, suffix in _RESOURCES.items()}

    def ensure_dynamic_shared(self, nbytes):
        """Opt in to ``nbytes`` of dynamic shared memory when above the 48 KB default."""
        if nbytes <= self._shared_optin:
            return
        driver = api()
        attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        call(driver.cuFuncSetAttribute, self.handle, attr, nbytes)
        self._shared_optin = nbytes


def toolkit_roots():
    """Folders that may be a CUDA toolkit's root, most specific first: $CUDA_HOME,
    $CUDA_PATH, the toolkit of the nvcc on the PATH, /usr/local/cuda(-*), then NVIDIA's pip
    wheels (site-packages/nvidia/*/ and one level below)."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            yield root
    nvcc = shutil.which("nvcc")
    if nvcc:
        yield os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    yield "/usr/local/cuda"
    yield from sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    yield from _pip_roots()


def _pip_roots():
    try:
        import nvidia
    except ImportError:
        return
    for root in getattr(nvidia, "__path__", []):
        yield from glob.glob(os.path.join(root, "*"))
        yield from glob.glob(os.path.join(root, "*", "*"))


def _libdevice_dirs():
    """Folders that may hold libdevice, most specific first."""
    return (os.path.join(root, "nvvm", "libdevice") for root in toolkit_roots())


def _pip_libdevice_dirs():
    """libdevice folders inside NVIDIA's pip wheels (nvidia-cuda-nvcc and relatives)."""
    return (os.path.join(root, "nvvm", "libdevice") for root in _pip_roots())


def _pathfinder_libdevice():
    """libdevice as cuda-pathfinder finds it (toolkit or wheels), or None."""
    try:
        from cuda.pathfinder import find_bitcode_lib
        return find_bitcode_lib("device")
    except Exception:          # not installed, too old to know bitcode, or not found
        return None


def find_libdevice():
    """Path of libdevice.10.bc, or None when no CUDA toolkit or nvcc wheel has one."""
    found = _pathfinder_libdevice()
    if found and os.path.isfile(found):
        return found
    for folder in _libdevice_dirs():
        path = os.path.join(folder, "libdevice.10.bc")
        if os.path.isfile(path):
            return path
    return None
