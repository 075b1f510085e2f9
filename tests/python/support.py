"""What the Python tests share: the built binary, the repository, running a command."""
import json
import os
import subprocess

BINARY = os.environ["CLUSTERSWEEP_BINARY"]
SOURCE = os.environ["CLUSTERSWEEP_SOURCE_DIR"]
BUILD = os.environ["CLUSTERSWEEP_BUILD_DIR"]


def cli(*args, cwd=None):
    """(exit code, stdout, stderr) of the binary."""
    done = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def cli_json(*args):
    code, out, err = cli(*args)
    assert code == 0, err
    return json.loads(out)


def cli_error(command, *args):
    """The one-line message of a command's bad input (exit code 2), after "error: "."""
    code, _, err = cli(command, *args)
    assert code == 2, (code, err)
    prefix = "clustersweep %s: error: " % command
    line = err.strip()
    assert line.startswith(prefix) and "\n" not in line, err
    return line[len(prefix):]


def flags(settings):
    """The command line of keyword settings, written out here independently of the module."""
    out = []
    for key, value in settings.items():
        out += ["--" + key.replace("_", "-"), str(value).lower() if isinstance(value, bool) else str(value)]
    return out
