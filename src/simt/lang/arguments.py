"""Binding a call's arguments to a typing rule's parameters (the rules of lang/warp.py,
wmma.py, wgmma.py, mma.py and tma.py take positional and keyword arguments alike)."""

OPTIONAL = object()       # a parameter's default that binds None when the call leaves it out


def bind(fc, args, kwargs, names, loc, what):
    """The arguments in the order of ``names`` ([(name, default)]: None for a required one,
    OPTIONAL for one that is None when left out), missing ones from their defaults; a CompileError naming ``what`` (the function as the user writes it) for a
    missing, unknown or extra argument."""
    out, kwargs = list(args), dict(kwargs)
    for key, default in names[len(args):]:
        if key in kwargs:
            out.append(kwargs.pop(key))
        elif default is OPTIONAL:
            out.append(None)
        elif default is not None:
            out.append(default)
        else:
            fc.fail(loc, f"{what}() needs the argument '{key}'")
    if kwargs or len(out) > len(names):
        fc.fail(loc, f"{what}() takes ({', '.join(k for k, _ in names)})")
    return out
