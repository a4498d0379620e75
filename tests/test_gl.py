"""OpenGL interop (simt.gl, CUDA by Example chapter 8). The cpu and sim devices refuse it;
the mapping logic runs here over a stand-in for the driver's registered buffer; the
headless EGL context and the buffer calls run wherever libEGL loads (Mesa's software
renderer will do); a GPU with NVIDIA's EGL runs the whole path: a kernel writes an OpenGL
buffer that OpenGL then reads back, and reads one OpenGL wrote."""
import numpy as np
import pytest

import simt
from simt.runtime.graphics import GraphicsResource
from conftest import poison, random_array


@simt.kernel
def scale_into(out, x, factor):
    i = simt.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] * factor


@simt.kernel
def rgba(pixels, grey):
    """One uchar4 pixel per thread, as chapter 8's kernels write them."""
    i = simt.grid(1)
    if i < pixels.shape[0]:
        pixels[i, 0] = grey[i]
        pixels[i, 1] = grey[i] // 2
        pixels[i, 2] = 255 - grey[i]
        pixels[i, 3] = 255


@pytest.mark.parametrize("spec", ["cpu", "sim"])
def test_cpu_and_sim_refuse_opengl_interop(spec):
    with simt.use_device(spec):
        for call, name in ((lambda: simt.gl.register_buffer(1), "register_buffer"),
                           (lambda: simt.gl.egl_context(), "egl_context")):
            with pytest.raises(simt.NotSupportedError) as info:
                call()
            message = str(info.value)
            assert f"'{spec}' device does not support OpenGL interop (simt.gl.{name})" \
                in message
            assert "only NVIDIA GPUs have" in message and "cuda:0" in message


def test_missing_libraries_say_what_to_install():
    from simt.gl.libs import library
    with pytest.raises(simt.NotSupportedError, match=r"OpenGL interop needs libsimt-no-egl.so.1, "
                                                     r"which could not be loaded \(.*\): install "
                                                     r"the NVIDIA driver's EGL and OpenGL"):
        library("libsimt-no-egl.so.1")


class StandIn:
    """The back end's registered buffer, over a poisoned cpu device array: records the
    calls."""

    def __init__(self, nbytes):
        self.memory = simt.to_device(poison(nbytes, np.uint8), device="cpu")
        self.calls = []

    def map(self, stream):
        self.calls.append(("map", stream))

    def pointer(self):
        return self.memory.ptr, self.memory.nbytes

    def unmap(self, stream):
        self.calls.append(("unmap", stream))

    def unregister(self):
        self.calls.append("unregister")


def _resource(nbytes, flags="none"):
    """A resource over a StandIn, on the cpu device (which the tests make current)."""
    impl = StandIn(nbytes)
    return GraphicsResource(impl, simt.get_device(), flags, "OpenGL buffer 7"), impl


def test_a_mapped_resource_is_an_array_kernels_write(rng):
    with simt.use_device("cpu"):
        x = random_array(rng, 1000, np.float32)
        resource, impl = _resource(1000 * 4)
        stream = simt.Stream()
        with resource.mapped(stream, np.float32, (1000,)) as out:
            assert resource.is_mapped and resource.size == 4000
            assert out.shape == (1000,) and out.dtype == np.float32 and out.ptr == impl.memory.ptr
            scale_into[4, 256, 0, stream](out, simt.to_device(x), np.float32(3))
        assert not resource.is_mapped
        assert impl.calls == [("map", stream.handle), ("unmap", stream.handle)]
        stream.synchronize()
        np.testing.assert_array_equal(impl.memory.copy_to_host().view(np.float32),
                                      x * np.float32(3))
        whole = resource.map()                  # default: bytes, the whole buffer
        assert whole.shape == (4000,) and whole.dtype == np.uint8
        assert resource.array(np.int32, (10, 100)).shape == (10, 100)
        resource.unregister()
        assert impl.calls[-2:] == [("unmap", None), "unregister"]
        resource.unregister()                   # a second time: nothing
        assert impl.calls.count("unregister") == 1


