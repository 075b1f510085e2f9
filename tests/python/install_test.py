"""The module's two installs: the README's first command's step (scripts/install-python.sh, into a
folder of Debian's Python) and `pip install --no-build-isolation .` into a virtual environment,
each imported from a fresh interpreter in another folder."""
import os
import subprocess
import tempfile
import unittest

from support import BUILD, SOURCE, cli


def python_version(python, env=None):
    done = subprocess.run(
        [python, "-c", "import clustersweep; print(clustersweep.__version__, clustersweep.__file__)"],
        capture_output=True, text=True, cwd="/", env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


class Install(unittest.TestCase):
    def test_install_python_puts_the_module_in_a_site_folder(self):
        with tempfile.TemporaryDirectory() as site:
            env = dict(os.environ, CLUSTERSWEEP_PYTHON_SITE=site)
            for _ in range(2):  # again over the first copy, as every `make run` does
                done = subprocess.run(
                    ["bash", os.path.join(SOURCE, "scripts", "install-python.sh"), BUILD],
                    capture_output=True, text=True, env=env,
                )
                self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(sorted(p for p in os.listdir(site)), ["clustersweep"])
            version, path = python_version("/usr/bin/python3", dict(os.environ, PYTHONPATH=site))
            self.assertTrue(path.startswith(site), path)
            self.assertIn("clustersweep %s " % version, cli("--version")[1])

    def test_pip_installs_into_a_virtual_environment_without_downloads(self):
        with tempfile.TemporaryDirectory() as folder:
            venv = os.path.join(folder, "venv")
            # Debian's numpy and pandas come from the system site; nothing is downloaded.
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["CLUSTERSWEEP_BUILD_DIR"] = BUILD  # the configured build: CMake builds only what changed
            done = subprocess.run(
                [os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index", "."],
                capture_output=True, text=True, cwd=SOURCE, env=env,
            )
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            version, path = python_version(os.path.join(venv, "bin", "python"), env)
            self.assertTrue(path.startswith(venv), path)
            self.assertIn("clustersweep %s " % version, cli("--version")[1])


if __name__ == "__main__":
    unittest.main()
