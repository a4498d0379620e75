"""The driver calls of peer access, IPC, unified memory hints and virtual memory, made
against a stand-in of cuda.bindings.driver that records them: each call's name and
arguments as cuda-bindings 13 takes them, with no GPU. (The GPU tests run the real ones.)"""
import types

import pytest

from simt.backends.cuda import driver as cuda_driver
from simt.backends.cuda import ipc, managed, peer, vmm


class Struct:
    """A cuda-bindings struct: attributes set freely, nested ones made on first use."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = self.__dict__[name] = Struct()
        return value


class Enum:
    """An enum class: every CU_* member is its own name."""

    def __getattr__(self, name):
        if not name.startswith("CU_"):
            raise AttributeError(name)
        return name


class FakeDriver:
    def __init__(self, v2=False):
        self.calls = []
        for enum in ("CUmemLocationType", "CUmem_advise", "CUmemAllocationType",
                     "CUmemAllocationGranularity_flags", "CUmemAccess_flags", "CUipcMem_flags",
                     "CUevent_flags"):
            setattr(self, enum, Enum())
        self.CUipcMem_flags = types.SimpleNamespace(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS=1)
        self.CUevent_flags = types.SimpleNamespace(CU_EVENT_DISABLE_TIMING=2,
                                                   CU_EVENT_INTERPROCESS=4)
        for name in ("CUmemLocation", "CUmemAllocationProp", "CUmemAccessDesc",
                     "CUipcMemHandle", "CUipcEventHandle"):
            setattr(self, name, Struct)
        if v2:          # cuda-bindings 12: the location forms are the _v2 entries
            self.cuMemPrefetchAsync_v2 = self._recorder("cuMemPrefetchAsync_v2")
            self.cuMemAdvise_v2 = self._recorder("cuMemAdvise_v2")

    RESULTS = {"cuDeviceCanAccessPeer": (1,), "cuMemGetAddressRange": (0x1000, 4096),
               "cuIpcGetMemHandle": (Struct(reserved=bytes(range(64))),),
               "cuIpcOpenMemHandle": (0x7000,), "cuEventCreate": ("event",),
               "cuIpcGetEventHandle": (Struct(reserved=[-1] * 64),),
               "cuIpcOpenEventHandle": ("opened",),
               "cuMemGetAllocationGranularity": (2 << 20,), "cuMemAddressReserve": (0x10000000,),
               "cuMemCreate": ("physical",)}

    def _recorder(self, name):
        def fn(*args):
            self.calls.append((name, args))
            return (0, *self.RESULTS.get(name, ()))
        fn.__name__ = name
        return fn

    def __getattr__(self, name):
        if not name.startswith("cu") or name.endswith("_v2"):    # the 13 form only
            raise AttributeError(name)
        return self._recorder(name)

    def names(self):
        return [name for name, _ in self.calls]


class FakeBackend:
    def __init__(self, index):
        self.index, self.device, self.context = index, f"dev{index}", f"ctx{index}"

    def make_current(self, force=False):
        pass

    set_current = make_current


@pytest.fixture
def fake(monkeypatch):
    driver = FakeDriver()
    monkeypatch.setattr(cuda_driver, "_api", driver)
    for module in (ipc, managed, peer, vmm):
        monkeypatch.setattr(module, "api", lambda: driver)
    return driver


def test_peer_calls(fake):
    a, b = FakeBackend(0), FakeBackend(1)
    assert peer.can_access_peer(a, b) is True
    peer.enable_peer_access(a, b)
    peer.copy_peer(a, 0x200, b, 0x100, 64)
    peer.copy_peer(a, 0x200, b, 0x100, 64, stream="s")
    assert fake.calls == [("cuDeviceCanAccessPeer", ("dev0", "dev1")),
                          ("cuCtxEnablePeerAccess", ("ctx1", 0)),
                          ("cuMemcpyPeer", (0x200, "ctx1", 0x100, "ctx0", 64)),
                          ("cuMemcpyPeerAsync", (0x200, "ctx1", 0x100, "ctx0", 64, "s"))]


def test_ipc_calls(fake):
    backend = FakeBackend(0)
    data, offset = ipc.mem_handle(backend, 0x1100)
    assert data == bytes(range(64)) and offset == 0x100
    alloc = ipc.open_mem_handle(backend, data, 4096)
    name, (handle, flags) = fake.calls[-1]
    assert name == "cuIpcOpenMemHandle" and handle.reserved == data and flags == 1
    assert alloc.ptr == 0x7000
    alloc.backend = None              # the Allocation frees nothing: its keepalive closes
    del alloc
    assert fake.calls[-1] == ("cuIpcCloseMemHandle", (0x7000,))
    event = ipc.create_event(backend)
    assert fake.calls[-1] == ("cuEventCreate", (6,))
    assert event.ipc_handle() == b"\xff" * 64            # a list of signed chars read back
    opened = ipc.open_event(backend, b"\x01" * 64)
    assert opened.handle == "opened" and fake.calls[-1][1][0].reserved == b"\x01" * 64


@pytest.mark.parametrize("v2", [False, True])
def test_prefetch_and_advise_take_a_location(monkeypatch, v2):
    driver = FakeDriver(v2=v2)
    monkeypatch.setattr(managed, "api", lambda: driver)
    gpu = FakeBackend(3)
    managed.prefetch(gpu, 0x100, 64, gpu, "s")
    managed.prefetch(gpu, 0x100, 64, None)
    managed.advise(gpu, 0x100, 64, "accessed_by", gpu, unset=True)
    suffix = "_v2" if v2 else ""
    (p1, a1), (p2, a2), (p3, a3) = driver.calls
    assert (p1, p2, p3) == (f"cuMemPrefetchAsync{suffix}",) * 2 + (f"cuMemAdvise{suffix}",)
    assert a1[:2] == (0x100, 64) and a1[3:] == (0, "s")
    assert (a1[2].type, a1[2].id) == ("CU_MEM_LOCATION_TYPE_DEVICE", 3)
    assert (a2[2].type, a2[4]) == ("CU_MEM_LOCATION_TYPE_HOST", 0)
    assert a3[2] == "CU_MEM_ADVISE_UNSET_ACCESSED_BY" and a3[3].id == 3


def test_virtual_range_calls(fake):
    backend = FakeBackend(0)
    vr = vmm.VirtualRange(backend, 5 << 20)
    assert vr.granularity == 2 << 20 and vr.reserved == 6 << 20 and vr.base == 0x10000000
    prop = fake.calls[0][1][0]
    assert (prop.type, prop.location.type, prop.location.id) == \
        ("CU_MEM_ALLOCATION_TYPE_PINNED", "CU_MEM_LOCATION_TYPE_DEVICE", 0)
    assert fake.calls[1] == ("cuMemAddressReserve", (6 << 20, 0, 0, 0))
    vr.grow(1)
    vr.grow(3 << 20)
    assert vr.mapped == 6 << 20
    maps = [args for name, args in fake.calls if name == "cuMemMap"]
    assert maps == [(0x10000000, 2 << 20, 0, "physical", 0),
                    (0x10000000 + (2 << 20), 4 << 20, 0, "physical", 0)]
    access = [args for name, args in fake.calls if name == "cuMemSetAccess"][0]
    assert access[2][0].flags == "CU_MEM_ACCESS_FLAGS_PROT_READWRITE" and access[3] == 1
    with pytest.raises(Exception, match="reserve more"):
        vr.grow(1)
    vr.release()
    assert fake.names()[-6:] == ["cuCtxSynchronize", "cuMemUnmap", "cuMemRelease",
                                 "cuMemUnmap", "cuMemRelease", "cuMemAddressFree"]
    assert vr.mapped == 0
