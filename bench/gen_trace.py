#!/usr/bin/python3
"""gen_trace.py OUT MIB — writes a Chrome-trace JSON file of about MIB MiB for the reader
benchmark: a {"traceEvents": [...]} object of Kineto-like events on 4 threads of 2 processes —
X operators with args (ints, strings, a nested object), B/E pairs, async b/e pairs with 64-bit
ids, C counters, M names — with fractional-µs timestamps. Deterministic (no randomness)."""
import sys

out, mib = sys.argv[1], float(sys.argv[2])
target = int(mib * 1024 * 1024)
ops = ["aten::conv2d", "aten::relu", "aten::linear", "aten::add", "cudaLaunchKernel",
       "void at::native::vectorized_elementwise_kernel<4, float>", "aten::softmax"]
with open(out, "w") as f:
    f.write('{"schemaVersion": 1, "traceEvents": [\n')
    f.write('{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"python3"}},\n')
    f.write('{"ph":"M","name":"thread_name","pid":1,"tid":11,"args":{"name":"main"}},\n')
    written, i, ts = 0, 0, 1695835542514261
    while written < target:
        lines = []
        for k in range(2000):
            n = i + k
            t = ts + n * 7
            pid, tid = 1 + (n & 1), 11 + (n & 3)
            lines.append('{"ph":"X","cat":"cpu_op","name":"%s","pid":%d,"tid":%d,"ts":%d.%03d,'
                         '"dur":%d.%03d,"args":{"External id":%d,"Ev Idx":%d,"Input Dims":[[1,64,56,56],[64]],'
                         '"Input type":["float","float"],"stream":7}}' %
                         (ops[n % 7], pid, tid, t, n % 1000, 3 + n % 5, (n * 7) % 1000, n, n))
            if n % 4 == 0:
                lines.append('{"ph":"B","name":"step","pid":%d,"tid":%d,"ts":%d}' % (pid, tid, t))
                lines.append('{"ph":"E","pid":%d,"tid":%d,"ts":%d.500}' % (pid, tid, t + 5))
            if n % 8 == 0:
                lines.append('{"ph":"b","cat":"op","name":"wait","id":%d,"pid":%d,"ts":%d}' %
                             (18446744073709551615 - n, pid, t))
                lines.append('{"ph":"e","cat":"op","name":"wait","id":%d,"pid":%d,"ts":%d}' %
                             (18446744073709551615 - n, pid, t + 3))
                lines.append('{"ph":"C","name":"mem","pid":%d,"ts":%d,"args":{"used":%d}}' %
                             (pid, t, n * 4096))
        chunk = ",\n".join(lines) + ",\n"
        f.write(chunk)
        written += len(chunk)
        i += 2000
    f.write('{"ph":"i","name":"end","pid":1,"tid":11,"ts":%d,"s":"g"}\n]}\n' % (ts + i * 7))
