"""dynrec's Dynamo adapter, part two: higher-order-op speculation and side effects.

The module _dynrec.dynamo_spec, run right after dynamo.py, whose helpers
(emit, speculation, hook, Guarded, mask, compile_id_now, ...) it imports;
install() in dynamo.py calls install_speculation().

Hook points (torch 2.13):
  higher_order_ops.trace_hop_function      one speculated branch/subgraph of a
      HOP (torch.cond's true_fn/false_fn, while_loop's cond_fn/body_fn, map's
      body, ...): it clones tx.output.side_effects on entry and, after the
      branch, puts the clone back (the restore).  The object that was live
      during the branch keeps the branch's state, so comparing it with the
      snapshot taken on entry gives the mutations the restore dropped.
      Events: speculation 'checkpoint' / 'rollback' (scope 'branch') and
      side_effect 'dropped' (scope 'branch').
  Cond/WhileLoop/MapHigherOrderVariable._call_function   which HOP call the
      branches belong to, so that they are named by role (true_fn, ...).
  higher_order_ops._merge_graph_inputs     the two branches' subgraphs merged
      into one HOP call (cond, while_loop): speculation 'merge'.
  SideEffects.check_allowed_side_effect    a mutation of an outer-scope object
      inside a branch, refused (Unsupported) before it is recorded: dropped.
  SideEffects.codegen_update_mutated       the mutations Dynamo replays after
      the graph in the residual bytecode (second codegen pass, the one that
      logs the 'dynamo_side_effects' artifact): side_effect 'applied'.
  convert_frame.trace_frame                one tracing attempt; when it fails
      (RestartAnalysis, SkipFrame, an error) the pending mutations of its
      OutputGraph are discarded with it: side_effect 'dropped' (scope 'attempt').
  OutputGraph.cleanup                      runs in InstructionTranslator.run's
      finally and empties side_effects.id_to_variable before the exception
      reaches trace_frame (the exception's _torch_dynamo_tracer_output then
      holds an emptied SideEffects), so while an exception is in flight the
      pending mutations are kept for trace_frame's wrapper.
"""

import re as _re
import sys

import torch

from .dynamo import (Guarded, _around, _hooks, _tls, attempt_now, compile_id_now, emit, hook,
                     mask, speculation)

_hop_se_guard = Guarded("hop_speculation")
_applied_guard = Guarded("side_effects_applied")
_dropped_guard = Guarded("side_effects_dropped")

# Branch roles of the control-flow HOPs, in the order Dynamo speculates them.
_HOP_ROLES = {
    "CondHigherOrderVariable": ("true_fn", "false_fn"),
    "WhileLoopHigherOrderVariable": ("cond_fn", "body_fn"),
    "WhileLoopStackOutputHigherOrderVariable": ("cond_fn", "body_fn"),
    "MapHigherOrderVariable": ("body_fn",),
}

_MUTATING_METHODS = (
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
    "update", "add", "discard", "setdefault", "popitem", "appendleft", "extendleft",
    "popleft", "rotate", "difference_update", "intersection_update",
    "symmetric_difference_update", "__setitem__", "__delitem__", "__iadd__",
)
_METHOD_RX = _re.compile(r"\.(%s)\s*\(" % "|".join(_MUTATING_METHODS))
_STORE_NAME_RX = _re.compile(
    r"^\s*([A-Za-z_]\w*)\s*(?:\+|-|\*|/|//|%|\*\*|<<|>>|&|\||\^|@)?=(?!=)")


def _spec_tls(name, factory):
    val = getattr(_tls, name, None)
    if val is None:
        val = factory()
        setattr(_tls, name, val)
    return val


def _arg(args, kwargs, index, name):
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else None


# ---- describing mutations ------------------------------------------------------


def _mro_names(var):
    return {c.__name__ for c in type(var).__mro__}


def _mutation_kind(var):
    names = _mro_names(var)
    for cls, kind in (("CellVariable", "cell"), ("NewGlobalVariable", "global"),
                      ("DequeVariable", "deque"), ("ListVariable", "list"),
                      ("SetVariable", "set"), ("ConstDictVariable", "dict"),
                      ("UserDefinedListVariable", "list"),
                      ("UserDefinedDictVariable", "dict"),
                      ("IteratorVariable", "iterator"), ("RandomVariable", "random"),
                      ("TorchFunctionModeStackVariable", "torch function mode stack")):
        if cls in names:
            return kind
    return None


