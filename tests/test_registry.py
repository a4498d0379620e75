"""The registry of kernel names (lang/registry.py): its targets are the devices of the
backends table; every public entry has docs, a typing rule, and for each device (cpu, cuda,
sim) a lowering or a stated reason it has none; every entry with a CUDA lowering makes PTX
(without a GPU) in one of the kernels below; docs/intrinsics.md is generated from it."""
import builtins
import importlib.util
import math
import pathlib
import re

import numpy as np
import pytest

import simt
from simt.backends.cpu.emit import CpuKernelEmitter
from simt.backends.cuda.emit import CudaKernelEmitter
from simt.backends.cpu.compile import compile_kernel as compile_cpu
from simt.backends.cuda.archspecific import target_for
from simt.backends.cuda.compile import compile_kernel
from simt.backends.sim.codegen import Generator
from simt.backends.sim.compile import compile_kernel as compile_sim
from simt.compiler.options import CompileOptions
from simt.errors import NotSupportedError
from simt.ir import nodes as ir
from simt.ir import types as T
from simt.lang import intrinsics_fp, mathlib
from simt.lang.registry import (CALLABLES, REGISTRY, TARGETS, Builder, Intrinsic, lowering,
                                 refuse)
from simt.runtime.devices import BACKENDS, load_lowerings

ROOT = pathlib.Path(__file__).resolve().parent.parent
load_lowerings()
# what lowers the IR node classes an entry's typing rule builds, by target
EMITTERS = {"cpu": CpuKernelEmitter, "cuda": CudaKernelEmitter, "sim": Generator}


def test_the_targets_are_the_devices_of_the_backends_table():
    assert set(TARGETS) == set(BACKENDS) == set(EMITTERS)
    assert [t for t in TARGETS.values() if not t.llvm] == [TARGETS["sim"]]


def problems(entry):
    """What the entry lacks: docs and typing (public entries), and for each target a
    lowering, an unsupported reason, or IR node classes that target's emitter lowers."""
    found = []
    if entry.public and not (entry.doc or "").strip():
        found.append("no documentation")
    if entry.public and entry.build is None:
        found.append("no typing rule")
    for target, emitter in EMITTERS.items():
        if entry.lowering_for(target) is not None or entry.unsupported.get(target):
            continue
        if entry.lowered_as is None:
            found.append(f"no {target} lowering and no unsupported reason")
            continue
        for cls in entry.lowered_as:
            name = cls.__name__
            if not (hasattr(emitter, "expr_" + name) or hasattr(emitter, "stmt_" + name)):
                found.append(f"the {target} emitter cannot lower ir.{name}")
    return found


def test_every_entry_is_complete():
    assert len(REGISTRY) > 150
    bad = {e.python_name: problems(e) for e in REGISTRY.values() if problems(e)}
    assert not bad


@pytest.fixture
def fake():
    entry = Intrinsic("test.fake", "", None)
    yield entry
    del REGISTRY["test.fake"]


def test_checker_reports_a_bare_entry(fake):
    assert problems(fake) == ["no documentation", "no typing rule",
                              "no cpu lowering and no unsupported reason",
                              "no cuda lowering and no unsupported reason",
                              "no sim lowering and no unsupported reason"]


def test_checker_accepts_lowerings_reasons_and_lowerable_nodes(fake):
    fake.doc, fake.build = "test.fake(): nothing.", lambda fc, args, kwargs, loc: None
    lowering(fake, target="cpu")(lambda em, e: None)
    assert problems(fake) == ["no cuda lowering and no unsupported reason",
                              "no sim lowering and no unsupported reason"]
    fake.unsupported["cuda"] = "not on GPUs"
    refuse(fake, target="sim", why="not built there")
    assert problems(fake) == []
    fake.lowerings.clear()
    fake.unsupported.clear()
    fake.lowered_as = (ir.Barrier, ir.Function)        # a Function is no node an emitter lowers
    assert problems(fake) == ["the cpu emitter cannot lower ir.Function",
                              "the cuda emitter cannot lower ir.Function",
                              "the sim emitter cannot lower ir.Function"]


def test_a_shared_lowering_serves_the_llvm_targets_only(fake):
    fake.lowering()(lambda em, e: None)
    assert fake.lowering_for("cpu") is fake.lowering_for("cuda") is not None
    assert fake.lowering_for("sim") is None


