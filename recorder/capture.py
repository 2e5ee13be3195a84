"""dynrec's capture of a compiled frame's inputs, for `dynrec replay`.

The module _dynrec.capture, run after dynamo.py.  At each compile (dynamo.py's
_compile hook, before Dynamo starts tracing) capture_frame() stores what the
frame starts with -- its locals, closure cells and the module globals its
code can reach -- as a typed value tree: rows of the value_nodes table
(schema/SCHEMA.md), one per object, with its kind, its type's name, a JSON
value naming its children by node number, and a blob for tensor data and
marshalled code.  Shared objects are one node; cycles refer back to an
earlier node.  Nothing is pickled and no repr() is stored as data: an object
of a type not listed here becomes an "opaque" node with its type name, and
the frame is marked not replayable with that reason.

The capture event (kind "capture", num = the capture number) holds, in its
data, whether the frame is replayable, how the backend was given, fullgraph,
and the Dynamo config names that differ from the config at start.
"""

import collections
import dataclasses
import enum
import functools
import gc
import inspect
import itertools
import json
import logging
import marshal
import os
import re
import sys
import threading
import types
import weakref

import torch

import _dynrec

from . import dynamo as _dynamo
from .dynamo import Guarded, _hooks, _qualname, code_digest, emit, store_source
from .value_kinds import (AUTOGRAD_CTX_ATTRS, CLASS_ATTRS_NEVER_SET, DICT_ITERATOR_TYPES,
                          DYNAMO_MARKS, EXCLUDABLE_KEYS, FX_GRAPH_ATTRS, ITERATOR_TYPES, ITERATORS,
                          MAX_DEPTH, PATH_CLASSES, body_function, is_structseq, code_place,
                          contiguous_strides, torch_op)

_functorch = torch._C._functorch
_cap_guard = Guarded("capture")
_hooks["capture"] = "active"  # meta hook.capture
_capture_bytes = int(getattr(_dynrec, "capture_values", 4096))


def begin_session():
    """A later session of an in-process recording: its own value budget."""
    global _capture_bytes
    _capture_bytes = int(getattr(_dynrec, "capture_values", 4096))
_capture_count = [0]
_MAX_NODES = 50000   # per frame; more and the frame is not replayable
_MAX_ITEMS = 20000   # per container
_MAX_DEPTH = MAX_DEPTH  # what replay and repro accept (value_kinds.py)
_module_names = {}   # id(globals) -> (len(globals), direct names of each code)
# The marks torch._dynamo's mark_dynamic, maybe_mark_dynamic, mark_static,
# mark_unbacked and mark_static_address set on a tensor (decorators.py):
# sets of dims, flags, and mark_static_address's kind.
_DIM_MARKS = ("_dynamo_dynamic_indices", "_dynamo_static_indices",
              "_dynamo_weak_dynamic_indices", "_dynamo_unbacked_indices",
              "_dynamo_strict_unbacked_indices",
              # AOTAutograd stamps a graph's outputs with their symbolic dims
              # (torch 2.13): Dynamo treats them as dynamic after a graph break.
              "_dynamo_propagated_dynamic_indices")
_FLAG_MARKS = ("_has_dynamo_dim_marking", "_dynamo_marked_static")


class _TooBig(Exception):
    pass


def _type_name(t):
    mod = getattr(t, "__module__", None) or "?"
    return "%s.%s" % (mod, getattr(t, "__qualname__", getattr(t, "__name__", "?")))


def module_attr(module, name, default=None):
    """What module holds under name, read from its __dict__ and from the
    dicts of a class's MRO: no module __getattr__ (PEP 562) and no
    descriptor runs.  A lazy module's __getattr__ imports or builds what
    is asked for (torch.utils.mkldnn compiles TorchScript classes and warns,
    transformers' _LazyModule imports a model), which the program never
    asked for: the recorder reads modules and classes only through here."""
    if isinstance(module, type):
        for k in module.__mro__:
            d = k.__dict__
            if name in d:
                return d[name]
        return default
    d = getattr(module, "__dict__", None) if isinstance(module, types.ModuleType) else None
    return d.get(name, default) if isinstance(d, dict) else default


def _named(module, qualname):
    """What module.qualname names (looked up without importing anything,
    never through a module __getattr__), or None."""
    m = sys.modules.get(module) if isinstance(module, str) else None
    if m is None or not isinstance(qualname, str) or "<" in qualname:
        return None
    cur = m
    for part in qualname.split("."):
        cur = module_attr(cur, part)
        if cur is None:
            return None
    return cur


def _resolves(module, qualname, obj):
    """module.qualname names obj."""
    return obj is not None and _named(module, qualname) is obj


