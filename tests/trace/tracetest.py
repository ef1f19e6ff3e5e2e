"""tracetest.py — helpers shared by the trace end-to-end tests of this folder: a failure list
that a test fills through check() and turns into its exit code, and the protobuf varint reader
their Perfetto decoders use. Imported from the test's own folder (Python puts a script's folder
first on sys.path)."""

failures = []


def check(cond, what):
    """Records (and prints) a failure unless cond holds."""
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def pb_varint(b, i):
    """The protobuf varint at b[i:]: (value, index after it)."""
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i
