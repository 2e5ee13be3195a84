"""definitions.py -- what a trace may make replay and repro run or name,
shared by the replay driver (replay.py) and the repro generator (repro.py),
which import it (a module of _dynrec, or of _dynrec_repro: recorder/embed.h).

"Definitions only" is one rule, definitions(): which module-level statements
of a trace's stored sources run.  Imports, def and class statements, and
assignments of literals (constants, negative numbers, tuples, lists, dicts
and sets of literals) -- never a call, a name, an attribute or a subscript,
which could run code the trace chose (a metaclass __getitem__, a function
named like a builtin).  The exceptions are a namedtuple or TypeVar made
from literals, which callers make with the real factory (factory()), and
custom op statements of literals (library_call()): a torch.library.Library
(made by the real class and bound to its name), torch.library.define and
.impl, a Library's define and impl (a kernel a name of the module or one of
torch's functions, registered, never called), which callers make with the
real torch.library; never through a name the source binds (a name bound
again after the Library is no longer it); in a test function's body, the
custom op statements of local_library().  A `try:` contributes the definitions of
its body; `if __name__ == "__main__":` and every other statement is left
out; `from __future__` imports are left out of the list (a script cannot
hold them mid-file) and given as compile flags by future_flags().

The allow-lists say which Dynamo config names and inductor options a trace
may set (those that change Dynamo's or Inductor's decisions; never
`disable`, never a path, cache, log or command) and which names a generated
script must never bind."""
import __future__
import ast
import os
import sys

from .value_kinds import COMPILER_TRACED, INDUCTOR_TRACED

_MAX_LITERAL_DEPTH = 20


def code_name(qualname):
    """The part of a qualified name that a code object of the stored
    sources carries, to find it again by: all of it from 3.11 on; on 3.10,
    whose code objects have only co_name, the last part."""
    return qualname if sys.version_info >= (3, 11) else qualname.rsplit(".", 1)[-1]


def _literal(node, depth=0):
    """Whether node is a literal: a constant, a negative or positive number,
    or a tuple/list/set/dict of literals."""
    if depth > _MAX_LITERAL_DEPTH:
        return False
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (
            int, float, complex)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e, depth + 1) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k, depth + 1) for k in node.keys) and all(
            _literal(v, depth + 1) for v in node.values)
    return False


# Factories a module-level assignment may call with literal arguments: the
# caller makes the value with the real one (collections / typing), so a
# source that rebinds the name runs nothing.
FACTORIES = {"namedtuple": ("collections", "namedtuple"),
             "NamedTuple": ("typing", "NamedTuple"),
             "TypeVar": ("typing", "TypeVar"), "ParamSpec": ("typing", "ParamSpec")}


def factory(st):
    """For `NAME = namedtuple("NAME", [...])` (or collections.namedtuple,
    typing.NamedTuple, TypeVar, ParamSpec) with literal arguments only:
    (NAME, (module, factory name), args, kwargs) with the arguments as
    Python values; else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
            st.targets[0], ast.Name) and isinstance(st.value, ast.Call)):
        return None
    f = st.value.func
    if isinstance(f, ast.Name):
        name = f.id
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (
            f.value.id in ("collections", "typing")):
        name = f.attr
    else:
        return None
    if name not in FACTORIES or not all(_literal(a) for a in st.value.args) or not all(
            k.arg is not None and _literal(k.value) for k in st.value.keywords):
        return None
    try:
        args = [ast.literal_eval(a) for a in st.value.args]
        kw = {k.arg: ast.literal_eval(k.value) for k in st.value.keywords}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not args or args[0] != st.targets[0].id:
        return None
    if "module" in kw or "rename" in kw and type(kw["rename"]) is not bool:
        return None
    return st.targets[0].id, FACTORIES[name], args, kw


def _tags(node):
    """The names of the torch.Tag members a tags= keyword gives (one, or a
    tuple/list of them), else None."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    out = []
    for t in items:
        if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Attribute)
                and t.value.attr == "Tag" and isinstance(t.value.value, ast.Name)
                and t.value.value.id == "torch"):
            return None
        out.append(t.attr)
    return out


def _dotted(node):
    """The dotted name an attribute chain spells ("torch.library.impl"), at
    most 8 parts, else None."""
    parts = []
    while isinstance(node, ast.Attribute) and len(parts) < 8:
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else None


def _torch_attr(node, prefix):
    """For `torch.library.NAME` (prefix "torch.library") and the like: NAME,
    else None."""
    dotted = _dotted(node) or ""
    rest = dotted[len(prefix) + 1:]
    return rest if dotted.startswith(prefix + ".") and "." not in rest else None