def _is_new(var):
    """Objects created during tracing, or not trackable (no mutation type)."""
    mt = getattr(var, "mutation_type", None)
    return mt is None or type(mt).__name__ in ("AttributeMutationNew", "ValueMutationNew")


def _source_name(var):
    src = getattr(var, "source", None)
    if src is None:
        return None
    try:
        name = src.name
        if callable(name):
            name = name()
        return str(name)
    except Exception:
        return type(src).__name__


def _frames(stacks, attr=None):
    """The innermost user frame of each recorded stack, deduplicated."""
    out = []
    seen = set()
    for st in stacks or ():
        try:
            fs = st[-1]
        except Exception:
            continue
        key = (fs.filename, fs.lineno)
        if key in seen:
            continue
        seen.add(key)
        out.append(fs)
    if attr and len(out) > 1:
        mine = [fs for fs in out if ("." + attr) in (fs.line or "")]
        if mine:
            out = mine
    return out


def _loc(fs):
    import os as _os

    return "%s:%s" % (_os.path.basename(fs.filename or "?"), fs.lineno)


def _describe(var, attr, value, stacks, cell_name=None):
    """(readable description, data) of one mutation of var (attr for attribute stores)."""
    frames = _frames(stacks, attr if attr != "cell_contents" else None)
    lines = [fs.line or "" for fs in frames]
    src = _source_name(var)
    kind = _mutation_kind(var)
    deleted = value is not None and type(value).__name__ == "DeletedVariable"
    op = "delete" if deleted else "store"
    if kind == "cell":
        target = cell_name or getattr(var, "local_name", None)
        if not target:
            for line in lines:
                m = _STORE_NAME_RX.match(line)
                if m:
                    target = m.group(1)
                    break
        target = target or src or "?"
    elif kind == "global":
        target = attr or src or "?"
    elif attr is not None:
        kind = "attribute"
        target = "%s.%s" % (src or type(var).__name__, attr)
    else:
        kind = kind or type(var).__name__
        target = src or "?"
        ops = []
        for line in lines:
            for m in _METHOD_RX.finditer(line):
                if m.group(1) not in ops:
                    ops.append(m.group(1))
            if not _METHOD_RX.search(line):
                if _re.search(r"^\s*del\s+.*\[", line):
                    op = "delitem"
                elif _re.search(r"\]\s*(?:\+|-|\*|/|//|%|\||&|\^)?=(?!=)", line):
                    op = "setitem"
                else:
                    continue
                if op not in ops:
                    ops.append(op)
        if kind == "iterator":
            ops = ["advance"]
        elif kind == "random":
            ops = ["setstate"]
        op = ", ".join(ops) if ops else "mutation"
    locs = [_loc(fs) for fs in frames]
    text = "%s %s %s" % (kind, target, op)
    if locs:
        text += " (%s)" % ", ".join(locs[:4])
    data = {"kind": kind, "target": target, "op": op, "source": src,
            "locations": ["%s:%s" % (fs.filename, fs.lineno) for fs in frames]}
    if attr is not None:
        data["attribute"] = attr
    return text, data


def _entries(se):
    """{key: (var, attr, value)}: the pending mutations of pre-existing objects."""
    out = {}
    sam = getattr(se, "store_attr_mutations", {}) or {}
    for var in list(getattr(se, "id_to_variable", {}).values()):
        try:
            if _is_new(var):
                continue
            attrs = sam.get(var)
            if attrs:
                for name, value in list(attrs.items()):
                    out[(id(var), name, id(value))] = (var, name, value)
            if se.is_attribute_mutation(var):
                # a user-defined list/dict subclass: its items live in _base_vt
                base = getattr(var, "_base_vt", None)
                if base is not None and se.is_modified(base):
                    out[(id(var), None, None)] = (var, None, None)
            elif se.is_modified(var):
                out[(id(var), None, None)] = (var, None, None)
        except Exception:
            continue
    return out


def _emit_side_effect(status, se, entry, extra, stacks=None, cell_name=None):
    var, attr, value = entry
    if stacks is None:
        msu = getattr(se, "mutation_user_stacks", None) or {}
        stacks = msu.get(var)
        if not stacks and getattr(var, "_base_vt", None) is not None:
            stacks = msu.get(var._base_vt)  # user-defined list/dict subclass
    text, data = _describe(var, attr, value, stacks, cell_name)
    cid = compile_id_now()
    data.update(extra)
    data["status"] = status
    data["attempt"] = attempt_now()
    emit("side_effect", cid=cid, text=text, data=data,
         key="side_effect %s %s %s" % (cid, status, mask(text)))
    return text


