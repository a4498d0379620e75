"""The kernels a compile can launch from the device (dynamic parallelism).

The front end leaves each ``child[grid, block](args)`` as a ``device_launch`` node naming
the child's kernel object and argument types (lang/launches.py). After the kernel's own
typed IR is built, ``resolve`` builds the typed IR of every kernel reachable that way,
once per kernel and argument types, and numbers them: 0 is the kernel being compiled
(a kernel that launches itself, as a recursive quicksort does, names 0), i > 0 is
``fn.launches[i - 1]``. The back ends compile the whole family with the kernel: the GPU
as entries of one module (a device-side launch names its child's entry), the CPU as
binaries the parent's launch runs at its end.
"""
from ..errors import CompileError
from ..ir import walk
from ..lang.launches import device_launch

LIMIT = 64          # kernels in one family: more is a runaway of argument types


def launch_nodes(fn):
    """The device_launch nodes in ``fn`` and the device functions it calls."""
    for f in walk.all_functions(fn):
        for node in walk.intrinsics(f):
            if node.entry is device_launch:
                yield node


def resolve(pyfunc, arg_types, fn, build):
    """Number the launches of ``fn`` (the typed IR of ``pyfunc`` for ``arg_types``) and
    set ``fn.launches``; ``build(pyfunc, types)`` makes a child's typed IR."""
    keys = [(pyfunc, tuple(arg_types))]
    functions = [fn]
    i = 0
    while i < len(functions):
        for node in launch_nodes(functions[i]):
            key = (node.attrs["kernel"].pyfunc, tuple(node.attrs["types"]))
            index = next((k for k, (f, types) in enumerate(keys)
                          if f is key[0] and types == key[1]), None)
            if index is None:
                if len(keys) == LIMIT:
                    raise CompileError(
                        f"kernel '{fn.name}' reaches more than {LIMIT} kernels (or argument "
                        "types of one kernel) through launches inside kernels; a kernel that "
                        "launches itself with arguments of new types at each level never "
                        "ends", filename=node.loc.filename, line=node.loc.line)
                index = len(keys)
                keys.append(key)
                child = build(*key)
                child.pyfunc = key[0]        # runtime/cache.py follows its reads through it
                functions.append(child)
            node.attrs["index"] = index
        i += 1
    fn.launches = functions[1:]
    return fn


def check_options(fn, options, name):
    """Every kernel ``fn`` launches is compiled with the options of the kernel launched
    from the host (``options``, as declared on ``@simt.kernel``): refuse a child that
    declares others rather than ignore them."""
    for member in [fn, *fn.launches]:
        for node in launch_nodes(member):
            child = node.attrs["kernel"]
            if child.options and child.options != options:
                raise CompileError(
                    f"kernel '{child.__name__}' declares the options {child.options}, but "
                    f"it is launched from a kernel that kernel '{name}' (options "
                    f"{options or 'none'}) launches: the kernels launched from a kernel are "
                    "compiled into one program with the options of the kernel the host "
                    f"launches. Declare the same options on '{child.__name__}' and "
                    f"'{name}', or none on '{child.__name__}'",
                    filename=node.loc.filename, line=node.loc.line)