def _kernel(node):
    """A kernel a library statement registers: a name of the module
    ("name", NAME), one of torch's functions ("torch", "sin" /
    "ops.aten.sin.default") or a lambda without defaults ("lambda", node:
    made where the statement runs, nothing of it run there), else None."""
    if isinstance(node, ast.Name):
        return "name", node.id
    if isinstance(node, ast.Lambda):
        a = node.args
        return ("lambda", node) if not a.defaults and not any(a.kw_defaults) else None
    dotted = _dotted(node) or ""
    return ("torch", dotted[6:]) if dotted.startswith("torch.") else None


def _strs(nodes, limit=4096):
    return all(isinstance(a, ast.Constant) and type(a.value) is str and len(a.value) < limit
               for a in nodes)


LIBRARY_KINDS = ("DEF", "FRAGMENT", "IMPL")


def _library_args(call, name):
    """[ns, kind(, dispatch key)] of a call of torch.library.NAME (Library,
    _scoped_library) with those literal arguments only, else None."""
    if not isinstance(call, ast.Call) or _torch_attr(call.func, "torch.library") != name or (
            call.keywords) or not 2 <= len(call.args) <= 3 or not _strs(call.args, 256) or (
            call.args[1].value not in LIBRARY_KINDS):
        return None
    return [a.value for a in call.args]


def library_call(st, libs=()):
    """A custom op statement at module level, its arguments literal, tags
    torch.Tag members by name, a kernel a name of the module, one of
    torch's functions or a lambda (_kernel()); libs the names earlier statements bind to Library
    objects (name -> namespace).  One of:
      ("Library", NAME, [ns, kind(, dispatch key)])  NAME = torch.library.Library(...)
      ("define", LIB, qualname, schema, tags)  torch.library.define(q, s[, lib=LIB])
      ("impl", LIB, qualname, kernel, key)  torch.library.impl(q, key, fn[, lib=LIB])
      ("lib.define", LIB, qualname, schema, tags, alias)  LIB.define("op(...) -> ...")
      ("lib.impl", LIB, qualname, kernel, key, op, {keyword: bool})  LIB.impl("op", fn[, key])
    (LIB None where there is none); else None.  The caller makes them with
    the real torch.library, its own Library objects by their names, never
    through a name the source binds (a kernel, which it registers and
    never calls, excepted)."""
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
            st.targets[0], ast.Name):
        args = _library_args(st.value, "Library")
        return ("Library", st.targets[0].id, args) if args is not None else None
    call = st.value if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
    if call is None:
        return None
    f = call.func
    kw = {k.arg: k.value for k in call.keywords}
    if None in kw:
        return None
    lib = kw.pop("lib", None)
    if lib is not None:
        if not (isinstance(lib, ast.Name) and lib.id in libs):
            return None
        lib = lib.id
    tags = _tags(kw.pop("tags")) if "tags" in kw else []
    if tags is None:
        return None
    name = _torch_attr(f, "torch.library")
    if name == "define" and not kw and len(call.args) == 2 and _strs(call.args):
        return "define", lib, call.args[0].value, call.args[1].value, tags
    if name == "impl" and not kw and not tags and len(call.args) == 3 and _strs(
            call.args[:2], 512) and _kernel(call.args[2]) is not None:
        return "impl", lib, call.args[0].value, _kernel(call.args[2]), call.args[1].value
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (
            f.value.id in libs)) or lib is not None:
        return None
    ns, lib = libs[f.value.id], f.value.id
    if f.attr == "define" and not kw and 1 <= len(call.args) <= 2 and _strs(call.args):
        schema = call.args[0].value
        op, paren, rest = schema.partition("(")
        alias = call.args[1].value if len(call.args) == 2 else ""
        return ("lib.define", lib, ns + "::" + op.strip(), paren + rest, tags, alias) if (
            paren and alias in ("", "FROM_SCHEMA", "CONSERVATIVE")) else None
    if f.attr == "impl" and not tags and set(kw) <= {"with_keyset", "allow_override"} and all(
            isinstance(v, ast.Constant) and type(v.value) is bool for v in kw.values()) and (
            2 <= len(call.args) <= 3) and _strs(call.args[:1], 512) and _strs(
            call.args[2:], 512) and _kernel(call.args[1]) is not None:
        op = call.args[0].value
        return ("lib.impl", lib, op if "::" in op else ns + "::" + op, _kernel(call.args[1]),
                call.args[2].value if len(call.args) == 3 else "", op,
                {k: v.value for k, v in kw.items()})
    return None


