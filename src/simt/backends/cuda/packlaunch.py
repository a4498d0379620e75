"""A launch function's checks, packing and cuLaunchKernel in one native call.

For signatures of device arrays and plain scalars (Python ints, floats and bools, NumPy
scalars), a configuration's launch function calls ``go(a0, a1, ...)``: a builtin
function (METH_FASTCALL) over the native code below, bound to a descriptor (a bytes
object) that says, for this configuration and signature, what each argument's class must
be, how its values are read and where each flat parameter goes. The code checks every
argument's class (the exact class: a DeviceArray's records dtype, ndim, layout and
device), writes the values into a parameter buffer on its own stack, gives up the GIL
around cuLaunchKernel (which copies the buffer during the call) and returns the CUresult
as an int; -1 when an argument is not as planned (another class, a missing one, a Python
int beyond int64): the launch function then takes the full path, which raises or binds.
Being on the stack, the buffer is each call's own, so host threads need no lock.

How a value is read (``ARRAY`` ... ``BOOL``): an array's ``_flat`` tuple (its address,
shape and, for strided arrays, strides) through the C API, each item as a long long; a
NumPy scalar's bytes at a fixed offset in the object (NumPy's array-scalar layout:
PyObject_HEAD, then the value); a Python int, float or bool through the C API. Object
layouts (where an object's type is, where a NumPy scalar's value is) are probed on this
interpreter (``layout``); where they differ from what the code assumes, or where the
parameters do not fit its stack buffer, there is no native route and the launch function
packs in Python (runtime/binder.py's slots).

Compared with packing in Python (class checks, ``struct.pack_into`` of ``*a._flat``),
this is what lets a launch with new argument objects cost what one with the same objects
does (bench/gpu/launch_kinds.py)."""
import ctypes
import struct
import sys

import numpy as np

from ...ir import types as T
from . import params as P
from .trampoline import DATA_OFFSET, NativeCode, cu_launch_address, python_api

ARRAY, RAW, INT, FLOAT, BOOL = range(5)
HEADER = ("function", "entry", "gx", "gy", "gz", "bx", "by", "bz", "shared", "stream",
          "nargs", "nflat", "save", "restore", "to_int", "getattr", "decref", "as_long",
          "as_double", "occurred", "clear", "tuple_size", "tuple_item", "true", "flat_name",
          "scalar_offset")
FIELD = {name: i for i, name in enumerate(HEADER)}
PER_ARG = 4            # the argument's class, how it is read, its first flat parameter, their count
PER_FLAT = 2           # a flat parameter's offset in the buffer, its size in bytes
BUFFER, MAX_FLAT = 4096, 512
_API = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyLong_FromLongLong", "PyObject_GetAttr",
        "Py_DecRef", "PyLong_AsLongLong", "PyFloat_AsDouble", "PyErr_Occurred", "PyErr_Clear",
        "PyTuple_Size", "PyTuple_GetItem")
_FLAT_NAME = sys.intern("_flat")
NAME = "simt_cuda_pack_launch"


def ir(data_offset, type_offset=8):
    """LLVM IR of ``PyObject *simt_cuda_pack_launch(PyObject *self, PyObject *const *args,
    Py_ssize_t nargs)``; ``self`` is the descriptor, its data ``data_offset`` bytes in."""
    out = _Writer(data_offset)
    return out.function(type_offset)


