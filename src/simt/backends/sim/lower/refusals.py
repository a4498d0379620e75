"""What the sim device does not run yet, family by family, with the reason its
NotSupportedError gives (every other device of the host has each of these: the 'cpu'
device runs them with the same results)."""
from ....lang import linking, wmma
from ....lang.intrinsics_fp import ENTRIES as FP_ENTRIES
from ....lang.mathlib import MATH_FUNCS
from ....lang.registry import declare_target, refuse

TARGET = declare_target("sim", llvm=False)


def _not_yet(what):
    return (f"{what} {'are' if what.endswith('s') else 'is'} not built on the sim device yet: "
            "run the kernel on the 'cpu' device, which has the same semantics")


def _without_lowering(entries):
    return [e for e in entries if e.lowering_for(TARGET) is None]


refuse(*_without_lowering(MATH_FUNCS + [e for e in FP_ENTRIES if e.op.startswith("fast.")]),
       target=TARGET, why=_not_yet("this math function (the sim device has Python's math "
                                   "module's functions and a few of CUDA's)"))
refuse(wmma.load_matrix_sync, wmma.store_matrix_sync, wmma.fill_fragment, wmma.mma_sync,
       wmma.num_elements, target=TARGET, why=_not_yet("warp matrix functions"))
refuse(linking.EXTERN, target=TARGET, why=linking.NO_FALLBACK)

