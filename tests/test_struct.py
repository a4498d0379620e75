"""``@simt.struct`` classes: C++ classes in device code (guide G.4.10, issue 35 item 3).

Kernel results are compared with NumPy on random inputs, outputs poisoned before the
launch; the errors are checked for their text and line."""
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import typing

import numpy as np
import pytest

import simt
from simt.ir import types as T
from conftest import poison


@simt.struct
class Vec3:
    x: np.float32
    y: np.float32
    z: np.float32 = 0.0
    DIM: typing.ClassVar = 3

    def __add__(self, other):
        return Vec3(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other):
        return Vec3(self.x - other.x, self.y - other.y, self.z - other.z)

    def __mul__(self, k):
        return Vec3(self.x * k, self.y * k, self.z * k)

    def __rmul__(self, k):
        return self * k

    def __neg__(self):
        return Vec3(-self.x, -self.y, -self.z)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y and self.z == other.z

    def __getitem__(self, i):
        if i == 0:
            return self.x
        if i == 1:
            return self.y
        return self.z

    def __setitem__(self, i, value):
        if i == 0:
            self.x = value
        elif i == 1:
            self.y = value
        else:
            self.z = value

    def dot(self, other):
        return self.x * other.x + self.y * other.y + self.z * other.z

    def length(self):
        return math.sqrt(self.dot(self))

    def normalized(self):
        return self * (np.float32(1.0) / np.float32(self.length()))

    def scale(self, k):             # changes self: the call writes the receiver back
        self.x *= k
        self.y *= k
        self.z *= k

    @property
    def norm2(self):
        return self.dot(self)

    @staticmethod
    def zero():
        return Vec3(0.0, 0.0, 0.0)


@simt.struct
class Particle:
    pos: Vec3
    vel: Vec3
    mass: np.float32
    steps: np.int32

    def __init__(self, pos, vel, mass):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    def advance(self, dt):
        self.pos = self.pos + self.vel * dt
        self.steps += 1

    def push(self, k):              # a method of a field that changes it
        self.vel.scale(k)

    def energy(self):
        return np.float32(0.5) * self.mass * self.vel.norm2


def random_vecs(rng, n):
    out = np.zeros(n, Vec3)
    for f in "xyz":
        out[f] = rng.uniform(-2, 2, n)
    return out


def columns(v):
    return np.stack([v[f] for f in "xyz"], axis=-1)


@simt.kernel
def vec_ops(a, b, k, added, scaled, dots, lengths, mixed):
    i = simt.grid(1)
    if i < a.shape[0]:
        added[i] = a[i] + b[i]
        scaled[i] = a[i] * k
        dots[i] = Vec3.dot(a[i], b[i])        # a method through the class
        lengths[i] = a[i].length()
        mixed[i] = -(k * (a[i] - b[i])) + Vec3.zero()