def _reported():
    """Mutation keys already reported dropped in this tracing attempt."""
    return _spec_tls("spec_reported", set)


# ---- counts ------------------------------------------------------------------


def _counts(tx, se=None, prefix=""):
    out = tx.output
    cur = out.current_tracer
    parent = getattr(cur, "parent", None)
    c = {}
    c[prefix + "nodes"] = len((parent or cur).graph.nodes)
    if parent is not None:
        c[prefix + "subgraph_nodes"] = len(cur.graph.nodes)
    c[prefix + "guards"] = len(out.guards)
    c[prefix + "side_effects"] = len(_entries(se if se is not None else out.side_effects))
    return c


def _fn_name(f):
    for _ in range(4):  # functools.partial(fn, ...) -> fn
        inner = getattr(f, "func", None)
        if inner is None or inner is f:
            break
        f = inner
    for get in (lambda: f.get_name(), lambda: f.fn.__name__, lambda: f.value.__name__):
        try:
            name = get()
            if name:
                return str(name)
        except Exception:
            pass
    return type(f).__name__


def _hop_name(subtracer):
    desc = getattr(subtracer, "description", None)
    if desc:
        return str(desc)
    st = getattr(subtracer, "source_target", None)
    return getattr(st, "__name__", None) or (str(st) if st is not None else "subgraph")


# ---- 1. HOP calls: which branch is which ----------------------------------------


def _wrap_hop_call(orig, roles):
    def before(self, tx, *args, **kwargs):
        if not _hop_se_guard.on:
            return None
        hops = _spec_tls("spec_hops", list)
        branches = _spec_tls("spec_branches", list)
        hops.append({"hop": getattr(self, "_HOP_NAME", None) or type(self).__name__,
                     "roles": roles, "n": 0, "depth": len(branches), "tx": tx})
        return (hops,)

    def after(state, result, exc):
        state[0].pop()

    return _around(orig, before, after)


# ---- 2. one speculated branch: checkpoint, restore -------------------------------


def _branch_start(f, tx, subtracer, restore):
    branches = _spec_tls("spec_branches", list)
    hops = _spec_tls("spec_hops", list)
    hop = _hop_name(subtracer)
    fn = _fn_name(f)
    role = fn
    if hops and hops[-1]["depth"] == len(branches):
        h = hops[-1]
        hop = h["hop"]
        if h["n"] < len(h["roles"]):
            role = h["roles"][h["n"]]
        h["n"] += 1
    se = tx.output.side_effects
    frame = {"tx": tx, "se": se, "snap": _entries(se), "branch": role, "fn": fn,
             "hop": hop, "restore": bool(restore), "counts": _counts(tx, se)}
    branches.append(frame)
    data = {"scope": "branch", "branch": role, "function": fn, "hop": hop,
            "restores_side_effects": bool(restore)}
    data.update(frame["counts"])
    speculation("checkpoint", "branch %s of %s starts" % (role, hop), data)
    return frame


def _branch_end(frame, exc):
    branches = _spec_tls("spec_branches", list)
    if frame in branches:
        # pop it and anything a failed nested branch left above it
        del branches[branches.index(frame):]
    tx, live = frame["tx"], frame["se"]
    now = tx.output.side_effects
    restored = exc is None and now is not live
    if restored and branches:
        # the restored object is the one the enclosing branch goes on with
        branches[-1]["se"] = now
    if exc is None and not restored:
        return  # restore_side_effects=False: the branch's effects are kept
    end_entries = _entries(live)
    dropped_keys = [k for k in end_entries if k not in frame["snap"]]
    reported = _reported()
    extra = {"scope": "branch", "branch": frame["branch"], "hop": frame["hop"]}
    if exc is not None:
        extra["reason"] = getattr(exc, "gb_type", None) or type(exc).__name__
    names = []
    for k in dropped_keys:
        if k in reported:
            continue
        reported.add(k)
        names.append(_emit_side_effect("dropped", live, end_entries[k], extra))
    before = frame["counts"]
    data = {"scope": "branch", "branch": frame["branch"], "function": frame["fn"],
            "hop": frame["hop"], "restored": restored,
            "dropped_side_effects": len(names) + frame.get("refused", 0)}
    after = _counts(tx, now)
    for k in ("nodes", "guards", "side_effects"):
        data[k + "_before"] = before.get(k)  # at the checkpoint
        data[k] = after.get(k)  # after the restore
    # the branch's own state at its end, before the restore
    data["branch_subgraph_nodes"] = after.get("subgraph_nodes", 0)
    data["branch_side_effects"] = len(end_entries)
    if restored:
        detail = "branch %s of %s: side effects restored to the checkpoint" % (
            frame["branch"], frame["hop"])
    else:
        reason = extra["reason"]
        data["exc_type"] = type(exc).__name__
        detail = "branch %s of %s: speculation failed (%s), branch state discarded" % (
            frame["branch"], frame["hop"], reason)
    speculation("rollback", detail, data)


