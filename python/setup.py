"""Builds the extension module sift._sift with CMake (python/CMakeLists.txt).

pip builds the package in place (pip >= 21.3), so the engine's sources are
found one directory up. The CMake build tree is reused between installs
(incremental): $SIFT_PYTHON_BUILD_DIR, or build/python in the repository; a
tree configured for another interpreter is reconfigured. $SIFT_BUILD_JOBS
sets the parallel jobs (default: all CPUs). $SIFT_ENGINE_PREFIX, when set,
names an installed sift package (position-independent static libraries) to
link instead of building the engine in that tree; a tree configured with
another prefix, or none, is reconfigured.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIFT_SOURCE_DIR") or os.path.dirname(HERE)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(ROOT, "include", "sift", "db.h")):
            sys.exit(
                f"sift sources not found in {ROOT}: install from the repository "
                "(pip install --no-build-isolation ./python) or set SIFT_SOURCE_DIR"
            )
        build_dir = os.environ.get("SIFT_PYTHON_BUILD_DIR") or os.path.join(
            ROOT, "build", "python"
        )
        os.makedirs(build_dir, exist_ok=True)
        cache = os.path.join(build_dir, "CMakeCache.txt")
        python = os.path.realpath(sys.executable)
        engine = os.environ.get("SIFT_ENGINE_PREFIX", "")
        if engine:
            engine = os.path.realpath(engine)
        if os.path.exists(cache):
            with open(cache) as f:
                text = f.read()
            if (
                f"PYTHON_EXECUTABLE:FILEPATH={python}\n" not in text
                or f"SIFT_ENGINE_PREFIX:PATH={engine}\n" not in text
            ):
                os.remove(cache)  # another interpreter, or another engine
        if not os.path.exists(cache):
            subprocess.check_call(
                [
                    "cmake",
                    "-S",
                    HERE,
                    "-B",
                    build_dir,
                    "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPYTHON_EXECUTABLE={python}",
                    f"-DSIFT_ENGINE_PREFIX={engine}",
                ]
            )
        jobs = os.environ.get("SIFT_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(
            ["cmake", "--build", build_dir, "--target", "_sift", "-j", jobs]
        )
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "_sift" + suffix)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    packages=["sift"],
    ext_modules=[Extension("sift._sift", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
