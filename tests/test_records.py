"""Records (C structs as NumPy structured dtypes), tuples and named tuples in kernels.

Every kernel result is compared with NumPy on random inputs, outputs poisoned field by
field; the aligned and the packed layout of one struct run the same kernels."""
import collections
import os
import shutil
import subprocess
import tempfile
import typing

import numpy as np
import numpy.lib.recfunctions  # noqa: F401  (np.lib.recfunctions)
import pytest

import simt
from simt.ir import types as T
from conftest import marked_line, poison, random_array

# not x, y, z alone: that struct is CUDA's float3 (a vector type, docs/vector-types.md)
VEC = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("id", "<i4")])
# C: struct { uint8_t tag; float w; float v[3]; struct { int16_t i, j; } p; double d; }
FIELDS = [("tag", "u1"), ("w", "<f4"), ("v", "<f4", (3,)),
          ("p", [("i", "<i2"), ("j", "<i2")]), ("d", "<f8")]
ALIGNED = np.dtype(FIELDS, align=True)
PACKED = np.dtype(FIELDS)                      # w at offset 1, d at 21: unaligned
LAYOUTS = pytest.mark.parametrize("dtype", [ALIGNED, PACKED], ids=["aligned", "packed"])


def refused_on_gpu(device, dtype):
    """Packed records are refused on GPUs (wrong values and misaligned accesses on an H100,
    2026-11-23): check the refusal and say the test is done."""
    if device.kind != "cuda" or dtype is not PACKED:
        return False
    with pytest.raises(simt.NotSupportedError, match="packed record dtype"):
        first_w[1, 1](np.zeros(1, np.float32), np.zeros(2, PACKED))
    return True


@simt.kernel
def first_w(out, a):
    out[0] = a[0].w


def fill(make, shape, dtype):
    """A structured array whose every scalar field is ``make(shape, scalar dtype)``."""
    out = np.empty(shape, dtype)
    for name in dtype.names:
        fdt = dtype.fields[name][0]
        base, sub = fdt.subdtype if fdt.subdtype is not None else (fdt, ())
        if base.names is not None:
            out[name] = fill(make, shape + sub, base)
        else:
            out[name] = make(shape + sub, base)
    return out


def random_records(rng, n, dtype):
    return fill(lambda shape, dt: random_array(rng, shape, dt), (n,), dtype)


def poison_records(n, dtype):
    return fill(poison, (n,), dtype)


def same(got, want):
    for name in want.dtype.names:
        if want.dtype.fields[name][0].names is not None:
            same(got[name], want[name])
        else:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, err_msg=name)


@simt.kernel
def fields_in_place(out, a, s):
    i = simt.grid(1)
    if i < a.shape[0]:
        out[i] = a[i].w + a[i]["v"][1] + a[i].p.j + s.d + s.v[2]
        a[i].w = a[i].tag * 2
        a[i]["v"][2] += 1.5
        a[i].p.i = i
        a[i]["d"] *= -1.0


@LAYOUTS
def test_fields_read_and_written_in_place(device, rng, dtype):
    if refused_on_gpu(device, dtype):
        return
    a = random_records(rng, 40, dtype)
    ref = a.copy()
    s = random_records(rng, 1, dtype)[0]
    out = poison(40, np.float64)
    fields_in_place[2, 32](out, a, s)
    np.testing.assert_allclose(out, ref["w"].astype(np.float64) + ref["v"][:, 1]
                               + ref["p"]["j"] + s["d"] + np.float64(s["v"][2]), rtol=1e-6)
    ref["w"] = ref["tag"] * 2
    ref["v"][:, 2] += np.float32(1.5)
    ref["p"]["i"] = np.arange(40)
    ref["d"] *= -1
    same(a, ref)


@simt.kernel
def record_values(out, a, b):
    i = simt.grid(1)
    if i < a.shape[0]:
        r = a[i]
        r.w = 7.0
        r.v[i % 3] = -1.0
        r.p.j = r.p.i + 1
        out[i] = r
        b[i] = a[a.shape[0] - 1 - i]