def test_vec3_operators_and_methods(device, rng):
    n = 300
    a, b = random_vecs(rng, n), random_vecs(rng, n)
    k = np.float32(1.5)
    added, scaled, mixed = (poison(n, Vec3.dtype) for _ in range(3))
    dots, lengths = poison(n, np.float32), poison(n, np.float32)
    vec_ops[3, 128](a, b, k, added, scaled, dots, lengths, mixed)
    ca, cb = columns(a), columns(b)
    np.testing.assert_allclose(columns(added), ca + cb, rtol=1e-6)
    np.testing.assert_allclose(columns(scaled), ca * k, rtol=1e-6)
    np.testing.assert_allclose(dots, (ca * cb).sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lengths, np.sqrt((ca * ca).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(columns(mixed), -(k * (ca - cb)), rtol=1e-6, atol=1e-7)


@simt.kernel
def step(ps, dt, k, energy):
    i = simt.grid(1)
    if i < ps.shape[0]:
        ps[i].advance(dt)           # an array element's method: the element changes
        ps[i].push(k)               # a method of its field's: the field changes
        energy[i] = ps[i].energy()


def random_particles(rng, n):
    ps = np.zeros(n, Particle)
    ps["pos"], ps["vel"] = random_vecs(rng, n), random_vecs(rng, n)
    ps["mass"] = rng.uniform(0.5, 2, n)
    ps["steps"] = rng.integers(0, 100, n)
    return ps


def test_particles_as_an_array_of_structs(device, rng):
    n = 500
    ps = random_particles(rng, n)
    dt, k = np.float32(0.01), np.float32(0.9)
    d = simt.to_device(ps)
    energy = poison(n, np.float32)
    step[4, 128](d, dt, k, energy)
    out = d.copy_to_host()
    assert out.dtype == Particle.dtype and out.dtype.names == ("pos", "vel", "mass", "steps")
    pos, vel = columns(ps["pos"]), columns(ps["vel"])
    np.testing.assert_allclose(columns(out["pos"]), pos + vel * dt, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(columns(out["vel"]), vel * k, rtol=1e-6)
    np.testing.assert_array_equal(out["mass"], ps["mass"])
    np.testing.assert_array_equal(out["steps"], ps["steps"] + 1)
    np.testing.assert_allclose(energy, 0.5 * ps["mass"] * ((vel * k) ** 2).sum(axis=1),
                               rtol=1e-5)


@simt.kernel
def by_value(s, out, copies):
    i = simt.grid(1)
    if i < out.shape[0]:
        v = s
        v.scale(np.float32(i))      # a copy changes; the argument is by value
        out[i] = v.dot(s) + s.norm2
        copies[i] = s


@simt.kernel
def scale_param(s, out):
    s.scale(np.float32(2.0))        # the parameter, a copy, changes
    out[0] = s


def test_struct_passed_by_value(device, rng):
    n = 64
    host = Vec3(*rng.uniform(-1, 1, 3).astype(np.float32))
    ref = np.array([host.x, host.y, host.z])
    for argument in (host, np.array([(host.x, host.y, host.z)], Vec3)[0]):
        out, copies = poison(n, np.float32), poison(n, Vec3.dtype)
        by_value[1, 64](argument, out, copies)
        n2 = (ref * ref).sum()
        np.testing.assert_allclose(out, np.arange(n) * n2 + n2, rtol=1e-5)
        np.testing.assert_array_equal(columns(copies), np.tile(ref, (n, 1)).astype(np.float32))
    out = poison(1, Vec3.dtype)
    scale_param[1, 1](host, out)
    np.testing.assert_array_equal(columns(out)[0], (2 * ref).astype(np.float32))
    assert (host.x, host.y, host.z) == tuple(np.float32(v) for v in ref)   # unchanged


@simt.device
def spawn(x, speed):
    p = Particle(Vec3(x, x + 1, x + 2), Vec3(speed, 0.0, 0.0), np.float32(2.0))
    return p


@simt.device
def unit(v):
    return v.normalized()


@simt.kernel
def made_in_kernel(xs, out, units, picks):
    i = simt.grid(1)
    if i < xs.shape[0]:
        p = spawn(xs[i], np.float32(3.0))
        p.advance(np.float32(0.5))          # a variable's method: the variable changes
        out[i] = p
        u = unit(p.pos)
        units[i] = u
        w = Vec3(xs[i], 0.0)                # a field's default (z = 0)
        w[1] = u[0] + Vec3.DIM              # __setitem__, __getitem__, a ClassVar
        picks[i] = w[0] + w[1] + w.z + (1.0 if w == w else 0.0)


def test_struct_made_in_kernel_and_returned_from_device_function(device, rng):
    n = 200
    xs = rng.uniform(-3, 3, n).astype(np.float32)
    out, units, picks = poison(n, Particle.dtype), poison(n, Vec3.dtype), poison(n, np.float32)
    made_in_kernel[2, 128](xs, out, units, picks)
    pos = np.stack([xs + 1.5, xs + 1, xs + 2], axis=1).astype(np.float32)
    np.testing.assert_allclose(columns(out["pos"]), pos, rtol=1e-6)
    np.testing.assert_array_equal(columns(out["vel"]), np.tile([3, 0, 0], (n, 1)))
    np.testing.assert_array_equal(out["mass"], 2)
    np.testing.assert_array_equal(out["steps"], 1)      # __init__ left it zero
    u = pos / np.linalg.norm(pos, axis=1, keepdims=True)
    np.testing.assert_allclose(columns(units), u, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(picks, xs + u[:, 0] + 3 + 1, rtol=1e-5, atol=1e-6)


@simt.kernel
def fill(out):
    i = simt.grid(1)
    if i < out.shape[0]:
        out[i] = Vec3(i, 2 * i, 3 * i)


def test_host_reads_device_arrays_of_structs_as_structured_arrays(device):
    d = simt.device_array(10, Vec3)
    assert d.dtype == Vec3.dtype and d.dtype.names == ("x", "y", "z")
    fill[1, 32](d)
    host = d.copy_to_host()
    assert isinstance(host, np.ndarray) and host.dtype.fields["y"][1] == 4
    np.testing.assert_array_equal(host["y"], 2 * np.arange(10))
    v = Vec3.from_record(host[3])                   # the host side of the class
    assert (v.x, v.y, v.z) == (3, 6, 9) and v.dot(v) == 9 + 36 + 81
    assert repr(Vec3(1.0, 2.0)) == "Vec3(x=1.0, y=2.0, z=0.0)"
    assert isinstance(T.element_type(Vec3.dtype), T.Struct)   # not a float3


def test_struct_dtype_layout_and_nesting():
    assert Vec3.dtype.itemsize == 12 and Particle.dtype.fields["mass"][1] == 24
    assert Particle.dtype.isalignedstruct
    ps = np.zeros(2, Particle)
    p = Particle.from_record(ps[0])                 # a view of the element, as ps[0] is
    p.pos = Vec3(1.0, 2.0, 3.0)
    assert p.pos.y == 2 and ps[0]["pos"]["y"] == 2 and ps[1]["pos"]["y"] == 0
    q = Particle(Vec3(1.0, 1.0, 1.0), Vec3.zero(), 2.0)   # the class's __init__ on the host
    q.push(np.float32(2.0))
    q.vel = Vec3(1.0, 0.0, 0.0)
    q.advance(np.float32(0.5))
    assert (q.pos.x, q.steps, q.energy()) == (1.5, 1, 1.0)


@pytest.mark.parametrize("test", [test_vec3_operators_and_methods,
                                  test_particles_as_an_array_of_structs,
                                  test_struct_passed_by_value,
                                  test_struct_made_in_kernel_and_returned_from_device_function,
                                  test_host_reads_device_arrays_of_structs_as_structured_arrays],
                         ids=lambda test: test.__name__[5:])
def test_sim(test, rng):
    """The structs of the cpu device's tests on the sim device (methods that change an
    array element or a field, operators, structs by value and made in kernels)."""
    import inspect
    with simt.use_device("sim") as sim:
        test(sim, *([rng] if "rng" in inspect.signature(test).parameters else []))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptx_of_struct_kernels_assembles(tmp_path):
    types = [T.Array(Particle.dtype, 1, "C"), T.FLOAT32, T.FLOAT32, T.Array(np.float32, 1, "C")]
    ptx = step.inspect_ptx(types, arch="sm_90")
    path = tmp_path / "step.ptx"
    path.write_text(ptx)
    subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", str(tmp_path / "step.cubin")],
                   check=True, capture_output=True)


# ------------------------------------------------------------------ errors
def test_struct_declaration_errors():
    with pytest.raises(simt.CompileError) as info:
        @simt.struct
        class Loose:
            x: np.float32
            y = 0.0
    text = str(info.value)
    assert "'y' in struct Loose has no type annotation" in text
    assert "y: np.float32 = 0.0" in text and "typing.ClassVar" in text
    assert info.value.line == Loose_line(text) and "y = 0.0" in text

    with pytest.raises(simt.CompileError, match="(?s)field 'names' of struct Bag has the type "
                       "list.*NumPy scalar types"):
        @simt.struct
        class Bag:
            names: list

    with pytest.raises(simt.CompileError, match="field 'when' of struct Log.*datetime64"):
        @simt.struct
        class Log:
            when: np.datetime64

    with pytest.raises(simt.CompileError, match="struct Nothing has no fields"):
        @simt.struct
        class Nothing:
            def f(self):
                return 1


def Loose_line(text):
    """The line number a message names (``file:N``)."""
    return int(text.split("test_struct.py:")[1].split()[0])


def test_kernel_errors_name_the_class_the_line_and_what_to_do():
    @simt.kernel
    def missing_method(a, out):
        out[0] = a[0].nrm()

    with pytest.raises(simt.CompileError) as info:
        missing_method[1, 1](np.zeros(2, Vec3), np.zeros(1, np.float32))
    text = str(info.value)
    assert "struct Vec3 has no field or method 'nrm'" in text
    assert "its methods: dot, length, norm2, normalized, scale, zero" in text
    assert info.value.line == missing_method.pyfunc.__code__.co_firstlineno + 2

    @simt.kernel
    def new_field(a):
        v = a[0]
        v.w = 1.0
        a[0] = v

    with pytest.raises(simt.CompileError, match="(?s)struct Vec3 has no field 'w'.*w: np.float32"):
        new_field[1, 1](np.zeros(2, Vec3))

    @simt.kernel
    def no_operator(a):
        a[0] = a[0] / a[1]

    with pytest.raises(simt.CompileError,
                       match="(?s)operator '/' is not defined for struct Vec3.*define __truediv__"):
        no_operator[1, 1](np.zeros(2, Vec3))

    @simt.kernel
    def too_few(out):
        out[0] = Vec3(1.0)

    with pytest.raises(simt.CompileError, match="Vec3\\(\\) is missing field 'y'"):
        too_few[1, 1](np.zeros(1, Vec3))


def test_disk_cache_follows_struct_method_sources(tmp_path):
    module = tmp_path / "structmod.py"
    source = textwrap.dedent("""
        import numpy as np
        import simt

        SCALE = 3.0

        @simt.struct
        class V:
            x: np.float32

            def f(self):
                return self.x * SCALE

        @simt.kernel
        def k(out, v):
            out[0] = v.f()
    """)
    run = ("import sys, numpy as np; sys.path.insert(0, %r); import structmod as m; "
           "out = np.zeros(1, np.float32); m.k[1, 1](out, m.V(2.0)); print(out[0])" % str(tmp_path))
    env = dict(os.environ, SIMT_CACHE_DIR=tempfile.mkdtemp(dir=tmp_path))

    def result():
        done = subprocess.run([sys.executable, "-c", run], env=env, capture_output=True,
                              text=True, check=True)
        return float(done.stdout.split()[-1])

    module.write_text(source)
    assert result() == 6.0 and result() == 6.0          # compiled, then from the cache
    module.write_text(source.replace("SCALE = 3.0", "SCALE = 5.0"))
    assert result() == 10.0                            # a global a method reads
    module.write_text(source.replace("self.x * SCALE", "self.x * SCALE + 1"))
    assert result() == 7.0                             # the method's source
