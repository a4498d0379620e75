"""The one writer of launch functions.

From a configuration's second launch on, ``kernel[...]`` hands out a function written
here for one signature: it takes the arguments as a0, a1, ... (each with a default,
and ``*more``), checks that there are as many as the signature has, of exactly the
classes it was written for (a DeviceArray's class records its dtype, ndim, layout and device),
that the device is still current, else hands them to the full path (``slow``); a
Python int that does not fit int64 goes to the full path too, which raises.
The back end gives only its native call (``Native``, runtime/backend.py): the
statements of one launch and, where it packs a parameter buffer, the launch plan
saying how each parameter's flat values are written, and how many buffers (slots) it
has. Each slot remembers what was packed into it last (each array's ``_flat`` tuple,
each scalar object; never the arrays, so no memory is held), and arguments that are
those same objects again launch from it with no checks and no packing: with two slots,
a loop that swaps two arrays (heat's steps, Jacobi sweeps) packs nothing after its
first two launches. New values go to the slot packed longest ago.
The buffer and what it remembers belong to the function, which every host thread
launching this configuration shares: packing and launching hold its lock, so that one
thread never launches with another's values (tools/stress.py found that on a GPU).
(Defaults, one tuple compare of the classes and ``is`` tests are the cheapest checks
Python has.) Compiling a function's source costs about 1 ms (the H200 machine); its code
is kept in the disk cache, so a later process binds in tens of microseconds."""
import hashlib
import marshal
import os
import sys
import threading

from ..config import config
from ..diskblob import read, write
from .devices import _local


