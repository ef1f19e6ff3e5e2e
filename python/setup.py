"""setuptools build of the tpuprof package (pyproject.toml): the extension tpuprof._tpuprof
from ext/*.c with libtpuprof's sources compiled in (the list of src/capture/CMakeLists.txt's
tpuprof_obj, so a split of the library needs no change here; each is compiled through a stub
in build/capture_src/, since setuptools takes no source outside this directory), the version from
the top CMakeLists.txt's project(VERSION) (with tpuprof_version.h generated from
cmake/tpuprof_version.h.in, as CMake does). TPUPROF_SOURCE_DIR names the repository when this directory was
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
    """The one project version: project(tpuprof VERSION x.y.z) in the top CMakeLists.txt."""
    cm = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*tpuprof\s+VERSION\s+(\d+)\.(\d+)\.(\d+)", cm)
    if not m:
        raise SystemExit(f"{ROOT}/CMakeLists.txt: no project(tpuprof VERSION x.y.z)")
    return m.groups()


def version_header():
    """tpuprof_version.h from cmake/tpuprof_version.h.in, as CMake's configure_file writes it
    (tpuprof.h includes it); returns the include directory that holds tpuprof/."""
    major, minor, patch = version()
    text = (ROOT / "cmake" / "tpuprof_version.h.in").read_text()
    for k, v in (("PROJECT_VERSION_MAJOR", major), ("PROJECT_VERSION_MINOR", minor),
                 ("PROJECT_VERSION_PATCH", patch),
                 ("PROJECT_VERSION", f"{major}.{minor}.{patch}")):
        text = text.replace(f"@{k}@", v)
    out = HERE / "build" / "generated"
    (out / "tpuprof").mkdir(parents=True, exist_ok=True)
    (out / "tpuprof" / "tpuprof_version.h").write_text(text)
    return out


os.chdir(HERE)
ext = Extension(
    "tpuprof._tpuprof",
    sources=sorted(str(p.relative_to(HERE)) for p in (HERE / "ext").glob("*.c")) +
    capture_sources(),
    include_dirs=[str(version_header()), str(ROOT / "include"), str(ROOT / "src"),
                  str(HERE / "ext")],
    define_macros=[("_POSIX_C_SOURCE", "200809L"), ("_DEFAULT_SOURCE", None),
                   ("TP_VERSION", '"%s"' % ".".join(version()))],
    extra_compile_args=["-std=c11", "-fvisibility=hidden"],
    # The module calls its own copy of libtpuprof even if another one is loaded.
    extra_link_args=["-Wl,-Bsymbolic", "-pthread"],
)

setup(version=".".join(version()), ext_modules=[ext])
