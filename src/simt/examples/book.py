"""simt's equivalents of the helpers "CUDA by Example" relies on but never prints.

- book.h: ``HANDLE_ERROR`` is unnecessary (simt raises a CudaError naming the call);
  ``big_random_block``, ``swap``, ``float_to_color`` (a kernel), ``start_thread`` /
  ``end_thread``, and ``EventTimer`` for the book's cudaEvent timing pattern.
- cpu_bitmap.h: ``CPUBitmap``, whose ``display_and_exit`` writes a PNG instead of
  opening a window.
- cpu_anim.h / gpu_anim.h: ``CPUAnimBitmap`` and ``GPUAnimBitmap`` run a fixed number
  of frames and write them as numbered PNGs, or one animated GIF when Pillow is
  installed; progress goes to stderr. ``GLAnimBitmap`` is gpu_anim.h with a real OpenGL
  pixel buffer (simt.gl, headless EGL; GPU only).
"""
import sys
import threading

import numpy as np

import simt
from simt import blockDim, blockIdx, gridDim, threadIdx
from simt.progress import steps
from ._common import out_path, save_png

try:        # Pillow is optional: without it animations are numbered PNGs
    from PIL import Image
except ImportError:         # pragma: no cover - depends on the environment
    Image = None            # type: ignore[assignment]


# -- book.h -------------------------------------------------------------------------------


def big_random_block(size, seed=0):
    """``size`` random bytes (book.h's big_random_block), reproducible through ``seed``."""
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)


def big_random_block_uint32(count, seed=0):
    """``count`` random unsigned ints: the appendix's ``(unsigned*)big_random_block(SIZE)``."""
    return np.random.default_rng(seed).integers(0, 2**32, count, dtype=np.uint32)


def swap(a, b):
    """book.h's swap(a, b) for device buffers: ``a, b = swap(a, b)``."""
    return b, a


def start_thread(routine, data):
    """book.h's start_thread: run ``routine(data)`` on a new host thread; returns it."""
    def body():
        try:
            data.result = routine(data)
        except BaseException as exc:        # raised again by end_thread, on the caller's thread
            data.error = exc
    data.error = None
    thread = threading.Thread(target=body, name=f"simt-book-{routine.__name__}")
    thread.start()
    return thread


def end_thread(thread, data):
    """book.h's end_thread: join ``thread``; re-raise what its routine raised."""
    thread.join()
    if getattr(data, "error", None) is not None:
        raise data.error


class EventTimer:
    """The book's timing pattern: ``cudaEventRecord(start, 0)`` ... ``cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop); cudaEventElapsedTime(&ms, start, stop)``."""

    def __init__(self, stream=None):
        self.start = simt.Event()
        self.stop = simt.Event()
        self.stream = stream
        self.start.record(stream)

    def elapsed_ms(self):
        """Record the stop event, wait for it, and return the milliseconds since start."""
        self.stop.record(self.stream)
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop)


@simt.device
def _hsl_channel(m1, m2, hue):
    """One RGB channel of an HSL colour, as a byte: ``hue`` in degrees, wrapped to [0, 360)."""
    if hue > 360:
        hue -= 360
    elif hue < 0:
        hue += 360
    if hue < 60:
        level = m1 + (m2 - m1) * np.float32(hue) / np.float32(60)
    elif hue < 180:
        level = m2
    elif hue < 240:
        level = m1 + (m2 - m1) * np.float32(240 - hue) / np.float32(60)
    else:
        level = m1
    return np.uint8(np.float32(255) * level)


@simt.kernel
def float_to_color(optr, out_src):
    """book.h's float_to_color: a temperature in [0, 1] to an RGBA byte quadruple.

    The colour is HSL with lightness = temperature, full saturation and the hue
    turned 180 + 360 * temperature degrees (cold is dark blue, hot is white).
    """
    x = threadIdx.x + blockIdx.x * blockDim.x
    y = threadIdx.y + blockIdx.y * blockDim.y
    offset = x + y * blockDim.x * gridDim.x
    lightness = out_src[offset]
    saturation = np.float32(1)
    hue = (180 + np.int32(np.float32(360) * lightness)) % 360
    if lightness <= np.float32(0.5):
        m2 = lightness * (1 + saturation)
    else:
        m2 = lightness + saturation - lightness * saturation
    m1 = 2 * lightness - m2
    optr[offset * 4 + 0] = _hsl_channel(m1, m2, hue + 120)
    optr[offset * 4 + 1] = _hsl_channel(m1, m2, hue)
    optr[offset * 4 + 2] = _hsl_channel(m1, m2, hue - 120)
    optr[offset * 4 + 3] = 255


