"""Features of one GPU generation only (PTX's arch-specific targets, ``sm_90a``: wgmma,
setmaxnreg ...): the registry entries that need them, and the compile target a kernel that
uses one gets. Lowerings mark their entries with ``arch_specific(entry, major=9)`` from
lower/; a kernel reaching one is compiled for ``sm_XYa`` on a GPU of exactly that
compute capability, and refused (NotSupportedError naming the feature and the GPU) on
another."""
from ...errors import NotSupportedError
from ...ir.walk import all_functions, intrinsics

NEEDS = {}               # id(entry) -> (entry, compute capability major it exists on)


def arch_specific(*entries, major=9):
    """Mark entries as features of compute capability ``major``.0's arch-specific target."""
    for entry in entries:
        NEEDS[id(entry)] = (entry, major)


def used(fn):
    """The arch-specific entries the kernel ``fn`` (and what it calls) reaches."""
    found = {}
    for f in all_functions(fn):
        for node in intrinsics(f):
            entry = getattr(node, "entry", None)
            if entry is not None and id(entry) in NEEDS:
                found[id(entry)] = NEEDS[id(entry)]
    return list(found.values())


def target_for(fn, arch):
    """``arch`` ('sm_90'), or its arch-specific form ('sm_90a') when ``fn`` needs one."""
    needed = used(fn)
    if not needed:
        return arch
    digits = arch.removeprefix("sm_").rstrip("a")
    for entry, major in needed:
        if digits != f"{major}0":
            cc = f"{digits[:-1]}.{digits[-1]}"
            raise NotSupportedError(
                f"{entry.python_name} (kernel '{fn.name}') needs a GPU of compute capability "
                f"{major}.0 exactly (its sm_{major}0a instructions), and this one is {cc}")
    return f"sm_{digits}a"