def _wrapped_ref(fn):
    """A library's function that its module reaches only behind
    functools.wraps wrappers (a dataclass's __init__ that transformers'
    ModelOutput metaclass wraps): module + qualname of the outermost, and
    how many __wrapped__ (each a function's own attribute) lead to fn; None
    when they do not."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    cur = None if _user_module(module) else _named(module, qualname)
    for k in range(1, 9):
        cur = vars(cur).get("__wrapped__") if type(cur) is types.FunctionType else None
        if cur is None:
            return None
        if cur is fn:
            return {"module": module, "qualname": qualname, "wrapped": k}
    return None


class _Capture:
    def __init__(self, limit):
        self.rows = []   # (node, kind, type, value, data)
        self.memo = {}   # id(obj) -> node
        self.keep = []   # the objects, alive until the capture is written
        self.opaque = []  # (path, type name) of hard opaque values
        self.limit = limit
        self.data_bytes = 0
        self.depth = 0
        self.soft = False  # capturing a value the frame does not read directly
        self.global_of = {}  # id(value) -> (module, name): the frame's globals
        self.classes_seen = set()  # classes whose attributes (methods' defaults) are captured
        self.names_of = {}  # module name -> {id(value): name}, once per capture
        self.gen_calls = {}  # id(generator) -> (func, args, kwds) that made it, unstarted
        self.cells_of = {}  # id(a class_cells dict) -> {key: the cell's own node}

    def module_names(self, mod):
        """{id(value): the first identifier module mod binds it to}, made
        once per capture (the scans for singletons and classes bound under
        another name); empty for a module not imported or too big."""
        found = self.names_of.get(mod)
        if found is None:
            found = {}
            ns = getattr(sys.modules.get(mod), "__dict__", None) if isinstance(mod, str) else None
            if isinstance(ns, dict) and len(ns) <= 20000:
                for k, v in list(ns.items()):
                    if isinstance(k, str) and k.isidentifier():
                        found.setdefault(id(v), k)
            self.names_of[mod] = found
        return found

    def node(self, obj, path):
        n = self.memo.get(id(obj))
        if n is not None:
            return n
        if len(self.rows) >= _MAX_NODES:
            raise _TooBig("more than %d values" % _MAX_NODES)
        n = len(self.rows)
        self.memo[id(obj)] = n
        self.keep.append(obj)
        self.rows.append(None)
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH:
                kind, value, data = "opaque", {"why": "nested deeper than %d" % _MAX_DEPTH}, None
            else:
                kind, value, data = self.describe(obj, path)
        except (_TooBig, RecursionError):
            raise
        except Exception as exc:
            # A value that fails to be read (a tensor inside a torch.func
            # transform has no storage): opaque, with why, never the end
            # of capture for the rest of the run.
            try:
                msg = str(exc).splitlines()[0] if str(exc) else ""
            except Exception:
                msg = ""
            kind, value, data = "opaque", {"why": ("%s: %s" % (
                type(exc).__name__, msg))[:200], "failed": True}, None
        finally:
            self.depth -= 1
        if kind == "opaque" and not self.soft:
            tname = _type_name(type(obj))
            if isinstance(value, dict) and value.get("failed"):
                tname += " (%s)" % value["why"]
            self.opaque.append((path, tname))
        self.rows[n] = (n, kind, _type_name(type(obj)), json.dumps(value), data)
        return n

    def named(self, mapping, label):
        """A dict node of str keys whose values are named label % key in reasons."""
        n = len(self.rows)
        self.rows.append(None)
        pairs = [[self.node(k, "name"), self.node(v, label % (k,))]
                 for k, v in list(mapping.items())]
        self.rows[n] = (n, "dict", "builtins.dict", json.dumps(pairs), None)
        return n

    def items(self, seq, path):
        if len(seq) > _MAX_ITEMS:
            raise _TooBig("%s holds %d items (at most %d are captured)"
                          % (path, len(seq), _MAX_ITEMS))
        return [self.node(x, "%s[%d]" % (path, i)) for i, x in enumerate(seq)]

    def test_case_dict(self, d, path):
        """A unittest.TestCase's __dict__, in which a private attribute
        of the runner's (unittest's _outcome, which reaches pytest's
        session and its paths) is left out, and one that cannot be
        captured (torch's TestCase's _prev_torch_function_state) too,
        rather than blocking the replay of every frame the test compiles."""
        n = len(self.rows)
        self.memo[id(d)] = n
        self.keep.append(d)
        self.rows.append(None)
        pairs = []
        for k, v in list(d.items()):
            if _private(k) and (getattr(type(v), "__module__", None) or "").split(".")[0] in (
                    "unittest", "_pytest"):
                continue  # the runner's state (unittest's _outcome), never the test's
            mark, opaque, seen = len(self.rows), len(self.opaque), set(self.classes_seen)
            data_bytes = self.data_bytes
            try:
                pair = [self.node(k, "name"), self.node(v, "%s[%r]" % (path, k))]
                ok = len(self.opaque) == opaque
            except _TooBig:
                if not _private(k):
                    raise
                ok = False
            if ok or not _private(k):
                pairs.append(pair)
                continue
            del self.rows[mark:]
            del self.opaque[opaque:]
            self.memo = {i: m for i, m in self.memo.items() if m < mark}
            self.classes_seen = seen
            self.data_bytes = data_bytes
        self.rows[n] = (n, "dict", "builtins.dict", json.dumps(pairs), None)
        return n

    def class_attrs(self, t, value, path):
        """The attributes of the classes defined inside functions of the
        user's files in t's MRO that their def and class statements did not
        make (class Holder: y = torch.ones(4), add = my_add, prop =
        Descriptor() inside a test, or set on the class later), as
        value["class_attrs"] ("QUALNAME.NAME" -> node): the replay makes
        such a class from its definitions only, never running
        y = torch.ones(4), and sets these instead.  And the own attributes
        of the functions its def statements made, set later
        (torch._dynamo.assume_constant_result(Cls.prop.fget)), as
        value["method_attrs"] ("QUALNAME.NAME" -> dict node).  Once per
        class and capture; what cannot be captured is left out, never
        blocking the replay."""
        out, cells, fattrs = {}, {}, {}
        for b in t.__mro__:
            q, m = getattr(b, "__qualname__", None), getattr(b, "__module__", None)
            if (b in self.classes_seen or not isinstance(q, str) or ".<locals>." not in q
                    or not isinstance(m, str) or not _user_module(m)):
                continue
            self.classes_seen.add(b)
            soft, self.soft = self.soft, True
            try:
                for name, v in list(vars(b).items())[:_MAX_ITEMS]:
                    # (a dunder too: torch._dynamo.disable on a class sets
                    # its __call__; never one the replay refuses to set)
                    if (not isinstance(name, str) or name in CLASS_ATTRS_NEVER_SET
                            or isinstance(v, types.ModuleType) or _made_by_enum(b, name)):
                        continue
                    key = "%s.%s" % (q, name)
                    if _made_by_body(q, name, v):
                        d = _own_attrs(body_function(v))
                        if d:
                            fattrs[key] = self.node(d, key + ".__dict__")
                        continue
                    out[key] = self.node(v, key)
            finally:
                self.soft = soft
            self.class_cells(b, q, cells)
        if out:
            value["class_attrs"] = out
        if fattrs:
            value["method_attrs"] = fattrs
        if cells:
            value["class_cells"] = cells
            if self.cells_of.get(id(cells)):
                value["class_cell_nodes"] = self.cells_of.pop(id(cells))
        self.method_defaults(t, value)

    def class_cells(self, b, q, out):
        """The closure cells of the methods of b, a class defined inside a
        function (its forward calls a function the test defined beside it),
        into out ("QUALNAME.METHOD:NAME" -> node): the replay's class
        statement binds those names to None.  Not __class__ (the class
        statement makes that one); what cannot be captured is left out."""
        for name, fn in list(vars(b).items())[:_MAX_ITEMS]:
            if isinstance(fn, (staticmethod, classmethod)):
                fn = fn.__func__
            if type(fn) is not types.FunctionType or not isinstance(name, str) or not (
                    fn.__closure__) or fn.__code__.co_filename.startswith("<"):
                # (nor a method @dataclass generated, whose code is
                # "<string>": the replay's @dataclass makes it again)
                continue
            for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                if var == "__class__":
                    continue
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue  # empty
                key = "%s.%s:%s" % (q, name, var)
                node = self.optional(v, key)
                if node is not None:
                    out[key] = node
                    # The cell itself too (one node per cell: a function
                    # defined beside the class that holds the same cell
                    # names that node), for the replay to make it the
                    # method's cell.
                    cells = self.cells_of.setdefault(id(out), {})
                    cells[key] = self.cell(cell, key)

    def method_defaults(self, t, value):
        """The methods with defaults of the classes of the user's files in
        t's MRO (not those defined inside functions), as
        value["method_defaults"] ("QUALNAME.NAME" -> function node, whose
        defaults function() captures): a test patches a method's
        __defaults__, a call mutates a default tensor, and Dynamo guards
        them, while the replay's class statement makes the source's.  Once
        per class and capture; what cannot be captured is left out."""
        out = {}
        for b in t.__mro__:
            q, m = getattr(b, "__qualname__", None), getattr(b, "__module__", None)
            if (b in self.classes_seen or not isinstance(q, str) or ".<locals>." in q
                    or not isinstance(m, str) or not _user_module(m)):
                continue
            self.classes_seen.add(b)
            for name, fn in list(vars(b).items())[:_MAX_ITEMS]:
                if type(fn) is types.FunctionType and isinstance(name, str) and (
                        fn.__defaults__ is not None or fn.__kwdefaults__ is not None):
                    node = self.optional(fn, "%s.%s" % (q, name))
                    if node is not None:
                        out["%s.%s" % (q, name)] = node
        if out:
            value["method_defaults"] = out

    def ref(self, obj, subclasses=True):
        """module + qualname of a function or class, when that names it.
        subclasses: a local class's ref names its local subclasses too (not
        in the refs of its bases or subclasses)."""
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if module is None and isinstance(getattr(obj, "__self__", None), types.ModuleType):
            module = obj.__self__.__name__
        if _resolves(module, qualname, obj):
            return {"module": module, "qualname": qualname}
        if type(obj) is types.FunctionType:
            held = _named(module, qualname)
            if isinstance(held, (classmethod, staticmethod)) and held.__func__ is obj:
                # The function of a class's classmethod or staticmethod
                # (Function.apply, which a local autograd.Function's
                # `Mult.apply` binds): by its class, and Dynamo finds the
                # very function it guards.
                r = {"module": module, "qualname": qualname}
                if isinstance(held, classmethod):
                    r["classmethod"] = True
                return r
        if module == "builtins" and isinstance(obj, type):
            # A builtin class its module does not bind, which the types
            # module does (mappingproxy as types.MappingProxyType).
            for name, x in list(vars(types).items()):
                if x is obj and not name.startswith("_"):
                    return {"module": "types", "qualname": name}
        name = getattr(obj, "__name__", None)
        owner = getattr(obj, "__objclass__", None)
        if module is None and isinstance(owner, type) and isinstance(name, str) and (
                _resolves(owner.__module__, "%s.%s" % (owner.__qualname__, name), obj)):
            # A C method descriptor (torch._C.TensorBase.__mul__, which a
            # __torch_function__ is handed as func): by its class.
            return {"module": owner.__module__, "qualname": "%s.%s" % (owner.__qualname__, name)}
        if (isinstance(obj, types.BuiltinFunctionType) and isinstance(name, str)
                and _resolves(module, name, obj)):
            # A builtin its module exports under its name, whose qualname
            # says otherwise (torch.sin: _VariableFunctionsClass.sin).
            return {"module": module, "qualname": name}
        if isinstance(obj, type) and isinstance(module, str) and isinstance(qualname, str) and (
                "<" not in qualname):
            # A class its module binds under another name (torch.nn.attention
            # exports pybind11's _SDPBackend as SDPBackend; a namedtuple
            # made as Shape = namedtuple("Shape_", ...)).
            k = self.module_names(module).get(id(obj))
            if k is not None and module_attr(sys.modules.get(module), k) is obj and not (
                    _user_module(module) and _namedtuple_made(obj) is not None):
                # (the user's module binds it by a call, which the replay
                # does not run: a namedtuple's by its fields, below)
                return {"module": module, "qualname": k}
        if (isinstance(obj, type) and isinstance(qualname, str) and ".<locals>." in qualname
                and isinstance(module, str) and _user_module(module)):
            # A class defined inside a function of the user's files: the
            # replay makes it from the stored source, one class per number
            # (a function that makes one per call).
            number = _local_class_numbers.get(obj)
            if number is None:
                number = _local_class_numbers[obj] = next(_class_count)
            ref = {"module": module, "qualname": qualname, "local": True, "number": number}
            # Its bases defined beside it (class C(B) in one test), by their
            # own references: the replay makes C on that very B.
            bases, beside = {}, qualname.rpartition(".")[0] + "."
            for b in obj.__bases__:
                bq = getattr(b, "__qualname__", None)
                if (isinstance(bq, str) and bq.startswith(beside) and bq == beside + b.__name__
                        and getattr(b, "__module__", None) == module):
                    r = self.ref(b, subclasses=False)
                    if r is not None and r.get("local") is True:
                        bases[b.__name__] = r
            if bases:
                ref["bases"] = bases
            # Its subclasses defined beside it (Foo.__subclasses__(), which
            # Dynamo guards item by item), in the order they were made.
            subs = []
            for sub in (type.__subclasses__(obj) if subclasses else [])[:_MAX_ITEMS]:
                r = self.ref(sub, subclasses=False) if getattr(
                    sub, "__module__", None) == module else None
                if r is None or r.get("local") is not True:
                    subs = []
                    break
                subs.append(r)
            if subs:
                ref["subclasses"] = subs
            rules = sys.modules.get("torch._dynamo.trace_rules")
            try:
                # @torch._dynamo.allow_in_graph on the class, a decorator the
                # replay's definitions do not run.
                if rules is not None and id(obj) in rules._allowed_callable_ids:
                    ref["allow_in_graph"] = True
            except Exception:
                pass
            return ref
        par = _parametrized(obj)
        if par is not None:
            # The class torch.nn.utils.parametrize makes for a module with a
            # parametrized tensor (weight_norm's ParametrizedConv1d): its
            # base and tensors, made again by parametrize's own functions,
            # one class per number (one per module, as recorded).
            base = self.ref(par[0])
            if base is not None:
                number = _local_class_numbers.get(obj)
                if number is None:
                    number = _local_class_numbers[obj] = next(_class_count)
                return {"module": module, "qualname": qualname, "parametrized": {
                    "base": base, "tensors": par[1], "number": number}}
        made = _namedtuple_made(obj)
        if made is not None and isinstance(module, str) and qualname == obj.__name__:
            # A namedtuple class no module binds (made inside a function,
            # SdpaShape = namedtuple("Sdpa_Shape", ...)): by its fields, made
            # again by collections.namedtuple.
            return {"module": module, "qualname": qualname, "namedtuple": made}
        return None

    def describe(self, obj, path):
        t = type(obj)
        if obj is None:
            return "none", None, None
        if obj is Ellipsis:
            return "ellipsis", None, None
        if t is bool:
            return "bool", obj, None
        if t is int:
            return "int", obj, None
        if t is float:
            return "float", repr(obj), None
        if t is complex:
            return "complex", [repr(obj.real), repr(obj.imag)], None
        if t is str:
            return "str", obj, None
        if t in (bytes, bytearray):
            return ("bytes" if t is bytes else "bytearray"), len(obj), bytes(obj)
        if t in (tuple, list, set, frozenset):
            return t.__name__, self.items(list(obj), path), None
        if isinstance(obj, torch.Tensor):
            return self.tensor(obj, path)
        if t is torch.Size:
            return "size", [int(x) for x in obj], None
        if t is torch.Generator:
            # A random generator: its device and state (the bytes).
            state = obj.get_state()
            data = ctypes.string_at(state.data_ptr(), state.numel())
            return "generator", {"device": str(obj.device), "nbytes": len(data)}, data
        if t is _FxNode:
            return "fx_node", obj.name, None
        if t is torch.dtype:
            return "dtype", str(obj), None
        if t is torch.device:
            return "device", str(obj), None
        if t is slice:
            return "slice", self.items([obj.start, obj.stop, obj.step], path), None
        if t is range:
            return "range", [obj.start, obj.stop, obj.step], None
        if t.__module__ == "pathlib" and t.__name__ in PATH_CLASSES:
            # (a module's cache_dir: its class and text, no file read)
            return "path", [t.__name__, str(obj)], None
        if t is dict or t.__module__ == "collections" and t.__name__ == "OrderedDict":
            if len(obj) > _MAX_ITEMS:
                raise _TooBig("%s holds %d items" % (path, len(obj)))
            return "dict", [[self.node(k, path + ".key"), self.node(v, "%s[%r]" % (path, k))]
                            for k, v in list(obj.items())], None
        call = (self.gen_calls.get(id(obj)) or _gen_call(obj)) if (
            t is types.GeneratorType) else None
        if call is not None:
            # A generator not started, of a @contextmanager object (its
            # func, args and kwds), or of a function its module or class
            # binds (model.parameters() handed to a compiled function), or
            # of a nested function: made again by calling func, which runs
            # none of its body.
            fn, args, kw = call
            self.keep.append(fn)
            return "pygenerator", {"func": self.node(fn, path + ".<func>"),
                                   "args": self.node(args, path + ".<args>"),
                                   "kwds": self.node(kw, path + ".<kwds>")}, None
        if t is types.MappingProxyType:
            # A read-only view of a dict (types.MappingProxyType(d)): the
            # dict it shows, found as its one referent (no code of the
            # program runs), the same node as the dict where that is
            # captured too.
            seen = gc.get_referents(obj)
            if len(seen) == 1 and type(seen[0]) in (dict, collections.OrderedDict):
                # (an OrderedDict: inspect.Signature's parameters)
                return "mappingproxy", {"mapping": self.node(seen[0], path + ".<mapping>")}, None
        if t is functools.partial:
            value = {"func": self.node(obj.func, path + ".func"),
                     "args": self.node(obj.args, path + ".args"),
                     "keywords": self.node(obj.keywords, path + ".keywords")}
            if obj.__dict__:
                value["dict"] = self.node(obj.__dict__, path + ".__dict__")
            return "partial", value, None
        if t is collections.defaultdict:
            return "defaultdict", {"factory": self.node(obj.default_factory,
                                                        path + ".default_factory"),
                                   "entries": self.node(dict(obj), path)}, None
        if t in (weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet):
            # Its live items, held strongly here; the same container of them
            # again (the replay keeps them alive while it compiles).
            items = list(obj.items()) if t is not weakref.WeakSet else list(obj)
            if len(items) > _MAX_ITEMS:
                raise _TooBig("%s holds %d items" % (path, len(items)))
            if t is weakref.WeakSet:
                return "weak", {"class": t.__name__, "items": self.items(items, path)}, None
            return "weak", {"class": t.__name__, "entries": self.node(dict(items), path)}, None
        if t is weakref.ReferenceType:
            # A plain weak reference: its referent, or null when it is gone.
            ref = obj()
            return "weakref", {"referent": None if ref is None else self.node(
                ref, path + "()")}, None
        if t is collections.deque:
            # Its items and maxlen; collections.deque(items, maxlen) again.
            if len(obj) > _MAX_ITEMS:
                raise _TooBig("%s holds %d items" % (path, len(obj)))
            return "deque", {"items": self.items(list(obj), path), "maxlen": obj.maxlen}, None
        if isinstance(obj, tuple) and (hasattr(t, "_fields") or is_structseq(t)):
            # (a struct sequence too: torch.return_types.max of x.max(0))
            cls = self.ref(t)
            if cls is not None:
                return "namedtuple", {"class": cls, "items": self.items(list(obj), path)}, None
        if isinstance(obj, enum.Enum) or _pybind_enum_member(obj):
            cls = self.ref(t)
            if cls is not None:
                return "enum", {"class": cls, "name": obj.name}, None
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            # (a module's own instance, pytree's _LEAF_SPEC, is that one
            # object: Dynamo guards it once when one source reaches it)
            ref = self.singleton(obj)
            if ref is not None:
                return "singleton", ref, None
            cls = self.ref(t)
            if cls is not None:
                names = [f.name for f in dataclasses.fields(obj)]
                value = {"class": cls, "fields": {
                    name: self.node(getattr(obj, name), path + "." + name)
                    for name in names if hasattr(obj, name)}}
                # Instance attributes that are not fields (transformers'
                # configs keep _attn_implementation_internal and others).
                d = _dict_of(obj, None)
                if isinstance(d, dict):
                    extra = {k: v for k, v in d.items() if k not in names and isinstance(k, str)}
                    if extra:
                        value["extra"] = self.node(extra, path + ".__dict__")
                if isinstance(obj, dict):
                    # A dataclass that is also a mapping (transformers'
                    # ModelOutput, an OrderedDict): its items too.
                    value["mapping"] = self.node(_own_items(obj), path + ".items()")
                return "dataclass", value, None
        if t is types.FunctionType or isinstance(obj, torch.nn.Module):
            c = self.compiled(obj, path)
            if c is not None:
                return c
        if isinstance(obj, torch.nn.Module) and _is_graph_module(obj):
            return self.graph_module(obj, path)
        if isinstance(obj, torch.nn.Module):
            cls = self.ref(t)
            if cls is not None:
                state = self.node(_dict_of(obj, {}), path + ".__dict__")
                value = {"class": cls, "dict": state}
                self.class_attrs(t, value, path)
                return "module", value, None
        if t is types.ModuleType:
            # A module of the program (a config module whose constants the
            # frame reads): its source stored, as a traced file's is, for
            # the replay to define it (a library's is never stored).
            f = getattr(obj, "__file__", None)
            if type(f) is str and f.endswith(".py"):
                store_source(f)
            return "pymodule", obj.__name__, None
        if isinstance(obj, type):
            r = self.ref(obj)
            if r is not None and r.get("local") is True:
                # A class defined inside a function, as itself (a closure's
                # Mock, whose class_variable = Foo() the replay's definitions
                # do not make): its class attributes too, as an instance's.
                self.class_attrs(obj, r, path)
            if r is not None:
                return "class", r, None
        if t is types.FunctionType:
            return self.function(obj, path)
        if t is functools._lru_cache_wrapper:
            # @functools.lru_cache on a module's function: that module's
            # attribute, which its def statement makes in the replay too.
            r = self.ref(obj)
            if r is not None and "local" not in r and "namedtuple" not in r:
                return "function", r, None
        if t is types.BuiltinFunctionType or t in _C_ATTRS or t is types.MethodWrapperType or (
                t.__name__ in ("builtin_function_or_method", "method_descriptor",
                               "wrapper_descriptor")):
            # (a C attribute of a class by its class too: torch.Tensor.shape,
            # where the class's attribute of that name is it; not
            # type.__dict__['__dict__'], which type's own __dict__ hides)
            cls = getattr(obj, "__objclass__", None)
            r = self.ref(obj) if t not in _C_ATTRS or (
                isinstance(cls, type) and type(cls).__getattribute__ is type.__getattribute__
                and inspect.getattr_static(type(cls), obj.__name__, None) is None) else None
            if r is not None:
                return "function", r, None
            owner = getattr(obj, "__self__", None)
            name = getattr(obj, "__name__", None)
            if (t is types.BuiltinMethodType and isinstance(owner, type) and isinstance(name, str)
                    and type(inspect.getattr_static(owner, name, None)) is (
                        types.ClassMethodDescriptorType)):
                # A C classmethod bound to its class (a Function's apply,
                # torch.autograd.Function.apply from torch 2.14): the class
                # and the method's name.
                return "method", {"self": self.node(owner, path + ".__self__"),
                                  "builtin": name}, None
            if ((t is types.BuiltinMethodType or t is types.MethodWrapperType) and (
                    owner is not None) and isinstance(name, str)
                    and not isinstance(owner, (types.ModuleType, type))
                    and type(inspect.getattr_static(type(owner), name, None)) is (
                        types.MethodDescriptorType if t is types.BuiltinMethodType
                        else types.WrapperDescriptorType)):
                # A C method bound to an object (rng.random, items.append;
                # a slot's, torch.Tensor.shape.__get__): the object and the
                # method's name in its class.
                return "method", {"self": self.node(owner, path + ".__self__"),
                                  "builtin": name}, None
        if t is types.MethodType:
            return "method", {"self": self.node(obj.__self__, path + ".__self__"),
                              "func": self.node(obj.__func__, path + ".__func__")}, None
        np = sys.modules.get("numpy")
        if np is not None and isinstance(obj, (np.generic, np.ndarray)) and t.__module__ == "numpy":
            return self.numpy(obj, path)
        if np is not None and isinstance(obj, np.dtype) and obj.kind in "biufc" and (
                not obj.hasobject and obj.fields is None and obj.shape == ()):
            return "npdtype", obj.str, None
        if np is not None and t in (np.finfo, np.iinfo) and isinstance(
                getattr(obj, "dtype", None), np.dtype):
            return "npinfo", [t.__name__, obj.dtype.str], None
        uh = sys.modules.get("torch.utils.hooks")
        if uh is not None and t is module_attr(uh, "RemovableHandle"):
            # A hook's handle (a lazy module keeps its own to remove its
            # hooks): the hooks dict it removes from, its id, and the other
            # dicts, each held by weakref (one no longer alive is left out).
            d = obj.__dict__
            ref, hid = d.get("hooks_dict_ref"), d.get("id")
            hooks = ref() if isinstance(ref, weakref.ref) else None
            extra = [r() for r in d.get("extra_dict_ref") or () if isinstance(r, weakref.ref)]
            if type(hid) is not int or not 0 <= hid < 1 << 62:
                return "opaque", {"why": "a hook handle without an id"}, None
            return "hook_handle", {
                "hooks": None if hooks is None else self.node(hooks, path + ".hooks_dict_ref()"),
                "id": hid,
                "extra_dicts": [self.node(e, path + ".extra_dict_ref[%d]()" % i)
                                for i, e in enumerate(extra) if e is not None]}, None
        nnm = sys.modules.get("torch.nn.modules.module")
        if nnm is not None and t is module_attr(nnm, "_WrappedHook"):
            # A module hook torch wraps (a lazy module's load hook): the
            # hook, and the module it is called with (held by weakref).
            mod = obj.module() if obj.__dict__.get("with_module") is True else None
            if obj.__dict__.get("with_module") is True and mod is None:
                return "opaque", {"why": "the hook of a dead module"}, None
            return "module_hook", {"hook": self.node(obj.hook, path + ".hook"),
                                   "module": None if mod is None else self.node(
                                       mod, path + ".module()")}, None
        if (t.__module__, t.__qualname__) == ("torch._dynamo.decorators",
                                              "DynamoConfigPatchProxy"):
            # torch._dynamo.patch_dynamo_config(...) (dont_skip_tracing()):
            # the config changes it makes while Dynamo traces.
            ch = getattr(getattr(obj, "config_patch", None), "changes", None)
            if type(ch) is dict and ch and all(
                    type(k) is str and (x is None or type(x) in (bool, int, str))
                    for k, x in ch.items()):
                return "config_patch", dict(ch), None
        if isinstance(obj, logging.Logger) and t in (logging.Logger, logging.RootLogger):
            # logging.getLogger(name) is the one logger of that name.
            return "logger", None if obj is logging.root else obj.name, None
        # A module's own object (a sentinel, a higher-order-op singleton) is
        # that object, not a copy: Dynamo guards on its identity.
        ref = self.singleton(obj)
        if ref is not None:
            return "singleton", ref, None
        if t is object:
            # A bare object() no module binds (a sentinel a function makes,
            # on a resume function's stack): another object().
            return "object", {"class": {"module": "builtins", "qualname": "object"},
                              "dict": self.node({}, path + ".__dict__")}, None
        op = _torch_op_name(obj)
        if op is not None:
            return "torch_op", op, None
        if t in DICT_ITERATOR_TYPES:
            # A dict's iterator part way through: the dict (its one
            # referent while not exhausted; the same node as the dict where
            # that is captured too) and how many items it gave.
            seen = gc.get_referents(obj)
            d = seen[0] if len(seen) == 1 and type(seen[0]) is dict else None
            left = obj.__length_hint__()
            if d is not None and 0 <= left <= len(d):
                return "iterator", {"make": DICT_ITERATOR_TYPES[t],
                                    "args": self.node((d,), path + ".<dict>"),
                                    "state": self.node(len(d) - left, path + ".<given>")}, None
        if t in ITERATOR_TYPES:
            # A builtin iterator part way through (a filter object on a
            # resume function's stack): what it iterates and where it is,
            # as its C __reduce__ gives them (no code of the program runs).
            make, args, *state = obj.__reduce__()
            name = getattr(make, "__name__", None)
            if name in ITERATORS and type(args) is tuple:
                value = {"make": name, "args": self.node(args, path + ".__reduce__()[1]")}
                if state:
                    value["state"] = self.node(state[0], path + ".__reduce__()[2]")
                return "iterator", value, None
        if isinstance(obj, BaseException):
            # An exception as a value (a StopIteration a compiled function
            # raises): its class, args and attributes; never its traceback.
            cls = self.ref(t)
            if cls is not None:
                d = _dict_of(obj, None)
                return "exception", {"class": cls, "args": self.node(obj.args, path + ".args"),
                                     "dict": self.node(d if type(d) is dict else {},
                                                       path + ".__dict__")}, None
        rnd = sys.modules.get("random")
        if rnd is not None and isinstance(obj, rnd.Random):
            # A random.Random (or a subclass): its class, the state
            # Random.getstate gives (the class's own, whatever an instance
            # overrides) and its __dict__; Dynamo traces its methods.
            cls = self.ref(t)
            if cls is not None:
                version, words, gauss = rnd.Random.getstate(obj)
                return "random", {"class": cls, "state": [
                    version, list(words), None if gauss is None else repr(gauss)],
                    "dict": self.node(_dict_of(obj, {}), path + ".__dict__")}, None
        ctx = self.autograd_ctx(obj, t, path)
        if ctx is not None:
            return "autograd_ctx", ctx, None
        if _plain_class(t):
            # A plain instance (attributes in __dict__) of a class the
            # sources define or a library's importable class (generation
            # configs, KV caches): its class by reference, its __dict__.
            cls = self.ref(t)
            if cls is not None:
                d = _dict_of(obj, {})
                _note_gen_call(self.gen_calls, d)
                if _is_test_case(t) and type(d) is dict:
                    state = self.test_case_dict(d, path + ".__dict__")
                else:
                    state = self.node(d, path + ".__dict__")
                value = {"class": cls, "dict": state}
                ident = _ident(obj)
                if ident is not None:
                    value["ident"] = ident
                slots = {}
                for name in _slot_names(t):
                    try:
                        v = object.__getattribute__(obj, name)
                    except AttributeError:
                        continue  # a slot not set
                    slots[name] = self.node(v, "%s.%s" % (path, name))
                if slots:
                    value["slots"] = slots
                base = _mapping_base(t)
                if base is not None:
                    # A dict or OrderedDict subclass: its items in order,
                    # read by the C type's own methods (never the class's:
                    # OrderedDict.items of a subclass calls its __getitem__,
                    # which transformers' ACT2FN makes a new module in).
                    n = dict.__len__(obj)
                    if n > _MAX_ITEMS:
                        raise _TooBig("%s holds %d items" % (path, n))
                    value["mapping"] = self.node(_own_items(obj), path + ".items()")
                self.class_attrs(t, value, path)
                return "object", value, None
        return "opaque", None, None

    def autograd_ctx(self, obj, t, path):
        """The ctx of a torch.autograd.Function's forward or backward (a
        frame of forward that Dynamo compiles on its own, after a graph
        break inside it falls back to eager): the Function class (whose
        _backward_cls makes a ctx of its type), its __dict__ and its
        settable C attributes (AUTOGRAD_CTX_ATTRS: needs_input_grad,
        to_save ...); None for anything else."""
        fn_mod = sys.modules.get("torch.autograd.function")
        base = module_attr(fn_mod, "BackwardCFunction")
        if not isinstance(base, type) or not isinstance(obj, base):
            return None
        fwd = getattr(t, "_forward_cls", None)
        cls = self.ref(fwd) if isinstance(fwd, type) else None
        if cls is None or getattr(fwd, "_backward_cls", None) is not t:
            return None
        value = {"function": cls, "dict": self.node(_dict_of(obj, {}), path + ".__dict__")}
        attrs = {}
        for name in AUTOGRAD_CTX_ATTRS:
            try:
                v = getattr(obj, name)
            except Exception:
                continue
            if v is not None:
                attrs[name] = self.node(v, "%s.%s" % (path, name))
        if attrs:
            value["c_attrs"] = attrs
        return value

    def compiled(self, obj, path):
        """torch.compile's wrapper of a function or a module, reached through
        the user's objects (model.forward = torch.compile(model.forward), an
        OptimizedModule in a list): what it wraps and how it was compiled,
        for the replay to call torch.compile again.  None for anything else
        (a torch._dynamo.disable wrapper is a function or a module)."""
        if isinstance(obj, torch.nn.Module):
            eval_frame = sys.modules.get("torch._dynamo.eval_frame")
            if eval_frame is None or type(obj) is not module_attr(eval_frame, "OptimizedModule"):
                return None
            orig, ctx, attr = obj.__dict__.get("_modules", {}).get("_orig_mod"), getattr(
                obj, "dynamo_ctx", None), "._orig_mod"
        else:
            if getattr(obj, "_is_torch_compile", False) is not True:
                return self.disabled(obj, path)
            orig, ctx, attr = getattr(obj, "_torchdynamo_orig_callable", None), None, (
                "._torchdynamo_orig_callable")
            names = obj.__code__.co_freevars
            if "self" in names and obj.__closure__:
                try:
                    ctx = obj.__closure__[names.index("self")].cell_contents
                except ValueError:
                    ctx = None
        callback = getattr(ctx, "callback", None)
        if orig is None or not callable(callback) or type(ctx).__name__ != "OptimizeContext":
            return None
        dynamic = getattr(ctx, "_dynamic", None)
        return "compiled", {"orig": self.node(orig, path + attr), "backend": _backend(callback),
                            "fullgraph": getattr(ctx, "fullgraph", False) is True,
                            "dynamic": dynamic if dynamic in (True, False) else None,
                            "module": isinstance(obj, torch.nn.Module)}, None

    def disabled(self, fn, path):
        """torch._dynamo.disable's wrapper of a function no module binds (a
        nested @torch._dynamo.disable): what it wraps, its reason and
        whether it copied the wrapped one's name, for the replay to call
        torch._dynamo.disable again (its closure holds Dynamo's
        DisableContext).  None for anything else; a module's is by
        reference."""
        d = getattr(fn, "__dict__", None)
        if (type(d) is not dict or d.get("_torchdynamo_disable") is not True
                or d.get("_torchdynamo_disable_recursive") is not True
                or _qualname(fn.__code__) != "DisableContext.__call__.<locals>._fn"
                or not callable(d.get("_torchdynamo_orig_callable")) or self.ref(fn) is not None):
            return None
        reason = d.get("_torchdynamo_disable_msg")
        return "compiled", {"orig": self.node(d["_torchdynamo_orig_callable"],
                                              path + "._torchdynamo_orig_callable"),
                            "backend": None,
                            "disable": {"reason": reason if isinstance(reason, str) else None,
                                        "wrapping": "__wrapped__" in d}}, None

    def graph_module(self, gm, path):
        """An fx GraphModule (make_fx's, symbolic_trace's, one a test builds
        and compiles): its graph as data -- each node's op, name, target
        (an operator, a function or a module attribute's name) and
        arguments, referring to earlier nodes by name -- its code
        generator's pytree specs, the co_fields that name its code, and its
        other attributes (submodules, parameters, constants).  The replay
        builds the graph again and lets torch.fx generate the code; no code
        is stored.  The file name of its generated forward tells the replay
        which recorded GraphModules were one."""
        fxg = sys.modules.get("torch.fx.graph")
        t = type(gm)
        base = next((b for b in t.__mro__ if "GraphModuleImpl" not in b.__qualname__), None)
        cls = self.ref(base) if base is not None else None
        graph = gm.__dict__.get("_graph")
        if cls is None or fxg is None or not isinstance(graph, fxg.Graph):
            return "opaque", {"why": "an fx GraphModule of a class that is not importable"}, None
        codegen = graph._codegen
        extra = {k: v for k, v in vars(codegen).items() if k != "pytree_info"}
        if extra != {"_body_transformer": None, "_func_name": "forward"} or type(codegen) not in (
                fxg.CodeGen, fxg._PyTreeCodeGen):
            return "opaque", {"why": "an fx GraphModule whose code generator is %s" % (
                _type_name(type(codegen)))}, None
        pytree = None
        if type(codegen) is fxg._PyTreeCodeGen:
            info = codegen.pytree_info
            pytree = self.node((list(info.orig_args), info.in_spec, info.out_spec),
                               path + ".graph._codegen.pytree_info")
        nodes = list(graph.nodes)
        if len(nodes) > _MAX_ITEMS:
            raise _TooBig("%s: an fx graph of %d nodes" % (path, len(nodes)))
        fxn = sys.modules["torch.fx.node"]
        mark = {node: _FxNode(node.name) for node in nodes}

        def data(a, depth=0):
            # fx's immutable lists and dicts as plain ones, nodes by name
            if depth > 50:
                raise _TooBig("%s: fx arguments nested deeper than 50" % path)
            if isinstance(a, fxn.Node):
                m = mark.get(a)
                if m is None:
                    raise ValueError("an argument is a node of another graph")
                return m
            if type(a) is tuple:
                return tuple(data(x, depth + 1) for x in a)
            if isinstance(a, list):
                return [data(x, depth + 1) for x in a]
            if isinstance(a, dict):
                return {k: data(x, depth + 1) for k, x in a.items()}
            if type(a) is slice:
                return slice(data(a.start, depth + 1), data(a.stop, depth + 1),
                             data(a.step, depth + 1))
            return a

        entries = []
        for node in nodes:
            typ = node.type if isinstance(node.type, type) else None
            entries.append((node.op, node.name, node.target, data(node.args),
                            data(dict(node.kwargs)), typ))
        self.keep.append((mark, entries))
        state = {k: v for k, v in gm.__dict__.items() if k not in FX_GRAPH_ATTRS}
        fwd = getattr(t.__dict__.get("forward"), "__code__", None)
        return "graph_module", {
            "class": cls, "class_name": t.__name__,
            "nodes": self.items(entries, path + ".graph.nodes"),
            "codegen": pytree,
            "co_fields": self.node(dict(getattr(graph, "_co_fields", None) or {}),
                                   path + ".graph._co_fields"),
            "dict": self.node(state, path + ".__dict__"),
            "forward_file": fwd.co_filename if isinstance(fwd, types.CodeType) else None}, None

    def singleton(self, obj):
        """A module-level object by reference (module, name): one that *is*
        that module's attribute -- a global of the frame's module (a logger
        from logging.getLogger), or an attribute of its own class's module
        (torch._higher_order_ops.wrap, torch._dynamo.comptime, sentinels)."""
        for name in _STD_STREAMS:
            if obj is getattr(sys, name, None):
                # The program's standard stream (whatever object it is: a
                # test runner's capture): the replay's own.
                return {"module": "sys", "name": name}
        cands = []
        mod = getattr(type(obj), "__module__", None)
        m = sys.modules.get(mod) if isinstance(mod, str) else None
        if m is not None and mod != "builtins" and not _user_module(mod):
            k = self.module_names(mod).get(id(obj))
            if k is not None:
                cands.append((mod, k))
        g = self.global_of.get(id(obj))
        if g is not None and (not _user_module(g[0]) or g[1] in _decorated_defs(g[0])):
            # (a global of the user's own module is made by code the
            # replay's definitions-only load does not run, unless a
            # decorated def or class statement binds it: a
            # @torch.library.custom_op's CustomOpDef, which the replay's
            # definitions make again)
            cands.append(g)
        for mod, name in cands:
            m = sys.modules.get(mod)
            if m is not None and module_attr(m, name) is obj:
                return {"module": mod, "name": name}
        return None

    def numpy(self, obj, path):
        """A numpy scalar or array of numbers: dtype (and shape), and its
        bytes, an array within the capture's data cap."""
        dt = obj.dtype
        if dt.kind not in "biufc" or dt.hasobject:
            return "opaque", None, None
        if type(obj).__name__ == "ndarray":
            if obj.nbytes > self.limit:
                raise _TooBig("%s: a numpy array of %d bytes (the capture keeps %d: "
                              "--capture-values)" % (path, obj.nbytes, self.limit))
            data = obj.tobytes(order="C")
            self.data_bytes += len(data)
            value = {"dtype": dt.str, "shape": [int(x) for x in obj.shape], "nbytes": len(data)}
            st = [int(x) for x in obj.strides]
            if obj.ndim and all(x >= 0 and x % dt.itemsize == 0 for x in st) and (
                    [x // dt.itemsize for x in st] != contiguous_strides(value["shape"])):
                # (np.broadcast_to's zeros, a[:, None]'s: Dynamo guards the
                # strides of the tensor it makes of the array)
                value["strides"] = [x // dt.itemsize for x in st]
            if not obj.flags.writeable:
                value["readonly"] = True
            return "ndarray", value, data
        data = obj.tobytes()
        return "npscalar", {"dtype": dt.str, "nbytes": len(data)}, data

    def optional(self, obj, path):
        """A node for a value the replay can do without, or None (and
        nothing of it kept) when it or a part of it cannot be captured."""
        mark, nbytes, soft = len(self.rows), self.data_bytes, self.soft
        self.soft = True
        try:
            n = self.node(obj, path)
            if all(r is None or r[1] != "opaque" for r in self.rows[mark:]):
                return n
        except _TooBig:
            pass
        finally:
            self.soft = soft
        del self.rows[mark:]
        self.memo = {k: v for k, v in self.memo.items() if v < mark}
        self.data_bytes = nbytes
        return None

    def function(self, fn, path):
        r = self.ref(fn)
        if r is not None:
            if (fn.__defaults__ is not None or fn.__kwdefaults__ is not None) and (
                    _user_module(r["module"]) and "local" not in r):
                # The defaults it has now, which the replay's def statement
                # does not make: a test patches __defaults__, a call mutates
                # a default tensor, and Dynamo guards them.
                for key, value in (("defaults", fn.__defaults__),
                                   ("kwdefaults", fn.__kwdefaults__)):
                    n = self.optional(value, "%s.__%s__" % (path, key))
                    if n is not None:
                        r[key] = n
            rules = sys.modules.get("torch._dynamo.trace_rules")
            if rules is not None and _user_module(r["module"]) and "local" not in r:
                try:
                    # torch._dynamo.allow_in_graph(f) called as the program
                    # ran, not by a decorator its def statement runs.
                    if id(fn) in rules._allowed_callable_ids:
                        r["allow_in_graph"] = True
                except Exception:
                    pass
            return "function", r, None
        r = _wrapped_ref(fn)
        if r is not None:
            return "function", r, None
        # A lambda or a nested function: its code, closure and defaults.
        # The module whose globals it runs with, by its code's globals:
        # functools.wraps overwrites __module__ (and __qualname__) with the
        # wrapped function's (transformers' can_return_tuple wrappers).
        gmod = fn.__globals__.get("__name__")
        value = {"module": fn.__module__, "qualname": fn.__qualname__, "name": fn.__name__,
                 "globals_module": gmod if isinstance(gmod, str) else None,
                 "filename": fn.__code__.co_filename, "firstlineno": fn.__code__.co_firstlineno,
                 "closure": [self.cell(c, "%s.<cell %d>" % (path, i))
                             for i, c in enumerate(fn.__closure__ or ())],
                 "defaults": self.node(fn.__defaults__, path + ".__defaults__"),
                 "kwdefaults": self.node(fn.__kwdefaults__, path + ".__kwdefaults__")}
        rules = sys.modules.get("torch._dynamo.trace_rules")
        try:
            if rules is not None and id(fn) in rules._allowed_callable_ids:
                # torch._dynamo.allow_in_graph(fn): Dynamo's registry holds
                # it by id, which a rebuilt function is not.
                value["allow_in_graph"] = True
            if rules is not None:
                # The wrappers nonstrict_trace and leaf_function make, held
                # by id in a registry of their own too.
                marks = [m for m, ids in DYNAMO_MARKS.items()
                         if id(fn) in getattr(rules, ids, ())]
                if marks:
                    value["marks"] = marks
        except Exception:
            pass
        d = _own_attrs(fn)
        if d:
            value["dict"] = self.node(d, path + ".__dict__")
        place = code_place(fn.__code__)
        if place is not None:
            value["place"] = place  # which lambda of its line
        cq = _qualname(fn.__code__)
        if cq != fn.__qualname__ and sys.version_info >= (3, 11):
            # The code's own qualname, where functools.wraps gave the
            # function the wrapped one's (make_dynamo_test.<locals>.
            # standard_test as ExceptionTests.test_x): replay finds the
            # code by it.
            value["code_qualname"] = cq
        if "torch_dynamo_resume_in_" in fn.__code__.co_name:
            # A resume function Dynamo made for a graph break inside a call
            # (the continuation an outer resume function is handed): replay
            # finds the one it makes by this, as for a resume frame.
            value["code_digest"] = code_digest(fn.__code__)
            return "function", value, _marshalled(fn.__code__)
        return "function", value, marshal.dumps(fn.__code__)

    def wrapped_tensor(self, t, path):
        """A tensor a torch.func transform wrapped (vmap's batched tensor,
        grad's tracking tensor, functionalize's): the transform, its level,
        vmap's batch dim, and the tensor it wraps, which replay wraps again
        inside the transforms it enters."""
        F, level = _functorch, _functorch.maybe_get_level(t)
        if F.is_batchedtensor(t):
            value = {"transform": "Vmap", "bdim": int(F.maybe_get_bdim(t))}
        elif F.is_functionaltensor(t):
            value = {"transform": "Functionalize"}
        elif F.is_gradtrackingtensor(t):
            value = {"transform": "Grad", "requires_grad": bool(t.requires_grad)}
        else:
            return "opaque", {"why": "a torch.func wrapper of an unknown kind"}, None
        value["level"] = int(level)
        value["inner"] = self.node(F.get_unwrapped(t), path + ".<unwrapped>")
        return "wrapped_tensor", value, None

    def cell(self, c, path):
        n = self.memo.get(id(c))
        if n is not None:
            return n
        n = len(self.rows)
        self.memo[id(c)] = n
        self.keep.append(c)
        self.rows.append(None)
        try:
            inner = c.cell_contents
            value = self.node(inner, path)
        except ValueError:  # an empty cell
            value = None
        self.rows[n] = (n, "cell", "builtins.cell", json.dumps(value), None)
        return n

    def tensor(self, t, path):
        cls = type(t)
        if cls is torch.Tensor and _functorch.is_functorch_wrapped_tensor(t):
            return self.wrapped_tensor(t, path)
        nnp = sys.modules.get("torch.nn.parameter")
        if nnp is not None and cls in (module_attr(nnp, "UninitializedParameter"),
                                       module_attr(nnp, "UninitializedBuffer")):
            # A lazy module's parameter or buffer before its first call:
            # no shape, no data; which one, its dtype, device and grad.
            value = {"uninitialized": "parameter" if cls.__name__.endswith("Parameter")
                     else "buffer", "dtype": str(t.dtype), "device": str(t.device),
                     "requires_grad": bool(t.requires_grad)}
            if value["uninitialized"] == "buffer":
                value["persistent"] = getattr(t, "persistent", True) is not False
            return "uninitialized", value, None
        if cls not in (torch.Tensor, torch.nn.Parameter):
            if _traceable_wrapper(cls):
                return self.subclass_tensor(t, path, cls)
            sub = self.tensor_subclass(cls)
            if sub is None:
                return "opaque", None, None
            # Read without its __torch_function__, which would run the
            # program's code (a counter, a print) where it never ran.
            with torch._C.DisableTorchFunctionSubclass():
                return self.plain_tensor(t, path, cls, sub)
        return self.plain_tensor(t, path, cls, None)

    def subclass_tensor(self, t, path, cls):
        """A tensor of a traceable wrapper subclass (a __torch_dispatch__
        subclass whose data lives in inner tensors: torch's TwoTensor, a
        quantized tensor of a library): its class, the inner tensors and
        context its __tensor_flatten__ gives (as Dynamo's own fakification
        calls it), its size and stride (null for a symbolic dim: a jagged
        nested tensor's), requires_grad, whether a leaf, and Dynamo's marks;
        the replay makes it by the class's __tensor_unflatten__.  A view
        adds its base and storage offset: Dynamo guards the base (a jagged
        nested tensor is a view of its values)."""
        ref = self.ref(cls)
        with torch._C.DisableTorchFunctionSubclass():
            if ref is None:
                return "opaque", None, None
            names, ctx = t.__tensor_flatten__()
            if not isinstance(names, (list, tuple)) or not all(
                    isinstance(k, str) and k.isidentifier() for k in names):
                return "opaque", {"why": "__tensor_flatten__ gave no attribute names"}, None
            value = {"class": ref,
                     "inner_tensors": {k: self.node(getattr(t, k), "%s.%s" % (path, k))
                                       for k in names},
                     "ctx": self.node(ctx, path + ".<__tensor_flatten__ context>"),
                     "size": [s if type(s) is int else None for s in t.shape],
                     "stride": [s if type(s) is int else None for s in t.stride()],
                     "requires_grad": bool(t.requires_grad), "leaf": bool(t.is_leaf)}
            if t.is_inference():
                value["inference"] = True  # (made under inference_mode)
            if t._is_view() and t._base is not None:
                value["view_of"] = self.node(t._base, path + "._base")
                off = t.storage_offset()
                value["offset"] = off if type(off) is int else None
            marks = _tensor_marks(t, getattr(t, "__dict__", None) or {})
        if marks:
            value["marks"] = marks
        return "subclass_tensor", value, None

    def tensor_subclass(self, cls):
        """A class reference for a subclass of torch.Tensor the program
        defines whose instances are tensors of that class and nothing more
        (a __torch_function__ subclass: x.as_subclass(TensorProxy); a
        subclass of Parameter with attributes of its own, as quantized
        weights are: GGUFParameter, Params4bit); None for torch's own and a
        __torch_dispatch__ wrapper (its data lives in inner tensors)."""
        mod = getattr(cls, "__module__", None) or ""
        if mod == "torch" or mod.startswith("torch.") or cls is torch.nn.Parameter:
            return None
        for b in cls.__mro__:
            if b is torch.Tensor:
                break
            if "__torch_dispatch__" in vars(b):
                return None
        return self.ref(cls)

    def plain_tensor(self, t, path, cls, sub):
        if t.layout != torch.strided or t.is_quantized or t.is_nested:
            return "opaque", None, None
        value = {"shape": list(t.shape), "stride": list(t.stride()),
                 "offset": t.storage_offset(), "dtype": str(t.dtype), "device": str(t.device),
                 "requires_grad": bool(t.requires_grad), "leaf": bool(t.is_leaf),
                 "param": cls is torch.nn.Parameter}
        if sub is not None:
            value["subclass"] = sub
        ident = _ident(t)
        if ident is not None:
            value["ident"] = ident
        if t.is_inference():
            # made under torch.inference_mode(): no autograd dispatch keys,
            # which Dynamo's TENSOR_MATCH checks
            value["inference"] = True
        if t._is_view() and t._base is not None:
            value["view_of"] = self.node(t._base, path + "._base")
        d = getattr(t, "__dict__", None) or {}
        marks = _tensor_marks(t, d)
        if marks:
            value["marks"] = marks
        # The tensor's own Python attributes (x.y = 4; torch's mark_dynamic
        # keeps _specialize_on there), which Dynamo reads and guards.
        attrs = {k: v for k, v in d.items() if isinstance(k, str) and not k.startswith(
            ("_dynamo_", "_has_dynamo_"))}
        if attrs:
            value["attrs"] = self.node(attrs, path + ".__dict__")
        if t.is_leaf and t.grad is not None:
            value["grad"] = self.node(t.grad, path + ".grad")
        data = None
        nbytes = t.numel() * t.element_size()
        if nbytes <= self.limit and t.device.type in ("cpu", "cuda"):
            # (outside any torch.func transform the compile runs in, whose
            # layers would wrap the copies)
            with torch.no_grad(), torch._C._DisableFuncTorch():
                flat = t.detach().cpu().contiguous().reshape(-1)
                data = ctypes.string_at(flat.data_ptr(), nbytes) if nbytes else b""
            value["data"] = nbytes
            self.data_bytes += nbytes
        return "tensor", value, data


import ctypes  # noqa: E402


def _tensor_marks(t, d):
    """Dynamo's marks on tensor t (mark_dynamic, mark_static, ...), d its
    __dict__: the known ones, and any other dims mark a later torch sets."""
    marks = {}
    for name in _DIM_MARKS + tuple(k for k in d if isinstance(k, str) and k.startswith(
            "_dynamo_") and k.endswith("_indices") and k not in _DIM_MARKS):
        s = getattr(t, name, None)
        if isinstance(s, (set, frozenset)) and all(type(i) is int for i in s):
            marks[name] = sorted(s)
    rng = getattr(t, "_dynamo_dynamic_range", None)
    if isinstance(rng, (set, frozenset)):
        marks["_dynamo_dynamic_range"] = sorted(
            ([r.dim, r.min, r.max] for r in rng if hasattr(r, "dim")), key=repr)
    for name in _FLAG_MARKS:
        if getattr(t, name, None) is True:
            marks[name] = True
    kind = getattr(t, "_dynamo_static_input_type", None)
    if kind in ("guarded", "unguarded"):
        marks["_dynamo_static_input_type"] = kind
    hints = getattr(t, "_dynamo_hint_overrides", None)
    if isinstance(hints, dict) and hints and all(type(k) is int and type(v) is int
                                       for k, v in hints.items()):
        marks["_dynamo_hint_overrides"] = sorted([k, v] for k, v in hints.items())
    return marks


class _FxNode:
    """An fx graph's node where another node's arguments refer to it
    (value kind fx_node)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _is_graph_module(obj):
    gm = sys.modules.get("torch.fx.graph_module")
    return gm is not None and isinstance(obj, gm.GraphModule)


def _torch_op_name(obj):
    """The name of a torch operator under torch.ops (torch_op), when obj is
    one that the name finds again; None for anything else."""
    ops = sys.modules.get("torch._ops")
    if ops is None:
        return None
    if isinstance(obj, (ops.OpOverload, ops.OpOverloadPacket)):
        name = str(obj)
    elif isinstance(obj, ops.HigherOrderOperator):
        name = "higher_order.%s" % obj.name()
    else:
        return None
    return name if torch_op(name) is obj else None


def _code_names(code, out, seen):
    if id(code) in seen or len(seen) > 2000:
        return
    seen.add(id(code))
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out, seen)


def _module_reach(g):
    """Names of g that the code of g's own functions and classes loads."""
    name = g.get("__name__")
    cached = _module_names.get(id(g))
    if cached is not None and cached[0] == len(g):
        return cached[1]
    names, seen = set(), set()
    for v in list(g.values()):
        fn = v
        if isinstance(v, type) and getattr(v, "__module__", None) == name:
            for attr in list(vars(v).values()):
                f = getattr(attr, "__func__", attr)
                if isinstance(f, types.FunctionType) and f.__globals__ is g:
                    _code_names(f.__code__, names, seen)
            continue
        fn = getattr(fn, "__wrapped__", fn)
        if isinstance(fn, types.FunctionType) and fn.__globals__ is g:
            _code_names(fn.__code__, names, seen)
    _module_names[id(g)] = (len(g), names)
    return names


def _user_module(name):
    """A module of the user's files (the script, a stored source)."""
    f = module_attr(sys.modules.get(name), "__file__")
    return name == "__main__" or (isinstance(f, str) and
                                  os.path.realpath(f) in _dynamo._stored_files)


def _slot_names(t):
    """The attribute names of the __slots__ of t and its bases (private
    names mangled, as Python stores them), without __dict__ and
    __weakref__; None when a __slots__ is not a string or strings."""
    out = []
    for b in t.__mro__:
        if b is object or "__slots__" not in vars(b):
            continue
        sl = vars(b)["__slots__"]
        sl = [sl] if isinstance(sl, str) else sl
        try:
            names = list(sl)
        except TypeError:
            return None
        for n in names:
            if not isinstance(n, str) or not n.isidentifier():
                return None
            if n in ("__dict__", "__weakref__"):
                continue
            if n.startswith("__") and not n.endswith("__"):
                n = "_%s%s" % (b.__name__.lstrip("_"), n)
            out.append(n)
    return out


def _private(name):
    return isinstance(name, str) and name.startswith("_")


def _is_test_case(t):
    ut = sys.modules.get("unittest")
    return ut is not None and isinstance(t, type) and issubclass(t, ut.TestCase)


# C attributes of classes, named by their class (torch.Tensor.shape).
_C_ATTRS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _gen_call(gen):
    """(func, args, kwds) whose call made gen, a generator not started of a
    function its module binds by the code's qualname (a module's function,
    a method of a module's class: torch.nn.Module.parameters), or of a
    function defined inside a function of the user's files (func then a
    function of that code over new cells holding what the generator's free
    variables hold: the generator keeps no reference to its function), its
    arguments as its frame holds them; None for any other."""
    try:
        if inspect.getgeneratorstate(gen) != inspect.GEN_CREATED:
            return None
        code, frame = gen.gi_code, gen.gi_frame
        module, qualname = frame.f_globals.get("__name__"), getattr(code, "co_qualname", None)
        fn = _named(module, qualname)
        if isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        loc = frame.f_locals
        if fn is None and isinstance(qualname, str) and ".<locals>." in qualname and (
                isinstance(module, str) and _user_module(module)):
            fn = types.FunctionType(code, frame.f_globals, code.co_name, None, tuple(
                types.CellType(loc[v]) if v in loc else types.CellType()
                for v in code.co_freevars) or None)
            fn.__qualname__ = qualname
        if type(fn) is not types.FunctionType or fn.__code__ is not code:
            return None
        names = code.co_varnames
        n, k = code.co_argcount, code.co_kwonlyargcount
        args = tuple(loc[a] for a in names[:n])
        kw = {a: loc[a] for a in names[n:n + k]}
        i = n + k
        if code.co_flags & inspect.CO_VARARGS:
            args += tuple(loc[names[i]])
            i += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            kw.update(loc[names[i]])
        return fn, args, kw
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _note_gen_call(calls, d):
    """An object's __dict__ that holds an unstarted generator and the call
    that made it (contextlib's _GeneratorContextManager: gen = func(*args,
    **kwds)): noted in calls for the generator's capture."""
    if type(d) is not dict or not all(k in d for k in ("gen", "func", "args", "kwds")):
        return
    gen, fn, args, kw = d["gen"], d["func"], d["args"], d["kwds"]
    if (type(gen) is types.GeneratorType and type(fn) is types.FunctionType
            and gen.gi_code is fn.__code__ and type(args) is tuple and type(kw) is dict
            and inspect.getgeneratorstate(gen) == inspect.GEN_CREATED):
        calls[id(gen)] = (fn, args, kw)


_NAMEDTUPLE_ATTRS = frozenset((
    "__doc__", "__slots__", "_fields", "_field_defaults", "__new__", "_make", "_replace",
    "__repr__", "_asdict", "__getnewargs__", "__match_args__", "__module__"))
_DEFAULT_TYPES = (type(None), bool, int, str)
# The recording's classes that no module binds (namedtuple classes and
# classes made inside a function, one per call of it), numbered in the order
# first captured: the replay makes one class per number.  The count never
# goes back, so a number names one class even after it is collected.
_namedtuple_numbers = weakref.WeakKeyDictionary()
_local_class_numbers = weakref.WeakKeyDictionary()
_class_count = itertools.count(1)
_STD_STREAMS = ("stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__")


def _namedtuple_made(t):
    """{"fields": [...], "defaults": [...]} of a class that
    collections.namedtuple made and nothing changed since (no methods
    added, no subclass), whose defaults are None, bools, ints or strings;
    else None."""
    if not isinstance(t, type) or t.__bases__ != (tuple,):
        return None
    d = vars(t)
    fields = d.get("_fields")
    make = getattr(d.get("_make"), "__func__", None)
    code = getattr(make, "__code__", None)
    if (type(fields) is not tuple or not all(type(f) is str for f in fields)
            or code is None or code.co_filename != getattr(collections, "__file__", None)
            or not set(d) <= _NAMEDTUPLE_ATTRS | set(fields)):
        return None
    defaults = d.get("_field_defaults")
    if type(defaults) is not dict or not all(type(v) in _DEFAULT_TYPES for v in defaults.values()):
        return None
    kept = fields[len(fields) - len(defaults):] if defaults else ()
    if tuple(defaults) != kept:
        return None
    # Which class of those of this name and fields (a function that makes
    # one per call): the replay makes one per number, for every capture.
    number = _namedtuple_numbers.get(t)
    if number is None:
        number = _namedtuple_numbers[t] = next(_class_count)
    return {"fields": list(fields), "defaults": [defaults[f] for f in kept], "number": number}


def _dict_of(obj, default):
    """obj's __dict__, read past its class's own __getattribute__ (the
    program's code, which capture never runs); default where it has none."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return default
    return d if type(d) is dict else default


def _pybind_enum_member(obj):
    """A member of a C++ enum torch binds with pybind11 (SDPBackend.MATH):
    its class holds it in __members__ under its name."""
    t = type(obj)
    members = getattr(t, "__members__", None) if type(t).__name__ == "pybind11_type" else None
    if not isinstance(members, dict):
        return False  # (never obj.name of another object: a __getattr__ of the program's)
    name = getattr(obj, "name", None)
    return isinstance(name, str) and members.get(name) is obj


def _own_items(v):
    """The items of v, an instance of a subclass of dict, list or set, as a
    dict, list or set of that base, read through the C type's own methods
    only: never the subclass's __getitem__, __iter__ or keys (OrderedDict's
    items of a subclass call its __getitem__, in which transformers' ACT2FN
    makes a new module; dict(v) does too).  An OrderedDict's in its own
    order."""
    if isinstance(v, dict):
        keys = collections.OrderedDict.keys(v) if isinstance(
            v, collections.OrderedDict) else dict.keys(v)
        return {k: dict.__getitem__(v, k) for k in list(keys)}
    if isinstance(v, list):
        return list(list.__iter__(v))
    return set(set.__iter__(v))


def _mapping_base(t):
    """dict or collections.OrderedDict for a class statement's subclass of
    one of them (whose __new__ is dict's), else None: its instances are
    plain state plus their items."""
    for b in t.__mro__:
        if not b.__flags__ & (1 << 9):  # the nearest C type (Py_TPFLAGS_HEAPTYPE)
            ok = b is dict or b is collections.OrderedDict
            return b if ok and b is not t and t.__new__ is dict.__new__ else None
    return None


# torch's classes whose instances are plain state the program holds:
# Dynamo's decorator objects, which the wrappers torch._dynamo.disable,
# error_on_graph_break and set_stance make keep in their closures (and
# torch._dynamo.disable(module) in the module's dynamo_ctx).
_TORCH_PLAIN = frozenset((
    "torch._dynamo.eval_frame.DisableContext",
    "torch._dynamo.decorators.ErrorOnGraphBreakDecoratorContextManager",
    "torch._dynamo.decorators.set_stance"))


_idents = {}  # id(obj) -> (weakref to obj, its number): the plain objects captured
_ident_count = itertools.count(1)


def _ident(obj):
    """The number of a plain object or a tensor among those of the run's
    captures, the same for the same object in every capture (an optimizer
    whose step recompiles: Dynamo guards its identity and its state's step
    tensors', then its param_groups), for the replay to make one object of
    them; None for one without weak references."""
    return _number_of(_idents, _ident_count, obj)


def _number_of(table, counter, obj):
    """obj's number in table (id -> (weak reference, number)), numbered by
    first sight from counter; None for an object without weak references.
    By id, so that no __hash__ or __eq__ of the user's runs; weak, so that
    recording never keeps one alive (the dead are dropped past 4096)."""
    hit = table.get(id(obj))
    if hit is not None and hit[0]() is obj:
        return hit[1]
    try:
        ref = weakref.ref(obj)
    except TypeError:
        return None
    if len(table) >= 4096:
        for k in [k for k, e in table.items() if e[0]() is None]:
            del table[k]
    n = next(counter)
    table[id(obj)] = (ref, n)
    return n


# torch's classes whose instances are plain objects of tensors and data:
# (module, class) of their bases.
_TORCH_PLAIN_BASES = (
    # an optimizer and a learning-rate scheduler (torch.compile(opt.step):
    # param_groups, state and defaults)
    ("torch.optim", "Optimizer"), ("torch.optim.lr_scheduler", "LRScheduler"),
    # a probability distribution (an RL policy's Normal or Categorical: its
    # parameters, shapes and the lazy properties already computed)
    ("torch.distributions", "Distribution"),
    # a mixed-precision training step's gradient scaler (its scale and
    # growth tracker tensors, per-optimizer states)
    ("torch.amp.grad_scaler", "GradScaler"))


def _torch_plain_base(t):
    """Whether t is a subclass of one of _TORCH_PLAIN_BASES (imported)."""
    bases = tuple(b for b in (module_attr(sys.modules.get(m), c) for m, c in _TORCH_PLAIN_BASES)
                  if isinstance(b, type))
    return isinstance(t, type) and bool(bases) and issubclass(t, bases)


def _plain_class(t):
    """A class whose instances are plain: attributes in __dict__ and in
    __slots__ (plain descriptors), object's __new__, no builtin base but a
    mapping's (_mapping_base: its items are kept too); defined in a user
    file or in an importable module (the class is then stored by
    reference, checked to resolve to itself).  torch's own classes are
    left to their kinds, but for those of _TORCH_PLAIN and of
    torch.testing._internal."""
    mod = getattr(t, "__module__", None) or ""
    # (torch's test helpers are the tests' classes: an OpInfo's SampleInput)
    torch_plain = "%s.%s" % (mod, getattr(t, "__qualname__", "")) in _TORCH_PLAIN or (
        _torch_plain_base(t)) or mod.startswith("torch.testing._internal.")
    if mod == "builtins" or (not torch_plain and (mod == "torch" or mod.startswith("torch."))) or (
            mod not in sys.modules):
        return False
    slots = _slot_names(t)
    mapping = _mapping_base(t)
    return ((t.__new__ is object.__new__ or mapping is not None)
            and slots is not None and (t.__dictoffset__ != 0 or slots)
            and all(type(getattr(t, n, None)) is types.MemberDescriptorType for n in slots)
            and isinstance(getattr(t, "__dict__", None), types.MappingProxyType)
            and all(getattr(b, "__module__", "") != "builtins" or b is object
                    or b is dict and mapping is not None for b in t.__mro__))


_decorated_cache = {}


def _decorated_defs(modname):
    """The names the module-level decorated def and class statements of the
    user's module bind (those of a try: body too, as the replay's
    definitions rule runs them); empty when its source cannot be read."""
    m = sys.modules.get(modname)
    path = getattr(m, "__file__", None)
    if not isinstance(path, str):
        return frozenset()
    key = (modname, path)  # read once per run
    names = _decorated_cache.get(key)
    if names is None:
        import ast

        _dynrec.load_embedded("definitions")  # the replay's one rule
        try:
            with open(path, "rb") as f:
                body = _dynrec.definitions.definitions(ast.parse(f.read(), path).body)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            body = []
        names = _decorated_cache[key] = frozenset(
            st.name for st in body if isinstance(st, (
                ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.decorator_list)
    return names


def _traceable_wrapper(cls):
    """Whether cls, a subclass of torch.Tensor, is a traceable wrapper
    subclass (__tensor_flatten__, __tensor_unflatten__ and a
    __torch_dispatch__ of its own), as torch's own test tells."""
    pd = sys.modules.get("torch.utils._python_dispatch")
    test = getattr(pd, "is_traceable_wrapper_subclass_type", None)
    try:
        return bool(test(cls)) if test is not None else False
    except Exception:
        return False


def _made_by_body(q, name, v):
    """Whether v, the attribute name of the class of qualname q, is what a
    def or class statement of its body made (a method, a static or class
    method, a property or cached_property of a method of that name, a
    nested class): the replay's class statement makes those itself."""
    v = body_function(v) or v
    return isinstance(v, (types.FunctionType, type)) and (
        getattr(v, "__qualname__", None) == "%s.%s" % (q, name))


def _own_attrs(fn):
    """A function's own attributes (fn.pred = True, the mark
    torch._dynamo.assume_constant_result sets), which Dynamo reads and
    guards; not functools.wraps's __wrapped__ and the like.  None when it
    has none."""
    d = getattr(fn, "__dict__", None)
    d = {k: x for k, x in d.items() if isinstance(k, str) and not k.startswith(
        "__")} if type(d) is dict else None
    return d or None


def _made_by_enum(b, name):
    """Whether attribute name of class b is what an Enum class statement
    makes of the body's definitions (a member, _member_map_, _new_member_):
    the replay's class statement makes those itself."""
    return isinstance(b, enum.EnumMeta) and (
        (name[:1] == "_" and name[-1:] == "_") or name in b.__members__)


def _global_state():
    """The global torch state Dynamo guards on (GLOBAL_STATE)."""
    st = {"grad": torch.is_grad_enabled(), "default_dtype": str(torch.get_default_dtype()),
          "deterministic": torch.are_deterministic_algorithms_enabled(),
          "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
          "num_threads": torch.get_num_threads()}
    try:
        if torch.is_inference_mode_enabled():
            st["inference_mode"] = True
        # Dispatch keys excluded that the replay may exclude again
        # (EXCLUDABLE_KEYS: a compile inside a TorchDispatchMode's
        # __torch_dispatch__ runs below autograd): TENSOR_MATCH guards the
        # keys a tensor has under them.
        ks = torch._C._dispatch_tls_local_exclude_set()
        D = torch._C.DispatchKey
        keys = [k for k in EXCLUDABLE_KEYS if isinstance(getattr(D, k, None), D)
                and ks.has(getattr(D, k))]
        if keys:
            # its bits exactly, for the same torch; the names for another
            st["tls_exclude"] = {"raw": ks.raw_repr(), "torch": torch.__version__, "keys": keys}
    except Exception:
        pass
    try:
        # torch.backends.cuda.matmul.allow_tf32, in GLOBAL_STATE on any device
        st["allow_tf32"] = bool(torch._C._get_cublas_allow_tf32())
    except Exception:
        pass
    try:
        st["autocast_cpu"] = [torch.is_autocast_enabled("cpu"),
                              str(torch.get_autocast_dtype("cpu"))]
    except Exception:
        pass
    try:
        # Inside `with torch.autograd.graph.disable_saved_tensors_hooks(msg)`:
        # Dynamo's graph restores msg when a nested one exits.
        ag = torch._C._autograd
        if not ag._saved_tensors_hooks_is_enabled():
            msg = ag._saved_tensors_hooks_get_disabled_error_message()
            st["saved_tensors_hooks_disabled"] = msg if isinstance(msg, str) else ""
    except Exception:
        pass
    try:
        # Inside a function under torch._dynamo.error_on_graph_break(True):
        # Dynamo's tracer reads it at its start (a frame that traces no op
        # is compiled empty, not skipped).
        utils = sys.modules.get("torch._dynamo.utils")
        if utils is not None and utils._get_error_on_graph_break() is True:
            st["error_on_graph_break"] = True
    except Exception:
        pass
    return st


# The torch.func transforms replay enters again (its wrapped tensors are
# rebuilt by _functorch's own wrapping calls); Jvp's dual tensors are not.
FUNCTORCH_REPLAYED = ("Vmap", "Grad", "Functionalize")


def _functorch_transforms():
    """The torch.func transforms (functionalize, vmap, grad, ...) the compile
    runs inside, outermost first, as [{"type", "level", and what entering
    it again takes}]: Dynamo traces their wrapped tensors and guards on the
    stack (FUNCTORCH_STACK_MATCH)."""
    try:
        stack = torch._C._functorch.get_interpreter_stack()
    except Exception:
        return []
    pf = sys.modules.get("torch._functorch.pyfunctorch")
    coerce = module_attr(pf, "coerce_cinterpreter") if pf is not None else None
    out = []
    for ci in stack or ():
        d = {"type": str(ci.key()).rsplit(".", 1)[-1], "level": int(ci.level())}
        try:
            i = coerce(ci) if coerce is not None else None
            if d["type"] == "Vmap" and i is not None:
                d["batch_size"], d["randomness"] = int(i.batch_size()), str(i.randomness())
            elif d["type"] == "Grad" and i is not None:
                d["prev_grad_mode"] = bool(i.prev_grad_mode())
            elif d["type"] == "Functionalize" and i is not None:
                d["add_back_views"] = bool(i.functionalize_add_back_views())
        except Exception:
            pass
        out.append(d)
    return out


MAX_DYNAMISM = 256  # argument sources of one frame's recorded dynamism


def _dynamism(code):
    """What torch.compiler.set_stance("eager_then_compile") found across the
    frame's first calls, which its compile reads to make those dimensions
    dynamic: code_context's "dynamism" of the code (argument name ->
    {source: one bool per dimension}), as JSON; None where there is none."""
    try:
        from torch._dynamo.code_context import code_context
        if not code_context.has_context(code):
            return None
        d = code_context.get_context(code).get("dynamism")
    except Exception:
        return None
    if not isinstance(d, dict):
        return None
    out, n = {}, 0
    for name, per in d.items():
        if not isinstance(name, str) or not isinstance(per, dict):
            return None
        out[name] = {}
        for src, dims in per.items():
            n += 1
            if n > MAX_DYNAMISM or not isinstance(src, str) or not isinstance(dims, tuple) or (
                    len(dims) > 64 or not all(type(b) is bool for b in dims)):
                return None
            out[name][src] = list(dims)
    return out


def _isolate_region():
    """The region of torch.compile(..., isolate_recompiles=True) the compile
    runs in (each such call has its own cache entries), or None: the shared
    cache, or a torch without regions."""
    try:
        region = torch._C._dynamo.eval_frame.get_eval_frame_isolate_recompiles_id()
    except Exception:
        return None
    return region if type(region) is int and region >= 0 else None


def _forced_backend():
    """Whether the compile ran under torch.compiler.set_stance's
    force_backend (the stance eval_frame holds)."""
    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    stance = module_attr(eval_frame, "_stance") if eval_frame is not None else None
    return getattr(stance, "stance", None) == "default" and getattr(
        stance, "backend", None) is not None


def _recompile_limit():
    """torch.compile(..., recompile_limit=N) of the compile, or None: the
    ConvertFrameAssert calling _compile holds it (and patches
    config.recompile_limit around the compile, which the config shows as
    if the user had set it)."""
    f = sys._getframe(1)
    for _ in range(16):
        if f is None:
            return None
        if f.f_code.co_name == "__call__" and f.f_code.co_filename.endswith(
                os.path.join("_dynamo", "convert_frame.py")):
            me = f.f_locals.get("self")
            if type(me).__name__ == "ConvertFrameAssert":
                n = getattr(me, "_recompile_limit", None)
                return n if type(n) is int else None
        f = f.f_back
    return None


def _marshalled(code):
    """The code's marshal bytes; None for one holding a constant marshal
    refuses (Dynamo puts the dtype of `with torch.autocast(dtype=...)` into
    the resume function it makes)."""
    try:
        return marshal.dumps(code)
    except ValueError:
        return None


def _user_code(code):
    """Code the stored sources define (a resume function's code they do not)."""
    fn = code.co_filename
    if not fn or fn.startswith("<") or code.co_name.startswith("torch_dynamo_resume_in_"):
        return False
    return os.path.realpath(fn) in _dynamo._stored_files


def _backend(compiler_fn):
    """How the backend was given: a registered name, or a function by reference."""
    fn, seen = compiler_fn, 0
    while fn is not None and seen < 10:
        if type(fn).__name__ in ("_TorchCompileInductorWrapper", "_TorchCompileWrapper"):
            d = {"name": fn.compiler_name, "dynamic": getattr(fn, "dynamic", None)}
            if type(fn).__name__ == "_TorchCompileInductorWrapper":
                opts = {k: v for k, v in getattr(fn, "config", {}).items()
                        if isinstance(v, (bool, int, float, str, type(None)))}
                d["options"] = opts
                return d
            inner = getattr(fn, "compiler_fn", None)
            if inner is not None and not _is_registered(fn.compiler_name):
                _backend_ref(d, inner)
            return d
        inner = _inner_backend(fn)
        if inner is None or inner is fn:
            break
        fn, seen = inner, seen + 1
    d = {"name": getattr(fn, "__name__", type(fn).__name__), "dynamic": None}
    _backend_ref(d, fn)
    return d


def _inner_backend(fn):
    """The backend fn wraps (torch.compile's wrapper, the debug wrapper,
    a backend object's compiler_fn), or None."""
    if type(fn).__name__ == "_TorchCompileWrapper":
        return getattr(fn, "compiler_fn", None)
    return getattr(fn, "_torchdynamo_orig_backend", None) or getattr(fn, "compiler_fn", None)


def _local_backend(compiler_fn):
    """The backend function behind compiler_fn's wrappers when it is one
    defined inside a function of the user's files, which no name reaches;
    else None."""
    fn, seen = compiler_fn, 0
    while fn is not None and seen < 10:
        inner = _inner_backend(fn)
        if inner is None or inner is fn:
            break
        fn, seen = inner, seen + 1
    if type(fn) is types.FunctionType and "<locals>" in fn.__qualname__ and _user_code(
            fn.__code__) and _Capture(0).ref(fn) is None:
        return fn
    return None


def _backend_ref(d, fn, depth=0):
    """A backend function by reference; a backend object (CompileCounter,
    the backend of PyTorch's tests) by its class, for replay to make one."""
    r = _Capture(0).ref(fn)
    if r is not None:
        d["function"] = r
    elif isinstance(fn, types.FunctionType):
        # A function no name reaches (defined in a test, one per call):
        # which one, as for a backend object, for the replay's stand-in.
        n = _backend_number(fn)
        if n is not None:
            d["instance"] = n
    elif not isinstance(fn, (types.MethodType, type)):
        cls = _Capture(0).ref(type(fn))
        if cls is not None:
            d["instance_of"] = cls
            # Which object: Dynamo guards on the backend's identity, so two
            # objects of one class (a new CompileCounter per torch.compile)
            # recompile where one object would not.
            n = _backend_number(fn)
            if n is not None:
                d["instance"] = n
            # The backend it wraps: CompileCounterWithBackend("eager"), or
            # of another backend object (EagerAndRecordGraphs()).
            # (From the instance's own __dict__: never a property's code.)
            try:
                arg = vars(fn).get("backend")
            except TypeError:
                arg = None
            if isinstance(arg, str) and len(arg) < 100:
                d["backend_arg"] = arg
            elif arg is not None and depth < 3:
                inner = {}
                _backend_ref(inner, arg, depth + 1)
                if inner:
                    d["backend_arg"] = inner


# Backend objects seen, numbered by first sight (_number_of).
_backend_objects = {}


def _backend_number(fn):
    return _number_of(_backend_objects, _backend_count, fn)


_backend_count = itertools.count()


def _is_registered(name):
    try:
        from torch._dynamo.backends.registry import _COMPILER_FNS, _lazy_import

        _lazy_import()
        return name in _COMPILER_FNS
    except Exception:
        return False


def _config_now(now):
    """The config in force (now: dynamo.py's snapshot for this compile, None
    if it could not be taken) where it differs from the start's."""
    start = getattr(_dynrec, "config_start_snapshot", None) or {}  # adapter.py
    if now is None:
        return {}
    return {k: v for k, v in now.items() if start.get(k) != v}


def capture_frame(code, f_globals, f_locals, closure, compiler_fn, one_graph, export, cid,
                  config=None, hooks=None):
    """Stores the inputs of the frame about to be compiled (see the top)."""
    _capture_count[0] += 1
    no = _capture_count[0]
    # The frame's own file is about to be traced: stored now, so that its
    # classes count as the user's (a class local to a test method).
    store_source(code.co_filename)
    c = _Capture(_capture_bytes)
    reason = None
    root = {"module": f_globals.get("__name__") if isinstance(f_globals, dict) else None}
    try:
        c.rows.append(None)
        root["locals"] = c.named(f_locals or {}, "argument %r")
        root["closure"] = [c.cell(cell, "closure variable %r" % name)
                           for cell, name in zip(closure or (), code.co_freevars)]
        gff = getattr(hooks, "guard_filter_fn", None)
        if gff is not None:
            # torch.compile(options={"guard_filter_fn": f}): which guards
            # Dynamo keeps, called by it at the end of the compile.
            root["guard_filter_fn"] = c.node(gff, "guard_filter_fn")
        bfn = _local_backend(compiler_fn)
        if bfn is not None:
            # A backend function no name reaches (a test's own def
            # backend(gm, args), closing over its counters): by value, for
            # the replay to call it as the recording did (one that raises
            # SkipFrame skips the frame); left out where it cannot be.
            n = c.optional(bfn, "backend")
            if n is not None:
                root["backend_fn"] = n
        direct, seen = set(), set()
        _code_names(code, direct, seen)
        g = {}
        if isinstance(f_globals, dict):
            gmod = f_globals.get("__name__")
            for name in sorted(direct):
                if name in f_globals and not name.startswith("__"):
                    g[name] = f_globals[name]
                    if isinstance(gmod, str):
                        c.global_of.setdefault(id(f_globals[name]), (gmod, name))
            root["globals"] = c.named(g, "global %r")
            # Globals only the module's other code reads: a value that cannot
            # be captured is left out rather than blocking the replay.
            c.soft = True
            soft = {}
            for name in sorted(_module_reach(f_globals) - direct):
                if name not in f_globals or name.startswith("__"):
                    continue
                mark = len(c.rows)
                try:
                    soft[c.node(name, "name")] = c.node(f_globals[name], "global %r" % name)
                except _TooBig:
                    del c.rows[mark:]
                    c.memo = {k: v for k, v in c.memo.items() if v < mark}
            n = len(c.rows)
            c.rows.append((n, "dict", "builtins.dict",
                           json.dumps([[k, v] for k, v in soft.items()]), None))
            root["soft_globals"] = n
            c.soft = False
    except _TooBig as exc:
        reason = str(exc)
    except RecursionError:
        reason = "values nested too deeply"
    if reason is None and c.opaque:
        path, tname = c.opaque[0]
        reason = "%s of type %s" % (path, tname)
    stack = _functorch_transforms()
    transforms = [d["type"] for d in stack]
    if any(d["type"] not in FUNCTORCH_REPLAYED or len(d) == 2 for d in stack):
        # The replay enters vmap, grad and functionalize again around the
        # compile and wraps its tensors as they were; not jvp's duals.
        reason = "compiled inside torch.func's %s: the replay enters %s only" % (
            " > ".join(transforms), ", ".join(t.lower() for t in FUNCTORCH_REPLAYED))
    c.rows[0] = (0, "frame", "frame", json.dumps(root), None)
    _ids_of(c)
    closure = root.get("closure")
    if reason is None and closure is not None and len(closure) != len(code.co_freevars):
        reason = "closure cells missing"
    user = _user_code(code)
    data = {"replayable": reason is None, "nodes": len(c.rows), "data_bytes": c.data_bytes,
            "backend": _backend(compiler_fn), "fullgraph": bool(one_graph),
            "config": _config_now(config), "user_code": user, "global_state": _global_state(),
            "thread_name": threading.current_thread().name,
            # How the locals are passed, for a repro of a library's frame
            # (whose source the trace does not hold).
            "args": {"names": list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                                     + bool(code.co_flags & 0x04)
                                                     + bool(code.co_flags & 0x08)]),
                     "argcount": code.co_argcount, "kwonly": code.co_kwonlyargcount,
                     "flags": code.co_flags & 0x0C}}
    if reason is not None:
        data["reason"] = reason
    if export is True:
        # torch._dynamo.export (and strict torch.export): Dynamo guards and
        # breaks otherwise; the replay compiles it for export too.
        data["export"] = True
    if transforms:
        data["functorch"] = transforms
        data["functorch_stack"] = stack
    region = _isolate_region()
    if region is not None:
        data["isolate_region"] = region
    dynamism = _dynamism(code)
    if dynamism is not None:
        data["dynamism"] = dynamism
    limit = _recompile_limit()
    if limit is not None:
        data["recompile_limit"] = limit
    if _forced_backend():
        # torch.compiler.set_stance("default", force_backend=B): Dynamo
        # compiled the frame with B (the backend above), not through
        # torch.compile's wrapper; the replay forces it so again.
        data["force_backend"] = True
    if "torch_dynamo_resume_in_" in code.co_name:
        # Two resume functions (the branches of a data-dependent jump) share
        # a name and a line: replay tells them apart by their bytecode.
        data["code_digest"] = code_digest(code)
    place = code_place(code)
    if place is not None:
        data["place"] = place  # (two lambdas of one line share the rest)
    payload = None
    if not user:
        payload = _marshalled(code)
        # (a resume function without it, whose code holds a dtype, is the
        # one the replay's Dynamo makes for the earlier compile)
        if payload is None and "torch_dynamo_resume_in_" not in code.co_name:
            data["replayable"] = False
            data["reason"] = reason = "its code object cannot be marshalled"
    # Also for a frame that is not replayable: what could be captured still
    # tells what the frame was called with.
    _dynrec.values(no, [r for r in c.rows if r is not None])
    emit("capture", code=code, cid=cid, num=no, text=reason, data=data,
         payload=payload, key="capture %s %s" % (cid, _qualname(code)))


# Guard sources that read an attribute of another module: Dynamo names the
# module G['__import_<name with . as _dot_>'] in the frame's globals, or by
# the global that holds it (G['config'].SCALE of `import config`).
_IMPORT_ATTR = re.compile(
    r"G\['([A-Za-z_][A-Za-z0-9_]*)'\]\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?")
_STATE_TYPES = (dict, list, set, bool, int, float, str)
# Guard sources that read a global of the frame's own module: G['name'].
_OWN_GLOBAL = re.compile(r"G\['([A-Za-z_][A-Za-z0-9_]*)'\]")


_id_ints = collections.OrderedDict()  # the ints earlier captures wrote as id nodes
_MAX_ID_INTS = 4096


def _ids_of(c):
    """An int among the frame's values that is the id() of another of them
    (`ref_id = id(m1)` beside m1 itself; Dynamo compares `id(self) ==
    ref_id`) becomes an `id` node of that value, which the replay makes as
    id() of the value it makes; one an earlier capture wrote so (m1's id
    passed again beside another module) an `id` node of no value here,
    which the replay makes as the id of the value it made there.  (An
    address is never below 2**16; the values are alive until the capture
    is written, so their ids are theirs.)"""
    for i, row in enumerate(c.rows):
        if row is None or row[1] != "int":
            continue
        v = json.loads(row[3])
        if type(v) is not int or v < 1 << 16:
            continue
        m = c.memo.get(v)
        if m is not None and m != i and c.rows[m] is not None and c.rows[m][1] != "int":
            c.rows[i] = (i, "id", row[2], json.dumps({"of": m, "int": v}), None)
            _id_ints[v] = True
            _id_ints.move_to_end(v)
            if len(_id_ints) > _MAX_ID_INTS:
                _id_ints.popitem(last=False)
        elif v in _id_ints:
            c.rows[i] = (i, "id", row[2], json.dumps({"of": None, "int": v}), None)


def _parametrized(t):
    """(base class, tensor names) of a class torch.nn.utils.parametrize made
    (Parametrized<Base>: its one base, torch's __getstate__ and
    __deepcopy__, and a property of parametrize's per parametrized tensor);
    None for any other class."""
    if not isinstance(t, type) or len(t.__bases__) != 1 or (
            getattr(t, "__module__", None) != "torch.nn.utils.parametrize"):
        return None
    base = t.__bases__[0]
    if t.__name__ != "Parametrized" + base.__name__ or t.__qualname__ != t.__name__:
        return None
    names = []
    for k, v in list(vars(t).items()):
        if k in ("__module__", "__doc__", "__getstate__", "__deepcopy__"):
            continue
        fget = getattr(v, "fget", None) if isinstance(v, property) else None
        if getattr(fget, "__qualname__", None) != "_inject_property.<locals>.get_parametrized" or (
                not k.isidentifier()):
            return None
        names.append(k)
    return (base, names) if names and len(names) <= 16 else None


def _program_class(m, name):
    """Whether m is a class of a module of the program that its module
    binds as name (its qualname)."""
    return (isinstance(m, type) and isinstance(getattr(m, "__module__", None), str)
            and _user_module(m.__module__) and getattr(m, "__qualname__", None) == name
            and vars(sys.modules.get(m.__module__, types)).get(name) is m)


def capture_module_state(code, output_graph):
    """After a compile's guards are built (CheckFunctionManager), before its
    code runs: the attributes of other modules the guards read
    (G['__import_m'].attr, G['m'].attr) whose value is data -- a dict, list, set, number
    or string, such as a registry a library fills while the program runs,
    which a fresh import in the replay would not hold.  One capture_state
    event per compile, its value tree a frame node whose `state` is a list
    of [module, attribute, value] lists."""
    scope = getattr(output_graph, "global_scope", None)
    guards = getattr(output_graph, "guards", None)
    if not isinstance(scope, dict) or guards is None:
        return
    found = {}
    # The frame's own module, where it is a library's (a program's globals
    # are captured with its frames): the data it holds, which a fresh
    # import would not (transformers' _CAN_RECORD_REGISTRY of the models
    # that ran).
    own = sys.modules.get(scope.get("__name__")) if isinstance(
        scope.get("__name__"), str) else None
    if own is None or vars(own) is not scope or _user_module(own.__name__):
        own = None
    for g in list(guards):
        name = getattr(g, "name", None)
        if not isinstance(name, str) or "G['" not in name:
            continue
        for attr in _OWN_GLOBAL.findall(name) if own is not None else ():
            if not attr.startswith("__"):  # (data only: see below)
                found.setdefault((own.__name__, attr), own)
        for imp, attr, more in _IMPORT_ATTR.findall(name):
            m = scope.get(imp)
            if isinstance(m, types.ModuleType) and not attr.startswith("__"):
                found.setdefault((m.__name__, attr), m)
                if more:
                    imp, attr, m = attr, more, vars(m).get(attr)
            if _program_class(m, imp) and not attr.startswith("__"):
                # A class attribute of a class of the program's modules that
                # the guards read (G['Config'].flag, G['__import_m'].Config.
                # flag, set while it runs): by "Class.attr" in its module.
                found.setdefault((m.__module__, "%s.%s" % (imp, attr)), m)
    if not found:
        return
    c = _Capture(_capture_bytes)
    c.soft = True  # what cannot be captured is left out, never blocking the replay
    c.rows.append(None)
    items = []
    for (mname, attr), m in sorted(found.items(), key=lambda kv: kv[0]):
        v = vars(m).get(attr.rpartition(".")[2])  # never a __getattr__; a class's own
        # A container subclass (a registry class over dict) by its items; in
        # a module of the program, which the replay defines from its
        # definitions only, as the object it is (made again there).
        if isinstance(v, (dict, list, set)) and type(v) not in (dict, list, set) and not (
                _user_module(mname)):
            v = _own_items(v)
        if type(v) not in _STATE_TYPES and not isinstance(v, (dict, list, set)):
            continue
        n = len(c.rows)
        try:
            c.rows.append(None)
            kids = [c.node(mname, "name"), c.node(attr, "name"),
                    c.node(v, "%s.%s" % (mname, attr))]
            c.rows[n] = (n, "list", "builtins.list", json.dumps(kids), None)
            items.append(n)
        except (_TooBig, RecursionError):
            del c.rows[n:]
            c.memo = {k: i for k, i in c.memo.items() if i < n}
    if not items:
        return
    n = len(c.rows)
    c.rows.append((n, "list", "builtins.list", json.dumps(items), None))
    c.rows[0] = (0, "frame", "frame", json.dumps({"module": None, "state": n}), None)
    _capture_count[0] += 1
    no = _capture_count[0]
    cid = None
    try:
        cur = torch._guards.CompileContext.current_compile_id()
        cid = str(cur) if cur is not None else None
    except Exception:
        pass
    _dynrec.values(no, [r for r in c.rows if r is not None])
    emit("capture_state", code=code, cid=cid, num=no, data={"attributes": len(items)},
         key="capture_state %s %s" % (cid, _qualname(code)))
