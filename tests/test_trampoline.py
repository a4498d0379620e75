"""The GPU launch trampoline's machine code (backends/cuda/trampoline.py), checked without a
GPU: made with LLVM for the baseline CPU, kept in the disk cache, mapped from there by a
process without LLVM, and called as a builtin function bound to a descriptor, it calls
the function in the descriptor with every argument (without the GIL: the stand-in, a
ctypes callback, takes it back) and returns its result as an int."""
import ctypes

from simt.backends.cuda import launch, trampoline

SEEN = []
CU_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


@CU_LAUNCH
def _fake_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
    SEEN.append((f, gx, gy, gz, bx, by, bz, shared, stream, params, extra))
    return 7


def _call(address):
    data = launch.descriptor(0x1234, ctypes.cast(_fake_launch, ctypes.c_void_p).value,
                             (2, 3, 4), (32, 8, 1), 4096, 0x5678, 0x9ABC)
    SEEN.clear()
    go = launch.builtin(address, data)
    result = go()
    return result, SEEN[0]


def test_made_then_loaded_from_the_cache_it_passes_every_argument():
    ir = launch._trampoline_ir()
    made = trampoline.make(ir, "simt_cuda_launch")
    assert made is not None
    expected = (0x1234, 2, 3, 4, 32, 8, 1, 4096, 0x5678, 0x9ABC, None)
    assert _call(made) == (7, expected)
    cached = trampoline.load_cached(ir)
    assert cached is not None and cached != made
    assert _call(cached) == (7, expected)


def test_a_damaged_cache_file_is_not_run(tmp_path, monkeypatch):
    from simt.config import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    ir = launch._trampoline_ir()
    assert trampoline.make(ir, "simt_cuda_launch") is not None
    path = trampoline._path(ir)
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 0xFF
    open(path, "wb").write(bytes(data))
    assert trampoline.load_cached(ir) is None


def test_only_relocation_free_functions_are_taken():
    from simt.backends import hostjit as jit
    ir = "\n".join(["@g = global i32 5", "define i32 @reads_global() {",
                    "  %v = load i32, ptr @g", "  ret i32 %v", "}", ""])
    assert trampoline.function_bytes(jit.baseline_object(ir), "reads_global") is None
    assert trampoline.function_bytes(b"not an object", "f") is None


def test_many_calls_keep_their_descriptor_and_the_gil():
    import threading
    address = trampoline.make(launch._trampoline_ir(), "simt_cuda_launch")
    data = launch.descriptor(0x1234, ctypes.cast(_fake_launch, ctypes.c_void_p).value,
                             (1, 1, 1), (1, 1, 1), 0, None, None)
    go = launch.builtin(address, data)
    SEEN.clear()
    ran = []
    other = threading.Thread(target=lambda: ran.append(sum(range(100000))))
    other.start()
    assert [go() for _ in range(1000)] == [7] * 1000
    other.join()
    assert len(SEEN) == 1000 and ran and SEEN[-1][0] == 0x1234


def test_when_made_tells_its_hooks_once_the_code_is_there(tmp_path, monkeypatch):
    """A launch function bound while the native code was being made is bound again when it
    is there: hooks wait until then, run once, and a hook given later runs at once; where
    the code cannot be had, no hook runs."""
    from simt.config import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))       # not in the cache: made
    code = trampoline.NativeCode("simt_cuda_launch", launch._trampoline_ir)
    told = []
    code.when_made(lambda: told.append("first"))
    assert told == [] and code.waiting
    assert code.address() is not None
    assert told == ["first"] and code.waiting == []
    code.when_made(lambda: told.append("second"))
    code.address()
    assert told == ["first", "second"]

    def unusable():
        raise OSError("no native route here")
    never = trampoline.NativeCode("simt_cuda_launch", unusable)
    never.when_made(lambda: told.append("never"))
    assert never.address() is None
    never.when_made(lambda: told.append("never"))
    assert told == ["first", "second"]


def test_a_native_call_made_before_the_trampoline_takes_it_once_made(tmp_path, monkeypatch):
    """Launcher.native_call while the trampoline is being made: the launch goes through the
    bindings; once the code is there, the same call goes through the trampoline."""
    from simt.config import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    pending = trampoline.NativeCode("simt_cuda_launch", launch._trampoline_ir)
    monkeypatch.setattr(launch, "TRAMPOLINE", pending)
    monkeypatch.setattr(launch, "native_trampoline", lambda wait=True: None)
    monkeypatch.setattr(launch, "_cu_launch_address",
                        lambda: ctypes.cast(_fake_launch, ctypes.c_void_p).value)
    bound = []
    launcher = launch.Launcher.__new__(launch.Launcher)      # no driver here
    launcher._handle, launcher.params = 0x1234, None
    launcher._launch = lambda *args: (bound.append(args) or 0,)
    go = launcher.native_call((2, 1, 1), (32, 1, 1), 0, None)
    SEEN.clear()
    assert go() == 0 and len(bound) == 1 and SEEN == []
    assert pending.address() is not None                    # made: the hook binds the builtin
    assert go() == 7 and len(bound) == 1
    assert SEEN[0][:8] == (0x1234, 2, 1, 1, 32, 1, 1, 0)