def test_mapping_misuse_is_refused():
    with simt.use_device("cpu"):
        resource, impl = _resource(64)
        with pytest.raises(RuntimeError, match="OpenGL buffer 7 is not mapped; call map"):
            resource.unmap()
        with pytest.raises(RuntimeError, match="not mapped"):
            resource.size
        resource.map()
        with pytest.raises(RuntimeError, match="mapped already; unmap"):
            resource.map()
        resource.unmap()
        with pytest.raises(ValueError, match=r"a \(17,\) array of float32 needs 68 bytes; "
                                             r"OpenGL buffer 7 holds 64"):
            resource.map(dtype=np.float32, shape=17)
        assert not resource.is_mapped and impl.calls[-1] == ("unmap", None)   # given back
        with pytest.raises(ValueError, match="not a whole number of"):
            resource.map(dtype=np.dtype((np.uint8, 3)))
        with pytest.raises(KeyError):
            with resource.mapped():
                raise KeyError("a failing frame")
        assert not resource.is_mapped
        with pytest.raises(simt.InvalidConfiguration, match="mapping OpenGL buffer 7: the "
                                                            "stream must be a simt.Stream"):
            resource.map(stream="s")
        with resource:
            pass
        with pytest.raises(RuntimeError, match="was unregistered"):
            resource.map()


def test_read_only_resources_give_read_only_arrays():
    with simt.use_device("cpu"):
        resource, _ = _resource(64, "read_only")
        with resource.mapped(dtype=np.float32) as array:
            assert array.readonly
            x = simt.to_device(np.ones(16, np.float32))
            with pytest.raises(ValueError, match="kernel 'scale_into' writes its parameter "
                                                 "'out'"):
                scale_into[1, 16](array, x, np.float32(2))
            scale_into[1, 16](x, array, np.float32(2))       # reading it is allowed


@pytest.fixture
def egl():
    """A headless context on EGL's first device (any vendor's: no GPU needed)."""
    try:
        context = simt.gl.EglContext()
    except simt.NotSupportedError as exc:      # no libEGL, or no EGL driver behind it
        pytest.skip(str(exc))
    yield context
    context.destroy()


def test_egl_context_and_buffer_calls(egl, rng):
    assert simt.gl.current() == egl.version and egl.renderer
    data = random_array(rng, 256, np.float32)
    pbo = simt.gl.create_buffer(data.nbytes)
    assert simt.gl.buffer_size(pbo) == data.nbytes
    simt.gl.write_buffer(pbo, poison(256, np.float32))
    simt.gl.write_buffer(pbo, data[16:], offset=64)
    back = simt.gl.read_buffer(pbo, np.float32)
    np.testing.assert_array_equal(back[16:], data[16:])
    np.testing.assert_array_equal(simt.gl.read_buffer(pbo, np.float32, 4, offset=64), data[16:20])
    with pytest.raises(ValueError, match="holds 256 float32 elements after byte 0, not 300"):
        simt.gl.read_buffer(pbo, np.float32, 300)
    with pytest.raises(ValueError, match="unknown usage 'often'"):
        simt.gl.create_buffer(16, usage="often")
    simt.gl.delete_buffer(pbo)
    egl.release()
    assert simt.gl.current() is None
    with pytest.raises(RuntimeError, match="read_buffer: no OpenGL context is current on this "
                                           r"thread; make one current first: simt.gl.egl_context"):
        simt.gl.read_buffer(pbo)
    egl.make_current()


@pytest.fixture
def gpu_gl(device):
    """A headless OpenGL context on the GPU under test (skips where there is none)."""
    if device.kind != "cuda":
        pytest.skip("GPU only: test_cpu_and_sim_refuse_opengl_interop covers the others")
    try:
        context = simt.gl.egl_context()
    except simt.NotSupportedError as exc:      # no libEGL, or no NVIDIA EGL driver
        pytest.skip(str(exc))
    yield context
    context.destroy()