def _wrap_trace_hop_function(orig):
    def before(*args, **kwargs):
        if not _hop_se_guard.on:
            return None
        return _hop_se_guard(
            _branch_start, _arg(args, kwargs, 0, "f"), _arg(args, kwargs, 1, "tx"),
            _arg(args, kwargs, 2, "subtracer"),
            _arg(args, kwargs, 4, "restore_side_effects"))

    def after(frame, out, exc):
        if _hop_se_guard.on:
            _hop_se_guard(_branch_end, frame, exc)

    return _around(orig, before, after)


# ---- 3. merging the branches ---------------------------------------------------


def _n_outputs(graph):
    for node in reversed(graph.nodes):
        if node.op == "output":
            val = node.args[0] if node.args else ()
            return len(val) if isinstance(val, (tuple, list)) else 1
    return 0


def _record_merge(args, kwargs, result):
    first = _arg(args, kwargs, 0, "graphs")
    if isinstance(first, (list, tuple)):
        # torch 2.14 and newer: (graphs, lifted_freevars, names) -> (shared,
        # unique_per_branch), for N branches (torch.cond, torch.switch).
        graphs, names = list(first), list(_arg(args, kwargs, 2, "names") or ())
        shared, unique = result
    else:
        # torch 2.13: (l_graph, l_lifted, l_name, r_graph, r_lifted, r_name)
        # -> (l_graph, r_graph, l_shared, r_shared, unique_l, unique_r).
        graphs = [_arg(args, kwargs, 0, "l_graph"), _arg(args, kwargs, 3, "r_graph")]
        names = [_arg(args, kwargs, 2, "l_name"), _arg(args, kwargs, 5, "r_name")]
        _lg, _rg, shared, _r_shared, unique_l, unique_r = result
        unique = [unique_l, unique_r]
    hops = _spec_tls("spec_hops", list)
    hop = hops[-1]["hop"] if hops else None
    data = {"scope": "branch", "hop": hop, "branches": names,
            "shared_inputs": len(shared), "unique_inputs": [len(u) for u in unique],
            "branch_nodes": [len(g.nodes) for g in graphs],
            "branch_outputs": [_n_outputs(g) for g in graphs]}
    if hops and hops[-1].get("tx") is not None:
        data.update(_counts(hops[-1]["tx"]))
    speculation("merge", "%s: branches %s merged" % (hop or "HOP", " and ".join(map(str, names))),
                data)


def _wrap_merge_graph_inputs(orig):
    def before(*args, **kwargs):
        return args, kwargs

    def after(state, result, exc):
        if exc is None and _hop_se_guard.on:
            _hop_se_guard(_record_merge, state[0], state[1], result)

    return _around(orig, before, after)


# ---- 4. side effects refused inside a branch -------------------------------------


def _record_refused(se, item, exc):
    branches = _spec_tls("spec_branches", list)
    stack = None
    try:
        stack = torch._guards.TracingContext.extract_stack()
    except Exception:
        pass
    attr = cell_name = None
    try:
        inst = se.output_graph_weakref().current_tx.current_instruction
        if inst.opname in ("STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL"):
            attr = inst.argval
        elif inst.opname in ("STORE_DEREF", "DELETE_DEREF"):
            attr, cell_name = "cell_contents", inst.argval
    except Exception:
        pass
    extra = {"scope": "branch" if branches else "tracing",
             "reason": getattr(exc, "gb_type", None) or type(exc).__name__,
             "refused": True}
    if branches:
        extra["branch"] = branches[-1]["branch"]
        extra["hop"] = branches[-1]["hop"]
        branches[-1]["refused"] = branches[-1].get("refused", 0) + 1
    _emit_side_effect("dropped", se, (item, attr, None), extra,
                      [stack] if stack else [], cell_name)


def _wrap_check_allowed(orig):
    def before(self, item, *args, **kwargs):
        return self, item

    def after(state, result, exc):
        if isinstance(exc, Exception) and _dropped_guard.on:
            _dropped_guard(_record_refused, state[0], state[1], exc)

    return _around(orig, before, after)


# ---- 5. side effects applied after the graph --------------------------------------


