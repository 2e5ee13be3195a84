"""value_kinds.py -- the kinds of a captured value, and the one check of a tree of them.

capture.py (the recorder) writes a frame's inputs as a tree of value nodes
(schema/SCHEMA.md, value_nodes): per node a kind, a type name, a JSON value
that names its children by node number, and a blob.  replay.py rebuilds the
values, repro_values.py writes code that rebuilds them; both read the tree
from a stranger's trace, so both check it here first, whole, before
anything is built: every kind known, every value of its kind's form, every
reference to a node that exists, nothing nested deeper than MAX_DEPTH from
the frame node.  What a reader checks beyond the form (a tensor's bytes
against its limit, a dtype its torch has) it gives check_tree as `more`.

A new value kind is added here (its form), in capture.py (written), in
replay.py (rebuilt) and in repro_values.py (written as code); its tests go
where tests/README.md says.
"""

import functools
import keyword
import types

MAX_DEPTH = 200      # capture.py stops there; a tree nested deeper is malformed
MAX_CODE = 16 << 20  # the most bytes of a bytes or bytearray value, or of code


def _dims(v, lo):
    """Whether v is a tensor's sizes or strides: at most 64, each an int
    from lo below 2**62, or null (a symbolic dim)."""
    return isinstance(v, list) and len(v) <= 64 and all(
        x is None or (type(x) is int and lo <= x < 1 << 62) for x in v)


def _ints(v, n, lo, hi):
    return isinstance(v, list) and len(v) <= n and all(type(x) is int and lo <= x < hi
                                                         for x in v)


def numpy_dtype_str(v):
    """Whether v is a numpy number dtype's str: byte order, kind, size."""
    return isinstance(v, str) and 2 <= len(v) <= 4 and v[0] in "<>|=" and v[1] in "biufc" and (
        v[2:].isdigit())


def _dtype_name(v):
    return isinstance(v, str) and v.startswith("torch.") and len(v) < 40 and v[6:].isidentifier()


# Kinds whose value is data, and its form.
# The pathlib classes a "path" node names (made from the path's text, which
# touches no file).
PATH_CLASSES = ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath",
                "WindowsPath")