@LAYOUTS
def test_record_copies_and_value_fields(device, rng, dtype):
    if refused_on_gpu(device, dtype):
        return
    a = random_records(rng, 33, dtype)
    out, b = poison_records(33, dtype), poison_records(33, dtype)
    d_a, d_out, d_b = (simt.to_device(x) for x in (a, out, b))
    record_values[2, 32](d_out, d_a, d_b)
    got = d_out.copy_to_host()
    ref = a.copy()
    ref["w"] = 7
    ref["v"][np.arange(33), np.arange(33) % 3] = -1
    ref["p"]["j"] = ref["p"]["i"] + 1
    same(got, ref)
    same(d_b.copy_to_host(), a[::-1])


def test_aligned_field_load_is_one_load_at_its_offset():
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions

    @simt.kernel
    def take(out, a):
        i = simt.grid(1)
        out[i] = a[i].w + a[i].d

    def ptx(dtype):
        types = [T.Array(np.float64, 1, "C"), T.Array(dtype, 1, "C")]
        return compile_kernel(take.typed_ir(types), CompileOptions(), "sm_90").ptx

    aligned = ptx(ALIGNED)                      # w at 4, d at 24, records of 32 bytes
    loads = [line.split()[0] for line in aligned.splitlines() if "ld.global" in line]
    assert loads == ["ld.global.b32", "ld.global.b64"] or \
        loads == ["ld.global.f32", "ld.global.f64"], loads
    assert "+4]" in aligned and "+24]" in aligned
    packed = ptx(PACKED)                        # unaligned: the bytes one by one
    assert packed.count("ld.global.b8") + packed.count("ld.global.u8") == 12


@simt.device
def centroid(a, b):
    r = a
    r.x = (a.x + b.x) / 2
    r.y = (a.y + b.y) / 2
    r.z = (a.z + b.z) / 2
    return r


@simt.device
def divmod_(a, b):
    return a // b, a % b


Pair = collections.namedtuple("Pair", "lo hi")


class Span(typing.NamedTuple):
    start: np.int64
    stop: np.int64
    step: np.int64 = 1


@simt.device
def order(a, b):
    return Pair(min(a, b), hi=max(a, b))


@simt.device
def width(s):
    return (s.stop - s.start) // s.step


@simt.device
def ends(t):
    return t[0] + t[-1]


@simt.kernel
def values_through_devices(mid, q, spans, a, b, k, p):
    i = simt.grid(1)
    if i < a.shape[0]:
        mid[i] = centroid(a[i], b[i])
        q[i, 0], q[i, 1] = divmod_(k[i], 7)
        pair = order(k[i], p.x)
        spans[i] = width(Span(pair.lo, pair.hi)) + width(Span(0, pair[1], 2)) + \
            ends((k[i], 5, i))