def library_calls(stmts):
    """library_call() of each of definitions()'s statements in order, the
    Library objects earlier ones bind known to later ones: [(statement,
    spec or None)]."""
    libs, out = {}, []
    for st in stmts:
        spec = library_call(st, libs)
        _libraries_after(libs, st, spec)
        out.append((st, spec))
    return out


def _libraries_after(libs, st, spec):
    """libs (name -> namespace of the Library objects module-level
    statements bound) after statement st, its library_call() spec."""
    if spec is not None:
        if spec[0] == "Library":
            libs[spec[1]] = spec[2][0]
    elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef,
                         ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)):
        for n in _bound_at_module(st):
            libs.pop(n, None)  # (a name bound again is no longer the Library)


def _bound_at_module(st):
    """The names a module-level definition statement binds."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [st.name]
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in st.names]
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


# Decorators a custom op's local kernel may have (torch.library.NAME(...)):
# each registers the function, none calls it.
LIBRARY_DECORATORS = ("impl", "register_fake", "register_kernel", "impl_abstract",
                      "register_autograd")


def _library_args_ok(call, libs):
    """Whether a decorator call's arguments are literals, torch.Tag members
    or names of the Library objects libs holds."""
    def ok(a):
        return _literal(a) or (isinstance(a, ast.Name) and a.id in libs) or (
            _tags(a) is not None)
    return all(ok(a) for a in call.args) and all(
        k.arg is not None and ok(k.value) for k in call.keywords)


def _reads_locals(fn, bound, libs):
    """Whether function or lambda node fn reads a name its enclosing
    function binds (bound) other than a Library's (libs): a closure."""
    own = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} if isinstance(
        fn, ast.Lambda) else _bound_names(fn)
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Load)} - own
    return bool(read & (bound - set(libs)))


def _library_def(st, libs, bound):
    """Whether st is a def a custom op's registration decorates: every
    decorator a torch.library.NAME(...) of LIBRARY_DECORATORS whose
    arguments are literals or Library names, or torch._dynamo.disable; at
    least one of the first kind; and it reads no name the enclosing
    function binds (bound) but those Libraries' (no closure)."""
    if not isinstance(st, ast.FunctionDef) or not st.decorator_list:
        return False
    registers = False
    for d in st.decorator_list:
        if isinstance(d, ast.Call) and _torch_attr(d.func, "torch.library") in (
                LIBRARY_DECORATORS) and _library_args_ok(d, libs):
            registers = True
        elif not (_torch_attr(d, "torch._dynamo") == "disable"):
            return False
    return registers and not _reads_locals(st, bound, libs)


def local_library(tree, qualname):
    """The custom op statements of the function a frame defined inside a
    function ("T.test_x.<locals>.f") is made in: (that function's qualname,
    [(spec, node)]), in source order, from its body and the bodies of its
    `with` and `try` statements:
      ("Library", NAME, [ns, kind])  with torch.library._scoped_library(ns,
                                     kind) as NAME: (node the with), or a
                                     Library statement
      spec                           library_call() of the Library names (a
                                     kernel one of torch's functions or a
                                     lambda that reads none of its locals)
      None                           node a def custom op decorators
                                     register (_library_def), made where
                                     they run
    or None where it has none.  The one rule of which statements of a
    test's body the replay runs for its frames."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    body, outer, quals = tree.body, None, []
    for name in parts[:-1]:
        node = next((st for st in body if isinstance(st, (ast.ClassDef, ast.FunctionDef))
                     and st.name == name), None)
        if node is None:
            return None
        quals.append(name)
        if isinstance(node, ast.FunctionDef):
            outer = node
            break
        body = node.body
    if outer is None:
        return None
    bound = _bound_names(outer)
    libs, items = {}, []

    def walk(stmts, depth):
        for st in stmts:
            if isinstance(st, ast.With) and depth < 8:
                for it in st.items:
                    args = _library_args(it.context_expr, "_scoped_library")
                    if args is not None and isinstance(it.optional_vars, ast.Name):
                        libs[it.optional_vars.id] = args[0]
                        items.append((("Library", it.optional_vars.id, args), st))
                walk(st.body, depth + 1)
            elif isinstance(st, ast.Try) and depth < 8:
                walk(st.body, depth + 1)
            elif _library_def(st, libs, bound):
                items.append((None, st))
            else:
                spec = library_call(st, libs)
                kernel = spec[3] if spec is not None and spec[0] in ("impl", "lib.impl") else None
                if spec is not None and (kernel is None or kernel[0] == "torch" or (
                        kernel[0] == "lambda" and not _reads_locals(kernel[1], bound, libs))):
                    items.append((spec, st))
                _libraries_after(libs, st, spec)

    walk(outer.body, 0)
    return (".".join(quals), items) if any(
        spec is None or spec[0] != "Library" for spec, _ in items) else None


def _is_main_guard(st):
    t = st.test if isinstance(st, ast.If) else None
    return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and (
        t.left.id == "__name__")


def definitions(body):
    """The statements of a module (or class) body that "definitions only"
    keeps, in order: imports (not from __future__), def, class, literal
    assignments, literal factory calls (see factory()), and those of a
    try: body.  The one filter of replay and repro."""
    return _definitions(body, {})


def _definitions(body, libs):
    out = []
    for st in body:
        if isinstance(st, ast.ImportFrom) and st.module == "__future__":
            continue
        if isinstance(st, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                           ast.ClassDef)):
            out.append(st)
        elif isinstance(st, ast.Assign) and _literal(st.value) and all(
                isinstance(t, ast.Name) or (isinstance(t, ast.Tuple) and all(
                    isinstance(e, ast.Name) for e in t.elts)) for t in st.targets):
            out.append(st)
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and (
                st.value is None or _literal(st.value)) and st.simple:
            out.append(st)
        elif factory(st) is not None or library_call(st, libs) is not None:
            out.append(st)
        elif isinstance(st, ast.Try) and not _is_main_guard(st):
            out.extend(_definitions(st.body, libs))
            continue
        else:
            continue
        _libraries_after(libs, st, library_call(st, libs))
    return out


def future_flags(body):
    """The compile() flags of the module's `from __future__` imports."""
    flags = 0
    for st in body:
        if isinstance(st, ast.ImportFrom) and st.module == "__future__":
            for a in st.names:
                feat = getattr(__future__, a.name, None)
                if isinstance(feat, __future__._Feature):
                    flags |= feat.compiler_flag
    return flags