def test_a_lowering_registers_once_per_target(fake):
    fake.lowering()(lambda em, e: None)
    with pytest.raises(ValueError, match="already has a lowering"):
        fake.lowering()(lambda em, e: None)
    with pytest.raises(ValueError, match="unknown target"):
        lowering(fake, target="tpu")


def test_python_callables_are_entries():
    for fn in (print, len, abs, min, max, int, float, bool, complex, round, pow, range):
        assert CALLABLES[fn].python_name == fn.__name__
    assert CALLABLES[math.sin] is simt.math.sin is CALLABLES[np.sin]
    assert CALLABLES[np.arctan2] is simt.math.atan2
    assert CALLABLES[math.floor].python_name == "math.floor"      # int64, as Python's
    assert CALLABLES[np.floor] is simt.math.floor                  # float, as NumPy's
    assert builtins.sorted not in CALLABLES


def test_lang_reaches_the_front_end_only_through_the_builder():
    allowed = {name for name in [*vars(Builder), *Builder.__annotations__]
               if not name.startswith("_")}
    for path in (ROOT / "src/simt/lang").glob("*.py"):
        text = path.read_text()
        assert "compiler" not in re.sub(r'""".*?"""', "", text, flags=re.S), path.name
        used = set(re.findall(r"\bfc\.(\w+)", text))
        assert used <= allowed, f"{path.name} uses {sorted(used - allowed)}"


# ------------------------------------------------------------------ PTX for every CUDA lowering
@simt.kernel
def specials(out, flags, f):
    i = simt.threadIdx.x + simt.threadIdx.y + simt.threadIdx.z + simt.blockIdx.x + \
        simt.blockIdx.y + simt.blockIdx.z + simt.blockDim.x + simt.blockDim.y + \
        simt.blockDim.z + simt.gridDim.x + simt.gridDim.y + simt.gridDim.z + simt.warpSize
    simt.threadfence()
    simt.threadfence_block()
    simt.threadfence_system()
    out[0] = i + simt.laneid() + simt.clock() + simt.clock64() + simt.globaltimer()
    flags[1] = simt.lanemask_lt() ^ simt.lanemask_le() ^ simt.lanemask_eq() ^ \
        simt.lanemask_ge() ^ simt.lanemask_gt()
    simt.nanosleep(100)
    simt.atomic.add(flags, 0, 1)
    simt.atomic.sub(flags, 0, 1)
    simt.atomic.exch(flags, 0, 1)
    simt.atomic.min(flags, 0, 1)
    simt.atomic.max(flags, 0, 1)
    simt.atomic.inc(flags, 0, 1)
    simt.atomic.dec(flags, 0, 1)
    simt.atomic.and_(flags, 0, 1)
    simt.atomic.or_(flags, 0, 1)
    simt.atomic.xor(flags, 0, 1)
    simt.atomic.cas(flags, 1, 0, 1)
    g = simt.cg.coalesced_threads()
    f[0] = g.shfl(f[1], 0)


@simt.kernel
def warpgroup_matrix(c):
    sa = simt.shared.array((64, 64), np.float16)
    acc = simt.wgmma.accumulator(64, 64)
    simt.wgmma.fence()
    simt.wgmma.mma_async(acc, simt.wgmma.descriptor(sa, swizzle="128B"),
                         simt.wgmma.descriptor(sa, swizzle="128B", k=16), 0)
    simt.wgmma.commit_group()
    simt.wgmma.wait_group(0)
    acc.store(c, 0, 64)


@simt.kernel
def warp_matrix(a, c):
    af = simt.wmma.fragment("matrix_a", 16, 16, 16, np.float16, "row")
    bf = simt.wmma.fragment("matrix_b", 16, 16, 16, np.float16, "col")
    cf = simt.wmma.fragment("accumulator", 16, 16, 16, np.float32)
    simt.wmma.fill_fragment(cf, cf.num_elements)
    simt.wmma.load_matrix_sync(af, a, 0, 16)
    simt.wmma.load_matrix_sync(bf, a, 0, 16)
    simt.wmma.mma_sync(cf, af, bf, cf)
    simt.wmma.store_matrix_sync(c, 0, cf, 16, "row")


