"""docs/python.md's walkthrough runs: its ```python blocks in order, in one namespace, from a
fresh folder that sees the repository's examples and data, with the binary on PATH."""
import contextlib
import io
import os
import re
import tempfile
import unittest

from support import BINARY, SOURCE


class Walkthrough(unittest.TestCase):
    def test_every_block_runs(self):
        with open(os.path.join(SOURCE, "docs", "python.md"), encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 8)
        namespace = {}
        old = os.getcwd()
        path = os.environ["PATH"]
        with tempfile.TemporaryDirectory() as folder:
            for name in ("examples", "tests"):
                os.symlink(os.path.join(SOURCE, name), os.path.join(folder, name))
            os.chdir(folder)
            os.environ["PATH"] = os.path.dirname(BINARY) + os.pathsep + path
            try:
                for i, block in enumerate(blocks):
                    printed = io.StringIO()
                    with contextlib.redirect_stdout(printed):
                        exec(compile(block, "docs/python.md block %d" % i, "exec"), namespace)
                    print(printed.getvalue(), end="")
                    self.assertTrue(printed.getvalue(), "block %d printed nothing" % i)
            finally:
                os.chdir(old)
                os.environ["PATH"] = path


if __name__ == "__main__":
    unittest.main()