SCALARS = {
    "none": lambda v: v is None, "ellipsis": lambda v: v is None,
    "bool": lambda v: type(v) is bool, "int": lambda v: type(v) is int,
    "float": lambda v: isinstance(v, str) and len(v) < 40,
    "complex": lambda v: isinstance(v, list) and len(v) == 2 and all(
        isinstance(x, str) and len(x) < 40 for x in v),
    "str": lambda v: isinstance(v, str),
    "logger": lambda v: v is None or isinstance(v, str),
    # torch._dynamo.patch_dynamo_config(changes) (dont_skip_tracing(),
    # disable_nested_graph_breaks()): its changes, config name -> a
    # constant.
    "config_patch": lambda v: isinstance(v, dict) and 0 < len(v) <= 16 and all(
        isinstance(k, str) and k.isidentifier() and len(k) < 100 and (
            x is None or type(x) in (bool, int) or (isinstance(x, str) and len(x) < 200))
        for k, x in v.items()),
    "bytes": lambda v: type(v) is int and 0 <= v <= MAX_CODE,
    "bytearray": lambda v: type(v) is int and 0 <= v <= MAX_CODE,
    "size": lambda v: _ints(v, 64, 0, 1 << 62),
    "range": lambda v: isinstance(v, list) and len(v) == 3 and all(
        type(x) is int for x in v) and v[2] != 0,
    # A pathlib path: [its class's name, its text].
    "path": lambda v: isinstance(v, list) and len(v) == 2 and v[0] in PATH_CLASSES and (
        isinstance(v[1], str) and len(v[1]) < 1 << 16),
    "dtype": _dtype_name,
    "device": lambda v: isinstance(v, str) and len(v) < 64,
    "pymodule": lambda v: isinstance(v, str),
    "opaque": lambda v: v is None or isinstance(v, dict),
    # A torch operator by its name under torch.ops ("aten.sin.default",
    # "aten.sin", "higher_order.cond"): torch_op() resolves it.
    "torch_op": lambda v: torch_op_parts(v) is not None,
    # A node of the fx graph a graph_module is built from, by its name;
    # only inside that graph's nodes.
    "fx_node": lambda v: isinstance(v, str) and v.isidentifier() and len(v) < 256,
    # A numpy dtype of numbers by its str ("<f2"); numpy.finfo / iinfo of one.
    "npdtype": lambda v: numpy_dtype_str(v),
    "npinfo": lambda v: isinstance(v, list) and len(v) == 2 and v[0] in ("finfo", "iinfo") and (
        numpy_dtype_str(v[1])),
}
# Kinds whose value is a list of nodes.
SEQUENCES = ("list", "tuple", "set", "frozenset", "slice")
# Kinds whose value is a JSON object, with the fields that hold nodes: a
# node number, or null; a list of nodes for the fields in _LIST_FIELDS, an
# object name -> node for those in _DICT_FIELDS.
OBJECTS = {
    "namedtuple": ("items",), "enum": (), "dataclass": ("fields", "extra", "mapping"),
    "module": ("dict", "class_attrs", "method_defaults", "class_cells", "class_cell_nodes",
               "method_attrs"),
    "object": ("dict", "slots", "class_attrs", "mapping", "method_defaults", "class_cells",
               "class_cell_nodes", "method_attrs"),
    "function": ("closure", "defaults", "kwdefaults", "dict"),
    "class": ("class_attrs", "class_cells", "method_defaults", "class_cell_nodes",
              "method_attrs"),
    "method": ("self", "func"), "tensor": ("view_of", "grad", "attrs"),
    "frame": ("locals", "closure", "globals", "soft_globals", "state", "guard_filter_fn"),
    "singleton": (),
    "npscalar": (), "ndarray": (), "generator": (), "compiled": ("orig",), "random": ("dict",),
    "wrapped_tensor": ("inner",),
    # A tensor of a traceable wrapper subclass (class: REF): its
    # __tensor_flatten__'s inner tensors (attribute name -> node) and
    # context, its size and stride, requires_grad, leaf and marks (as a
    # tensor's); made by the class's __tensor_unflatten__.  A view adds its
    # base (view_of) and storage offset (offset, null where symbolic).
    "subclass_tensor": ("inner_tensors", "ctx", "view_of"),
    "graph_module": ("nodes", "codegen", "co_fields", "dict"),
    # functools.partial(func, *args, **keywords), and its __dict__;
    # collections.defaultdict(factory, entries) (a dict node).
    "partial": ("func", "args", "keywords", "dict"), "defaultdict": ("factory", "entries"),
    # collections.deque(items, maxlen).
    "deque": ("items",),
    # weakref.WeakKeyDictionary / WeakValueDictionary of a dict node's
    # entries, WeakSet of items; weakref.ref of its referent (null: dead).
    "weak": ("entries", "items"), "weakref": ("referent",),
    # A generator not started, made by func(*args, **kwds) (a @contextmanager
    # object's gen).
    "pygenerator": ("func", "args", "kwds"),
    # A lazy module's UninitializedParameter / UninitializedBuffer (no
    # shape, no data); a module hook torch wraps (_WrappedHook: the hook and
    # the module it is called with, or null).
    "uninitialized": (), "module_hook": ("hook", "module"),
    # torch.utils.hooks.RemovableHandle: the hooks dict, its id, the other
    # dicts it removes the id from.
    "hook_handle": ("hooks", "extra_dicts"),
    # A builtin iterator: ITERATORS[make](*args), then __setstate__(state)
    # when there is one (a list iterator's index, zip's strict).
    "iterator": ("args", "state"),
    # An exception as a value: its class (REF), args (a tuple node) and
    # __dict__ (a dict node).
    "exception": ("args", "dict"),
    # types.MappingProxyType over a dict (a dict node).
    "mappingproxy": ("mapping",),
    # The ctx of a torch.autograd.Function (class: REF of the Function):
    # its __dict__ and the C attributes of AUTOGRAD_CTX_ATTRS.
    "autograd_ctx": ("dict", "c_attrs"),
    # An int that was id() of another value of the frame: id() of that
    # value as made (its recorded int where that value is being made); of
    # null: the id of the value an earlier capture's id node of the same
    # int made (the int itself where none did).
    "id": ("of",),
}
# Dynamo's registries of functions by id besides allow_in_graph's (a
# function node's marks): the mark -> the set of ids in trace_rules.
DYNAMO_MARKS = {"nonstrict_trace": "_nonstrict_trace_callable_ids",
                "leaf_function": "_leaf_function_ids"}
# The C attributes of an autograd.Function's ctx that an autograd_ctx node
# holds and the replay sets (what forward has set, what apply computed).
AUTOGRAD_CTX_ATTRS = ("needs_input_grad", "materialize_grads", "to_save", "dirty_tensors",
                      "non_differentiable")
# The weak containers a "weak" node makes again (weakref's).
WEAK_CLASSES = ("WeakKeyDictionary", "WeakValueDictionary", "WeakSet")
# What makes a builtin iterator again (an iterator node's make): builtins of
# these names.
ITERATORS = ("iter", "reversed", "filter", "map", "zip", "enumerate")
# A dict's iterators part way through (a dict comprehension's `.0`): made
# again by iter() of dict.keys / values / items of the same dict, advanced
# by as many items as it had given (an iterator node's state).
DICT_ITERATORS = ("dict_keys", "dict_values", "dict_items")
DICT_ITERATOR_TYPES = {type(iter({})): "dict_keys", type(iter({}.values())): "dict_values",
                       type(iter({}.items())): "dict_items"}