def float_to_color_reference(temps):
    """float_to_color in NumPy, for tests: (h, w) float32 -> (h, w, 4) uint8."""
    lightness = temps.astype(np.float32)
    hue = (180 + (np.float32(360) * lightness).astype(np.int32)) % 360
    one = np.float32(1)
    m2 = np.where(lightness <= np.float32(0.5), lightness * (one + one),
                  lightness + one - lightness * one).astype(np.float32)
    m1 = (np.float32(2) * lightness - m2).astype(np.float32)

    def channel(h):
        h = np.where(h > 360, h - 360, np.where(h < 0, h + 360, h))
        rise = m1 + (m2 - m1) * h.astype(np.float32) / np.float32(60)
        fall = m1 + (m2 - m1) * (240 - h).astype(np.float32) / np.float32(60)
        level = np.where(h < 60, rise, np.where(h < 180, m2, np.where(h < 240, fall, m1)))
        return (np.float32(255) * level.astype(np.float32)).astype(np.uint8)
    alpha = np.full(temps.shape, 255, np.uint8)
    return np.stack([channel(hue + 120), channel(hue), channel(hue - 120), alpha], axis=-1)


# -- cpu_bitmap.h -----------------------------------------------------------------------------


class CPUBitmap:
    """An RGBA image in host memory, 4 bytes per pixel, pixel ``x + y * width``."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        self.pixels = np.zeros(width * height * 4, np.uint8)

    def get_ptr(self):
        return self.pixels

    def image_size(self):
        return self.pixels.nbytes

    def image(self):
        """The pixels as a (height, width, 4) array, row 0 first (the bottom row on screen)."""
        return self.pixels.reshape(self.height, self.width, 4)

    def display_and_exit(self, out_dir, name):
        """Write the image as ``name`` in ``out_dir`` (the book opens a window); returns the path.

        glDrawPixels puts row 0 at the bottom, so the file is flipped to look like the window.
        """
        path = save_png(out_path(out_dir, name), self.image()[::-1])
        print(f"wrote {path}")
        return path


# -- cpu_anim.h / gpu_anim.h ------------------------------------------------------------------


class _FrameSink:
    """Collects frames; writes an animated GIF (Pillow) or numbered PNGs into ``out_dir``
    (None: ./simt-out, as every example's pictures)."""

    def __init__(self, out_dir, stem, save_every):
        self.out_dir, self.stem, self.save_every = out_dir, stem, save_every
        self.frames, self.paths = [], []

    def add(self, tick, image):
        if tick % self.save_every:
            return
        flipped = np.ascontiguousarray(image[::-1])
        if Image is not None:
            self.frames.append(Image.fromarray(flipped, "RGBA").convert("RGB"))
        else:
            name = f"{self.stem}_{len(self.paths):04d}.png"
            self.paths.append(save_png(out_path(self.out_dir, name), flipped))

    def close(self):
        if self.frames:
            path = out_path(self.out_dir, f"{self.stem}.gif")
            self.frames[0].save(path, save_all=True, append_images=self.frames[1:],
                                duration=40, loop=0)
            self.paths.append(path)
        if self.paths:
            where = self.paths[0] if len(self.paths) == 1 else f"{self.paths[0]} ..."
            print(f"wrote {where}")
        return self.paths


class CPUAnimBitmap(CPUBitmap):
    """cpu_anim.h: ``anim_and_exit(f_anim, f_exit)`` calls ``f_anim(data, tick)`` per frame.

    The book redraws a window each frame from host memory; here each frame's pixels
    (which ``f_anim`` copied into ``get_ptr()``) go to a GIF or numbered PNGs.
    """

    def __init__(self, width, height, data=None):
        super().__init__(width, height)
        self.data = data

    def anim_and_exit(self, f_anim, f_exit=None, frames=10, out_dir=None, stem="anim",
                      save_every=1):
        sink = _FrameSink(out_dir, stem, save_every)
        try:
            for tick in steps(range(frames), what="frames"):
                f_anim(self.data, tick)
                sink.add(tick, self.image())
        finally:
            if f_exit is not None:
                f_exit(self.data)
        return sink.close()


class GPUAnimBitmap:
    """gpu_anim.h without a window: ``f_anim(dev_ptr, data, tick)`` draws into device memory.

    The book registers an OpenGL pixel buffer object with CUDA and maps it each frame,
    so the kernel writes straight into what OpenGL draws: GLAnimBitmap does that (GPU
    only, with simt.gl). Here a device array stands in for the mapped buffer, on any
    device, and each frame is copied to the host only to be written to a file.
    """

    def __init__(self, width, height, data=None):
        self.width, self.height, self.data = width, height, data
        self.dev_pixels = simt.device_array(width * height * 4, np.uint8)

    def image_size(self):
        return self.dev_pixels.nbytes

    def anim_and_exit(self, f_anim, f_exit=None, frames=10, out_dir=None, stem="anim",
                      save_every=1):
        sink = _FrameSink(out_dir, stem, save_every)
        host = np.empty(self.width * self.height * 4, np.uint8)
        try:
            for tick in steps(range(frames), what="frames"):
                f_anim(self.dev_pixels, self.data, tick)
                if tick % save_every == 0:
                    self.dev_pixels.copy_to_host(host)
                    sink.add(tick, host.reshape(self.height, self.width, 4))
        finally:
            if f_exit is not None:
                f_exit(self.data)
        return sink.close()

    def last_frame(self):
        """The pixels of the latest frame as a (height, width, 4) host array."""
        return self.dev_pixels.copy_to_host().reshape(self.height, self.width, 4)


class GLAnimBitmap:
    """gpu_anim.h with OpenGL: ``f_anim(pixels, data, tick)`` draws into a pixel buffer
    object registered with CUDA, mapped for each frame as a (height * width, 4) uint8
    array (the book's uchar4 pointer) and unmapped for OpenGL. There is no window: the
    context is a headless EGL one (simt.gl.egl_context, GPU only), and OpenGL reads each
    saved frame back from the buffer (glGetBufferSubData) where the book draws it
    (glDrawPixels from the bound buffer)."""

    def __init__(self, width, height, data=None):
        self.width, self.height, self.data = width, height, data
        self.context = simt.gl.egl_context()            # the book: glutInit, glutCreateWindow
        self.buffer = simt.gl.create_buffer(width * height * 4)      # bound as the PBO
        self.resource = simt.gl.register_buffer(self.buffer)          # flags 'none'

    def image_size(self):
        return self.width * self.height * 4

    def frame(self, f_anim, tick):
        """One idle_func: map, ``f_anim``, unmap."""
        with self.resource.mapped(shape=(self.width * self.height, 4)) as pixels:
            f_anim(pixels, self.data, tick)

    def last_frame(self):
        """The buffer as OpenGL sees it: a (height, width, 4) host array."""
        return simt.gl.read_buffer(self.buffer).reshape(self.height, self.width, 4)

    def anim_and_exit(self, f_anim, f_exit=None, frames=10, out_dir=None, stem="anim",
                      save_every=1):
        sink = _FrameSink(out_dir, stem, save_every)
        try:
            for tick in steps(range(frames), what="frames"):
                self.frame(f_anim, tick)
                if tick % save_every == 0:
                    sink.add(tick, self.last_frame())
        finally:
            if f_exit is not None:
                f_exit(self.data)
        return sink.close()

    def free_resources(self):
        """The book's Esc key: unregister, delete the buffer, destroy the context."""
        self.resource.unregister()
        simt.gl.delete_buffer(self.buffer)
        self.context.destroy()


def mapped_device_view(mapped, device=None):
    """A DeviceArray over a simt.mapped_array's device address (cudaHostGetDevicePointer).

    A kernel given the DeviceArray reads and writes the host memory itself (zero-copy),
    as it does given the mapped array itself; the view is the book's explicit
    cudaHostGetDevicePointer, and can name another device. ``device`` (default:
    the one that mapped it) may name another GPU: simt's mapped memory is portable, and
    with unified addressing its device address is the same in every context.
    """
    from simt.runtime.arrays import DeviceArray
    from simt.runtime.backend import Allocation
    from simt.runtime.devices import lookup
    device = lookup(device) if device is not None else mapped.device
    alloc = Allocation(mapped.device_ptr, mapped.nbytes, device.backend, keepalive=mapped)
    return DeviceArray(mapped.shape, mapped.dtype, mapped.strides, alloc=alloc, device=device)
