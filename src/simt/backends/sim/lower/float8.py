"""FP8 conversions (lang/float8.py) on the sim device: values are their codes (Python ints),
converted by lang/float8.py's exact software conversion, as the host's."""
from ....lang import float8
from . import rule

for _name in float8.FORMATS:
    rule(float8.NARROW[_name])(
        lambda g, e, a, name=_name: f"_k_v.fp8_encode({a[0]}, {name!r}, {e.attrs['saturate']})")
    rule(float8.WIDEN[_name])(lambda g, e, a, name=_name: f"_k_v.fp8_decode({a[0]}, {name!r})")
