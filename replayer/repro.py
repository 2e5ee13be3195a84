"""dynrec repro's generator, part 2: the trace, the stored sources, the script.

The module _dynrec_repro.repro (repro.c): the helpers, Tree and Writer come
from repro_values.py (see its docstring for what the generator does and why
nothing from the trace can add code to the script), the rule of what a
trace may name from definitions.py.  replayer/repro.c
calls main(opts) and writes the text it returns.
"""

import ast
import json
import keyword
import os
import pprint
import sys
import textwrap
import types

import _dynrec_repro

from . import recorded as _trace
from .definitions import (SAFE_BUILTINS, code_name, definitions, factory, library_calls,
                          local_class_tree, local_decorators, local_library, module_name,
                          shadows)
from .repro_values import (_DTYPES, _HEADER_IMPORTS, EXIT_DATAERR, EXIT_NOINPUT, EXIT_OK,
                           EXIT_PARTIAL, EXIT_SOFTWARE, EXIT_USAGE, NoCaptures, Refused, Tree,
                           Usage, Writer, _blob, _int, _query, _say, backend_kwargs, comment,
                           dotted)
from .value_kinds import MAX_CODE, VIEW_HELPERS, code_place, config_of, function_where, is_place

_qualname = _dynrec_repro.qualname  # co_qualname, co_name on 3.10

# Modules of plain data a script may name besides torch and the recorded
# program's (a class or enum of theirs as a value; collections and typing
# for the factories definitions.py admits; random and math compute on plain
# data: a random.Random is rebuilt through random).
_DATA_MODULES = frozenset(("argparse", "collections", "dataclasses", "enum", "typing", "types",
                           "numbers", "fractions", "decimal", "datetime", "random", "math",
                           "operator", "_operator", "numpy", "contextlib", "functools"))
# (fx graphs call operator.getitem; numpy: a frame's global np; contextlib:
# the class of a @contextmanager object; functools: a frame's global module,
# its partial)

# ---- reading the trace ---------------------------------------------------------


def _recorded(key, epochs):
    """What Dynamo did to the frame in the recording, in the given epochs
    (those of the chosen compiles): per compile its outcome and the reasons
    of its guard failures; its graph breaks."""
    fn, qn, line = key
    where = "filename = %s AND qualname = %s AND firstlineno = %d" % (
        _sql(fn), _sql(qn), line)
    compiles = [{"compile_id": c, "outcome": o, "recompile": r == "1"} for c, o, r in _query(
        "SELECT compile_id, outcome, recompile FROM v_compiles WHERE %s ORDER BY seq" % where)
        if _epoch(c) in epochs]
    ids = ", ".join(_sql(c["compile_id"]) for c in compiles) or "NULL"
    fails = {}
    for cid, failed, reason in _query(
            "SELECT compile_id, failed_compile_id, reason FROM v_guard_failures"
            " WHERE compile_id IN (%s) ORDER BY seq" % ids):
        fails.setdefault(cid or "?", []).append((reason or "").strip())
    for c in compiles:
        c["guard_failures"] = fails.get(c["compile_id"], [])
    # Resume functions after its graph breaks are compiled as the frame runs.
    short = qn.rsplit(".", 1)[-1].replace("_", "\\_").replace("%", "\\%")
    resumes = [c for c, in _query(
        "SELECT compile_id FROM v_compiles WHERE filename = %s AND qualname LIKE %s ESCAPE '\\'"
        " ORDER BY seq" % (_sql(fn), _sql("%%torch\\_dynamo\\_resume\\_in\\_%s\\_at\\_%%" % short)))
        if _epoch(c) in epochs]
    ids = ", ".join(_sql(c) for c in [c["compile_id"] for c in compiles] + resumes) or "NULL"
    resume_recompiles = [c for c, in _query(
        "SELECT DISTINCT compile_id FROM v_guard_failures WHERE compile_id IN (%s)" % (
            ", ".join(_sql(c) for c in resumes) or "NULL"))]
    breaks = [r for r, in _query("SELECT reason FROM v_graph_breaks WHERE compile_id IN (%s)"
                                 " ORDER BY seq" % ids)]
    return compiles, breaks, len(resumes), len(resume_recompiles)


def _sql(s):
    return "'" + str(s).replace("'", "''") + "'"


# ---- the stored sources ----------------------------------------------------------

def _is_compile_decorator(dec):
    """@torch.compile(...), @torch.compile, @torch._dynamo.optimize(...)."""
    f = dec.func if isinstance(dec, ast.Call) else dec
    parts = []
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    name = ".".join(reversed(parts))
    return name in ("torch.compile", "compile", "torch._dynamo.optimize", "dynamo.optimize",
                    "_dynamo.optimize", "optimize")


def _defined_names(st):
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {st.name}
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in st.names}
    if isinstance(st, ast.Expr):
        return set()  # torch.library.define(...) binds no name
    out = set()
    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.add(n.id)
    return out


def _loaded_names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class Source:
    """One stored source file: its definitions, its functions by
    (qualname, first line), their code objects (compiled, never run)."""

    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.tree = ast.parse(text, path)
        self.defs = []  # top-level definition statements, in order
        self.where = {}  # name -> definition statements
        self.library = []  # custom op schemas and the definitions registered to them
        self.decorates = {}  # name -> the definitions a decorator of it decorates
        for st in definitions(self.tree.body):  # definitions.py: the one filter
            self.defs.append(st)
            for name in _defined_names(st):
                self.where.setdefault(name, []).append(st)
        ops = set()
        for st, lib in library_calls(self.defs):
            if lib is not None and lib[0] != "Library":  # (a Library: by its name)
                self.library.append(st)
                ops.add(lib[2])
        for st in self.defs:
            for d in getattr(st, "decorator_list", ()):
                # @scale.register_fake: the definition registers itself with
                # scale (a custom op def here), which needs it though no
                # name does; @torch.library.impl("ns::op", ...) with an op
                # torch.library.define defines here: with that schema.
                root = d.func if isinstance(d, ast.Call) else d
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root is not d and any(isinstance(
                        w, (ast.FunctionDef, ast.ClassDef)) for w in self.where.get(root.id, ())):
                    self.decorates.setdefault(root.id, []).append(st)
                elif isinstance(d, ast.Call) and d.args and isinstance(
                        d.args[0], ast.Constant) and d.args[0].value in ops and (
                        ast.unparse(d.func).startswith("torch.library.")):
                    self.library.append(st)
        self.funcs = {}  # (qualname, firstlineno) -> (node, enclosing function nodes)
        self.lambdas = {}  # such a key -> every lambda's (node, enclosing nodes) there
        self._walk(self.tree.body, "", [])
        self.codes = {}
        self.alike = {}  # (qualname, firstlineno) -> its code objects, where a line has several
        stack = [compile(text, path, "exec", dont_inherit=True)]
        while stack:
            c = stack.pop()
            key = (_qualname(c), c.co_firstlineno)
            if self.codes.setdefault(key, c) is not c:
                self.alike.setdefault(key, [self.codes[key]]).append(c)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))

    def at(self, key, place):
        """(definition node and enclosing function nodes, code object) of
        the function at key (qualname, first line); of several lambdas of
        one line, the one at the recorded place (value_kinds.code_place):
        the nodes and the code objects are each in the order of the text."""
        found, code = self.funcs.get(key), self.codes.get(key)
        codes, nodes = self.alike.get(key), self.lambdas.get(key, [])
        if codes and is_place(place) and len(nodes) == len(codes) and all(
                code_place(c) is not None for c in codes):
            codes = sorted(codes, key=code_place)
            nodes = sorted(nodes, key=lambda f: (f[0].lineno, f[0].col_offset))
            i = next((i for i, c in enumerate(codes) if code_place(c) == place), None)
            if i is not None:
                found, code = nodes[i], codes[i]
        return found, code

    def _walk(self, body, prefix, outer):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + st.name
                first = min([st.lineno] + [d.lineno for d in st.decorator_list])
                if not isinstance(st, ast.ClassDef):
                    self.funcs[(code_name(q), first)] = (st, outer)
                    self._walk(st.body, q + ".<locals>.", outer + [st])
                else:
                    self._walk(st.body, q + ".", outer)
            else:
                for child in ast.iter_child_nodes(st):
                    if isinstance(child, ast.stmt):
                        self._walk([child], prefix, outer)
                    for sub in ast.walk(child):
                        if isinstance(sub, ast.Lambda):
                            key = (prefix + "<lambda>", sub.lineno)
                            self.funcs.setdefault(key, (sub, outer))
                            self.lambdas.setdefault(key, []).append((sub, outer))

    def segment(self, node, strip_compile=False):
        """The text of a statement, dedented, with its decorators (less
        torch.compile ones when strip_compile)."""
        lines = []
        removed = []
        for d in getattr(node, "decorator_list", []):
            if strip_compile and _is_compile_decorator(d):
                removed.append(ast.get_source_segment(self.text, d) or "torch.compile")
                continue
            lines.append("@" + textwrap.dedent(ast.get_source_segment(self.text, d, padded=True)
                                               or "").strip())
        body = ast.get_source_segment(self.text, node, padded=True) or ast.unparse(node)
        lines.append(textwrap.dedent(body))
        return "\n".join(lines), removed