class _Writer:
    """The IR's text: loops keep their counters in stack slots (no phi nodes to follow)."""

    def __init__(self, data_offset):
        self.data_offset = data_offset
        self.lines = []
        self.count = 0

    def fresh(self, stem):
        self.count += 1
        return f"%{stem}{self.count}"

    def emit(self, *lines):
        self.lines += ["  " + line if not line.endswith(":") else line for line in lines]

    def word(self, index, kind="i64"):
        """Descriptor word ``index`` (an i64 value or constant) as ``kind``."""
        at, value = self.fresh("at"), self.fresh("w")
        self.emit(f"{at} = getelementptr i64, ptr %d, i64 {index}",
                  f"{value} = load i64, ptr {at}")
        if kind == "i64":
            return value
        cast = self.fresh("c")
        op = "inttoptr" if kind == "ptr" else "trunc"
        self.emit(f"{cast} = {op} i64 {value} to {kind}")
        return cast

    def header(self, name, kind="i64"):
        return self.word(FIELD[name], kind)

    def flat_row(self, flat):
        """The descriptor index of flat parameter ``flat``'s row."""
        row, scaled = self.fresh("row"), self.fresh("s")
        self.emit(f"{scaled} = mul i64 {flat}, {PER_FLAT}",
                  f"{row} = add i64 {scaled}, %flatbase")
        return row

    def function(self, type_offset):
        self.lines = [f"define ptr @{NAME}(ptr %self, ptr %args, i64 %nargs) #0 {{", "entry:"]
        self.emit(f"%d = getelementptr i8, ptr %self, i64 {self.data_offset}",
                  f"%buf = alloca [{BUFFER} x i8], align 16",
                  f"%ptrs = alloca [{MAX_FLAT} x ptr], align 16",
                  "%ia = alloca i64", "%ja = alloca i64", "%acca = alloca i64")
        api = {name: self.header(name, "ptr") for name in HEADER[FIELD["save"]:FIELD["true"]]}
        self.api = api
        for name, value in (("true", "%true"), ("flat_name", "%flatname"),
                            ("scalar_offset", "%scalaroff")):
            kind = "i64" if name == "scalar_offset" else "ptr"
            self.emit(f"{value} = {'add' if kind == 'i64' else 'inttoptr'} "
                      f"i64 {self.header(name)}{', 0' if kind == 'i64' else ' to ptr'}")
        n = self.header("nargs")
        self.emit(f"%argrows = mul i64 {n}, {PER_ARG}",
                  f"%flatbase = add i64 %argrows, {len(HEADER)}",
                  f"%okn = icmp eq i64 %nargs, {n}", "store i64 0, ptr %ia",
                  "br i1 %okn, label %arg_head, label %mismatch")
        self.arguments(n, type_offset)
        self.fill()
        self.launch()
        self.emit("clear_mismatch:", f"call void {api['clear']}()", "br label %mismatch",
                  "mismatch:", f"%refused = call ptr {api['to_int']}(i64 -1)", "ret ptr %refused")
        self.lines += ["}", 'attributes #0 = { "no-jump-tables"="true" }']
        return "\n".join(self.lines) + "\n"

    def arguments(self, n, type_offset):
        self.emit("arg_head:", "%i = load i64, ptr %ia", f"%more = icmp ult i64 %i, {n}",
                  "br i1 %more, label %arg_body, label %fill_start",
                  "arg_body:", "%objp = getelementptr ptr, ptr %args, i64 %i",
                  "%obj = load ptr, ptr %objp",
                  f"%typep = getelementptr i8, ptr %obj, i64 {type_offset}",
                  "%type = load i64, ptr %typep", f"%rowa = mul i64 %i, {PER_ARG}",
                  f"%row = add i64 %rowa, {len(HEADER)}")
        want = self.word("%row")
        self.emit("%row1 = add i64 %row, 1", "%row2 = add i64 %row, 2", "%row3 = add i64 %row, 3",
                  "%op.at = getelementptr i64, ptr %d, i64 %row1",
                  "%op = load i64, ptr %op.at",
                  "%first.at = getelementptr i64, ptr %d, i64 %row2",
                  "%first = load i64, ptr %first.at",
                  "%count.at = getelementptr i64, ptr %d, i64 %row3",
                  "%count = load i64, ptr %count.at",
                  "store i64 0, ptr %ja", "store i64 0, ptr %acca",
                  f"%same = icmp eq i64 %type, {want}",
                  "br i1 %same, label %dispatch, label %mismatch",
                  "dispatch:",
                  f"switch i64 %op, label %mismatch [ i64 {ARRAY}, label %array "
                  f"i64 {RAW}, label %raw_head i64 {INT}, label %pyint "
                  f"i64 {FLOAT}, label %pyfloat i64 {BOOL}, label %pybool ]",
                  "next:", "%inext = add i64 %i, 1", "store i64 %inext, ptr %ia",
                  "br label %arg_head")
        self.array()
        self.raw()
        self.scalars()

    def store_at(self, flat, value, kind):
        """Store ``value`` (of LLVM type ``kind``) at flat parameter ``flat``'s offset."""
        offset = self.word(self.flat_row(flat))
        where = self.fresh("dst")
        self.emit(f"{where} = getelementptr i8, ptr %buf, i64 {offset}",
                  f"store {kind} {value}, ptr {where}, align 1")

    def array(self):
        api = self.api
        self.emit("array:", f"%tuple = call ptr {api['getattr']}(ptr %obj, ptr %flatname)",
                  "%notuple = icmp eq ptr %tuple, null",
                  "br i1 %notuple, label %clear_mismatch, label %array_size",
                  "array_size:", f"%items = call i64 {api['tuple_size']}(ptr %tuple)",
                  "%fits = icmp eq i64 %items, %count",
                  "br i1 %fits, label %array_head, label %array_fail",
                  "array_head:", "%j = load i64, ptr %ja", "%jmore = icmp ult i64 %j, %count",
                  "br i1 %jmore, label %array_item, label %array_done",
                  "array_item:", f"%item = call ptr {api['tuple_item']}(ptr %tuple, i64 %j)",
                  f"%value = call i64 {api['as_long']}(ptr %item)",
                  "%maybe = icmp eq i64 %value, -1",
                  "br i1 %maybe, label %array_check, label %array_store",
                  "array_check:", f"%raised = call ptr {api['occurred']}()",
                  "%failed = icmp ne ptr %raised, null",
                  "br i1 %failed, label %array_fail, label %array_store",
                  "array_store:", "%flat = add i64 %first, %j")
        self.store_at("%flat", "%value", "i64")
        self.emit("%jnext = add i64 %j, 1", "store i64 %jnext, ptr %ja", "br label %array_head",
                  "array_done:", f"call void {api['decref']}(ptr %tuple)", "br label %next",
                  "array_fail:", f"call void {api['decref']}(ptr %tuple)",
                  "br label %clear_mismatch")

    def raw(self):
        self.emit("raw_head:", "%rj = load i64, ptr %ja", "%rmore = icmp ult i64 %rj, %count",
                  "br i1 %rmore, label %raw_item, label %next",
                  "raw_item:", "%rflat = add i64 %first, %rj")
        row = self.flat_row("%rflat")
        offset = self.word(row)
        self.emit(f"%srow = add i64 {row}, 1")
        size = self.word("%srow")
        self.emit("%acc = load i64, ptr %acca",
                  "%src0 = getelementptr i8, ptr %obj, i64 %scalaroff",
                  "%src = getelementptr i8, ptr %src0, i64 %acc",
                  f"%rdst = getelementptr i8, ptr %buf, i64 {offset}",
                  f"switch i64 {size}, label %mismatch [ i64 1, label %raw1 i64 2, label %raw2 "
                  "i64 4, label %raw4 i64 8, label %raw8 ]")
        for width in (1, 2, 4, 8):
            kind = f"i{8 * width}"
            self.emit(f"raw{width}:", f"%rv{width} = load {kind}, ptr %src, align 1",
                      f"store {kind} %rv{width}, ptr %rdst, align 1", "br label %raw_next")
        self.emit("raw_next:", f"%accnext = add i64 %acc, {size}", "store i64 %accnext, ptr %acca",
                  "%rjnext = add i64 %rj, 1", "store i64 %rjnext, ptr %ja", "br label %raw_head")

    def scalars(self):
        api = self.api
        self.emit("pyint:", f"%int = call i64 {api['as_long']}(ptr %obj)",
                  "%intmaybe = icmp eq i64 %int, -1",
                  "br i1 %intmaybe, label %pyint_check, label %pyint_store",
                  "pyint_check:", f"%intraised = call ptr {api['occurred']}()",
                  "%intfailed = icmp ne ptr %intraised, null",
                  "br i1 %intfailed, label %clear_mismatch, label %pyint_store",
                  "pyint_store:")
        self.store_at("%first", "%int", "i64")
        self.emit("br label %next", "pyfloat:",
                  f"%float = call double {api['as_double']}(ptr %obj)")
        self.store_at("%first", "%float", "double")
        self.emit("br label %next", "pybool:", "%istrue = icmp eq ptr %obj, %true",
                  "%bool = zext i1 %istrue to i8")
        self.store_at("%first", "%bool", "i8")
        self.emit("br label %next")

    def fill(self):
        self.emit("fill_start:")
        nflat = self.header("nflat")
        self.emit("store i64 0, ptr %ja", "br label %fill_head",
                  "fill_head:", "%fj = load i64, ptr %ja", f"%fmore = icmp ult i64 %fj, {nflat}",
                  "br i1 %fmore, label %fill_body, label %go", "fill_body:")
        offset = self.word(self.flat_row("%fj"))
        self.emit(f"%fp = getelementptr i8, ptr %buf, i64 {offset}",
                  "%fslot = getelementptr ptr, ptr %ptrs, i64 %fj", "store ptr %fp, ptr %fslot",
                  "%fjnext = add i64 %fj, 1", "store i64 %fjnext, ptr %ja", "br label %fill_head")

    def launch(self):
        api = self.api
        self.emit("go:")
        function, entry = self.header("function", "ptr"), self.header("entry", "ptr")
        dims = [self.header(name, "i32") for name in ("gx", "gy", "gz", "bx", "by", "bz", "shared")]
        stream = self.header("stream", "ptr")
        args = ", ".join([f"ptr {function}"] + [f"i32 {v}" for v in dims] +
                         [f"ptr {stream}", "ptr %ptrs", "ptr null"])
        self.emit(f"%state = call ptr {api['save']}()", f"%result = call i32 {entry}({args})",
                  f"call void {api['restore']}(ptr %state)", "%wide = sext i32 %result to i64",
                  f"%answer = call ptr {api['to_int']}(i64 %wide)", "ret ptr %answer")


