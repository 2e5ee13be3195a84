"""embed_py.py -- dynrec's Python sources as a C header (build/embedded_py.h).

    python tools/embed_py.py OUT FILE.py...

For each source, its text (a C string) and its code compiled by this
interpreter and marshalled (a byte array), under the name "<dynrec FILE>"
that tracebacks show; DR_EMBED_PY_VERSION says for which Python the code
was made.  recorder/embed.c unmarshals the code when it runs on that
Python (compiling the sources at every start costs a recording about 1%
of a small program's instructions) and compiles the text otherwise.
The Makefile runs this with the venv's Python, whose libpython dynrec
links."""
import marshal
import os
import sys


def c_string(data):
    out, line = [], []
    for b in data:
        if b == 0x0A:
            line.append("\\n")
            out.append('    "%s"' % "".join(line))
            line = []
        elif b in (0x22, 0x5C):
            line.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F and b != 0x3F:  # '?': no trigraphs
            line.append(chr(b))
        else:
            line.append("\\%03o" % b)
    if line:
        out.append('    "%s"' % "".join(line))
    return "\n".join(out) or '    ""'


def c_bytes(data):
    return "\n".join("    " + "".join("%d," % b for b in data[i:i + 24])
                     for i in range(0, len(data), 24))


def main(out, files):
    v = sys.version_info
    parts = ["/* generated from %s by tools/embed_py.py */" % " ".join(files),
             "#define DR_EMBED_PY_VERSION 0x%02x%02x" % (v.major, v.minor)]
    table = []
    for f in files:
        name = os.path.splitext(os.path.basename(f))[0]
        with open(f, "rb") as fh:
            src = fh.read()
        code = compile(src, "<dynrec %s>" % f, "exec", dont_inherit=True, optimize=0)
        pyc = marshal.dumps(code)
        parts.append("static const char dr_py_%s[] =\n%s;" % (name, c_string(src)))
        parts.append("static const unsigned char dr_pyc_%s[] = {\n%s\n};" % (name, c_bytes(pyc)))
        table.append('    {"%s", "<dynrec %s>", dr_py_%s, dr_pyc_%s, sizeof dr_pyc_%s},'
                     % (name, f, name, name, name))
    parts.append("static const DrEmbedded dr_embedded[] = {\n%s\n};" % "\n".join(table))
    tmp = out + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("\n".join(parts) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
