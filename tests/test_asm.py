"""simt.asm (lang/inline_asm.py): inline PTX with one, two and no results against NumPy
(the GPU runs the PTX, the CPU and sim devices the fallback), the CompileErrors of bad
constraints, types and fallbacks, the PTX ptxas assembles, and a typo in the PTX."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import simt
from simt.backends.cuda.compile import compile_kernel
from simt.compiler.options import CompileOptions
from simt.ir import types as T
from conftest import poison, random_array

I32 = T.Array(np.dtype(np.int32), 1, "C")
F32 = T.Array(np.dtype(np.float32), 1, "C")
ADD = "add.s32 $0, $1, $2;"
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")


@simt.device
def add_ref(a, b):
    return a + b


@simt.device
def divmod_ref(a, b):
    return a // b, a % b          # a >= 0, b > 0 here: PTX's div and rem agree


@simt.device
def fma_ref(a, b, c):
    return simt.math.fma(a, b, c)


@simt.device
def store_ref(where, value):
    where[0] = value


@simt.device
def xor_lane_ref(v):
    return simt.shfl_xor_sync(0xFFFFFFFF, v, 1)


@simt.kernel
def one_result(a, b, out):
    i = simt.grid(1)
    if i < out.size:
        out[i] = simt.asm(ADD, "=r,r,r", a[i], b[i], result=np.int32, fallback=add_ref)


@simt.kernel
def two_results(a, b, q, r):
    i = simt.grid(1)
    if i < q.size:
        q[i], r[i] = simt.asm("div.s32 $0, $2, $3;\n\trem.s32 $1, $2, $3;", "=r,=r,r,r",
                              a[i], b[i], result=(np.int32, np.int32), fallback=divmod_ref)


@simt.kernel
def no_result(a, out):
    """No outputs: the PTX stores through the address an array operand passes."""
    i = simt.grid(1)
    if i < out.size:
        simt.asm("st.s32 [$0], $1;", "l,r,~{memory}", out[i:], a[i] * 2, fallback=store_ref)


@simt.kernel
def floats_and_literals(x, y, out):
    i = simt.grid(1)
    if i < out.size:
        out[i] = simt.asm("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", x[i], y[i], 0.5,
                          result=np.float32, fallback=fma_ref)


@simt.kernel
def warp_fallback(a, out):
    """A fallback holding a warp function: inlined on the CPU and sim devices."""
    i = simt.threadIdx.x
    out[i] = simt.asm("shfl.sync.bfly.b32 $0, $1, 1, 0x1f, 0xffffffff;", "=r,r", a[i],
                      result=np.int32, fallback=xor_lane_ref) + 1


@simt.kernel
def typo(a, out):
    i = simt.threadIdx.x
    out[i] = simt.asm("add.s32 $0, $1, $2; addd.s32 $0, $0, $2;", "=r,r,r", a[i], 1,
                      result=np.int32, fallback=add_ref)


def test_one_result_matches_numpy(device, rng):
    a, b = random_array(rng, 1000, np.int32), random_array(rng, 1000, np.int32)
    out = poison(1000, np.int32)
    one_result[8, 128](a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_two_results_unpack_to_a_tuple(device, rng):
    a = rng.integers(0, 1 << 30, 700).astype(np.int32)
    b = rng.integers(1, 1000, 700).astype(np.int32)
    q, r = poison(700, np.int32), poison(700, np.int32)
    two_results[6, 128](a, b, q, r)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)


def test_no_result_stores_through_an_array_address(device, rng):
    a = random_array(rng, 300, np.int32)
    out = poison(300, np.int32)
    no_result[3, 128](a, out)
    np.testing.assert_array_equal(out, a * 2)


def test_float_operands_and_python_literals(device, rng):
    x, y = random_array(rng, 256, np.float32), random_array(rng, 256, np.float32)
    out = poison(256, np.float32)
    floats_and_literals[2, 128](x, y, out)
    expected = (x.astype(np.float64) * y + 0.5).astype(np.float32)     # one rounding
    np.testing.assert_array_equal(out, expected)


def test_a_fallback_may_hold_warp_functions(device, rng):
    a = random_array(rng, 64, np.int32)
    out = poison(64, np.int32)
    warp_fallback[1, 64](a, out)
    np.testing.assert_array_equal(out, a[np.arange(64) ^ 1] + 1)


def test_a_ptx_typo_is_an_error_naming_the_kernel(device):
    """The GPU's PTX compiler refuses the kernel, naming it and the asm's PTX line; the
    CPU and sim devices run the fallback and never read the PTX."""
    a = np.arange(32, dtype=np.int32)
    out = poison(32, np.int32)
    if device.kind != "cuda":
        typo[1, 32](a, out)
        np.testing.assert_array_equal(out, a + 1)
        return
    with pytest.raises(simt.CudaError) as info:
        typo[1, 32](a, out)
    text = str(info.value)
    assert "kernel 'typo'" in text and "simt.asm's: add.s32" in text and "addd.s32" in text


# ------------------------------------------------------------------ without a fallback
@simt.kernel
def no_fallback(a, out):
    i = simt.threadIdx.x
    out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i], result=np.int32)


def test_without_a_fallback_the_cpu_and_sim_devices_refuse_at_the_line(device):
    a = np.arange(32, dtype=np.int32)
    out = poison(32, np.int32)
    if device.kind == "cuda":
        no_fallback[1, 32](a, out)
        np.testing.assert_array_equal(out, 2 * a)
        return
    with pytest.raises(simt.CompileError, match=rf"simt.asm is PTX, which runs only on GPUs, "
                       rf"and has no fallback= for the {device.kind} device") as info:
        no_fallback[1, 32](a, out)
    assert info.value.line == no_fallback.pyfunc.__code__.co_firstlineno + 3
    assert "fallback=f, a @simt.device function" in str(info.value)
    assert "out[i] = simt.asm(ADD" in str(info.value)


# ------------------------------------------------------------------ compile errors
def _error(source_line, types=(I32, I32), extra=""):
    """The CompileError of a kernel whose body is ``source_line``, and its line."""
    namespace = {"np": np, "simt": simt, "add_ref": add_ref, "divmod_ref": divmod_ref,
                 "store_ref": store_ref, "ADD": ADD}
    code = (f"{extra}\n@simt.kernel\ndef bad(a, out):\n    i = simt.threadIdx.x\n"
            f"    {source_line}\n")
    filename = f"<asm-test-{abs(hash(source_line))}>"
    import linecache
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), namespace)
    with pytest.raises(simt.CompileError) as info:
        namespace["bad"].typed_ir(types)
    assert info.value.line == code.count("\n", 0, code.index(source_line)) + 1
    return str(info.value)


@pytest.mark.parametrize("line, message", [
    ('out[i] = simt.asm(ADD, "=r,r", a[i], a[i], result=np.int32)',
     r"the constraints name 1 input\(s\) \(r\) and 2 argument\(s\) are given"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i])',
     r"the constraints name 1 output\(s\) \(=r\) and result= gives 0 dtype"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i], result=(np.int32, np.int32))',
     r"name 1 output\(s\) \(=r\) and result= gives 2 dtype"),
    ('out[i] = simt.asm(ADD, "=f,r,r", a[i], a[i], result=np.int32)',
     r"output \$0 \('=f'\) holds a float32, and result= gives int32"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], np.float32(1), result=np.int32)',
     r"operand \$2 \('r'\) holds a 32-bit integer \(int32, uint32\), and the argument is a "
     r"float32"),
    ('out[i] = simt.asm(ADD, "=r,r,l", a[i], a[i], result=np.int32)',
     r"operand \$2 \('l'\) holds a 64-bit integer"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], 1.5, result=np.int32)',
     r"operand \$2 \('r'\) holds a 32-bit integer \(int32, uint32\), and this is a float"),
    ('out[i] = simt.asm(ADD, "=r,r,h", a[i], a[i], result=np.int32)',
     r"operand \$2 \('h'\) holds a 16-bit value"),
    ('out[i] = simt.asm(ADD, "=r,r,x", a[i], a[i], result=np.int32)',
     r"unknown input constraint 'x'"),
    ('out[i] = simt.asm(ADD, "=q,r,r", a[i], a[i], result=np.int32)',
     r"unknown output constraint '=q'"),
    ('out[i] = simt.asm(ADD, "+r,r", a[i], result=np.int32)',
     r"read-write constraints \('\+r'\) are not LLVM's"),
    ('out[i] = simt.asm(ADD, "r,=r,r", a[i], a[i], result=np.int32)',
     r"the output constraint '=r' comes after an input"),
    ('out[i] = simt.asm("add.s32 $0, $1, $3;", "=r,r,r", a[i], a[i], result=np.int32)',
     r"the template names \$3, and there are 3 operands \(\$0 to \$2\)"),
    ('out[i] = simt.asm(ADD, "=r,r,n", a[i], a[i], result=np.int32)',
     r"operand \$2 \('n'\) must be a compile-time integer"),
    ('out[i] = simt.asm(a[i], "=r,r,r", a[i], a[i], result=np.int32)',
     r"the template must be a compile-time string"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a, a[i], result=np.int32)',
     r"operand \$1 is an array, which passes its address: its constraint must be 'l'"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i], result=np.int32, fallback=divmod_ref)',
     r"the fallback 'divmod_ref' returns \(int32, int32\) and the asm's result is int32"),
    ('out[i] = simt.asm("mov.b32 $0, $1;", "=r,r", a[i], result=np.int32, fallback=add_ref)',
     r"the fallback 'add_ref' takes 2 argument\(s\) and the asm has 1 input"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i], result=np.int32, fallback=np.sin)',
     r"fallback= must be a @simt.device function"),
    ('out[i] = simt.asm(ADD, "=r,r,r", a[i], a[i], result=np.int32, volatil=True)',
     r"simt.asm\(\) has no argument volatil"),
])
def test_bad_calls_are_compile_errors_at_the_line(line, message):
    assert re.search(message, _error(line)), _error(line)


def test_a_fallback_with_barriers_needs_a_result():
    text = _error('simt.asm("bar.sync 0;", "~{memory}", fallback=sync_ref)',
                  extra="@simt.device\ndef sync_ref():\n    simt.syncthreads()\n")
    assert "an asm without results cannot have such a fallback" in text


# ------------------------------------------------------------------ the PTX
def _ptx(kernel, types, arch="sm_90a"):
    return compile_kernel(kernel.typed_ir(types), CompileOptions(), arch).ptx


def _ptxas(ptx, tmp_path, arch="sm_90a"):
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    return subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)


def test_the_ptx_holds_the_templates_with_registers_for_operands():
    ptx = _ptx(two_results, [I32] * 4)
    assert re.search(r"div\.s32 %r\d+, %r\d+, %r\d+;\s+rem\.s32 %r\d+, %r\d+, %r\d+;", ptx)
    ptx = _ptx(no_result, [I32, I32])
    assert re.search(r"st\.s32 \[%rd\d+\], %r\d+;", ptx)
    assert re.search(r"fma\.rn\.f32 %[rf]\d+, %[rf]\d+, %[rf]\d+, %[rf]\d+;",
                     _ptx(floats_and_literals, [F32] * 3))


@needs_ptxas
@pytest.mark.parametrize("kernel, types", [
    (one_result, [I32] * 3), (two_results, [I32] * 4), (no_result, [I32] * 2),
    (floats_and_literals, [F32] * 3), (warp_fallback, [I32] * 2), (no_fallback, [I32] * 2)],
    ids=lambda v: getattr(v, "__name__", ""))
def test_ptxas_assembles_the_ptx(kernel, types, tmp_path):
    done = _ptxas(_ptx(kernel, types), tmp_path)
    assert done.returncode == 0, done.stderr


@needs_ptxas
def test_ptxas_rejects_a_typo(tmp_path):
    done = _ptxas(_ptx(typo, [I32, I32]), tmp_path)
    assert done.returncode != 0 and "addd" in done.stderr, done.stderr