def bind(name, classes, device, slow, native, full=None, guards=(), retry=None, forward=None):
    """The launch function of one signature (``classes``: the arguments' classes);
    ``full(*args)`` is the full path, for Python ints that do not fit int64; ``guards``
    (launch.launch_guards) per argument None or (kind, type) for the arguments whose class
    does not fix their type: a texture or surface must carry that type and belong to this
    device, a record must have that dtype; arguments that fail them go to
    ``retry(this function, *args)``, which finds the launch function bound for them (a
    caller may hold this one after another was bound for the same classes). A back end
    that makes the whole launch function (``native.complete``) gets ``retry`` bound to it
    for the arguments it refuses. ``forward``: a list that, once it holds a function, the
    one written here hands every call to (a faster function bound later for the same
    classes: a caller may hold this one)."""
    if native.complete is not None:      # the back end's own: no Python code to write
        made = []
        made.append(native.complete(_local, device, lambda *args: retry(made[0], *args)))
        return made[0]
    names = [f"a{i}" for i in range(len(classes))]
    given = "".join(a + ", " for a in names)
    checks = ["more", "rt.device is not device"]
    if names:
        checks.insert(1, f"{names[-1]} is _")
        checks.append(f"({''.join(a + '.__class__, ' for a in names)}) != classes")
    typed = []            # a failed one goes to the full path (the classes are these)
    for i, guard in enumerate(guards or ()):
        if guard is not None and guard[0] == "texture":
            typed.append(f"a{i}._simt_type != S{i} or a{i}.device.backend is not backend")
        elif guard is not None:
            typed.append(f"a{i}.dtype != S{i}.dtype")
    slots = range(native.slots)

    def launch(k, indent):
        return [indent + line.format(args=given, slot=k) for line in native.lines]
    lines = [f"def fast({', '.join([f'{a}=_' for a in names] + ['*more'])}):"]
    packs = native.plan is not None
    if packs and names:
        same, values = [[] for _ in slots], []
        for i, (a, exprs) in enumerate(zip(names, native.plan)):
            for k in slots:
                same[k].append(f"{a}.__class__ is C{i} and {a}._flat is L{i}_{k}"
                               if exprs is None else f"{a} is L{i}_{k}")
            values += [f"*{a}._flat"] if exprs is None else [e.format(a=a) for e in exprs]
        remember = [[f"L{i}_{k} = {a}._flat" if exprs is None else f"L{i}_{k} = {a}"
                     for i, (a, exprs) in enumerate(zip(names, native.plan))] for k in slots]
        remembered = ", ".join(f"L{i}_{k}" for k in slots for i in range(len(names)))
        lines += [f"    nonlocal {remembered}, turn",
                  "    with lock:",
                  "        if not more and rt.device is device:"]
        for k in slots:
            lines += [f"            if {' and '.join(same[k])}:"]
            lines += launch(k, "                ") + ["                return"]
    lines += [f"    if {' or '.join(checks)}:",
              f"        return slow(*[a for a in ({given}*more,) if a is not _])"]
    wide = [f"not {-2 ** 63} <= {a} <= {2 ** 63 - 1}" for a, c in zip(names, classes) if c is int]
    if wide:                  # the full path raises the OverflowError, naming the argument
        lines += [f"    if {' or '.join(wide)}:", f"        return full({given})"]
    if typed:
        lines += [f"    if {' or '.join(typed)}:", f"        return retry(fast, {given})"]
    if packs and names:      # one buffer per slot for every thread: packing and launching are one step
        lines.append("    with lock:")
        inner = "            " if len(slots) > 1 else "        "
        for k in slots:      # the slot packed longest ago takes the new values
            if len(slots) > 1:
                lines.append(f"        elif turn == {k}:" if 0 < k < len(slots) - 1 else
                             "        if turn == 0:" if k == 0 else "        else:")
            if values:
                lines.append(f"{inner}pack(storage{k}, 0, {', '.join(values)})")
            lines += [inner + line for line in remember[k]]
            lines.append(f"{inner}turn = {(k + 1) % len(slots)}")
            lines += launch(k, inner)
    else:
        lines += launch(0, "    ")
    if forward is not None:
        lines.insert(2 if packs and names else 1, "    if forward:")
        lines.insert(3 if packs and names else 2,
                     f"        return forward[0](*[a for a in ({given}*more,) if a is not _])")
    if packs and names:      # what it remembers lives in closure cells: storing them leaves globals be
        lines = (["def make():", f"    {remembered} = {', '.join(['_NEVER'] * len(names) * len(slots))},",
                  "    turn = 0"]
                 + ["    " + line for line in lines] + ["    return fast", "fast = make()"])
    scope = dict(native.scope, rt=_local, device=device, slow=slow, full=full, retry=retry,
                 forward=forward,
                 lock=threading.Lock(), backend=getattr(device, "backend", None),
                 classes=tuple(classes),
                 **{f"S{i}": g[1] for i, g in enumerate(guards or ()) if g is not None},
                 _=_MISSING, _NEVER=_NEVER, **{f"C{i}": c for i, c in enumerate(classes)})
    exec(_code("\n".join(lines), f"<simt launch of {name}>"), scope)
    return scope["fast"]


_codes = {}              # (source, file name) -> code: each launch function compiled once


def _code(source, filename):
    key = (source, filename)
    code = _codes.get(key)
    if code is None:
        code = _codes[key] = _cached_code(source, filename)
    return code


def _cached_code(source, filename):
    """The code of a launch function's source: from the disk cache (marshal's format is
    this Python's), else compiled and kept there. The source holds no addresses: every
    value it uses comes from its scope."""
    digest = hashlib.sha256(
        f"{sys.implementation.cache_tag}\n{filename}\n{source}".encode()).hexdigest()[:32]
    path = os.path.join(config.cache_dir, "launch", f"{digest}.code")
    data = read(path)
    if data is not None:
        try:
            return marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            pass                      # written by another build of this Python: make it again
    code = compile(source, filename, "exec")
    write(path, marshal.dumps(code))
    return code


_MISSING = object()      # the default of a launch function's parameters
_NEVER = object()        # what a launch function remembers before its first packing
