"""diff_big.py -- grows a trace to N events for bench/diff_bench.sh.

Usage: python diff_big.py SRC.db OUT.db N

Copies SRC (a recording) to OUT and repeats its compile-level events (every
event with a compile id) under fresh compile ids until the events table
holds at least N rows: the same frames with many more compiles, which is
what a recompile storm looks like to the comparison engine.
"""
import shutil
import sqlite3
import sys

src, out, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(src, out)
db = sqlite3.connect(out)
rows = db.execute(
    "SELECT t_ns, thread, kind_id, code_id, code2_id, compile_id, num, text_id, data_id,"
    " key_id, blob_id, seq FROM events WHERE compile_id IS NOT NULL AND kind_id NOT IN"
    " (SELECT id FROM strings WHERE text = 'trace') ORDER BY seq").fetchall()
# Schema 3 keeps a guard's source, location and templates in guard_fields.
guard_fields = {}
if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'guard_fields'").fetchone()[0]:
    guard_fields = {r[0]: r[1:] for r in db.execute(
        "SELECT seq, source_id, location_id, text_id, masked_id FROM guard_fields")}
seq = db.execute("SELECT max(seq) FROM events").fetchone()[0]
cids = {r[5] for r in rows}
texts = dict(db.execute("SELECT id, text FROM strings WHERE id IN (%s)"
                        % ",".join(str(c) for c in cids)))
next_id = db.execute("SELECT max(id) FROM strings").fetchone()[0] + 1
have = db.execute("SELECT count(*) FROM events").fetchone()[0]
copy = 0
while have < want:
    copy += 1
    remap = {}
    for c in cids:
        remap[c] = next_id
        db.execute("INSERT INTO strings(id, text) VALUES (?, ?)",
                   (next_id, "%d%s" % (copy + 1000, texts[c][texts[c].index("/"):])))
        next_id += 1
    ev, gf = [], []
    for r in rows:
        seq += 1
        ev.append((seq,) + r[:5] + (remap[r[5]],) + r[6:11])
        if r[11] in guard_fields:
            gf.append((seq,) + guard_fields[r[11]])
    db.executemany(
        "INSERT INTO events(seq, t_ns, thread, kind_id, code_id, code2_id, compile_id, num,"
        " text_id, data_id, key_id, blob_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", ev)
    db.executemany("INSERT INTO guard_fields VALUES (?,?,?,?,?)", gf)
    have += len(rows)
if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'event_counts'").fetchone()[0]:
    # The writer's per-kind counts, for the grown events table.
    db.execute("DELETE FROM event_counts")
    db.execute("INSERT INTO event_counts SELECT kind_id, count(*) FROM events GROUP BY kind_id")
db.commit()
db.close()
print(have)