@simt.kernel
def mma_instructions(a, c):
    s = simt.shared.array((16, 16), np.float16)
    s[simt.threadIdx.x % 16, simt.threadIdx.x // 16] = a[simt.threadIdx.x]
    simt.syncthreads()
    af = simt.ldmatrix(s, 0, n=4)
    bf = simt.ldmatrix(s, 0, n=2, trans=True)
    cf = simt.local.array(4, np.float32)
    for i in range(4):
        cf[i] = c[i]
    simt.mma.sync(cf, af, bf, cf, shape=(16, 8, 16))
    simt.stmatrix(s, 0, af, n=4)
    c[simt.threadIdx.x] = cf[0]
    buf = simt.shared.array(64, np.float32)
    pipe = simt.pipeline()
    simt.memcpy_async(buf, 0, c, 0, 4, pipe)
    pipe.producer_commit()
    pipe.consumer_wait()
    bar = simt.shared.barrier(32)
    bar.wait(bar.arrive())
    bar.arrive_and_drop()
    cluster = simt.cg.this_cluster()
    buf[1] = cluster.map_shared_rank(buf, cluster.num_blocks() - 1)[0] + cluster.block_rank()
    buf[2] = cluster.dim_blocks().y + cluster.block_index().z + cluster.thread_rank()


@simt.kernel
def async_copies(c):
    """mma_instructions' copies and barrier without its matrix instructions (for the sim
    device, which has no simt.mma yet)."""
    buf = simt.shared.array(64, np.float32)
    pipe = simt.pipeline()
    simt.memcpy_async(buf, 0, c, 0, 4, pipe)
    pipe.producer_commit()
    pipe.consumer_wait()
    bar = simt.shared.barrier(32)
    bar.wait(bar.arrive())
    bar.arrive_and_drop()
    c[simt.threadIdx.x] = buf[0]


@simt.kernel
def memory_access(flags, f):
    """Ordered, volatile and cache-hinted accesses, printf, the device heap."""
    simt.atomic.store(flags, 0, simt.atomic.load(flags, 1, order="acquire"), order="release")
    simt.volatile_store(f, 0, simt.volatile_load(f, 1))
    f[2] = simt.ldg(f, 3) + simt.ldcg(f, 3) + simt.ldca(f, 3) + simt.ldcs(f, 3) + \
        simt.ldlu(f, 3) + simt.ldcv(f, 3)
    simt.stwb(flags, 2, 1)
    simt.stcg(flags, 2, 1)
    simt.stcs(flags, 2, 1)
    simt.stwt(flags, 2, 1)
    simt.printf("%d %f %s\n", flags[0], f[0], "text")
    p = simt.malloc(flags[0], np.float32)
    if p.size == 0:
        simt.trap()
    simt.free(p)


linked_only = simt.declare_device("linked_only", "float32(float32, float32*)")


@simt.kernel
def external_code(f):
    """A call of external device code without a fallback: GPUs only (test_linking.py)."""
    f[0] = linked_only(f[1], f)


@simt.kernel
def memory_access_sim(flags, f):
    """memory_access without the device heap, and breakpoint (for the sim device)."""
    simt.atomic.store(flags, 0, simt.atomic.load(flags, 1, order="acquire"), order="release")
    simt.volatile_store(f, 0, simt.volatile_load(f, 1))
    f[2] = simt.ldg(f, 3) + simt.ldcg(f, 3) + simt.ldca(f, 3) + simt.ldcs(f, 3) + \
        simt.ldlu(f, 3) + simt.ldcv(f, 3)
    simt.stwb(flags, 2, 1)
    simt.stcg(flags, 2, 1)
    simt.stcs(flags, 2, 1)
    simt.stwt(flags, 2, 1)
    simt.printf("%d %f %s\n", flags[0], f[0], "text")
    if flags[0] == 12345:
        breakpoint()
        simt.trap()


@simt.kernel
def complexes(z, out, n):
    out[0] = z[0].real + z[0].imag + abs(z[0]) + abs(n[0])
    z[1] = z[0].conjugate() + complex(1.0, 2.0)


@simt.kernel
def textures(lin, t1, t2, t3, t1l, t2l, s1, s2, s3, out):
    out[0] = lin.fetch(1) + simt.tex1D(t1, 0.5) + simt.tex2D(t2, 0.5, 0.5) + \
        simt.tex3D(t3, 0.5, 0.5, 0.5) + simt.tex1DLayered(t1l, 0.5, 0) + \
        simt.tex2DLayered(t2l, 0.5, 0.5, 0) + simt.tex2Dgather(t2, 0.5, 0.5)[0]
    out[1] = simt.surf1Dread(s1, 0) + simt.surf2Dread(s2, 0, 0) + simt.surf3Dread(s3, 0, 0, 0)
    simt.surf1Dwrite(out[2], s1, 0)
    simt.surf2Dwrite(out[2], s2, 0, 0)
    simt.surf3Dwrite(out[2], s3, 0, 0, 0)


@simt.kernel
def vectors(a, out):
    v = -a[0] * 2.0 + a[1] / a[2] - simt.make_float3(1, 2, 3)
    v.y = simt.dot(v, a[0]) + simt.length(v)
    out[0] = simt.cross(simt.normalize(v), a[1])


@simt.kernel
def texture_levels(m1, m2, m3, cube, acube, s2l, sc, scl, out):
    out[0] = simt.tex1DLod(m1, 0.5, 1.0) + simt.tex2DLod(m2, 0.5, 0.5, 0.5) + \
        simt.tex3DLod(m3, 0.5, 0.5, 0.5, 2.0) + \
        simt.tex2DGrad(m2, 0.5, 0.5, simt.make_float2(0.1, 0.0), (0.0, 0.1)) + \
        simt.texCubemap(cube, 1.0, 0.5, 0.25) + simt.texCubemapLayered(acube, 1.0, 0.5, 0.25, 1)
    out[1] = simt.surf2DLayeredread(s2l, 0, 0, 1) + simt.surfCubemapread(sc, 0, 0, 5) + \
        simt.surfCubemapLayeredread(scl, 0, 0, 7)
    simt.surf2DLayeredwrite(out[2], s2l, 0, 0, 1)
    simt.surfCubemapwrite(out[2], sc, 0, 0, 5)
    simt.surfCubemapLayeredwrite(out[2], scl, 0, 0, 7)


def _texture(source, ndim, layered=False, cubemap=False, mipmap_filter=None):
    filter = "point" if mipmap_filter is None and not cubemap else "linear"
    return T.Texture(np.float32, 1, ndim, layered, source, filter, ("clamp",) * ndim,
                     cubemap or mipmap_filter is not None, "element", cubemap, mipmap_filter)


def _math_kernel(tmp_path, target=None):
    """A kernel calling every function of simt.math and the bit casts (those with a lowering
    on ``target``, if given), written out so that the front end can read its source."""
    lines = [f"math.{name}(x[0])" for name in ("floor", "ceil", "trunc")]
    casts = [e for e in REGISTRY.values() if e.op.startswith("bitcast.")]
    for entry in simt.math.entries() + casts:
        if target and entry.lowering_for(target) is None:
            continue
        lines.append(f"{entry.python_name}({', '.join(_math_args(entry))}){_first(entry)}")
    body = "\n".join(f"    out[{k}] = {line}" for k, line in enumerate(lines))
    path = tmp_path / f"every_math_{target}.py"
    path.write_text("import math\nimport numpy as np\nimport simt\n\n\n@simt.kernel\n"
                    f"def every_math(x, xf, i, out):\n{body}\n")
    spec = importlib.util.spec_from_file_location(f"every_math_{target}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.every_math


ARG = {"f": "x[0]", "F": "xf[0]", "D": "x[0]", "i": "i[0]", "u": "np.uint32(i[0])",
       "l": "np.int64(i[0])", "U": "np.uint64(i[0])"}


def _math_args(entry):
    """Arguments of a call of a simt.math entry or bit cast, by its family's signature."""
    family, _, name = entry.op.partition(".")
    if family == "math":
        signature = mathlib.FUNCTIONS.get(name, ("f>b",))[0]
        return [] if name in ("nan", "nanf") else [ARG[p] for p in signature.split(">")[0]]
    if family == "fast":
        return ["xf[0]"] * entry.arity
    if family == "round":
        return [ARG[name.split(".")[-1]]] * entry.arity
    if family == "cvt":
        return [ARG[intrinsics_fp.CONVERSIONS[name.split(".")[0]][0]]]
    if family == "bitcast":
        letters = {"float_as_int": "F", "float_as_uint": "F", "double_as_longlong": "D",
                   "double2hiint": "D", "double2loint": "D", "hiloint2double": "ii"}
        return [ARG[p] for p in letters.get(name, "i")]
    return ["i[0]"] * entry.arity


def _first(entry):
    """[0] for calls returning a tuple (sincos, frexp ...)."""
    name = entry.op.partition(".")[2]
    signature = mathlib.FUNCTIONS.get(name, ("f>f",))[0]
    tuple_result = len(signature.split(">")[1]) > 1 or name == "sincos"
    return "[0]" if tuple_result and entry.op.startswith(("math.", "fast.")) else ""


def _half_kernel(tmp_path):
    """A kernel calling every lang/half.py entry with a lowering of its own."""
    from simt.lang import half
    lines = []
    for name, entry in half.ENTRIES.items():
        if not entry.lowerings:
            continue
        if "_as_" in name:
            arg = {"half": "h[0]", "bfloat16": "simt.float2bfloat16(h[0])"}.get(
                name.split("_as_")[0], "u[0]")
            lines.append(f"simt.{name}({arg})")
            continue
        n = {"hfma": 3, "hfma2": 3, "hmax": 2, "hmin": 2, "hmax2": 2, "hmin2": 2}.get(name, 1)
        pair = name.startswith("h2") or name in ("hfma2", "hneg2", "habs2", "hmax2", "hmin2")
        call = f"simt.{name}({', '.join(['p[0]' if pair else 'h[0]'] * n)})"
        lines.append(call + (".x" if pair else ""))
    body = "\n".join(f"    out[{k}] = {line}" for k, line in enumerate(lines))
    path = tmp_path / "every_half.py"
    path.write_text(f"import simt\n\n\n@simt.kernel\ndef every_half(h, p, u, out):\n{body}\n")
    spec = importlib.util.spec_from_file_location("every_half", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.every_half


@simt.kernel
def launches_a_kernel(flags, f, n):
    if simt.threadIdx.x == 0:
        memory_access[(n + 31) // 32, 32, 64](flags, f)


@simt.kernel
def poke_child(flags, n):
    if simt.threadIdx.x < n:
        flags[simt.threadIdx.x] = 1


@simt.kernel
def launches_on_named_streams(flags, n):
    """A family every device compiles (the child of launches_a_kernel needs the heap)."""
    poke_child[1, 32, 0, simt.stream_fire_and_forget](flags, n)
    poke_child[1, 32, 0, simt.stream_tail_launch](flags, n)


@simt.kernel
def graph_calls(cond, exe, flags):
    if simt.threadIdx.x == 0:
        simt.graph_set_condition(cond, flags[0] > 0)
        simt.graph_launch(exe)


@simt.device
def _count_phase(flags):
    flags[0] += 1


@simt.kernel
def completion_barrier(flags):
    bar = simt.shared.barrier(simt.blockDim.x, _count_phase, flags)
    bar.wait(bar.arrive())
    if simt.threadIdx.x == 0:
        bar.arrive_and_drop()


@simt.kernel
def float8s(x, d, a, b, out):
    """Every FP8 conversion: to each format (float32 and float64, saturating or not), back."""
    a[0] = x[0]
    a[1] = simt.float8_e4m3(d[0], saturate=False)
    b[0] = d[0]
    b[1] = simt.float8_e5m2(x[0], saturate=False)
    out[0] = a[0] + b[0]


@simt.kernel
def tma_copies(tmap, src, out):
    buf = simt.shared.array(128, np.float32)
    bar = simt.shared.barrier(simt.blockDim.x)
    if simt.threadIdx.x == 0:
        bar.expect_tx(512)
        token = bar.arrive_expect_tx(512)
        simt.tma.load(buf, tmap, (0, 16), bar)
        simt.tma.copy(buf, src, 512, bar)
    else:
        token = bar.arrive()
    while not bar.try_wait(token):
        pass
    bar.wait_parity(0)
    out[simt.threadIdx.x] = buf[simt.threadIdx.x]
    simt.fence_proxy_async()
    if simt.threadIdx.x == 0:
        simt.tma.store(tmap, (8, 0), buf)
        simt.tma.commit_group()
        simt.tma.wait_group(0)


@simt.device
def _add_ref(a, b):
    return a + b


@simt.device
def _pair_ref(a, b):
    return a, b


@simt.kernel(launch_bounds=(256, 1))
def warp_specialised(a, out):
    """Inline PTX (with fallbacks), setmaxnreg, elect_one, a named barrier of the whole
    block, griddepcontrol."""
    simt.griddepcontrol.wait()
    i = simt.threadIdx.x
    out[i] = simt.asm("add.s32 $0, $1, $2;", "=r,r,r", a[i], 1, result=np.int32,
                      fallback=_add_ref)
    x, y = simt.asm("mov.b32 $0, $2; mov.b32 $1, $3;", "=r,=r,r,r", a[i], i,
                    result=(np.int32, np.int32), fallback=_pair_ref)
    if i // 128 == 0:
        simt.setmaxnreg(40, "dec")
    else:
        simt.setmaxnreg(232, "inc")
    simt.barrier_sync(1, 256)
    if simt.elect_one():
        out[i] += x + y
    simt.griddepcontrol.launch_dependents()


@simt.kernel
def matrix_registers(a, c):
    """ldmatrix, mma.sync and stmatrix alone (mma_instructions also reaches what the sim
    device may refuse)."""
    s = simt.shared.array((16, 16), np.float16)
    s[simt.threadIdx.x % 16, simt.threadIdx.x // 16] = a[simt.threadIdx.x]
    simt.syncthreads()
    af = simt.ldmatrix(s, 0, n=4)
    bf = simt.ldmatrix(s, 0, n=2, trans=True)
    cf = simt.local.array(4, np.float32)
    for i in range(4):
        cf[i] = c[i]
    simt.mma.sync(cf, af, bf, cf, shape=(16, 8, 16))
    simt.stmatrix(s, 0, af, n=4)
    c[simt.threadIdx.x] = cf[0]


@simt.kernel
def named_barriers(out):
    """barrier_arrive and barrier_sync in different warps (the CPU device runs its warps as
    fibers)."""
    if simt.threadIdx.x < 32:
        out[0] = 1
        simt.barrier_arrive(1, 64)
    else:
        simt.barrier_sync(1, 64)
        out[1] = out[0]


NOT_ON_CPU = ()


def _kernels(tmp_path):
    f64, f32, i32 = (T.Array(np.dtype(d), 1, "C") for d in ("float64", "float32", "int32"))
    c128 = T.Array(np.dtype(np.complex128), 1, "C")
    return [
        (specials, [T.Array(np.dtype(np.int64), 1, "C"), i32, f32]),
        (complexes, [c128, f64, i32]),
        (memory_access, [i32, f32]),
        (warp_specialised, [i32, i32]),
        (named_barriers, [i32]),
        (launches_a_kernel, [i32, f32, T.INT64]),
        (launches_on_named_streams, [i32, T.INT64]),
        (graph_calls, [T.GraphHandle("conditional"), T.GraphHandle("exec"), i32]),
        (completion_barrier, [i32]),
        (tma_copies, [T.TensorMap(np.float32, 2, (8, 16), "none", "zero"), f32, f32]),
        (textures, [_texture("linear", 1), _texture("array", 1), _texture("array", 2),
                    _texture("array", 3), _texture("array", 1, True),
                    _texture("array", 2, True)]
         + [T.Surface(np.float32, 1, n, False) for n in (1, 2, 3)] + [f32]),
        (texture_levels, [_texture("mipmap", n, mipmap_filter="linear") for n in (1, 2, 3)]
         + [_texture("array", 2, cubemap=True), _texture("array", 2, True, cubemap=True),
            T.Surface(np.float32, 1, 2, True), T.Surface(np.float32, 1, 2, False, True),
            T.Surface(np.float32, 1, 2, True, True), f32]),
        (_math_kernel(tmp_path), [f64, f32, i32, f64]),
        (vectors, [T.Array(simt.float3.dtype, 1, "C")] * 2),
        (warp_matrix, [T.Array(np.dtype(np.float16), 1, "C"), f32]),
        (mma_instructions, [T.Array(np.dtype(np.float16), 1, "C"), f32]),
        (matrix_registers, [T.Array(np.dtype(np.float16), 1, "C"), f32]),
        (warpgroup_matrix, [f32]),
        (async_copies, [f32]),
        (_math_kernel(tmp_path, "sim"), [f64, f32, i32, f64]),
        (memory_access_sim, [i32, f32]),
        (external_code, [f32]),
        (_half_kernel(tmp_path), [T.Array(np.dtype(np.float16), 1, "C"),
                                  T.Array(simt.half2.dtype, 1, "C"),
                                  T.Array(np.dtype(np.uint16), 1, "C"),
                                  T.Array(np.dtype(np.float32), 1, "C")]),
        (float8s, [f32, f64, T.Array(T.F8E4M3_STORAGE, 1, "C"),
                   T.Array(T.F8E5M2_STORAGE, 1, "C"), f32]),
    ]


def _entries(fn):
    """The registry entries the intrinsic nodes of fn, its callees and the kernels it
    launches (compiled with it) carry."""
    found, stack = set(), [f.body for k in [fn, *fn.launches] for f in [k, *k.callees]]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, ir.Intrinsic):
            found.add(item.entry)
            stack.append(item.args)
        elif isinstance(item, (ir.Expr, ir.Stmt)):
            stack.extend(vars(item).values())
    return found


def test_every_lowering_compiles(tmp_path):
    """PTX (made here without a GPU) and CPU code for kernels that reach every entry
    with a lowering."""
    reached = {"cpu": set(), "cuda": set(), "sim": set()}
    for kernel, types in _kernels(tmp_path):
        fn = kernel.typed_ir(types)
        entries = _entries(fn)
        assert None not in entries                 # every intrinsic node carries its entry
        options = CompileOptions(**kernel.options)
        if kernel in NOT_ON_CPU:
            compile_kernel(fn, options, target_for(fn, "sm_90"), link=False)
            reached["cuda"] |= entries
            compile_sim(fn, options.replace(boundscheck=True), T.WARP32)
            reached["sim"] |= entries
            continue
        if kernel is not memory_access_sim:        # breakpoint: on the sim device only
            binary = compile_kernel(fn, options.replace(boundscheck=False),
                                    target_for(fn, "sm_90"), link=False)    # sm_90a: wgmma
            assert ".entry simt_kernel_" in binary.ptx
            reached["cuda"] |= entries
        if kernel is external_code:                # linked device code: on GPUs only
            with pytest.raises(NotSupportedError, match="linked_only"):
                compile_cpu(fn, options.replace(boundscheck=True))
        elif kernel is not memory_access_sim:
            compile_cpu(fn, options.replace(boundscheck=True))
            reached["cpu"] |= entries
        try:
            compile_sim(fn, options.replace(boundscheck=True), T.WARP32)
            reached["sim"] |= entries
        except NotSupportedError as exc:           # the sim device says which and why
            refused = [e for e in entries if e.unsupported.get("sim")]
            assert any(e.unsupported["sim"] in str(exc) for e in refused), str(exc)
    for target in TARGETS:
        lowered = {e for e in REGISTRY.values() if e.lowering_for(target) is not None}
        assert sorted(e.python_name for e in lowered - reached[target]) == [], target


def test_a_device_without_a_lowering_says_why(fake):
    fake.doc = "test.fake(): nothing."
    fake.build = lambda fc, args, kwargs, loc: fake.node(T.INT32, loc, [])
    fake.lowering("cpu")(lambda em, e: None)
    fake.unsupported["cuda"] = "the GPU has no such thing"

    @simt.kernel
    def uses_fake(out):
        out[0] = fake()

    fn = uses_fake.typed_ir([T.Array(np.dtype(np.int32), 1, "C")])
    with pytest.raises(NotSupportedError, match="test.fake is not supported on cuda devices: "
                       "the GPU has no such thing"):
        compile_kernel(fn, CompileOptions(boundscheck=False), "sm_90")


# ------------------------------------------------------------------ generated reference
def _generator():
    spec = importlib.util.spec_from_file_location("gen_intrinsics", ROOT / "tools/gen_intrinsics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_is_generated_from_the_registry():
    text = _generator().render()
    for entry in REGISTRY.values():
        if entry.public:
            assert f"`{entry.python_name}" in text
    assert "simt.nanosleep" in text and "test.fake" not in text


def test_checked_in_reference_is_up_to_date():
    assert (ROOT / "docs/intrinsics.md").read_text() == _generator().render(), \
        "docs/intrinsics.md is out of date: run python tools/gen_intrinsics.py"
