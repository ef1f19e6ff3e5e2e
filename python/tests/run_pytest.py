"""Runs pytest for a ctest entry (python/CMakeLists.txt): the arguments are pytest's. Exits
77 (ctest: skipped) with a loud SKIPPED line when pytest is not installed (Debian
python3-pytest; scripts/deps.sh test installs it)."""

import sys

try:
    import pytest
except ImportError:
    print("SKIPPED: pytest is not installed (apt-get install python3-pytest): "
          "the tpuprof Python tests did not run", flush=True)
    sys.exit(77)



class Markers:
    """The markers the ctest entries select on (also for tests outside python/tests)."""

    @staticmethod
    def pytest_configure(config):
        config.addinivalue_line("markers", "torch: needs python3-torch (ctest python_torch)")
        config.addinivalue_line("markers", "install: installs the package (ctest python_install)")


# -p no:cacheprovider: nothing written into the source tree; -ra: every skip is listed.
sys.exit(pytest.main(["-q", "-ra", "-p", "no:cacheprovider", "--strict-markers", *sys.argv[1:]],
                     plugins=[Markers()]))
