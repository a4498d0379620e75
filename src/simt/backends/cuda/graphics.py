"""Graphics interop on the driver: an OpenGL buffer object registered with CUDA
(cuGraphicsGLRegisterBuffer), mapped and unmapped in stream order
(cuGraphicsMapResources / cuGraphicsUnmapResources), its device address while mapped
(cuGraphicsResourceGetMappedPointer), and unregistered (cuGraphicsUnregisterResource).

The OpenGL context that owns the buffer must be current on the calling thread for each
of these calls (guide 3.2.13.1); simt.gl checks that before registering."""
from .driver import api, call, context_dead

FLAGS = {"none": "CU_GRAPHICS_REGISTER_FLAGS_NONE",
         "read_only": "CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY",
         "write_discard": "CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD"}


class RegisteredBuffer:
    """One registered OpenGL buffer: ``map(stream)``, ``pointer()`` -> (address, bytes)
    while mapped, ``unmap(stream)``, ``unregister()`` (also when it is collected)."""

    def __init__(self, backend, buffer_id, flags):
        backend.make_current()
        driver = api()
        value = int(getattr(driver.CUgraphicsRegisterFlags, FLAGS[flags]))
        self.backend = backend
        self.handle = call(driver.cuGraphicsGLRegisterBuffer, int(buffer_id), value)

    def map(self, stream=None):
        self.backend.make_current()
        call(api().cuGraphicsMapResources, 1, self.handle, stream or 0)

    def pointer(self):
        self.backend.make_current()
        ptr, size = call(api().cuGraphicsResourceGetMappedPointer, self.handle)
        return int(ptr), int(size)

    def unmap(self, stream=None):
        self.backend.make_current()
        call(api().cuGraphicsUnmapResources, 1, self.handle, stream or 0)

    def unregister(self):
        handle, self.handle = self.handle, None
        if handle is None or context_dead(self.backend.index):
            return
        self.backend.set_current()
        call(api().cuGraphicsUnregisterResource, handle)

    def __del__(self):
        try:
            self.unregister()
        except Exception:
            pass        # the GL context or the interpreter is going: the driver frees it