# ---------------------------------------------------------------- this interpreter's layouts

def _type_offset():
    """Where an object's type pointer is (8 bytes in on 64-bit CPython with the GIL)."""
    probe = object()
    found = ctypes.c_void_p.from_address(id(probe) + 8).value
    return 8 if found == id(object) else None


_scalar_ok = {}          # NumPy scalar class -> its value is at SCALAR_OFFSET


SCALAR_OFFSET = 16       # NumPy's array scalars: PyObject_HEAD, then the value


def _scalar_layout(cls):
    """Whether instances of NumPy scalar class ``cls`` hold their value's bytes at
    SCALAR_OFFSET (checked on an instance with distinct bytes)."""
    known = _scalar_ok.get(cls)
    if known is None:
        dtype = np.dtype(cls)
        value = np.frombuffer(bytes(range(1, dtype.itemsize + 1)), dtype)[0]
        known = type(value) is cls and ctypes.string_at(
            id(value) + SCALAR_OFFSET, dtype.itemsize) == value.tobytes()
        _scalar_ok[cls] = known
    return known


def _how(cls, t, sizes):
    """How the native code reads an argument of class ``cls`` and kernel type ``t`` whose
    flat parameters have these sizes: ARRAY ... BOOL, or None (no native route)."""
    if isinstance(t, T.Array):
        return ARRAY if getattr(cls, "_sig", None) == t and set(sizes) <= {8} else None
    if not isinstance(t, T.Scalar) or getattr(t, "is_bfloat16", False):
        return None
    if cls is int and t.dtype == np.int64:
        return INT
    if cls is float and t.dtype == np.float64:
        return FLOAT
    if cls is bool and t.kind == "b":
        return BOOL
    if isinstance(cls, type) and issubclass(cls, np.generic) and t.kind in "biufc" \
            and np.dtype(cls) == t.dtype and sum(sizes) == t.dtype.itemsize \
            and _scalar_layout(cls):
        return RAW
    return None