class Generator:
    def __init__(self, meta, sources, key, caps, trace_name):
        self.fx_classes = False  # repro_fx_classes is defined (repro_values)
        self.meta = meta
        self.sources = sources  # path -> Source
        self.key = key
        self.caps = caps
        self.trace_name = trace_name
        self.imports = set()
        self.used = set()  # variable names taken
        self.exact = None  # a name fresh() gives as it is, once (a global's)
        # The script's own names (a captured value never takes one).
        self.reserved = {"torch", "logging", "sys", "types", "collections", "repro_fn",
                         "repro_compiled", "repro_call", "repro_seen", "ReproSeen", "repro_started",
                         "repro_started_one",
                         "repro_raised", "RECORDED"}
        self.needed = {}  # Source -> top-level names of it the script needs
        self.refused = []  # references to names outside torch and the sources
        self.factories = {}  # (filename, qualname, line) -> (factory name, freevars, text)
        self.notes = []
        # For a library's frame: the installed package it is in, whose
        # modules the script may import (library_package).
        self.library = None
        self.main = self.main_source()
        # The program's other modules (files beside the script, as replay
        # serves them), by module name: their definitions go into the
        # script too, registered in sys.modules under their names.
        self.modsrc = {}
        root = os.path.dirname(self.main.path) if self.main is not None else (
            self.meta.get("cwd") or "/")
        for path, src in sources.items():
            if src is self.main:
                continue
            name = module_name(path, root)
            if name is not None:
                self.modsrc[name] = src
        self.names = set()
        for src in sources.values():
            self.names |= set(src.where)

    def need(self, src, name):
        if name in src.where:
            self.needed.setdefault(src, set()).add(name)
            return True
        return False

    def source_of(self, mod):
        return self.main if mod == "__main__" else self.modsrc.get(mod)

    def main_source(self):
        cwd = self.meta.get("cwd") or "/"
        script = self.meta.get("script")
        if script:
            p = os.path.normpath(os.path.join(cwd, script))
            if p in self.sources:
                return self.sources[p]
        return None

    def fresh(self, hint):
        hint = hint if isinstance(hint, str) and hint.isidentifier() and not keyword.iskeyword(
            hint) else "v"
        if hint == "self":
            hint = "obj"
        if hint == self.exact:
            self.exact = None
            self.used.add(hint)
            return hint
        name, k = hint, 2
        while name in self.used or name in self.reserved or name in self.names:
            name = "%s_%d" % (hint, k)
            k += 1
        self.used.add(name)
        return name

    def module_ref(self, name):
        if name == "torch" or name.startswith("torch."):
            if name != "torch":
                self.imports.add(name)
            return name
        if name == "__main__":
            return "sys.modules[__name__]"
        src = self.modsrc.get(name)
        if src is not None:  # a module of the program: its definitions, registered
            for n in src.where:
                self.need(src, n)
            return "sys.modules[%r]" % name
        if name in _DATA_MODULES or (self.library is not None and (
                name == self.library or name.startswith(self.library + "."))):
            self.imports.add(name)
            return name
        # The script names torch, the stored definitions, a few stdlib
        # modules of plain data only and, for a library's frame, that
        # installed package: a trace cannot make it import or reference
        # anything else (os, subprocess, a package's __main__).
        self.refused.append("module %s is not torch's or the recorded program's: None instead"
                            % name)
        return "None"

    def global_ref(self, mod, qual):
        src = self.source_of(mod)
        if src is not None or mod == "__main__":
            top = qual.split(".")[0]
            if src is None or not self.need(src, top):
                self.notes.append("%s.%s is not defined by the stored sources" % (mod, qual))
            return qual
        if mod == "builtins":
            if qual in SAFE_BUILTINS:
                return qual
            self.refused.append("builtins.%s is not a builtin a repro names: None instead" % qual)
            return "None"
        if mod.startswith("torch.nn.modules.") and "." not in qual:
            return "torch.nn.%s" % qual  # torch.nn exports every module class
        if self.module_ref(mod) == "None":
            return "None"
        return "%s.%s" % (mod, qual)

    def nested(self, where, place=None):
        """A factory that makes the nested function or lambda at where (and
        place, of several lambdas of a line), taking its free variables:
        (factory name, free variables)."""
        src = self.sources.get(os.path.normpath(where[0]))
        key = (code_name(where[1]), where[2])
        if src is not None and key in src.alike and is_place(place):
            where = where + (tuple(place),)  # one factory per lambda of the line
        if where in self.factories:
            f = self.factories[where]
            return f[0], f[1]
        found, code = src.at(key, place) if src is not None else (None, None)
        if found is None or code is None:
            return None
        node, outer = found
        freevars = list(code.co_freevars)
        short = where[1].rsplit(".", 1)[-1]
        # A decorator the enclosing function defines: the function itself
        # here (what the factory hands back is the function the def made).
        own = sorted(local_decorators(node, outer or []) - set(freevars))
        for name in _loaded_names(node) - set(freevars) - set(own):
            self.need(src, name)
        if isinstance(node, ast.Lambda):
            body = "    return " + (ast.get_source_segment(src.text, node) or ast.unparse(node))
            removed = []
        else:
            text, removed = src.segment(node, strip_compile=True)
            ret = node.name
            if len(node.decorator_list) > len(removed):
                # The recorded value is the function this def makes; a
                # decorator may hand back a wrapper of it
                # (torch._dynamo.disable): followed back to it.
                ret = "%s(%s, %r)" % (self.unwrapper(), node.name, node.name)
            body = "".join("    %s = (lambda f: f)  # a decorator %s defines\n" % (
                name, comment(outer[-1].name)) for name in own)
            body += textwrap.indent(text, "    ") + "\n    return %s" % ret
        enclosing = outer[-1].name if outer else "make"
        fname = enclosing if enclosing not in self.names and (
            enclosing not in self.reserved) else "make_" + (short if short.isidentifier()
                                                             else "fn")
        while fname in {f[0] for f in self.factories.values()} and where not in self.factories:
            fname += "_"
        head = ["# %s (%s:%d), made with its closure variables as arguments%s" % (
            comment(where[1]), comment(os.path.basename(where[0])), where[2],
            "; %s removed: compiled explicitly below" % comment(", ".join(removed))
            if removed else "")]
        text = "\n".join(head + ["def %s(%s):" % (fname, ", ".join(freevars)), body])
        self.factories[where] = (fname, freevars, text)
        self.reserved.add(fname)
        return fname, freevars

    def unwrapper(self):
        """The script's helper that follows a decorated function's
        __wrapped__ chain back to the function a def of that name made."""
        key = ("helper", "unwrapped")
        if key not in self.factories:
            text = "\n".join([
                "def repro_unwrapped(f, name):",
                "    # the function the def made, behind the wrappers its decorators put",
                "    # around it (each one's __wrapped__, as functools.wraps sets it)",
                "    while getattr(getattr(f, '__code__', None), 'co_name', None) != name and (",
                "            hasattr(f, '__wrapped__')):",
                "        f = f.__wrapped__",
                "    return f"])
            self.factories[key] = ("repro_unwrapped", [], text)
            self.reserved.add("repro_unwrapped")
        return "repro_unwrapped"

    def weak_maker(self):
        """The script's helper that makes a weak container or reference of
        items it keeps alive (as the program's other references did)."""
        key = ("helper", "weak")
        if key not in self.factories:
            text = "\n".join([
                "class repro_Gone:",
                "    pass  # the referent of a weak reference dead when recorded",
                "",
                "",
                "repro_held = []  # what the weak containers and references below hold",
                "",
                "",
                "def repro_weak(make, items):",
                "    if items is None:",
                "        return make(repro_Gone())  # dead at once, as recorded",
                "    repro_held.append(items)",
                "    return make(items)"])
            self.factories[key] = ("repro_weak", [], text)
            self.reserved.update(("repro_weak", "repro_held", "repro_Gone"))
        return "repro_weak"

    def id_maker(self):
        """The script's helper for an int that was id() of a value: id() of
        the value made for it, and the same id for the same recorded int
        in a later call (where that value is not an argument)."""
        key = ("helper", "id")
        if key not in self.factories:
            text = "\n".join([
                "repro_ids = {}  # a recorded id -> the value made for it",
                "",
                "",
                "def repro_id(recorded, *value):",
                "    if value:",
                "        repro_ids[recorded] = value[0]",
                "    return id(repro_ids[recorded]) if recorded in repro_ids else recorded"])
            self.factories[key] = ("repro_id", [], text)
            self.reserved.update(("repro_id", "repro_ids"))
        return "repro_id"

    def cell_setter(self):
        """The script's helper that puts a value in the closure cell of a
        method of a class (a local class's method that calls a function the
        test defined beside it: its factory bound the name to None)."""
        key = ("helper", "set_cell")
        if key not in self.factories:
            text = "\n".join([
                "def repro_set_cell(cls, method, name, value):",
                "    # the cell of free variable `name` of cls's method",
                "    f = vars(cls)[method]",
                "    f = getattr(f, '__func__', f)",
                "    f.__closure__[f.__code__.co_freevars.index(name)].cell_contents = value"])
            self.factories[key] = ("repro_set_cell", [], text)
            self.reserved.add("repro_set_cell")
        return "repro_set_cell"

    def jagged_view(self):
        """The script's helpers that make a view of a jagged nested tensor
        from its base as the replay does: value_kinds.jagged_view_steps and
        view_by_steps, their own text (one rule, written out)."""
        key = ("helper", "jagged_view")
        if key not in self.factories:
            text = VIEW_HELPERS.strip().replace(
                "def jagged_view_steps(", "def repro_jagged_view_steps(").replace(
                    "def view_by_steps(", "def repro_view_by_steps(")
            self.factories[key] = ("repro_jagged_view_steps", [], text)
            self.reserved.update(("repro_jagged_view_steps", "repro_view_by_steps"))
        return "repro_jagged_view_steps", "repro_view_by_steps"

    def body_function(self):
        """The script's helper that finds the function a class body's def
        statement made behind a class attribute (value_kinds.body_function)."""
        key = ("helper", "body_function")
        if key not in self.factories:
            text = "\n".join([
                "def repro_body_function(v):",
                "    # a method's function, a static or class method's, a property's getter",
                "    if isinstance(v, (staticmethod, classmethod)):",
                "        return v.__func__",
                "    if isinstance(v, property):",
                "        return v.fget",
                "    return v.func if isinstance(v, functools.cached_property) else v"])
            self.factories[key] = ("repro_body_function", [], text)
            self.imports.add("functools")
            self.reserved.add("repro_body_function")
        return "repro_body_function"

    def local_class(self, mod, qual, number=0):
        """The script's name for a class defined inside a function of the
        stored sources ("T.test_x.<locals>.Pair"), made by a factory that
        nests it as the source does (definitions.local_class_tree(), the
        replay's rule), its qualname and @dataclass set as recorded, once
        per number (the recording's classes of that qualname); or (None,
        why) when the sources do not define it."""
        key = ("class", mod, qual)
        if key in self.factories:
            name, _, _, first, make = self.factories[key]
            if number == first:
                return name, None
            again = ("class", mod, qual, number)
            if again not in self.factories:
                # Another class of that qualname: the factory called again.
                other = "%s_%d" % (name, number)
                while other in self.names or other in self.reserved or other in self.used:
                    other += "_"
                self.factories[again] = (other, [], "%s = %s()\n%s.__qualname__ = %r" % (
                    other, make, other, qual))
                self.reserved.add(other)
            return self.factories[again][0], None
        src = self.source_of(mod)
        if src is None:
            return None, "class %s.%s: its module's source is not in the trace" % (mod, qual)
        try:
            made, chain = local_class_tree(src.tree, qual, "dataclasses.dataclass",
                                           "dataclasses.field", factory_by_name=True)
        except ValueError as exc:
            return None, str(exc)
        inner = chain[-1]
        bound = {n.name for n in ast.walk(made) if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        for name in _loaded_names(made) - bound:
            self.need(src, name)
        name = inner.name
        while name in self.names or name in self.reserved or name in self.used:
            name += "_"
        make = "make_" + name
        while make in self.names or make in self.reserved:
            make += "_"
        reach = chain[0].name
        for outer, nxt in zip(chain[:-1], chain[1:]):
            reach += "()" if isinstance(outer, ast.FunctionDef) else "." + nxt.name
        text = ["# %s (%s:%d), its class bodies' definitions only, nested as in the source" % (
                    comment(qual), comment(os.path.basename(src.path)), inner.lineno),
                "def %s():" % make,
                textwrap.indent(ast.unparse(made), "    "),
                "    return %s" % reach,
                "",
                "%s = %s()" % (name, make),
                "%s.__qualname__ = %r" % (name, qual)]
        if "dataclasses." in text[2]:
            self.imports.add("dataclasses")
        self.factories[key] = (name, [], "\n".join(text), number, make)
        self.reserved |= {name, make}
        return name, None

    def namedtuple_class(self, mod, name, fields, defaults, number):
        """The script's name for a namedtuple class no module binds (made
        inside a function), made once by collections.namedtuple with the
        recorded fields and defaults (value_kinds.namedtuple_made)."""
        key = ("namedtuple", number, mod, name, tuple(fields),
               tuple((type(x), x) for x in defaults))
        if key in self.factories:
            return self.factories[key][0]
        var = name
        while var in self.names or var in self.reserved or var in self.used:
            var += "_"
        self.imports.add("collections")
        text = "%s = collections.namedtuple(%r, %r%s, module=%r)  # made inside a function" % (
            var, name, fields, ", defaults=%r" % (defaults,) if defaults else "", mod)
        self.factories[key] = (var, [], text)
        self.reserved.add(var)
        return var

    def definitions(self, frame_node):
        """The definition statements the script needs (by the names they
        define, transitively, across the program's modules): the other
        modules' first, each registered in sys.modules, then the script's."""
        chosen = {}  # Source -> ids of its statements
        done = {}
        changed = True
        while changed:
            changed = False
            for src, names in list(self.needed.items()):
                seen = done.setdefault(src, set())
                pick = chosen.setdefault(src, set())
                # The custom op schemas it defines (torch.library.define)
                # and the definitions registered to them.
                for st in src.library:
                    if id(st) not in pick:
                        pick.add(id(st))
                        for n in _loaded_names(st):
                            self.need(src, n)
                while names - seen:
                    name = (names - seen).pop()
                    seen.add(name)
                    for st in src.where.get(name, []) + src.decorates.get(name, []):
                        if id(st) in pick:
                            continue
                        pick.add(id(st))
                        if factory(st) is not None:
                            continue  # written with the real factory: needs nothing
                        for n in _loaded_names(st):
                            self.need(src, n)
                        changed |= self.imported(st)
        out = []
        order = [s for s in self.modsrc.values() if s in chosen]
        if self.main in chosen:
            order.append(self.main)
        defined = {}
        for src in order:
            mod = next((m for m, s2 in self.modsrc.items() if s2 is src), None)
            if mod is not None:
                out.append("# -- from %s (module %s) --" % (
                    comment(os.path.basename(src.path)), mod))
            names = []
            for st in src.defs:
                if id(st) not in chosen[src] or ast.unparse(st) in _HEADER_IMPORTS:
                    continue
                if isinstance(st, ast.ImportFrom) and self.modsrc.get(st.module or "") is src:
                    continue
                made = factory(st)
                if made is not None:
                    # A namedtuple/TypeVar of literals, written with the real
                    # factory: never through a name the source binds.
                    name, (fmod, fname), args, kw = made
                    self.imports.add(fmod)
                    text = "%s = %s.%s(%s)" % (name, fmod, fname, ", ".join(
                        [repr(a) for a in args] + ["%s=%r" % kv for kv in sorted(kw.items())]))
                    removed = []
                else:
                    text, removed = src.segment(st, strip_compile=st is frame_node)
                if removed:
                    text = "# %s removed: compiled explicitly below\n%s" % (
                        comment(", ".join(removed)), text)
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    text = "\n" + text + "\n"
                out.append(text)
                for n in sorted(_defined_names(st)):
                    if n in defined and defined[n] is not src:
                        self.notes.append("%s is defined in %s and %s: the script holds both "
                                          "in one namespace, the later wins" % (
                                              n, os.path.basename(defined[n].path),
                                              os.path.basename(src.path)))
                    defined[n] = src
                    names.append(n)
            if mod is not None:
                self.imports.add("types")
                out.append("sys.modules[%r] = types.ModuleType(%r)  # the definitions above"
                           % (mod, mod))
                out.append("vars(sys.modules[%r]).update(%s)" % (
                    mod, "{" + ", ".join("%r: %s" % (n, n) for n in names) + "}"))
                out.append("")
        return out

    def imported(self, st):
        """An import statement of one of the program's modules: what it
        imports is needed there.  True when that added something."""
        added = False
        if isinstance(st, ast.ImportFrom) and st.level == 0 and st.module in self.modsrc:
            src = self.modsrc[st.module]
            for a in st.names:
                if a.name == "*":
                    for n in src.where:
                        added |= self.need_new(src, n)
                else:
                    added |= self.need_new(src, a.name)
        elif isinstance(st, ast.Import):
            for a in st.names:
                src = self.modsrc.get(a.name)
                if src is not None:
                    for n in src.where:
                        added |= self.need_new(src, n)
        return added

    def need_new(self, src, name):
        before = name in self.needed.get(src, ())
        return self.need(src, name) and not before


def _reach(src, node):
    """The names node loads, and those the top-level definitions of src
    they name load, transitively: the globals a call of it may read."""
    out = set()
    todo = list(_loaded_names(node))
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        for st in src.where.get(name, []):
            todo.extend(_loaded_names(st) - out)
    return out


def _frames(caps):
    """(filename, qualname, firstlineno) -> captures, in recorded order;
    resume functions left out (their parent's calls make them again)."""
    out = {}
    for c in caps:
        if "torch_dynamo_resume_in_" in c["qualname"]:
            continue
        out.setdefault((c["filename"], c["qualname"], c["line"]), []).append(c)
    return out


def _listing(frames):
    return "; ".join("%s (%s:%d, %d compile%s: %s)" % (
        k[1], os.path.basename(k[0]), k[2], len(v), "" if len(v) == 1 else "s",
        " ".join(c["cid"] for c in v)) for k, v in frames.items())


def _epoch(cid):
    """The epoch of a stored compile id ("2:0/1" -> 2; SCHEMA.md, Compile
    identity): the resets before it."""
    head, sep, _ = (cid or "").partition(":")
    return int(head) if sep and head.isdigit() else 0


def _select(caps, frame, compile_id):
    frames = _frames(caps)
    if not frames:
        raise Usage("no frame of the user's code was captured (only resume functions)")
    if compile_id:
        want = compile_id.strip("[]")
        hit = [c for c in caps if c["cid"].strip("[]") == want]
        if not hit:
            raise Usage("no compile %s was captured; the frames and their compiles: %s"
                        % (compile_id, _listing(frames)))
        c = hit[0]
        key = (c["filename"], c["qualname"], c["line"])
        if key not in frames:
            import re

            m = re.search(r"torch_dynamo_resume_in_(.+)_at_\d+$", c["qualname"])
            parent = [k for k in frames if m and k[1].rsplit(".", 1)[-1] == m.group(1)]
            if not parent:
                raise Usage("compile %s is of a resume function whose frame was not captured"
                            % compile_id)
            _say(_dynrec_repro.safe(
                "compile %s is of a resume function of %s: the repro calls %s" % (
                    compile_id, parent[0][1], parent[0][1])))
            before = [p for p in frames[parent[0]] if caps.index(p) < caps.index(c)]
            return parent[0], before or frames[parent[0]]
        sel = frames[key]
        # The compiles before it in its epoch: a reset before them left no
        # cache entry for them to meet.
        return key, [p for p in sel[:sel.index(c) + 1] if _epoch(p["cid"]) == _epoch(c["cid"])]
    if frame:
        keys = [k for k in frames if k[1] == frame or k[1].endswith("." + frame)]
        if not keys:
            raise Usage("no frame %s was captured; the frames: %s" % (frame, _listing(frames)))
        if len(keys) > 1:
            _say(_dynrec_repro.safe("%d frames are named %s; the first is used: %s" % (
                len(keys), frame, _listing({k: frames[k] for k in keys}))))
        return keys[0], frames[keys[0]]
    # The most compiled frame, a replayable one first, the first of a tie.
    key = max(frames, key=lambda k: (all(c["data"].get("replayable", True) for c in frames[k]),
                                     len(frames[k])))
    if len(frames) > 1:
        _say(_dynrec_repro.safe(
            "the frame with the most compiles: %s (--frame or --compile for another: %s)" % (
                key[1], _listing(frames))))
    return key, frames[key]


def _literal(text):
    """A recorded config value (Python literal text) as a checked literal."""
    try:
        v = ast.literal_eval(text)
    except Exception:
        return None
    return repr(v)


def _args(code, f_locals, w):
    """The call's arguments (expressions) that give code these locals."""
    names = code.co_varnames
    nargs = code.co_argcount
    out = []

    def get(name):
        if name not in f_locals:
            raise Usage("argument %s of the frame was not captured" % name)
        return w.expr(f_locals[name], name)

    for name in names[:nargs]:
        out.append(get(name))
    k = nargs
    for name in names[k:k + code.co_kwonlyargcount]:
        out.append("%s=%s" % (name, get(name)))
    k += code.co_kwonlyargcount
    if code.co_flags & 0x04:
        out.append("*" + get(names[k]))
        k += 1
    if code.co_flags & 0x08:
        out.append("**" + get(names[k]))
    return out


def generate(opts):
    meta = _trace.meta(_query)
    caps = _trace.captures(_query)
    trace = opts.get("trace") or "trace.db"
    if not caps:
        raise NoCaptures("%s holds no captured frames: it was recorded before input capture "
                         "(dynrec 0.3.0), or Dynamo compiled nothing" % trace)
    key, sel = _select(caps, opts.get("frame"), opts.get("compile"))
    trees = [Tree(c["no"]) for c in sel]  # every tree checked before anything is written
    sources = {}
    cwd = meta.get("cwd") or "/"
    for path, role, blob in _query(
            "SELECT path, role, blob_id FROM v_files WHERE role IN ('script', 'main', 'source')"
            " ORDER BY rowid"):
        if not path or not blob:
            continue
        p = os.path.normpath(os.path.join(cwd, path))
        try:
            text = _blob(_int(blob, "a blob id"), MAX_CODE).decode("utf-8", "replace")
            sources[p] = Source(p, text)
        except OSError as exc:
            _say(_dynrec_repro.safe("source %s is unreadable: %s" % (p, exc)))
        except (SyntaxError, ValueError) as exc:
            _say(_dynrec_repro.safe("source %s does not parse: %s" % (p, exc)))
    gen = Generator(meta, sources, key, sel, trace)
    filename, qualname, line = key
    src = sources.get(os.path.normpath(filename))
    code = src.codes.get((code_name(qualname), line)) if src is not None else None
    found = src.funcs.get((code_name(qualname), line)) if src is not None else None
    library = None
    local_ops = []  # the custom op statements of the test it is made in
    if code is None or found is None:
        library = _library_layout(sel)
        if library is None:
            raise Usage("frame %s (%s:%d) is not a function of the sources stored in %s: a "
                        "repro needs its source (or, for a library's frame, a trace of dynrec "
                        "0.7.3 or later)" % (qualname, filename, line, trace))
        # A library's frame (a decorator's wrapper around a model's forward):
        # the script finds its function where the library put it, on the
        # class of the frame's first argument, as the replay does.
        code, node, nested, reach, fn_expr = library, None, False, set(), "repro_fn"
        gen.library = library_package(filename, tree_module(trees[0]))
    else:
        node, outer = found
        nested = bool(outer) or "<locals>" in qualname
        if src is not gen.main and src not in gen.modsrc.values():
            raise Usage("frame %s is in %s, which is not a module of the recorded program: a "
                        "repro needs the frame's source" % (qualname, filename))
        if not nested:
            gen.need(src, qualname.split(".")[0])
            fn_expr = qualname
        reach = _reach(src, node)
        # The custom ops the test function it is made in defines in its
        # body (definitions.local_library(), the replay's rule), written at
        # module level, before the calls.
        local = local_library(src.tree, qualname) if nested else None
        if local:
            gen.reserved.add("repro_libraries")
        for spec, st in (local[1] if local else ()):
            if spec is not None and spec[0] == "Library" and isinstance(st, ast.With):
                local_ops.append("%s = torch.library.Library(%s)  # %s's `with "
                                 "torch.library._scoped_library(...) as %s:`" % (
                                     spec[1], ", ".join(repr(a) for a in spec[2]),
                                     comment(local[0]), spec[1]))
                # (kept: one the next `with` binds to the name stays)
                local_ops.append("repro_libraries.append(%s)" % spec[1])
                continue
            for n in _loaded_names(st):
                gen.need(src, n)
            local_ops.append(("\n%s\n" if spec is None else "%s") % ast.unparse(st))
    recorded, breaks, nresume, nresume_re = _recorded(key, {_epoch(c["cid"]) for c in sel})
    states = _trace.states(_query)

    # The calls: one per captured compile, in order.
    calls = []
    missing = []
    tf32 = False  # torch.backends.cuda.matmul.allow_tf32 as the script left it
    not_replayable = []
    prev_config = {}
    start = _start_config()
    for i, (cap, tree) in enumerate(zip(sel, trees)):
        w = Writer(gen, tree)
        gen.used = set()
        root = tree.rows[0][2]
        lines = []
        if i and _epoch(cap["cid"]) != _epoch(sel[i - 1]["cid"]):
            lines.append("torch._dynamo.reset()  # as recorded: the caches start empty again")
        if not cap["data"].get("replayable", True):
            why = cap["reason"] or "not captured"
            not_replayable.append("compile %s: %s" % (cap["cid"], why))
            lines.append("# NOT REPLAYABLE as recorded: %s" % comment(why))
        # The Dynamo config of this compile.
        want = cap["data"].get("config")
        want = {k: t for k, t in want.items() if config_of(k) and isinstance(t, str)
                } if isinstance(want, dict) else {}
        for name in sorted(set(prev_config) - set(want)):
            back = _literal(start.get(name)) if isinstance(start.get(name), str) else None
            if back is not None:
                lines.append("%s.%s = %s  # back to its start value" % (
                    *config_of(name), back))
        for name, text in sorted(want.items()):
            lit = _literal(text)
            if lit is None:
                lines.append("# config %s = %s is not a literal: not set" % (
                    comment(name), comment(text)))
            elif prev_config.get(name) != text:
                lines.append("%s.%s = %s" % (*config_of(name), lit))
        prev_config = want
        for sno in states.get(cap["cid"], ()):
            more, gone = _module_state(gen, Tree(sno))
            lines += more
            missing.extend(gone)
        # Globals the frame's code reads, as they were; and those the
        # functions it may call read (the module's other globals are left).
        todo = []
        for field, only in (() if library else (("soft_globals", reach), ("globals", None))):
            g = root.get(field)
            if type(g) is int and tree.rows[g][0] == "dict":
                todo += [(k, c) for k, c in tree.rows[g][2] if only is None or (
                    tree.rows[k][0] == "str" and tree.rows[k][2] in only)]
        if todo:
            for k, c in todo:
                kk = tree.rows[k]
                if kk[0] != "str" or not kk[2].isidentifier() or keyword.iskeyword(kk[2]):
                    continue
                if shadows(kk[2]) or kk[2] in gen.reserved:
                    # Never rebinds a builtin, torch or one of the script's
                    # own names (a global `print` bound to os.system).
                    gen.notes.append("global %s of the frame is not rebound: it is a builtin's, "
                                     "torch's or the script's name" % comment(kk[2]))
                    continue
                if _library_wrapper_of(gen, tree, c, kk[2]):
                    # A library decorator's wrapper of the function the
                    # decorated def above makes, which that def makes again.
                    w.emit("# %s: as its decorated definition above makes it (a library's "
                           "wrapper of that function)" % kk[2])
                    continue
                if tree.rows[c][0] in ("function", "class", "pymodule"):
                    e = w.expr(c, kk[2])  # defined above, by the sources
                    if e != kk[2]:
                        w.emit("%s = %s" % (kk[2], e))
                    continue
                gen.exact = kk[2]  # the value's variable is the global itself
                e = w.expr(c, kk[2])
                gen.exact = None
                if e != kk[2]:
                    w.emit("%s = %s  # a global the frame reads" % (kk[2], e))
        # The function: the definition, or made by its factory with the
        # recorded closure.
        f_locals = {}
        loc = root.get("locals")
        if type(loc) is not int or tree.rows[loc][0] != "dict":
            raise tree.fail(0, "locals are not a dict")
        for k, c in tree.rows[loc][2]:
            kk = tree.rows[k]
            if kk[0] != "str":
                raise tree.fail(loc, "a local whose name is not a string")
            f_locals[kk[2]] = c
        if nested:
            factory = gen.nested(key)
            if factory is None:
                raise Usage("frame %s: its source is not in the trace" % qualname)
            fname, freevars = factory
            closure = root.get("closure") or []
            if not isinstance(closure, list) or len(closure) != len(freevars):
                raise tree.fail(0, "closure does not match the code's free variables")
            args = []
            for var, c in zip(freevars, closure):
                row = tree.rows[c]
                if row[0] != "cell":
                    raise tree.fail(0, "closure holds something other than cells")
                args.append("%s=%s" % (var, "None" if row[2] is None else w.expr(row[2], var)))
            w.emit("repro_fn = %s(%s)" % (fname, ", ".join(args)))
            fn_expr = "repro_fn"
        if library is not None:
            # A module's own function (torch's map): found in its module, by
            # its qualified name; a method or a decorator's wrapper: on the
            # class of the frame's first argument.
            # (By sys.modules: a package may hold a function of the module's
            # name, as torch._higher_order_ops holds map.)
            mod = tree_module(trees[0])
            owner = "None"
            if "<" not in qualname and isinstance(mod, str) and all(
                    p.isidentifier() for p in mod.split(".")) and gen.module_ref(mod) != "None":
                owner = "sys.modules[%r]" % mod
            if owner == "None":
                first = code.co_varnames[0] if code.co_varnames else None
                if first is None or first not in f_locals:
                    raise Usage("frame %s: a library's frame without a first argument"
                                % qualname)
                owner = w.expr(f_locals[first], first)
                if code.co_argcount == 0:
                    owner += "[0]"  # a wrapper's first *args
            w.emit("repro_fn = repro_library_function(%s, %r, %d)" % (owner, qualname, line))
        cargs = _args(code, f_locals, w)
        kw, note = backend_kwargs(cap["data"].get("backend"), gen)
        if type(root.get("guard_filter_fn")) is int:
            # torch.compile(options={"guard_filter_fn": f}), as recorded
            gff = w.expr(root["guard_filter_fn"], "guard_filter_fn")
            opts = next((k for k in kw if k.startswith("options=")), None)
            if opts is None:
                kw.append("options={'guard_filter_fn': %s}" % gff)
            else:
                kw[kw.index(opts)] = "options=dict(%s, guard_filter_fn=%s)" % (opts[8:], gff)
        # A backend object of its own (a new CompileCounter): a torch.compile
        # of its own, whose cache entries the earlier ones' are not.
        inst = cap["data"].get("backend")
        inst = inst.get("instance") if isinstance(inst, dict) else None
        if cap["data"].get("fullgraph") is True:
            kw.append("fullgraph=True")
        if note:
            gen.notes.append(note)
        st = cap["data"].get("global_state")
        st = st if isinstance(st, dict) else {}
        ctx = []
        if st.get("grad") is False:
            ctx.append("torch.no_grad()")
        if st.get("inference_mode") is True:
            ctx.append("torch.inference_mode()")
        if st.get("error_on_graph_break") is True:
            ctx.append("torch._dynamo.error_on_graph_break(True)")
        forced = next((k[len("backend="):] for k in kw if k.startswith("backend=")), None)
        if cap["data"].get("force_backend") is True and forced is not None:
            # set_stance's force_backend, as recorded: Dynamo compiles with
            # that backend itself, not through torch.compile's wrapper
            ctx.append("torch.compiler.set_stance('default', force_backend=%s)" % forced)
        if st.get("default_dtype") in ("torch.float64", "torch.float16", "torch.bfloat16"):
            lines.append("torch.set_default_dtype(%s)" % st["default_dtype"])
        ac = st.get("autocast_cpu")
        if isinstance(ac, list) and len(ac) == 2 and ac[0] is True and ac[1] in _DTYPES:
            ctx.append("torch.autocast('cpu', dtype=%s)" % ac[1])
        if st.get("deterministic") is True:
            lines.append("torch.use_deterministic_algorithms(True)")
        if type(st.get("allow_tf32")) is bool and st["allow_tf32"] is not tf32:
            tf32 = st["allow_tf32"]
            lines.append("torch.backends.cuda.matmul.allow_tf32 = %r" % tf32)
        if cap["data"].get("thread_name") not in (None, "MainThread"):
            lines.append("# (recorded on thread %s; called here on the main thread)" % comment(
                cap["data"]["thread_name"]))
        rec = next((r for r in recorded if r["compile_id"] == cap["cid"]), None)
        head = "# ---- call %d of %d: recorded compile %s" % (i + 1, len(sel), comment(cap["cid"]))
        if rec is not None:
            head += " (%s%s)" % (comment(rec["outcome"]), ", a recompile" if rec["recompile"]
                                 else "")
        body = w.lines + ["repro_compiled = torch.compile(%s, %s)" % (fn_expr, ", ".join(kw))] \
            if (nested or i == 0 or (kw, inst) != calls[-1][2]) else list(w.lines)
        callexpr = "repro_call(%r, repro_compiled%s)" % (
            "call %d" % (i + 1), "".join(", " + a for a in cargs))
        if ctx:
            body.append("with %s:" % ", ".join(ctx))
            body.append("    " + callexpr)
        else:
            body.append(callexpr)
        if rec is not None:
            for r in reversed(rec["guard_failures"]):
                body.insert(0, "#   guard failed: %s" % comment((r.splitlines() or [""])[0]))
        calls.append((head, lines + body, (kw, inst)))
        missing.extend(w.missing)

    # The script.
    out = []
    versions = "torch %s, Python %s" % (meta.get("torch_version") or "?",
                                        (meta.get("python_version") or "?").split()[0])
    shown = next((d for d, in _query(
        "SELECT display_name FROM v_compiles WHERE filename = %s AND qualname = %s AND "
        "firstlineno = %d AND display_name IS NOT NULL LIMIT 1" % (
            _sql(filename), _sql(qualname), line)) if isinstance(d, str)), qualname)
    out += [
        "# Standalone repro of torch.compile on %s (%s:%d), written by dynrec repro" % (
            comment(shown if shown == qualname else "%s, %s" % (shown, qualname)),
            comment(os.path.basename(filename)), line),
        "# from the trace %s (recorded with %s)." % (comment(os.path.basename(trace)),
                                                     comment(versions)),
        "#",
        "# It needs only torch.  It rebuilds the inputs Dynamo saw at each of the %d"
        % len(sel),
        "# recorded compiles of this frame (tensors with their recorded data when it was",
        "# small, else seeded random data of the same dtype, shape and strides, with the",
        "# same dynamic marks), defines the functions and classes the frame needs from",
        "# the recorded sources (definitions only), sets the recorded Dynamo config and",
        "# calls torch.compile with the recorded backend on those inputs, in order.",
        "# Dynamo's recompile reasons are printed (TORCH_LOGS=recompiles), then a summary",
        "# of what happened here next to what was recorded.",
        "#",
        "# Read before running: the definitions below are the recorded program's own",
        "# code, copied from the trace; everything else in this file is data that dynrec",
        "# wrote as Python literals (strings quoted with repr()), so a trace cannot add",
        "# code here beyond those definitions.  No pickles, no dynrec imports.",
        "",
    ]
    defs = gen.definitions(node if not nested else None)
    body_imports = sorted(i for i in gen.imports if i not in ("torch",))
    out.append("import logging")
    out.append("import sys")
    for m in body_imports:
        out.append("import %s  # named by a recorded value" % m if m not in (
            "collections", "types") else "import %s" % m)
    out += ["", "import torch", "import torch._dynamo", "import torch._logging", ""]
    if defs or gen.factories or local_ops:
        out.append("# ---- definitions from the recorded sources (definitions only) ----")
        out.append("")
        for d in defs:
            out.append(d)
        out.append("")
        if local_ops:
            out.append("# -- custom ops the test defines in its body --")
            out.append("repro_libraries = []")
            out += local_ops
            out.append("")
        for f in gen.factories.values():
            out.append(f[2])
            out.append("")
    if library is not None:
        out += _LIBRARY_FUNCTION.splitlines()
        out.append("")
    out.append("# ---- observing what Dynamo does ----")
    out.append("")
    out += _OBSERVE.splitlines()
    out.append("")
    first = sel[0]
    cfg = first["data"].get("config")
    out.append("torch.manual_seed(0)  # for the tensors whose data was not recorded")
    out.append("")
    if isinstance(cfg, dict) and cfg:
        out.append("# ---- the Dynamo config of the recorded compiles (where it differs from")
        out.append("# the config at the start of the recorded run) is set before each call ----")
        out.append("")
    for head, lines, _ in calls:
        out.append(head)
        out += lines
        out.append("")
    fullgraph = all(c["data"].get("fullgraph") is True for c in sel)
    out += _summary(recorded, breaks, nresume, nresume_re, qualname,
                    fn_expr, len(sel), fullgraph)
    notes = gen.notes + ["%s: %s" % (comment(a), comment(b)) for a, b in missing] + \
        not_replayable + [comment(r) for r in gen.refused]
    text = "\n".join(out) + "\n"
    try:
        compile(text, "repro.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        # Every piece from the trace went in as a checked name, a literal or
        # a source that parsed on its own: a script that does not parse is
        # the generator's mistake, not the trace's.
        raise _NotParsed(str(exc))
    for n in notes:
        _say(_dynrec_repro.safe("note: %s" % n))
    status = EXIT_PARTIAL if (missing or not_replayable or gen.refused) else EXIT_OK
    _say(_dynrec_repro.safe("%s: %d call%s of %s (%s:%d)" % (
        "wrote" if status == EXIT_OK else "wrote an INCOMPLETE repro", len(sel),
        "" if len(sel) == 1 else "s", qualname, os.path.basename(filename), line)))
    return status, text


def _module_state(gen, tree):
    """The lines that put back what a library's modules held when a compile's
    guards were built (transformers' output-capturing registry), as replay
    does: a dict, list or set updated in place.  Only modules of the frame's
    installed package or of the recorded program; others are a note."""
    w = Writer(gen, tree)
    root = tree.rows[0][2]
    st = root.get("state") if isinstance(root, dict) else None
    if type(st) is not int or tree.rows[st][0] != "list":
        raise tree.fail(0, "module state without a list of attributes")
    for item in tree.rows[st][2]:
        row = tree.rows[item]
        if row[0] != "list" or len(row[2]) != 3:
            raise tree.fail(item, "not a [module, attribute, value] list")
        m, a = tree.rows[row[2][0]], tree.rows[row[2][1]]
        if m[0] != "str" or a[0] != "str" or not a[2].isidentifier() or a[2].startswith("__"):
            raise tree.fail(item, "not a module and attribute name")
        mname, attr = dotted(m[2], "a module name"), a[2]
        lib = gen.library
        if not (mname in gen.modsrc or (lib and (mname == lib or mname.startswith(lib + ".")))):
            val = tree.rows[row[2][2]]
            if val[0] in ("dict", "list", "set") and not val[2]:
                continue  # empty, as it is at the start (torch's global hook dicts)
            gen.notes.append("%s.%s is module state of another package: not set" % (
                comment(mname), comment(attr)))
            continue
        target = "%s.%s" % (gen.module_ref(mname), attr)
        kind = tree.rows[row[2][2]][0]
        v = w.expr(row[2][2], attr)
        if kind in ("dict", "set"):
            w.emit("%s.clear()  # module state, as the recorded compile saw it" % target)
            w.emit("%s.update(%s)" % (target, v))
        elif kind == "list":
            w.emit("%s[:] = %s  # module state, as the recorded compile saw it" % (target, v))
        else:
            w.emit("%s = %s  # module state, as the recorded compile saw it" % (target, v))
    return w.lines, w.missing


def tree_module(tree):
    """The module name of a capture's frame (the module of its globals)."""
    root = tree.rows[0][2]
    return root.get("module") if isinstance(root, dict) else None


def library_package(filename, module):
    """The installed package of a library frame's module, which the script
    may import: a top-level name that is not the standard library's, whose
    directory under site-packages (or dist-packages) holds the frame's
    file.  None otherwise (the script then imports none of it)."""
    if not isinstance(module, str) or not isinstance(filename, str):
        return None
    top = module.split(".")[0]
    if not top.isidentifier() or keyword.iskeyword(top) or top in getattr(
            sys, "stdlib_module_names", ()) or top in ("torch", "builtins", "__main__"):
        return None
    parts = filename.replace("\\", "/").split("/")
    for i, p in enumerate(parts[:-1]):
        if p in ("site-packages", "dist-packages") and parts[i + 1] == top:
            return top
    return None


def _library_layout(sel):
    """How a library frame's locals are passed (the capture's "args"), as
    the code attributes _args reads; None for a trace without it (before
    dynrec 0.7.3) or a frame of the user's code."""
    a = sel[0]["data"].get("args")
    if not isinstance(a, dict) or any(c["data"].get("user_code") for c in sel):
        return None
    names, n, k, flags = a.get("names"), a.get("argcount"), a.get("kwonly"), a.get("flags")
    if not (isinstance(names, list) and all(isinstance(x, str) and x.isidentifier()
                                            and not keyword.iskeyword(x) for x in names)
            and type(n) is int and type(k) is int and type(flags) is int and flags & ~0x0C == 0
            and 0 <= n and 0 <= k and n + k + bin(flags).count("1") == len(names)):
        return None
    return types.SimpleNamespace(co_varnames=tuple(names), co_argcount=n,
                                 co_kwonlyargcount=k, co_flags=flags)


_LIBRARY_FUNCTION = '''\
# ---- the frame is an installed library's code ----


def repro_library_function(owner, qualname, firstlineno):
    """The function whose code is the recorded frame's: owner's (a module's)
    by its qualified name, or one of owner's class (or a base), as the
    module or class holds it or behind its decorators (__wrapped__)."""
    if type(owner) is type(sys):
        found = owner
        for part in qualname.split("."):
            found = getattr(found, part, None)
        holders = [{qualname: found}]
    else:
        holders = [vars(cls) for cls in type(owner).__mro__]
    for held in holders:
        for f in list(held.values()):
            for _ in range(20):
                c = getattr(f, "__code__", None)
                if c is not None and getattr(c, "co_qualname", c.co_name) in (
                        qualname, qualname.rsplit(".", 1)[-1]) and c.co_firstlineno == firstlineno:
                    return f
                f = getattr(f, "__wrapped__", None)
                if f is None:
                    break
    sys.exit("repro: no function of %s is %s (line %d): another version of the library?"
             % (getattr(owner, "__name__", None) if type(owner) is type(sys)
                else type(owner).__name__, qualname, firstlineno))'''


_OBSERVE = '''\
# Dynamo prints each recompile with the guards that failed (TORCH_LOGS=recompiles).
torch._logging.set_logs(recompiles=True)


class ReproSeen(logging.Handler):
    """Keeps the recompile messages for the summary at the end."""

    def __init__(self):
        super().__init__()
        self.recompiles = []

    def emit(self, record):
        self.recompiles.append(record.getMessage())


repro_seen = ReproSeen()
logging.getLogger("torch._dynamo.guards.__recompiles").addHandler(repro_seen)


# The compiles Dynamo starts (not the frames it skips, which its frame
# counter counts too: torch's own nn.Module call frames).
repro_started = []


def repro_started_one(args):
    if getattr(getattr(args, "callback_trigger", None), "name", "DYNAMO") == "DYNAMO":
        repro_started.append(args)


if hasattr(torch._dynamo, "callback_handler"):
    torch._dynamo.callback_handler.register_start_callback(repro_started_one)
else:
    repro_started = None


repro_raised = []


def repro_call(label, compiled, *args, **kwargs):
    """One call; an exception is printed, as the recording may have seen it too."""
    try:
        return compiled(*args, **kwargs)
    except Exception as exc:
        repro_raised.append(exc)
        print("%s raised %s: %s" % (label, type(exc).__name__, str(exc).splitlines()[0]
                                    if str(exc) else ""))
        return None'''


def _summary(recorded, breaks, nresume, nresume_re, qualname, fn, ncalls, fullgraph):
    # Trace strings the script prints, escaped (comment()): no control
    # character of the trace reaches the terminal that runs it.
    summary = {"compiles": [comment(r["compile_id"]) for r in recorded],
               "compiled": sum(1 for r in recorded if r["outcome"] == "compiled"),
               "errors": sum(1 for r in recorded if r["outcome"] == "error"),
               "recompiles": sum(1 for r in recorded if r["guard_failures"]) + nresume_re,
               "resume_function_compiles": nresume,
               "graph_breaks": len(breaks),
               "guard_failures": {comment(r["compile_id"]): [
                   comment(g.splitlines()[0]) if g else g for g in r["guard_failures"]]
                                  for r in recorded if r["guard_failures"]}}
    return [
        "# ---- what happened, next to what was recorded ----",
        "",
        "RECORDED = " + pprint.pformat(summary, width=96, sort_dicts=False),
        "counters = torch._dynamo.utils.counters",
        "code = getattr(%s, '__code__', None)" % fn,
        "entries = torch._C._dynamo.eval_frame._debug_get_cache_entry_list(code) if code else []",
        "print('repro of %%s: %d call%s' %% %r)" % (ncalls, "" if ncalls == 1 else "s",
                                                    comment(qualname)),
        "print('  compiles of the frame: %d (recorded: %d)' % (len(entries),"
        " RECORDED['compiled']))",
        "print('  calls that raised: %d (recorded compile errors: %d)' % (len(repro_raised),"
        " RECORDED['errors']))",
    ] + ([] if fullgraph else [
        # (torch counts only the frames of torch.compile without fullgraph,
        # which alone has resume functions)
        "print('  compiles, resume functions too: %d (recorded: %d)' % (",
        "    len(repro_started) if repro_started is not None else counters['frames']['ok'],",
        "    len(RECORDED['compiles']) + RECORDED['resume_function_compiles']))",
    ]) + [
        "print('  recompiles, resume functions too: %d (recorded: %d)' % (",
        "    len(repro_seen.recompiles), RECORDED['recompiles']))",
        "print('  graph breaks: %d (recorded: %d)' % (sum(counters['graph_break'].values()),",
        "                                            RECORDED['graph_breaks']))",
        "for cid, reasons in RECORDED['guard_failures'].items():",
        "    print('  recorded guard failures of compile %s:' % cid)",
        "    for r in reasons:",
        "        print('    ' + r)",
    ]


def _library_wrapper_of(gen, tree, c, name):
    """Whether node c is a nested function of a library whose source the
    trace lacks (patch_dynamo_config's or another decorator's wrapper) with
    a closure cell holding the program's top-level function `name`: the
    global the decorated def statement of the sources binds."""
    row = tree.rows.get(c)
    v = row[2] if row is not None and row[0] == "function" else None
    if not isinstance(v, dict) or "name" not in v:
        return False
    where = function_where(v)
    if not (isinstance(where[0], str) and isinstance(where[1], str) and type(where[2]) is int) or (
            gen.nested(where, v.get("place")) is not None):
        return False
    for cell in v.get("closure") or []:
        crow = tree.rows.get(cell) if type(cell) is int else None
        inner = tree.rows.get(crow[2]) if crow and crow[0] == "cell" and type(crow[2]) is int \
            else None
        iv = inner[2] if inner is not None and inner[0] == "function" else None
        if isinstance(iv, dict) and iv.get("qualname") == name and iv.get("name") == name and (
                os.path.normpath(str(iv.get("filename"))) in gen.sources):
            return True
    return False


def _start_config():
    rows = _query("SELECT data FROM v_ev WHERE kind = 'config' AND text = 'start'"
                  " AND json_valid(data) ORDER BY seq LIMIT 1")
    if not rows or not rows[0][0]:
        return {}
    try:
        d = json.loads(rows[0][0])
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


class _NotParsed(Exception):
    """The script written does not parse: a bug in dynrec (exit 70)."""


def main(opts):
    """(exit status, script text or None, why it failed or None): the
    failure is said by the command line (cli/cmd_repro.c), as "dynrec
    repro: WHY"; notes on the way are said here."""
    # Messages name the trace's qualnames and files: each goes through the
    # terminal sanitizer (schema/text.c) before it is printed.
    safe = _dynrec_repro.safe
    try:
        status, script = generate(opts)
        return status, script, None
    except Refused as exc:
        return EXIT_DATAERR, None, safe("%s is malformed: %s" % (opts.get("trace"), exc))
    except _NotParsed as exc:
        return EXIT_SOFTWARE, None, safe(
            "the repro written for %s does not parse (%s): a bug in dynrec; please report it"
            " with the trace" % (opts.get("trace"), exc))
    except Usage as exc:
        return EXIT_USAGE, None, safe(str(exc))
    except NoCaptures as exc:
        return EXIT_NOINPUT, None, safe(str(exc))
    except RecursionError:
        return EXIT_DATAERR, None, safe("%s is malformed: a value tree nested too deep"
                                        % opts.get("trace"))
    except OSError as exc:  # the trace's reader: a damaged file
        return EXIT_DATAERR, None, safe("%s: %s" % (opts.get("trace"), exc))
