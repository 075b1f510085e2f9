"""Runs the README's tour exactly as a newcomer would, from a fresh directory: every command of
its sh block (the Slurm submission as --dry-run, since a test machine has no cluster) and its
Python snippets (the module from PYTHONPATH, as `make run` installs it). Exits 1 naming the first
command that fails.

usage: readme_tour.py README.md BINARY
"""
import os
import re
import subprocess
import sys
import tempfile

readme, binary = sys.argv[1:3]
root = os.path.dirname(os.path.abspath(readme))
text = open(readme, encoding="utf-8").read()
tour = text[text.index("## A tour"):]
shell = re.search(r"```sh\n(.*?)```", tour, re.S).group(1)
snippets = re.findall(r"```python\n(.*?)```", tour, re.S)

commands = []
for line in shell.replace("\\\n", " ").splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    if line.startswith("B="):
        line = f"B={binary}"
    # No cluster here: the submission is a dry run into a scratch folder, and `status` reads the
    # store the tour's own mpirun wrote.
    if " submit " in line:
        line = line.replace("/scratch/", "scratch/") + " --dry-run"
    line = line.replace("/scratch/", "")
    commands.append(line)
assert len(commands) > 15, commands

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
with tempfile.TemporaryDirectory(prefix="clustersweep-tour-") as work:
    # The tour's relative paths name files of the repository.
    for name in ("examples", "tests"):
        os.symlink(os.path.join(root, name), os.path.join(work, name))
    os.mkdir(os.path.join(work, "scratch"))
    prefix = ""
    for command in commands:
        if command.startswith("B="):
            prefix = command + "; "
            continue
        done = subprocess.run(["bash", "-c", prefix + command], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            print(f"README tour: `{command}` exited {done.returncode}\n{done.stdout[-2000:]}"
                  f"\n{done.stderr[-2000:]}")
            sys.exit(1)
    for i, snippet in enumerate(snippets):
        done = subprocess.run(["/usr/bin/python3", "-c", snippet], cwd=work, env=env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            print(f"README tour: Python snippet {i + 1} failed\n{done.stderr[-2000:]}")
            sys.exit(1)
print(f"ok {len(commands) - 1} commands and {len(snippets)} Python snippets")