# The builtin iterators captured by their __reduce__: over lists, tuples,
# ranges and strings, and filter, map, zip, enumerate and reversed over
# those.  (A dict's or a set's reduces to a list's: left out.)
ITERATOR_TYPES = frozenset(type(x) for x in (
    iter([]), iter(()), iter(range(0)), iter(range(1 << 64)), iter(""), iter("\u0100"),
    reversed([]), reversed(()), filter(None, ()), map(None, ()), zip(), enumerate(())))
# An fx GraphModule (graph_module): its graph's nodes in order, each a tuple
# node (op, name, target, args, kwargs, type) whose args refer to earlier
# nodes as fx_node; op one of these.
FX_OPS = ("placeholder", "get_attr", "call_function", "call_module", "call_method", "output")
# The attributes of a GraphModule that its graph makes (never captured,
# never set from a trace).
FX_GRAPH_ATTRS = ("_graph", "_code", "_lineno_map", "_prologue_start")
# The torch.func transforms whose wrapped tensors replay makes again (a
# wrapped_tensor's transform), and the levels a transform stack may have.
FUNCTORCH_WRAPPERS = ("Vmap", "Grad", "Functionalize")
MAX_FUNCTORCH_LEVELS = 64
_LIST_FIELDS = ("items", "closure", "nodes", "extra_dicts")
_DICT_FIELDS = ("fields", "slots", "class_attrs", "method_defaults", "class_cells", "c_attrs",
                "class_cell_nodes", "method_attrs", "inner_tensors")
# Every kind: the above, a dict (a list of [key node, value node] pairs)
# and a cell (its content's node, or null when empty).
KINDS = frozenset(SCALARS) | frozenset(SEQUENCES) | frozenset(OBJECTS) | {"dict", "cell"}


def children(kind, v):
    """The node numbers a node's value refers to (for a value of the wrong
    form, what it would refer to; check_tree refuses it)."""
    if kind in SEQUENCES:
        return v if isinstance(v, list) else []
    if kind == "dict":
        return [c for p in v if isinstance(p, list) for c in p] if isinstance(v, list) else []
    if kind == "cell":
        return [] if v is None else [v]
    out = []
    if kind in OBJECTS and isinstance(v, dict):
        for key in OBJECTS[kind]:
            c = v.get(key)
            if isinstance(c, list):
                out.extend(c)
            elif isinstance(c, dict):
                out.extend(c.values())
            elif c is not None:
                out.append(c)
    return out


def function_where(v):
    """(filename, qualname, first line) of the code of a function node's
    value: the code's own qualname where functools.wraps gave the function
    the wrapped one's (code_qualname; traces of 0.7.3 and older hold only
    the function's __qualname__).  Replay and repro find the code by it."""
    cq = v.get("code_qualname")
    return (v.get("filename"), cq if isinstance(cq, str) else v.get("qualname"),
            v.get("firstlineno"))


def code_place(code):
    """Where the body of a lambda, comprehension or generator expression
    starts, [line, column]: with its file, qualname and first line, which
    of the code objects one line makes it is (two lambdas on a line share
    the rest; a def has a line of its own).  None for other code, and where
    Python keeps no columns."""
    if not code.co_name.startswith("<") or not hasattr(code, "co_positions"):
        return None
    for line, _, col, _ in code.co_positions():
        if line is not None and col:  # (RESUME, MAKE_CELL and the like have column 0)
            return [line, col]
    return None


def is_place(v):
    """Whether v has code_place's form (read from a trace)."""
    return isinstance(v, list) and len(v) == 2 and all(type(x) is int and 0 <= x < 1 << 31
                                                       for x in v)


def namedtuple_made(d):
    """(typename, fields, defaults, number) of a class reference to a namedtuple
    class no module binds (capture's _namedtuple_made: {"module",
    "qualname", "namedtuple": {"fields", "defaults", "number"}}), which
    replay and repro make with collections.namedtuple, one class per
    number (the recording's classes, numbered in the order first
    captured); None for any other reference.
    Raises ValueError for one that is malformed: a name or field that is
    not a plain identifier, a repeated field, a default that is not None, a
    bool, an int or a string, more defaults than fields."""
    nt = d.get("namedtuple") if isinstance(d, dict) else None
    if nt is None:
        return None
    q = d.get("qualname")
    fields = nt.get("fields") if isinstance(nt, dict) else None
    defaults = nt.get("defaults") if isinstance(nt, dict) else None

    def plain(x):
        return (isinstance(x, str) and x.isidentifier() and not keyword.iskeyword(x)
                and len(x) < 256)
    if not plain(q) or not isinstance(fields, list) or not 0 < len(fields) <= 255 or not all(
            plain(f) and not f.startswith("_") for f in fields) or len(set(fields)) != len(
            fields):
        raise ValueError("a namedtuple class without a name and fields")
    if not isinstance(defaults, list) or len(defaults) > len(fields) or not all(
            x is None or type(x) in (bool, int, str) for x in defaults):
        raise ValueError("namedtuple class %s with defaults that are not data" % q)
    number = nt.get("number")
    if type(number) is not int or not 0 < number < 1 << 31:
        raise ValueError("namedtuple class %s without its number" % q)
    return q, fields, defaults, number


