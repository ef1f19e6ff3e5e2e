#!/usr/bin/python3
"""pftrace_census.py — DEBUG TOOL: where the raw bytes of a Perfetto trace go.

Reads a .pftrace (plain packets, or zlib `compressed_packets` chunks, which it inflates) and
attributes every raw byte of the packet stream to a field path: the key, the length prefix
and the value of each field, e.g. `packet.track_event.debug_annotations[Cmd Id].value`.
Annotation names and event names are resolved through the interned data (iids are global
in tpuprof's writer). Prints bytes per field path, per slice (SLICE_BEGIN events), largest
first, and the total raw bytes per slice.

Usage: pftrace_census.py FILE.pftrace [--max-packets N]
Only the schema subset tpuprof writes is named (src/writers/perfetto/pb.h); other fields
show as `#NUMBER`.
"""
import sys
import zlib
from collections import defaultdict

PACKET = {8: "timestamp", 10: "trusted_packet_sequence_id", 11: "track_event",
          12: "interned_data", 13: "sequence_flags", 6: "clock_snapshot", 58: "timestamp_clock_id",
          59: "trace_packet_defaults", 60: "track_descriptor", 87: "first_packet_on_sequence",
          50: "compressed_packets"}
EVENT = {3: "category_iids", 4: "debug_annotations", 9: "type", 10: "name_iid",
         11: "track_uuid", 23: "name", 30: "counter_value", 44: "double_counter_value",
         47: "flow_ids", 48: "terminating_flow_ids"}
ANN = {1: "name_iid", 2: "bool_value", 3: "uint_value", 4: "int_value", 5: "double_value",
       6: "string_value", 10: "name", 17: "string_value_iid"}
INTERNED = {1: "event_categories", 2: "event_names", 3: "debug_annotation_names",
            29: "debug_annotation_string_values"}


def varint(b, p):
    v = s = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, p


def fields(b, p, end):
    """Yields (num, wire type, value or (start, end), key bytes, length-prefix bytes)."""
    while p < end:
        k0 = p
        key, p = varint(b, p)
        num, wt = key >> 3, key & 7
        kb = p - k0
        if wt == 0:
            v0 = p
            v, p = varint(b, p)
            yield num, wt, v, kb, 0, p - v0
        elif wt == 1:
            yield num, wt, int.from_bytes(b[p:p + 8], "little"), kb, 0, 8
            p += 8
        elif wt == 2:
            l0 = p
            n, p = varint(b, p)
            yield num, wt, (p, p + n), kb, p - l0, n
            p += n
        elif wt == 5:
            yield num, wt, None, kb, 0, 4
            p += 4
        else:
            raise ValueError("bad wire type")


class Census:
    def __init__(self):
        self.bytes = defaultdict(int)
        self.count = defaultdict(int)
        self.names = {}  # (kind, iid) -> str
        self.slices = 0
        self.packets = 0
        self.raw = 0

    def add(self, path, n, count=True):
        self.bytes[path] += n
        if count:
            self.count[path] += 1

    def interned(self, b, s, e):
        for num, wt, v, kb, lb, n in fields(b, s, e):
            kind = INTERNED.get(num, "#%d" % num)
            self.add("packet.interned_data.%s" % kind, kb + lb + n)
            if wt != 2:
                continue
            iid, name = None, None
            for n2, w2, v2, _, _, _ in fields(b, v[0], v[1]):
                if n2 == 1:
                    iid = v2
                elif n2 == 2 and w2 == 2:
                    name = bytes(b[v2[0]:v2[1]]).decode("utf-8", "replace")
            if iid is not None:
                self.names[(num, iid)] = name

    def annotation(self, b, s, e, total):
        name = None
        parts = []
        for num, wt, v, kb, lb, n in fields(b, s, e):
            if num == 1:
                name = self.names.get((3, v), "iid%d" % v)
            elif num == 10 and wt == 2:
                name = bytes(b[v[0]:v[1]]).decode("utf-8", "replace")
            parts.append((ANN.get(num, "#%d" % num), kb + lb + n))
        name = name or "?"
        self.add("ann[%s] (all)" % name, total)
        for f, n in parts:
            self.add("ann[%s].%s" % (name, f), n, False)

    def event(self, b, s, e):
        for num, wt, v, kb, lb, n in fields(b, s, e):
            f = EVENT.get(num, "#%d" % num)
            if num == 9 and v == 1:
                self.slices += 1
            if num == 4:
                self.annotation(b, v[0], v[1], kb + lb + n)
                continue
            self.add("packet.track_event.%s" % f, kb + lb + n)

    def packet(self, b, s, e):
        self.packets += 1
        # interned data first: the reader applies it before the payload
        for num, wt, v, kb, lb, n in fields(b, s, e):
            if num == 12:
                self.interned(b, v[0], v[1])
        for num, wt, v, kb, lb, n in fields(b, s, e):
            f = PACKET.get(num, "#%d" % num)
            if num == 11:
                self.add("packet.track_event (key+len)", kb + lb)
                self.event(b, v[0], v[1])
            elif num == 12:
                self.add("packet.interned_data (key+len)", kb + lb)
            elif num == 50:
                self.chunk(bytes(b[v[0]:v[1]]))
            else:
                self.add("packet.%s" % f, kb + lb + n)

    def chunk(self, z):
        self.stream(zlib.decompress(z), True)

    def stream(self, b, inner):
        p = 0
        end = len(b)
        while p < end:
            k0 = p
            key, p = varint(b, p)
            n, p = varint(b, p)
            if (key >> 3) == 1 and body_is_compressed(b, p, p + n):
                self.packet(b, p, p + n)
            else:
                self.raw += n + (p - k0)
                self.add("Trace.packet (key+len)", p - k0)
                self.packet(b, p, p + n)
            p += n
            if self.max and self.packets >= self.max:
                return


def body_is_compressed(b, s, e):
    return e - s >= 2 and b[s] == 0x92 and b[s + 1] == 0x03


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 1
    c = Census()
    c.max = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--max-packets" else 0
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    c.stream(memoryview(data), False)
    sl = max(c.slices, 1)
    print("packets %d, slices %d, raw packet bytes %d (%.2f B/slice)" %
          (c.packets, c.slices, c.raw, c.raw / sl))
    print("%-62s %12s %9s %9s" % ("field", "bytes", "B/slice", "n/slice"))
    for k, v in sorted(c.bytes.items(), key=lambda x: -x[1]):
        if v / sl < 0.005:
            continue
        cnt = c.count.get(k)
        print("%-62s %12d %9.2f %9s" % (k[:62], v, v / sl,
                                         "%.2f" % (cnt / sl) if cnt else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