def dataclass_options(decorators):
    """The keyword arguments of a @dataclass / @dataclasses.dataclass among
    decorators (literals only), or None when there is none: the caller
    applies the real dataclasses.dataclass, never the name as the source
    binds it."""
    for d in decorators:
        call = d if isinstance(d, ast.Call) else None
        f = call.func if call else d
        if (isinstance(f, ast.Name) and f.id == "dataclass") or (
                isinstance(f, ast.Attribute) and f.attr == "dataclass"
                and isinstance(f.value, ast.Name) and f.value.id == "dataclasses"):
            if call is None:
                return {}
            if call.args:
                return None
            try:
                return {k.arg: ast.literal_eval(k.value) for k in call.keywords
                        if isinstance(k.arg, str)}
            except ValueError:
                return None
    return None


# The default_factory a dataclass field of a local class may name.
FIELD_FACTORIES = ("dict", "list", "set", "tuple")


def _is_field(value):
    """Whether expression value calls field / dataclasses.field."""
    f = value.func if isinstance(value, ast.Call) else None
    return (isinstance(f, ast.Name) and f.id == "field") or (
        isinstance(f, ast.Attribute) and f.attr == "field" and isinstance(f.value, ast.Name)
        and f.value.id == "dataclasses")


def _field_call(st):
    """For `name: T = field(...)` / `dataclasses.field(...)` whose keyword
    arguments are literals, or a default_factory of FIELD_FACTORIES or a
    lambda (a definition: its ast.Lambda), in a class body: (name,
    {keyword: literal value}); else None."""
    if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.simple
            and isinstance(st.value, ast.Call) and not st.value.args):
        return None
    if not _is_field(st.value):
        return None
    kw = {}
    for k in st.value.keywords:
        if k.arg == "default_factory" and isinstance(k.value, ast.Name) and (
                k.value.id in FIELD_FACTORIES):
            kw[k.arg] = k.value.id
        elif k.arg == "default_factory" and isinstance(k.value, ast.Lambda):
            kw[k.arg] = k.value
        elif isinstance(k.arg, str) and k.arg != "default_factory" and _literal(k.value):
            kw[k.arg] = ast.literal_eval(k.value)
        else:
            return None
    return st.target.id, kw


def _dataclass_decorators(decorators, make):
    """[@make(...)] with the literal keywords of the @dataclass among
    decorators (dataclass_options()), else []."""
    opts = dataclass_options(decorators)
    if opts is None:
        return []
    return [ast.Call(func=ast.parse(make, mode="eval").body, args=[],
                     keywords=[ast.keyword(arg=k, value=ast.parse(repr(v), mode="eval").body)
                               for k, v in opts.items()])]


