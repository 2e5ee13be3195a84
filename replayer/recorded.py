"""recorded.py -- what replay.py and repro.py read of a trace the same way.

Both read a stranger's trace through a query function of the interpreter
they run in (_dynrec.source_query in the replay, _dynrec_repro.query in
repro): the meta table, and the capture events with the frame each belongs
to.  Malformed input raises Refused, which both turn into exit status 65
with one line naming what was wrong."""

import json


class Refused(Exception):
    """The trace is malformed: exit status 65."""


def number(s, what):
    """s (a column of the trace) as an int; Refused naming `what` if it is none."""
    try:
        return int(s)
    except (TypeError, ValueError):
        raise Refused("%s is not a number" % what)


def meta(query):
    """The meta table, key -> value."""
    return {k: v for k, v in query("SELECT key, value FROM meta") if k is not None}


def captures(query):
    """The capture events in recorded order, each a dict: no (the capture
    number), cid (its stored compile id), filename, qualname, line (the
    frame's code), data (the event's JSON object; {} when it is none),
    blob, reason (why it is not replayable, if it is not) and seq."""
    rows = query(
        "SELECT e.num, e.compile_id, v.filename, v.qualname, v.firstlineno, e.data, e.blob_id,"
        " e.text, e.seq FROM v_ev e LEFT JOIN v_code v ON v.code_id = e.code_id"
        " WHERE e.kind = 'capture' ORDER BY e.seq")
    caps = []
    for num, cid, filename, qualname, line, data, blob, text, seq in rows:
        try:
            d = json.loads(data) if data else {}
        except ValueError:
            d = {}
        caps.append({"no": number(num, "a capture number"), "cid": cid or "?",
                     "filename": filename or "", "qualname": qualname or "?",
                     "line": number(line or 0, "a first line"),
                     "data": d if isinstance(d, dict) else {},
                     "blob": int(blob) if blob else None, "reason": text,
                     "seq": number(seq, "a sequence number")})
    return caps


def states(query):
    """compile id -> the capture numbers of the module state its guards read
    (capture_state events, from dynrec 0.7.1; none before), in order."""
    out = {}
    for num, cid in query("SELECT num, compile_id FROM v_ev WHERE kind = 'capture_state'"
                          " ORDER BY seq"):
        out.setdefault(cid or "?", []).append(number(num, "a capture number"))
    return out
