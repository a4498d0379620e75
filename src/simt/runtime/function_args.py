"""Device functions passed to kernels (issue 35 item 2): the kernel's code is compiled
for each (compiler/group_args.py), so a launch hands the back ends only the other
arguments."""


def is_function_arg(value):
    """Whether a launch's argument is a ``@simt.device`` function (no run-time value)."""
    return getattr(type(value), "_simt_device", False) is True and hasattr(value, "ir_cache")


def runtime_args(args):
    """A launch's arguments less the device functions passed (the kernel's code holds
    them: the back ends pass only the others)."""
    if any(is_function_arg(a) for a in args):
        return tuple(a for a in args if not is_function_arg(a))
    return args
