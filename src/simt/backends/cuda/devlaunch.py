"""Launches from kernels on the GPU (dynamic parallelism, guide appendix D), through the
CUDA device runtime as nvcc -rdc=true compiles ``child<<<grid, block, shared>>>(args)``:

    buf = cudaGetParameterBufferV2(&child, grid, block, shared)   // null: none free
    ... each argument stored at its offset in buf (params.py's flattening) ...
    err = cudaLaunchDeviceV2(buf, stream)     // 0: the block's; 0x4 cudaStreamFireAndForget,
                                              // 0x3 cudaStreamTailLaunch (lang/launches.py)

(under the names nvcc gives them, GET_BUFFER and LAUNCH below).

The child is an entry of the same module (compile.py emits every kernel of the family),
and the module is linked with libcudadevrt.a, which defines both functions (link.py).
A null buffer or a nonzero cudaError fails the parent's launch through the fault
record, naming the line (simt/fault.py, DEVICE_LAUNCH).
"""
from llvmlite import ir as ll

import simt.fault as fault
from ...compiler.lltypes import I8, I32, I64, function, i32, i64, ptr
from . import params as P

DIM3 = ll.LiteralStructType([I32, I32, I32])
# the names nvcc's code calls (CUDA 12's device runtime, "CDP2"); the guide's D.3.2.1
# documents the first versions of the same two calls
GET_BUFFER, LAUNCH = "__cudaCDP2GetParameterBufferV2", "__cudaCDP2LaunchDeviceV2"
NO_BUFFER = -1


def emit(em, e, grid, block, shared, values):
    target = em.target
    b = em.builder
    entry = target.kernel_entries[e.attrs["index"]]
    get_buffer = function(em.module, GET_BUFFER,
                          ll.FunctionType(ptr(), [ptr(), DIM3, DIM3, I32]))
    launch = function(em.module, LAUNCH, ll.FunctionType(I32, [ptr(), ptr()]))
    buf = b.call(get_buffer, [entry, _dim3(b, grid), _dim3(b, block), shared])
    _fail_unless(em, e, b.icmp_unsigned("!=", b.ptrtoint(buf, I64), i64(0)), i64(NO_BUFFER))
    b = em.builder
    offset = 0
    for t, v in zip(e.attrs["types"], values):
        for part in P.flatten(b, t, v):
            size = _size(part.type)
            offset = (offset + size - 1) // size * size
            b.store(part, b.gep(buf, [i64(offset)], source_etype=I8), align=size)
            offset += size
    stream = e.attrs["stream"]
    handle = ll.Constant(I64, stream).inttoptr(ptr()) if stream else ll.Constant(ptr(), None)
    code = b.call(launch, [buf, handle])
    _fail_unless(em, e, b.icmp_unsigned("==", code, i32(0)), b.sext(code, I64))


def _dim3(b, parts):
    value = ll.Constant(DIM3, ll.Undefined)
    for i, p in enumerate(parts):
        value = b.insert_value(value, p, i)
    return value


def _size(lltype):
    if isinstance(lltype, ll.PointerType):
        return 8
    if isinstance(lltype, ll.IntType):
        return max(1, lltype.width // 8)
    return {"half": 2, "float": 4, "double": 8}[str(lltype)]


def _fail_unless(em, e, ok, code):
    """Go on where ``ok``; else record the failed launch (its cudaError in the index word)."""
    b = em.builder
    good, bad = em.new_block("device_launch_ok"), em.new_block("device_launch_failed")
    b.cbranch(ok, good, bad)
    b.position_at_end(bad)
    em.target.emit_error(em, fault.DEVICE_LAUNCH, e.loc,
                         array=em.target.label_id(e.attrs["name"]), index=code)
    em.builder.position_at_end(good)
