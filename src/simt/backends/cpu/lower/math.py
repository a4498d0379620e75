"""The CPU's own lowerings of the math intrinsics: rounding-mode arithmetic and conversions,
exact as the GPU's instructions are (rounding.py)."""
from ....compiler.mathlower import register_rounding
from ....lang.registry import declare_target
from .. import rounding

TARGET = declare_target("cpu")

register_rounding(rounding.rounded, rounding.convert, TARGET)
