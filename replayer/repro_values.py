"""dynrec repro's generator, part 1: the value trees and the code that rebuilds them.

repro.py (part 2) imports this module (_dynrec_repro.repro_values): together
they are the generator of `dynrec repro`, described here.

One recorded frame as a standalone Python script.

Runs in the interpreter `dynrec repro` embeds (replayer/repro.c), with no
site-packages: it imports neither torch nor the user's program and runs
nothing that came in the trace.  It reads the trace through
_dynrec_repro.query / _dynrec_repro.blob and only writes text: the script
that rebuilds the chosen frame's captured inputs (one call per recorded
compile of the frame, in order), defines what the frame needs from the
stored sources (definitions only, found with `ast`; `compile()` is used to
read code objects' layouts, never to run them), sets the recorded Dynamo
config and calls torch.compile with the recorded backend.

Everything read from the trace is untrusted.  The stored sources become
code in the script by nature (the user reads them there); every other
string from the trace enters the script only as a repr() literal, a name
checked to be a dotted identifier, or a comment with every control
character escaped, so it cannot add code.  A malformed value tree is
refused (status 65) naming the capture and node.
"""

import io
import json
import keyword
import math
import re
import struct
import tokenize

import _dynrec_repro

from .recorded import Refused
from .recorded import number as _int
from .value_kinds import (DICT_ITERATORS, FX_OPS, MAX_DEPTH, check_tree, children,
                          class_attr_key, class_attrs_to_set, class_cell_key, contiguous_strides,
                          local_class_number, method_key, function_where, namedtuple_made)

_query = _dynrec_repro.query
_blob = _dynrec_repro.blob
_MAX_NODES = 1000000
_MAX_TENSOR = 1 << 30
_MAX_DATA_LIST = 1 << 16  # elements written out as literals; more: random data

EXIT_OK, EXIT_USAGE, EXIT_PARTIAL, EXIT_DATAERR, EXIT_NOINPUT = 0, 2, 3, 65, 66
EXIT_SOFTWARE = 70  # a bug in dynrec: the script it wrote does not parse


class Usage(Exception):
    """No such frame or compile (exit 2)."""


class NoCaptures(Exception):
    """The trace holds no captured frames (exit 66)."""


def _say(msg):
    import sys

    sys.stderr.write("dynrec repro: %s\n" % msg)


def comment(s):
    """Trace text made safe for one comment line: control characters,
    newlines and non-printable characters escaped as repr() does."""
    return repr(str(s))[1:-1]


def dotted(name, what):
    """A dotted name checked to be identifiers only."""
    if not isinstance(name, str) or not name or len(name) > 300:
        raise Refused("%s is not a name" % what)
    parts = name.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        raise Refused("%s %r is not a dotted name" % (what, name))
    return name


# ---- the value trees -------------------------------------------------------------

# The names of torch's dtypes (torch 2.13; an older torch lacks some, which
# the script then reports).
_TORCH_DTYPES = frozenset("torch." + n for n in """
bfloat16 bit bits16 bits1x8 bits2x4 bits4x2 bits8 bool cdouble cfloat chalf complex128 complex32
complex64 double float float16 float32 float4_e2m1fn_x2 float64 float8_e4m3fn float8_e4m3fnuz
float8_e5m2 float8_e5m2fnuz float8_e8m0fnu half int int1 int16 int2 int3 int32 int4 int5 int6
int64 int7 int8 long qint32 qint8 quint2x4 quint4x2 quint8 short uint1 uint16 uint2 uint3 uint32
uint4 uint5 uint6 uint64 uint7 uint8""".split())
# dtype -> (struct format of one element, bytes, kind: f float, i int, b bool, c complex)
_DTYPES = {
    "torch.float32": ("f", 4, "f"), "torch.float64": ("d", 8, "f"),
    "torch.float16": ("e", 2, "f"), "torch.bfloat16": (None, 2, "f"),
    "torch.int8": ("b", 1, "i"), "torch.uint8": ("B", 1, "i"), "torch.int16": ("h", 2, "i"),
    "torch.int32": ("i", 4, "i"), "torch.int64": ("q", 8, "i"), "torch.uint16": ("H", 2, "i"),
    "torch.uint32": ("I", 4, "i"), "torch.uint64": ("Q", 8, "i"), "torch.bool": ("?", 1, "b"),
    "torch.complex64": ("f", 8, "c"), "torch.complex128": ("d", 16, "c"),
}


def _ints(v, what, lo=0, hi=1 << 48):
    if not isinstance(v, list) or len(v) > 64 or not all(
            type(x) is int and lo <= x <= hi for x in v):
        raise Refused("%s must be a short list of integers" % what)
    return v


class Tree:
    """One capture's value tree, checked whole before anything is written."""

    def __init__(self, no):
        self.no = no
        self.rows = {}
        rows = _query("SELECT node, kind, type, value, blob_id FROM v_values WHERE capture = %d"
                      " ORDER BY node LIMIT %d" % (no, _MAX_NODES + 1))
        if len(rows) > _MAX_NODES:
            raise Refused("capture %d has more than %d values" % (no, _MAX_NODES))
        for node, kind, typ, value, blob in rows:
            n = _int(node, "a node number")
            try:
                v = json.loads(value) if value is not None else None
            except ValueError:
                raise self.fail(n, "its value is not JSON")
            self.rows[n] = (kind or "?", typ or "?", v, int(blob) if blob else None)
        self.check()
        self.refs = {}
        for n, (kind, typ, v, blob) in self.rows.items():
            for c in self.kids(kind, v):
                self.refs[c] = self.refs.get(c, 0) + 1

    def fail(self, n, msg):
        if n is None:
            return Refused("capture %d: %s" % (self.no, msg))
        return Refused("capture %d node %d: %s" % (self.no, n, msg))

    @staticmethod
    def kids(kind, v):
        return children(kind, v)

    def check(self):
        """The whole tree (value_kinds.py), each tensor's size within bounds and
        each dtype one of torch's."""
        def dtype(n, v):
            if v not in _TORCH_DTYPES:  # a real dtype: never torch.load
                raise self.fail(n, "dtype with a value of the wrong type")
        check_tree(self.rows, self.fail, {"tensor": self.tensor_meta, "dtype": dtype})

    def tensor_meta(self, n, v):
        shape = _ints(v.get("shape"), "shape")
        stride = _ints(v.get("stride"), "stride")
        offset = v.get("offset")
        if len(stride) != len(shape) or type(offset) is not int or not 0 <= offset < 1 << 48:
            raise self.fail(n, "stride or offset do not fit the shape")
        dt = v.get("dtype")
        if dt not in _DTYPES:
            raise self.fail(n, "a tensor of dtype %r" % (dt,))
        numel = math.prod(shape)
        extent = 0 if numel == 0 else offset + 1 + sum((d - 1) * s for d, s in zip(shape, stride))
        if max(extent, numel) * _DTYPES[dt][1] > _MAX_TENSOR:
            raise self.fail(n, "a tensor of shape %s is over 1 GiB" % (shape,))
        if "data" in v and v["data"] != numel * _DTYPES[dt][1]:
            raise self.fail(n, "data of %r bytes for %d elements" % (v["data"], numel))
        return shape, stride, offset, dt, numel, extent


# ---- writing the script ----------------------------------------------------------