def _class_body(body, field=None, factory_by_name=False, later=None):
    """A class body as a local class is made again: its definitions, no
    imports, no factory calls; a dataclass field made by field() (see
    _field_call()) as its annotation's text and a call of `field` (the real
    dataclasses.field, under the name the caller gives) with its literal
    keywords, default_factory as the text of FIELD_FACTORIES's name (the
    name itself with factory_by_name) or the source's lambda, or the bare
    annotation without `field`.  later: for a dataclass's body, the name of the placeholder
    that stands for a field's default that is neither a literal nor a
    field() call (ndc: Nested = Nested()), so that the field and its place
    in __init__ are the source's; the caller sets the recorded default."""
    out = []
    for st in body:
        f = _field_call(st)
        if later is not None and f is None and isinstance(st, ast.AnnAssign) and (
                isinstance(st.target, ast.Name) and st.simple and st.value is not None
                and not _literal(st.value) and not _is_field(st.value)):
            out.append(ast.copy_location(ast.AnnAssign(
                target=st.target, annotation=ast.Constant(value=ast.unparse(st.annotation)),
                value=ast.Name(id=later, ctx=ast.Load()), simple=1), st))
        elif f is not None:
            value = None if field is None else ast.Call(
                func=ast.parse(field, mode="eval").body, args=[], keywords=[
                    ast.keyword(arg=k, value=v if isinstance(v, ast.Lambda) else ast.Name(
                        id=v, ctx=ast.Load()) if (k == "default_factory" and factory_by_name)
                        else ast.parse(repr(v), mode="eval").body) for k, v in f[1].items()])
            out.append(ast.copy_location(ast.AnnAssign(
                target=st.target, annotation=ast.Constant(value=ast.unparse(st.annotation)),
                value=value, simple=1), st))
        else:
            out += [d for d in definitions([st]) if not isinstance(
                d, (ast.Import, ast.ImportFrom)) and factory(d) is None and library_call(d) is None]
    return out or [ast.Pass()]


def _bound_names(fn):
    """The names function fn binds in its own scope, as the compiler finds
    them: its arguments, assignment and loop targets, the functions and
    classes it defines, its imports, its except ... as names; not those of
    the functions, classes, lambdas and comprehensions inside it, nor the
    ones it declares global or nonlocal."""
    out = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    declared = set()
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            # decorators, defaults, bases are evaluated in this scope
            todo.extend(n.decorator_list)
            if isinstance(n, ast.ClassDef):
                todo.extend(n.bases + [k.value for k in n.keywords])
            else:
                todo.extend(n.args.defaults + [d for d in n.args.kw_defaults if d])
            continue
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp)):
            continue  # a scope of its own (a walrus inside binds here: rare, left out)
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        todo.extend(ast.iter_child_nodes(n))
    return out - declared


