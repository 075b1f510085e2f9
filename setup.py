"""Builds the Python module with the project's CMake (docs/python.md, "Installing").

`pip install --no-build-isolation .` configures and builds the target clustersweep_python in a
temporary folder (a few minutes on two cores), or in CLUSTERSWEEP_BUILD_DIR when set (a build
folder already configured, as the tests use), and packages python/clustersweep with the
extension. The version is the project's, from CMakeLists.txt: the binary's and the module's.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

root = pathlib.Path(__file__).resolve().parent
(root / "build-python").mkdir(exist_ok=True)
version = re.search(
    r"project\(clustersweep VERSION ([0-9.]+)", (root / "CMakeLists.txt").read_text()
)[1]


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("CLUSTERSWEEP_BUILD_DIR")
        if not build:
            build = os.path.join(self.build_temp, "cmake")
            subprocess.run(
                ["cmake", "-S", str(root), "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DCLUSTERSWEEP_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable],
                check=True,
            )
        jobs = str(os.cpu_count() or 1)
        subprocess.run(
            ["cmake", "--build", build, "--target", "clustersweep_python", "-j", jobs], check=True
        )
        built = list(pathlib.Path(build, "python", "clustersweep").glob("_core*.so"))
        if len(built) != 1:
            sys.exit("setup.py: the build made no clustersweep/_core*.so in " + build)
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=version,
    packages=["clustersweep"],
    package_dir={"": "python"},
    ext_modules=[Extension("clustersweep._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own folders beside CMake's build folders, not in the sources or in build/.
    options={"build": {"build_base": "build-python"}, "egg_info": {"egg_base": "build-python"}},
    zip_safe=False,
)