def _fmt_float(x, fmt, size):
    """The shortest decimal that gives the same element back."""
    if math.isnan(x):
        return 'float("nan")'
    if math.isinf(x):
        return 'float("inf")' if x > 0 else 'float("-inf")'
    if fmt == "d":
        return repr(x)
    for p in range(1, 18):
        s = "%.*g" % (p, x)
        if fmt is None:  # bfloat16: the top half of a float32
            back = struct.pack("<f", float(s))[2:]
            want = struct.pack("<f", x)[2:]
        else:
            back, want = struct.pack("<" + fmt, float(s)), struct.pack("<" + fmt, x)
        if back == want:
            return repr(float(s))
    return repr(x)


def _elements(raw, dt):
    fmt, size, kind = _DTYPES[dt]
    if fmt is None:  # bfloat16
        vals = [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
        return [_fmt_float(x, None, 2) for x in vals]
    if kind == "c":
        vals = struct.unpack("<%d%s" % (len(raw) // (size // 2), fmt), raw)
        return ["complex(%s, %s)" % (_fmt_float(vals[i], fmt, 0), _fmt_float(vals[i + 1], fmt, 0))
                for i in range(0, len(vals), 2)]
    vals = struct.unpack("<%d%s" % (len(raw) // size, fmt), raw)
    if kind == "f":
        return [_fmt_float(x, fmt, size) for x in vals]
    return [repr(x) for x in vals]


def _nested(items, shape):
    if not shape:
        return items[0]
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(items[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


def backend_kwargs(desc, gen):
    """torch.compile's keyword arguments for a recorded backend (a compile's,
    or that of a compiled wrapper among the values), and a note when it is
    not the recorded one."""
    if not isinstance(desc, dict):
        desc = {}
    name = desc.get("name") if isinstance(desc.get("name"), str) else "eager"
    kw = []
    note = None
    fn = desc.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("module"), str) and isinstance(
            fn.get("qualname"), str) and "<" not in fn["qualname"]:
        try:
            kw.append("backend=%s" % gen.global_ref(dotted(fn["module"], "a backend module"),
                                                    dotted(fn["qualname"], "a backend")))
        except Refused:
            kw.append("backend='eager'")
            note = "the recorded backend %s is not a name; eager instead" % name
    elif isinstance(fn, dict):
        kw.append("backend='eager'")
        note = "the recorded backend %s cannot be named here; eager instead" % name
    elif isinstance(desc.get("instance_of"), dict):
        # A backend object (CompileCounter): a new one of a torch class.
        made = _backend_object(gen, desc)
        if made is not None:
            kw.append("backend=%s" % made)
        elif isinstance(desc["instance_of"], dict) and \
                desc["instance_of"].get("module") == "torch._dynamo.testing":
            kw.append("backend='eager'")
            note = "the recorded backend %s is not a name; eager instead" % name
        else:
            kw.append("backend='eager'")
            note = ("the recorded backend %s is not one of torch._dynamo.testing's; eager instead"
                    % name)
    elif name.startswith("<"):
        kw.append("backend='eager'")
        note = "the recorded backend %s is an object; eager instead" % name
    else:
        kw.append("backend=%r" % name)
    opts = desc.get("options")
    if name == "inductor" and isinstance(opts, dict) and opts:
        kept = {str(k): v for k, v in opts.items() if isinstance(v, (bool, int, float, str))}
        if kept:
            kw.append("options=%r" % (kept,))
    dyn = desc.get("dynamic")
    if dyn in (True, False):
        kw.append("dynamic=%r" % dyn)
    return kw, note


def _backend_object(gen, desc, depth=0):
    """The expression making a backend object of a torch._dynamo.testing
    class, with the backend it wraps (a registered name, or another such
    object: CompileCounterWithBackend(EagerAndRecordGraphs())); None when
    it cannot be named."""
    cls = desc.get("instance_of") if isinstance(desc, dict) else None
    if not isinstance(cls, dict) or depth > 3:
        return None
    mod, qual = cls.get("module"), cls.get("qualname")
    if mod != "torch._dynamo.testing" or not isinstance(qual, str) or "<" in qual:
        return None
    try:
        ref = gen.global_ref(dotted(mod, "a backend module"), dotted(qual, "a backend class"))
    except Refused:
        return None
    arg = desc.get("backend_arg")
    if arg is None:
        return "%s()" % ref
    if isinstance(arg, str):
        return "%s(%r)" % (ref, arg) if re.fullmatch(r"[A-Za-z0-9_.]{1,64}", arg) else None
    inner = _backend_object(gen, arg, depth + 1)
    return None if inner is None else "%s(%s)" % (ref, inner)


def _wrap(line, indent="    "):
    """A long statement broken after commas, to stay readable: only after a
    comma inside brackets (the line goes on by itself there), never inside
    a string or a comment.  A line the tokenizer does not take stays whole."""
    if len(line) <= 100 or "\n" in line:
        return [line]
    cuts, depth = [], 0
    try:
        for t in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if t.type != tokenize.OP:
                continue
            if t.string in "([{":
                depth += 1
            elif t.string in ")]}":
                depth -= 1
            elif t.string == "," and depth > 0:
                cuts.append(t.end[1])
    except (tokenize.TokenError, SyntaxError):
        return [line]
    out, cur, start = [], "", 0
    for end in cuts + [len(line)]:
        seg = line[start:end]
        if cur.strip() and len(cur) + len(seg) > 96:
            out.append(cur)
            cur = indent + seg.lstrip(" ")
        else:
            cur += seg
        start = end
    out.append(cur)
    return out


_HEADER_IMPORTS = {"import logging", "import sys", "import torch", "import torch._dynamo",
                   "import torch._logging"}
_MODULE_INIT = ("training", "_parameters", "_buffers", "_non_persistent_buffers_set",
                "_backward_pre_hooks", "_backward_hooks", "_is_full_backward_hook",
                "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
                "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                "_load_state_dict_post_hooks", "_modules")
_MUTABLE = ("list", "dict", "set", "module", "object", "dataclass", "tensor", "cell", "random",
            "bytearray", "autograd_ctx")


class Writer:
    """Turns value trees into statements of the script."""

    def __init__(self, gen, tree):
        self.gen = gen
        self.tree = tree
        self.lines = []
        self.names = {}  # node -> variable
        self.busy = set()
        self.classes_set = set()  # class nodes whose class attributes are set
        self.level = 0  # expr() calls under way: the depth in the tree
        self.missing = []  # (what, why): values that could not be rebuilt
        self.fx_env = []  # {fx node name: variable} of each fx graph being written

    def emit(self, line):
        self.lines.extend(_wrap(line))

    def var(self, hint):
        return self.gen.fresh(hint)

    def expr(self, n, hint="v"):
        if n in self.names:
            return self.names[n]
        kind, typ, v, blob = self.tree.rows[n]
        if n in self.busy:
            raise self.tree.fail(n, "a cycle through an immutable value")
        if self.level >= MAX_DEPTH:
            raise self.tree.fail(n, "values nested deeper than %d" % MAX_DEPTH)
        self.level += 1
        try:
            shared = self.tree.refs.get(n, 0) > 1
            if kind in _MUTABLE and (shared or kind in ("tensor", "module", "object",
                                                        "dataclass", "random", "autograd_ctx")):
                return self.statement(n, kind, typ, v, blob, hint)
            self.busy.add(n)
            try:
                return self.inline(n, kind, typ, v, blob, hint)
            finally:
                self.busy.discard(n)
        finally:
            self.level -= 1

    def inline(self, n, kind, typ, v, blob, hint):
        x = lambda c, h=hint: self.expr(c, h)  # noqa: E731
        if kind == "none":
            return "None"
        if kind == "ellipsis":
            return "..."
        if kind in ("bool", "int", "str"):
            return repr(v)
        if kind == "float":
            try:
                f = float(v)
            except ValueError:
                raise self.tree.fail(n, "float without a number")
            return _fmt_float(f, "d", 8)
        if kind == "complex":
            try:
                re_, im = float(v[0]), float(v[1])
            except ValueError:
                raise self.tree.fail(n, "complex without numbers")
            return "complex(%s, %s)" % (_fmt_float(re_, "d", 8), _fmt_float(im, "d", 8))
        if kind in ("bytes", "bytearray"):
            data = self.data(n, blob, v)
            return repr(data) if kind == "bytes" else "bytearray(%r)" % data
        item = hint + "_item"
        if kind == "list":
            return "[" + ", ".join(x(c, item) for c in v) + "]"
        if kind == "tuple":
            items = [x(c, item) for c in v]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if kind in ("set", "frozenset"):
            body = "{" + ", ".join(x(c, item) for c in v) + "}" if v else ""
            if kind == "set":
                return body or "set()"
            return "frozenset(%s)" % body
        if kind == "dict":
            pairs = []
            for k, val in v:
                key = x(k)
                pairs.append("%s: %s" % (key, x(val, self.hint_of(k, hint))))
            body = "{" + ", ".join(pairs) + "}"
            if typ == "collections.OrderedDict":
                self.gen.imports.add("collections")
                return "collections.OrderedDict(%s)" % (body if pairs else "")
            return body
        if kind == "size":
            return "torch.Size(%r)" % (v,)
        if kind == "dtype":
            return v
        if kind == "device":
            return "torch.device(%r)" % v
        if kind == "slice":
            return "slice(%s)" % ", ".join(x(c) for c in v)
        if kind == "range":
            return "range(%d, %d, %d)" % tuple(v)
        if kind == "path":
            self.gen.imports.add("pathlib")
            return "pathlib.%s(%r)" % tuple(v)  # (checked with the tree)
        if kind == "partial":
            self.gen.imports.add("functools")
            return "functools.partial(%s)" % ", ".join(
                [x(v.get("func"), hint + "_func")] + self.call_args(n, v, "keywords", hint, x))
        if kind == "uninitialized":
            # a lazy module's parameter or buffer (dtype checked with the tree)
            return "torch.nn.parameter.Uninitialized%s(%r, device=torch.device(%r), dtype=%s)" % (
                v["uninitialized"].capitalize(), v["requires_grad"], v["device"], v["dtype"])
        if kind == "hook_handle":
            # torch's RemovableHandle, by its own __setstate__ (as replay makes it)
            self.gen.imports.add("torch.utils.hooks")
            hooks = "None" if v.get("hooks") is None else x(v["hooks"], hint + "_hooks")
            extra = [x(c, hint + "_extra") for c in v.get("extra_dicts") or []]
            var = self.var(hint)
            self.emit("%s = torch.utils.hooks.RemovableHandle.__new__("
                      "torch.utils.hooks.RemovableHandle)" % var)
            self.emit("%s.__setstate__((%s, %d, (%s)))" % (
                var, hooks, v["id"], "".join(e + ", " for e in extra)))
            return var
        if kind == "module_hook":
            # torch's wrapper of a module hook, holding the module by weakref
            self.gen.imports.add("torch.nn.modules.module")
            return "torch.nn.modules.module._WrappedHook(%s%s)" % (
                x(v["hook"], hint + "_hook"),
                "" if v.get("module") is None else ", " + x(v["module"], hint + "_module"))
        if kind == "mappingproxy":
            # a read-only view of the rebuilt dict
            self.gen.imports.add("types")
            return "types.MappingProxyType(%s)" % x(v["mapping"], hint + "_mapping")
        if kind == "iterator" and v["make"] in DICT_ITERATORS:
            # a dict's iterator, as far on as recorded, as replay makes it
            var = self.var(hint + "_iter")
            args = self.tree.rows.get(v["args"])
            if args is None or args[0] != "tuple" or len(args[2]) != 1:
                raise self.tree.fail(n, "a dict iterator without its dict")
            self.emit("%s = iter(dict.%s(%s))" % (var, v["make"][5:], x(args[2][0], hint + "_d")))
            if v.get("state") is not None:
                self.emit("for _ in range(%s):  # as far as it went\n    next(%s)" % (
                    x(v["state"]), var))
            return var
        if kind == "iterator":
            # a builtin iterator, as replay makes it (form checked with the tree)
            var = self.var(hint + "_iter")
            self.emit("%s = %s(*%s)" % (var, v["make"], x(v["args"], hint + "_args")))
            if v.get("state") is not None:
                self.emit("%s.__setstate__(%s)  # where it was" % (var, x(v["state"])))
            return var
        if kind == "exception":
            # its class's C base's __new__ and __init__, as replay makes it
            cls = self.ref(n, v.get("class"), "class")
            args = self.tree.rows.get(v["args"])
            d = self.tree.rows.get(v["dict"])
            if args is None or args[0] != "tuple" or d is None or d[0] != "dict":
                raise self.tree.fail(n, "an exception without a tuple of args and a dict")
            var, a = self.var(hint + "_exc"), x(v["args"], hint + "_args")
            self.emit("%s = %s.__new__(%s, *%s)" % (var, cls, cls, a))
            self.emit("next(b for b in %s.__mro__ if b.__module__ == 'builtins').__init__(%s, *%s)"
                      "  # not the class's own __init__" % (cls, var, a))
            for k, c in d[2]:
                key = self.tree.rows.get(k)
                if key is None or key[0] != "str":
                    raise self.tree.fail(n, "an exception's attributes are not a dict of names")
                self.set_attr(var, key[2], x(c, key[2]))
            return var
        if kind == "pygenerator":
            # (the generator function, which the script may have made
            # decorated, as its source is: @contextmanager)
            self.gen.imports.add("inspect")
            return "inspect.unwrap(%s)(%s)" % (x(v.get("func"), hint + "_func"), ", ".join(
                self.call_args(n, v, "kwds", hint, x)))
        if kind == "id":
            if v["of"] is None or v["of"] in self.busy:
                return "%s(%r)" % (self.gen.id_maker(), v["int"])
            return "%s(%r, %s)" % (self.gen.id_maker(), v["int"], x(v["of"], hint + "_of"))
        if kind in ("weak", "weakref"):
            self.gen.imports.add("weakref")
            make = "weakref.%s" % (v["class"] if kind == "weak" else "ref")
            if kind == "weakref":
                held = "None" if v.get("referent") is None else x(v["referent"], hint + "_ref")
            elif v["class"] == "WeakSet":
                held = "[%s]" % ", ".join(x(c) for c in v["items"])
            else:
                held = x(v["entries"], hint + "_entries")
            return "%s(%s, %s)" % (self.gen.weak_maker(), make, held)
        if kind == "deque":
            self.gen.imports.add("collections")
            return "collections.deque([%s], maxlen=%r)" % (
                ", ".join(x(c) for c in v["items"]), v.get("maxlen"))
        if kind == "defaultdict":
            self.gen.imports.add("collections")
            return "collections.defaultdict(%s, %s)" % (x(v.get("factory"), hint + "_factory"),
                                                         x(v.get("entries"), hint))
        if kind == "namedtuple":
            cls = self.ref(n, v.get("class"), "class")
            items = v.get("items")
            if not isinstance(items, list):
                raise self.tree.fail(n, "namedtuple without items")
            c = v.get("class")
            if isinstance(c, dict) and c.get("module") == "torch.return_types":
                # a struct sequence (torch.return_types.max) takes one tuple
                return "%s((%s,))" % (cls, ", ".join(x(c) for c in items))
            return "%s(%s)" % (cls, ", ".join(x(c) for c in items))
        if kind == "enum":
            cls = self.ref(n, v.get("class"), "class")
            name = v.get("name")
            if not isinstance(name, str):
                raise self.tree.fail(n, "enum without a member name")
            return "%s.%s" % (cls, name) if name.isidentifier() and not keyword.iskeyword(
                name) else "%s[%r]" % (cls, name)
        if kind == "generator":
            nbytes, dev = v.get("nbytes"), v.get("device")
            if type(nbytes) is not int or not isinstance(dev, str) or len(dev) > 64:
                raise self.tree.fail(n, "a generator without device and state")
            name = self.var(hint + "_gen")
            self.emit("%s = torch.Generator(device=%r)" % (name, dev))
            self.emit("%s.set_state(torch.frombuffer(bytearray(%r), dtype=torch.uint8))" % (
                name, self.data(n, blob, nbytes)))
            return name
        if kind in ("npscalar", "ndarray"):
            dt = v.get("dtype")
            nbytes = v.get("nbytes")
            dt_ok = isinstance(dt, str) and len(dt) < 8 and all(ch.isalnum() or ch in "<>|="
                                                                for ch in dt)
            if not dt_ok or type(nbytes) is not int:
                raise self.tree.fail(n, "a numpy value without dtype and size")
            shape = v.get("shape") if kind == "ndarray" else None
            if kind == "ndarray" and not (isinstance(shape, list) and len(shape) <= 32 and all(
                    type(d) is int and 0 <= d < 1 << 31 for d in shape)):
                raise self.tree.fail(n, "a numpy array without a shape")
            self.gen.imports.add("numpy")
            e = "numpy.frombuffer(bytearray(%r), dtype=%r)" % (self.data(n, blob, nbytes), dt)
            if shape is None:
                return e + "[0]"
            e = "%s.reshape(%r)" % (e, tuple(shape))
            strides = v.get("strides")
            if not (v.get("readonly") is True or isinstance(strides, list)):
                return e
            name = self.var("arr")
            if isinstance(strides, list) and len(strides) == len(shape) and all(
                    type(x) is int and 0 <= x < 1 << 40 for x in strides):
                # the recorded strides over a buffer of their extent
                extent = 0 if 0 in shape else 1 + sum((d - 1) * x for d, x in zip(shape, strides))
                self.emit("%s = numpy.ndarray(%r, dtype=%r, buffer=numpy.zeros(%d, dtype=%r), "
                          "strides=[x * numpy.dtype(%r).itemsize for x in %r])  # as recorded"
                          % (name, tuple(shape), dt, extent, dt, dt, strides))
                self.emit("%s[...] = %s" % (name, e))
            else:
                self.emit("%s = %s" % (name, e))
            if v.get("readonly") is True:
                self.emit("%s.flags.writeable = False  # read-only, as recorded" % name)
            return name
        if kind == "npdtype":
            self.gen.imports.add("numpy")
            return "numpy.dtype(%r)" % v
        if kind == "npinfo":
            self.gen.imports.add("numpy")
            return "numpy.%s(numpy.dtype(%r))" % (v[0], v[1])
        if kind == "logger":
            self.gen.imports.add("logging")
            return "logging.getLogger(%s)" % ("" if v is None else repr(v))
        if kind == "config_patch":
            return "torch._dynamo.decorators.patch_dynamo_config(%r)" % (dict(v),)
        if kind == "singleton":
            return self.gen.global_ref(dotted(v.get("module"), "a module name"),
                                       dotted(v.get("name"), "a name"))
        if kind == "pymodule":
            return self.gen.module_ref(dotted(v, "a module name"))
        if kind == "class":
            made = self.ref(n, v, "class")
            if v.get("local") is True and made != "None" and n not in self.classes_set:
                # (a class defined inside a function: what its body made
                # that its definitions do not, set once)
                self.classes_set.add(n)
                self.class_attrs(n, made, v)
                if v.get("allow_in_graph") is True:
                    # (its @torch._dynamo.allow_in_graph, left out of its making)
                    self.emit("torch._dynamo.allow_in_graph(%s)" % made)
            return made
        if kind == "function":
            return self.function(n, v, hint)
        if kind == "method":
            if "builtin" in v:
                name = v["builtin"]
                if not (isinstance(name, str) and name.isidentifier()):
                    raise self.tree.fail(n, "a C method whose name is not a name")
                me = x(v.get("self"))
                if self.tree.rows.get(v.get("self"), ("",))[0] == "class":
                    # A C classmethod bound to the class.
                    return "%s.%s" % (me, name)
                # The class's own method: an instance attribute may hide it.
                return "type(%s).%s.__get__(%s)" % (me, name, me)
            self.gen.imports.add("types")
            return "types.MethodType(%s, %s)" % (x(v.get("func")), x(v.get("self")))
        if kind == "cell":
            self.gen.imports.add("types")
            return "types.CellType(%s)" % ("" if v is None else x(v))
        if kind == "compiled":
            # torch.compile's wrapper, made as the recording made it.
            if v.get("disable") is not None:
                d = v["disable"]
                return "torch._dynamo.disable(%s%s%s)" % (
                    x(v["orig"]), "" if d["reason"] is None else ", reason=%r" % d["reason"],
                    "" if d["wrapping"] else ", wrapping=False")
            desc = dict(v.get("backend") or {})
            if v.get("dynamic") is not None:
                desc["dynamic"] = v["dynamic"]
            kw, note = backend_kwargs(desc, self.gen)
            if v.get("fullgraph"):
                kw.append("fullgraph=True")
            if note:
                self.emit("# %s" % comment(note))
            return "torch.compile(%s, %s)" % (x(v["orig"]), ", ".join(kw))
        if kind == "torch_op":
            return "torch.ops.%s" % dotted(v, "a torch operator")
        if kind == "fx_node":
            var = self.fx_env[-1].get(v) if self.fx_env else None
            if var is None:
                raise self.tree.fail(n, "fx node %r outside its graph or before it is made" % v)
            return var
        if kind == "graph_module":
            return self.graph_module(n, v, hint)
        if kind == "subclass_tensor":
            return self.subclass_tensor(n, v, hint)
        if kind == "wrapped_tensor":
            # A tensor of a torch.func transform (vmap, grad, functionalize)
            # exists only inside it; a script calls the frame outside any.
            why = "a tensor inside torch.func's %s" % v["transform"].lower()
            self.missing.append((hint, why))
            self.emit("# NOT REBUILT: %s, %s: None below" % (comment(hint), why))
            return "None"
        if kind == "opaque":
            self.missing.append((hint, "a value of type %s" % typ))
            self.emit("# NOT CAPTURED: %s, a value of type %s: None below" % (
                comment(hint), comment(typ)))
            return "None"
        raise self.tree.fail(n, "a %s where a value should be" % kind)

    def graph_module(self, n, v, hint):
        """An fx GraphModule written as torch.fx builds one: its graph node by
        node, then the module with its attributes; torch.fx generates its
        code when the script runs."""
        rows = self.tree.rows
        name = self.var("gm" if hint in ("self", "v") else hint)
        self.names[n] = name
        g = name + "_graph"
        self.emit("%s = torch.fx.Graph()" % g)
        if v.get("codegen") is not None:
            self.emit("%s._codegen = torch.fx.graph._PyTreeCodeGen(torch.fx.graph._PyTreeInfo("
                      "*%s))" % (g, self.expr(v["codegen"], "pytree_info")))
        env = {}
        self.fx_env.append(env)
        try:
            for c in v["nodes"]:
                kind, _t, items, _b = rows[c]
                parts = [rows[i][2] if rows[i][0] == "str" else None for i in items[:2]] if (
                    kind == "tuple" and len(items) == 6) else []
                if len(parts) != 2 or parts[0] not in FX_OPS or not isinstance(
                        parts[1], str) or not parts[1].isidentifier() or parts[1] in env:
                    raise self.tree.fail(n, "an fx node that is not (op, name, target, args, "
                                            "kwargs, type)")
                op, nm = parts
                target, args, kwargs = (self.expr(i, nm) for i in items[2:5])
                var = self.var("fx_" + nm)
                self.emit("%s = %s.create_node(%r, %s, %s, %s, name=%r)" % (
                    var, g, op, target, args, kwargs, nm))
                env[nm] = var
        finally:
            self.fx_env.pop()
        self.emit("%s._co_fields = %s" % (g, self.expr(v["co_fields"], "co_fields")))
        cls = self.ref(n, v.get("class"), "class")
        # GraphModule's own __new__ and __init__ (a subclass's __init__, as
        # const folding's, takes other arguments)
        self.emit("%s = torch.fx.GraphModule.__new__(%s)" % (name, cls))
        self.emit("torch.fx.GraphModule.__init__(%s, torch.nn.Module(), torch.fx.Graph(), %r)" % (
            name, v["class_name"]))
        self.emit("%s.__dict__.update(%s)" % (name, self.expr(v["dict"], name + "_attrs")))
        self.emit("%s.graph = %s  # torch.fx generates its code" % (name, g))
        key = v.get("forward_file")
        if isinstance(key, str):
            # One GraphModule in the recording (the same generated forward):
            # one class, whose forward's cache holds the compiles.
            if not self.gen.fx_classes:
                self.gen.fx_classes = True
                self.emit("repro_fx_classes = {}  # the class of each recorded GraphModule")
            self.emit("%s.__class__ = repro_fx_classes.setdefault(%r, type(%s))" % (
                name, key, name))
        return name

    def hint_of(self, k, default):
        kind, typ, v, blob = self.tree.rows[k]
        if kind == "str" and v.isidentifier() and not keyword.iskeyword(v):
            return v.lstrip("_") or default
        return default

    def statement(self, n, kind, typ, v, blob, hint):
        """A value built by statements into a variable (shared, mutable,
        or needing more than one step)."""
        if kind == "tensor":
            return self.tensor(n, v, blob, hint)
        name = self.var(hint if kind != "module" or hint not in ("self", "v") else
                        self.short_class(v).lower())
        if kind in ("list", "set", "dict") and not self.cyclic(n):
            # Shared but not holding itself: built in one expression.
            self.busy.add(n)
            try:
                self.emit("%s = %s" % (name, self.inline(n, kind, typ, v, blob, name)))
            finally:
                self.busy.discard(n)
            self.names[n] = name
            return name
        self.names[n] = name
        x = lambda c, h="v": self.expr(c, h)  # noqa: E731
        if kind in ("list", "set", "dict", "cell", "bytearray"):
            if kind == "bytearray":
                self.emit("%s = bytearray(%r)" % (name, self.data(n, blob, v)))
            elif kind == "list":
                self.emit("%s = []" % name)
                for c in v:
                    self.emit("%s.append(%s)" % (name, x(c)))
            elif kind == "set":
                self.emit("%s = set()" % name)
                for c in v:
                    self.emit("%s.add(%s)" % (name, x(c)))
            elif kind == "cell":
                self.gen.imports.add("types")
                self.emit("%s = types.CellType()" % name)
                if v is not None:
                    self.emit("%s.cell_contents = %s" % (name, x(v)))
            else:
                if typ == "collections.OrderedDict":
                    self.gen.imports.add("collections")
                    self.emit("%s = collections.OrderedDict()" % name)
                else:
                    self.emit("%s = {}" % name)
                for k, val in v:
                    key = x(k)
                    self.emit("%s[%s] = %s" % (name, key, x(val, self.hint_of(k, "v"))))
            return name
        if kind == "autograd_ctx":
            # A ctx of the Function's own type, made by its C base, its
            # attributes and C attributes (AUTOGRAD_CTX_ATTRS) set.
            cls = self.ref(n, v.get("function"), "class")
            self.emit("%s = %s._backward_cls()  # a ctx of the Function, its state as recorded"
                      % (name, cls))
            self.dict_attrs(n, name, v.get("dict"), "ctx")
            for a, c in (v.get("c_attrs") or {}).items():  # names checked with the tree
                self.emit("%s.%s = %s" % (name, a, x(c, a)))
            return name
        if kind == "random":
            # random.Random itself from the standard library, a subclass as
            # any class; its state through Random.setstate.
            self.gen.imports.add("random")
            cls = "random.Random" if v.get("class") == {
                "module": "random", "qualname": "Random"} else self.ref(n, v.get("class"), "class")
            version, words, gauss = v["state"]
            self.emit("%s = random.Random.__new__(%s)  # its recorded state follows"
                      % (name, cls))
            self.emit("random.Random.setstate(%s, (%d, %r, %s))" % (
                name, version, tuple(words), "None" if gauss is None else "float(%r)" % gauss))
            self.dict_attrs(n, name, v.get("dict"), "random")
            return name
        cls = self.ref(n, v.get("class"), "class")
        mapping = v.get("mapping") if kind == "dataclass" else None
        if mapping is not None:
            # A dataclass that is a mapping (transformers' ModelOutput): made
            # by its class's __new__ (its C base's: OrderedDict's).
            self.emit("%s = %s.__new__(%s)  # fields and items set as recorded, without "
                      "__init__" % (name, cls, cls))
        elif kind == "dataclass":
            self.emit("%s = object.__new__(%s)  # fields set as recorded, without __init__"
                      % (name, cls))
        if kind == "dataclass":
            fields = v.get("fields")
            if not isinstance(fields, dict):
                raise self.tree.fail(n, "dataclass without fields")
            for f, c in fields.items():
                self.emit("object.__setattr__(%s, %r, %s)" % (name, str(f), x(c, str(f))))
            extra = v.get("extra")
            if extra is not None:
                if type(extra) is not int or self.tree.rows[extra][0] != "dict":
                    raise self.tree.fail(n, "dataclass attributes are not a dict")
                for k, c in self.tree.rows[extra][2]:
                    kk = self.tree.rows[k]
                    if kk[0] != "str":
                        raise self.tree.fail(n, "dataclass attributes are not a dict of names")
                    self.emit("object.__setattr__(%s, %r, %s)" % (name, kk[2], x(c, "v")))
            if mapping is not None:
                self.set_items(n, name, mapping, x)
            return name
        d = v.get("dict")
        if type(d) is not int or self.tree.rows[d][0] != "dict":
            raise self.tree.fail(n, "%s attributes are not a dict" % kind)
        attrs = []
        for k, c in self.tree.rows[d][2]:
            kk = self.tree.rows[k]
            if kk[0] != "str":
                raise self.tree.fail(n, "%s attributes are not a dict of names" % kind)
            attrs.append((kk[2], c))
        self.class_attrs(n, cls, v)
        if kind == "object":
            self.emit("%s = %s.__new__(%s)  # attributes set as recorded, without __init__"
                      % (name, cls, cls))
            for a, c in attrs:
                self.set_attr(name, a, x(c, a))
            slots = v.get("slots") or {}
            for a, c in slots.items():
                if not (isinstance(a, str) and a.isidentifier()):
                    raise self.tree.fail(n, "a slot whose name is not a name")
                self.emit("object.__setattr__(%s, %r, %s)  # a slot" % (name, a, x(c, a)))
            if v.get("mapping") is not None:
                self.set_items(n, name, v["mapping"], x)  # a dict or OrderedDict subclass
            return name
        # An nn.Module: made without its __init__, then given the recorded
        # state: parameters, buffers, submodules, hooks, flags, attributes.
        self.emit("%s = %s.__new__(%s)" % (name, cls, cls))
        self.emit("torch.nn.Module.__init__(%s)  # empty state; the recorded state follows"
                  % name)
        vals = dict(attrs)
        nonpersistent = set()
        if "_non_persistent_buffers_set" in vals:
            row = self.tree.rows[vals["_non_persistent_buffers_set"]]
            for c in row[2] if row[0] == "set" else []:
                if self.tree.rows[c][0] == "str":
                    nonpersistent.add(self.tree.rows[c][2])
        if "training" in vals:
            row = self.tree.rows[vals["training"]]
            if row[0] == "bool" and row[2] is False:
                self.emit("%s.train(False)" % name)
        for key, call in (("_parameters", "register_parameter"), ("_buffers", "register_buffer"),
                          ("_modules", "add_module")):
            c = vals.get(key)
            if c is not None and self.tree.rows[c][0] == "object":
                # the program's own mapping class in its place (an
                # OrderedDict subclass as _parameters): that object
                self.emit("%s.__dict__[%r] = %s" % (name, key, x(c, key)))
                continue
            if c is None or self.tree.rows[c][0] != "dict":
                continue
            for k, item in self.tree.rows[c][2]:
                kk = self.tree.rows[k]
                if kk[0] != "str":
                    raise self.tree.fail(n, "%s with a key that is not a name" % key)
                sub = x(item, kk[2])
                extra = ", persistent=False" if key == "_buffers" and kk[2] in nonpersistent \
                    else ""
                self.emit("%s.%s(%r, %s%s)" % (name, call, kk[2], sub, extra))
        for a, c in attrs:
            if a in ("training", "_parameters", "_buffers", "_modules",
                     "_non_persistent_buffers_set"):
                continue
            row = self.tree.rows[c]
            if a in _MODULE_INIT and row[0] in ("dict", "none") and not row[2]:
                continue  # as Module.__init__ made it
            if a in _MODULE_INIT and self.tree.refs.get(c, 0) > 1:
                # one dict that something else holds too (a hook handle
                # removes from it): that object itself
                self.emit("%s.__dict__[%r] = %s" % (name, a, x(c, a)))
            elif a in _MODULE_INIT:
                self.emit("%s.__dict__[%r].update(%s)" % (name, a, x(c, a)))
            else:
                self.set_attr(name, a, x(c, a))
        return name

    def set_items(self, n, name, mapping, x):
        """The items of a mapping the program's class makes (a dataclass
        over OrderedDict, a dict subclass), set by the C type's own
        __setitem__, never the class's."""
        if type(mapping) is not int or self.tree.rows[mapping][0] != "dict":
            raise self.tree.fail(n, "items that are not a dict")
        self.gen.imports.add("collections")
        for k, c in self.tree.rows[mapping][2]:
            self.emit("(collections.OrderedDict if isinstance(%s, collections.OrderedDict)"
                      " else dict).__setitem__(%s, %s, %s)" % (name, name, x(k), x(c, "v")))

    def cyclic(self, n, limit=10000):
        """Whether n can reach itself (a container that holds itself, at any
        depth); True too when the tree is too large to tell cheaply."""
        seen, todo = set(), list(self.tree.kids(self.tree.rows[n][0], self.tree.rows[n][2]))
        while todo:
            c = todo.pop()
            if c == n:
                return True
            if c in seen:
                continue
            seen.add(c)
            if len(seen) > limit:
                return True
            kind, typ, v, blob = self.tree.rows[c]
            todo.extend(self.tree.kids(kind, v))
        return False

    def dict_attrs(self, n, name, d, what):
        """Statements setting on name the attributes of dict node d (names
        only: else the tree is malformed)."""
        if type(d) is not int or self.tree.rows[d][0] != "dict":
            raise self.tree.fail(n, "%s attributes are not a dict" % what)
        for k, c in self.tree.rows[d][2]:
            kk = self.tree.rows[k]
            if kk[0] != "str":
                raise self.tree.fail(n, "%s attributes are not a dict of names" % what)
            self.set_attr(name, kk[2], self.expr(c, kk[2]))

    def set_attr(self, name, a, value):
        if a.isidentifier() and not keyword.iskeyword(a):
            self.emit("%s.__dict__[%r] = %s" % (name, a, value) if a.startswith("__")
                      else "%s.%s = %s" % (name, a, value))
        else:
            self.emit("%s.__dict__[%r] = %s" % (name, a, value))

    def class_attrs(self, n, cls, v):
        """The recorded data attributes of the local classes in the MRO
        (capture's class_attrs), which their class bodies made and the
        definitions of those bodies do not: set on that class."""
        for q, a, c in class_attrs_to_set(v.get("class_attrs")):  # checked with the tree
            if self.tree.rows.get(c, ("opaque",))[0] == "opaque":
                continue
            self.emit("type.__setattr__(next(b for b in %s.__mro__ if b.__qualname__ == %r), %r,"
                      " %s)  # its class body made it" % (cls, q, a, self.expr(c, a)))
        for key, c in (v.get("method_attrs") or {}).items():
            # A function's own attributes set after its def statement
            # (torch._dynamo.assume_constant_result(Cls.prop.fget)).
            q, a = class_attr_key(key)  # checked with the tree
            if self.tree.rows.get(c, ("opaque",))[0] != "dict":
                continue
            self.emit("%s(vars(next(b for b in %s.__mro__ if b.__qualname__ == %r))[%r])"
                      ".__dict__.update(%s)" % (self.gen.body_function(), cls, q, a,
                                                self.expr(c, a + "_attrs")))
        for key, c in (v.get("class_cells") or {}).items():
            # What a method's closure held (a function the test defined
            # beside the class), where the nesting bound None.
            q, meth, var = class_cell_key(key)  # checked with the tree
            if self.tree.rows.get(c, ("opaque",))[0] == "opaque" or c == n:
                # (the class itself: the cell of a method @dataclass made,
                # recorded before 0.7.9, which the class statement makes)
                continue
            self.emit("%s(next(b for b in %s.__mro__ if b.__qualname__ == %r), %r, %r, %s)"
                      "  # its closure held it" % (self.gen.cell_setter(), cls, q, meth, var,
                                                   self.expr(c, var)))
        for key, c in (v.get("method_defaults") or {}).items():
            # The defaults a method had at the compile (capture's
            # method_defaults), not those its def statement made.
            q, a = method_key(key)  # checked with the tree
            row = self.tree.rows.get(c)
            fv = row[2] if row is not None and row[0] == "function" else None
            if not isinstance(fv, dict):
                continue
            for field in ("defaults", "kwdefaults"):
                d = fv.get(field)
                if type(d) is int and self.tree.rows.get(d, ("opaque",))[0] != "opaque":
                    self.emit("vars(next(b for b in %s.__mro__ if b.__qualname__ == %r))[%r]"
                              ".__%s__ = %s" % (cls, q, a, field, self.expr(d, a + "_" + field)))

    def short_class(self, v):
        c = v.get("class") if isinstance(v, dict) else None
        q = c.get("qualname") if isinstance(c, dict) else None
        q = q.rsplit(".", 1)[-1] if isinstance(q, str) else "obj"
        return q if q.isidentifier() else "obj"

    def ref(self, n, d, what):
        if not isinstance(d, dict):
            raise self.tree.fail(n, "a %s reference needs module and qualname" % what)
        mod, qual = d.get("module"), d.get("qualname")
        if not isinstance(mod, str) or not isinstance(qual, str):
            raise self.tree.fail(n, "a %s reference needs module and qualname" % what)
        try:
            nt = namedtuple_made(d) if what == "class" else None
        except ValueError as exc:
            raise self.tree.fail(n, str(exc))
        if nt is not None:
            return self.gen.namedtuple_class(mod, *nt)
        if ".<locals>." in qual and what == "class" and isinstance(d.get("local"), bool):
            try:
                number = local_class_number(d)
            except ValueError as exc:
                raise self.tree.fail(n, str(exc))
            made, why = self.gen.local_class(mod, qual, number)
            if made is not None:
                return made
            self.missing.append((qual, why))
            self.emit("# NOT REBUILT: %s: None below" % comment(why))
            return "None"
        if "<" in qual:
            self.missing.append((qual, "%s %s.%s is local to a function" % (what, mod, qual)))
            self.emit("# NOT REBUILT: %s %s is local to a function: None below" % (
                what, comment(qual)))
            return "None"
        wrapped = d.get("wrapped")
        if wrapped is not None and (type(wrapped) is not int or not 0 < wrapped <= 8):
            raise self.tree.fail(n, "a reference with a count of wrappers that is not one")
        if "classmethod" in d and (d["classmethod"] is not True or what != "function"):
            raise self.tree.fail(n, "a reference whose classmethod is not true")
        return self.gen.global_ref(dotted(mod, "a module name"), dotted(qual, "a qualname")) + (
            ".__func__" if "classmethod" in d else "") + ".__wrapped__" * (wrapped or 0)

    def function(self, n, v, hint):
        if "name" not in v:
            return self.ref(n, v, "function")
        # A lambda or a nested function: its definition from the sources,
        # made by a factory that takes its closure variables.
        where = function_where(v)
        if not (isinstance(where[0], str) and isinstance(where[1], str) and
                type(where[2]) is int):
            raise self.tree.fail(n, "function without a file, qualname and first line")
        made = self.gen.nested(where, v.get("place"))
        if made is None:
            self.missing.append((where[1], "function %s: its source is not in the trace"
                                 % where[1]))
            self.emit("# NOT REBUILT: function %s, its source is not in the trace: None below"
                      % comment(where[1]))
            return "None"
        factory, freevars = made
        closure = v.get("closure") or []
        if len(closure) != len(freevars):
            raise self.tree.fail(n, "closure does not match the code's free variables")
        args = []
        for var, c in zip(freevars, closure):
            row = self.tree.rows[c]
            if row[0] != "cell":
                raise self.tree.fail(n, "closure holds something other than cells")
            args.append("%s=%s" % (var, "None" if row[2] is None else self.expr(row[2], var)))
        fn = "%s(%s)" % (factory, ", ".join(args))
        if v.get("allow_in_graph") is True:
            fn = "torch._dynamo.allow_in_graph(%s)" % fn
        d = v.get("defaults")
        if d is not None and self.tree.rows[d][0] != "none":
            name = self.var(hint)
            self.names[n] = name
            self.emit("%s = %s" % (name, fn))
            self.emit("%s.__defaults__ = %s" % (name, self.expr(d)))
            return name
        return fn

    def call_args(self, n, v, kw_field, hint, x):
        """The arguments of a recorded call (a partial's, the call that made
        a generator): v's "args" tuple node, then its kw_field dict node of
        names, a name that is not an identifier as **{name: value}."""
        args, kw = self.tree.rows.get(v.get("args")), self.tree.rows.get(v.get(kw_field))
        if args is None or args[0] != "tuple" or kw is None or kw[0] != "dict":
            raise self.tree.fail(n, "a call without a tuple of arguments and a dict")
        parts = [x(c, hint + "_arg") for c in args[2]]
        for k, c in kw[2]:
            key = self.tree.rows.get(k)
            if key is None or key[0] != "str" or not isinstance(key[2], str):
                raise self.tree.fail(n, "a call's keyword is not a string")
            name = key[2]
            parts.append("%s=%s" % (name, x(c, name)) if name.isidentifier() and not (
                keyword.iskeyword(name)) else "**{%r: %s}" % (name, x(c, name)))
        return parts

    def data(self, n, blob, nbytes):
        if blob is None:
            raise self.tree.fail(n, "its data is missing")
        try:
            data = _blob(blob, max(nbytes, 1))
        except OSError as exc:
            raise self.tree.fail(n, "its data: %s" % exc)
        if len(data) != nbytes:
            raise self.tree.fail(n, "its data holds %d bytes, not %d" % (len(data), nbytes))
        return data

    def tensor(self, n, v, blob, hint):
        shape, stride, offset, dt, numel, extent = self.tree.tensor_meta(n, v)
        name = self.var(hint if hint != "v" else "t")
        self.names[n] = name
        dev = v.get("device")
        if not isinstance(dev, str) or len(dev) > 64:
            raise self.tree.fail(n, "bad device")
        devarg = "" if dev == "cpu" else ", device=%r" % dev
        kind = _DTYPES[dt][2]
        rg = v.get("requires_grad") is True
        if rg and kind not in ("f", "c"):
            raise self.tree.fail(n, "requires_grad on an integer tensor")
        sh = "(%s)" % ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")" \
            if False else repr(tuple(shape))
        values = None
        if "data" in v and numel <= _MAX_DATA_LIST:
            raw = self.data(n, blob, numel * _DTYPES[dt][1]) if numel else b""
            values = _nested(_elements(raw, dt), shape) if numel else (
                "[]" if shape == [0] else None)
        if values is None:
            if kind == "f" or kind == "c":
                values = "torch.randn(%s, dtype=%s%s)" % (sh, dt, devarg)
            elif kind == "b":
                values = "torch.rand(%s%s) > 0.5" % (sh, devarg)
            else:
                values = "torch.randint(0, 8, %s, dtype=%s%s)" % (sh, dt, devarg)
            what = "recorded data" if "data" in v else None
            src = values
            note = "  # seeded random data (%s)" % ("no data recorded" if what is None else
                                                    "too large to write out")
        else:
            src = "torch.tensor(%s, dtype=%s%s)" % (values, dt, devarg)
            note = ""
        base = v.get("view_of")
        ind = ""
        if base is None and v.get("inference") is True and not rg:
            # made as recorded: an inference tensor (no autograd keys)
            self.emit("with torch.inference_mode():  # an inference tensor, as recorded")
            ind = "    "
        if base is not None:
            b = self.expr(base, "base")
            self.emit("%s = %s.as_strided(%r, %r, %d)  # a view, as recorded" % (
                name, b, tuple(shape), tuple(stride), offset))
        elif offset == 0 and (stride == contiguous_strides(shape) or numel <= 1):
            self.emit("%s%s = %s%s" % (ind, name, src, note))
        elif offset == 0:
            self.emit("%s%s = torch.empty_strided(%r, %r, dtype=%s%s)  # strides as recorded" % (
                ind, name, tuple(shape), tuple(stride), dt, devarg))
            self.emit("%s%s.copy_(%s)%s" % (ind, name, src, note))
        else:
            self.emit("%s%s = torch.empty(0, dtype=%s%s).set_(torch.empty(%d, dtype=%s%s)"
                      ".untyped_storage(), %d, %r, %r)  # storage offset as recorded" % (
                          ind, name, dt, devarg, extent, dt, devarg, offset, tuple(shape),
                          tuple(stride)))
            self.emit("%s%s.copy_(%s)%s" % (ind, name, src, note))
        if base is None and rg and v.get("param") is not True:
            if v.get("leaf") is False:
                self.emit("%s = %s.requires_grad_().clone()  # not a leaf" % (name, name))
            else:
                self.emit("%s.requires_grad_()" % name)
        if v.get("param") is True:
            self.emit("%s = torch.nn.Parameter(%s, requires_grad=%r)" % (name, name, rg))
        if v.get("subclass") is not None:
            # the program's subclass of torch.Tensor, as the replay makes it
            cls = self.ref(n, v["subclass"], "class")
            if v.get("leaf") is False:
                self.emit("%s = %s.as_subclass(%s)" % (name, name, cls))
            else:
                self.emit("%s = torch.Tensor._make_subclass(%s, %s.detach(), %r)" % (
                    name, cls, name, rg))
        self.tensor_marks(n, name, v.get("marks"))
        g = v.get("grad")
        if g is not None:
            self.emit("%s.grad = %s" % (name, self.expr(g, name + "_grad")))
        a = v.get("attrs")
        if a is not None:
            if type(a) is not int or self.tree.rows[a][0] != "dict":
                raise self.tree.fail(n, "tensor attributes are not a dict")
            for k, c in self.tree.rows[a][2]:
                kk = self.tree.rows[k]
                if kk[0] != "str":
                    raise self.tree.fail(n, "tensor attributes are not a dict of names")
                self.emit("%s.__dict__[%r] = %s" % (name, kk[2], self.expr(c, "v")))
        return name

    def subclass_tensor(self, n, v, hint):
        """A tensor of a traceable wrapper subclass, made by its class's
        __tensor_unflatten__ (a view from its base), as the replay makes it."""
        cls = self.ref(n, v["class"], "class")
        names = {k: self.expr(c, k) for k, c in v["inner_tensors"].items()}  # checked
        inner = ", ".join("%r: %s" % kv for kv in names.items())
        ctx = self.expr(v["ctx"], "ctx") if v.get("ctx") is not None else "None"
        name = self.var(hint if hint != "v" else "t")
        self.names[n] = name
        size = "torch.Size(%r)" % v["size"] if None not in v["size"] else repr(tuple(v["size"]))
        base = self.expr(v["view_of"], name + "_base") if v.get("view_of") is not None else None
        if base is not None and "_offsets" in names and "_values" in names:
            # a jagged nested tensor, a view made by the view ops torch's own
            # are made by (value_kinds.jagged_view_steps, the replay's rule)
            steps, by_steps = self.gen.jagged_view()
            self.emit("%s = %s(%s, %s(%s, %s, %s, %s, %s['ragged_idx'], %s, %s, %r), %r, %r)" % (
                name, by_steps, base, steps, base, names["_values"], names["_offsets"],
                names.get("_lengths", "None"), ctx, names.get("_min_seqlen_tensor", "None"),
                names.get("_max_seqlen_tensor", "None"), v["size"], v["requires_grad"],
                v["leaf"]))
        elif base is not None:
            self.emit("%s = %s.as_strided(%s, %r, %r)  # a view of it" % (
                name, base, size, tuple(v["stride"]), v.get("offset")))
        else:
            self.emit("with torch.%s():" % ("inference_mode" if v.get("inference") is True
                                            else "no_grad"))
            self.emit("    %s = %s.__tensor_unflatten__({%s}, %s, %s, %r)" % (
                name, cls, inner, ctx, size, tuple(v["stride"])))
        if v["requires_grad"] and base is None:
            self.emit("%s.requires_grad_()" % name)
            if not v["leaf"]:
                self.emit("%s = %s.clone()  # not a leaf" % (name, name))
        self.tensor_marks(n, name, v.get("marks"))
        return name

    def tensor_marks(self, n, name, marks):
        """Dynamo's marks on the tensor named name (a tensor node's marks),
        as calls of torch's mark functions where there is one."""
        marks = marks or {}
        if not isinstance(marks, dict):
            raise self.tree.fail(n, "marks are not an object")
        ranges = {}
        for r in marks.get("_dynamo_dynamic_range") or []:
            if isinstance(r, list) and len(r) == 3 and type(r[0]) is int and all(
                    x is None or type(x) is int for x in r[1:]):
                ranges[r[0]] = r[1:]
        calls = {"_dynamo_dynamic_indices": "torch._dynamo.mark_dynamic",
                 "_dynamo_weak_dynamic_indices": "torch._dynamo.maybe_mark_dynamic",
                 "_dynamo_static_indices": "torch._dynamo.mark_static",
                 "_dynamo_unbacked_indices": "torch._dynamo.decorators.mark_unbacked"}
        for mark, fn in calls.items():
            for dim in _ints(marks.get(mark, []), mark, 0, 64):
                extra = ""
                if mark == "_dynamo_dynamic_indices" and dim in ranges:
                    lo, hi = ranges[dim]
                    extra = "".join(", %s=%d" % (k, x) for k, x in (("min", lo), ("max", hi))
                                    if x is not None)
                self.emit("%s(%s, %d%s)" % (fn, name, dim, extra))
        for mark in ("_has_dynamo_dim_marking", "_dynamo_marked_static"):
            if marks.get(mark) is True:
                self.emit("%s.%s = True" % (name, mark))
        if marks.get("_dynamo_static_input_type") in ("guarded", "unguarded"):
            self.emit("%s._dynamo_static_input_type = %r" % (
                name, marks["_dynamo_static_input_type"]))
        done = set(calls) | {"_dynamo_dynamic_range", "_has_dynamo_dim_marking",
                             "_dynamo_marked_static", "_dynamo_static_input_type"}
        for mark in marks:
            if mark in done:
                continue
            if (isinstance(mark, str) and mark.isidentifier() and mark.startswith("_dynamo_")
                    and mark.endswith("_indices")):
                # Another dims mark (AOTAutograd's _dynamo_propagated_dynamic_indices):
                # the attribute, as replay sets it.
                dims = _ints(marks[mark], mark, 0, 64)
                self.emit("%s.%s = {%s}" % (name, mark, ", ".join(str(d) for d in dims))
                          if dims else "%s.%s = set()" % (name, mark))
            else:
                self.emit("# (a mark %s is not rebuilt)" % comment(mark))
