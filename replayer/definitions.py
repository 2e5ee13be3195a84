"""definitions.py -- what "definitions only" allows, shared by the replay
driver (replay.py) and the repro generator (repro.py), which run it first in
their own namespace: the one rule for which module-level statements of a
trace's stored sources may run."""
import ast

_SAFE_CALLS = {"namedtuple", "NamedTuple", "TypeVar", "ParamSpec"}


def _simple(node):
    """An expression that only names or builds constants: a module-level
    assignment of one runs (definitions only); anything else is left out."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_simple(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _simple(k) for k in node.keys) and all(
            _simple(v) for v in node.values)
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _simple(node.value)
    if isinstance(node, ast.UnaryOp):
        return _simple(node.operand)
    if isinstance(node, ast.BinOp):
        return _simple(node.left) and _simple(node.right)
    if isinstance(node, ast.Subscript):
        return _simple(node.value) and _simple(node.slice)
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        return name in _SAFE_CALLS and all(_simple(a) for a in node.args) and all(
            _simple(k.value) for k in node.keywords)
    return False
