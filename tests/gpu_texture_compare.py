"""Compare a GPU texture probe (tests/gpu_texture_probe.py) with texture_model.py:
    python tests/gpu_texture_compare.py bench/results/texture-probe-h200-2026-11-21.npz
(a --snorm probe's random configurations, SNORM_CONFIGS, are compared the same way)"""
import sys, numpy as np
sys.path.insert(0, __import__("os").path.dirname(__file__))
import texture_model as m
from gpu_texture_probe import CONFIGS, SNORM_CONFIGS
d = np.load(sys.argv[1])
for name, dtype, shape, filt, address, normalized, read, gather in CONFIGS + SNORM_CONFIGS:
    if name + ":out" not in d.files:
        continue
    T = d[name + ":texels"]; x, y, z = d[name+":x"], d[name+":y"], d[name+":z"]; out = d[name+":out"]
    nd = len(shape); coords = [x, y, z][:nd]
    rm = "normalized_float" if read == "normalized" else "element"
    if gather:
        want = m.gather(T[..., None], (address,)*2, normalized, rm, x, y, 0)
    else:
        want = m.sample(T[..., None], nd, False, filt, (address,)*nd, normalized, rm, coords)[:, 0]
    bad = ~((want == out) | (np.isnan(want) & np.isnan(out)))
    if gather: bad = bad.any(axis=1)
    print(f"{name:28s} mismatches {bad.sum():6d}/{len(bad)}")
    if bad.any():
        idx = np.nonzero(bad)[0][:4]
        for i in idx:
            print("    ", [c[i] for c in coords], "gpu", out[i], "model", want[i])
