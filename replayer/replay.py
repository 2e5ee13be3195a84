"""dynrec replay's driver: Dynamo's tracing of every captured frame, again.

Runs as the program of `dynrec run --replay-of TRACE` (the recorder records
it like any program).  It reads the trace being replayed through
_dynrec.source_query / _dynrec.source_blob, rebuilds the user's modules from
the sources stored in the trace -- definitions only: imports, def, class and
constant assignments; never the script's main program -- then, for each
captured compile in recorded order, rebuilds the frame's inputs from their
value tree (capture.py wrote it), restores the Dynamo config of that compile
and calls the frame's code under torch.compile with the recorded backend, on
a thread of the recorded name.  Dynamo's cache, automatic dynamic shapes and
recompile limit carry over from one compile to the next as they did.

Tracing only: the code Dynamo compiles is replaced, before it runs, by code
that returns None, so nothing of the user's program runs on the rebuilt
inputs.  Resume functions after a graph break are the ones Dynamo generates
here, looked up by name.

Everything read from the trace is untrusted: node numbers, kinds and JSON
shapes are checked, tensor sizes are bounded before anything is allocated
(DYNREC_REPLAY_MAX_BYTES, default 1 GiB per tensor and 4 times that in all),
and a malformed tree stops the replay with exit status 65 and one line
naming the capture and node.  Code stored marshalled in the trace (a lambda
or a function the sources do not define) is used only under --trust.
"""

import ast
import builtins
import collections
import contextlib
import copy
import dataclasses
import enum
import gc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import functools
import inspect
import itertools
import json
import keyword
import linecache
import marshal
import math
import os
import pathlib
import re
import sys
import threading
import types
import weakref

import _dynrec

from .definitions import (CONFIG_NOT_DECISIONS, FIELD_FACTORIES, code_name, config_allowed,
                          definitions, factory, future_flags, library_calls, local_class_tree,
                          local_library,
                          module_name, option_allowed)
from . import recorded as _trace
from .recorded import Refused
from .recorded import number as _int
from .value_kinds import (DICT_ITERATORS, DYNAMO_MARKS, EXCLUDABLE_KEYS, FUNCTORCH_WRAPPERS,
                          FX_GRAPH_ATTRS, FX_OPS, HOOKS, ITERATOR_TYPES, KINDS, MAX_CODE, MAX_DEPTH,
                          MAX_FUNCTORCH_LEVELS, body_function, check_tree, class_attr_key,
                          class_attrs_to_set, class_cell_key, code_place, config_of,
                          config_snapshot, function_attrs_ok, function_where, is_place,
                          is_structseq, local_class_bases, local_class_number, method_key,
                          jagged_view_steps, namedtuple_made, parametrized_class, torch_op,
                          view_by_steps)

_R = _dynrec.replay_options  # set by the runner (session.c)
_query = _dynrec.source_query
_qualname = _dynrec.qualname
_code_digest = _dynrec.code_digest
_blob = _dynrec.source_blob
_TRUST = os.environ.get("DYNREC_REPLAY_TRUST") == "1"
# Inside the replay sandbox (bubblewrap + seccomp: no exec, no network, the
# output the only writable file) the kinds that could run code on rebuilt
# state (objects with finalizers or attribute hooks, library frames) are
# rebuilt too; outside it only under --trust.
_LOOSE = _TRUST or os.environ.get("DYNREC_REPLAY_SANDBOXED") == "1"
_SOURCES = None  # the trace's sources, once read (local classes are made from them)
_FX_PLAIN = (bool, int, float, complex, str, bytes)  # and torch's own below
_FX_CLASSES = {}  # recorded fx forward file name -> (the class made for it, its code)
# (number, module, name, fields, defaults) -> the namedtuple class made for
# it: one class for every capture, as the recording had (Dynamo guards on
# its id).
_NAMEDTUPLES = {}
_MAX_BYTES = 1 << 30
try:
    _MAX_BYTES = max(1, int(os.environ.get("DYNREC_REPLAY_MAX_BYTES", _MAX_BYTES)))
except ValueError:
    pass
_MAX_TOTAL = 4 * _MAX_BYTES
_MAX_NODES = 1000000


class NotReplayable(Exception):
    """This frame cannot be replayed here; the others go on."""


def _say(msg):
    # Messages name the trace's qualnames, files and reasons: the terminal
    # sanitizer (schema/text.c) sees each before stderr does.
    sys.stderr.write("dynrec replay: %s\n" % _dynrec.safe(str(msg)))
    sys.stderr.flush()


def _event(kind, num, text, data, cid=None):
    _dynrec.event(kind, None, None, cid, num, text,
                  json.dumps(data, sort_keys=True), None, None)


# ---- the trace ------------------------------------------------------------------


def _resets():
    """The places (seq) of the recorded torch._dynamo.reset() calls, in order."""
    return [_int(seq, "a sequence number")
            for (seq,) in _query("SELECT seq FROM v_ev WHERE kind = 'reset' ORDER BY seq")]


_CID = re.compile(r"(?:(\d+):)?(\d+)/(\d+)")


def _deallocated():
    """The compile ids whose recorded guard failures say that an object an
    earlier cache entry guarded by id was gone ("Cache line invalidated
    because L['self'] got deallocated"): before those the replay lets the
    earlier compiles' inputs go (_Kept)."""
    return {str(cid) for (cid,) in _query(
        "SELECT DISTINCT compile_id FROM v_guard_failures WHERE reason LIKE"
        " '%got deallocated%'")}


_BACKEND_RAISED = re.compile(
    r"backend='([^'\n]{1,200})' raised:\n([A-Za-z_][A-Za-z0-9_.]{0,200}): ?(.*)")


def _backends_raised():
    """The compiles whose recorded backend raised (BackendCompilerFailed):
    compile id -> (backend name, exception type name, its message's first
    line), for the stand-in of a backend the replay cannot make
    (_Backends.standin), which raises there as the recorded one did."""
    out = {}
    for cid, msg in _query("SELECT compile_id, message FROM v_errors WHERE exc_type ="
                           " 'BackendCompilerFailed' LIMIT 100000"):
        m = _BACKEND_RAISED.match(msg) if isinstance(msg, str) else None
        if m is not None and isinstance(cid, str):
            out.setdefault(cid, (m.group(1), m.group(2).rpartition(".")[2], m.group(3)[:500]))
    return out


class _Gone:
    """The referent of a weak reference that was dead when recorded."""


def _fill(t, src):
    """t's data from src, its recorded values in t's shape: where t is
    expanded (a stride of 0 over a dimension of more than one: the
    grad_output of a sum's backward), through the first place of each such
    dimension, whose one element the recorded values repeat."""
    for d in range(t.dim()):
        if t.stride(d) == 0 and t.size(d) > 1:
            t, src = t.narrow(d, 0, 1), src.narrow(d, 0, 1)
    t.copy_(src)


class _Kept:
    """The inputs of a frame's latest compiles, kept alive as the program
    kept them (it calls one module again and again): Dynamo drops a cache
    entry whose id-guarded object dies, and the next compile would fail
    with "got deallocated" where the recording failed the id.  At most
    KEEP compiles per frame and BYTES of tensors in all; none across a
    reset; let go where the recording says the object died."""

    KEEP, BYTES = 8, 256 << 20

    def __init__(self):
        self.frames = {}
        self.total = 0

    def add(self, fkey, frame, pos, kw):
        n = frame.get("bytes", 0)
        if self.total + n > self.BYTES:
            return
        held = self.frames.setdefault(fkey, collections.deque())
        held.append((n, pos, kw, frame.get("keep")))
        self.total += n
        if len(held) > self.KEEP:
            self.total -= held.popleft()[0]

    def drop(self, fkey=None):
        """Lets go of fkey's inputs, and collects them (a module's cycles);
        of every frame's, at a reset, without collecting (the caches are
        empty then)."""
        for k in [fkey] if fkey is not None else list(self.frames):
            for held in self.frames.pop(k, ()):
                self.total -= held[0]
        if fkey is not None:
            gc.collect()


def _recompiles_of_earlier(caps):
    """Compile ids of an in-process trace (dynrec.start) that recompile a
    cache entry Dynamo made before the recording began: the trace holds no
    compile of that frame before them, so a replay would make a first
    compile instead.  Those frames are not replayable, said why."""
    seen, out = set(), set()
    for c in caps:
        m = _CID.match(c["cid"])
        if not m:
            continue
        frame = (m.group(1), m.group(2))
        if int(m.group(3)) > 0 and frame not in seen:
            out.add(c["cid"])
        seen.add(frame)
    return out


_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Top-level packages whose module state a trace never sets.
_NEVER_SET = frozenset(getattr(sys, "stdlib_module_names", ())) | {
    "torch", "_dynrec", "builtins", "sys", "os"}


def _state_items(no, sources, modules):
    """A capture_state tree, checked: its builder and its [module,
    attribute, value] list nodes."""
    b = _Builder({"no": no}, sources, modules)
    b.check()
    root = b.rows[0][2]
    st = root.get("state") if isinstance(root, dict) else None
    if type(st) is not int or st not in b.rows or b.rows[st][0] != "list":
        raise Refused("capture %d: module state without a list of attributes" % no)
    items = []
    for item in b.rows[st][2]:
        row = b.rows.get(item) if type(item) is int else None
        if row is None or row[0] != "list" or not isinstance(row[2], list) or len(row[2]) != 3:
            raise Refused("capture %d node %r: not a [module, attribute, value] list" % (no, item))
        mname, attr = b.child(item, row[2][0]), b.child(item, row[2][1])
        parts = attr.split(".") if isinstance(attr, str) else []
        if not (isinstance(mname, str) and 1 <= len(parts) <= 2 and all(
                _ATTR_NAME.match(p) and not p.startswith("__") for p in parts)):
            raise Refused("capture %d node %r: not a module and attribute name" % (no, item))
        items.append((item, row, mname, attr))
    return b, items


# Registries of torch keyed by class that a program fills for its own
# classes (pytree's register_pytree_node): a trace sets the entries of the
# program's classes there, never torch's or a library's.
_PROGRAM_KEYED = frozenset({("torch.utils._pytree", "SUPPORTED_NODES")})


def _own_dict(obj, fail):
    """obj's __dict__, read past its class's own __getattribute__ (the
    program's code, which a test class defines); raises fail() where it
    has none."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        d = None
    if type(d) is not dict:
        raise fail()
    return d


def _made_class(cls, qualname):
    """The class of cls's MRO named qualname that the replay made from the
    stored sources (a class defined inside a function), or None."""
    made = set(_SOURCES.local_classes.values()) if _SOURCES is not None else set()
    return next((b for b in cls.__mro__ if b in made and b.__qualname__ == qualname), None)


def _of_program(cls, sources):
    """Whether cls is a class of the program: defined in a module whose file
    is one of the trace's sources (a local class the replay made too)."""
    if not isinstance(cls, type) or sources is None:
        return False
    mod = sys.modules.get(getattr(cls, "__module__", None) or "")
    return getattr(mod, "__file__", None) in sources.text


def _program_entries(cur, new, sources):
    """Puts the recorded entries of the program's classes that registry cur
    lacks into it (values of the types torch's own entries have), and takes
    out those of its classes the recording did not hold (a test's cleanup
    unregistered them); an entry already there stays, so that the dict's
    version, which Dynamo guards, changes only where the recording's did.
    Whether the other entries differ."""
    kinds = {type(v) for k, v in cur.items() if not _of_program(k, sources)}
    for k in [k for k in cur if _of_program(k, sources) and k not in new]:
        del cur[k]
    for k, v in new.items():
        if _of_program(k, sources) and type(v) in kinds and k not in cur:
            cur[k] = v
    return ({k for k in cur if not _of_program(k, sources)}
            != {k for k in new if not _of_program(k, sources)})


def _apply_state(no, sources, modules, notes):
    """Puts back what the recording's modules held when a compile's guards
    were built (a registry a library fills at run time): into modules this
    replay has imported, an attribute that is data of the same type as now,
    a dict, list or set updated in place (other modules hold it too).  A
    module not imported here, another type, a value that cannot be rebuilt:
    a note, never an import or a new kind of attribute."""
    b, items = _state_items(no, sources, modules)
    for item, row, mname, attr in items:
        mod = sys.modules.get(mname)
        if mod is None:
            notes.add("module %s was not imported by the replay; its %s is not set" % (
                mname, attr))
            continue
        owner, _, name = attr.rpartition(".")
        if owner:
            # A class attribute ("Config.flag"): of a class of the program
            # that its module binds by that name, in the class's own dict.
            cls = vars(mod).get(owner)
            if not _of_program(cls, sources) or cls.__qualname__ != owner:
                notes.add("%s.%s is not set: %s is not a class of the program" % (
                    mname, attr, owner))
                continue
            mod = cls
        cur = vars(mod).get(name)
        try:
            new = b.child(item, row[2][2])
        except NotReplayable as exc:
            notes.add("%s.%s is not set: %s" % (mname, attr, exc))
            continue
        if new is cur:
            continue  # the object an earlier capture made, given this one's state
        top = mname.split(".", 1)[0]
        if (mname, attr) in _PROGRAM_KEYED and type(new) is dict and type(cur) is dict:
            if _program_entries(cur, new, sources):
                notes.add("%s.%s: entries of classes not the program's differ from the "
                          "recording's; dynrec never sets state of %s" % (mname, attr, top))
            continue
        if top in _NEVER_SET:
            # The interpreter's, torch's and dynrec's own state (sys.path,
            # a config's _config dict past the config allow-list) is never
            # set from a trace; an empty container or an equal scalar (the
            # global hook dicts of nn.Module) needs no word.
            same = (type(new) in (dict, list, set) and not new and not cur) or (
                type(new) in (bool, int, float, str) and type(cur) is type(new) and cur == new)
            if not same:
                notes.add("%s.%s is not set: dynrec never sets state of %s" % (mname, attr, top))
            continue
        base = next((c for c in (dict, list, set) if isinstance(new, c)), type(new))
        put = type.__setattr__ if isinstance(mod, type) else setattr
        if name not in vars(mod) and base in (dict, list, set, bool, int, float, str) and (
                _of_program(mod, sources) or getattr(mod, "__file__", None) in (
                    sources.text if sources is not None else ())):
            # Data a statement of a module of the program made, which its
            # definitions did not (the registry it fills): as recorded.
            put(mod, name, new)
        elif base in (dict, list, set) and isinstance(cur, base):
            # In place, past a subclass's own __setitem__ (the recorder
            # stored a registry subclass by its items) and the recorded
            # object's own __getitem__ and __iter__.
            if base is list:
                list.__setitem__(cur, slice(None), list(list.__iter__(new)))
            elif base is set:
                set.clear(cur)
                set.update(cur, set(set.__iter__(new)))
            else:
                dict.clear(cur)
                dict.update(cur, {k: dict.__getitem__(new, k) for k in list(dict.keys(new))})
        elif type(cur) is base and base in (bool, int, float, str):
            # (a class's past its metaclass's own __setattr__)
            put(mod, name, new)
        else:
            notes.add("%s.%s is not set: a %s now, a %s in the recording" % (
                mname, attr, type(cur).__name__, base.__name__))


# ---- the user's modules, definitions only ---------------------------------------

def _field(default_factory=None, **kw):
    """dataclasses.field for a local class's field (definitions.py
    _class_body()): default_factory names one of FIELD_FACTORIES, or is the
    source's lambda."""
    if isinstance(default_factory, types.FunctionType) and (
            default_factory.__name__ == "<lambda>"):
        kw["default_factory"] = default_factory
    elif default_factory is not None:
        if default_factory not in FIELD_FACTORIES:
            raise ValueError("a default_factory of %r" % (default_factory,))
        kw["default_factory"] = getattr(builtins, default_factory)
    return dataclasses.field(**kw)



def guarded(stmts, lineno):
    """stmts in a try whose handler notes the exception (fill's
    __dynrec_failed__) as of the statement at lineno, and goes on."""
    return ast.Try(body=stmts, handlers=[ast.ExceptHandler(
        type=ast.Name("Exception", ast.Load()), name="__dynrec_exc__",
        body=[ast.Expr(ast.Call(ast.Name("__dynrec_failed__", ast.Load()),
                                [ast.Constant(lineno),
                                 ast.Name("__dynrec_exc__", ast.Load())], []))])],
        orelse=[], finalbody=[])


def _statements_guarded(cls, depth=0):
    """A copy of class statement cls whose body statements (and those of
    the classes in it) each run in a try of their own (guarded()): one method
    whose decorator fails here (a name a newer torch has) is a note, and
    the class and its other methods are made.  The methods' code is the
    same: a try around a def changes only the class body's own code."""
    body = []
    for i, b in enumerate(cls.body):
        if (i == 0 and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)) or (
                isinstance(b, ast.Pass)):
            body.append(b)  # (its docstring stays the docstring)
            continue
        if isinstance(b, ast.ClassDef) and depth < 8:
            b = _statements_guarded(b, depth + 1)
        body.append(ast.copy_location(guarded([b], b.lineno), b))
    out = copy.copy(cls)
    out.body = body
    return out


def make_library(ns, spec, libraries):
    """Makes a custom op statement of the stored sources
    (definitions.library_call()'s spec) with the real torch.library: a
    Library kept in libraries and bound in namespace ns (a module's dict:
    the decorators beside it name it), a schema, a kernel (a function of ns
    or of torch, registered, never called here)."""
    lib = libraries.get(spec[1]) if spec[0] != "Library" and spec[1] is not None else None
    if spec[0] != "Library" and spec[1] is not None and lib is None:
        raise ValueError("no Library %s" % spec[1])
    if spec[0] == "Library":
        libraries[spec[1]] = ns[spec[1]] = torch.library.Library(*spec[2])
    elif spec[0] in ("define", "lib.define"):
        tags = tuple(torch.Tag.__members__.get(t) for t in spec[4])
        if None in tags:
            raise ValueError("tags that are not torch.Tag's")
        if spec[0] == "lib.define":
            lib.define(spec[2].partition("::")[2] + spec[3], spec[5], tags=tags)
        else:
            torch.library.define(spec[2], spec[3], lib=lib, tags=tags)
    else:
        kind, name = spec[3]
        if kind == "name":
            fn = ns[name]
        elif kind == "lambda":
            # made here (its defaults evaluated, its body not run)
            fn = eval(compile(ast.fix_missing_locations(ast.Expression(body=name)),
                              "<dynrec kernel>", "eval", dont_inherit=True), ns)
            name = "lambda"
        else:
            fn = torch
            for part in name.split("."):
                fn = getattr(fn, part)
        if not callable(fn):
            raise TypeError("kernel %s is not callable" % name)
        if spec[0] == "lib.impl":
            lib.impl(spec[5], fn, spec[4], **spec[6])
        else:
            torch.library.impl(spec[2], spec[4], fn, lib=lib)


class _LocalOps:
    """The custom ops a test function defines in its body for the frames
    defined inside it (definitions.local_library()): made before the first
    of its frames is replayed, with the real torch.library, in a namespace
    of their own over the module's globals; their Library objects
    destroyed (the ops undefined, as a `with _scoped_library` leaves them)
    when the replay comes to a frame of another function."""

    def __init__(self, sources, notes):
        self.sources = sources
        self.notes = notes
        self.key = None
        self.libraries = {}  # name -> the Library made for it last
        self.made = []  # every Library made (two `with` blocks may bind one name)

    def close(self):
        for lib in self.made:
            try:
                lib._destroy()
            except Exception:
                pass
        self.libraries, self.made = {}, []
        self.key = None

    def enter(self, cap, modules):
        qual = str(cap["qualname"])
        path = os.path.normpath(str(cap["filename"]))
        if path == self.sources.main:
            mod = "__main__"
        else:
            mod = next((m for m, p in self.sources.modules.items() if p == path), None)
        module = modules.get(mod) or sys.modules.get(mod) if mod else None
        try:
            tree = self.sources.tree(path) if "<locals>" in qual and module is not None else None
        except (NotReplayable, SyntaxError):
            tree = None
        found = local_library(tree, qual) if tree is not None else None
        key = (path, found[0]) if found else None
        if key == self.key:
            return
        self.close()
        if found is None:
            return
        self.key = key
        ns = dict(vars(module))
        ns["torch"] = torch  # (the decorators' torch.library is the real one)
        base = os.path.basename(path)
        for spec, st in found[1]:
            try:
                if spec is None:  # a def its decorators register
                    code = compile(ast.fix_missing_locations(ast.Module(
                        body=[st], type_ignores=[])), self.sources.spelled.get(path, path),
                        "exec", dont_inherit=True)
                    exec(code, ns)
                else:
                    make_library(ns, spec, self.libraries)
                    if spec[0] == "Library":
                        self.made.append(self.libraries[spec[1]])
            except Exception as exc:
                note = "%s: %s: custom op statement at line %d: %s: %s" % (
                    base, found[0], st.lineno, type(exc).__name__,
                    (str(exc).splitlines() or [""])[0][:200])
                if note not in self.notes:
                    self.notes.append(note)


