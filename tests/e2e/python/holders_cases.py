# Who holds each tensor, case by case, on the stand-in torch: each case keeps a tensor in
# one kind of root, asks python/culeak_holders.py for the holders of that tensor's block and
# prints "CASE: words". tests/e2e/holders_walk.sh checks the words; a case's own line is
# named where the words give a line.
import ctypes
import functools
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "site-packages"))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "python"))
import culeak_holders  # noqa: E402
import torch  # noqa: E402

ctypes.CDLL("libcudart.so.13").cudaFree(None)
ctypes.CDLL(os.environ["FAKE_C10"]).fake_c10_init(1)


def holders(p):
    got = culeak_holders.find_holders([(p, p + 1)])
    assert len(got) == 1 and got[0][0] == p, got
    return got[0][1]


def say(case, words):
    print("%s: %s" % (case, words))


grads = []


def list_global():
    for _ in range(3):
        grads.append(torch.empty(4096))
    say("list_global", holders(grads[1].data_ptr()))


class Cache:
    store = {}


def class_dict():
    Cache.store["w"] = torch.empty(4096)
    say("class_dict", holders(Cache.store["w"].data_ptr()))


def make_closure():
    kept = torch.empty(4096)

    def step():
        return kept

    return step


stepper = make_closure()


def closure():
    say("closure", holders(stepper().data_ptr()))


@functools.lru_cache(maxsize=8)
def weights(n):
    return torch.empty(n)


def lru():
    say("lru_cache", holders(weights(4096).data_ptr()))


def running_frame():
    local_batch = [torch.empty(4096)]
    say("frame_local", holders(local_batch[0].data_ptr()))  # LINE-FRAME


losses = []


def saved_for_backward():
    x = torch.empty(4096)
    losses.append(torch.mul(x, torch.empty(4096)))
    p = x.data_ptr()
    del x
    got = culeak_holders.find_holders([(p, p + 1)])
    say("saved", got[0][1])
    x = torch.empty(4096)
    losses.append(torch.mul(torch.mul(torch.empty(4096), x), torch.empty(4096)))
    p = x.data_ptr()
    del x
    got = culeak_holders.find_holders([(p, p + 1)])
    say("saved_deep", got[0][1])


class Node:
    pass


ring = None


def make_ring():
    global ring
    a, b = Node(), Node()
    a.next, b.next, b.t = b, a, torch.empty(4096)
    ring = a
    return b.t.data_ptr()


def cycle():
    global ring
    import gc
    gc.disable()  # the cycle stays until the walk has seen it
    p = make_ring()
    say("cycle_rooted", holders(p))
    ring = None
    got = culeak_holders.find_holders([(p, p + 1)])
    say("cycle_unrooted", got[0][1] if got else "gone")
    gc.enable()


c_held = ctypes.py_object()


def only_c():
    t = torch.empty(4096)
    p = t.data_ptr()
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(t))  # a reference no Python object holds
    del t
    got = culeak_holders.find_holders([(p, p + 1)])
    say("only_c", got[0][1] if got else "gone")


class Hostile:
    """Any user code run by the walk shows: __eq__ and __hash__ raise, the property too."""

    def __init__(self):
        self.t = torch.empty(4096)

    def __eq__(self, other):
        raise AssertionError("__eq__ ran")

    def __hash__(self):
        raise AssertionError("__hash__ ran")

    @property
    def __dict__(self):
        raise AssertionError("the __dict__ property ran")

    def __getattr__(self, name):
        raise AssertionError("__getattr__ ran")


hostile = {"h": Hostile()}


def user_code():
    h = hostile["h"]
    p = object.__getattribute__(h, "t").data_ptr()
    del h
    got = culeak_holders.find_holders([(p, p + 1)])
    say("hostile", got[0][1])


def nested(n):
    inner = [torch.empty(4096)]
    for _ in range(n - 1):
        inner = [inner]
    return inner


deep_ok = nested(15)  # 16 links from the module's dict: 15 lists and the tensor
deep_cut = nested(16)


def innermost(t):
    while type(t) is list:
        t = t[0]
    return t.data_ptr()


def deep():
    say("deep_ok", holders(innermost(deep_ok)))
    say("deep_cut", holders(innermost(deep_cut)))


def nothing_kept():
    """The walk keeps no reference: a local the function drops after a walk is freed at
    once (a frame's locals snapshot, made by the walk, does not keep it), and a locals()
    dict of the program's own is left as it was."""
    t = torch.empty(4096)
    before = sys.getrefcount(t)
    holders(t.data_ptr())
    say("refs_after_walk", sys.getrefcount(t) - before)
    mine = locals()
    holders(t.data_ptr())
    say("own_locals_left", sorted(k for k in mine if k != "mine"))


for case in (nothing_kept, deep, list_global, class_dict, closure, lru, running_frame, saved_for_backward, cycle, only_c,
             user_code):
    case()
