"""Who holds a GPU block: finds the live Python objects whose device data pointer lies in
one of the given address ranges (torch tensors and storages, CuPy arrays, numba/JAX arrays
with __cuda_array_interface__) and, for each, the shortest chain of references (at most
16 links) to a root: a module global, a local of a live frame, a class attribute, a
closure, an lru_cache. The search goes breadth-first from the objects up through
gc.get_referrers (one scan of the heap per level), stops at roots, then walks down from
the roots it met. Only type checks, identity and the interpreter's own descriptors are
used: no user __eq__, __hash__, property or __getattr__ runs. Nothing found is kept after
the walk: the answers are strings."""
import ctypes
import functools
import gc
import re
import sys
import time
import types

MAX_LINKS = 16
MAX_NODES = 200000
_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_NAME = type.__dict__["__name__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_LRU = getattr(functools, "_lru_cache_wrapper", None)
_CONTAINERS = (dict, list, tuple, set, frozenset, types.CellType)
NOT_FOUND = "not found within the limits (%d links, %d objects, %.1f s)"
ONLY_C = "held only by C (no Python object refers to it)"
NO_ROOT = "held only by objects no root reaches (a reference cycle the garbage collector will free)"


def _tname(t):
    return _TYPE_NAME.__get__(t)


def _own_dict(o):
    """o's instance __dict__ through the interpreter's own descriptor, or None (a class
    whose __dict__ is a property of its own is not read)."""
    t = type(o)
    for k in _TYPE_MRO.__get__(t):
        d = _TYPE_DICT.__get__(k).get("__dict__")
        if d is None:
            continue
        if type(d) is types.GetSetDescriptorType:
            got = d.__get__(o, t)
            return got if type(got) is dict else None
        return None
    return None


def _slot_names(o):
    """(name, value) of o's __slots__, read through their member descriptors."""
    out = []
    for k in _TYPE_MRO.__get__(type(o)):
        for name, d in _TYPE_DICT.__get__(k).items():
            if type(d) is types.MemberDescriptorType:
                try:
                    out.append((name, d.__get__(o, type(o))))
                except AttributeError:
                    pass
    return out


def _framework_types():
    """(type, pointer reader) of the frameworks imported: reading a framework's own
    accessors runs its code, never the user's (subclasses are read through the base's)."""
    out = []
    torch = sys.modules.get("torch")
    for name in ("Tensor", "UntypedStorage"):
        t = getattr(torch, name, None) if torch is not None else None
        if not isinstance(t, type):
            continue
        for k in _TYPE_MRO.__get__(t):  # torch.Tensor's data_ptr is its C base's (TensorBase)
            read = _TYPE_DICT.__get__(k).get("data_ptr")
            if read is not None:
                out.append((t, read))
                break
    cupy = sys.modules.get("cupy")
    t = getattr(cupy, "ndarray", None) if cupy is not None else None
    data = _TYPE_DICT.__get__(t).get("data") if isinstance(t, type) else None
    if data is not None and hasattr(type(data), "__get__"):
        out.append((t, lambda o: data.__get__(o, t).ptr))  # ndarray's own, a subclass's never
    for mod in ("numba.cuda.cudadrv.devicearray", "jax"):
        m = sys.modules.get(mod)
        t = getattr(m, "DeviceNDArray", None) or getattr(m, "Array", None) if m is not None else None
        if isinstance(t, type):
            out.append((t, lambda o: o.__cuda_array_interface__["data"][0]))
    return out


def _in(ranges, p):
    for lo, hi in ranges:
        if lo <= p < hi:
            return True
    return False


def _subclasses(kinds):
    """Each framework type with its subclasses (type.__subclasses__, the interpreter's)."""
    out, todo = {}, [(t, read) for t, read in kinds]
    while todo:
        t, read = todo.pop()
        if id(t) not in out:
            out[id(t)] = (t, read)
            todo.extend((s, read) for s in type.__subclasses__(t))
    return out


def _targets(ranges):
    """The objects whose data pointer lies in one of ranges (all of them: None), with
    their pointers; then the tensors out of ranges with a grad_fn, with pointer 0. An instance of a class refers to its class, so one scan of the heap
    for the referrers of the framework types finds them all; every object is looked at
    only where none is found that way (an extension type that does not say so)."""
    kinds = _framework_types()
    if not kinds:
        return [], [], {}
    types_ = _subclasses(kinds)
    classes = tuple(t for t, _ in types_.values())
    found, ptrs, graphs, instances = [], [], [], 0
    for scan in ("referrers", "all"):
        objs = gc.get_referrers(*classes) if scan == "referrers" else gc.get_objects()
        for o in objs:
            tr = types_.get(id(type(o)))
            if tr is None or tr[0] is not type(o):
                continue
            instances += 1
            try:
                p = int(tr[1](o))
            except Exception:
                continue
            if p and (ranges is None or _in(ranges, p)):
                found.append(o)
                ptrs.append(p)
            elif _framework_attr(o, "grad_fn") is not None:
                graphs.append(o)  # what its graph saved may be in ranges
        del objs
        if instances:
            break
    return found + graphs, ptrs + [0] * len(graphs), types_


def _where(code, line):
    return "%s at %s:%d" % (getattr(code, "co_qualname", code.co_name), _base(code.co_filename), line)


def _base(path):
    return path.rsplit("/", 1)[-1] if isinstance(path, str) else "?"


# Where CPython 3.11 and 3.12 keep a frame's locals dict: PyFrameObject's f_frame (after
# the object's head and f_back), then that _PyInterpreterFrame's f_locals.
_FRAME_AT = 24
_LOCALS_AT = ({(3, 11): 24, (3, 12): 40}.get(sys.version_info[:2])
              if sys.implementation.name == "cpython" and not hasattr(sys, "getobjects") else None)  # not a debug build
_CO_OPTIMIZED = 1


def _fresh_locals(f):
    """Whether reading f.f_locals makes its frame a dict it had not: before 3.13 a
    function's frame keeps that snapshot, and the objects in it, until the function
    returns, so one the walk made is emptied after it (a local the program drops later
    must not live on). False where that cannot be told: such a dict is left."""
    if _LOCALS_AT is None or not f.f_code.co_flags & _CO_OPTIMIZED:
        return False
    iframe = ctypes.c_void_p.from_address(id(f) + _FRAME_AT).value
    return bool(iframe) and ctypes.c_void_p.from_address(iframe + _LOCALS_AT).value is None


def _roots():
    """Root descriptions by object id: module dicts, the locals of live frames (their
    dicts and their values), the values of module globals (those no type check makes a
    root), with the objects to keep alive while the ids are used. A global's value is a
    root of its own so that the walk ends one scan of the heap earlier: each scan is most
    of a walk's time."""
    roots, keep, mods, made = {}, [], [], []
    for m in list(sys.modules.values()):
        if isinstance(m, types.ModuleType):
            d = _MODULE_DICT.__get__(m)
            if type(d) is dict:
                f = d.get("__file__")
                if f is None and m.__name__ == "__main__" and sys.argv and sys.argv[0]:
                    f = sys.argv[0]  # the interpreter drops the script's __file__ once it has run
                roots[id(d)] = ("module", _base(f) if isinstance(f, str) else _tname(type(m)) + " " + m.__name__)
                keep.append(d)
                mods.append(d)
    me = _roots.__code__.co_filename
    for top in sys._current_frames().values():
        f = top
        while f is not None:
            if f.f_code.co_filename != me:
                where = _where(f.f_code, f.f_lineno)
                if _fresh_locals(f):
                    made.append(f.f_locals)
                loc = f.f_locals
                keep.append(loc)
                if type(loc) is dict and id(loc) not in roots:
                    roots[id(loc)] = ("locals", where)
                    for k, v in loc.items():
                        roots.setdefault(id(v), ("local", "local `%s` of %s" % (k, where)))
                        keep.append(v)
            keep.append(f)
            f = f.f_back
    main = sys.modules.get("__main__")
    main_d = _MODULE_DICT.__get__(main) if isinstance(main, types.ModuleType) else None
    for d in sorted(mods, key=lambda d: d is not main_d):  # the script's globals first
        where = roots[id(d)][1]
        for k, v in d.items():
            if type(k) is str and id(v) not in roots and not _typed_root(type(v)):
                roots[id(v)] = ("global", "global `%s` of %s" % (k, where))
    return roots, keep, made


def _is_root(o, roots):
    r = roots.get(id(o))
    return r if r is not None else _root_kind(o)


def _typed_root(t):
    """Whether an object of type t is a root by its type (_root_kind says as what)."""
    return issubclass(t, type) or t is types.FunctionType or (_LRU is not None and t is _LRU) or t is types.ModuleType


def _root_kind(o):
    """What o is a root as by its type (a class, a function, an lru_cache, a module), or
    None. The type is read, never o's __class__ (a property of the program's)."""
    t = type(o)
    if issubclass(t, type):
        return ("class", _TYPE_QUALNAME.__get__(o))
    if t is types.FunctionType:
        return ("function", _where(o.__code__, o.__code__.co_firstlineno))
    if _LRU is not None and t is _LRU:
        d = _own_dict(o) or {}
        q = d.get("__qualname__")
        return ("lru", "lru_cache of `%s`" % (q if isinstance(q, str) else "?"))
    if t is types.ModuleType:
        return ("module", o.__name__)
    return None


def _label(o):
    t = type(o)
    if t is types.CellType:
        return None
    return _tname(t)


def _key_text(k):
    if type(k) in (str, int, float, bool, bytes) or k is None:
        return repr(k)
    return "a %s" % _tname(type(k))


def _grad_fn(o):
    n = _tname(type(o))
    return n.rstrip("0123456789").endswith("Backward") and not isinstance(o, type)


def _step(p, c, grand):
    """How p holds c: "key 'w'", "item 3", "attribute `w`"; grand is p's holder in the
    chain (for a dict of an instance or a class, a function's closure)."""
    tp = type(p)
    if tp is dict:
        for k, v in p.items():
            if v is c:
                return ("attribute `%s`" % k if isinstance(k, str) and grand is not None and
                        (_own_dict(grand) is p if not isinstance(grand, type) else False)
                        else "key %s" % _key_text(k))
            if k is c:
                return "a key"
        return "a value"
    if tp in (list, tuple):
        for i, v in enumerate(p):
            if v is c:
                return "item %d" % i
        return "an item"
    if tp in (set, frozenset):
        return "an item"
    if tp is types.CellType:
        if tp is types.CellType and type(grand) is tuple:
            return ""
        return "a closure cell"
    if tp is types.FunctionType:
        if c is p.__closure__ or c is p.__defaults__ or c is p.__kwdefaults__:
            return ""
        return "via function"
    if _grad_fn(p):
        return "saved for backward by %s" % _tname(tp)
    d = _own_dict(p)
    if d is not None:
        if d is c:
            return ""
        for k, v in d.items():
            if v is c:
                return "attribute `%s`" % k
    for k, v in _slot_names(p):
        if v is c:
            return "attribute `%s`" % k
    return "via %s" % _tname(tp)


def _chain_text(path, roots):
    """The words for a chain root first: its root, then how each object holds the next."""
    root = path[0]
    kind, what = _is_root(root, roots)
    steps = []
    start = 1
    if kind == "module" and len(path) > 1:
        k = _step(root, path[1], None).replace("key '", "global `").rstrip("'")
        head = "%s` of %s" % (k, what) if k.startswith("global") else "%s of %s" % (k, what)
        start = 2
    elif kind == "locals" and len(path) > 1:
        k = _step(root, path[1], None)
        head = "local `%s` of %s" % (k[5:-1] if k.startswith("key '") else k, what)
        start = 2
    elif kind == "class" and len(path) > 2 and type(path[1]) is dict:
        k = _step(path[1], path[2], None)
        head = "class attribute `%s.%s`" % (what, k[5:-1] if k.startswith("key '") else k)
        start = 3
    elif kind == "function" and len(path) > 3 and type(path[1]) is tuple and type(path[2]) is types.CellType:
        fn = root
        i = [j for j, cell in enumerate(path[1]) if cell is path[2]]
        name = fn.__code__.co_freevars[i[0]] if i and fn.__closure__ is path[1] else "?"
        head = "closure variable `%s` of %s" % (name, what)
        start = 3
    elif kind == "lru":
        head = what
        start = len(path)
        steps.append("a cached result")
    elif kind == "global":
        head = what + (" (%s)" % _label(root) if len(path) > 1 and _label(root) else "")
    else:
        head = what if kind != "class" else "class `%s`" % what
    if 1 < start < len(path) and _label(path[start - 1]):
        head += " (%s)" % _label(path[start - 1])
    for i in range(start, len(path)):
        s = _step(path[i - 1], path[i], path[i - 2] if i >= 2 else None)
        if s:
            lab = _label(path[i]) if i < len(path) - 1 else None
            steps.append(s + (" (%s)" % lab if lab and not s.startswith("saved") else ""))
    return ", ".join([head] + steps)


def _walk_up(targets, roots, mine, limits):
    """Breadth-first from the targets up through their referrers, stopping at roots.
    Returns the objects met, for each the indices of those that hold it, the root
    indices, and whether a limit cut the walk short."""
    nodes = list(targets)
    seen = {id(o): i for i, o in enumerate(nodes)}
    held_by = [[] for _ in nodes]
    root_at = [i for i, o in enumerate(nodes) if _is_root(o, roots)]
    level = [o for o in nodes if not _is_root(o, roots)]
    mine.update((id(nodes), id(held_by), id(seen), id(root_at)))
    me = _walk_up.__code__.co_filename
    cut = False
    for depth in range(limits[0]):
        if not level:
            break
        if len(nodes) > limits[1] or time.monotonic() > limits[2]:
            cut = True
            break
        args = tuple(level)
        mine.update((id(level), id(args)))
        at = {id(o): seen[id(o)] for o in level}
        refs = gc.get_referrers(*args)
        mine.add(id(refs))
        nxt = []
        mine.add(id(nxt))
        for r in refs:
            ir = id(r)
            if ir in mine or (type(r) is types.FrameType and r.f_code.co_filename == me):
                continue
            idx = seen.get(ir)
            new = idx is None
            if new:
                idx = seen[ir] = len(nodes)
                nodes.append(r)
                held_by.append([])
            for c in gc.get_referents(r):
                ci = at.get(id(c))
                if ci is not None and idx not in held_by[ci]:
                    held_by[ci].append(idx)
            if new:
                rk = _is_root(r, roots)
                if rk and (rk[0] != "global" or depth < limits[0] - 1):  # a global: its dict one link more
                    root_at.append(idx)
                else:
                    nxt.append(r)
        del refs, args
        level = nxt
    else:
        cut = bool(level)
    return nodes, held_by, root_at, cut


def _paths(nodes, held_by, root_at, ntargets):
    """For each target index, the shortest path from a root down to it (indices), or None."""
    holds = [[] for _ in nodes]
    for c, ps in enumerate(held_by):
        for p in ps:
            holds[p].append(c)
    dist = {r: 0 for r in root_at}
    queue = list(root_at)
    for p in queue:
        for c in holds[p]:
            if c not in dist:
                dist[c] = dist[p] + 1
                queue.append(c)
    out = []
    for t in range(ntargets):
        if t not in dist:
            out.append(None)
            continue
        path = [t]
        while dist[path[-1]] > 0:
            cur = path[-1]
            path.append(next(p for p in held_by[cur] if dist.get(p) == dist[cur] - 1))
        out.append(path[::-1])
    return out


def _framework_attr(o, name):
    """o.name as the framework's class defines it (a descriptor of the base class: the
    framework's code), else o's own attribute; None when neither."""
    t = type(o)
    for k in _TYPE_MRO.__get__(t):
        d = _TYPE_DICT.__get__(k).get(name)
        if d is None:
            continue
        if hasattr(type(d), "__get__") and k.__module__.split(".")[0] in ("torch", "torch._C"):
            try:
                return d.__get__(o, t)
            except Exception:
                return None
        break
    own = _own_dict(o)
    return own.get(name) if own is not None else None


def _unheld(words):
    return words in (ONLY_C, NO_ROOT) or words.startswith("not found")


def _saved_in_graphs(targets, answers, types_, ranges, deadline, max_nodes=10000):
    """The tensors autograd saved for backward: the grad_fn of a tensor found, and the
    nodes its next_functions lead to, keep what their _saved_* attributes give back (a
    new tensor object over the same memory each time, none held by Python): each is said
    to be held by the first tensor whose graph saved it. {pointer: words}"""
    out, said = {}, {p for p, words in answers if not _unheld(words)}
    for t, (_, words) in zip(targets, answers):
        if _unheld(words):
            continue
        node = _framework_attr(t, "grad_fn")
        queue, seen = [(node, 0)] if node is not None else [], set()
        for node, depth in queue:
            if len(seen) >= max_nodes or time.monotonic() > deadline:
                break
            if id(node) in seen:
                continue
            seen.add(id(node))
            name = _tname(type(node))
            for attr in (a for a in dir(node) if a.startswith("_saved_")):
                try:
                    v = getattr(node, attr)
                except Exception:
                    continue
                read = types_.get(id(type(v)))
                if read is None or read[0] is not type(v):
                    continue
                try:
                    p = int(read[1](v))
                except Exception:
                    continue
                if p and p not in said and (ranges is None or _in(ranges, p)):
                    said.add(p)
                    out[p] = "%s, %s %s saved `%s` for backward" % (
                        words, "its grad_fn" if depth == 0 else "a node of its grad_fn's graph,", name, attr[7:])
            for nxt in getattr(node, "next_functions", ()) or ():
                if type(nxt) is tuple and nxt and nxt[0] is not None:
                    queue.append((nxt[0], depth + 1))
    return out


def grouped(words):
    """words without the items of lists and tuples ("item 12" -> "an item"), so that the
    blocks a list holds read as one answer."""
    return re.sub(r"\bitem \d+", "an item", words)


def find_holders(ranges=None, max_links=MAX_LINKS, max_nodes=MAX_NODES, max_seconds=1.0):
    """[(data pointer, words)] for each object whose data pointer lies in one of ranges
    ((start, end) pairs; None: every device array of a framework imported)."""
    deadline = time.monotonic() + max_seconds
    enabled = gc.isenabled()
    keep, made = None, []
    gc.disable()  # no collection moves the objects under the walk
    try:
        targets, ptrs, types_ = _targets(ranges)
        if not targets:
            return []
        roots, keep, made = _roots()
        mine = {id(targets), id(keep), id(ptrs), id(made)}
        nodes, held_by, root_at, cut = _walk_up(targets, roots, mine, (max_links, max_nodes, deadline))
        out = []
        for t, path in enumerate(_paths(nodes, held_by, root_at, len(targets))):
            if path is not None:
                words = _chain_text([nodes[i] for i in path], roots)
            elif cut:
                words = NOT_FOUND % (max_links, max_nodes, max_seconds)
            elif not held_by[t]:
                words = ONLY_C
            else:
                words = NO_ROOT
            out.append((ptrs[t], words))
        saved = _saved_in_graphs(targets, out, types_, ranges, deadline)
        out = [(p, saved.pop(p, words) if _unheld(words) else words) for p, words in out if p]
        return out + sorted(saved.items())
    finally:
        for d in made:  # the snapshots the walk made (_fresh_locals): nothing of the program's in them
            d.clear()
        if keep is not None:
            keep.clear()  # it holds this very frame: a cycle
        targets = roots = keep = nodes = held_by = None
        if enabled:
            gc.enable()
