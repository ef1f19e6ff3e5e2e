"""setuptools build of the tpuprof package (pyproject.toml): the extension tpuprof._tpuprof
from ext/*.c with libtpuprof's sources compiled in (the list of src/capture/CMakeLists.txt's
tpuprof_obj, so a split of the library needs no change here; each is compiled through a stub
in build/capture_src/, since setuptools takes no source outside this directory), the version from
include/tpuprof/tpuprof.h. TPUPROF_SOURCE_DIR names the repository when this directory was
copied elsewhere."""

import os
import re
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("TPUPROF_SOURCE_DIR", HERE.parent)).resolve()


def capture_sources():
    cm = (ROOT / "src" / "capture" / "CMakeLists.txt").read_text()
    m = re.search(r"add_library\(\s*tpuprof_obj\s+OBJECT\s+([^)]*)\)", cm)
    if not m:
        raise SystemExit(f"{ROOT}/src/capture/CMakeLists.txt: no add_library(tpuprof_obj OBJECT ...)")
    # setuptools takes only paths inside this directory: one stub per source includes it.
    stubs = HERE / "build" / "capture_src"
    stubs.mkdir(parents=True, exist_ok=True)
    out = []
    for f in m.group(1).split():
        stub = stubs / f.replace("/", "_")
        stub.write_text(f'#include "{ROOT / "src" / "capture" / f}"\n')
        out.append(str(stub.relative_to(HERE)))
    return out


def version():
    h = (ROOT / "include" / "tpuprof" / "tpuprof.h").read_text()
    parts = [re.search(rf"#define TPUPROF_VERSION_{k} (\d+)", h).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


os.chdir(HERE)
ext = Extension(
    "tpuprof._tpuprof",
    sources=sorted(str(p.relative_to(HERE)) for p in (HERE / "ext").glob("*.c")) +
    capture_sources(),
    include_dirs=[str(ROOT / "include"), str(ROOT / "src"), str(HERE / "ext")],
    define_macros=[("_POSIX_C_SOURCE", "200809L"), ("_DEFAULT_SOURCE", None),
                   ("TP_VERSION", f'"{version()}"')],
    extra_compile_args=["-std=c11", "-fvisibility=hidden"],
    # The module calls its own copy of libtpuprof even if another one is loaded.
    extra_link_args=["-Wl,-Bsymbolic", "-pthread"],
)

setup(version=version(), ext_modules=[ext])