def _block_def(body, name, blocks):
    """(the def or class statement of that name in body, the statements
    before it there), looking inside the with, if, try, for and while
    blocks of body too where blocks (a function's body; the statements
    before it then those before each block, outermost first); None where
    there is none."""
    for i, st in enumerate(body):
        if isinstance(st, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and (
                st.name == name):
            return st, body[:i]
    if not blocks:
        return None
    for i, st in enumerate(body):
        if isinstance(st, (ast.With, ast.If, ast.Try, ast.For, ast.While)):
            inner = [st.body] + [getattr(st, f, []) for f in ("orelse", "finalbody")] + [
                h.body for h in getattr(st, "handlers", [])]
            for b in inner:
                found = _block_def(b, name, True)
                if found is not None:
                    return found[0], body[:i] + found[1]
    return None


def _decorator_names(cls):
    """The bare names the decorators of class definition cls's methods
    call or are (@my_decorator, @my_decorator(1)), its nested classes'
    too."""
    return {_bare_decorator(d) for st in ast.walk(cls) if isinstance(st, (
        ast.FunctionDef, ast.AsyncFunctionDef)) for d in st.decorator_list} - {None}


def _bare_decorator(d):
    """The name decorator expression d is or calls (@name, @name(...)),
    or None."""
    f = d.func if isinstance(d, ast.Call) else d
    return f.id if isinstance(f, ast.Name) else None


def local_decorators(node, outer):
    """The bare names among def node's decorators (@my_decorator,
    @my_decorator(1)) that a function of outer (the definitions enclosing
    node, outermost first) binds: a decorator a test defines, which a
    factory of node alone does not have."""
    bound = set()
    for o in outer:
        if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound |= _bound_names(o)
    return {_bare_decorator(d) for d in getattr(node, "decorator_list", ())} & bound


def _later(cls, later):
    """later where class definition cls is a dataclass's (_class_body())."""
    return later if later is not None and dataclass_options(cls.decorator_list) is not None else (
        None)


def local_class_tree(tree, qualname, dataclass=None, field=None, factory_by_name=False,
                     given=None, later=None):
    """A class defined inside a function ("T.test_x.<locals>.Mock") of the
    parsed source tree, as one module-level statement that nests it as the
    source does (a definition inside a function found in its with, if,
    try, for and while blocks too): its enclosing classes and functions
    reduced to that nesting (a function takes no arguments, binds the names it binds in the
    source to None, so the class's methods keep those free variables, runs
    the imports and defines the classes before it there and returns the next
    definition), every class body reduced to its definitions, no decorators
    but a @dataclass of literal options, made as a call of `dataclass` (the
    caller's name for the real dataclasses.dataclass; left out when None,
    see dataclass_options()), and its fields made by `field` (_class_body()).
    given: the name of a dict, {name: class}, global where the statement
    runs: a class defined beside the class before it (a base, class C(B))
    that the dict holds is taken from it, not made again, so that one
    recorded class is one class however it is reached.  later: the name of
    a global placeholder for a dataclass field's default that is not a
    literal (_class_body()); None leaves such a field out.
    Returns (statement, chain): chain is the source's definitions from the
    top-level one to the class, and the class is reached from the top-level
    name by an attribute for a class of the chain and a call for a function.
    Raises ValueError saying why there is no such class.  The one rule of
    replay and repro for local classes."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    chain, body, befores = [], tree.body, []
    for name in parts:
        # (in a function, inside its blocks too: a class defined under
        # `with freeze_rng_state():`)
        found = _block_def(body, name, isinstance(chain[-1], (
            ast.FunctionDef, ast.AsyncFunctionDef)) if chain else False)
        if found is None:
            raise ValueError("%s: no definition of %s in the stored source" % (qualname, name))
        chain.append(found[0])
        befores.append(found[1])
        body = found[0].body
    if len(chain) < 2 or not isinstance(chain[-1], ast.ClassDef) or any(
            isinstance(n, ast.AsyncFunctionDef) for n in chain):
        raise ValueError("%s is not a class inside a function" % qualname)
    inner = chain[-1]
    deco = (lambda st: _dataclass_decorators(st.decorator_list, dataclass)) if dataclass else (
        lambda st: [])
    made = ast.ClassDef(name=inner.name, bases=inner.bases, keywords=inner.keywords,
                        body=_class_body(inner.body, field, factory_by_name, _later(inner, later)),
                        decorator_list=deco(inner), type_params=[])
    ast.copy_location(made, inner)
    for outer in reversed(chain[:-1]):
        child = made
        if isinstance(outer, ast.ClassDef):
            made = ast.ClassDef(name=outer.name, bases=[], keywords=[], body=[child],
                                decorator_list=[], type_params=[])
        else:
            # The names the function binds stay its locals (so that the
            # class's methods see them as free variables, as recorded).
            bound = sorted(_bound_names(outer) - {child.name})
            pre = [ast.Assign(targets=[ast.Name(id=b, ctx=ast.Store())],
                              value=ast.Constant(value=None)) for b in bound]
            # The imports before it there (from collections.abc import
            # MutableMapping, a base of the class), as a module's are run.
            nxt = chain[chain.index(outer) + 1]
            prior = befores[chain.index(outer) + 1]
            pre += [st for st in prior if isinstance(st, ast.Import) or (
                isinstance(st, ast.ImportFrom) and st.module != "__future__")]
            # The functions defined before it there that decorate its
            # methods (@my_decorator, made by a def of the test), themselves
            # undecorated: their def statements, as run there.
            used = _decorator_names(nxt)
            pre += [st for st in prior if isinstance(st, ast.FunctionDef)
                    and st.name in used and not st.decorator_list]
            # The classes defined before it there (a base class beside it:
            # class B(A)), definitions only too.
            beside = [ast.copy_location(ast.ClassDef(
                name=st.name, bases=st.bases, keywords=st.keywords,
                body=_class_body(st.body, field, factory_by_name, _later(st, later)),
                decorator_list=deco(st),
                type_params=[]), st)
                for st in prior if isinstance(st, ast.ClassDef)]
            if given is not None and outer is chain[-2]:
                # if "B" in given: B = given["B"]  else: class B: ...
                beside = [ast.copy_location(ast.If(
                    test=ast.Compare(left=ast.Constant(value=c.name), ops=[ast.In()],
                                     comparators=[ast.Name(id=given, ctx=ast.Load())]),
                    body=[ast.Assign(targets=[ast.Name(id=c.name, ctx=ast.Store())],
                                     value=ast.Subscript(
                                         value=ast.Name(id=given, ctx=ast.Load()),
                                         slice=ast.Constant(value=c.name), ctx=ast.Load()))],
                    orelse=[c]), c) for c in beside]
            pre += beside
            made = ast.FunctionDef(
                name=outer.name, args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                                    kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                    defaults=[]),
                body=pre + [child, ast.Return(value=ast.Name(id=child.name, ctx=ast.Load()))],
                decorator_list=[], returns=None, type_params=[])
        ast.copy_location(made, outer)
        for n in ast.walk(made):
            if not hasattr(n, "lineno") or n.lineno is None:
                ast.copy_location(n, outer)
    ast.fix_missing_locations(made)
    return made, chain


# Dynamo config names a trace may set: those that change what Dynamo
# decides (guards, recompiles, graph breaks, dynamic shapes, errors).  Not
# `disable` or anything that stops Dynamo from tracing a frame (the frame
# would then run for real), nothing naming a path, file, directory, cache,
# log, remote service or callable, nothing that runs the graph or writes.
DYNAMO_CONFIG = frozenset("""
accumulated_recompile_limit allow_empty_graphs allow_ignore_mark_dynamic allow_rnn
allow_unspec_int_on_nn_module assume_dunder_attributes_remain_unchanged
assume_static_by_default automatic_dynamic_exclusion_guard automatic_dynamic_shapes
automatic_dynamic_shapes_mark_as capture_autograd_function capture_dynamic_output_shape_ops
capture_func_transforms capture_profiler_record_function capture_scalar_outputs
canonicalize_output_graph_node_order capture_sparse_compute computed_lazy_constant_max_nodes
constant_fold_autograd_profiler_enabled do_not_emit_runtime_asserts
dont_skip_tracing dynamic_shapes enable_compiler_collectives enable_cpp_framelocals_guard_eval
enable_cpp_guard_manager enable_cpp_symbolic_shape_guards enable_dynamo_decompositions
enable_faithful_generator_behavior enable_trace_contextlib enable_trace_load_build_class
enable_trace_unittest debug_force_graph_break_on_leaf_return debug_force_nested_calls
error_on_nested_fx_trace error_on_nested_jit_trace error_on_recompile
fail_on_recompile_limit_hit force_nn_module_property_static_shapes
force_parameter_static_shapes force_unspec_int_unbacked_size_like_on_torchrec_kjt
graph_break_on_nn_param_ctor guard_nn_modules guard_nn_modules_using_dict_tags
inline_inbuilt_nn_modules install_free_tensors leaf_function_check_escaped_gradients
leaf_function_validate_outputs nested_graph_breaks numpy_default_complex
numpy_default_float numpy_default_int only_allow_pt2_compliant_ops optimize_ddp
prefer_deferred_runtime_asserts_over_guards raise_on_ctx_manager_usage
raise_on_unsafe_aot_autograd recompile_limit replay_side_effects report_guard_failures
rewrite_assert_with_torch_assert side_effect_replay_policy
skip_code_recursive_on_recompile_limit_hit skip_fsdp_guards skip_guards_on_constant_func_defaults
skip_nnmodule_hook_guards skip_no_tensor_aliasing_guards_on_parameters
skip_tensor_guards_with_matching_dict_tags skip_torchrec specialize_float specialize_int
suppress_errors trace_autograd_ops trace_numpy use_lamba_guard_for_object_aliasing
use_numpy_random_stream use_recursive_dict_tags_for_guards
""".split())

# Dynamo config names that only log, profile or count (Dynamo's TestCase
# sets log_compilation_metrics): never set from a trace and never
# compared, as the names above that are not set, but without a note.  (A
# path, such as debug_dir_root, keeps its note.)
CONFIG_NOT_DECISIONS = frozenset("""
cprofile debug_disable_compile_counter dynamo_profiler log_compilation_metrics
log_graph_in_out_metadata verbose
""".split())

# The ShapeEnv's settings (torch.fx.experimental._config, recorded as
# fx.NAME: value_kinds.CONFIG_MODULES) a trace may set: those that change
# the guards and specializations of symbolic shapes.  Not the translation
# validation, debug and logging ones.
FX_CONFIG = frozenset("""
aggressive_guard_free_semantics backed_size_oblivious meta_nonzero_assume_all_nonzero
no_data_dependent_graph_break skip_dtype_check_in_meta_registrations
soft_pending_unbacked_not_found_error symbol_guard_limit_before_specialize
unify_view_symbols_bso_meta use_duck_shape
""".split())


# Inductor options (torch.compile(options=...)) a trace may pass: those that
# change what Inductor decides, never a path, cache, log, command, compiler
# binary, worker or callable.
INDUCTOR_OPTIONS = frozenset("""
aggressive_fusion alignment_asserts allow_buffer_reuse assume_aligned_inputs
batch_fusion benchmark_epilogue_fusion benchmark_fusion combo_kernels comprehensive_padding
conv_1x1_as_mm coordinate_descent_tuning cpp_wrapper dce debug_index_asserts deterministic
emulate_precision_casts epilogue_fusion epilogue_fusion_first fallback_random
force_fuse_int_mm_with_mul force_layout_optimization force_shape_pad freezing graph_partition
group_fusion implicit_fallbacks inplace_buffers keep_output_stride layout_optimization
loop_ordering_after_fusion max_autotune max_autotune_gemm max_autotune_pointwise
max_fusion_size memory_planning nan_asserts online_softmax pattern_matcher permute_fusion
pick_loop_orders realize_opcount_threshold realize_reads_threshold reorder_for_locality
reorder_for_peak_memory scalar_asserts shape_padding size_asserts split_reductions
static_weight_shapes unroll_reductions_threshold use_fast_math
triton.cudagraphs triton.cudagraph_trees triton.autotune_pointwise triton.max_tiles
triton.persistent_reductions triton.divisible_by_16 triton.unique_kernel_names
""".split())


def config_allowed(name, text):
    """Whether a recorded config name (a Dynamo config name, fx.NAME,
    compiler.NAME of value_kinds.COMPILER_TRACED, or inductor.NAME of
    value_kinds.INDUCTOR_TRACED) may be set from a trace, with its recorded
    value text (a Python literal)."""
    if isinstance(name, str) and name.startswith("compiler.") and not _source_patterns(text):
        return False
    return isinstance(name, str) and (
        name in DYNAMO_CONFIG or (name.startswith("fx.") and name[3:] in FX_CONFIG)
        or (name.startswith("compiler.") and name[9:] in COMPILER_TRACED)
        or name in ("inductor.%s" % n for n in INDUCTOR_TRACED)) and (
        isinstance(text, str) and len(text) < 200)


_PATTERN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "_[]'\".*:, \\")


def _source_patterns(text):
    """Whether text is the literal of torch.compiler.config's dynamic or
    unbacked sources that Dynamo may match with re.match: comma-separated
    patterns of names, subscripts, dots, backslashes and at most three `*`
    each (no groups, alternatives or counted repeats, which could make a
    match backtrack for ever)."""
    try:
        value = ast.literal_eval(text) if isinstance(text, str) and len(text) < 200 else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return False
    return isinstance(value, str) and set(value) <= _PATTERN_CHARS and all(
        entry.count("*") <= 3 for entry in value.split(","))


def option_allowed(name, value):
    """Whether a recorded inductor option may be passed to torch.compile."""
    return isinstance(name, str) and name in INDUCTOR_OPTIONS and isinstance(
        value, (bool, int, float, str)) and (not isinstance(value, str) or len(value) < 64)


# Names of the builtins a value may be (as a function or class node of
# module builtins): classes and functions that compute, never exec, eval,
# open, __import__, compile, input, print, breakpoint, exit, getattr ...
SAFE_BUILTINS = frozenset("""
abs all any ascii bin bool bytearray bytes callable chr complex dict divmod enumerate filter
float format frozenset hash hex int isinstance issubclass iter len list map max min next object
oct ord pow range repr reversed round set slice sorted str sum tuple type zip
ArithmeticError AssertionError AttributeError Exception IndexError KeyError LookupError
NotImplementedError RuntimeError StopIteration TypeError ValueError ZeroDivisionError
""".split())


def shadows(name):
    """Whether a generated script binding name would rebind a builtin, torch
    or a module the script imports."""
    import builtins

    return not isinstance(name, str) or name in dir(builtins) or name.startswith("__") or (
        name in ("torch", "logging", "sys", "types", "collections", "numpy", "typing"))


def module_name(path, root):
    """The module a stored source under root is imported as (a/b.py: a.b,
    a/__init__.py: a); None for a file outside root, not .py, or whose
    name is not a dotted name."""
    rel = os.path.relpath(path, root)
    if rel.startswith("..") or not rel.endswith(".py"):
        return None
    name = rel[:-3].replace(os.sep, ".")
    if name.endswith(".__init__"):
        name = name[:-9]
    return name if all(part.isidentifier() for part in name.split(".")) else None
