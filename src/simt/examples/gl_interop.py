"""CUDA by Example, chapter 8, with OpenGL itself: the kernel writes into an OpenGL pixel
buffer object that CUDA maps (cudaGraphicsGLRegisterBuffer, cudaGraphicsMapResources,
cudaGraphicsResourceGetMappedPointer, cudaGraphicsUnmapResources), and OpenGL reads the
pixels back (glGetBufferSubData) to write the PNG the book's window would show. The
context is a headless EGL one: no window or display is needed, but an NVIDIA GPU and the
driver's EGL and OpenGL libraries are (the cpu and sim devices refuse with
NotSupportedError). interop.py (8.2) and ripple.py (8.3.2) run the same kernels on any
device, a device array standing in for the buffer.
"""
import simt
from ._common import Example, out_path, save_png
from .book import GLAnimBitmap
from .interop import DIM, kernel
from .ripple import DIM as RIPPLE_DIM, FRAMES, DataBlock, generate_frame_interop


def render_gl(dim=DIM):
    """8.2's main(): the buffer, its registration, one mapped launch; returns what OpenGL
    reads back from the buffer as a (dim, dim, 4) array."""
    with simt.gl.egl_context():           # the book: cudaGLSetGLDevice, glutCreateWindow
        buffer_obj = simt.gl.create_buffer(dim * dim * 4)    # GL_PIXEL_UNPACK_BUFFER
        resource = simt.gl.register_buffer(buffer_obj, "none")
        with resource.mapped(shape=(dim * dim, 4)) as dev_ptr:
            grids, threads = (dim // 16, dim // 16), (16, 16)
            kernel[grids, threads](dev_ptr)
        image = simt.gl.read_buffer(buffer_obj).reshape(dim, dim, 4)   # glDrawPixels' source
        resource.unregister()                                          # key_func: Esc
        simt.gl.delete_buffer(buffer_obj)
    return image


def basic_interop_gl(device=None, out_dir=None, dim=DIM):
    image = render_gl(dim)
    path = save_png(out_path(out_dir, "basic_interop_gl.png"), image[::-1])
    print(f"wrote {path}")
    return image


def ripple_interop_gl(device=None, out_dir=None, dim=RIPPLE_DIM, frames=FRAMES):
    """8.3.2 with GLAnimBitmap; returns the last frame as OpenGL reads it back."""
    bitmap = GLAnimBitmap(dim, dim, DataBlock(dim))
    try:
        bitmap.anim_and_exit(generate_frame_interop, None, frames=frames, out_dir=out_dir,
                             stem="ripple_interop_gl")
        return bitmap.last_frame()
    finally:
        bitmap.free_resources()


EXAMPLES = [
    Example("basic_interop_gl", "8.2", "a kernel draws into an OpenGL pixel buffer (headless "
            "EGL; GPU only), read back by OpenGL into a PNG (8.2)", basic_interop_gl),
    Example("ripple_interop_gl", "8.3.2", "the ripple drawn into an OpenGL pixel buffer each "
            "frame (GLAnimBitmap, headless EGL; GPU only); frames to a GIF (8.3.2)",
            ripple_interop_gl),
]
