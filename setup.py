"""The build step of `pip install .` (pyproject.toml): the project's CMake builds the Python
targets, and their outputs go into the package beside its Python files.

CPLAB_BUILD_DIR names a build folder to use (configured already, for this interpreter, as
scripts/test's `build`: only the two targets are brought up to date); without it,
build/pip-<ABI> in the checkout (one per interpreter, cpython-311 for Python 3.11) is
configured for them (the project's default flags, no CUDA, no MPI, no libtorch; warnings not
turned into errors, so that a compiler newer than the project's cannot fail an install) and
kept, so that a second install builds nothing.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(cplab VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt names no project(cplab VERSION ...)")
    return match.group(1)


class CMakeBuild(build_ext):
    """Runs CMake for the extension and the case driver, then copies both into the package."""

    def run(self):
        build = os.environ.get("CPLAB_BUILD_DIR")
        if build:
            build = pathlib.Path(build).resolve()
        else:
            # One folder per interpreter ABI: a later install for another Python builds anew.
            suffix = sysconfig.get_config_var("EXT_SUFFIX").split(".")[1]
            build = ROOT / "build" / f"pip-{suffix}"
            if not (build / "CMakeCache.txt").exists():
                self._cmake(["-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                             "-DCPLAB_WERROR=OFF", "-DCPLAB_PYTHON=ON",
                             "-DCPLAB_CUDA=OFF", "-DCPLAB_MPI=OFF", "-DCPLAB_TORCH=OFF",
                             f"-DPython3_EXECUTABLE={sys.executable}"])
        self._cmake(["--build", str(build), "--target", "cplab_python_package"])
        made = build / "python" / "cplab"
        module = made / ("_cplab" + sysconfig.get_config_var("EXT_SUFFIX"))
        driver = made / "cplab-case-driver"
        if not module.exists() or not driver.exists():
            raise RuntimeError(f"{made} holds no {module.name} (the extension for {sys.executable}) "
                               "or no cplab-case-driver after the build: a build folder configured "
                               "for another Python?")
        target = pathlib.Path(self.get_ext_fullpath("cplab._cplab"))
        target.parent.mkdir(parents=True, exist_ok=True)
        for made_file, installed in [(module, target),
                                     (driver, target.parent / "cplab-case-driver")]:
            shutil.copy2(made_file, installed)
            # The build's debug information is most of their size (94 MB installed with it);
            # the symbols stay, so a backtrace still names functions.
            if shutil.which("strip"):
                subprocess.run(["strip", "--strip-debug", str(installed)], check=True)

    def get_outputs(self):
        target = pathlib.Path(self.get_ext_fullpath("cplab._cplab"))
        return super().get_outputs() + [str(target.parent / "cplab-case-driver")]

    @staticmethod
    def _cmake(args):
        print("cmake " + " ".join(args), flush=True)
        # ccache (where CMake finds it) hits across checkouts, as scripts/build lets it.
        env = {"CCACHE_BASEDIR": str(ROOT), "CCACHE_NOHASHDIR": "1", **os.environ}
        subprocess.run(["cmake", *args], check=True, env=env)


setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=["cplab"],
    # setuptools' own build folders beside CMake's, not inside the `build` CMake uses.
    options={"build": {"build_base": "build/setuptools"}},
    ext_modules=[Extension("cplab._cplab", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