def parametrized_class(d):
    """(base reference, tensor names, number) of a reference to a class
    torch.nn.utils.parametrize made (capture's "parametrized": {"base",
    "tensors", "number"}); None for any other reference.  Raises
    ValueError for one that is malformed."""
    p = d.get("parametrized") if isinstance(d, dict) else None
    if p is None:
        return None
    names = p.get("tensors") if isinstance(p, dict) else None
    if not (isinstance(p, dict) and isinstance(p.get("base"), dict) and isinstance(names, list)
            and 0 < len(names) <= 16 and all(isinstance(x, str) and x.isidentifier()
                                             and not x.startswith("__") for x in names)
            and type(p.get("number")) is int and 0 < p["number"] < 1 << 31
            and d.get("module") == "torch.nn.utils.parametrize"):
        raise ValueError("a parametrized class without its base, tensors and number")
    return p["base"], list(names), p["number"]


def is_structseq(cls):
    """Whether cls is a C struct sequence whose fields are all its items
    (torch.return_types.max: a namedtuple-like tuple without _make)."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and not cls.__flags__ & (1 << 9)  # a C type (not Py_TPFLAGS_HEAPTYPE)
            and type(getattr(cls, "n_sequence_fields", None)) is int
            and getattr(cls, "n_fields", None) == cls.n_sequence_fields)


def local_class_number(d):
    """Which of the recording's classes of its qualname a reference to a
    class defined inside a function names (capture's "number", from dynrec
    0.7.4; 0 for an older trace's, which has none).  Raises ValueError for
    one that is not a number."""
    number = d.get("number", 0)
    if type(number) is not int or not 0 <= number < 1 << 31:
        raise ValueError("local class %s with a number that is not one" % d.get("qualname"))
    return number


def contiguous_strides(shape):
    """The strides, in elements, of a C-contiguous tensor or array of
    shape."""
    out, n = [], 1
    for d in reversed(shape):
        out.append(n)
        n *= max(d, 1)
    return out[::-1]


def local_class_bases(d):
    """The bases defined beside it of a class defined inside a function, as
    a reference to it names them (capture's "bases", from dynrec 0.7.5):
    {name in the source: reference of a class defined inside that same
    function}; {} for an older trace's.  Raises ValueError for one that is
    not that."""
    bases = d.get("bases", {})
    qual = d.get("qualname")
    prefix = qual.rpartition(".")[0] + "." if isinstance(qual, str) else None
    if not isinstance(bases, dict) or len(bases) > 32 or not all(
            isinstance(k, str) and k.isidentifier() and isinstance(r, dict)
            and r.get("local") is True and r.get("module") == d.get("module")
            and r.get("qualname") == prefix + k for k, r in bases.items()):
        raise ValueError("local class %s with bases that are not classes defined beside it"
                         % qual)
    return bases


def torch_op_parts(name):
    """The parts of a torch_op's name (namespace, op[, overload]), each a
    plain name, or None."""
    if not isinstance(name, str) or len(name) > 300:
        return None
    parts = name.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isidentifier() and not p.startswith("__")
                                           for p in parts):
        return None
    return parts


def torch_op(name):
    """The torch operator a torch_op names (torch.ops.aten.sin.default, its
    packet torch.ops.aten.sin, torch.ops.higher_order.cond), or None: found
    through torch.ops's namespaces only, never another attribute of it
    (load_library, import_module)."""
    import torch
    import torch._ops as ops

    parts = torch_op_parts(name)
    if parts is None:
        return None
    try:
        space = getattr(torch.ops, parts[0])
        if not isinstance(space, (ops._OpNamespace, ops._HigherOrderNamespace)):
            return None
        op = getattr(space, parts[1])
        if isinstance(op, ops.HigherOrderOperator):
            return op if len(parts) == 2 else None
        if not isinstance(op, ops.OpOverloadPacket):
            return None
        if len(parts) == 3:
            op = getattr(op, parts[2])
            return op if isinstance(op, ops.OpOverload) else None
        return op
    except (AttributeError, RuntimeError):
        return None


def method_key(key):
    """(class qualname, method name) of a key of an object's
    method_defaults ("Wrapper.forward"), or None for one that is not a
    class of a module's top level and an identifier."""
    if not isinstance(key, str):
        return None
    q, _, a = key.rpartition(".")
    if not a.isidentifier() or not q or "<" in q or not all(
            p.isidentifier() for p in q.split(".")):
        return None
    return q, a


# The hooks of a class that run on their own: on any attribute access or
# assignment, subclassing, or the drop of an instance.  The replay refuses
# to rebuild objects of a class with one (outside --trust and the sandbox)
# and never sets one on a rebuilt class.
HOOKS = ("__del__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__",
         "__set_name__", "__init_subclass__", "__set__", "__delete__")

# Class attributes a trace never sets on a rebuilt class: those the class
# statement (and @dataclass) makes, and HOOKS.
CLASS_ATTRS_NEVER_SET = frozenset("""
__module__ __qualname__ __doc__ __dict__ __weakref__ __slots__ __annotations__
__orig_bases__ __parameters__ __static_attributes__ __firstlineno__ __classcell__
__dataclass_fields__ __dataclass_params__ __match_args__ __abstractmethods__ _abc_impl
__class__ __new__ __class_getitem__ __mro_entries__ __prepare__
""".split()) | frozenset(HOOKS)

# The dispatch keys a trace may have the replay exclude around a compile
# (capture's global_state tls_exclude): autograd's and the functionality
# keys above the backends (a TorchDispatchMode's __torch_dispatch__ runs
# with these excluded), never a backend's, BackendSelect, autocast's or
# Python's (Dynamo's fake tensors need it: "you will segfault if you are in
# a no_dispatch() block").
EXCLUDABLE_KEYS = """
ADInplaceOrView AutogradFunctionality AutogradOther AutogradNestedTensor Functionalize
Conjugate Negative ZeroTensor FuncTorchDynamicLayerBackMode FuncTorchDynamicLayerFrontMode
FuncTorchBatched FuncTorchVmapMode FuncTorchGradWrapper PythonTLSSnapshot PreDispatch
""".split()


def class_attr_key(key):
    """(class qualname, attribute name) of a key of an object's class_attrs
    ("T.test_x.<locals>.Holder.y"), or None for one that is not a class
    defined inside a function and a name, or a dunder or hook of
    CLASS_ATTRS_NEVER_SET.  (The others of it, _abc_impl, which a dynrec
    before 0.7.5 recorded: a key, never set -- class_attrs_to_set().)"""
    if not isinstance(key, str):
        return None
    q, _, a = key.rpartition(".")
    if not a.isidentifier() or ".<locals>." not in q or (
            a in CLASS_ATTRS_NEVER_SET and (a.startswith("__") or a in HOOKS)):
        return None
    return q, a


def class_attrs_to_set(attrs):
    """[(class qualname, attribute name, node)] of an object's class_attrs
    (checked with the tree) that replay and repro set: every one but those
    of CLASS_ATTRS_NEVER_SET."""
    out = []
    for key, c in (attrs or {}).items():
        q, a = class_attr_key(key)
        if a not in CLASS_ATTRS_NEVER_SET:
            out.append((q, a, c))
    return out


def body_function(v):
    """The function a def statement of a class body made that v, an
    attribute of the class, holds: v itself, a static or class method's, a
    property's getter, a cached_property's; None for anything else."""
    if isinstance(v, (staticmethod, classmethod)):
        v = v.__func__
    elif isinstance(v, property):
        v = v.fget
    elif isinstance(v, functools.cached_property):
        v = v.func
    return v if type(v) is types.FunctionType else None


# The making of a view of a jagged nested tensor from its recorded base, as
# text: the replay runs it (exec below) and repro writes it into its script,
# the one rule for both.
VIEW_HELPERS = r'''
def jagged_view_steps(base, values, offsets, lengths, ragged_idx, min_seqlen, max_seqlen,
                      size):
    """The view ops, in order, that make a jagged nested tensor of size
    (None at its jagged dim ragged_idx) and inner tensors values, offsets,
    lengths, min_seqlen and max_seqlen (its metadata cache), from base, the
    tensor it is recorded a view of, as torch's own make such views
    (Dynamo's fakification replays them from the base, and its symbols and
    guards follow them): over its values (base), torch's
    _nested_view_from_jagged; from a jagged nested tensor, or from the
    dense tensor one is a view of (made first), unsqueeze for each dim of
    size 1 it has more (x.unsqueeze(-1)), else view to its size.  None for
    a base it is not made from.  The replay makes such views with it, and
    repro writes it into its script (self-contained: torch imported
    here)."""
    import torch
    from torch.nested._internal.nested_tensor import NestedTensor, _nt_view_dummy

    def jagged(vals):
        return torch._nested_view_from_jagged(vals, offsets, _nt_view_dummy(), lengths,
                                              ragged_idx, min_seqlen, max_seqlen)

    if base is values:
        return [jagged]
    if [i for i, s in enumerate(size) if s is None] != [ragged_idx] or not (
            type(base) is NestedTensor or type(base) is torch.Tensor
            and base.dtype == values.dtype):
        return None
    steps = [jagged] if type(base) is torch.Tensor else []
    with torch.no_grad():
        have = [s if type(s) is int else None for s in (jagged(base) if steps else base).shape]
    # (the dims at which unsqueeze, in order, makes have into size)
    dims, i = [], 0
    for j, s in enumerate(size):
        if i < len(have) and s == have[i]:
            i += 1
        elif s == 1:
            dims.append(j)
        else:
            break
    else:
        if i == len(have):
            return steps + [lambda t, d=d: t.unsqueeze(d) for d in dims]
    return steps + [lambda t: t.view([t.shape[ragged_idx] if s is None else s for s in size])]


def view_by_steps(base, steps, requires_grad, leaf):
    """The view steps (a list of functions of a tensor) make of base, as
    its recorded grad says: a leaf view made under no_grad, then made to
    require grad (with torch.no_grad(): v = x.unsqueeze(-1);
    v.requires_grad_()); one that requires grad of a base that does not,
    its last step made with grad over such a leaf made by the steps before
    it; else with grad mode on (a view of a base that requires grad
    requires grad)."""
    import torch

    if not steps:
        raise ValueError("no view ops make this view from its base")
    t = base
    if leaf or (requires_grad and not base.requires_grad):
        with torch.no_grad():
            for step in steps[:-1] if requires_grad and not leaf else steps:
                t = step(t)
            if t is base:
                t = t.view_as(t)  # (a leaf view of its own to require grad)
        if requires_grad:
            t.requires_grad_(True)
        if requires_grad and not leaf:
            with torch.enable_grad():
                t = steps[-1](t)
        return t
    with torch.enable_grad():
        for step in steps:
            t = step(t)
    return t
'''
exec(VIEW_HELPERS)


def function_attrs_ok(attrs):
    """Whether attrs, read from a trace, may be set as a function's own
    attributes (fn.pred = True): a dict of plain names, never a dunder such
    as __wrapped__, which inspect and Dynamo follow."""
    return isinstance(attrs, dict) and all(
        isinstance(k, str) and not k.startswith("__") for k in attrs)


def class_cell_key(key):
    """(class qualname, method name, free variable name) of a key of an
    object's class_cells ("T.test_x.<locals>.Leaf.forward:leaf_fn"), or None
    for one that is not a method of a class defined inside a function and a
    free variable other than __class__."""
    if not isinstance(key, str):
        return None
    head, _, var = key.partition(":")
    q, _, meth = head.rpartition(".")
    if not var.isidentifier() or var == "__class__" or not meth.isidentifier() or (
            ".<locals>." not in q):
        return None
    return q, meth, var


def _form(kind, v):
    """Why the value v is not of its kind's form; None when it is."""
    if kind in SCALARS:
        return None if SCALARS[kind](v) else "%s with a value of the wrong type" % kind
    if kind in SEQUENCES:
        if not isinstance(v, list) or (kind == "slice" and len(v) != 3):
            return "%s without a list of nodes" % kind
    elif kind == "dict":
        if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 for p in v):
            return "dict without a list of pairs"
    elif kind in OBJECTS:
        if not isinstance(v, dict):
            return "%s without an object of fields" % kind
        for key in OBJECTS[kind]:
            c = v.get(key)
            if isinstance(c, list) and key not in _LIST_FIELDS:
                return "%s: %s is not a node" % (kind, key)
            if isinstance(c, dict) and key not in _DICT_FIELDS:
                return "%s: %s is not a node" % (kind, key)
        if kind == "compiled" and not (
                type(v.get("orig")) is int and isinstance(v.get("backend"), (dict, type(None)))
                and type(v.get("fullgraph", False)) is bool
                and v.get("dynamic") in (None, True, False)
                and type(v.get("module", False)) is bool
                and (v.get("disable") is None or (
                    isinstance(v["disable"], dict) and type(v["disable"].get("wrapping")) is bool
                    and (v["disable"].get("reason") is None or (
                        isinstance(v["disable"]["reason"], str)
                        and len(v["disable"]["reason"]) < 4096))))):
            return "compiled without what it wraps and how"
        if kind == "subclass_tensor" and not (
                isinstance(v.get("class"), dict) and isinstance(v.get("inner_tensors"), dict)
                and 0 < len(v["inner_tensors"]) <= 64
                and all(isinstance(k, str) and k.isidentifier() and not k.startswith("__")
                        for k in v["inner_tensors"])
                and _dims(v.get("size"), 0) and _dims(v.get("stride"), -(1 << 62))
                and len(v["size"]) == len(v["stride"])
                and type(v.get("requires_grad")) is bool and type(v.get("leaf")) is bool
                and type(v.get("inference", False)) is bool
                and (v.get("offset") is None or (
                    type(v["offset"]) is int and 0 <= v["offset"] < 1 << 62))):
            return "subclass_tensor without its class, inner tensors, size and stride"
        if kind == "wrapped_tensor" and not (
                v.get("transform") in FUNCTORCH_WRAPPERS and type(v.get("inner")) is int
                and type(v.get("level")) is int and 1 <= v["level"] <= MAX_FUNCTORCH_LEVELS
                and (v["transform"] != "Vmap" or (
                    type(v.get("bdim")) is int and 0 <= v["bdim"] < 64))
                and type(v.get("requires_grad", False)) is bool):
            return "wrapped_tensor without its transform, level and wrapped tensor"
        if kind == "graph_module" and not (
                isinstance(v.get("nodes"), list) and isinstance(v.get("class_name"), str)
                and v["class_name"].isidentifier() and type(v.get("dict")) is int
                and type(v.get("co_fields")) is int
                and (v.get("forward_file") is None or isinstance(v["forward_file"], str))):
            return "graph_module without its nodes, class name, co_fields and attributes"
        if kind == "uninitialized" and not (
                v.get("uninitialized") in ("parameter", "buffer")
                and _dtype_name(v.get("dtype")) and isinstance(v.get("device"), str)
                and len(v["device"]) < 64
                and type(v.get("requires_grad")) is bool
                and type(v.get("persistent", True)) is bool):
            return "uninitialized without which, its dtype, device and grad"
        if kind == "weak" and not (v.get("class") in WEAK_CLASSES and (
                isinstance(v.get("items"), list) if v["class"] == "WeakSet" else type(
                    v.get("entries")) is int)):
            return "weak without a weak container class and its items"
        if kind == "weakref" and not (v.get("referent") is None or type(v["referent"]) is int):
            return "weakref without its referent"
        if kind in ("object", "tensor") and not (v.get("ident") is None or (
                type(v["ident"]) is int and 0 < v["ident"] < 1 << 62)):
            return "%s with a number that is not one" % kind
        if kind == "autograd_ctx" and not (
                isinstance(v.get("function"), dict) and type(v.get("dict")) is int
                and isinstance(v.get("c_attrs", {}), dict)
                and all(k in AUTOGRAD_CTX_ATTRS for k in v.get("c_attrs", {}))):
            return "autograd_ctx without its Function, attributes and known C attributes"
        if kind == "id" and not ((v.get("of") is None or type(v["of"]) is int)
                                 and type(v.get("int")) is int):
            return "id without the value it is the id of"
        ml = v.get("maxlen")
        if kind == "deque" and not (isinstance(v.get("items"), list) and (
                ml is None or (type(ml) is int and 0 <= ml < 1 << 31))):
            return "deque without items and a maxlen"
        if kind == "iterator" and not (v.get("make") in ITERATORS + DICT_ITERATORS
                                       and type(v.get("args")) is int
                                       and (v.get("state") is None or type(v["state"]) is int)):
            return "iterator without what makes it and its arguments"
        if kind == "exception" and not (type(v.get("args")) is int and type(v.get("dict")) is int):
            return "exception without its arguments and attributes"
        if kind == "mappingproxy" and type(v.get("mapping")) is not int:
            return "mappingproxy without its mapping"
        marks = v.get("marks")
        if kind == "function" and marks is not None and not (
                isinstance(marks, list)
                and all(type(m) is str and m in DYNAMO_MARKS for m in marks)):
            return "function with Dynamo marks that are not known ones"
        if kind == "module_hook" and type(v.get("hook")) is not int:
            return "module_hook without its hook"
        if kind == "hook_handle" and not (
                type(v.get("id")) is int and 0 <= v["id"] < 1 << 62
                and isinstance(v.get("extra_dicts", []), list)):
            return "hook_handle without its id"
        if kind == "method" and "builtin" in v and not (
                isinstance(v["builtin"], str) and v["builtin"].isidentifier()):
            return "method with a C method name that is not a name"
        st = v.get("state")
        if kind == "random" and not (
                isinstance(st, list) and len(st) == 3 and type(st[0]) is int
                and _ints(st[1], 1000, 0, 1 << 32) and (st[2] is None or (
                    isinstance(st[2], str) and len(st[2]) < 40))):
            return "random without a state"
        for ca in (v.get("class_attrs"), v.get("method_attrs")):
            if kind in ("object", "module", "class") and ca is not None and not (
                    isinstance(ca, dict) and all(class_attr_key(k) for k in ca)):
                return "%s with a class attribute that is not a local class's plain name" % kind
        for cc in (v.get("class_cells"), v.get("class_cell_nodes")):
            if kind in ("object", "module", "class") and cc is not None and not (
                    isinstance(cc, dict) and all(class_cell_key(k) for k in cc)):
                return "%s with a class cell not named by a local class, method and name" % kind
        md = v.get("method_defaults")
        if kind in ("object", "module", "class") and md is not None and not (
                isinstance(md, dict) and all(method_key(k) for k in md)):
            return "%s with method defaults not named by a class and a method" % kind
    elif kind != "cell":
        return "unknown kind %r" % (kind,)
    return None


def check_tree(rows, fail, more=None):
    """Checks a whole value tree, before anything is built from it.

    rows: node -> (kind, type name, value, blob id), as read from the trace;
    fail(node, message) makes the exception to raise (node None: the tree
    as a whole); more: kind -> function(node, value) for a reader's own
    checks of that kind, called once its form is checked."""
    for n, (kind, _typ, v, _blob) in rows.items():
        why = _form(kind, v)
        if why is not None:
            raise fail(n, why)
        if more and kind in more:
            more[kind](n, v)
        for c in children(kind, v):
            if type(c) is not int or c not in rows:
                raise fail(n, "refers to node %r, which is not there" % (c,))
    if 0 not in rows or rows[0][0] != "frame":
        raise fail(None, "no frame node")
    seen, todo = {0}, [(0, 0)]
    while todo:
        n, d = todo.pop()
        if d > MAX_DEPTH:
            raise fail(n, "values nested deeper than %d" % MAX_DEPTH)
        for c in children(rows[n][0], rows[n][2]):
            if c not in seen:
                seen.add(c)
                todo.append((c, d + 1))


# ---- the configs a trace records --------------------------------------------
# A config event and a capture's "config" name each setting as NAME for
# torch._dynamo.config and as fx.NAME for the ShapeEnv's own,
# torch.fx.experimental._config (symbol_guard_limit_before_specialize,
# use_duck_shape, backed_size_oblivious, ...: they change guards too).  The
# recorder snapshots them, replay sets them and repro writes them, all
# through these.  Of torch._inductor.config, as inductor.NAME, only the
# names Dynamo itself reads while it traces (INDUCTOR_TRACED: freezing, by
# which utils.is_parameter_freezing makes a module's buffers and parameters
# constants of the graph, guarded by id), and only where not at their
# defaults (the module is loaded after Dynamo's config).
CONFIG_MODULES = (("fx.", "torch.fx.experimental._config"),
                  ("inductor.", "torch._inductor.config"),
                  ("compiler.", "torch.compiler.config"), ("", "torch._dynamo.config"))
INDUCTOR_TRACED = ("freezing",)
# torch.compiler.config's own settings that Dynamo reads while it traces
# (which sources are dynamic or unbacked); the rest are aliases of Dynamo's
# or name caches and jobs.
COMPILER_TRACED = ("dynamic_sources", "dynamic_values", "unbacked_sources")


def config_of(name):
    """(module name, attribute) that a recorded config name sets, or None."""
    if not isinstance(name, str):
        return None
    for prefix, module in CONFIG_MODULES:
        if prefix and name.startswith(prefix):
            attr = name[len(prefix):]
            if prefix == "inductor." and attr not in INDUCTOR_TRACED or (
                    prefix == "compiler." and attr not in COMPILER_TRACED):
                return None
        elif not prefix and "." not in name:
            attr = name
        else:
            continue
        return (module, attr) if attr.isidentifier() else None
    return None


def config_snapshot(modules, text=repr, defaults=False):
    """{recorded name: text(value)} of every config of CONFIG_MODULES that
    modules (sys.modules) holds; the inductor names only where they are
    not at their defaults, unless defaults (a replay's start, which sets
    them back)."""
    snap = {}
    for prefix, module in CONFIG_MODULES:
        mod = modules.get(module)
        if prefix == "inductor.":
            entries = getattr(mod, "_config", None)  # torch's ConfigModule: name -> entry
            for name in INDUCTOR_TRACED if isinstance(entries, dict) else ():
                value = getattr(mod, name, None)
                if name in entries and (defaults or value != getattr(entries[name], "default",
                                                                     value)):
                    snap[prefix + name] = text(value)
            continue
        if prefix == "compiler.":
            for name in COMPILER_TRACED if mod is not None else ():
                if isinstance(getattr(mod, name, None), str):
                    snap[prefix + name] = text(getattr(mod, name))
            continue
        copy = getattr(mod, "get_config_copy", None)
        if copy is not None:
            for k, v in copy().items():
                snap[prefix + k] = text(v)
    return snap