class _Sources:
    def __init__(self, meta):
        self.cwd = meta.get("cwd") or "/"
        script = meta.get("script")
        self.script = os.path.normpath(os.path.join(self.cwd, script)) if script else None
        self.root = os.path.dirname(self.script) if self.script else self.cwd
        self.text = {}    # absolute path -> source text
        self.codes = {}   # (filename, qualname, firstlineno) -> code object
        self.alike = {}   # such a key -> its code objects, where a line has several
        self.modules = {}  # module name -> absolute path
        self.main = self.script  # the file of __main__ (`-m`: role "main")
        self.notes = []
        self.trees = {}          # path -> its parsed source
        self.local_classes = {}  # (path, qualname, number) -> a class defined in a function
        self.local_class_code = {}  # (path, qualname) -> what local_class() runs
        aliases = {}  # shorter module name -> paths
        # The folders a stored source can be imported from: the script's,
        # then the recorded PYTHONPATH's (PYTHONPATH=src python
        # scripts/train.py: src/pkg/model.py is pkg.model).  Names only:
        # nothing is read from them.
        pp = meta.get("env.PYTHONPATH")
        roots = [self.root] + [os.path.normpath(e) for e in (
            pp.split(":")[:64] if isinstance(pp, str) else ()) if os.path.isabs(e)]
        for path, role, blob in _query(
                "SELECT path, role, blob_id FROM v_files WHERE role IN ('script', 'main', 'source')"
                " ORDER BY rowid"):
            if not path or not blob:
                continue
            p = os.path.normpath(os.path.join(self.cwd, path))
            try:
                self.text[p] = _blob(_int(blob, "a blob id"), MAX_CODE).decode("utf-8", "replace")
            except OSError as exc:
                self.notes.append("source %s unreadable: %s" % (p, exc))
                continue
            # Dynamo quotes source lines (user stacks, side effects): they
            # come from the trace, as if the files were there.
            lines = self.text[p].splitlines(True)
            linecache.cache[p] = (len(self.text[p]), None, lines, p)
            if role == "main" and not self.script:
                self.main = p
            if p == self.main:
                continue
            name = module_name(p, self.root)
            if name is None:
                # (one a folder of the recorded PYTHONPATH holds: never a
                # package importable here, which would shadow it)
                name = next((n for n in (module_name(p, r) for r in roots[1:]) if n is not None
                             and importlib.machinery.PathFinder.find_spec(n.split(".")[0]) is None),
                            None)
            if name is not None:
                self.modules[name] = p
                parts = name.split(".")
                for k in range(1, len(parts)):
                    # pytest imports a test file by a shorter name (its
                    # directory on sys.path): each unambiguous one that
                    # names nothing else serves the same source.
                    short = ".".join(parts[k:])
                    aliases.setdefault(short, set()).add(p)
        for short, paths in aliases.items():
            if (len(paths) == 1 and short not in self.modules and short not in sys.modules
                    and importlib.machinery.PathFinder.find_spec(short.split(".")[0]) is None):
                self.modules[short] = paths.pop()
        # The name each file's code had, where it is not the stored path
        # (`dynrec run ../train.py`: "/home/u/run/../train.py"): the sources
        # are compiled under it, so the code objects, and what Dynamo writes
        # of them, are the recorded ones.
        self.spelled = {}
        for (filename,) in _query("SELECT DISTINCT filename FROM v_captures"):
            if isinstance(filename, str) and os.path.isabs(filename):
                p = os.path.normpath(filename)
                if p != filename and p in self.text and p not in self.spelled:
                    self.spelled[p] = filename
                    linecache.cache[filename] = linecache.cache[p]
        # The files pytest imported with their asserts rewritten: a frame of
        # theirs reads pytest's helper module, @pytest_ar, from its globals.
        self.pytest_rewritten = set()
        for (filename,) in _query(
                "SELECT DISTINCT c.filename FROM v_captures c JOIN v_values v ON v.capture ="
                " c.capture WHERE v.kind = 'str' AND v.value = '\"@pytest_ar\"'"):
            if isinstance(filename, str):
                self.pytest_rewritten.add(os.path.normpath(os.path.join(self.cwd, filename)))

    def rewrite_asserts(self, tree, path):
        """pytest imported a test file with its assert statements rewritten
        (its frames' globals hold @pytest_ar), so its functions' bytecode,
        their locals (@py_assert1) and the graphs Dynamo names after them
        are the rewritten ones: rewritten here too, by pytest's own
        rewriter, when pytest is installed."""
        try:
            from _pytest.assertion.rewrite import rewrite_asserts
        except ImportError:
            self.notes.append("%s: pytest rewrote its asserts when it was recorded, and pytest "
                              "is not installed here: its graphs may name locals differently"
                              % os.path.basename(path))
            return
        try:
            rewrite_asserts(tree, self.text[path].encode("utf-8", "surrogateescape"), path, None)
        except Exception as exc:
            self.notes.append("%s: pytest's assert rewriting failed here: %s: %s" % (
                os.path.basename(path), type(exc).__name__, exc))
            return
        # Its imports go in at the docstring's line without an end of their
        # own: one that compile() accepts.
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) is not None and (
                    getattr(node, "end_lineno", None) is None or node.end_lineno < node.lineno):
                node.end_lineno = node.lineno
                node.end_col_offset = node.col_offset

    def local_class(self, module, path, qualname, number=0, bases=None):
        """A class defined inside a function ("T.test_x.<locals>.Mock"), made
        from the stored source: a synthetic module nests it as the source
        does (its enclosing classes and functions reduced to that nesting,
        the names they bind bound to None), so its methods' code has the
        recorded qualnames, lines and free variables; the class body runs
        definitions only.  One class per number: the recording's classes of
        this qualname (a function that makes one per call).  bases: {name:
        class} of the classes defined beside it that are its bases, made
        already (the one class of their own references), which its nesting
        takes instead of making them again.  Raises NotReplayable when it
        cannot be made."""
        key = (path, qualname, number)
        if key in self.local_classes:
            return self.local_classes[key]
        # One code for every number: the recording's classes of a qualname
        # share their methods' code objects (constants of the function that
        # makes them), and so Dynamo's cache entries.
        made_code = self.local_class_code.get(key[:2])
        if made_code is None:
            made_code = self.local_class_code[key[:2]] = self._local_class_code(path, qualname)
        code, top, chain = made_code
        ns = module.__dict__
        had, old = top in ns, ns.get(top)
        # @dataclass and field() as the real ones, never the names the
        # source binds.
        ns["__dynrec_dataclass__"], ns["__dynrec_field__"] = dataclasses.dataclass, _field
        ns["__dynrec_given__"] = dict(bases or {})
        ns["__dynrec_later__"] = _LATER
        try:
            exec(code, ns)  # only the nesting and the class's definitions
            cur = ns[top]
            for outer, nxt in zip(chain[:-1], chain[1:]):
                # A function of the nesting returns the next definition.
                cur = cur() if isinstance(outer, ast.FunctionDef) else getattr(cur, nxt.name)
        except Exception as exc:
            raise NotReplayable("%s cannot be rebuilt from its source: %s: %s" % (
                qualname, type(exc).__name__, exc))
        finally:
            if had:
                ns[top] = old
            else:
                ns.pop(top, None)
            ns.pop("__dynrec_dataclass__", None)
            ns.pop("__dynrec_field__", None)
            ns.pop("__dynrec_given__", None)
            ns.pop("__dynrec_later__", None)
        if not isinstance(cur, type):
            raise NotReplayable("%s is not a class in the stored source" % qualname)
        cur.__qualname__ = qualname
        self.local_classes[key] = cur
        return cur

    def tree(self, path):
        """The stored source at path, parsed once; NotReplayable where it
        is not stored or does not parse."""
        tree = self.trees.get(path)
        if tree is None:
            if path not in self.text:
                raise NotReplayable("%s is not in the trace" % path)
            try:
                tree = self.trees[path] = ast.parse(self.text[path], self.spelled.get(path, path))
            except SyntaxError as exc:
                raise NotReplayable("%s does not parse: %s" % (path, exc))
        return tree

    def _local_class_code(self, path, qualname):
        """(code, top-level name, chain) of the synthetic module that makes
        the class defined inside a function (local_class())."""
        if path not in self.text:
            raise NotReplayable("%s: its source is not in the trace" % qualname)
        tree = self.tree(path)
        try:
            made, chain = local_class_tree(tree, qualname, "__dynrec_dataclass__",
                                           "__dynrec_field__", given="__dynrec_given__",
                                           later="__dynrec_later__")
        except ValueError as exc:
            raise NotReplayable(str(exc))
        # The module's imports under `if False:` (never run): the compiler
        # calls a method of an imported name as in the file (LOAD_ATTR, not
        # LOAD_METHOD, from 3.11), so the methods' bytecode, and the resume
        # functions Dynamo makes of it, are the recorded ones.
        imports = [st for st in definitions(tree.body) if isinstance(st, ast.Import) or (
            isinstance(st, ast.ImportFrom) and st.module != "__future__")]
        dead = [ast.If(test=ast.Constant(value=False), body=imports, orelse=[])] if imports else []
        try:
            module_ast = ast.Module(body=dead + [made], type_ignores=[])
            ast.fix_missing_locations(module_ast)
            code = compile(module_ast, self.spelled.get(path, path), "exec")
        except (SyntaxError, ValueError, TypeError) as exc:
            raise NotReplayable("%s cannot be rebuilt from its source: %s" % (qualname, exc))
        self.index(code)
        return code, chain[0].name, chain

    def index(self, code):
        stack = [code]
        while stack:
            c = stack.pop()
            key = (c.co_filename, _qualname(c), c.co_firstlineno)
            if self.codes.setdefault(key, c) is not c:
                self.alike.setdefault(key, [self.codes[key]]).append(c)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))

    def code(self, key, place):
        """The stored sources' code object at key (file, qualname, first
        line); of several (two lambdas of one line), the one at the
        recorded place (code_place)."""
        code = self.codes.get(key)
        if code is not None and key in self.alike and is_place(place):
            code = next((c for c in self.alike[key] if code_place(c) == place), code)
        return code

    def fill(self, module, path):
        """Runs the definitions of path's stored source in module."""
        name = self.spelled.get(path, path)  # the recorded code's file name
        try:
            tree = ast.parse(self.text[path], name)
        except SyntaxError as exc:
            self.notes.append("%s does not parse: %s" % (path, exc))
            return
        if path in self.pytest_rewritten:
            self.rewrite_asserts(tree, path)
        flags = future_flags(tree.body)
        # One compile of all the definitions, as the file was compiled: the
        # compiler reads the whole module (names bound by an import are
        # called with LOAD_ATTR, not LOAD_METHOD, from 3.11), so the
        # functions' bytecode is the recorded one -- and with it Dynamo's
        # resume functions.  Each statement runs in a try of its own: one
        # that fails (an import of a file not stored, a decorator) is a note
        # and the rest go on.  A factory statement (namedtuple/TypeVar of
        # literals) is made by the real factory, never by the name the
        # source binds, at its place in the order.
        base = os.path.basename(path)
        made_by = []
        body = []
        for st, lib in library_calls(definitions(tree.body)):
            if isinstance(st, ast.ImportFrom) and st.module == "__future__":
                body.append(st)
                continue
            made = factory(st) if lib is None else (None, lib)
            if made is not None:
                made_by.append(made)
                inner = [ast.Expr(ast.Call(ast.Name("__dynrec_factory__", ast.Load()),
                                           [ast.Constant(len(made_by) - 1)], []))]
            else:
                inner = [_statements_guarded(st) if isinstance(st, ast.ClassDef) else st]
            wrap = guarded(inner, st.lineno)
            if isinstance(st, ast.ImportFrom) and len(st.names) > 1:
                # One name this torch lacks (a test file of a newer one):
                # the others are imported one by one.
                wrap.handlers[0].body = [guarded([ast.ImportFrom(
                    module=st.module, names=[a], level=st.level)], st.lineno) for a in st.names]
            body.append(ast.copy_location(wrap, st))
        ast.fix_missing_locations(body_mod := ast.Module(body=body, type_ignores=[]))

        def failed(lineno, exc):
            self.notes.append("%s:%d: %s: %s" % (base, lineno, type(exc).__name__, exc))

        libraries = {}  # name -> the Library made for it

        def make(i):
            if made_by[i][0] is None:
                # a custom op statement: the real torch.library, no name bound
                make_library(module.__dict__, made_by[i][1], libraries)
                return
            name, (modname, fname), args, kw = made_by[i]
            fn = getattr(importlib.import_module(modname), fname)
            if fname == "namedtuple":
                kw["module"] = module.__name__
            module.__dict__[name] = fn(*args, **kw)
            if fname == "NamedTuple":
                module.__dict__[name].__module__ = module.__name__

        body.sort(key=lambda st: not (isinstance(st, ast.ImportFrom) and st.module == "__future__"))
        try:
            code = compile(body_mod, name, "exec", flags=flags, dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            self.notes.append("%s: its definitions do not compile: %s" % (base, exc))
            return
        self.index(code)
        try:
            # The code of the rest of the file too, compiled, never run: a
            # lambda of a module-level statement (f(functools.partial(
            # lambda a: a))) is found by its place like a definition's.
            # (Not the module's own code: a trace naming it as its frame
            # would have the replay trace the whole file.)
            whole = compile(tree, name, "exec", flags=flags, dont_inherit=True)
            for c in whole.co_consts:
                if isinstance(c, types.CodeType):
                    self.index(c)
        except (SyntaxError, ValueError):
            pass
        ns = module.__dict__
        ns["__dynrec_failed__"], ns["__dynrec_factory__"] = failed, make
        try:
            exec(code, ns)
        except Exception as exc:  # a `from __future__` import, the only statement outside a try
            self.notes.append("%s: %s: %s" % (base, type(exc).__name__, exc))
        finally:
            for k in ("__dynrec_failed__", "__dynrec_factory__", "__dynrec_exc__"):
                ns.pop(k, None)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the user's modules from the trace's sources."""

    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, name, path=None, target=None):
        p = self.sources.modules.get(name)
        if p is None:
            pkg = name + "."
            if any(m.startswith(pkg) for m in self.sources.modules):
                spec = importlib.util.spec_from_loader(name, self, is_package=True)
                spec.submodule_search_locations = []
                return spec
            return None
        spec = importlib.util.spec_from_loader(name, self, origin=p,
                                               is_package=p.endswith("__init__.py"))
        spec.has_location = True
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        p = self.sources.modules.get(module.__name__)
        if p is not None:
            module.__file__ = p
            self.sources.fill(module, p)


# ---- values -----------------------------------------------------------------


def _import(name):
    """A module a value names.  Without --trust only one the sources'
    definitions or torch already imported, or a submodule of torch (which
    imports its own lazily): a trace cannot make the replay import anything
    else (an import runs the module's code: `this` prints, `antigravity`
    opens a browser)."""
    if not isinstance(name, str) or not name or len(name) > 200:
        raise Refused("a module name that is not a name")
    m = sys.modules.get(name)
    if m is not None:
        return m
    if not _TRUST and "__main__" in name.split("."):
        # package.__main__ runs the package's command line when imported
        # (unittest.__main__ runs test files).
        raise NotReplayable("module %s is a program, not a library; --trust imports it" % name)
    if not _TRUST and not name.startswith("torch."):
        raise NotReplayable("module %s is not imported by the trace's sources; --trust imports it"
                            % name)
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise NotReplayable("module %s cannot be imported here (%s)" % (name, exc))


def _c_base(cls):
    """The nearest base of cls that is not a class statement's (a C type):
    whose __new__ makes its instances."""
    for b in cls.__mro__:
        if not b.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE
            return b
    return object


def _no_finalizer(cls, typ, hooks=HOOKS, mine=(object,)):
    """Objects are rebuilt from recorded state without __init__: one whose
    class (as it is here, not as the trace says) has a finalizer would run
    it on that state when dropped, one with attribute hooks whenever Dynamo
    or torch reads an attribute.  Only under --trust or in the sandbox.
    (argparse.Namespace, transformers' GenerationConfig and caches are
    plain state: no such hooks.)  mine: bases whose hooks are torch's own."""
    if _LOOSE:
        return
    for b in cls.__mro__:
        if b in mine:
            continue
        hit = [h for h in hooks if h in vars(b)]
        if hit:
            what = "a finalizer (__del__)" if hit[0] == "__del__" else "an attribute hook (%s)" % (
                hit[0])
            raise NotReplayable("%s has %s that would run on recorded state; "
                                "--trust rebuilds it" % (typ, what))


def _ref(d, modules, depth=0, beside=None):
    if not isinstance(d, dict) or not isinstance(d.get("module"), str) or not isinstance(
            d.get("qualname"), str):
        raise Refused("a reference needs module and qualname")
    if depth > 32:
        raise Refused("a reference nested more than 32 deep")
    mod, qual = d["module"], d["qualname"]
    try:
        made = namedtuple_made(d)
    except ValueError as exc:
        raise Refused(str(exc))
    if made is not None:
        # A namedtuple class made inside a function: by the real factory.
        key = (made[3], mod, qual, tuple(made[1]), tuple((type(x), x) for x in made[2]))
        if key not in _NAMEDTUPLES:
            _NAMEDTUPLES[key] = collections.namedtuple(qual, made[1], defaults=made[2],
                                                       module=mod)
        return _NAMEDTUPLES[key]
    try:
        par = parametrized_class(d)
    except ValueError as exc:
        raise Refused(str(exc))
    if par is not None:
        return _parametrized(par, qual, modules)
    if ".<locals>." in qual and _SOURCES is not None and isinstance(d.get("local"), bool):
        # A class defined inside a function of the user's files.
        path = _SOURCES.main if mod == "__main__" else _SOURCES.modules.get(mod)
        m = modules.get(mod) or sys.modules.get(mod)
        if path is None or m is None:
            raise NotReplayable("%s.%s: its module's source is not in the trace" % (mod, qual))
        try:
            number = local_class_number(d)
            bases = local_class_bases(d)
        except ValueError as exc:
            raise Refused(str(exc))
        # Its bases defined beside it: the one class of their own
        # references (class C(B): C's B is the B a test names).
        bases = {k: _ref(r, modules, depth + 1) for k, r in bases.items()}
        # (and the classes made beside it already, which its nesting takes
        # instead of making them again: beside, {name: class})
        given = dict(beside or {}, **bases)
        cls = _SOURCES.local_class(m, path, qual, number, given)
        subs = d.get("subclasses", [])
        if not isinstance(subs, list) or len(subs) > 1000:
            raise Refused("a class reference whose subclasses are not a list")
        made = {cls.__name__: cls}
        for sub in subs:
            # Its subclasses defined beside it, made in the recorded order
            # (Foo.__subclasses__()), each given those made before it; one
            # that cannot be made is left out.
            if not isinstance(sub, dict) or sub.get("local") is not True or "subclasses" in sub:
                raise Refused("a subclass that is not a local class's reference")
            try:
                c = _ref(sub, modules, depth + 1, made)
                made[c.__name__] = c
            except NotReplayable:
                pass
        if d.get("allow_in_graph", False) is not False:
            # @torch._dynamo.allow_in_graph on it, which its making leaves out.
            if d["allow_in_graph"] is not True:
                raise Refused("a class reference whose allow_in_graph is not true")
            if id(cls) not in torch._dynamo.trace_rules._allowed_callable_ids:
                torch._dynamo.allow_in_graph(cls)
        return cls
    if "<" in qual:
        raise NotReplayable("%s.%s is not reachable by name" % (mod, qual))
    m = modules.get(mod)
    if m is None:
        m = _import(mod)
    cur = m
    for part in qual.split("."):
        try:
            cur = getattr(cur, part)
        except AttributeError:
            raise NotReplayable("%s has no %s" % (mod, qual))
    if "classmethod" in d:
        # The function of a classmethod, which the name binds to its class.
        if d["classmethod"] is not True:
            raise Refused("a reference whose classmethod is not true")
        if not (isinstance(cur, types.MethodType) and isinstance(cur.__self__, type)
                and type(cur.__func__) is types.FunctionType):
            raise NotReplayable("%s.%s is not a classmethod here" % (mod, qual))
        cur = cur.__func__
    wrapped = d.get("wrapped")
    if wrapped is not None:
        # The function behind that many functools.wraps wrappers, each a
        # function's own __wrapped__.
        if type(wrapped) is not int or not 0 < wrapped <= 8:
            raise Refused("a reference with a count of wrappers that is not one")
        for _ in range(wrapped):
            cur = vars(cur).get("__wrapped__") if type(cur) is types.FunctionType else None
            if cur is None:
                raise NotReplayable("%s.%s does not wrap a function %d deep here" % (
                    mod, qual, wrapped))
    return cur


_PARAMETRIZED = {}  # number -> the class made


def _parametrized(par, qual, modules):
    """The class torch.nn.utils.parametrize made for a module with
    parametrized tensors (Parametrized<Base>), made again by parametrize's
    own functions on a bare instance of the base, once per number: its
    __getstate__, __deepcopy__ and tensor properties are torch's."""
    base_ref, names, number = par
    cls = _PARAMETRIZED.get(number)
    if cls is not None:
        return cls
    base = _ref(base_ref, modules)
    if not (isinstance(base, type) and issubclass(base, torch.nn.Module)):
        raise NotReplayable("%s: its base is not a torch.nn.Module class" % qual)
    if base.__setattr__ is not torch.nn.Module.__setattr__:
        raise NotReplayable("%s: its base %s has a __setattr__ of its own" % (qual, base.__name__))
    if "Parametrized" + base.__name__ != qual:
        raise Refused("parametrized class %s over %s" % (qual, base.__name__))
    import torch.nn.utils.parametrize as parametrize

    bare = object.__new__(base)
    parametrize._inject_new_class(bare)
    for name in names:
        parametrize._inject_property(bare, name)
    cls = _PARAMETRIZED[number] = type(bare)
    return cls


def _name_of(x):
    m, q = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
    return "%s.%s" % (m, q) if isinstance(m, str) and isinstance(q, str) else type(x).__name__


class _Later:
    """The default a local dataclass's field has until the recorded one is
    set (a default that is not a literal: local_class_tree()'s later)."""

    def __repr__(self):
        return "<default not recorded>"


_LATER = _Later()


def _dataclass_default(cls, name, value):
    """Where field name of dataclass cls (made from the sources) has the
    placeholder default: the recorded value (its class attribute) made its
    default, in its Field and in the __init__ the dataclass made."""
    fields = vars(cls).get("__dataclass_fields__")
    f = fields.get(name) if isinstance(fields, dict) else None
    if not isinstance(f, dataclasses.Field) or f.default is not _LATER:
        return
    f.default = value
    init = vars(cls).get("__init__")
    if type(init) is not types.FunctionType:
        return
    if init.__defaults__:
        init.__defaults__ = tuple(value if d is _LATER and p == name else d for d, p in zip(
            init.__defaults__, init.__code__.co_varnames[
                init.__code__.co_argcount - len(init.__defaults__):init.__code__.co_argcount]))
    if init.__kwdefaults__ and init.__kwdefaults__.get(name) is _LATER:
        init.__kwdefaults__[name] = value


def _defines(obj, fn):
    """Whether MethodType(fn, obj) is a real bound method of obj: a Python
    function that type(obj)'s MRO defines (or, for a class, a classmethod
    of its own MRO), never a library function bound to a crafted self."""
    if not isinstance(fn, types.FunctionType):
        return False
    name = fn.__name__
    for b in type(obj).__mro__:
        if vars(b).get(name) is fn:
            return True
    if isinstance(obj, type):
        for b in obj.__mro__:
            c = vars(b).get(name)
            if isinstance(c, classmethod) and c.__func__ is fn:
                return True
    return False


def _dtype(name):
    if not isinstance(name, str) or not name.startswith("torch."):
        raise Refused("bad dtype %r" % (name,))
    dt = getattr(torch, name[6:], None)
    if not isinstance(dt, torch.dtype):
        raise Refused("bad dtype %r" % (name,))
    return dt


def _ints(v, what, lo=0, hi=1 << 62):
    if not isinstance(v, list) or len(v) > 64 or not all(
            type(x) is int and lo <= x <= hi for x in v):
        raise Refused("%s must be a short list of integers in [%d, %d]" % (what, lo, hi))
    return v


def _tensor_bytes(b, n, v):
    """Checks a tensor node's metadata; returns (shape, stride, offset,
    dtype, numel, element size, storage extent in elements)."""
    shape = _ints(v.get("shape"), "shape", 0, 1 << 48)
    stride = _ints(v.get("stride"), "stride", 0, 1 << 48)
    offset = v.get("offset")
    if len(stride) != len(shape) or type(offset) is not int or not 0 <= offset < 1 << 48:
        raise b.fail(n, "stride or offset do not fit the shape")
    dt = _dtype(v.get("dtype"))
    numel = math.prod(shape)
    elsize = torch.empty((), dtype=dt).element_size()
    extent = 0 if numel == 0 else offset + 1 + sum((d - 1) * s for d, s in zip(shape, stride))
    need = max(extent, numel) * elsize
    if need > _MAX_BYTES:
        raise b.fail(n, "a tensor of shape %s needs %d bytes, over the replay limit of %d"
                     " (DYNREC_REPLAY_MAX_BYTES)" % (shape, need, _MAX_BYTES))
    return shape, stride, offset, dt, numel, elsize, extent


def _same_code(c, filename, qualname, line):
    """c is the code at filename:line, of that qualname (None: any; a
    functools.wraps function carries the wrapped one's)."""
    return (isinstance(c, types.CodeType) and c.co_filename == filename and
            c.co_firstlineno == line and (qualname is None or
                                          _qualname(c) == code_name(qualname)))


@contextlib.contextmanager
def _no_functorch():
    """No torch.func transform active: its interpreter stack set aside (a
    tensor that requires grad is made as outside any transform, where
    requires_grad_() works) and its dispatch off."""
    clear = getattr(sys.modules.get("torch._functorch.pyfunctorch"),
                    "temporarily_clear_interpreter_stack", None)
    with clear() if clear is not None else contextlib.nullcontext():
        with torch._C._DisableFuncTorch():
            yield


def _is_graph_module(obj):
    gm = sys.modules.get("torch.fx.graph_module")
    return gm is not None and isinstance(obj, gm.GraphModule)


def _inner_codes(code, depth=0):
    """The code objects of the functions code defines (its constants), and
    theirs, at most 4 deep."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            if depth < 3:
                yield from _inner_codes(c, depth + 1)


def _unwrapped_codes(obj):
    """The code of obj and of the functions functools.wraps chains behind
    it (__wrapped__), at most 20 deep; of a property, its getter's, setter's
    and deleter's, of a cached_property its function's (the name the class
    binds: PreTrainedModel.loss_function)."""
    if isinstance(obj, property):
        for f in (obj.fget, obj.fset, obj.fdel):
            if f is not None:
                yield from _unwrapped_codes(f)
        return
    if isinstance(obj, functools.cached_property):
        obj = obj.func
    for _ in range(20):
        f = getattr(obj, "__func__", obj)
        c = getattr(f, "__code__", None) if isinstance(f, types.FunctionType) else None
        if c is not None:
            yield c
        nxt = getattr(f, "__wrapped__", None) if isinstance(f, types.FunctionType) else None
        if nxt is None:
            return
        obj = nxt


def _library_code(module, path, filename, qualname, line):
    """The code of a function an installed library defines, found where the
    library put it: module.path (a qualname without <locals>), or behind the
    decorators there (__wrapped__): the code comes from the library on disk,
    never from the trace.  None when it is not there."""
    mod = sys.modules.get(module) if isinstance(module, str) else None
    if mod is None or not isinstance(path, str):
        return None
    # A function defined inside another (make_dynamo_test.<locals>.
    # standard_test.<locals>.dummy): its code is a constant of the
    # outermost function's, which the module names.
    outer, local, _ = path.partition(".<locals>.")
    if "<" in outer:
        return None
    cur = mod
    for part in outer.split("."):
        d = getattr(cur, "__dict__", None)
        cur = d.get(part) if isinstance(d, (dict, types.MappingProxyType)) else None
        if cur is None:
            return None
    for c in _unwrapped_codes(cur):
        if not local and _same_code(c, filename, qualname, line):
            return c
        for inner in _inner_codes(c) if local else ():
            if _same_code(inner, filename, path, line):
                return inner
    return None


_LIBRARY_FILES = {}  # path -> the code objects its text compiles to, by place


def _library_file_code(module, qualname, filename, line, place):
    """A lambda or function an installed library made at its module level
    (torch's pytree registrations: pytree.register_pytree_node(cls,
    lambda x: ..., ...)), which no name of the module reaches: found in the
    code the module's own file on disk compiles to (compiled, never run;
    the file the module was imported from, not a path from the trace).
    Only confined or under --trust, as a library's frame is."""
    mod = sys.modules.get(module) if isinstance(module, str) else None
    f = getattr(mod, "__file__", None)
    if not _LOOSE or not isinstance(f, str) or not isinstance(filename, str) or (
            not f.endswith(".py") or os.path.realpath(f) != os.path.realpath(filename)):
        return None
    if module == "__main__" or (_SOURCES is not None and (
            module in _SOURCES.modules or os.path.normpath(f) in _SOURCES.text)):
        return None  # the program's own files: their code is the trace's sources'

    codes = _LIBRARY_FILES.get(f)
    if codes is None:
        codes = _LIBRARY_FILES[f] = []
        try:
            with open(f, "rb") as fh:
                top = compile(fh.read(), filename, "exec", dont_inherit=True)
            codes.extend(_inner_codes(top))
        except (OSError, SyntaxError, ValueError):
            pass
    hits = [c for c in codes if _same_code(c, filename, qualname, line)]
    if len(hits) > 1 and is_place(place):
        hits = [c for c in hits if code_place(c) == place]
    return hits[0] if len(hits) == 1 else None


