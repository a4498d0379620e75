"""A launch function as one native call: checks, packing and cuLaunchKernel.

For signatures of device arrays, textures, surfaces, vector values, records and plain
scalars (Python ints, floats and bools, NumPy scalars), a configuration's launch
function, what ``kernel[...]`` hands out, is a builtin function (METH_FASTCALL) over the
native code below, bound to a descriptor (a bytes object) that says, for this
configuration and signature, what each argument's class must be, how its values are read
and where each flat parameter goes. The code checks that the calling thread's current
device is the function's, every argument's class (the exact class: a DeviceArray's
records dtype, ndim, layout and device), writes the values into a parameter buffer on its
own stack, gives up the GIL around cuLaunchKernel (which copies the buffer during the
call) and returns None. Arguments not as planned (another class, a missing one, a Python
int beyond int64) go to ``refused``, the runtime's full path, which raises or binds; a
driver error to ``failed``. Being on the stack, the buffer is each call's own, so host
threads need no lock; no Python frame runs between ``kernel[...](...)`` and the driver.

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
import functools
import struct
import sys

import numpy as np

from ...ir import records, types as T
from . import params as P
from .trampoline import (DATA_OFFSET, METH_FASTCALL, NativeCode, builtin, cu_launch_address,
                         python_api)

FLAT, ITEMS, RAW, RECORD, INT, FLOAT, BOOL = range(7)
HEADER = ("function", "entry", "gx", "gy", "gz", "bx", "by", "bz", "shared", "stream",
          "nargs", "nflat",
          # the C-API functions it calls (_API)
          "save", "restore", "to_int", "getattr", "decref", "as_long", "as_double", "occurred",
          "clear", "tuple_size", "tuple_item", "equal", "setattr", "call", "tuple_new",
          "tuple_set", "incref",
          # objects: True, None, attribute names, the thread's current-device holder, the
          # device this function is for, what refusals and driver errors are handed to,
          # what a launch that can fail records (backend.error_source = value) or 0
          "true", "none", "flat_name", "items_name", "device_name", "error_name", "local",
          "device", "refused", "failed", "error_owner", "error_value",
          "scalar_offset", "void_data", "void_dtype")
FIELD = {name: i for i, name in enumerate(HEADER)}
PER_ARG = 5     # the argument's class, how it is read, its first flat parameter, their count, extra
PER_FLAT = 3    # a flat parameter's offset in the buffer, its size in bytes, where it is read from
BUFFER, MAX_FLAT = 4096, 512
_API = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyLong_FromLongLong", "PyObject_GetAttr",
        "Py_DecRef", "PyLong_AsLongLong", "PyFloat_AsDouble", "PyErr_Occurred", "PyErr_Clear",
        "PyTuple_Size", "PyTuple_GetItem", "PyObject_RichCompareBool", "PyObject_SetAttr",
        "PyObject_Call", "PyTuple_New", "PyTuple_SetItem", "Py_IncRef")
_NAMES = {"flat_name": sys.intern("_flat"), "items_name": sys.intern("_items"),
          "device_name": sys.intern("device"), "error_name": sys.intern("error_source")}
NAME = "simt_cuda_pack_launch"
_PY_EQ = 2


def ir(data_offset, type_offset=8):
    """LLVM IR of ``PyObject *simt_cuda_pack_launch(PyObject *self, PyObject *const *args,
    Py_ssize_t nargs)``; ``self`` is the descriptor, its data ``data_offset`` bytes in.
    It returns None after a launch; with another current device (``local.device``),
    another number of arguments or one not as planned it returns ``refused(*args)``,
    after a driver error ``failed(code, *args)`` (NULL, their exception, where they raise).
    How each argument is read (the descriptor's ``op``):

    - FLAT: its ``_flat`` attribute, a tuple of ``count`` ints (arrays, textures, surfaces);
    - ITEMS: its ``_items`` attribute, a tuple of ``count`` NumPy scalars of class
      ``extra`` (simt's vector types);
    - RAW: the bytes of a NumPy scalar;
    - RECORD: a NumPy record (np.void) whose dtype is ``extra`` (the same object or an
      equal one), each flat parameter read at its ``source`` offset in the record's data;
    - INT, FLOAT, BOOL: a Python int (int64), float (float64) or bool."""
    return _Writer(data_offset).function(type_offset)


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
        self.lines += [line if line.endswith(":") else "  " + line for line in lines]

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

    def flat(self, index, column):
        """Column ``column`` (0 offset, 1 size, 2 source) of flat parameter ``index``."""
        scaled, row = self.fresh("s"), self.fresh("row")
        self.emit(f"{scaled} = mul i64 {index}, {PER_FLAT}",
                  f"{row} = add i64 {scaled}, %flatbase")
        if column:
            moved = self.fresh("row")
            self.emit(f"{moved} = add i64 {row}, {column}")
            row = moved
        return self.word(row)

    def function(self, type_offset):
        self.lines = [f"define ptr @{NAME}(ptr %self, ptr %args, i64 %nargs) #0 {{", "entry:"]
        self.emit(f"%d = getelementptr i8, ptr %self, i64 {self.data_offset}",
                  f"%buf = alloca [{BUFFER} x i8], align 16",
                  f"%ptrs = alloca [{MAX_FLAT} x ptr], align 16",
                  "%ia = alloca i64", "%ja = alloca i64")
        self.api = {name: self.header(name, "ptr")
                    for name in HEADER[FIELD["save"]:FIELD["true"]]}
        for name in HEADER[FIELD["true"]:FIELD["scalar_offset"]]:
            self.emit(f"%{name} = inttoptr i64 {self.header(name)} to ptr")
        for name in ("scalar_offset", "void_data", "void_dtype"):
            self.emit(f"%{name} = add i64 {self.header(name)}, 0")
        n = self.header("nargs")
        api = self.api
        self.emit(f"%argrows = mul i64 {n}, {PER_ARG}",
                  f"%flatbase = add i64 %argrows, {len(HEADER)}", "store i64 0, ptr %ia",
                  f"%current = call ptr {api['getattr']}(ptr %local, ptr %device_name)",
                  "%nocurrent = icmp eq ptr %current, null",
                  "br i1 %nocurrent, label %clear_mismatch, label %have_current",
                  "have_current:", f"call void {api['decref']}(ptr %current)",
                  "%samedevice = icmp eq ptr %current, %device",
                  f"%okn = icmp eq i64 %nargs, {n}", "%ok = and i1 %samedevice, %okn",
                  "br i1 %ok, label %arg_head, label %mismatch")
        self.arguments(n, type_offset)
        self.fill()
        self.launch()
        self.emit("clear_mismatch:", f"call void {api['clear']}()", "br label %mismatch",
                  "mismatch:")
        self.hand_over("refuse", "%refused", None)
        self.emit("failure:")
        self.hand_over("fail", "%failed", "%result")
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
        for k, name in enumerate(("op", "first", "count", "extra"), 1):
            self.emit(f"%{name}.row = add i64 %row, {k}")
            self.emit(f"%{name} = add i64 {self.word(f'%{name}.row')}, 0")
        cases = " ".join(f"i64 {op}, label %{label}" for op, label in (
            (FLAT, "flat"), (ITEMS, "items"), (RAW, "raw"), (RECORD, "record"),
            (INT, "pyint"), (FLOAT, "pyfloat"), (BOOL, "pybool")))
        self.emit("store i64 0, ptr %ja", f"%same = icmp eq i64 %type, {want}",
                  "br i1 %same, label %dispatch, label %mismatch",
                  "dispatch:", f"switch i64 %op, label %mismatch [ {cases} ]",
                  "next:", "%inext = add i64 %i, 1", "store i64 %inext, ptr %ia",
                  "br label %arg_head")
        self.tuple("flat", "%flat_name", self.int_item)
        self.tuple("items", "%items_name", self.scalar_item)
        self.emit("raw:", "%rawbase = getelementptr i8, ptr %obj, i64 %scalar_offset")
        self.copies("raw", "%rawbase")
        self.record()
        self.scalars()

    def store_at(self, index, value, kind):
        """Store ``value`` (of LLVM type ``kind``) at flat parameter ``index``'s offset."""
        offset, where = self.flat(index, 0), self.fresh("dst")
        self.emit(f"{where} = getelementptr i8, ptr %buf, i64 {offset}",
                  f"store {kind} {value}, ptr {where}, align 1")

    def copy(self, stem, index, source, done):
        """Copy flat parameter ``index``'s size (1, 2, 4 or 8) of bytes from ``source``
        into its place, then go to ``done``."""
        offset, size = self.flat(index, 0), self.flat(index, 1)
        self.emit(f"%{stem}.dst = getelementptr i8, ptr %buf, i64 {offset}",
                  f"switch i64 {size}, label %mismatch [ i64 1, label %{stem}.1 "
                  f"i64 2, label %{stem}.2 i64 4, label %{stem}.4 i64 8, label %{stem}.8 ]")
        for width in (1, 2, 4, 8):
            kind = f"i{8 * width}"
            self.emit(f"{stem}.{width}:", f"%{stem}.v{width} = load {kind}, ptr {source}, align 1",
                      f"store {kind} %{stem}.v{width}, ptr %{stem}.dst, align 1",
                      f"br label {done}")

    def copies(self, stem, base):
        """Each flat parameter of the argument copied from ``base`` + its source offset."""
        self.emit(f"br label %{stem}.head", f"{stem}.head:", f"%{stem}.j = load i64, ptr %ja",
                  f"%{stem}.more = icmp ult i64 %{stem}.j, %count",
                  f"br i1 %{stem}.more, label %{stem}.body, label %next", f"{stem}.body:",
                  f"%{stem}.f = add i64 %first, %{stem}.j")
        source = self.flat(f"%{stem}.f", 2)
        self.emit(f"%{stem}.src = getelementptr i8, ptr {base}, i64 {source}")
        self.copy(f"{stem}.c", f"%{stem}.f", f"%{stem}.src", f"%{stem}.step")
        self.emit(f"{stem}.step:", f"%{stem}.jn = add i64 %{stem}.j, 1",
                  f"store i64 %{stem}.jn, ptr %ja", f"br label %{stem}.head")

    def tuple(self, stem, name, item):
        """The tuple attribute ``name`` of the argument: ``count`` items, each stored by
        ``item(stem, item value, flat index, done label, fail label)``."""
        api = self.api
        self.emit(f"{stem}:", f"%{stem}.t = call ptr {api['getattr']}(ptr %obj, ptr {name})",
                  f"%{stem}.none = icmp eq ptr %{stem}.t, null",
                  f"br i1 %{stem}.none, label %clear_mismatch, label %{stem}.size",
                  f"{stem}.size:", f"%{stem}.n = call i64 {api['tuple_size']}(ptr %{stem}.t)",
                  f"%{stem}.fits = icmp eq i64 %{stem}.n, %count",
                  f"br i1 %{stem}.fits, label %{stem}.head, label %{stem}.fail",
                  f"{stem}.head:", f"%{stem}.j = load i64, ptr %ja",
                  f"%{stem}.more = icmp ult i64 %{stem}.j, %count",
                  f"br i1 %{stem}.more, label %{stem}.item, label %{stem}.done",
                  f"{stem}.item:",
                  f"%{stem}.x = call ptr {api['tuple_item']}(ptr %{stem}.t, i64 %{stem}.j)",
                  f"%{stem}.f = add i64 %first, %{stem}.j")
        item(stem, f"%{stem}.x", f"%{stem}.f", f"%{stem}.step", f"%{stem}.fail")
        self.emit(f"{stem}.step:", f"%{stem}.jn = add i64 %{stem}.j, 1",
                  f"store i64 %{stem}.jn, ptr %ja", f"br label %{stem}.head",
                  f"{stem}.done:", f"call void {api['decref']}(ptr %{stem}.t)", "br label %next",
                  f"{stem}.fail:", f"call void {api['decref']}(ptr %{stem}.t)",
                  "br label %clear_mismatch")

    def int_item(self, stem, value, index, done, fail):
        """A Python int item as an int64 (one that does not fit fails)."""
        api = self.api
        self.emit(f"%{stem}.v = call i64 {api['as_long']}(ptr {value})",
                  f"%{stem}.maybe = icmp eq i64 %{stem}.v, -1",
                  f"br i1 %{stem}.maybe, label %{stem}.check, label %{stem}.store",
                  f"{stem}.check:", f"%{stem}.raised = call ptr {api['occurred']}()",
                  f"%{stem}.failed = icmp ne ptr %{stem}.raised, null",
                  f"br i1 %{stem}.failed, label {fail}, label %{stem}.store", f"{stem}.store:")
        self.store_at(index, f"%{stem}.v", "i64")
        self.emit(f"br label {done}")

    def scalar_item(self, stem, value, index, done, fail):
        """A NumPy scalar item of class ``extra``: its bytes."""
        self.emit(f"%{stem}.tp = getelementptr i8, ptr {value}, i64 8",
                  f"%{stem}.type = load i64, ptr %{stem}.tp",
                  f"%{stem}.ok = icmp eq i64 %{stem}.type, %extra",
                  f"br i1 %{stem}.ok, label %{stem}.copy, label {fail}", f"{stem}.copy:",
                  f"%{stem}.src = getelementptr i8, ptr {value}, i64 %scalar_offset")
        self.copy(f"{stem}.c", index, f"%{stem}.src", done)

    def record(self):
        """np.void: its dtype the planned one (the same object, else an equal one)."""
        api = self.api
        self.emit("record:", "%rec.dp = getelementptr i8, ptr %obj, i64 %void_dtype",
                  "%rec.dtype = load i64, ptr %rec.dp", "%rec.same = icmp eq i64 %rec.dtype, %extra",
                  "br i1 %rec.same, label %rec.data, label %rec.compare",
                  "rec.compare:", "%rec.dtypep = inttoptr i64 %rec.dtype to ptr",
                  "%rec.extrap = inttoptr i64 %extra to ptr",
                  f"%rec.eq = call i32 {api['equal']}(ptr %rec.dtypep, ptr %rec.extrap, i32 {_PY_EQ})",
                  "%rec.equal = icmp eq i32 %rec.eq, 1",
                  "br i1 %rec.equal, label %rec.data, label %clear_mismatch",
                  "rec.data:", "%rec.pp = getelementptr i8, ptr %obj, i64 %void_data",
                  "%rec.base = load ptr, ptr %rec.pp")
        self.copies("rec", "%rec.base")

    def scalars(self):
        self.emit("pyint:")
        self.int_item("int", "%obj", "%first", "%next", "%clear_mismatch")
        self.emit("pyfloat:", f"%float = call double {self.api['as_double']}(ptr %obj)")
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
        offset = self.flat("%fj", 0)
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
        self.emit("%records = icmp ne ptr %error_owner, null",
                  "br i1 %records, label %record_source, label %call",
                  "record_source:",
                  f"%set = call i32 {api['setattr']}(ptr %error_owner, ptr %error_name, "
                  "ptr %error_value)", "%setfailed = icmp ne i32 %set, 0",
                  "br i1 %setfailed, label %clear_mismatch, label %call", "call:",
                  f"%state = call ptr {api['save']}()", f"%result = call i32 {entry}({args})",
                  f"call void {api['restore']}(ptr %state)", "%launched = icmp eq i32 %result, 0",
                  "br i1 %launched, label %done, label %failure",
                  "done:", f"call void {api['incref']}(ptr %none)", "ret ptr %none")

    def hand_over(self, stem, callable_, error):
        """Call ``callable_(*args)`` (``callable_(error, *args)`` with an error code) and
        return what it returns (NULL, with its exception, when it raised)."""
        api = self.api
        first = 0 if error is None else 1
        self.emit(f"%{stem}.size = add i64 %nargs, {first}",
                  f"%{stem}.t = call ptr {api['tuple_new']}(i64 %{stem}.size)",
                  f"%{stem}.none = icmp eq ptr %{stem}.t, null",
                  f"br i1 %{stem}.none, label %{stem}.raise, label %{stem}.fill",
                  f"{stem}.raise:", "ret ptr null", f"{stem}.fill:", "store i64 0, ptr %ja")
        if error is not None:
            self.emit(f"%{stem}.wide = sext i32 {error} to i64",
                      f"%{stem}.code = call ptr {api['to_int']}(i64 %{stem}.wide)",
                      f"call i32 {api['tuple_set']}(ptr %{stem}.t, i64 0, ptr %{stem}.code)")
        self.emit(f"br label %{stem}.head", f"{stem}.head:", f"%{stem}.k = load i64, ptr %ja",
                  f"%{stem}.more = icmp ult i64 %{stem}.k, %nargs",
                  f"br i1 %{stem}.more, label %{stem}.item, label %{stem}.call",
                  f"{stem}.item:", f"%{stem}.ap = getelementptr ptr, ptr %args, i64 %{stem}.k",
                  f"%{stem}.a = load ptr, ptr %{stem}.ap",
                  f"call void {api['incref']}(ptr %{stem}.a)",
                  f"%{stem}.at = add i64 %{stem}.k, {first}",
                  f"call i32 {api['tuple_set']}(ptr %{stem}.t, i64 %{stem}.at, ptr %{stem}.a)",
                  f"%{stem}.kn = add i64 %{stem}.k, 1", f"store i64 %{stem}.kn, ptr %ja",
                  f"br label %{stem}.head", f"{stem}.call:",
                  f"%{stem}.r = call ptr {api['call']}(ptr {callable_}, ptr %{stem}.t, ptr null)",
                  f"call void {api['decref']}(ptr %{stem}.t)", f"ret ptr %{stem}.r")


# ---------------------------------------------------------------- this interpreter's layouts

def _type_offset():
    """Where an object's type pointer is (8 bytes in on 64-bit CPython with the GIL)."""
    probe = object()
    found = ctypes.c_void_p.from_address(id(probe) + 8).value
    return 8 if found == id(object) else None


TYPE_OFFSET = _type_offset()
SCALAR_OFFSET = 16       # NumPy's array scalars: PyObject_HEAD, then the value
VOID_DATA, VOID_DTYPE = 24, 32      # np.void: PyObject_VAR_HEAD, its data pointer, its dtype


@functools.cache
def _scalar_layout(cls):
    """Whether instances of NumPy scalar class ``cls`` hold their value's bytes at
    SCALAR_OFFSET (checked on an instance with distinct bytes)."""
    dtype = np.dtype(cls)
    value = np.frombuffer(bytes(range(1, dtype.itemsize + 1)), dtype)[0]
    return type(value) is cls and ctypes.string_at(
        id(value) + SCALAR_OFFSET, dtype.itemsize) == value.tobytes()


@functools.cache
def _void_layout():
    """Whether np.void scalars keep their data pointer and dtype at VOID_DATA, VOID_DTYPE."""
    dtype = np.dtype([("a", np.int32), ("b", np.float64)])
    value = np.frombuffer(bytes(range(1, dtype.itemsize + 1)), dtype)[0]
    data = ctypes.c_void_p.from_address(id(value) + VOID_DATA).value
    return type(value) is np.void and \
        ctypes.c_void_p.from_address(id(value) + VOID_DTYPE).value == id(value.dtype) and \
        data is not None and ctypes.string_at(data, dtype.itemsize) == value.tobytes()


def _how(cls, t, sizes):
    """(op, extra, source offsets) reading an argument of class ``cls`` and kernel type
    ``t`` whose flat parameters have these sizes; None where there is no native route."""
    plain = [0] * len(sizes)
    if isinstance(t, (T.Array, T.Texture, T.Surface)):     # their class fixes type and device
        ok = getattr(cls, "_sig", None) == t and set(sizes) <= {8}
        return (FLAT, None, plain) if ok else None
    if isinstance(t, T.Vector):
        item = np.dtype(t.element.dtype).type
        ok = getattr(cls, "_simt_type", None) == t and not t.element.is_bfloat16 and \
            _scalar_layout(item) and set(sizes) == {t.element.dtype.itemsize}
        return (ITEMS, item, plain) if ok else None
    if isinstance(t, T.Record):
        sources = _record_sources(t.dtype, sizes) if cls is np.void and _void_layout() else None
        return None if sources is None else (RECORD, t.dtype, sources)
    if not isinstance(t, T.Scalar) or t.is_bfloat16:
        return None
    if cls is int and t.dtype == np.int64:
        return INT, None, plain
    if cls is float and t.dtype == np.float64:
        return FLOAT, None, plain
    if cls is bool and t.kind == "b":
        return BOOL, None, plain
    if isinstance(cls, type) and issubclass(cls, np.generic) and t.kind in "biufc" \
            and np.dtype(cls) == t.dtype and sum(sizes) == t.dtype.itemsize \
            and _scalar_layout(cls):
        return RAW, None, [sum(sizes[:k]) for k in range(len(sizes))]
    return None


def _record_sources(dtype, sizes):
    """Where each flat parameter of a record of ``dtype`` is in its data (params.kinds'
    order: its leaves, a complex one as two); None for leaves read otherwise (bfloat16,
    big-endian) or a layout that does not match ``sizes``."""
    sources = []
    for path, leaf in records.leaves(dtype):
        if leaf.names is not None or leaf.byteorder == ">" or leaf.kind not in "biufc":
            return None
        offset = P.leaf_offset(dtype, path)
        parts = 2 if leaf.kind == "c" else 1
        sources += [offset + k * leaf.itemsize // parts for k in range(parts)]
    if len(sources) != len(sizes):
        return None
    return sources


def plan(classes, types, param_kinds, offsets, size):
    """Per argument (class, op, first flat parameter, count, extra) and per flat
    parameter (offset, size, source), or None where some argument has no native route or
    the parameters do not fit the stack buffer. ``offsets``, ``size``: the parameter
    buffer's layout (params.layout)."""
    if TYPE_OFFSET is None or any(isinstance(k, int) for k in param_kinds):
        return None
    sizes = [P.field(k)[1] for k in param_kinds]
    if size > BUFFER or len(sizes) > MAX_FLAT or len(classes) != len(types):
        return None
    args, sources, first = [], [], 0
    for cls, t in zip(classes, types):
        count = len(P.kinds(t))
        how = _how(cls, t, sizes[first:first + count])
        if how is None:
            return None
        op, extra, where = how
        args.append((cls, op, first, count, extra))
        sources += where
        first += count
    if first != len(sizes):
        return None
    return args, list(zip(offsets, sizes, sources))


def descriptor(planned, function, entry, grid, block, shared, stream, objects):
    """The bytes a pack-and-launch builtin is bound to, for ``plan``'s result, and the
    objects whose addresses they hold (the builtin must keep them: ``launch_function``).
    ``objects``: local, device, refused, failed, error_owner, error_value (HEADER)."""
    args, flats = planned
    held = dict(objects, none=None, true=True, **_NAMES)
    keep = tuple(held.values()) + tuple(cls for cls, *_ in args) + tuple(
        extra for *_, extra in args if extra is not None)
    header = dict(function=function, entry=entry, shared=shared, stream=stream or 0,
                  nargs=len(args), nflat=len(flats),
                  scalar_offset=SCALAR_OFFSET, void_data=VOID_DATA, void_dtype=VOID_DTYPE,
                  **{name: 0 if value is None and name == "error_owner" else id(value)
                     for name, value in held.items()},
                  **dict(zip(("gx", "gy", "gz"), grid)), **dict(zip(("bx", "by", "bz"), block)),
                  **dict(zip(HEADER[FIELD["save"]:FIELD["true"]], python_api(_API))))
    words = [header[name] for name in HEADER]
    for cls, op, first, count, extra in args:
        words += [id(cls), op, first, count, 0 if extra is None else id(extra)]
    for row in flats:
        words += row
    return struct.pack(f"<{len(words)}Q", *words), keep


def launch_function(code, planned, function, entry, grid, block, shared, stream, objects):
    """The launch function itself: a builtin over the code at ``code`` (METH_FASTCALL)."""
    data, keep = descriptor(planned, function, entry, grid, block, shared, stream, objects)
    return builtin(code, data, METH_FASTCALL, keep)


def _usable_ir():
    """The IR for this process (found on the background thread that loads the code,
    with what a descriptor needs: libcuda's entry, the C-API addresses)."""
    if cu_launch_address() is None or DATA_OFFSET is None or TYPE_OFFSET is None:
        raise OSError("no cuLaunchKernel in libcuda.so.1, or objects of unknown layout")
    python_api(_API)
    return ir(DATA_OFFSET, TYPE_OFFSET)


PACK_LAUNCH = NativeCode(NAME, _usable_ir)
