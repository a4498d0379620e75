"""Typed IR -> a sim binary (the generated Python source and what a launch needs), and
a binary -> code whose lines and file names are the user's, for pdb and tracebacks."""
import ast
import time
import types
from dataclasses import dataclass

import numpy as np

from ...compiler import pipeline
from ...compiler.binary import Binary
from ...compiler.family import launch_nodes
from ...compiler.writes import written_params
from ...ir import verify
from ...ir.assigned import check_reads
from ...ir.inline import inline_barrier_calls
from ...ir import nodes as ir
from ...ir.walk import all_functions, walk
from ...lang.graphs import graph_launch
from .codegen import Generator, is_sync, py_name
from .records import Layout


@dataclass
class SimBinary(Binary):
    """A kernel compiled for the sim device."""
    source: str                   # the generated Python
    places: list                  # (file, line) of the user's code, per generated line
    sites: list                   # codegen.Site per site number
    statics: list                 # (python name, MemoryDecl space, shape, dtype, data)
    sync: bool                    # the kernel yields at barriers or warp functions
    debug: bool                   # it calls breakpoint(): bind threadIdx etc. for pdb
    seed: int
    function_files: dict          # python function name -> its file
    param_names: list             # the kernel's parameter names, for reports
    written: list                 # the indices of the array parameters it writes
    launches_kernels: bool = False  # it holds launches of kernels (lang/launches.py)
    children: tuple = ()          # the SimBinary of each other kernel it reaches by launches
    layouts: tuple = ()           # the record dtypes generated code names _k_lay<i>


def compile_kernel(fn, options, warp):
    started = time.perf_counter()
    out = {}

    def generate(inlined):
        generator = Generator(inlined, warp, options.narrowing)
        src, sites, decls = generator.generate()
        out.update(src=src, sites=sites, decls=decls, fn=inlined, files=generator.files,
                   layouts=tuple(generator.layouts))
        return src.text()

    stages = pipeline.run([("inlined", _inlined), ("python", generate)], fn, fn.name)
    inlined = out["fn"]
    symbols = [d for _, d in out["decls"] if d.space == "symbol"]
    statics = []
    for name, decl in out["decls"]:
        data = np.asarray(decl.data) if decl.space == "const" else None
        index = symbols.index(decl) if decl.space == "symbol" else None
        statics.append((name, decl.space, tuple(decl.shape), np.dtype(decl.dtype), data,
                        index))
    debug = any(getattr(n, "op", "") == "builtin.breakpoint" for n in _nodes(inlined))
    return SimBinary(
        name=fn.name, symbol=py_name(fn.name), params=[t for _, t in fn.params],
        symbols=[d.symbol for d in symbols],
        shared_static_bytes=_shared_bytes([d for _, d in out["decls"]]),
        labels=[], files=[(fn.name, fn.loc.filename)], messages=[], stages=stages,
        symbol_objects=[d.data for d in symbols], compile_seconds=time.perf_counter() - started,
        source=out["src"].text(), places=out["src"].places(), sites=out["sites"],
        statics=statics, sync=is_sync(inlined), debug=debug, seed=options.seed or 0,
        function_files=out["files"], param_names=[name for name, _ in fn.params],
        written=sorted(written_params(fn)),
        launches_kernels=any(launch_nodes(fn)) or _launches_graphs(fn),
        children=tuple(compile_kernel(child, options, warp) for child in fn.launches),
        layouts=out["layouts"])


def _launches_graphs(fn):
    """Whether fn or a device function it calls holds simt.graph_launch."""
    return any(isinstance(node, ir.Intrinsic) and node.entry is graph_launch
               for node in _nodes(fn))


def _inlined(fn):
    """Device functions holding barriers inlined (ir/inline.py), and reads of variables a
    thread may not have assigned checked (ir/assigned.py: the sim device always checks)."""
    fn = verify.after("inline", inline_barrier_calls(fn))
    return verify.after("checked reads", check_reads(fn))


def _nodes(fn):
    for f in all_functions(fn):
        yield from walk(*f.body)


def _shared_bytes(decls):
    return sum(int(np.prod(d.shape)) * np.dtype(d.dtype).itemsize for d in decls
               if d.space == "shared")


def load(binary, names):
    """The ``_k_launch`` function of a binary, its code carrying the user's lines."""
    tree = ast.parse(binary.source)
    default = binary.places[0][1]
    for node in ast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            line = binary.places[node.lineno - 1][1] or default
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
    code = _refile(compile(tree, binary.files[0][1], "exec"), binary.function_files)
    scope = dict(names)
    for name, space, shape, dtype, data, index in binary.statics:
        scope[name + "_d"] = (name, space, shape, np.dtype(dtype), data, index)
    for k, dtype in enumerate(binary.layouts):
        scope[f"_k_lay{k}"] = Layout(dtype)
    exec(code, scope)
    return scope["_k_launch"]


def _refile(code, files):
    """Give each function's code object the file of its user's function."""
    consts = tuple(_refile(c, files) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    file = files.get(code.co_name, code.co_filename)
    return code.replace(co_consts=consts, co_filename=file)