class _Builder:
    def __init__(self, cap, sources, modules, rows=None):
        self.cap = cap
        self.no = cap["no"]
        self.sources = sources
        self.modules = modules
        self.rows = {}
        self.built = {}
        self.busy = set()
        self.late_cells = []  # (cell, node): a cell of a function that holds itself
        self.keep = []  # what the frame's weak containers and references hold
        self.cell_claims = None  # cell node -> (local class or object node, class cell key)
        self.taken = {}  # cell node -> handed out (through child) before it was settled
        self.total = 0
        self.frame_ns = None  # the globals of the frame being rebuilt (_frame)
        self.fx_env = []  # {name: fx node} of each fx graph being built (graph_module)
        if rows is not None:  # given (the fuzzer's damaged copies)
            self.rows = rows
            return
        rows = _query("SELECT node, kind, type, value, blob_id FROM v_values WHERE capture = %d"
                      " ORDER BY node LIMIT %d" % (self.no, _MAX_NODES + 1))
        if len(rows) > _MAX_NODES:
            raise Refused("capture %d has more than %d values" % (self.no, _MAX_NODES))
        for node, kind, typ, value, blob in rows:
            n = _int(node, "a node number")
            try:
                v = json.loads(value) if value is not None else None
            except ValueError:
                raise Refused("node %s: its value is not JSON" % n)
            self.rows[n] = (kind, typ or "?", v, int(blob) if blob else None)

    def check(self):
        """The whole tree, before anything is built or run (value_kinds.py), and
        each tensor's bytes within the replay's limit."""
        check_tree(self.rows, self.fail, {"tensor": lambda n, v: _tensor_bytes(self, n, v)})

    def fail(self, n, msg):
        if n is None:
            return Refused("capture %d: %s" % (self.no, msg))
        return Refused("capture %d node %d: %s" % (self.no, n, msg))

    def class_state(self, n, cls, v):
        """What the classes in cls's MRO held at this compile that their
        definitions do not make (an object's, a module's or a local class's
        class_attrs, method_attrs, class_cells and method_defaults)."""
        self.class_attrs(n, cls, v.get("class_attrs"))
        self.method_attrs(n, cls, v.get("method_attrs"))
        self.class_cells(n, cls, v.get("class_cells"))
        self.method_defaults(n, cls, v.get("method_defaults"))

    def method_attrs(self, n, cls, entries):
        """The own attributes the functions of the def statements of the
        classes defined inside functions in cls's MRO had at this compile
        (capture's method_attrs: torch._dynamo.assume_constant_result(
        Cls.prop.fget) after the class statement), set on the rebuilt
        class's functions; one that cannot be made is left out.  Only on
        classes the replay made from the stored sources."""
        for key, c in (entries or {}).items():
            q, name = class_attr_key(key)  # checked with the tree
            owner = _made_class(cls, q)
            fn = body_function(vars(owner).get(name)) if owner is not None else None
            if fn is None:
                continue
            try:
                attrs = self.child(n, c)
            except NotReplayable:
                continue
            if not function_attrs_ok(attrs):
                raise self.fail(n, "a function's attributes are not a dict of plain names")
            fn.__dict__.update(attrs)

    def class_attrs(self, n, cls, attrs):
        """The recorded attributes of the classes defined inside functions
        in cls's MRO that their definitions do not make (capture's
        class_attrs: class Holder: y = torch.ones(4), add = my_add, prop =
        Descriptor()), and their values at this compile (A.a = 5 between
        two calls), set on the rebuilt class that held each; one that
        cannot be made is left out.
        Only on classes the replay made from the stored sources; each value
        is a value of the trace's kinds (a function only from the stored
        sources), as anywhere else."""
        for q, name, c in class_attrs_to_set(attrs):  # checked with the tree
            owner = _made_class(cls, q)
            if owner is None:
                continue
            # (set also where its definitions made it: the value at this
            # compile, A.a = 5 between two calls; the capture leaves out
            # what the class's def and class statements made)
            try:
                value = self.child(n, c)
            except NotReplayable:
                continue
            type.__setattr__(owner, name, value)
            _dataclass_default(owner, name, value)

    def method_cell(self, n):
        """For cell node n that a local class's class_cell_nodes name: the
        cell the replay's method of that class holds for that name, once
        the class (or the object of it) is made; None where no such node
        names it, the owner is being made and is not there yet (the cell is
        reached from inside it), or this cell was handed out while the owner
        was made.  An owner being given its state is there: its class's
        methods hold their cells (a function its class_cells hold that
        closes over the same local as the method)."""
        if self.cell_claims is None:
            self.cell_claims = {}
            for m, (kind, _, v, _) in self.rows.items():
                if kind in ("object", "module", "class") and isinstance(v, dict) and isinstance(
                        v.get("class_cell_nodes"), dict):
                    for key, c in v["class_cell_nodes"].items():
                        if type(c) is int:
                            self.cell_claims.setdefault(c, (m, key))
        claim = self.cell_claims.get(n)
        if claim is None:
            return None
        if claim[0] in self.busy:
            owner = self.built.get(claim[0])
            if owner is None:
                return None
        else:
            before = self.built[n]
            owner = self.get(claim[0])
            if self.built.get(n) is not before or self.taken.get(n):
                return None
        cls = owner if isinstance(owner, type) else type(owner)
        q, meth, var = class_cell_key(claim[1])  # checked with the tree
        made = _made_class(cls, q)
        fn = vars(made).get(meth) if made is not None else None
        fn = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
        if type(fn) is not types.FunctionType or var not in fn.__code__.co_freevars:
            return None
        return fn.__closure__[fn.__code__.co_freevars.index(var)]

    def class_cells(self, n, cls, cells):
        """The recorded contents of the closure cells of the methods of the
        classes defined inside functions in cls's MRO (capture's
        class_cells), put in the cells of the rebuilt class's methods, which
        its nesting bound to None; one that cannot be made is left out.
        Only on classes the replay made from the stored sources."""
        if not cells:
            return
        for key, c in cells.items():
            q, meth, var = class_cell_key(key)  # checked with the tree
            owner = _made_class(cls, q)
            fn = vars(owner).get(meth) if owner is not None else None
            fn = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
            if type(fn) is not types.FunctionType or var not in fn.__code__.co_freevars:
                continue
            try:
                value = self.child(n, c)
            except NotReplayable:
                continue
            fn.__closure__[fn.__code__.co_freevars.index(var)].cell_contents = value

    def method_defaults(self, n, cls, entries):
        """The defaults the methods of the classes of the sources in cls's
        MRO had at this compile (capture's method_defaults): each entry a
        function node by reference, whose making sets them on that very
        function; an entry that is not one of those methods is left out."""
        for key, c in (entries or {}).items():
            q, name = method_key(key)  # checked with the tree
            owner = next((b for b in cls.__mro__ if b.__qualname__ == q), None)
            fn = vars(owner).get(name) if owner is not None else None
            row = self.rows.get(c) if type(c) is int else None
            if type(fn) is not types.FunctionType or row is None or row[0] != "function":
                continue
            try:
                self.child(n, c)
            except NotReplayable:
                continue

    def child(self, n, c):
        if type(c) is not int or c not in self.rows:
            raise self.fail(n, "refers to node %r, which is not there" % (c,))
        return self.get(c)

    def get(self, n):
        if n in self.built:
            if n in self.busy:
                self.taken[n] = True  # (handed out while still being made)
            return self.built[n]
        if n in self.busy:
            raise self.fail(n, "a cycle through an immutable value")
        if n not in self.rows:
            raise Refused("capture %d: node %d is missing" % (self.no, n))
        if len(self.busy) >= MAX_DEPTH:
            raise self.fail(n, "values nested deeper than %d" % MAX_DEPTH)
        self.busy.add(n)
        try:
            v = self.make(n, *self.rows[n])
        finally:
            self.busy.discard(n)
        self.built[n] = v
        if self.late_cells:
            for cell, m in [x for x in self.late_cells if x[1] == n]:
                cell.cell_contents = v
            self.late_cells = [x for x in self.late_cells if x[1] != n]
        return v

    def make(self, n, kind, typ, v, blob):
        kid = lambda c: self.child(n, c)  # noqa: E731
        if kind == "none":
            return None
        if kind == "ellipsis":
            return Ellipsis
        if kind == "bool":
            if type(v) is not bool:
                raise self.fail(n, "bool without a boolean")
            return v
        if kind == "int":
            if type(v) is not int:
                raise self.fail(n, "int without an integer")
            return v
        if kind == "float":
            try:
                return float(v)
            except (TypeError, ValueError):
                raise self.fail(n, "float without a number")
        if kind == "complex":
            if not isinstance(v, list) or len(v) != 2:
                raise self.fail(n, "complex needs two parts")
            try:
                return complex(float(v[0]), float(v[1]))
            except (TypeError, ValueError):
                raise self.fail(n, "complex needs two numbers")
        if kind == "str":
            if type(v) is not str:
                raise self.fail(n, "str without a string")
            return v
        if kind in ("bytes", "bytearray"):
            if type(v) is not int or v < 0 or v > MAX_CODE:
                raise self.fail(n, "bytes with a bad length")
            data = self.data(n, blob, v)
            return data if kind == "bytes" else bytearray(data)
        if kind in ("list", "set"):
            if not isinstance(v, list):
                raise self.fail(n, "%s without a list of nodes" % kind)
            out = [] if kind == "list" else set()
            self.built[n] = out  # before the items: a list may hold itself
            for c in v:
                x = kid(c)
                if kind == "list":
                    out.append(x)
                else:
                    try:
                        out.add(x)
                    except TypeError:
                        raise self.fail(n, "a set item is not hashable")
            return out
        if kind in ("tuple", "frozenset"):
            if not isinstance(v, list):
                raise self.fail(n, "%s without a list of nodes" % kind)
            items = [kid(c) for c in v]
            try:
                return tuple(items) if kind == "tuple" else frozenset(items)
            except TypeError:
                raise self.fail(n, "a frozenset item is not hashable")
        if kind == "dict":
            if not isinstance(v, list):
                raise self.fail(n, "dict without a list of pairs")
            out = collections.OrderedDict() if typ == "collections.OrderedDict" else {}
            self.built[n] = out
            for pair in v:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise self.fail(n, "dict item is not a pair")
                k, x = kid(pair[0]), kid(pair[1])
                try:
                    out[k] = x
                except TypeError:
                    raise self.fail(n, "a dict key is not hashable")
            return out
        if kind == "size":
            return torch.Size(_ints(v, "torch.Size"))
        if kind == "dtype":
            return _dtype(v)
        if kind == "device":
            return self.device(n, v)
        if kind == "slice":
            if not isinstance(v, list) or len(v) != 3:
                raise self.fail(n, "slice needs three nodes")
            return slice(*[kid(c) for c in v])
        if kind == "range":
            if not isinstance(v, list) or len(v) != 3 or not all(type(x) is int for x in v) or (
                    v[2] == 0):
                raise self.fail(n, "range needs start, stop and a non-zero step")
            return range(*v)
        if kind == "path":
            # (checked with the tree; made from its text: no file touched)
            try:
                p = getattr(pathlib, v[0])(v[1])
            except NotImplementedError:  # (a WindowsPath on POSIX)
                raise NotReplayable("a pathlib.%s, which this system cannot make" % v[0])
            str(p)  # (its text cached, as the capture's str() left the recorded one)
            return p
        if kind == "partial":
            fn, args, kw = kid(v.get("func")), kid(v.get("args")), kid(v.get("keywords"))
            if not callable(fn) or type(args) is not tuple or type(kw) is not dict or not all(
                    isinstance(k, str) for k in kw):
                raise self.fail(n, "a partial of something other than a callable, a tuple and "
                                   "a dict of names")
            out = functools.partial(fn, *args, **kw)
            self.built[n] = out
            d = kid(v["dict"]) if v.get("dict") is not None else {}
            if type(d) is not dict or not all(isinstance(k, str) for k in d):
                raise self.fail(n, "a partial's attributes are not a dict of names")
            out.__dict__.update(d)
            return out
        if kind == "iterator":
            return self.iterator(n, typ, v, kid)
        if kind == "mappingproxy":
            d = kid(v["mapping"])
            if type(d) not in (dict, collections.OrderedDict):
                raise self.fail(n, "a mappingproxy of something other than a dict")
            return types.MappingProxyType(d)
        if kind == "exception":
            # Made by its C base's __new__ and __init__ (StopIteration's
            # sets value), never the class's own; attributes set after.
            cls = self.cls(n, v)
            base = _c_base(cls) if isinstance(cls, type) else None
            if base is None or not issubclass(cls, BaseException):
                raise self.fail(n, "%s is not an exception class" % typ)
            _no_finalizer(cls, typ, mine=(object,) + base.__mro__)
            args, d = kid(v["args"]), kid(v["dict"])
            if type(args) is not tuple or type(d) is not dict or not all(
                    type(k) is str for k in d):
                raise self.fail(n, "an exception's args are not a tuple, or its attributes "
                                   "not a dict of names")
            out = base.__new__(cls, *args)
            base.__init__(out, *args)
            self.built[n] = out
            _own_dict(out, lambda: self.fail(n, "%s has no __dict__" % typ)).update(d)
            return out
        if kind == "uninitialized":
            # (form checked with the tree) torch's own constructors: an
            # empty tensor of that dtype and device, no data.
            from torch.nn import parameter as nnp

            dt, dev = _dtype(v["dtype"]), self.device(n, v["device"])
            if v["uninitialized"] == "parameter":
                return nnp.UninitializedParameter(v["requires_grad"], dev, dt)
            return nnp.UninitializedBuffer(v["requires_grad"], dev, dt, v.get("persistent", True))
        if kind == "hook_handle":
            # torch's RemovableHandle, made by its own __setstate__: weak
            # references to the dicts, its id (form checked with the tree).
            from torch.utils.hooks import RemovableHandle

            hooks = kid(v["hooks"]) if v.get("hooks") is not None else None
            extra = tuple(kid(c) for c in v.get("extra_dicts") or [])
            if not all(isinstance(d, collections.OrderedDict) for d in extra + (
                    () if hooks is None else (hooks,))):
                raise self.fail(n, "a hook handle of something other than ordered dicts")
            h = RemovableHandle.__new__(RemovableHandle)
            h.__setstate__((hooks, v["id"], extra))
            return h
        if kind == "module_hook":
            # torch's _WrappedHook(hook, module): it keeps the module by
            # weakref and calls nothing when made.
            from torch.nn.modules.module import _WrappedHook

            hook = kid(v["hook"])
            mod = kid(v["module"]) if v.get("module") is not None else None
            if not callable(hook) or not (mod is None or isinstance(mod, torch.nn.Module)):
                raise self.fail(n, "a module hook of something not callable, or not of a module")
            return _WrappedHook(hook, mod)
        if kind == "pygenerator":
            fn, args, kw = kid(v.get("func")), kid(v.get("args")), kid(v.get("kwds"))
            # Calling a generator function runs none of its body; anything
            # else it could be (a wrapper) is not called.
            if type(fn) is not types.FunctionType or not (
                    fn.__code__.co_flags & inspect.CO_GENERATOR):
                raise self.fail(n, "a generator made by something other than a generator function")
            if type(args) is not tuple or type(kw) is not dict or not all(
                    isinstance(k, str) for k in kw):
                raise self.fail(n, "a generator's call without a tuple and a dict of names")
            try:
                return fn(*args, **kw)
            except TypeError as exc:
                raise self.fail(n, "a generator's call: %s" % exc)
        if kind == "autograd_ctx":
            # (form checked with the tree) a ctx of the Function's own
            # type, made by its C base (no code of the program runs), its
            # attributes and C attributes set
            fn_cls = _ref(v["function"], self.modules)
            from torch.autograd.function import BackwardCFunction

            made = getattr(fn_cls, "_backward_cls", None) if isinstance(fn_cls, type) and (
                issubclass(fn_cls, torch.autograd.Function)) else None
            if not (isinstance(made, type) and issubclass(made, BackwardCFunction)):
                raise self.fail(n, "a ctx of something other than a torch.autograd.Function")
            _no_finalizer(made, typ, mine=(object,) + made.__mro__[1:])
            ctx = made()
            self.built[n] = ctx
            d = kid(v["dict"])
            if not isinstance(d, dict) or not all(type(k) is str for k in d):
                raise self.fail(n, "ctx attributes are not a dict of names")
            _own_dict(ctx, lambda: self.fail(n, "a ctx without a __dict__")).update(d)
            for name, c in (v.get("c_attrs") or {}).items():
                try:
                    setattr(ctx, name, kid(c))
                except (TypeError, ValueError, AttributeError) as exc:
                    raise self.fail(n, "ctx.%s: %s" % (name, exc))
            return ctx
        if kind == "id":
            # (form checked with the tree) the recorded int where that
            # value is being made and is not there yet (a tuple that holds
            # its own id; an object is there before its attributes)
            if v["of"] is None:
                target = _ids_made.get(v["int"])
                return v["int"] if target is None else id(target)
            if v["of"] in self.busy and v["of"] not in self.built:
                return v["int"]
            target = kid(v["of"])
            _ids_made[v["int"]] = target  # (alive: a later capture's id is its)
            return id(target)
        if kind == "weakref":
            # (form checked with the tree) its referent held strongly by the
            # frame (keep), so it lives while the frame compiles, as the
            # program's did; a dead one dead again
            if v.get("referent") is None:
                return weakref.ref(_Gone())
            target = kid(v["referent"])
            try:
                out = weakref.ref(target)
            except TypeError:
                raise self.fail(n, "a weak reference to a %s" % type(target).__name__)
            self.keep.append(target)
            return out
        if kind == "weak":
            # (form checked with the tree) its items kept as a weakref's
            cls = getattr(weakref, v["class"])
            out = cls()
            self.built[n] = out
            try:
                if cls is weakref.WeakSet:
                    for c in v["items"]:
                        item = kid(c)
                        self.keep.append(item)
                        out.add(item)
                else:
                    entries = kid(v["entries"])
                    if type(entries) is not dict:
                        raise self.fail(n, "a weak dictionary of something other than a dict")
                    for k, val in entries.items():
                        self.keep.append(k if cls is weakref.WeakKeyDictionary else val)
                        out[k] = val
            except TypeError as exc:
                raise self.fail(n, "a %s item: %s" % (v["class"], exc))
            return out
        if kind == "deque":
            # (form checked with the tree) made empty first: an item may hold it
            out = collections.deque(maxlen=v.get("maxlen"))
            self.built[n] = out
            out.extend(kid(c) for c in v["items"])
            return out
        if kind == "defaultdict":
            out = collections.defaultdict()
            self.built[n] = out  # before the items: they may hold it
            factory, items = kid(v.get("factory")), kid(v.get("entries"))
            if not (factory is None or callable(factory)) or type(items) is not dict:
                raise self.fail(n, "a defaultdict of something other than a callable and a dict")
            out.default_factory = factory
            out.update(items)
            return out
        if kind == "namedtuple":
            cls = self.cls(n, v)
            seq = is_structseq(cls)
            if not (isinstance(cls, type) and issubclass(cls, tuple) and (
                    hasattr(cls, "_make") or seq)):
                raise self.fail(n, "%s is not a namedtuple class" % typ)
            items = v.get("items")
            if not isinstance(items, list):
                raise self.fail(n, "namedtuple without items")
            try:
                if seq:  # a struct sequence (torch.return_types.max) of its items
                    return cls(tuple(kid(c) for c in items))
                return cls._make([kid(c) for c in items])
            except TypeError as exc:
                raise self.fail(n, "namedtuple %s: %s" % (typ, exc))
        if kind == "enum":
            cls = self.cls(n, v)
            # (an enum.Enum, or a C++ enum pybind11 binds: SDPBackend)
            members = getattr(cls, "__members__", None) if isinstance(cls, type) and (
                issubclass(cls, enum.Enum) or type(cls).__name__ == "pybind11_type") else None
            if not isinstance(members, (dict, types.MappingProxyType)) or not isinstance(
                    v.get("name"), str):
                raise self.fail(n, "%s is not an enum" % typ)
            if v["name"] not in members:
                raise NotReplayable("%s has no member %s here" % (typ, v["name"]))
            return members[v["name"]]
        if kind == "dataclass":
            cls = self.cls(n, v)
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
                raise self.fail(n, "%s is not a dataclass" % typ)
            fields = v.get("fields")
            if not isinstance(fields, dict):
                raise self.fail(n, "dataclass without fields")
            # Made by its C base's __new__ (object, or a mapping's:
            # transformers' ModelOutput is an OrderedDict), never __init__.
            base = _c_base(cls)
            if base not in (object, dict, collections.OrderedDict):
                raise NotReplayable("%s is a dataclass over %s" % (typ, _name_of(base)))
            _no_finalizer(cls, typ, mine=(object, dict, collections.OrderedDict))
            obj = base.__new__(cls)
            self.built[n] = obj
            for name, c in fields.items():
                object.__setattr__(obj, name, kid(c))
            if v.get("extra") is not None:
                extra = kid(v["extra"])
                if not isinstance(extra, dict) or not all(type(k) is str for k in extra):
                    raise self.fail(n, "dataclass attributes are not a dict of names")
                for name, x in extra.items():
                    object.__setattr__(obj, name, x)
            if v.get("mapping") is not None:
                items = kid(v["mapping"])
                if base is object or not isinstance(items, dict):
                    raise self.fail(n, "dataclass items of something not a mapping")
                for k, x in items.items():
                    base.__setitem__(obj, k, x)  # not the class's own __setitem__
            return obj
        if kind in ("module", "object"):
            # An nn.Module, or a plain instance of a class the sources define:
            # made without __init__, then given its recorded attributes.
            cls = self.cls(n, v)
            # (a plain class's C base is object, or a mapping's, whose items
            # the node holds too)
            base = _c_base(cls) if isinstance(cls, type) else None
            mapping = v.get("mapping") if kind == "object" else None
            ok = isinstance(cls, type) and (
                issubclass(cls, torch.nn.Module) if kind == "module"
                else cls.__new__ is object.__new__ if mapping is None
                else cls.__new__ is dict.__new__ and base in (dict, collections.OrderedDict))
            if not ok:
                raise self.fail(n, "%s is not a %s class" % (
                    typ, "torch.nn.Module" if kind == "module" else
                    "plain" if mapping is None else "dict or OrderedDict"))
            if kind == "object":
                _no_finalizer(cls, typ, mine=(object, dict, collections.OrderedDict))
            else:
                _no_finalizer(cls, typ, ("__del__",))
            ident = v.get("ident") if kind == "object" else None
            obj = _objects_made.get(ident, lambda: None)() if type(ident) is int else None
            if obj is not None and type(obj) is cls:
                # The object an earlier capture made for the same recorded
                # object, alive: that object, given this capture's state
                # (Dynamo guards its identity, as in the program).
                old = _own_dict(obj, lambda: self.fail(n, "%s has no __dict__" % typ))
                self.adopt(old, v.get("dict"))
                old.clear()
                if mapping is not None:
                    base.clear(obj)
            else:
                obj = object.__new__(cls) if mapping is None else base.__new__(cls)
                if type(ident) is int:
                    try:
                        _objects_made[ident] = weakref.ref(obj)
                    except TypeError:
                        pass
            self.built[n] = obj
            self.class_state(n, cls, v)
            d = kid(v.get("dict"))
            if not isinstance(d, dict) or not all(type(k) is str for k in d):
                raise self.fail(n, "%s attributes are not a dict of names" % kind)
            if d:
                _own_dict(obj, lambda: self.fail(n, "%s has no __dict__ for its attributes"
                                                 % typ)).update(d)
            slots = v.get("slots") or {}
            if kind == "object" and slots:
                # Slots as the class declares them: set through their
                # descriptors, never as another attribute.
                for name, c in slots.items():
                    if not (isinstance(name, str) and name.isidentifier()
                            and type(getattr(cls, name, None)) is types.MemberDescriptorType):
                        raise self.fail(n, "%s has no slot %r" % (typ, name))
                    object.__setattr__(obj, name, kid(c))
            if mapping is not None:
                items = kid(mapping)
                if not isinstance(items, dict):
                    raise self.fail(n, "%s items are not a dict" % typ)
                for k, x in items.items():
                    base.__setitem__(obj, k, x)  # not the class's own __setitem__
            return obj
        if kind == "compiled":
            # torch.compile's wrapper of what it wraps, made by calling
            # torch.compile as the recording did, with the replay's backend.
            orig = kid(v["orig"])
            if v.get("module") and not isinstance(orig, torch.nn.Module):
                raise self.fail(n, "a compiled module of something not a module")
            if not callable(orig):
                raise self.fail(n, "a compiled wrapper of something not callable")
            if v.get("disable") is not None:
                # torch._dynamo.disable's wrapper (form checked with the tree)
                return torch._dynamo.disable(orig, reason=v["disable"]["reason"],
                                             wrapping=v["disable"]["wrapping"])
            desc = dict(v.get("backend") or {})
            if v.get("dynamic") is not None:
                desc["dynamic"] = v["dynamic"]
            backends = _BACKENDS or _Backends(_R.get("backend"), _SOURCES, self.modules)
            return backends.get(desc, v.get("fullgraph", False))(orig)
        if kind in ("npscalar", "ndarray"):
            return self.numpy(n, kind, v, blob)
        if kind in ("npdtype", "npinfo"):
            np = _import("numpy")
            try:
                dt = np.dtype(v if kind == "npdtype" else v[1])
            except TypeError:
                raise self.fail(n, "a numpy dtype numpy does not know")
            if kind == "npdtype":
                return dt
            if dt.kind not in ("fc" if v[0] == "finfo" else "iu"):
                raise self.fail(n, "numpy.%s of a dtype of kind %s" % (v[0], dt.kind))
            return np.finfo(dt) if v[0] == "finfo" else np.iinfo(dt)
        if kind == "generator":
            nbytes = v.get("nbytes")
            if type(nbytes) is not int or not 0 < nbytes <= 1 << 20:
                raise self.fail(n, "a generator without a state")
            g = torch.Generator(device=self.device(n, v.get("device")))
            state = torch.frombuffer(bytearray(self.data(n, blob, nbytes)),
                                     dtype=torch.uint8)
            try:
                g.set_state(state)
            except RuntimeError as exc:
                raise self.fail(n, "a generator state this torch refuses: %s" % exc)
            return g
        if kind == "random":
            import random

            cls = self.cls(n, v)
            if not (isinstance(cls, type) and issubclass(cls, random.Random)):
                raise self.fail(n, "%s is not a random.Random class" % typ)
            _no_finalizer(cls, typ, mine=(object, random.Random, random.Random.__base__))
            version, words, gauss = v["state"]
            obj = random.Random.__new__(cls)  # never a __new__ of the trace's
            self.built[n] = obj
            try:
                random.Random.setstate(obj, (version, tuple(words),
                                             None if gauss is None else float(gauss)))
            except (ValueError, TypeError, OverflowError) as exc:
                raise self.fail(n, "a random state Python refuses: %s" % exc)
            d = kid(v.get("dict"))
            if not isinstance(d, dict) or not all(type(k) is str for k in d):
                raise self.fail(n, "random attributes are not a dict of names")
            _own_dict(obj, lambda: self.fail(n, "%s has no __dict__" % typ)).update(d)
            return obj
        if kind == "logger":
            import logging

            return logging.getLogger(v)
        if kind == "config_patch":
            # Only the settings this torch lets patch_dynamo_config make
            # while Dynamo traces, each one dynrec sets from a trace too.
            import torch._dynamo.decorators as decorators

            allowed = getattr(decorators, "_allowed_config_patches", ())
            for name, x in v.items():
                if name not in allowed or not (name == "verbose" or config_allowed(name, repr(x))):
                    raise NotReplayable("patch_dynamo_config of %s, which dynrec does not set"
                                        % name)
            return decorators.patch_dynamo_config(dict(v))
        if kind == "singleton":
            # A module's attribute by name (a logger, a higher-order-op
            # singleton): the module as _import allows, never built.
            mod, name = v.get("module"), v.get("name")
            if not isinstance(mod, str) or not isinstance(name, str) or not name.isidentifier():
                raise self.fail(n, "singleton without module and name")
            m = self.modules.get(mod) or _import(mod)
            if not hasattr(m, name):
                raise NotReplayable("%s has no %s here" % (mod, name))
            return getattr(m, name)
        if kind == "pymodule":
            if not isinstance(v, str):
                raise self.fail(n, "module without a name")
            if v in self.modules:
                return self.modules[v]
            return _import(v)
        if kind == "class":
            cls = _ref(v, self.modules)
            if v.get("local") is True:
                # (a class defined inside a function: what its body made
                # that its definitions do not, as for an instance of it)
                self.built[n] = cls
                self.class_state(n, cls, v)
            return cls
        if kind == "function":
            return self.function(n, v, blob)
        if kind == "method":
            if not isinstance(v, dict):
                raise self.fail(n, "method without self and func")
            if "builtin" in v:
                # A C method of the object's class, bound to it; only a
                # method descriptor, never another attribute the name finds.
                obj, name = kid(v.get("self")), v["builtin"]
                if isinstance(obj, type):
                    # A C classmethod of the class, bound to it.
                    desc = inspect.getattr_static(obj, name, None) if isinstance(
                        name, str) else None
                    if type(desc) is not types.ClassMethodDescriptorType:
                        raise NotReplayable("%s has no C classmethod %r" % (_name_of(obj), name))
                    return desc.__get__(None, obj)
                desc = inspect.getattr_static(type(obj), name, None) if isinstance(
                    name, str) else None
                # (or a C slot's: a getset descriptor's __get__)
                if type(desc) not in (types.MethodDescriptorType, types.WrapperDescriptorType):
                    raise NotReplayable("%s has no C method %r" % (_name_of(type(obj)), name))
                return desc.__get__(obj, type(obj))
            fn, obj = kid(v.get("func")), kid(v.get("self"))
            if not callable(fn):
                raise self.fail(n, "method of something not callable")
            if not _defines(obj, fn):
                if _LOOSE and isinstance(fn.func if isinstance(fn, functools.partial) else fn,
                                         types.FunctionType):
                    # Confined or trusted: a function bound to the object as
                    # an attribute of its own (torch's TestCase binds its
                    # policy wrapper of the test method to the test; torchao
                    # a partial of its extra_repr to a quantized Linear).
                    return types.MethodType(fn, obj)
                raise NotReplayable("a method binding %s to an object of %s, whose class does "
                                    "not define it" % (_name_of(fn), _name_of(type(obj))))
            return types.MethodType(fn, obj)
        if kind == "cell":
            cell = types.CellType()
            self.built[n] = cell
            shared = self.method_cell(n)
            if shared is not None:
                # The cell a method of a local class holds (one cell in the
                # program: the test's local both close over), its contents
                # this capture's.
                self.built[n] = cell = shared
            if v is not None and v in self.busy and self.rows.get(v, ("",))[0] == "function":
                # A nested function's cell that holds the function itself
                # (def fn(): ... fn.pred ...): filled once it is made.
                self.late_cells.append((cell, v))
            elif v is not None:
                cell.cell_contents = kid(v)
            return cell
        if kind == "tensor":
            return self.tensor(n, v, blob)
        if kind == "wrapped_tensor":
            return self.wrapped_tensor(n, v)
        if kind == "subclass_tensor":
            return self.subclass_tensor(n, v)
        if kind == "torch_op":
            op = torch_op(v)
            if op is None:
                raise NotReplayable("torch has no operator torch.ops.%s here" % v)
            return op
        if kind == "fx_node":
            node = self.fx_env[-1].get(v) if self.fx_env else None
            if node is None:
                raise self.fail(n, "fx node %r outside its graph or before it is made" % v)
            return node
        if kind == "graph_module":
            return self.graph_module(n, v)
        if kind == "opaque":
            raise NotReplayable("a value of type %s" % typ)
        if kind == "frame":
            raise self.fail(n, "a frame inside a value")
        raise self.fail(n, "unknown kind %r" % (kind,))

    def graph_module(self, n, v):
        """An fx GraphModule from its graph's nodes: torch.fx builds the
        graph and generates its code, as it did for the recording; nothing
        of the trace is run.  GraphModules that were one in the recording
        (the same generated forward) share their class here, so Dynamo's
        guards on the module's type hold across compiles as they did."""
        import torch.fx
        from torch.fx.graph import _PyTreeCodeGen, _PyTreeInfo

        base = self.cls(n, v)
        # torch's GraphModule classes only (const folding's FoldedGraphModule,
        # _LazyGraphModule): made by GraphModule's own __new__ and __init__,
        # never a subclass's __init__.
        if not (isinstance(base, type) and issubclass(base, torch.fx.GraphModule)
                and str(getattr(base, "__module__", "")).split(".")[0] == "torch"):
            raise NotReplayable("an fx GraphModule of class %s" % _name_of(base))
        graph = torch.fx.Graph()
        if v.get("codegen") is not None:
            info = self.child(n, v["codegen"])
            spec = torch.utils._pytree.TreeSpec
            if not (isinstance(info, tuple) and len(info) == 3 and isinstance(info[0], list)
                    and all(isinstance(a, str) and a.isidentifier() for a in info[0])
                    and isinstance(info[1], spec) and isinstance(info[2], (spec, type(None)))):
                raise self.fail(n, "graph_module codegen is not (argument names, in_spec, "
                                   "out_spec)")
            graph._codegen = _PyTreeCodeGen(_PyTreeInfo(*info))
        env = {}
        self.fx_env.append(env)
        try:
            for c in v["nodes"]:
                e = self.child(n, c)
                if not (isinstance(e, tuple) and len(e) == 6 and e[0] in FX_OPS
                        and isinstance(e[1], str) and e[1].isidentifier() and e[1] not in env
                        and isinstance(e[3], tuple) and isinstance(e[4], dict)
                        and all(isinstance(k, str) for k in e[4])
                        and (isinstance(e[5], type) or e[5] is None)):
                    raise self.fail(n, "an fx node that is not (op, name, target, args, "
                                       "kwargs, type)")
                op, name, target, args, kwargs, typ = e
                if not all(k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
                    raise self.fail(n, "fx node %s: a keyword argument that is not a name" % name)
                self._fx_plain(n, name, (args, kwargs), graph)
                # An annotation fx writes into the code: only torch's and
                # Python's own types; none changes what Dynamo traces.
                typ = typ if typ in (torch.Tensor, int, float, bool, str) else None
                if op == "call_function" and not callable(target):
                    raise self.fail(n, "fx node %s calls something not callable" % name)
                # An attribute path (get_attr, call_module: "layers.0.weight"),
                # a method's name, an argument's: never a dunder, which fx
                # would write as an attribute access into the code.
                if op != "call_function" and not (
                        isinstance(target, str) and re.fullmatch(
                            r"\w+" if op == "call_method" else r"\w+(\.\w+)*", target, re.ASCII)
                        and not any(p.startswith("__") for p in target.split("."))):
                    raise self.fail(n, "fx node %s: its target is not a name" % name)
                try:
                    env[name] = graph.create_node(op, target, args, kwargs, name=name,
                                                  type_expr=typ)
                except Exception as exc:
                    raise self.fail(n, "fx node %s: torch.fx refuses it: %s" % (
                        name, (str(exc).splitlines() or [""])[0][:200]))
        finally:
            self.fx_env.pop()
        try:
            graph.lint()
        except Exception as exc:
            raise self.fail(n, "an fx graph torch.fx refuses: %s" % (
                str(exc).splitlines() or [""])[0][:200])
        co = self.child(n, v["co_fields"])
        want = {"co_filename": str, "co_firstlineno": int, "co_name": str}
        if not isinstance(co, dict) or not all(k in want and type(x) is want[k]
                                               for k, x in co.items()):
            raise self.fail(n, "graph_module co_fields is not a file, line and name")
        graph._co_fields = co
        state = self.child(n, v["dict"])
        if not isinstance(state, dict) or not all(
                type(k) is str and k not in FX_GRAPH_ATTRS for k in state):
            raise self.fail(n, "graph_module attributes are not a dict of names")
        # torch's own constructor on an empty graph, then the recorded
        # attributes, then the graph: its setter generates the code.
        gm = torch.fx.GraphModule.__new__(base)
        torch.fx.GraphModule.__init__(gm, torch.nn.Module(), torch.fx.Graph(), v["class_name"])
        self.built[n] = gm
        gm.__dict__.update(state)
        try:
            gm.graph = graph
            if hasattr(gm, "real_recompile"):
                gm.real_recompile()
        except Exception as exc:
            raise NotReplayable("torch.fx generates no code for the recorded graph here: %s" % (
                (str(exc).splitlines() or [""])[0][:200]))
        key = v.get("forward_file")
        one = _FX_CLASSES.get(key) if key else None
        if one is not None and one[1] == gm.code and one[0].__bases__ == type(gm).__bases__:
            gm.__class__ = one[0]
        elif key:
            _FX_CLASSES[key] = (type(gm), gm.code)
        return gm

    def _fx_plain(self, n, name, a, graph, depth=0):
        """torch.fx writes a node's arguments into the code it generates,
        each by its repr(): only values whose repr is their own plain text
        (numbers, strings, dtypes, devices, containers of them), operators,
        and this graph's nodes -- never an object whose repr a trace's
        source could write, or run."""
        import torch._ops as ops

        t = type(a)
        if depth > 50:
            raise self.fail(n, "fx node %s: arguments nested deeper than 50" % name)
        if t in (tuple, list):
            for x in a:
                self._fx_plain(n, name, x, graph, depth + 1)
        elif t is dict:
            for k, x in a.items():
                self._fx_plain(n, name, k, graph, depth + 1)
                self._fx_plain(n, name, x, graph, depth + 1)
        elif t is slice:
            self._fx_plain(n, name, (a.start, a.stop, a.step), graph, depth + 1)
        elif t is torch.fx.Node:
            if a.graph is not graph:
                raise self.fail(n, "fx node %s refers to another graph's node %s" % (
                    name, a.name))
        elif not (a is None or a is Ellipsis or t in _FX_PLAIN or t in (
                torch.Tensor, torch.dtype, torch.device, torch.layout, torch.memory_format)
                  or isinstance(a, (ops.OpOverload, ops.OpOverloadPacket,
                                    ops.HigherOrderOperator))):
            raise NotReplayable("fx node %s has an argument of type %s, which torch.fx "
                                "would write into its code as its repr()" % (name, _name_of(t)))

    def iterator(self, n, typ, v, kid):
        """A builtin iterator made again by the builtin its __reduce__ named,
        over what it iterated (form checked with the tree).  Only lists,
        tuples, ranges, strings and such iterators are iterated: iter() of
        anything else would run the program's __iter__."""
        args = kid(v["args"])
        if type(args) is not tuple:
            raise self.fail(n, "an iterator's arguments are not a tuple")
        make = v["make"]
        if make in DICT_ITERATORS:
            # iter() of the dict's own view, as many items on as recorded
            given = kid(v["state"]) if v.get("state") is not None else 0
            if len(args) != 1 or type(args[0]) is not dict or type(given) is not int or not (
                    0 <= given <= len(args[0])):
                raise self.fail(n, "a dict iterator without its dict and how far it went")
            out = iter(getattr(dict, make[5:])(args[0]))
            for _ in range(given):
                next(out)
            return out
        seqs = (list, tuple, range, str)
        its = [a for i, a in enumerate(args) if not (
            make in ("filter", "map") and i == 0 or make == "enumerate" and i == 1)]
        if not all(type(a) in seqs + tuple(ITERATOR_TYPES) for a in its) or (
                make in ("iter", "reversed") and (len(its) != 1 or type(its[0]) not in seqs)) or (
                make in ("filter", "map") and not args or make == "enumerate" and (
                    len(args) != 2 or type(args[1]) is not int)):
            raise self.fail(n, "an iterator over something other than a list, tuple, range, "
                               "string or builtin iterator")
        if make in ("filter", "map") and not (args[0] is None and make == "filter"
                                              or callable(args[0])):
            raise self.fail(n, "a %s of something not callable" % make)
        out = getattr(builtins, make)(*args)
        if v.get("state") is not None:
            state = kid(v["state"])
            if type(state) not in (int, bool) or not -1 << 62 < state < 1 << 62 or not hasattr(
                    out, "__setstate__"):
                raise self.fail(n, "an iterator's state is not an index")
            out.__setstate__(state)
        if type(out).__name__ != typ.rpartition(".")[2]:
            raise NotReplayable("%s is made here as %s" % (typ, _name_of(type(out))))
        return out

    def cls(self, n, v):
        if not isinstance(v, dict):
            raise self.fail(n, "needs a class")
        return _ref(v.get("class"), self.modules)

    def numpy(self, n, kind, v, blob):
        """A numpy scalar or array from its dtype, shape and bytes."""
        np = _import("numpy")
        try:
            dt = np.dtype(v.get("dtype")) if isinstance(v.get("dtype"), str) else None
        except TypeError:
            dt = None
        if dt is None or dt.kind not in "biufc" or dt.hasobject:
            raise self.fail(n, "a numpy value of a dtype that is not a number")
        nbytes = v.get("nbytes")
        shape = _ints(v.get("shape", []), "shape", 0, 1 << 31)
        count = math.prod(shape) if kind == "ndarray" else 1
        if type(nbytes) is not int or nbytes != count * dt.itemsize or nbytes > _MAX_TOTAL:
            raise self.fail(n, "a numpy value whose size does not fit its dtype")
        self.total += nbytes
        if self.total > _MAX_TOTAL:
            raise self.fail(n, "the values of this frame need more than %d bytes" % _MAX_TOTAL)
        arr = np.frombuffer(bytearray(self.data(n, blob, nbytes)), dtype=dt)
        if kind != "ndarray":
            return arr[0]
        arr = arr.reshape(shape)
        strides = v.get("strides")
        if strides is not None:
            # The recorded strides (in elements) over a buffer of their
            # extent (a broadcast's zeros), filled with the elements.
            strides = _ints(strides, "strides", 0, 1 << 40)
            if len(strides) != len(shape):
                raise self.fail(n, "a numpy array with strides not of its shape")
            extent = 0 if 0 in shape else 1 + sum((d - 1) * s for d, s in zip(shape, strides))
            self.total += extent * dt.itemsize
            if self.total > _MAX_TOTAL:
                raise self.fail(n, "the values of this frame need more than %d bytes"
                                % _MAX_TOTAL)
            out = np.ndarray(shape, dtype=dt, buffer=np.zeros(extent, dtype=dt),
                             strides=[s * dt.itemsize for s in strides])
            out[...] = arr
            arr = out
        if v.get("readonly") is True:
            arr.flags.writeable = False
        return arr

    def data(self, n, blob, nbytes):
        if blob is None:
            raise self.fail(n, "its data is missing")
        try:
            data = _blob(blob, max(nbytes, 1))
        except OSError as exc:
            raise self.fail(n, "its data: %s" % exc)
        if len(data) != nbytes:
            raise self.fail(n, "its data holds %d bytes, not %d" % (len(data), nbytes))
        return data

    def device(self, n, v):
        if not isinstance(v, str) or len(v) > 64:
            raise self.fail(n, "bad device")
        try:
            dev = torch.device(v)
        except Exception:
            raise self.fail(n, "bad device %r" % v)
        if dev.type not in ("cpu", "meta"):
            mod = getattr(torch, dev.type, None)
            ok = getattr(mod, "is_available", None)
            if ok is None or not ok():
                raise NotReplayable("a tensor on %s, which this machine does not have" % v)
        return dev

    def function(self, n, v, blob):
        if not isinstance(v, dict):
            raise self.fail(n, "function without a reference")
        if "name" not in v:
            fn = _ref(v, self.modules)
            mod = self.modules.get(v["module"]) if self.modules else None
            if type(fn) is types.FunctionType and mod is not None and (
                    fn.__globals__ is vars(mod)):
                # A function of the trace's sources, with the defaults it
                # had at this compile (not those its def statement made).
                self.built[n] = fn
                if "defaults" in v:
                    d = self.child(n, v["defaults"])
                    if d is not None and not isinstance(d, tuple):
                        raise self.fail(n, "defaults are not a tuple")
                    fn.__defaults__ = d
                if "kwdefaults" in v:
                    kd = self.child(n, v["kwdefaults"])
                    if kd is not None and not isinstance(kd, dict):
                        raise self.fail(n, "keyword defaults are not a dict")
                    fn.__kwdefaults__ = kd
                if v.get("allow_in_graph") is True and (
                        id(fn) not in torch._dynamo.trace_rules._allowed_callable_ids):
                    torch._dynamo.allow_in_graph(fn)
            return fn
        # A lambda or nested function: its code from the sources, else the
        # marshalled copy (only under --trust).
        where = function_where(v)
        if not (isinstance(where[0], str) and isinstance(where[1], str) and
                type(where[2]) is int and isinstance(v.get("name"), str)):
            raise self.fail(n, "function without a file, qualname, first line and name")
        code = self.sources.code((where[0], code_name(where[1]), where[2]), v.get("place"))
        if code is None:
            # A library's function behind its decorators (functools.wraps
            # gave the wrapper its name): from the library itself.
            for m in (v.get("module"), v.get("globals_module")):
                code = code or _library_code(m, where[1], where[0], None, where[2])
            code = code or _library_file_code(v.get("globals_module"), where[1], where[0],
                                              where[2], v.get("place"))
        # Its globals: those of the module its code ran in (recorded apart
        # from __module__, which functools.wraps overwrites), as before.
        gname = v.get("globals_module") if isinstance(v.get("globals_module"), str) else None
        mod = None
        for name in (gname, v.get("module")):
            if isinstance(name, str) and mod is None:
                mod = self.modules.get(name) or sys.modules.get(name)
        g = mod.__dict__ if mod is not None else {"__builtins__": __builtins__}
        if code is None and "torch_dynamo_resume_in_" in where[1]:
            # A resume function handed to an outer one (a graph break
            # inside a call, nested_graph_breaks): the one Dynamo made
            # here for the earlier compile, installed in the globals of
            # the frame it compiled, as for a resume frame.
            for ns in (self.frame_ns, g if mod is not None else None):
                if code is None and ns is not None:
                    code = _resume_code(ns, code_name(where[1]), where[2], v.get("code_digest"))
        if code is None:
            code = _unmarshal(blob, "function %s" % v.get("qualname"))
        closure = v.get("closure") or []
        if not isinstance(closure, list) or len(closure) != len(code.co_freevars):
            raise self.fail(n, "closure does not match the code's free variables")
        cells = tuple(self.child(n, c) for c in closure)
        if not all(isinstance(c, types.CellType) for c in cells):
            raise self.fail(n, "closure holds something other than cells")
        fn = types.FunctionType(code, g, str(v["name"]), None, cells or None)
        self.built[n] = fn
        d = self.child(n, v.get("defaults"))
        if d is not None and not isinstance(d, tuple):
            raise self.fail(n, "defaults are not a tuple")
        fn.__defaults__ = d
        kd = self.child(n, v.get("kwdefaults"))
        if kd is not None and not isinstance(kd, dict):
            raise self.fail(n, "keyword defaults are not a dict")
        fn.__kwdefaults__ = kd
        fn.__qualname__ = str(v.get("qualname"))
        if isinstance(v.get("module"), str):
            # (functools.wraps gave a wrapper the wrapped one's; Dynamo
            # names it so in its messages)
            fn.__module__ = v["module"]
        attrs = self.child(n, v["dict"]) if "dict" in v else None
        if attrs is not None:
            # Its own attributes (fn.pred = True), which Dynamo guards.
            if not function_attrs_ok(attrs):
                raise self.fail(n, "a function's attributes are not a dict of plain names")
            fn.__dict__.update(attrs)
        marks = v.get("marks")
        if marks is not None:
            # The wrapper nonstrict_trace or leaf_function made: in the
            # registries they put it in, by id, as they do (allow_in_graph's
            # too), and out of them when it goes (form checked with the tree).
            rules = torch._dynamo.trace_rules
            names = ["_allowed_callable_ids"] + [DYNAMO_MARKS[m] for m in marks]
            for ids in [getattr(rules, name, None) for name in names]:
                if ids is not None:
                    ids.add(id(fn))
                    weakref.finalize(fn, ids.remove, id(fn))
        elif v.get("allow_in_graph") is True:
            torch._dynamo.allow_in_graph(fn)
        return fn

    def tensor(self, n, v, blob):
        # A plain tensor, made outside the torch.func transforms the compile
        # runs inside (_Transforms), whose layers would wrap it: a
        # wrapped_tensor wraps it at its level.
        with _no_functorch():
            return self._tensor(n, v, blob)

    def adopt(self, old, c, depth=0):
        """Before an object an earlier capture made is given this capture's
        state: the tensors this capture names for the first time (their
        ident not made yet) that sit where the object holds a tensor now,
        path for path (dict keys, list places), are those tensors -- what
        the earlier compile made in it (Dynamo's tracing of an optimizer's
        first step makes its state's step tensors, which the next capture
        names), which _tensor then reuses."""
        row = self.rows.get(c) if type(c) is int else None
        if row is None or depth > 8:
            return
        kind, _, v, _ = row
        if kind == "tensor" and isinstance(v, dict) and type(v.get("ident")) is int:
            if isinstance(old, torch.Tensor) and _objects_made.get(
                    v["ident"], lambda: None)() is None:
                _objects_made[v["ident"]] = weakref.ref(old)
        elif kind == "defaultdict" and isinstance(v, dict):
            self.adopt(old, v.get("entries"), depth + 1)
        elif kind in ("list", "tuple") and isinstance(v, list) and isinstance(old, (list, tuple)):
            for x, c2 in zip(old, v):
                self.adopt(x, c2, depth + 1)
        elif kind == "dict" and isinstance(v, list) and isinstance(old, dict):
            for pair in v:
                if not (isinstance(pair, list) and len(pair) == 2):
                    continue
                krow = self.rows.get(pair[0]) if type(pair[0]) is int else None
                if krow is None:
                    continue
                if krow[0] in ("str", "int", "bool"):
                    key = krow[2]
                elif krow[0] == "tensor" and isinstance(krow[2], dict):
                    key = _objects_made.get(krow[2].get("ident"), lambda: None)()
                else:
                    continue
                try:
                    if key is not None and key in old:
                        self.adopt(old[key], pair[1], depth + 1)
                except TypeError:
                    continue

    def same_tensor(self, v, shape, stride, offset, dt, dev, rg, inference):
        """The tensor an earlier capture made for the same recorded tensor
        (its ident), alive, a leaf of the same class, shape, strides, dtype,
        device and grad, not a view and not an inference tensor: that one,
        whose data this capture's replaces (an optimizer's step tensors,
        which Dynamo guards by identity); else None."""
        ident = v.get("ident")
        t = _objects_made.get(ident, lambda: None)() if type(ident) is int else None
        if not isinstance(t, torch.Tensor) or v.get("view_of") is not None or inference or (
                v.get("leaf") is not True or not t.is_leaf or t._is_view()):
            return None
        want = torch.nn.Parameter if v.get("param") is True else torch.Tensor
        if type(t) is not want or v.get("subclass") is not None or t.is_inference() or (
                list(t.shape) != list(shape) or list(t.stride()) != list(stride)
                or t.storage_offset() != offset or t.dtype != dt or t.device != dev
                or t.requires_grad != rg):
            return None
        return t

    def _tensor(self, n, v, blob):
        if not isinstance(v, dict):
            raise self.fail(n, "tensor without metadata")
        shape, stride, offset, dt, numel, elsize, extent = _tensor_bytes(self, n, v)
        dev = self.device(n, v.get("device"))
        nbytes = extent * elsize
        self.total += nbytes
        if self.total > _MAX_TOTAL:
            raise self.fail(n, "the tensors of this frame need more than %d bytes" % _MAX_TOTAL)
        rg = v.get("requires_grad") is True
        if rg and not (dt.is_floating_point or dt.is_complex):
            raise self.fail(n, "requires_grad on an integer tensor")
        inference = v.get("inference") is True
        if inference and (rg or v.get("param") is True or v.get("subclass") is not None):
            raise self.fail(n, "an inference tensor that requires grad, a parameter or a subclass")
        base = v.get("view_of")
        same = self.same_tensor(v, shape, stride, offset, dt, dev, rg, inference)
        if same is not None:
            t = same  # (its data, grad, marks and attributes this capture's, below)
            t.grad = None
            for name in [k for k in vars(t) if isinstance(k, str) and k.startswith("_dynamo_")]:
                delattr(t, name)
            base = None
        # (the base made first, outside the no_grad below: a base that is
        # not a leaf requires grad only when made with grad mode on)
        b = self.child(n, base) if base is not None else None
        with torch.no_grad():
            if same is not None:
                pass
            elif base is not None:
                if not isinstance(b, torch.Tensor) or b.dtype != dt:
                    raise self.fail(n, "a view of something other than a tensor of its dtype")
                if b.untyped_storage().nbytes() < nbytes:
                    raise self.fail(n, "a view beyond its base's storage")
                if rg and not b.requires_grad and v.get("leaf") is not True:
                    # (a leaf view that requires grad, its requires_grad set
                    # on it, is below)
                    raise self.fail(n, "a view that requires grad of a base that does not")
                t = b.as_strided(shape, stride, offset)
            else:
                # An inference tensor is made under inference_mode (and its
                # views are inference tensors too).
                with torch.inference_mode() if inference else contextlib.nullcontext():
                    storage = torch.zeros(extent, dtype=dt, device=dev).untyped_storage()
                    t = torch.empty(0, dtype=dt, device=dev)
                    t.set_(storage, offset, shape, stride)
            if "data" in v:
                want = numel * elsize
                if v["data"] != want:
                    raise self.fail(n, "data of %r bytes for %d elements" % (v["data"], numel))
                if want:
                    raw = self.data(n, blob, want)
                    src = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
                    with torch.inference_mode() if inference else contextlib.nullcontext():
                        _fill(t, src.view(dt).reshape(shape))
        if same is not None:
            pass
        elif base is not None and rg:
            # A view that requires grad was made with grad mode on (a
            # permute of a tensor that requires grad): made under no_grad it
            # would be a no-grad view that in-place ops refuse.  (Grad mode
            # on here whatever the caller's: a value built inside another's
            # construction.)
            with torch.enable_grad():
                t = b.as_strided(shape, stride, offset)
                if not b.requires_grad:
                    # A view of a base that does not require grad, made a
                    # leaf that does (h = x[:, None]; h.requires_grad = True,
                    # Wav2Vec2's feature encoder).
                    t.requires_grad_(True)
        elif base is None:
            if rg and v.get("leaf") is False:
                with torch.enable_grad():
                    t = t.requires_grad_(True).clone()
            elif rg:
                t.requires_grad_(True)
        if same is None and v.get("param") is True:
            t = torch.nn.Parameter(t, requires_grad=rg)
        if same is None and v.get("subclass") is not None:
            t = self.tensor_subclass(n, v, t, rg)
        if same is None and type(v.get("ident")) is int:
            _objects_made[v["ident"]] = weakref.ref(t)
        self.built[n] = t
        self.tensor_marks(n, t, v.get("marks"))
        g = v.get("grad")
        if g is not None:
            grad = self.child(n, g)
            if isinstance(grad, torch.Tensor) and grad.shape == t.shape:
                t.grad = grad
        if v.get("attrs") is not None:
            attrs = self.child(n, v["attrs"])
            if not isinstance(attrs, dict) or not all(type(k) is str for k in attrs):
                raise self.fail(n, "tensor attributes are not a dict of names")
            # Into the instance's __dict__: never a setter of Tensor's.
            t.__dict__.update(attrs)
        return t

    @staticmethod
    def subclass_view(cls, base, inner, ctx, size, stride, offset, rg, leaf):
        """A view of a traceable wrapper subclass, made by the view ops
        torch's own make it by: a jagged nested tensor's by
        value_kinds.jagged_view_steps (the rule repro writes too); one of a
        tensor of its own class, by as_strided of that base; made as its
        grad says (value_kinds.view_by_steps)."""
        nt = sys.modules.get("torch.nested._internal.nested_tensor")
        values = inner.get("_values")
        steps = None
        if nt is not None and cls is getattr(nt, "NestedTensor", None) and isinstance(
                values, torch.Tensor) and isinstance(ctx, dict) and type(
                    ctx.get("ragged_idx")) is int:
            steps = jagged_view_steps(
                base, values, inner["_offsets"], inner.get("_lengths"), ctx["ragged_idx"],
                inner.get("_min_seqlen_tensor"), inner.get("_max_seqlen_tensor"), size)
        elif isinstance(base, cls) and None not in size and None not in stride and (
                type(offset) is int):
            steps = [lambda t: t.as_strided(size, stride, offset)]
        if not steps:
            raise NotReplayable("a view of a %s whose base is a %s: the replay makes views of "
                                "jagged nested tensors and of a tensor of their own class" % (
                                    cls.__qualname__, type(base).__qualname__))
        return view_by_steps(base, steps, rg, leaf)

    def tensor_marks(self, n, t, marks):
        """Dynamo's marks (a tensor node's marks) set on t."""
        if marks is not None and not isinstance(marks, dict):
            raise self.fail(n, "tensor marks that are not an object")
        for name, val in (marks or {}).items():
            if name == "_dynamo_dynamic_range":
                from torch._dynamo.decorators import _DimRange

                if not isinstance(val, list) or not all(
                        isinstance(r, list) and len(r) == 3 and type(r[0]) is int and all(
                            x is None or type(x) is int for x in r[1:]) for r in val):
                    raise self.fail(n, "%s must be a list of [dim, min, max]" % name)
                t._dynamo_dynamic_range = {_DimRange(*r) for r in val}
            elif name.startswith("_dynamo_") and name.endswith("_indices"):
                setattr(t, name, set(_ints(val, name, 0, 64)))
            elif name in ("_has_dynamo_dim_marking", "_dynamo_marked_static"):
                if val is not True:
                    raise self.fail(n, "%s must be true" % name)
                setattr(t, name, True)
            elif name == "_dynamo_static_input_type":
                if val not in ("guarded", "unguarded"):
                    raise self.fail(n, "%s must be guarded or unguarded" % name)
                t._dynamo_static_input_type = val
            elif name == "_dynamo_hint_overrides":
                if not isinstance(val, list) or not all(
                        isinstance(p, list) and len(p) == 2 for p in val):
                    raise self.fail(n, "%s must be a list of [dim, hint]" % name)
                t._dynamo_hint_overrides = {d: h for d, h in (
                    _ints(p, name, 0, 1 << 62) for p in val)}

    def subclass_tensor(self, n, v):
        """A tensor of a traceable wrapper subclass, made by its class's
        __tensor_unflatten__ from its inner tensors and context (as
        Dynamo's fakification makes one), with no grad mode: then made to
        require grad (a leaf), or the clone of one that does (not a leaf),
        and marked as recorded.  A view is made from its base
        (subclass_view)."""
        cls = _ref(v["class"], self.modules)
        import torch.utils._python_dispatch as pd

        test = getattr(pd, "is_traceable_wrapper_subclass_type", None)
        if not (isinstance(cls, type) and test is not None and test(cls)):
            raise self.fail(n, "a subclass_tensor of a class that is not a traceable tensor "
                               "subclass")
        inner = {k: self.child(n, c) for k, c in v["inner_tensors"].items()}  # checked
        if not all(isinstance(x, torch.Tensor) for x in inner.values()):
            raise self.fail(n, "a subclass_tensor whose inner values are not all tensors")
        ctx = self.child(n, v["ctx"]) if v.get("ctx") is not None else None
        size, stride = v["size"], v["stride"]  # (null: a symbolic dim, a jagged one)
        base = self.child(n, v["view_of"]) if v.get("view_of") is not None else None
        inference = v.get("inference") is True
        if inference and v["requires_grad"]:
            raise self.fail(n, "an inference tensor that requires grad")
        try:
            if base is not None:
                # (with grad mode on: a view of a base that requires grad
                # requires grad, as recorded)
                with torch.inference_mode() if inference else contextlib.nullcontext():
                    t = self.subclass_view(cls, base, inner, ctx, size, stride, v.get("offset"),
                                           v["requires_grad"], v["leaf"])
            else:
                with torch.inference_mode() if inference else torch.no_grad():
                    t = cls.__tensor_unflatten__(
                        inner, ctx, torch.Size(size) if None not in size else tuple(size),
                        tuple(stride))
        except NotReplayable:
            raise
        except Exception as exc:
            raise NotReplayable("%s.__tensor_unflatten__ refused its recorded inner tensors: "
                                "%s: %s" % (cls.__qualname__, type(exc).__name__,
                                            (str(exc).splitlines() or [""])[0][:200]))
        if type(t) is not cls and isinstance(t, torch.Tensor) and issubclass(cls, type(t)):
            # (a subclass that inherits its base's __tensor_unflatten__,
            # which makes the base: the recorded class all the same)
            try:
                t.__class__ = cls
            except TypeError:
                pass
        if type(t) is not cls:
            raise NotReplayable("%s.__tensor_unflatten__ made a %s" % (cls.__qualname__,
                                                                      type(t).__qualname__))
        if len(t.shape) != len(size) or any(
                s is not None and s != d for s, d in zip(size, t.shape)):
            raise NotReplayable("%s.__tensor_unflatten__ made a tensor of shape %s, not %s" % (
                cls.__qualname__, tuple(t.shape), size))
        if base is not None:
            if t.requires_grad != v["requires_grad"]:
                raise NotReplayable("a view of a %s whose requires_grad is not its base's" % (
                    cls.__qualname__))
            for k, x in inner.items():
                # (the view's own inner tensors, which its view ops made:
                # Dynamo's marks on the recorded ones set on them too)
                y = getattr(t, k, None)
                if isinstance(y, torch.Tensor) and y is not x:
                    for name, mark in vars(x).items():
                        if name.startswith(("_dynamo_", "_has_dynamo_")):
                            setattr(y, name, copy.copy(mark))
        elif v["requires_grad"] and not t.requires_grad:
            if not (t.dtype.is_floating_point or t.dtype.is_complex):
                raise self.fail(n, "requires_grad on an integer tensor")
            t.requires_grad_(True)
        if v["requires_grad"] and not v["leaf"] and t.is_leaf:
            with torch.enable_grad():
                t = t.clone()
        self.built[n] = t
        self.tensor_marks(n, t, v.get("marks"))
        return t


    def tensor_subclass(self, n, v, t, rg):
        """t as an instance of the program's subclass of torch.Tensor
        (capture's tensor_subclass): a leaf by torch.Tensor._make_subclass,
        one that is not by as_subclass, neither calling the class's code.
        (A subclass of Parameter is a Parameter so, as Parameter's own
        __new__ makes one.)"""
        cls = _ref(v["subclass"], self.modules)
        if not (isinstance(cls, type) and issubclass(cls, torch.Tensor)) or (
                cls is torch.nn.Parameter) or v.get("param") is True or cls is torch.Tensor or any(
                "__torch_dispatch__" in vars(b) for b in cls.__mro__[:cls.__mro__.index(
                    torch.Tensor)]):
            raise self.fail(n, "a tensor of a class that is not a plain subclass of torch.Tensor")
        with torch._C.DisableTorchFunctionSubclass():
            if t.is_leaf:
                return torch.Tensor._make_subclass(cls, t.detach(), rg)
            with torch.enable_grad():
                return t.as_subclass(cls)

    def wrapped_tensor(self, n, v):
        """A tensor of a torch.func transform, wrapped again by _functorch's
        own calls around the tensor it wraps, at the level of the recorded
        transform that _Transforms entered for this capture."""
        F, level, how = torch._C._functorch, v["level"], v["transform"]
        entered = _Transforms.entered
        if level > len(entered) or entered[level - 1] != how:
            raise NotReplayable("a tensor of torch.func's %s at level %d, which the compile "
                                "did not run inside" % (how.lower(), level))
        inner = self.child(n, v["inner"])
        if not isinstance(inner, torch.Tensor):
            raise self.fail(n, "a torch.func wrapper of something not a tensor")
        inner_level = F.maybe_get_level(inner)
        if inner_level is not None and inner_level >= level:
            raise self.fail(n, "a torch.func wrapper at level %d around one at level %d" % (
                level, inner_level))
        try:
            if how == "Vmap":
                bdim = v["bdim"]
                if bdim >= inner.dim() or inner.shape[bdim] != _Transforms.batch_size(level):
                    raise self.fail(n, "a batch dim that is not one of the vmap's size")
                t = F._add_batch_dim(inner, bdim, level)
            elif how == "Grad":
                t = F._wrap_for_grad(inner, level)
                if v.get("requires_grad"):
                    if not (t.dtype.is_floating_point or t.dtype.is_complex):
                        raise self.fail(n, "requires_grad on an integer tensor")
                    # (as torch.func.grad makes its inputs differentiable)
                    allowed = F.get_inplace_requires_grad_allowed()
                    F.set_inplace_requires_grad_allowed(True)
                    try:
                        t.requires_grad_(True)
                    finally:
                        F.set_inplace_requires_grad_allowed(allowed)
            else:
                t = F._wrap_functional_tensor(inner, level)
        except RuntimeError as exc:
            raise NotReplayable("a tensor of torch.func's %s: %s" % (
                how.lower(), str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
        self.built[n] = t
        return t


class _Transforms:
    """The torch.func transforms a compile ran inside (a capture's
    functorch_stack, outermost first), entered again around the building of
    its values and its compile, on the thread that runs both, and left
    after: Dynamo guards on the stack and traces the tensors wrapped at its
    levels.  Levels are the stack's depth, so a stack entered from none
    gets the recorded ones."""

    entered = ()  # the types entered now, by level - 1
    _sizes = {}   # level -> vmap batch size

    def __init__(self, stack):
        self.stack = stack if isinstance(stack, list) else []
        self.done = []

    @classmethod
    def batch_size(cls, level):
        return cls._sizes.get(level)

    def enter(self):
        F = torch._C._functorch
        if not self.stack:
            return
        if F.get_dynamic_layer_stack_depth() != 0:
            raise NotReplayable("a torch.func transform is already active in the replay")
        if len(self.stack) > MAX_FUNCTORCH_LEVELS:
            raise NotReplayable("more than %d torch.func transforms" % MAX_FUNCTORCH_LEVELS)
        sizes = {}
        grad = torch.is_grad_enabled()
        try:
            for i, d in enumerate(self.stack):
                how = d.get("type") if isinstance(d, dict) else None
                if how not in FUNCTORCH_WRAPPERS or d.get("level") != i + 1:
                    raise NotReplayable("compiled inside torch.func's %s: the replay enters %s"
                                        " only" % (how, ", ".join(
                                            t.lower() for t in FUNCTORCH_WRAPPERS)))
                if how == "Vmap":
                    size, rnd = d.get("batch_size"), d.get("randomness")
                    if type(size) is not int or not 0 <= size < 1 << 31 or rnd not in (
                            "error", "same", "different"):
                        raise NotReplayable("a vmap without its batch size and randomness")
                    level = F._vmap_increment_nesting(size, rnd)
                    sizes[level] = size
                elif how == "Grad":
                    if type(d.get("prev_grad_mode")) is not bool:
                        raise NotReplayable("a grad transform without its grad mode")
                    # The grad mode the transform restores: the one it was
                    # entered in.
                    torch.set_grad_enabled(d["prev_grad_mode"])
                    level = F._grad_increment_nesting()
                else:
                    if type(d.get("add_back_views")) is not bool:
                        raise NotReplayable("a functionalize without its view setting")
                    level = F._func_increment_nesting(d["add_back_views"])
                self.done.append(how)
                if level != i + 1:
                    raise NotReplayable("torch.func's %s entered at level %d, not %d" % (
                        how.lower(), level, i + 1))
        finally:
            torch.set_grad_enabled(grad)
            _Transforms.entered = tuple(self.done)
            _Transforms._sizes = sizes

    def close(self):
        F = torch._C._functorch
        leave = {"Vmap": F._vmap_decrement_nesting, "Grad": F._grad_decrement_nesting,
                 "Functionalize": F._func_decrement_nesting}
        while self.done:
            try:
                leave[self.done.pop()]()
            except RuntimeError:
                pass  # the compile left it already
        _Transforms.entered = ()
        _Transforms._sizes = {}


def _unmarshal(blob, what):
    if blob is None:
        raise NotReplayable("%s: no code stored" % what)
    if not _TRUST:
        raise NotReplayable("%s: its code is stored compiled in the trace; --trust uses it" % what)
    try:
        code = marshal.loads(_blob(blob, MAX_CODE))
    except Exception as exc:
        raise NotReplayable("%s: its stored code does not load (%s)" % (what, exc))
    if not isinstance(code, types.CodeType):
        raise NotReplayable("%s: its stored code is not a code object" % what)
    # One code object per recorded one: the compiles of a frame stored twice
    # (a recompile of a decorator's wrapper, whose marshalled bytes differ
    # with reference counts) share Dynamo's cache entries.
    key = (code.co_filename, _qualname(code), code.co_firstlineno, _code_digest(code))
    return _unmarshalled.setdefault(key, code)


_unmarshalled = {}  # (file, qualname, first line, bytecode digest) -> code object


# ---- running a compile ------------------------------------------------------------

_BACKENDS = None  # the replay's backends (_Backends), for compiled wrappers among the values
_kept = []  # compiled code replaced by stubs, kept alive (Dynamo's cleanups key on it)


def _stub(code):
    """code with a body that returns None at once, same locals layout."""
    import dis

    consts = list(code.co_consts)
    if None not in consts:
        consts.append(None)
    i = next(k for k, c in enumerate(consts) if c is None)
    op = dis.opmap
    body = bytes([op["LOAD_CONST"], i, op["RETURN_VALUE"], 0])
    if "RESUME" not in op:  # 3.10: no RESUME, no exception table
        return code.replace(co_code=body, co_consts=tuple(consts), co_linetable=b"")
    return code.replace(co_code=bytes([op["RESUME"], 0]) + body, co_consts=tuple(consts),
                        co_linetable=b"", co_exceptiontable=b"")


class _NotRun(BaseException):
    """Raised out of Dynamo's frame callback, past its own handlers, where a
    replayed frame was not compiled (an error, a skip): Dynamo would run the
    frame itself on the rebuilt inputs (its eager fallback), and that is the
    user's code, not tracing -- and the frames it calls would compile again.
    It carries the callback's result, which the recorder records as the
    callback's outcome (recorder/dynamo.py) whichever of the two wraps the
    callback outside the other."""

    def __init__(self, result):
        super().__init__()
        self.dynrec_result = result


_ids_made = {}  # the int of an id node -> the value the replay made for it
_objects_made = {}  # a plain object's recorded number -> weakref to the one made for it
_top = threading.local()  # .code: the code of the frame this thread replays


def _install_stub():
    import torch._dynamo.convert_frame as cf
    import torch._dynamo.utils as du

    orig = cf._compile
    orig_call = cf.CatchErrorsWrapper.__call__

    def __call__(self, frame, *args, **kwargs):
        result = orig_call(self, frame, *args, **kwargs)
        if getattr(result, "guarded_code", None) is None and frame.f_code is getattr(
                _top, "code", None):
            raise _NotRun(result)
        return result

    cf.CatchErrorsWrapper.__call__ = __call__

    def _compile(code, *args, **kwargs):
        if getattr(_top, "export", False) and code is getattr(_top, "code", None):
            # A frame recorded under torch._dynamo.export: traced for export
            # again (its guards and errors are export's), by whatever backend.
            if len(args) > 6:
                args = args[:6] + (True,) + args[7:]
            else:
                kwargs["export"] = True
        result = orig(code, *args, **kwargs)
        gc = getattr(result, "guarded_code", None)
        if gc is not None:
            _kept.append(gc.code)
            stub = _stub(gc.code)
            du.orig_code_map[stub] = code
            gc.code = stub
        return result

    cf._compile = _compile


class _Backends:
    def __init__(self, choice, sources, modules):
        self.choice = choice
        self.modules = modules
        self.ctx = {}
        self.notes = []
        self.regions = {}  # recorded isolate_recompiles region -> the replay's
        self.standins = {}  # recorded backend number -> the replay's eager stand-in
        self.raised = {}  # compile id -> how its recorded backend raised (_backends_raised)
        self.current = None  # the recorded compile id being replayed

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def instance(self, ref, name, arg=None, depth=0):
        """A backend object made as the recording's was: a new instance of
        its class, for a class of torch's testing backends (CompileCounter,
        EagerAndRecordGraphs, ...) or of the stored definitions, made without
        arguments, or with the name of a registered backend it wraps (arg:
        CompileCounterWithBackend("eager")); else eager, with a note.  (Not
        any torch class: some make files or threads when constructed.)"""
        mod = ref.get("module")
        if not isinstance(mod, str) or not (mod == "torch._dynamo.testing" or mod in self.modules):
            self.note("backend %s is of a class outside torch._dynamo.testing and the "
                              "stored sources; eager instead" % name)
            return "eager"
        try:
            cls = _ref(ref, self.modules)
            if not isinstance(cls, type):
                raise NotReplayable("%s is not a class" % ref.get("qualname"))
            if isinstance(arg, str):
                from torch._dynamo.backends.registry import list_backends

                if arg not in list_backends(exclude_tags=()) and arg != "inductor":
                    raise NotReplayable("it wraps %s, not one of torch's backends" % arg)
                return cls(arg)
            if isinstance(arg, dict) and depth < 3:
                # It wraps another backend: made the same way first.
                if isinstance(arg.get("instance_of"), dict):
                    inner = self.instance(arg["instance_of"], name, arg.get("backend_arg"),
                                          depth + 1)
                elif isinstance(arg.get("function"), dict):
                    inner = _ref(arg["function"], self.modules)
                else:
                    raise NotReplayable("the backend it wraps is not recorded")
                return cls(inner)
            return cls()
        except (NotReplayable, Refused, TypeError) as exc:
            self.note("backend %s cannot be rebuilt (%s); eager instead" % (name, exc))
            return "eager"

    def standin(self, name, instance, aot=False):
        """eager in place of a backend function the replay cannot make (one
        a test defines): for a recorded instance number, a function of its
        own per number, named as the recorded one, since Dynamo guards the
        backend's identity (a new function per test recompiles, BACKEND_MATCH
        naming it); "eager" itself without one (older traces).  aot: torch's
        aot_eager in place of an aot_autograd() backend, whose AOTAutograd
        tracing adds guards (a subclass's inner sizes) that eager would not."""
        if type(instance) is not int or not 0 <= instance < 1 << 31:
            return "aot_eager" if aot else "eager"
        fn = self.standins.get(instance)
        if fn is None:
            own = name if name.isidentifier() else "backend"

            def fn(gm, example_inputs, **kwargs):
                # Where the recorded backend raised at this compile, the
                # stand-in raises as it did: an exception of the recorded
                # builtin type (else RuntimeError) with its message.
                how = self.raised.get(self.current)
                if how is not None and how[0] == own:
                    t = getattr(builtins, how[1], None)
                    try:
                        exc = t(how[2]) if isinstance(t, type) and issubclass(
                            t, Exception) else None
                    except Exception:  # (one with more arguments: UnicodeDecodeError)
                        exc = None
                    raise exc if exc is not None else RuntimeError(how[2])
                if aot:
                    from torch._dynamo.backends.registry import lookup_backend

                    return lookup_backend("aot_eager")(gm, example_inputs)
                return gm.forward  # what the eager backend returns

            fn.__name__ = fn.__qualname__ = own
            self.standins[instance] = fn
        return fn

    def get(self, desc, fullgraph, recompile_limit=None, local=None):
        if not isinstance(desc, dict):
            desc = {}
        limit = recompile_limit if type(recompile_limit) is int and recompile_limit >= 0 else None
        key = json.dumps([desc, fullgraph, limit], sort_keys=True, default=str)
        c = self.ctx.get(key)
        if c is not None:
            return c
        dyn = desc.get("dynamic")
        dyn = dyn if dyn in (True, False) else None
        name = desc.get("name") if isinstance(desc.get("name"), str) else "eager"
        kw = {}
        if limit is not None:
            # torch.compile(..., recompile_limit=N), as recorded.
            if _compile_takes_recompile_limit():
                kw["recompile_limit"] = limit
            else:
                self.note("torch.compile(recompile_limit=%d) recorded: this torch has "
                                  "no such argument; config.recompile_limit instead" % limit)
        if self.choice == "eager":
            backend = "eager"
        elif self.choice not in (None, "recorded"):
            backend = self.choice
        elif name == "inductor":
            backend = "inductor"
            opts = desc.get("options")
            if isinstance(opts, dict) and opts:
                kw["options"] = {k: v for k, v in opts.items() if option_allowed(k, v)}
                for k in sorted(set(opts) - set(kw["options"]), key=str)[:20]:
                    self.note("inductor option %s from the trace is not one dynrec "
                                      "passes: skipped" % k)
        elif desc.get("instance_of") == {"module": "torch._dynamo.backends.common",
                                         "qualname": "AotAutograd"}:
            # aot_autograd(fw_compiler=..., ...) with compilers of the
            # program's: AOTAutograd all the same, with eager compilers.
            self.note("backend %s is aot_autograd() with compilers of its own; aot_eager "
                      "instead" % name)
            backend = self.standin(name if name.isidentifier() else "AotAutograd",
                                   desc.get("instance"), aot=True)
        elif local is not None and type(desc.get("instance")) is int:
            # A backend function a test defines, made from the stored
            # sources: the first made for its recorded number, since Dynamo
            # guards the backend's identity.
            backend = local
        elif isinstance(desc.get("instance_of"), dict):
            backend = self.instance(desc["instance_of"], name, desc.get("backend_arg"))
            if backend == "eager":
                # (one per recorded object, so its recompiles stay; named
                # as the recorder named it: its __name__, compiler_fn of
                # the AotAutograd aot_autograd() makes, else its class)
                cls = desc["instance_of"].get("qualname")
                backend = self.standin(name if name.isidentifier() else cls.rpartition(".")[2]
                                       if isinstance(cls, str) else "", desc.get("instance"))
        elif isinstance(desc.get("function"), dict):
            try:
                backend = _ref(desc["function"], self.modules)
            except (NotReplayable, Refused) as exc:
                self.note("backend %s cannot be rebuilt (%s); eager instead" % (name, exc))
                backend = "eager"
        else:
            from torch._dynamo.backends.registry import list_backends

            if name in list_backends(exclude_tags=()) or name == "inductor":
                backend = name
            else:
                self.note("backend %s is not one of torch's; eager instead" % name)
                backend = self.standin(name, desc.get("instance"))

        def made(fn, isolate=False, guard_filter_fn=None):
            more = dict(kw, isolate_recompiles=True) if isolate else dict(kw)
            if guard_filter_fn is not None:
                # torch.compile takes it out of the options
                more["options"] = dict(more.get("options") or {},
                                       guard_filter_fn=guard_filter_fn)
            return torch.compile(fn, backend=backend, fullgraph=bool(fullgraph),  # noqa: F821
                                 dynamic=dyn, **more)

        made.backend = backend  # (what a forced stance compiles with)
        self.ctx[key] = made
        return made


    def in_region(self, made, fn, region, guard_filter_fn=None):
        """made(fn), compiled in the replay's region for the recorded
        isolate_recompiles region (one torch.compile region, with its own
        cache entries, per recorded one), or in the shared cache when the
        capture names none; with the recorded guard_filter_fn."""
        if type(region) is not int or region < 0:
            return made(fn, guard_filter_fn=guard_filter_fn)
        import torch._dynamo.eval_frame as ef

        counter = getattr(ef, "_next_isolate_recompiles_id", None)
        if counter is None:
            note = ("compiles recorded in torch.compile(isolate_recompiles=True) regions: this "
                    "torch has none, they share one cache here")
            if note not in self.notes:
                self.notes.append(note)
            return made(fn, guard_filter_fn=guard_filter_fn)
        mine = self.regions.get(region)
        if mine is None:
            mine = self.regions[region] = next(counter)
        # torch.compile takes its region's number from this counter.
        ef._next_isolate_recompiles_id = itertools.repeat(mine)
        try:
            return made(fn, isolate=True, guard_filter_fn=guard_filter_fn)
        finally:
            ef._next_isolate_recompiles_id = counter


class _Threads:
    """Runs each replayed compile on a thread of the recorded name, one at a
    time, so per-thread state (Dynamo's config) follows the recording."""

    def __init__(self):
        self.workers = {}
        self.threads = []

    def run(self, name, fn):
        if not name or name == "MainThread":
            return fn()
        w = self.workers.get(name)
        if w is None:
            import queue

            q = queue.Queue()

            def loop():
                while True:
                    job = q.get()
                    if job is None:
                        return
                    job()

            t = threading.Thread(target=loop, name=name, daemon=True)
            t.start()
            w = self.workers[name] = q
            self.threads.append(t)
        done = threading.Event()
        box = []

        def job():
            try:
                box.append(fn())
            finally:
                done.set()

        w.put(job)
        done.wait()
        return box[0] if box else None

    def stop(self):
        """Ends the threads and waits for them: none may still run while
        the interpreter exits."""
        for q in self.workers.values():
            q.put(None)
        for t in self.threads:
            t.join()


def _args(code, f_locals):
    """Positional and keyword arguments that give code these locals at entry."""
    nargs = code.co_argcount
    names = code.co_varnames
    pos = [f_locals[n] for n in names[:code.co_posonlyargcount]]
    kw = {}
    for n in names[code.co_posonlyargcount:nargs]:
        pos.append(f_locals[n])
    k = nargs
    for n in names[k:k + code.co_kwonlyargcount]:
        kw[n] = f_locals[n]
    k += code.co_kwonlyargcount
    if code.co_flags & 0x04:  # CO_VARARGS
        star = f_locals[names[k]]
        if not isinstance(star, tuple):
            raise NotReplayable("*%s is not a tuple" % names[k])
        pos.extend(star)
        k += 1
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        extra = f_locals[names[k]]
        if not isinstance(extra, dict):
            raise NotReplayable("**%s is not a dict" % names[k])
        kw.update(extra)
    return pos, kw


def _dynamism(d):
    """A capture's recorded dynamism (what set_stance("eager_then_compile")
    found across the frame's first calls), checked: argument name ->
    {source: tuple of one bool per dimension}; None where none was
    recorded.  Anything else makes the frame not replayable."""
    if d is None:
        return None
    bad = NotReplayable("its recorded dynamism (set_stance eager_then_compile) is malformed")
    if not isinstance(d, dict):
        raise bad
    out, n = {}, 0
    for name, per in d.items():
        if not isinstance(per, dict):
            raise bad
        out[name] = {}
        for src, dims in per.items():
            n += 1
            if n > 256 or not isinstance(dims, list) or len(dims) > 64 or not all(
                    type(b) is bool for b in dims):
                raise bad
            out[name][src] = tuple(dims)
    return out


def _set_dynamism(code, dynamism):
    """Dynamo's code_context of the code holds the recorded dynamism for the
    compile, as set_stance's delayed compile left it; none where none was
    recorded."""
    from torch._dynamo.code_context import code_context
    if dynamism is not None:
        code_context.get_context(code)["dynamism"] = dynamism
    elif code_context.has_context(code):
        code_context.get_context(code).pop("dynamism", None)


@functools.lru_cache(maxsize=None)
def _compile_takes_recompile_limit():
    """Whether this torch's torch.compile takes recompile_limit (2.13 on)."""
    return "recompile_limit" in inspect.signature(torch.compile).parameters


_config_skipped = set()
_config_notes = []


def _set_config(name, value):
    module, attr = config_of(name)
    setattr(sys.modules[module], attr, value)


def _config(cap, applied, start):
    """The config as it was at this compile (names that differed from the
    start: Dynamo's and the ShapeEnv's, value_kinds.CONFIG_MODULES); names
    set for an earlier compile go back."""
    want = cap["data"].get("config")
    want = dict(want) if isinstance(want, dict) else {}
    limit = cap["data"].get("recompile_limit")
    if type(limit) is int and want.get("recompile_limit") == str(limit) and (
            _compile_takes_recompile_limit()):
        # torch.compile(..., recompile_limit=N) sets it around the compile.
        del want["recompile_limit"]
    for name in list(applied):
        if name not in want and name in start:
            try:
                _set_config(name, start[name])
            except Exception:
                pass
            applied.discard(name)
    for name, text in want.items():
        if not isinstance(text, str) or text[:2] in ("'/", '"/') or name not in start:
            continue
        if not config_allowed(name, text):
            if name in CONFIG_NOT_DECISIONS:
                _config_skipped.add(name)
            elif name not in _config_skipped:
                _config_skipped.add(name)
                _config_notes.append("config %s from the trace is not one dynrec sets (not "
                                     "decision-relevant, or unsafe): skipped" % name)
            continue
        try:
            _set_config(name, ast.literal_eval(text))
            applied.add(name)
        except Exception:
            pass


def _excluded_keys(ex):
    """The dispatch keys the compile ran with excluded (capture's
    tls_exclude: inside a TorchDispatchMode's __torch_dispatch__), as a
    DispatchKeySet of EXCLUDABLE_KEYS only; None for none.  Its bits on
    the torch that recorded it, else its key names."""
    if not isinstance(ex, dict):
        return None
    D, KS = torch._C.DispatchKey, torch._C.DispatchKeySet
    allowed = {}
    for name in EXCLUDABLE_KEYS:
        key = getattr(D, name, None)
        if isinstance(key, D):
            allowed[name] = KS(key)
    if not allowed:
        return None
    mask = functools.reduce(lambda a, b: a | b, allowed.values())
    ks = None
    if type(ex.get("raw")) is int and 0 < ex["raw"] < 1 << 64 and (
            ex.get("torch") == torch.__version__):
        ks = KS.from_raw_repr(ex["raw"]) & mask
    elif isinstance(ex.get("keys"), list) and len(ex["keys"]) <= 128:
        picked = [allowed[k] for k in ex["keys"] if isinstance(k, str) and k in allowed]
        ks = functools.reduce(lambda a, b: a | b, picked) if picked else None
    return ks if ks is not None and ks.raw_repr() else None


class _GlobalState:
    """The global torch state of the compile (grad mode, default dtype, ...)
    around the replayed call, restored after it."""

    def __init__(self, st):
        self.st = st if isinstance(st, dict) else {}

    def __enter__(self):
        st, t = self.st, torch
        self.old = {"grad": t.is_grad_enabled(), "dtype": t.get_default_dtype(),
                    "det": (t.are_deterministic_algorithms_enabled(),
                            t.is_deterministic_algorithms_warn_only_enabled()),
                    "threads": t.get_num_threads()}
        self.tf32 = None
        if type(st.get("allow_tf32")) is bool:
            try:
                self.tf32 = t._C._get_cublas_allow_tf32()
                t._C._set_cublas_allow_tf32(st["allow_tf32"])
            except Exception:
                self.tf32 = None
        if type(st.get("grad")) is bool:
            t.set_grad_enabled(st["grad"])
        dt = st.get("default_dtype")
        if isinstance(dt, str) and dt in ("torch.float32", "torch.float64", "torch.float16",
                                          "torch.bfloat16"):
            t.set_default_dtype(_dtype(dt))
        if type(st.get("deterministic")) is bool:
            t.use_deterministic_algorithms(st["deterministic"],
                                           warn_only=st.get("deterministic_warn_only") is True)
        n = st.get("num_threads")
        if type(n) is int and 1 <= n <= 4096:
            t.set_num_threads(n)
        ag = torch._C._autograd
        self.hooks_off = None
        msg = st.get("saved_tensors_hooks_disabled")
        if isinstance(msg, str) and len(msg) <= 4096:
            self.hooks_off = (ag._saved_tensors_hooks_is_enabled(),
                              ag._saved_tensors_hooks_get_disabled_error_message())
            ag._saved_tensors_hooks_disable(msg)
        self.tls = []
        if st.get("inference_mode") is True:
            self.tls.append(torch.inference_mode())
        ks = _excluded_keys(st.get("tls_exclude"))
        if ks is not None:
            self.tls.append(torch._C._ExcludeDispatchKeyGuard(ks))
        for ctx in self.tls:
            ctx.__enter__()
        self.egb = None
        utils = torch._dynamo.utils
        if st.get("error_on_graph_break") is True and hasattr(utils, "_set_error_on_graph_break"):
            self.egb = utils._get_error_on_graph_break()
            utils._set_error_on_graph_break(True)
        self.autocast = None
        ac = st.get("autocast_cpu")
        if isinstance(ac, list) and len(ac) == 2 and ac[0] is True:
            self.autocast = t.autocast("cpu", dtype=_dtype(ac[1]))
            self.autocast.__enter__()
        return self

    def __exit__(self, *exc):
        t, o = torch, self.old
        if self.autocast is not None:
            self.autocast.__exit__(*exc)
        for ctx in reversed(self.tls):
            ctx.__exit__(*exc)
        if self.hooks_off is not None:
            ag = torch._C._autograd
            if self.hooks_off[0]:
                ag._saved_tensors_hooks_enable()
            else:
                ag._saved_tensors_hooks_disable(self.hooks_off[1] or "")
        t.set_grad_enabled(o["grad"])
        t.set_default_dtype(o["dtype"])
        t.use_deterministic_algorithms(o["det"][0], warn_only=o["det"][1])
        t.set_num_threads(o["threads"])
        if self.tf32 is not None:
            t._C._set_cublas_allow_tf32(self.tf32)
        if self.egb is not None:
            torch._dynamo.utils._set_error_on_graph_break(self.egb)
        return False


def _resume_code(g, qualname, line, want):
    """The code of the resume function named qualname at line that Dynamo
    made here, in the module globals g (its __resume_at_* entries); None
    when there is none; NotReplayable when only another bytecode is there.
    want: the recorded code digest (traces of 0.6 and older have none)."""
    found = None
    for name, v in list(g.items()):
        if not name.startswith("__resume_at_"):
            continue
        # The function, or (when it has free variables) the factory
        # that holds its code in a cell.
        codes = [getattr(v, "__code__", None)] + [
            getattr(c, "cell_contents", None) for c in (getattr(v, "__closure__", None) or ())]
        for c in codes:
            if isinstance(c, types.CodeType) and _qualname(c) == qualname and (
                    c.co_firstlineno == line):
                # The recorded bytecode picks one of two branches' resume
                # functions.
                if not isinstance(want, str) or _code_digest(c) == want:
                    found = c
                elif found is None:
                    found = False
    if found is False:
        raise NotReplayable("no resume function here has the recorded bytecode of %s "
                            "(another torch makes different ones)" % qualname)
    return found


def _find_code(cap, frame, sources, modules):
    key = (cap["filename"], cap["qualname"], cap["line"])
    code = sources.code(key, cap["data"].get("place"))
    if code is not None:
        return code
    # A resume function after a graph break: the one Dynamo made here.
    g = frame["globals_ns"]
    if "torch_dynamo_resume_in_" in cap["qualname"]:
        found = _resume_code(g, cap["qualname"], cap["line"], cap["data"].get("code_digest"))
        if found:
            return found
    # Code of an installed library: from its module, only under --trust or
    # in the sandbox.  Dynamo runs a frame it does not trace (no tensor in
    # it, a skipped file, a config that disables it) for real, so a trace
    # naming a library function (subprocess.getoutput) as its frame would
    # run it on arguments of its choosing.
    if not _LOOSE:
        raise NotReplayable("its code is a library's (%s), not the stored sources'; a library "
                            "function named by a trace could run for real: --trust replays it"
                            % cap["qualname"])
    loc = frame["locals"] if isinstance(frame["locals"], dict) else {}
    if str(cap["filename"]).startswith("<eval_with_key>"):
        # An fx GraphModule's generated forward: the code torch.fx generated
        # here for the rebuilt `self`, when it is the recorded one (its file
        # name's counter aside).
        me = loc.get("self")
        fwd = getattr(vars(type(me)).get("forward"), "__code__", None) if isinstance(
            me, torch.nn.Module) and _is_graph_module(me) else None
        if isinstance(fwd, types.CodeType) and _dynrec.mask(fwd.co_filename) == _dynrec.mask(
                cap["filename"]) and _same_code(fwd, fwd.co_filename, *key[1:]):
            return fwd
        raise NotReplayable("its code is an fx GraphModule's generated forward, and its `self` "
                            "is not a rebuilt GraphModule whose code is the recorded one")
    # Where: the module's functions and its classes' methods, and the class
    # of the frame's `self` (or of a wrapper's first *args), each behind its
    # decorators (transformers' can_return_tuple wraps forward).
    if not cap["data"].get("user_code") or frame.get("module") not in (
            "__main__", *sources.modules):
        # (a file of the program's whose module is imported here, not made
        # from the stored sources: a library on PYTHONPATH, like any other)
        # (the class of the frame's `self` first: the __init__ a dataclass
        # made has the same file, qualname and line as every other's)
        spaces = []
        args = loc.get("args")
        for me in (loc.get("self"), args[0] if isinstance(args, tuple) and args else None):
            if me is not None:
                spaces.extend(vars(k) for k in type(me).__mro__[:50])
        mod = sys.modules.get(frame.get("module") or "")
        if mod is not None:
            spaces.append(vars(mod))
            spaces.extend(vars(v) for v in list(vars(mod).values()) if isinstance(v, type))
        nested = "<locals>" in str(cap["qualname"])
        for ns in spaces:
            for v in list(ns.values()):
                for c in _unwrapped_codes(v):
                    if _same_code(c, *key):
                        return c
                    # A function a library function makes (torch's
                    # wrap_inline.<locals>.inner, which compiling an nn
                    # module of torch's compiles): its code is a constant
                    # of the maker's, the one code object every call uses.
                    for inner in _inner_codes(c) if nested else ():
                        if _same_code(inner, *key):
                            return inner
    return _unmarshal(cap["blob"], "%s (%s:%d)" % (cap["qualname"], cap["filename"], cap["line"]))


def _frame(cap, sources, modules):
    b = _Builder(cap, sources, modules)
    if 0 not in b.rows or b.rows[0][0] != "frame" or not isinstance(b.rows[0][2], dict):
        raise Refused("capture %d: no frame node" % cap["no"])
    root = b.rows[0][2]
    b.built[0] = None
    modname = root.get("module")
    mod = modules.get(modname) if isinstance(modname, str) else None
    if mod is None and isinstance(modname, str):
        # A module the frame's globals are of: one already imported here,
        # never imported by the trace's name (a library frame is refused
        # by _find_code without --trust anyway).
        mod = _import(modname) if _LOOSE else sys.modules.get(modname)
    ns = mod.__dict__ if mod is not None else {"__builtins__": __builtins__, "__name__": modname}
    b.frame_ns = ns
    f_locals = b.child(0, root.get("locals"))
    if not isinstance(f_locals, dict):
        raise Refused("capture %d: locals are not a dict" % cap["no"])
    closure = root.get("closure") or []
    if not isinstance(closure, list):
        raise Refused("capture %d: closure is not a list" % cap["no"])
    cells = [b.child(0, c) for c in closure]
    if not all(isinstance(c, types.CellType) for c in cells):
        raise Refused("capture %d: closure holds something other than cells" % cap["no"])
    g = b.child(0, root.get("globals")) if root.get("globals") is not None else {}
    if not isinstance(g, dict):
        raise Refused("capture %d: globals are not a dict" % cap["no"])
    soft = {}
    sg = root.get("soft_globals")
    if sg is not None and sg in b.rows and b.rows[sg][0] == "dict" and isinstance(
            b.rows[sg][2], list):
        for pair in b.rows[sg][2]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Refused("capture %d: bad global" % cap["no"])
            try:
                soft[b.child(sg, pair[0])] = b.child(sg, pair[1])
            except NotReplayable:
                pass
    gff = None
    if root.get("guard_filter_fn") is not None:
        gff = b.child(0, root["guard_filter_fn"])
        if not callable(gff):
            raise Refused("capture %d: a guard_filter_fn that is not callable" % cap["no"])
    bfn = None
    if root.get("backend_fn") is not None:
        # A backend function defined inside a function of the stored
        # sources (a test's own), made from them: the replay calls it.
        bfn = b.child(0, root["backend_fn"])
        code = getattr(bfn, "__code__", None)
        if type(bfn) is not types.FunctionType or "<locals>" not in bfn.__qualname__ or (
                os.path.normpath(code.co_filename) not in sources.text):
            raise Refused("capture %d: a backend_fn that is not a function the stored sources"
                          " define" % cap["no"])
    return {"locals": f_locals, "cells": tuple(cells), "globals": g, "soft": soft,
            "globals_ns": ns, "module": modname, "bytes": b.total, "guard_filter_fn": gff,
            "backend_fn": bfn, "keep": b.keep}


def _shared_class_cells(qualname, code, cells, sources):
    """The frame's closure cells, where a function defined beside a class
    in one function (fn and class Foo in one test, fn calling Foo(a)) takes
    the cell that the class's own methods hold for the class's name
    (Foo.__mul__ returning Foo(...)): in the program that is one cell, the
    function's local Foo, and Dynamo follows a closure cell by identity (the
    class reached through a second cell has no source, and calling it is
    an unsupported call).  The replay's nesting of the class made the
    methods' cell, holding the class; the frame's capture made another."""
    made = {id(c) for c in sources.local_classes.values()}
    if not made or not cells:
        return cells
    parent = str(qualname).rpartition(".")[0]
    out = list(cells)
    for i, name in enumerate(code.co_freevars[:len(out)]):
        try:
            cls = out[i].cell_contents
        except ValueError:
            continue
        if not (isinstance(cls, type) and id(cls) in made and cls.__name__ == name
                and cls.__qualname__.rpartition(".")[0] == parent):
            continue
        for fn in list(vars(cls).values()):
            fn = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
            if type(fn) is types.FunctionType and name in fn.__code__.co_freevars:
                cell = fn.__closure__[fn.__code__.co_freevars.index(name)]
                try:
                    if cell.cell_contents is cls:
                        out[i] = cell
                        break
                except ValueError:
                    continue
    return tuple(out)


def _with_parents(all_caps, sel):
    """sel, plus the earlier compiles of the frames whose graph breaks made
    the resume functions in sel: Dynamo makes a resume function's code when
    it compiles its parent, so those replay too (they are not compared)."""
    import re

    chosen = {id(c) for c in sel}
    order = {id(c): i for i, c in enumerate(all_caps)}
    todo = [c for c in sel]
    while todo:
        c = todo.pop()
        m = re.match(r"torch_dynamo_resume_in_(.+)_at_\d+$", c["qualname"].rsplit(".", 1)[-1])
        if not m:
            continue
        parent = m.group(1)
        for p in all_caps[:order[id(c)]]:
            if p["qualname"].rsplit(".", 1)[-1] == parent and id(p) not in chosen:
                chosen.add(id(p))
                todo.append(p)
    return [c for c in all_caps if id(c) in chosen]


def _frame_matches(cap, frame):
    """--frame NAME: the frame whose qualname is NAME ("T.test_x.<locals>.fn"),
    or ends in ".NAME", or FILE:QUALNAME (FILE the file's name or a path
    suffix of it); and the resume functions Dynamo made from that frame
    (torch_dynamo_resume_in_<name>_at_N in the same scope), never those of
    another frame of the same short name."""
    fname, qual = cap["filename"], cap["qualname"]
    if ":" in frame:
        want_file, frame = frame.rsplit(":", 1)
        if not (fname == want_file or fname.endswith("/" + want_file.lstrip("/"))):
            return False
    if qual == frame or qual.endswith("." + frame):
        return True
    scope, _, last = qual.rpartition(".")
    want_scope, _, short = frame.rpartition(".")
    if not last.startswith("torch_dynamo_resume_in_%s_at_" % short):
        return False
    # A dotted NAME names one scope; a short one any frame of that name.
    return scope == want_scope or not want_scope


def _selected(caps, frame, compile_id):
    """The captures --frame / --compile choose."""
    if frame:
        caps = [c for c in caps if _frame_matches(c, frame)]
    if compile_id:
        want = compile_id.strip("[]")
        f, _, k = want.partition("/")
        hit = [c for c in caps if c["cid"].strip("[]") == want]
        if not hit:
            return None
        key = (hit[0]["filename"], hit[0]["qualname"], hit[0]["line"])
        try:
            last = int(k.split("_")[0])
        except ValueError:
            last = 0
        caps = [c for c in caps if (c["filename"], c["qualname"], c["line"]) == key and
                c["cid"].strip("[]").split("/")[0] == f and
                int((c["cid"].strip("[]").split("/") + ["0"])[1].split("_")[0] or 0) <= last]
    return caps


def _fuzz(caps, n, sources, modules):
    """DYNREC_REPLAY_FUZZ=N (tests): N randomly damaged copies of the
    captured trees go through check() and a full build; anything but
    Refused or NotReplayable is a bug in this parser of untrusted input.
    Prints the count and exits 0, or 70 with the first tracebacks."""
    import random
    import traceback

    global _MAX_BYTES, _MAX_TOTAL
    _MAX_BYTES, _MAX_TOTAL = 1 << 20, 4 << 20  # nothing big is built here
    rnd = random.Random(int(os.environ.get("DYNREC_REPLAY_FUZZ_SEED", "1")))
    base = {}
    for c in caps:
        try:
            base[c["no"]] = (c, dict(_Builder(c, None, None).rows))
        except Refused:
            pass
    kinds = sorted(KINDS | {"bogus"})

    def junk(nodes, depth=0):
        r = rnd.random()
        if depth > 2 or r < 0.3:
            return rnd.choice([None, True, 0, -1, 1 << 70, 2.5, "x", "torch.float32", "cpu",
                               rnd.choice(nodes), rnd.randrange(-3, len(nodes) + 3)])
        if r < 0.6:
            return [junk(nodes, depth + 1) for _ in range(rnd.randrange(4))]
        keys = ["shape", "stride", "offset", "dtype", "device", "class", "dict", "items",
                "fields", "self", "func", "locals", "globals", "closure", "name", "module",
                "qualname", "view_of", "grad", "marks", "data", "requires_grad", "leaf", "attrs",
                "inference", "mapping", "state", "builtin", "bases", "number", "local"]
        return {rnd.choice(keys): junk(nodes, depth + 1) for _ in range(rnd.randrange(5))}

    bad = []
    checked = built = 0
    keys = sorted(base)
    for _ in range(n):
        cap, rows = base[rnd.choice(keys)]
        rows = dict(rows)
        nodes = sorted(rows)
        for _ in range(rnd.randrange(1, 4)):
            k = rnd.choice(nodes)
            if k not in rows:
                continue
            kind, typ, v, blob = rows[k]
            what = rnd.random()
            if what < 0.3:
                kind = rnd.choice(kinds)
            elif what < 0.8:
                v = junk(nodes)
            elif what < 0.9:
                blob = rnd.choice([None, 1, 10 ** 6])
            else:
                del rows[k]
                continue
            rows[k] = (kind, typ, v, blob)
        b = _Builder(cap, sources, modules, rows)
        try:
            b.check()
            checked += 1
            b.built[0] = None  # the frame node is the root, not a value
            for k in sorted(rows):
                b.get(k)
            built += 1
        except (Refused, NotReplayable) as exc:
            if os.environ.get("DYNREC_REPLAY_FUZZ_VERBOSE"):
                _say("%s: %s" % (type(exc).__name__, exc))
        except Exception:
            bad.append(traceback.format_exc())
    _say("fuzzed %d value trees (%d passed the check, %d built): %d unexpected errors"
         % (n, checked, built, len(bad)))
    for tb in bad[:3]:
        sys.stderr.write("\n".join(_dynrec.safe(ln) for ln in tb.split("\n")))
    return 70 if bad else 0


def main():
    global torch
    import torch  # noqa: F401
    import torch._dynamo

    # The builder recurses a few frames per level of a value tree, whose
    # depth is capped at MAX_DEPTH.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * MAX_DEPTH + 1000))

    meta = _trace.meta(_query)
    caps = _trace.captures(_query)
    if not caps:
        _say("%s holds no captured frames: it predates input capture (dynrec 0.3.0) or "
             "Dynamo compiled nothing" % _R["name"])
        _dynrec.meta("replay.captures", "0")
        return 0
    sel = _selected(caps, _R.get("frame"), _R.get("compile"))
    if sel is None:
        _say("no compile %s in %s" % (_R.get("compile"), _R["name"]))
        return 2
    if not sel:
        _say("no frame %s in %s" % (_R.get("frame"), _R["name"]))
        return 2
    counts = {}
    for c in sel:
        k = (c["filename"], c["qualname"], c["line"])
        counts[k] = counts.get(k, 0) + 1
    _dynrec.meta("replay.frames", json.dumps([list(k) + [n] for k, n in counts.items()]))
    if _R.get("frame") or _R.get("compile"):
        sel = _with_parents(caps, sel)
    states = _trace.states(_query)
    for c in sel:  # a malformed tree stops the replay before anything runs
        if c["data"].get("replayable"):
            _Builder(c, None, None).check()
            for no in states.get(c["cid"], ()):
                _state_items(no, None, None)
    sources = _Sources(meta)
    global _SOURCES
    _SOURCES = sources
    finder = _Finder(sources)
    sys.meta_path.insert(0, finder)
    main_mod = types.ModuleType("__main__")
    main_mod.__file__ = sources.script
    main_mod.__builtins__ = __builtins__
    driver_main = sys.modules.get("__main__")
    sys.modules["__main__"] = main_mod
    modules = {"__main__": main_mod}
    try:
        if sources.main in sources.text:
            main_mod.__file__ = sources.main
            sources.fill(main_mod, sources.main)
        elif meta.get("module") == "__main__" and meta.get("recorded_by") == "in-process":
            # dynrec.record in IPython or Jupyter: __main__ is the notebook's
            # namespace, its cells the stored sources that no file on disk
            # and no module holds, in the order they ran.
            modules_of = set(sources.modules.values())
            for p in list(sources.text):
                if p not in modules_of and not os.path.exists(p):
                    sources.fill(main_mod, p)
        for name in sorted(sources.modules):
            try:
                modules[name] = importlib.import_module(name)
            except Exception as exc:
                sources.notes.append("module %s: %s: %s" % (name, type(exc).__name__, exc))
        if os.environ.get("DYNREC_REPLAY_FUZZ"):
            return _fuzz(caps, int(os.environ["DYNREC_REPLAY_FUZZ"]), sources, modules)
        _install_stub()
        earlier = _recompiles_of_earlier(caps) if meta.get("recorded_by") == "in-process" else ()
        return _replay(sel, sources, modules, _resets(), states, earlier)
    finally:
        if driver_main is not None:
            sys.modules["__main__"] = driver_main


def _replay(caps, sources, modules, resets, states, earlier=()):
    global _BACKENDS
    backends = _BACKENDS = _Backends(_R.get("backend"), sources, modules)
    backends.raised = _backends_raised()
    threads = _Threads()
    start = config_snapshot(sys.modules, lambda v: v, defaults=True)
    applied = {}  # thread name -> config names set there
    skipped_frames = {}
    kept, deallocated = _Kept(), _deallocated()
    local_ops = _LocalOps(sources, [])
    state_notes = set()
    tty = sys.stderr.isatty()
    replayed = 0
    resets = list(resets)
    for i, cap in enumerate(caps):
        # torch._dynamo.reset() where the recording called it: the compiles
        # after it are first compiles again, with ids of the next epoch.
        while resets and resets[0] < cap["seq"]:
            resets.pop(0)
            torch._dynamo.reset()
            kept.drop()
        # A frame not replayable is left out for the rest of its epoch (its
        # later compiles recompile the cache entry the replay could not
        # make); after a reset its compiles are first compiles again.
        m = _CID.match(str(cap["cid"]))
        epoch = int(m.group(1) or 0) if m else 0
        fkey = (cap["filename"], cap["qualname"], cap["line"], epoch)
        if tty:
            sys.stderr.write("\rdynrec replay: compile %d/%d %s" % (
                i + 1, len(caps), _dynrec.safe(str(cap["qualname"])[:40])))
            sys.stderr.flush()
        reason = skipped_frames.get(fkey)
        if reason is None and cap["cid"] in earlier:
            reason = ("compile %s recompiles a cache entry made before dynrec.start(); "
                      "the trace has no compile of that frame to replay first" % cap["cid"])
        if reason is None and not cap["data"].get("replayable", False):
            reason = cap["reason"] or cap["data"].get("reason") or "not captured"
        tname = cap["data"].get("thread_name")
        transforms = _Transforms(cap["data"].get("functorch_stack"))
        try:
            if reason is None and transforms.stack and tname not in (None, "MainThread"):
                reason = "compiled inside a torch.func transform on thread %s: the replay enters " \
                         "transforms on its main thread only" % tname
            if reason is None:
                try:
                    # Its values are made inside the transforms it ran in (a
                    # vmap's batched tensors need the vmap).
                    transforms.enter()
                    # The custom ops its test function defines (before its
                    # values: an op's overload can be one).
                    local_ops.enter(cap, modules)
                    frame = _frame(cap, sources, modules)
                    code = _find_code(cap, frame, sources, modules)
                    if len(frame["cells"]) != len(code.co_freevars):
                        raise NotReplayable("its closure has %d cells, its code %d" % (
                            len(frame["cells"]), len(code.co_freevars)))
                    frame["cells"] = _shared_class_cells(cap["qualname"], code, frame["cells"],
                                                         sources)
                    pos, kw = _args(code, frame["locals"])
                    dynamism = _dynamism(cap["data"].get("dynamism"))
                except NotReplayable as exc:
                    reason = str(exc)
                except KeyError as exc:
                    reason = "argument %s was not captured" % exc
                except Refused:
                    raise
                except Exception as exc:
                    # torch refusing a value here (a call the recorded torch
                    # allowed): this frame only, with torch's words.
                    reason = "its inputs cannot be rebuilt here: %s: %s" % (
                        type(exc).__name__, (str(exc).splitlines() or [""])[0][:200])
            if reason is not None:
                if fkey not in skipped_frames:
                    skipped_frames[fkey] = reason
                    _event("replay_skip", cap["no"], reason,
                           {"filename": cap["filename"], "qualname": cap["qualname"],
                            "firstlineno": cap["line"], "compile_id": cap["cid"],
                            "epoch": epoch}, cap["cid"])
                seen = getattr(getattr(_dynrec, "dynamo", None), "config_seen", None)
                if tname in (None, "MainThread") and seen is not None:
                    # Its config all the same, as if compiled: the config
                    # changes of the compiles after it are the recorded ones.
                    _config(cap, applied.setdefault(tname, set()), start)
                    seen()
                continue
            ns = frame["globals_ns"]
            for k, v in frame["soft"].items():
                if isinstance(k, str):
                    ns[k] = v
            for k, v in frame["globals"].items():
                if isinstance(k, str):
                    ns[k] = v
            fn = types.FunctionType(code, ns, code.co_name, None, frame["cells"] or None)
            made = backends.get(cap["data"].get("backend"), cap["data"].get("fullgraph"),
                                cap["data"].get("recompile_limit"), frame["backend_fn"])
            compiled = backends.in_region(made, fn, cap["data"].get("isolate_region"),
                                          frame["guard_filter_fn"])
            # torch.compiler.set_stance("default", force_backend=B) around
            # the call, as recorded: Dynamo compiles with B itself, not
            # through torch.compile's wrapper of it (its guards name B).
            set_stance = getattr(torch.compiler, "set_stance", None)
            stance = set_stance("default", force_backend=made.backend) if (
                cap["data"].get("force_backend") is True
                and set_stance is not None) else contextlib.nullcontext()

            def call(compiled=compiled, pos=pos, kw=kw, cap=cap, code=code, dynamism=dynamism,
                     stance=stance):
                # Dynamo's config is per thread: set where the compile runs.
                _config(cap, applied.setdefault(tname, set()), start)
                _set_dynamism(code, dynamism)
                for no in states.get(cap["cid"], ()):
                    _apply_state(no, sources, modules, state_notes)
                _top.code = code
                _top.export = cap["data"].get("export") is True
                backends.current = str(cap["cid"])
                if _top.export:
                    # torch._dynamo.export drops the code's cache entries
                    # before and after (remove_from_cache): the next compile
                    # of the frame is a first one, of a new frame id.
                    torch._C._dynamo.eval_frame.reset_code(code)
                try:
                    with _GlobalState(cap["data"].get("global_state")), stance:
                        compiled(*pos, **kw)
                except (Exception, _NotRun):
                    pass  # the recorder has the error; the replay goes on
                finally:
                    if _top.export:
                        torch._C._dynamo.eval_frame.reset_code(code)
                    _top.code = None
                    _top.export = False
                    backends.current = None

            if str(cap["cid"]) in deallocated:
                kept.drop(fkey[:3])
            threads.run(tname, call)
            kept.add(fkey[:3], frame, pos, kw)
            replayed += 1
        finally:
            # (also when the trace is refused: a transform left entered
            # breaks the interpreter's exit)
            transforms.close()
    threads.stop()
    local_ops.close()
    if tty:
        sys.stderr.write("\r\033[K")
    notes = sources.notes + backends.notes + local_ops.notes + _config_notes + sorted(
        state_notes)
    _dynrec.meta("replay.captures", str(len(caps)))
    _dynrec.meta("replay.replayed", str(replayed))
    _dynrec.meta("replay.notes", json.dumps(notes[:50]))
    # The recorded settings it did not make: the comparison leaves them out.
    _dynrec.meta("replay.config_skipped", json.dumps(sorted(_config_skipped)))
    return 0


def run():
    """The driver's entry point (recorder/run.c): the replay's exit status."""
    try:
        return main()
    except Refused as exc:
        _say("%s is malformed: %s; the replay stopped there" % (_R["name"], exc))
        return 65