def test_records_tuples_and_named_tuples_through_device_functions(device, rng):
    a, b = random_records(rng, 50, VEC), random_records(rng, 50, VEC)
    k = rng.integers(1, 1000, 50)
    p = np.array([(300.0, 1.0, 2.0, 3)], VEC)[0]
    mid, q, spans = poison_records(50, VEC), poison((50, 2), np.int64), poison(50, np.int64)
    values_through_devices[2, 32](mid, q, spans, a, b, k, p)
    for name in "xyz":
        np.testing.assert_allclose(mid[name], (a[name] + b[name]) / 2, rtol=1e-6)
    np.testing.assert_array_equal(q, np.stack([k // 7, k % 7], axis=1))
    lo, hi = np.minimum(k, 300), np.maximum(k, 300)
    np.testing.assert_array_equal(spans, (hi - lo) + hi // 2 + k + np.arange(50))


@simt.kernel
def pass_named(out, span):
    out[0] = span.stop - span.start
    out[1] = span[2]


def test_named_tuple_argument(device):
    out = poison(2, np.int64)
    pass_named[1, 1](out, Span(np.int64(3), np.int64(40), np.int64(5)))
    np.testing.assert_array_equal(out, [37, 5])


TILE = 32


@simt.kernel
def reverse_in_shared(out, a):
    tile = simt.shared.array(TILE, VEC)
    scratch = simt.local.array(2, VEC)
    t = simt.threadIdx.x
    i = simt.blockIdx.x * TILE + t
    tile[t] = a[i]
    simt.syncthreads()
    scratch[0] = tile[TILE - 1 - t]
    scratch[1].x = scratch[0].y
    out[i] = scratch[0]
    out[i].z = scratch[1].x + tile[t].z


def test_records_in_shared_and_local_memory(device, rng):
    a = random_records(rng, 64, VEC)
    out = poison_records(64, VEC)
    reverse_in_shared[2, TILE](out, a)
    rev = a.reshape(2, TILE)[:, ::-1].reshape(-1)
    np.testing.assert_allclose(out["x"], rev["x"])
    np.testing.assert_allclose(out["y"], rev["y"])
    np.testing.assert_allclose(out["z"], rev["y"] + a["z"], rtol=1e-6)


@simt.kernel
def write_field(a):
    a[0].x = 1.0


def test_read_only_record_array_refused(device):
    a = np.zeros(4, VEC)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        write_field[1, 1](a)


def test_record_errors():
    bad = np.dtype([("when", "M8[s]"), ("x", "<f4")])
    with pytest.raises(TypeError, match="'when' has dtype datetime64"):
        write_field[1, 1](np.zeros(2, bad))
    union = np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f4"], "offsets": [0, 0]})
    with pytest.raises(TypeError, match="overlap"):
        write_field[1, 1](np.zeros(2, union))

    @simt.kernel
    def no_field(a):
        a[0].nope = 1.0

    with pytest.raises(simt.CompileError, match="(?s)no field 'nope'.*its fields: x, y, z, id"):
        no_field[1, 1](np.zeros(2, VEC))

    @simt.kernel
    def copy_view(a):
        r = a[0]
        w = r.v
        w[0] = 1.0

    with pytest.raises(simt.CompileError, match="field of a copy of a record"):
        copy_view[1, 1](np.zeros(2, ALIGNED))

    @simt.kernel
    def frozen(out, s):
        s.lo = 1
        out[0] = s.lo

    with pytest.raises(simt.CompileError, match="named tuples are immutable"):
        frozen[1, 1](np.zeros(1), Pair(1, 2))


EMPTY = np.dtype([])


def test_empty_record_dtype_refused_by_name():
    # np.dtype([]) raised a raw IndexError from the type of an array's element
    with pytest.raises(TypeError, match=r"argument 'a': the record dtype \[\] has no fields"):
        write_field[1, 1](np.zeros(2, np.dtype([])))
    nested = np.dtype([("x", "<f4"), ("e", np.dtype([]))])
    with pytest.raises(TypeError, match=r"\(field 'e'\) has no fields"):
        write_field[1, 1](np.zeros(2, nested))

    @simt.kernel
    def empty_shared(out):
        s = simt.shared.array(4, EMPTY)
        out[0] = 1.0

    with pytest.raises(simt.CompileError, match="has no fields") as caught:
        empty_shared[1, 1](np.zeros(1))
    assert "simt.shared.array" in str(caught.value)


def test_misaligned_record_array_refused():
    raw = np.zeros(ALIGNED.itemsize * 4 + 8, np.uint8)
    start = (4 - raw.ctypes.data) % 8             # data 4 bytes past an 8-aligned address,
    shifted = raw[start:start + ALIGNED.itemsize * 4].view(ALIGNED)   # wherever raw lies
    assert shifted.ctypes.data % 8 == 4
    with pytest.raises(TypeError, match="8-byte alignment"):
        write_field[1, 1](shifted)


def test_record_parameter_flattening_for_the_gpu():
    """The GPU gets a record argument as its scalars in address order (no padding); the
    host's values, their ctypes kinds and the kernel's PTX parameters must agree."""
    from simt.backends.cuda import params as P
    dtype = np.dtype([("ok", "?"), ("h", "<f2"), ("p", ALIGNED), ("c", "<c8")], align=True)
    rec = np.zeros(1, dtype)[0]
    rec["ok"], rec["h"], rec["c"] = True, 1.5, 2 - 3j
    rec["p"]["v"] = [4, 5, 6]
    rec["p"]["p"]["j"] = -7
    t = T.Record(dtype)
    values = P.values(t, rec, None)
    assert len(values) == len(P.kinds(t)) == len(P.llvm_types(t)) == 12
    assert values[:2] == [1, int(np.float16(1.5).view(np.uint16))]
    assert values[4:7] == [4.0, 5.0, 6.0] and values[8] == -7 and values[-2:] == [2.0, -3.0]


@simt.kernel
def from_tuples(a, x):
    i = simt.grid(1)
    if i < a.shape[0]:
        a[i] = (x[i], i, (x[i] * 2, -x[i]), x[i] > 0)
        if i == 0:
            r: FLAT = (1.5, 7, (0, 1), True)
            a[0] = r


FLAT = np.dtype([("x", "<f4"), ("n", "<i4"), ("v", "<f8", (2,)), ("ok", "?")], align=True)


def test_tuples_convert_to_records(device, rng):
    x = random_array(rng, 40, np.float32)
    a = poison_records(40, FLAT)
    from_tuples[2, 32](a, x)
    want = np.zeros(40, FLAT)
    want["x"], want["n"], want["ok"] = x, np.arange(40), x > 0
    want["v"] = np.stack([x * 2.0, -x.astype(np.float64)], axis=1)
    want[0] = (1.5, 7, (0, 1), True)
    same(a, want)


BODY = np.dtype([("pos", simt.float3.dtype), ("m", "<f4"), ("q", simt.float4.dtype)], align=True)


@simt.kernel
def vector_fields(a, out, s):
    i = simt.grid(1)
    if i < a.shape[0]:
        p = a[i].pos                             # a float3 value
        out[i] = p.x + p.y * a[i].q.w + s.q.z
        p.z = a[i].m
        a[i].pos = p
        r = a[i]
        r.q = simt.make_float4(1.0, 2.0, 3.0, i)
        a[i] = r


def test_vector_type_fields(device, rng):
    a = random_records(rng, 40, BODY)
    ref = a.copy()
    s = random_records(rng, 1, BODY)[0]
    out = poison(40, np.float32)
    vector_fields[2, 32](a, out, s)
    np.testing.assert_allclose(out, ref["pos"]["x"] + ref["pos"]["y"] * ref["q"]["w"]
                               + s["q"]["z"], rtol=1e-5)
    ref["pos"]["z"] = ref["m"]
    ref["q"] = [(1, 2, 3, i) for i in range(40)]
    same(a, ref)


# q's fields are x, y of one type: q is CUDA's float2 (a vector type); r is a record
NESTED = np.dtype([("a", "<i4"), ("q", [("x", "<f4"), ("y", "<f4")]),
                   ("r", [("x", "<f8"), ("n", "<i4")])], align=True)


@simt.kernel
def nested_by_name(b, out, copies):
    i = simt.grid(1)
    if i < b.shape[0]:
        out[i] = b[i]["q"]["x"] * b[i]["r"]["x"] + b[i].q.y
        c = b[i]                                 # a value: its fields are rebuilt
        c["q"]["y"] -= 1.0
        c.q.x = 2.0
        c["r"]["n"] = 7
        copies[i] = c
        b[i]["q"]["x"] += 1.0                    # in place: only the field's bytes
        b[i]["q"]["y"] = b[i]["a"] * 2
        b[i].r.x *= 0.5
        b[i]["r"]["n"] -= 3


def test_nested_fields_by_name(device, rng):
    """b[i]['q']['x'] reads and writes a field of a nested record, vector-typed or not,
    as b[i].q.x does (issue 33 item 9: a CompileError, "'str' cannot be used as a value",
    when q was a vector type)."""
    n = 70
    b = random_records(rng, n, NESTED)
    ref = b.copy()
    out, copies = poison(n, np.float64), poison_records(n, NESTED)
    nested_by_name[3, 32](b, out, copies)
    np.testing.assert_allclose(out, ref["q"]["x"] * ref["r"]["x"] + ref["q"]["y"], rtol=1e-6)
    want = ref.copy()
    want["q"]["y"] -= np.float32(1)
    want["q"]["x"] = 2
    want["r"]["n"] = 7
    same(copies, want)
    ref["q"]["x"] += np.float32(1)
    ref["q"]["y"] = ref["a"] * 2
    ref["r"]["x"] *= 0.5
    ref["r"]["n"] -= 3
    same(b, ref)


def test_nested_vector_component_store_is_one_store():
    """b[i]['q']['y'] = v writes the 4 bytes of y alone (at record offset 8), not the
    whole float2, so another thread's write of q.x is not lost; ptxas takes the PTX."""
    from simt.backends.cuda.compile import compile_kernel
    from simt.compiler.options import CompileOptions

    @simt.kernel
    def set_y(b, v):
        i = simt.grid(1)
        b[i]["q"]["y"] = v[i]

    types = [T.Array(NESTED, 1, "C"), T.Array(np.float32, 1, "C")]
    ptx = compile_kernel(set_y.typed_ir(types), CompileOptions(), "sm_90").ptx
    stores = [line.split()[0] for line in ptx.splitlines() if "st.global" in line]
    assert stores in (["st.global.f32"], ["st.global.b32"]), stores
    assert "+8]" in ptx
    assert_ptxas_accepts(ptx)


def assert_ptxas_accepts(ptx):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-arch=sm_90", path, "-o", os.path.join(tmp, "k.o")],
                              capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_name_errors():
    @simt.kernel
    def not_a_record(a):
        a[0] = a["x"]

    with pytest.raises(simt.CompileError, match=r"float32\[:\].* has no fields to index by "
                       r"name \('x'\)") as info:
        not_a_record.inspect_types("void(float32[:])")
    assert "in 'not_a_record'" in str(info.value) and 'a["x"]' in str(info.value)

    @simt.kernel
    def no_component(b):
        b[0]["q"]["z"] = 1.0

    with pytest.raises(simt.CompileError, match="float2 has no attribute 'z'"):
        no_component[1, 1](np.zeros(1, NESTED))

    @simt.kernel
    def through_a_view_of_a_copy(a):
        r = a[0]
        w = r.vs
        w[1].x = 1.0

    with pytest.raises(simt.CompileError, match="(?s)field of a copy of a record.*r.v\\[k\\].x"):
        through_a_view_of_a_copy[1, 1](np.zeros(1, OF_ARRAYS))



OF_ARRAYS = np.dtype([("vs", simt.float2.dtype, (3,)), ("recs", VEC, (2,))], align=True)


@simt.kernel
def parts_of_array_field_elements(a, k):
    i = simt.grid(1)
    if i < a.shape[0]:
        r = a[i]
        r.vs[k].x = 1.5                  # r's copy of the element, then r: as C does
        r["recs"][1]["id"] += 2
        a[i] = r
        a[i].vs[2]["y"] = -1.0           # in place
        a[i]["recs"][0].z = 0.25


def test_parts_of_array_field_elements(device, rng):
    """r.vs[k].x = v on a record variable r assigns r (the write was lost in a stack copy);
    in memory only the part is written."""
    a = random_records(rng, 40, OF_ARRAYS)
    want = a.copy()
    parts_of_array_field_elements[2, 32](a, 1)
    want["vs"]["x"][:, 1] = 1.5
    want["recs"]["id"][:, 1] += 2
    want["vs"]["y"][:, 2] = -1
    want["recs"]["z"][:, 0] = 0.25
    flat = np.lib.recfunctions.structured_to_unstructured
    np.testing.assert_array_equal(flat(a, np.float64), flat(want, np.float64))


@simt.kernel
def first_field(out, s):
    out[0] = s.x + s.n


def test_record_scalars_of_two_dtypes_are_two_signatures(device):
    """Every record scalar is an np.void: the class cannot fix the signature, so repeated
    launches alternating two record dtypes each run their own compile."""
    narrow = np.array([(1.5, 2)], [("x", "<f4"), ("n", "<i2")])[0]
    wide = np.array([(-7, 2.25)], [("n", "<i8"), ("x", "<f8")])[0]
    out = poison(1, np.float64)
    for _ in range(3):
        for s, want in ((narrow, 3.5), (wide, -4.75)):
            out[0] = np.nan
            first_field[1, 1](out, s)
            assert out[0] == want


# ---------------------------------------------------------------- on the sim device
def _run_on_sim(test, rng, dtype=None):
    """Run a device test of this file on the sim device (its params by name)."""
    import inspect
    given = {"rng": rng, "dtype": dtype}
    with simt.use_device("sim") as sim:
        params = list(inspect.signature(test).parameters)
        test(sim, **{name: given[name] for name in params[1:]})


@pytest.mark.parametrize("test, dtype", [
    (test_fields_read_and_written_in_place, ALIGNED),
    (test_fields_read_and_written_in_place, PACKED),
    (test_record_copies_and_value_fields, ALIGNED),
    (test_record_copies_and_value_fields, PACKED),
    (test_records_tuples_and_named_tuples_through_device_functions, None),
    (test_records_in_shared_and_local_memory, None),
    (test_tuples_convert_to_records, None),
    (test_vector_type_fields, None),
    (test_nested_fields_by_name, None),
    (test_parts_of_array_field_elements, None),
    (test_record_scalars_of_two_dtypes_are_two_signatures, None)],
    ids=lambda x: x.__name__[5:] if callable(x) else ("packed" if x is PACKED else "-"))
def test_sim(test, dtype, rng):
    """The records of the cpu device's tests on the sim device, against the same NumPy
    references: fields in place and as values, nested, array fields, shared and local."""
    _run_on_sim(test, rng, dtype)


@simt.kernel
def fields_of_one_record(a, same):
    t = simt.threadIdx.x
    if t == 0:
        a[0].x = 1.0                   # <- first writer
    elif same:
        a[0].x = 2.0                   # <- same field
    else:
        a[0].y = 2.0                   # another field of the same record: no race


@simt.kernel
def unwritten_field(out):
    tile = simt.shared.array(4, VEC)
    t = simt.threadIdx.x
    tile[t].x = t
    simt.syncthreads()
    out[t] = tile[t].x + tile[t].y     # <- y unwritten


def test_sim_checks_each_field_of_a_record():
    """On the sim each field of a record is checked by itself: two threads writing the
    same field race, two writing different fields do not, and reading a field nothing
    wrote is an uninitialized read (the other field's write does not count)."""
    with simt.use_device("sim"):
        a = random_records(np.random.default_rng(1), 2, VEC)
        want = a.copy()
        fields_of_one_record[1, 2](a, False)
        want[0]["x"], want[0]["y"] = 1.0, 2.0
        np.testing.assert_array_equal(a, want)
        with pytest.raises(simt.RaceConditionError, match=r"(?s)write and write of a\[0\].*"
                           f"test_records.py:{marked_line(__file__, 'first writer')}"):
            fields_of_one_record[1, 2](a, True)
        out = poison(4, np.float32)
        with pytest.raises(simt.UninitializedReadError,
                           match=f"test_records.py:{marked_line(__file__, 'y unwritten')}"):
            unwritten_field[1, 4](out)