def test_a_kernel_writes_an_opengl_buffer(gpu_gl, rng):
    n = 512 * 64
    grey = rng.integers(0, 256, n, dtype=np.uint8)
    assert "NVIDIA" in gpu_gl.vendor, gpu_gl.vendor
    pbo = simt.gl.create_buffer(n * 4)
    simt.gl.write_buffer(pbo, poison(n * 4, np.uint8))
    resource = simt.gl.register_buffer(pbo)
    stream = simt.Stream()
    with resource.mapped(stream, np.uint8, (n, 4)) as pixels:
        assert resource.size == n * 4
        rgba[n // 256, 256, 0, stream](pixels, simt.to_device(grey))
    expected = np.stack([grey, grey // 2, 255 - grey, np.full_like(grey, 255)], axis=-1)
    np.testing.assert_array_equal(simt.gl.read_buffer(pbo).reshape(n, 4), expected)
    resource.unregister()
    simt.gl.delete_buffer(pbo)


def test_a_kernel_reads_what_opengl_wrote(gpu_gl, rng):
    x = random_array(rng, 4096, np.float32)
    vbo = simt.gl.create_buffer(data=x, usage="static_draw", target="array")
    out = simt.to_device(poison(4096, np.float32))
    with simt.gl.register_buffer(vbo, "read_only") as resource:
        with resource.mapped(dtype=np.float32) as mapped:
            assert mapped.readonly and mapped.shape == (4096,)
            scale_into[16, 256](out, mapped, np.float32(-2))
    np.testing.assert_array_equal(out.copy_to_host(), x * np.float32(-2))
    simt.gl.delete_buffer(vbo)


def test_registering_needs_a_current_context(gpu_gl):
    with pytest.raises(ValueError, match="unknown flags 'write'"):
        simt.gl.register_buffer(1, "write")
    gpu_gl.release()
    with pytest.raises(RuntimeError, match=r"simt.gl.register_buffer\(1\): no OpenGL context "
                                           "is current on this thread"):
        simt.gl.register_buffer(1)


class Shared(StandIn):
    """A registered buffer without a GPU: the kernel writes a cpu array, which unmap
    copies into the OpenGL buffer (a GPU shares the memory instead)."""

    def __init__(self, buffer_id):
        super().__init__(simt.gl.buffer_size(buffer_id))
        self.buffer_id = buffer_id

    def unmap(self, stream):
        super().unmap(stream)
        simt.gl.write_buffer(self.buffer_id, self.memory.copy_to_host())


@pytest.mark.parametrize("program", ["basic_interop_gl", "ripple_interop_gl"])
def test_gl_examples_on_mesa(egl, monkeypatch, tmp_path, program):
    """The chapter 8 examples' OpenGL path on the cpu device: an EGL context of any
    vendor, and registration standing in for the driver's."""
    from simt.examples import gl_interop, interop, ripple
    egl.release()

    def register(buffer_id, flags="none"):
        return GraphicsResource(Shared(buffer_id), simt.get_device(), flags, "buffer")
    monkeypatch.setattr(simt.gl, "egl_context", simt.gl.EglContext)
    monkeypatch.setattr(simt.gl, "register_buffer", register)
    with simt.use_device("cpu"):
        if program == "basic_interop_gl":
            image = gl_interop.basic_interop_gl(out_dir=str(tmp_path), dim=64)
            expected = interop.reference(64)
        else:
            image = gl_interop.ripple_interop_gl(out_dir=str(tmp_path), dim=64, frames=3)
            expected = ripple.reference(64, 2)
    _nearly(image, expected)
    assert any(p.name.startswith(program) for p in tmp_path.iterdir())
    egl.make_current()


def _nearly(image, expected):
    assert np.abs(image.astype(int) - expected).max() <= 1     # sin/cos: an ulp apart
    assert np.mean(image != expected) < 0.01


@pytest.mark.parametrize("program", ["basic_interop_gl", "ripple_interop_gl"])
def test_gl_examples_on_the_gpu(gpu_gl, tmp_path, program):
    from simt.examples import gl_interop, interop, ripple
    if program == "basic_interop_gl":
        image = gl_interop.basic_interop_gl(out_dir=str(tmp_path), dim=64)
        _nearly(image, interop.reference(64))
    else:
        image = gl_interop.ripple_interop_gl(out_dir=str(tmp_path), dim=64, frames=3)
        _nearly(image, ripple.reference(64, 2))
    assert any(p.name.startswith(program) for p in tmp_path.iterdir())
