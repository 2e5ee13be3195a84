"""pytest plugin: one dynrec trace per test, and torch.compile budgets.

Registered through the ``pytest11`` entry point when dynrec is installed;
it does nothing unless asked:

- ``pytest --dynrec DIR`` writes ``DIR/<node id>.db`` for every test (the
  node id made a file name; meta ``test.nodeid`` and ``test.outcome``),
  passing, failing, erroring or skipped.
- Budgets: ``@pytest.mark.dynrec(max_recompiles=0, max_graph_breaks=0)``,
  or ``--dynrec-max-recompiles N`` / ``--dynrec-max-graph-breaks N`` (ini:
  ``dynrec_max_recompiles``, ``dynrec_max_graph_breaks``) for every test.
  A test over its budget fails, with the guard failures behind each
  recompile and the reason of each graph break in the failure, and its
  trace kept: in DIR, or without ``--dynrec`` in pytest's cache directory
  (``.pytest_cache/d/dynrec``).  A marker's value wins over the option's.

The recording spans the test's setup and call (fixtures that compile are
in it); teardown is not recorded.  What counts as a recompile or a graph
break is the trace's own views (v_compiles.recompile, v_graph_breaks),
read with the dynrec binary, as ``dynrec show`` reads them.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from typing import Any, Dict, Generator, List, Optional, Tuple

import pytest

import dynrec



def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("dynrec", "dynrec: record torch.compile (Dynamo) per test")
    group.addoption("--dynrec", metavar="DIR", default=None,
                    help="write one dynrec trace per test into DIR (DIR/<node id>.db)")
    group.addoption("--dynrec-max-recompiles", metavar="N", type=int, default=None,
                    help="fail a test that recompiles more than N times (a marker's "
                         "max_recompiles wins)")
    group.addoption("--dynrec-max-graph-breaks", metavar="N", type=int, default=None,
                    help="fail a test with more than N graph breaks (a marker's "
                         "max_graph_breaks wins)")
    parser.addini("dynrec_max_recompiles", "the default of --dynrec-max-recompiles",
                  default=None)
    parser.addini("dynrec_max_graph_breaks", "the default of --dynrec-max-graph-breaks",
                  default=None)


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        "dynrec(max_recompiles=None, max_graph_breaks=None): record the test with dynrec "
        "and fail it when it recompiles or graph-breaks more than this")
    config.pluginmanager.register(_Recorder(config), "dynrec-recorder")


def _budget(config: Any, opt: str, ini: str) -> Optional[int]:
    v: Optional[int] = config.getoption(opt)
    if v is None:
        text = config.getini(ini)
        if text not in (None, ""):
            try:
                v = int(str(text).strip())
            except ValueError:
                raise pytest.UsageError("%s = %r in the ini file is not a number" % (ini, text))
    if v is not None and v < 0:
        raise pytest.UsageError("dynrec: a budget must be 0 or more, not %d" % v)
    return v


_UNSAFE = re.compile(r"[^A-Za-z0-9_.,:=+@%\[\]-]")


def _file_name(nodeid: str, taken: Dict[str, str]) -> str:
    """A node id as a file name in one directory: "/" as ".", so that
    ``tests/test_x.py::test_a[1]`` is ``tests.test_x.py::test_a[1].db``;
    other characters a shell or terminal would trip on as "_", with a short
    digest of the id when any was changed, the name had to be cut, or
    another id of this session has the name already."""
    name = nodeid.replace("/", ".")
    safe = _UNSAFE.sub("_", name).lstrip(".-") or "test"
    if safe != name or len(safe) > 160 or taken.get(safe, nodeid) != nodeid:
        digest = hashlib.sha1(nodeid.encode("utf-8", "replace")).hexdigest()[:8]
        safe = "%s-%s" % (safe[:160], digest)
    taken[safe] = nodeid
    return safe + ".db"


class _Recorder:
    def __init__(self, config: Any) -> None:
        self.config = config
        d = config.getoption("dynrec")
        self.dir: Optional[str] = os.path.abspath(str(d)) if d else None
        self.max_recompiles = _budget(config, "dynrec_max_recompiles", "dynrec_max_recompiles")
        self.max_graph_breaks = _budget(config, "dynrec_max_graph_breaks",
                                        "dynrec_max_graph_breaks")
        self.traces = 0
        self.names: Dict[str, str] = {}
        self.kept: List[str] = []
        self.current: Optional[Tuple[Any, str, Optional[int], Optional[int]]] = None
        if self.dir:
            try:
                os.makedirs(self.dir, exist_ok=True)
            except OSError as exc:
                raise pytest.UsageError("--dynrec %s: %s" % (d, exc.strerror))

    def _budgets(self, item: Any) -> Tuple[Optional[int], Optional[int]]:
        rec, gb = self.max_recompiles, self.max_graph_breaks
        for mark in item.iter_markers("dynrec"):
            if mark.args:
                raise pytest.UsageError("%s: dynrec marker takes keywords only "
                                        "(max_recompiles=, max_graph_breaks=)" % item.nodeid)
            unknown = set(mark.kwargs) - {"max_recompiles", "max_graph_breaks"}
            if unknown:
                raise pytest.UsageError("%s: dynrec marker: unknown %s" % (
                    item.nodeid, ", ".join(sorted(unknown))))
            rec = mark.kwargs.get("max_recompiles", rec)
            gb = mark.kwargs.get("max_graph_breaks", gb)
            break  # the closest marker
        return rec, gb

    def _dir(self) -> str:
        if self.dir:
            return self.dir
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            return str(cache.mkdir("dynrec"))
        d = os.path.join(str(self.config.rootpath), ".dynrec")
        os.makedirs(d, exist_ok=True)
        return d

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> Generator[None, None, None]:
        self._begin(item)
        yield

    def _begin(self, item: Any) -> None:
        self.current = None
        rec, gb = self._budgets(item)
        if not self.dir and rec is None and gb is None:
            return
        if dynrec.recording() is not None:
            return  # the process records already (dynrec.start outside the test)
        path = os.path.join(self._dir(), _file_name(item.nodeid, self.names))
        trace = dynrec.start(path)
        if trace is None:
            return  # under `dynrec run`: the whole run is one trace
        meta = _meta()
        if meta is not None:
            meta("test.nodeid", item.nodeid)
        self.current = (item, trace, rec, gb)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Generator[None, Any, None]:
        outcome = yield
        report = outcome.get_result()
        cur = self.current
        if cur is None or cur[0] is not item:
            return
        if call.when == "call" or (call.when == "setup" and not report.passed):
            self.current = None
            self._end(report, *cur[1:])

    def _end(self, report: Any, trace: str, rec: Optional[int], gb: Optional[int]) -> None:
        state = report.outcome
        if report.when == "setup" and report.failed:
            state = "error"
        meta = _meta()
        if meta is not None:
            meta("test.outcome", state)
        try:
            dynrec.stop(0 if report.passed or report.skipped else 1)
        except OSError as exc:
            report.sections.append(("dynrec", "the trace %s is incomplete: %s" % (trace, exc)))
        self.traces += 1
        if report.skipped or (rec is None and gb is None):
            return
        over = _over_budget(trace, rec, gb)
        if over and report.passed:
            report.outcome = "failed"
            report.longrepr = over + "\ntrace kept: %s" % trace
            self.kept.append(trace)
        elif over:
            report.sections.append(("dynrec budget", over))
        if not over and not self.dir:
            for p in (trace, trace + "-wal", trace + "-shm"):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.dir and self.traces:
            terminalreporter.write_line("dynrec: %d trace%s in %s" % (
                self.traces, "" if self.traces == 1 else "s", self.dir))
        for p in self.kept:
            terminalreporter.write_line("dynrec: over budget, trace kept: %s" % p)


def _meta() -> Any:
    mod = __import__("sys").modules.get("_dynrec")
    return getattr(mod, "meta", None) if getattr(mod, "in_process", 0) else None


def _sql(trace: str, query: str) -> List[Dict[str, Any]]:
    out = subprocess.run([dynrec.binary(), "sql", "--json", trace, query],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if out.returncode != 0:
        raise RuntimeError("dynrec sql on %s: %s" % (trace, out.stderr.decode("utf-8", "replace")))
    rows = json.loads(out.stdout.decode("utf-8", "replace") or "[]")
    return rows if isinstance(rows, list) else []


# What each budget counts, as one line per item: the trace's own views.
_COUNTED = (
    ("recompile",
     "SELECT 'recompile ' || c.compile_id || ' of ' || c.display_name || ' (' || "
     "coalesce(c.user_location, '?') || '): guard failed: ' || coalesce("
     "(SELECT group_concat(f.reason, '; ') FROM v_guard_failures f "
     " WHERE f.compile_id = c.compile_id AND f.epoch = c.epoch), '(no reason recorded)') AS line "
     "FROM v_compiles c WHERE c.recompile ORDER BY c.seq"),
    ("graph break",
     "SELECT 'graph break in ' || coalesce(c.display_name, '?') || ' at ' || b.filename || ':' "
     "|| b.lineno || ' (compile ' || b.compile_id || '): ' || coalesce(b.reason, '?') AS line "
     "FROM v_graph_breaks b LEFT JOIN v_compiles c "
     "ON c.compile_id = b.compile_id AND c.epoch = b.epoch ORDER BY b.seq"),
)


def _over_budget(trace: str, rec: Optional[int], gb: Optional[int]) -> str:
    """The failure text of a trace over its budgets, or ""."""
    lines: List[str] = []
    try:
        for (noun, query), budget in zip(_COUNTED, (rec, gb)):
            if budget is None:
                continue
            rows = _sql(trace, query)
            if len(rows) > budget:
                lines.append("dynrec: %d %s%s, budget %d" % (
                    len(rows), noun, "" if len(rows) == 1 else "s", budget))
                lines.extend("  %s" % r.get("line") for r in rows)
    except (OSError, RuntimeError, ValueError) as exc:
        return "dynrec: the budget cannot be checked: %s" % exc
    return "\n".join(lines)