def plan(classes, types, param_kinds):
    """Per argument (op, first flat parameter, count) and per flat parameter (offset,
    size), or None where some argument has no native route or the parameters do not fit."""
    if _type_offset() is None or any(isinstance(k, int) for k in param_kinds):
        return None
    _, offsets, size = P.layout(param_kinds)
    sizes = [P.field(k)[1] for k in param_kinds]
    if size > BUFFER or len(sizes) > MAX_FLAT:
        return None
    args, first = [], 0
    for cls, t in zip(classes, types):
        count = len(P.kinds(t))
        how = _how(cls, t, sizes[first:first + count])
        if how is None:
            return None
        args.append((cls, how, first, count))
        first += count
    if first != len(sizes) or len(classes) != len(types):
        return None
    return args, list(zip(offsets, sizes))


def descriptor(planned, function, entry, grid, block, shared, stream):
    """The bytes a pack-and-launch builtin is bound to, for ``plan``'s result."""
    args, flats = planned
    header = dict(function=function, entry=entry, shared=shared, stream=stream or 0,
                  nargs=len(args), nflat=len(flats), true=id(True), flat_name=id(_FLAT_NAME),
                  scalar_offset=SCALAR_OFFSET,
                  **dict(zip(("gx", "gy", "gz"), grid)), **dict(zip(("bx", "by", "bz"), block)),
                  **dict(zip(HEADER[FIELD["save"]:FIELD["true"]], python_api(_API))))
    words = [header[name] for name in HEADER]
    for cls, how, first, count in args:       # the classes stay alive: the launch function holds them
        words += [id(cls), how, first, count]
    for offset, size in flats:
        words += [offset, size]
    return struct.pack(f"<{len(words)}Q", *words)


def _usable_ir():
    """The IR for this process (found on the background thread that loads the code,
    with what a descriptor needs: libcuda's entry, the C-API addresses)."""
    if cu_launch_address() is None or DATA_OFFSET is None or _type_offset() is None:
        raise OSError("no cuLaunchKernel in libcuda.so.1, or objects of unknown layout")
    python_api(_API)
    return ir(DATA_OFFSET, _type_offset())


PACK_LAUNCH = NativeCode(NAME, _usable_ir)
