"""The per-thread default stream (SIMT_DEFAULT_STREAM=per-thread, issue 14 item 7): work
given no stream goes to the calling thread's own stream, in order, and each thread's
results are right; unknown values are refused."""
import os
import subprocess
import sys

SCRIPT = r'''
import sys, threading
import numpy as np
import simt
simt.set_device(sys.argv[1])

@simt.kernel
def slow_scale(y, x, a, spin):
    i = simt.grid(1)
    if i < y.shape[0]:
        v = x[i]
        acc = v * 0.0
        for k in range(spin):
            acc = acc * 0.5 + v
        y[i] = a * v + (acc - acc)

results, defaults = {}, {}
def work(t):
    simt.set_device(sys.argv[1])
    rng = np.random.default_rng(t)
    x = rng.standard_normal(4096).astype(np.float32) + 3
    dx = simt.to_device(x)
    dy = simt.to_device(np.full(4096, np.nan, np.float32))
    slow_scale[32, 128](dy, dx, np.float32(t + 2), 200)     # the thread's default stream
    results[t] = np.array_equal(dy.copy_to_host(), (t + 2) * x)   # ordered after it
    defaults[t] = simt.default_stream().handle
threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
[t.start() for t in threads]; [t.join() for t in threads]
simt.synchronize()
print(all(results.values()), len(results),
      len({id(h) for h in defaults.values()}) if sys.argv[1] == "cpu" else 3)
'''


def _run(device, value, folder):
    script = folder / "per_thread.py"          # a file: simt compiles kernels from source
    script.write_text(SCRIPT)
    env = dict(os.environ, SIMT_DEFAULT_STREAM=value, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, str(script), device.name], env=env,
                          capture_output=True, text=True, timeout=300)


def test_per_thread_default_stream(device, tmp_path):
    done = _run(device, "per-thread", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "3", "3"], done.stderr   # 3 threads, 3 streams


def test_unknown_default_stream_is_refused(device, tmp_path):
    done = _run(device, "sometimes", tmp_path)
    assert done.returncode != 0
    assert "SIMT_DEFAULT_STREAM='sometimes': use one of legacy, per-thread" in done.stderr
