"""py_capture.py BUILD_DIR OUT_DIR — records a small capture with the build tree's tpuprof Python
package (BUILD_DIR/python) into OUT_DIR and prints its dump directory. Shared by the tests that
need a real capture made at test time: --trace_file with a capture (tests/trace/test_trace.py)
and the capture page in Chromium (tests/browser/page.test.mjs).

What it records, in mode 2 on two threads: a "load model" activity; the runtime call
"enable_profile" (where a device dump's profiling would begin: the first runtime call, which
--trace_file aligns the device to); three steps of graph "resnet50" (step 0 a warm-up step), each with an
activity "preprocess" holding the operator Normalize (which holds Sub and Div: step -> activity
-> operator -> operator, nesting depth 3) with tensors and attributes, the runtime call
"bmrt_launch_tensor", an activity "postprocess" holding Softmax, a mark and a counter sample
"queue_depth"; the runtime call "disable_profile"; and a worker thread "decoder" with one "decode" activity per step and its own
counter "decoded_bytes". Timings are the run's own (short sleeps make every event last at
least 0.2 ms). Exit 77 with a SKIPPED line when the Python package is not built."""

import os
import subprocess
import sys
import threading
import time


def preload_sanitizers(build):
    """In an ASan+UBSan build the extension needs the sanitizer runtimes loaded first: re-runs
    this script with them in LD_PRELOAD (as python/CMakeLists.txt does for the Python tests)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            sanitized = "TP_SANITIZE:BOOL=ON" in f.read()
    except OSError:
        return
    if not sanitized or os.environ.get("LD_PRELOAD"):
        return
    libs = []
    for name in ("libasan.so", "libubsan.so"):
        path = subprocess.run(["cc", "-print-file-name=" + name], capture_output=True,
                              text=True).stdout.strip()
        libs.append(path)
    env = dict(os.environ, LD_PRELOAD=":".join(libs),
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def main():
    build, out = sys.argv[1], sys.argv[2]
    preload_sanitizers(build)
    tree = os.path.join(build, "python")
    if not os.path.isdir(os.path.join(tree, "tpuprof")):
        print("SKIPPED: the tpuprof Python package is not built (%s): no Python capture" % tree)
        sys.exit(77)
    os.makedirs(out, exist_ok=True)
    os.environ["TPUPROF_DIR"] = out
    os.environ.pop("TPUPROF", None)
    sys.path.insert(0, tree)
    import tpuprof

    T = tpuprof.Tensor
    tpuprof.enable(mode=2)
    tpuprof.meta("model", "resnet50")
    tpuprof.meta("batch_size", "4")
    tpuprof.thread_name("host loop")
    ready = threading.Event()

    def decoder():
        tpuprof.thread_name("decoder")
        for i in range(3):
            with tpuprof.activity("decode", step=i, meta="jpeg batch %d" % i):
                time.sleep(0.0004)
            tpuprof.counter("decoded_bytes", 150528.0 * (i + 1))
        ready.set()

    with tpuprof.activity("load model", meta="resnet50.bmodel"):
        time.sleep(0.0005)
    worker = threading.Thread(target=decoder)
    worker.start()
    with tpuprof.runtime("enable_profile"):
        time.sleep(0.0001)
    img = T((4, 3, 224, 224), "uint8", "image")
    x = T((4, 3, 224, 224), "fp32", "input")
    for i in range(3):
        with tpuprof.step("resnet50", i, warmup=(i == 0)):
            with tpuprof.activity("preprocess", step=i):
                with tpuprof.op("Normalize", "input.norm", inputs=[img], outputs=[x],
                                attrs={"mean": "0.485,0.456,0.406", "layout": "NCHW"}):
                    with tpuprof.op("Sub", "input.norm.sub", inputs=[x, T((3,), "fp32", "mean")],
                                    outputs=[x]):
                        time.sleep(0.0002)
                    with tpuprof.op("Div", "input.norm.div", inputs=[x, T((3,), "fp32", "std")],
                                    outputs=[x], attrs={"eps": 1e-6}):
                        time.sleep(0.0002)
            tpuprof.counter("queue_depth", float(2 - i))
            with tpuprof.runtime("bmrt_launch_tensor"):
                time.sleep(0.0008)
            tpuprof.mark("outputs ready", category="sync")
            with tpuprof.activity("postprocess", step=i):
                with tpuprof.op("Softmax", "prob", inputs=[T((4, 1000), "fp32", "logits")],
                                outputs=[T((4, 1000), "fp32", "prob")], attrs={"axis": 1}):
                    time.sleep(0.0002)
    with tpuprof.runtime("disable_profile"):
        time.sleep(0.0001)
    ready.wait()
    worker.join()
    print(tpuprof.disable())


if __name__ == "__main__":
    main()