def _applied_candidates(se):
    try:
        replay = torch._dynamo.config.replay_side_effects
    except Exception:
        replay = True
    out = []
    for key, entry in _entries(se).items():
        var, attr, _value = entry
        if not replay and type(getattr(var, "source", None)).__name__ != "TempLocalSource":
            continue
        if attr is None:
            has_new = getattr(var, "has_new_items", None)
            if _mutation_kind(var) in ("dict", "set") and callable(has_new):
                try:
                    if not has_new():
                        continue
                except Exception:
                    pass
        out.append(entry)
    return out


def _record_applied(se, entries):
    for entry in entries:
        _emit_side_effect("applied", se, entry, {"scope": "graph"})


def _wrap_codegen_update_mutated(orig):
    def before(self, cg, *args, **kwargs):
        final = bool(_arg(args, kwargs, 0, "log_side_effects"))
        entries = None
        if final and _applied_guard.on:
            entries = _applied_guard(_applied_candidates, self)
        return (self, entries) if entries else None

    def after(state, out, exc):
        if exc is None and _applied_guard.on:
            _applied_guard(_record_applied, state[0], state[1])

    return _around(orig, before, after)


# ---- 6. a failed tracing attempt ---------------------------------------------------


def _stash_failed_attempt(og):
    """OutputGraph.cleanup() empties side_effects.id_to_variable before the
    attempt's exception leaves trace_frame: keep its pending mutations."""
    se = og.side_effects
    _tls.spec_failed = (se, _entries(se))


def _wrap_output_graph_cleanup(orig):
    def before(self, *args, **kwargs):
        if _dropped_guard.on and sys.exc_info()[0] is not None:
            _dropped_guard(_stash_failed_attempt, self)

    return _around(orig, before)


def _record_attempt_dropped(exc):
    stash = getattr(_tls, "spec_failed", None)
    if stash is None:
        return
    se, entries = stash
    reported = _reported()
    reason = getattr(exc, "restart_reason", None) or getattr(exc, "gb_type", None) \
        or type(exc).__name__
    extra = {"scope": "attempt", "reason": str(reason).split("\n", 1)[0][:200],
             "exc_type": type(exc).__name__}
    for k, entry in entries.items():
        if k in reported:
            continue
        reported.add(k)
        _emit_side_effect("dropped", se, entry, extra)


_ATTEMPT_STATE = ("spec_reported", "spec_branches", "spec_hops", "spec_failed")


def _wrap_trace_frame(orig):
    def before(*args, **kwargs):
        outer = [getattr(_tls, name, None) for name in _ATTEMPT_STATE]
        _tls.spec_reported = set()
        _tls.spec_branches = []
        _tls.spec_hops = []
        _tls.spec_failed = None
        return outer

    def after(outer, result, exc):
        try:
            if isinstance(exc, Exception) and _dropped_guard.on:
                _dropped_guard(_record_attempt_dropped, exc)
        finally:
            for name, val in zip(_ATTEMPT_STATE, outer):
                setattr(_tls, name, val)

    return _around(orig, before, after)


# ---- installing -------------------------------------------------------------------


def install_speculation():
    import torch._dynamo.convert_frame as cf
    import torch._dynamo.output_graph as og_mod
    import torch._dynamo.side_effects as se_mod
    import torch._dynamo.variables.higher_order_ops as hops

    hook("trace_hop_function", hops, "trace_hop_function",
         _wrap_trace_hop_function)
    hook("merge_graph_inputs", hops, "_merge_graph_inputs",
         _wrap_merge_graph_inputs)
    for cls_name, roles in sorted(_HOP_ROLES.items()):
        cls = getattr(hops, cls_name, None)
        if cls is None:
            _hooks["hop_call." + cls_name] = "missing"
            continue
        # only the class's own _call_function, not one it inherits
        if "_call_function" not in cls.__dict__:
            _hooks["hop_call." + cls_name] = "missing"
            continue
        hook("hop_call." + cls_name, cls, "_call_function",
             lambda orig, roles=roles: _wrap_hop_call(orig, roles))
    hook("check_allowed_side_effect", se_mod.SideEffects,
         "check_allowed_side_effect", _wrap_check_allowed)
    hook("codegen_update_mutated", se_mod.SideEffects, "codegen_update_mutated",
         _wrap_codegen_update_mutated)
    hook("trace_frame", cf, "trace_frame", _wrap_trace_frame)
    hook("output_graph_cleanup", og_mod.OutputGraph, "cleanup",
         _wrap_output_graph_cleanup)
