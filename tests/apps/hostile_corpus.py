"""Hostile and bad input, one case per class of failure and per command: every case must end in
the exact line (or lines) pinned here with its exit code, within its time, without a crash, and
without changing, removing or leaving behind any file of the folder it ran in (each file is
hashed before and after).

usage: hostile_corpus.py BINARY [--print]   (--print shows what each case does now)
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

binary = os.path.abspath(sys.argv[1])
show = "--print" in sys.argv[2:]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OBJ = ["--objectives", "step_time_s,energy_per_step_j"]
SUB = ["--nodes", "1", "--ntasks-per-node", "1", "--time", "1", "--dry-run"]
DEEP_PARENS = "(" * 5000 + "1" + ")" * 5000
DEEP_NOT = "!" * 5000 + "1"
BIG = """[workload]
model = "gpt3-13b"
[cluster]
gpu = ["A100-SXM4-80GB", "H100-SXM5-80GB"]
nodes = {start = 1, stop = 10000, step = 1}
inter_node_gbps_per_gpu = {start = 100, stop = 10000, step = 1}
hbm_gb = {start = 40, stop = 1040, step = 1}
nvlink_gbytes_per_s = {start = 100, stop = 1100, step = 1}
[plan]
tp = [1]
pp = [1]
[output]
keep = "best-per-design"
"""
STORE_ERR = "not a complete clustersweep store"

# (class, arguments, exit code, standard error: {d} is the folder the case runs in, {size} the
# size of the store truncated.h5 was cut from).
CASES = [
    # An output that is an input.
    ("clobber", ["pareto", "s.h5", *OBJ, "--csv", "s.h5"], 2,
     "clustersweep pareto: error: --csv: 's.h5' is the store being read; name another file (an "
     "output never replaces an input)"),
    ("clobber", ["pareto", "s.h5", *OBJ, "--svg", "./s.h5"], 2,
     "clustersweep pareto: error: --svg: './s.h5' is 's.h5', the store being read; name another "
     "file (an output never replaces an input)"),
    ("clobber", ["pareto", "s.h5", *OBJ, "--svg", "x.out", "--csv", "x.out"], 2,
     "clustersweep pareto: error: --svg: 'x.out' is also the file of --csv; give each output its "
     "own file"),
    ("clobber", ["top", "s.h5", "--csv", "link.h5"], 2,
     "clustersweep top: error: --csv: 'link.h5' is 's.h5', the store being read; name another "
     "file (an output never replaces an input)"),
    ("clobber", ["sensitivity", "s.h5", "--svg", "s.h5"], 2,
     "clustersweep sensitivity: error: --svg: 's.h5' is the store being read; name another file "
     "(an output never replaces an input)"),
    ("clobber", ["export", "s.h5", "-o", "s.h5"], 2,
     "clustersweep export: error: -o: 's.h5' is the store being read; name another file (an "
     "output never replaces an input)"),
    ("clobber", ["report", "s.h5", "-o", "s.h5"], 2,
     "clustersweep report: error: -o: 's.h5' is the store being read; name another file (an "
     "output never replaces an input)"),
    ("clobber", ["merge", "s.h5", "-o", "s.h5", "--force"], 2,
     "clustersweep merge: error: -o: 's.h5' is a shard being merged; name another file (an "
     "output never replaces an input)"),
    ("clobber", ["run", "spec.toml", "-o", "spec.toml", "--force"], 2,
     "clustersweep run: error: -o: 'spec.toml' is the spec being read; name another file (an "
     "output never replaces an input)"),
    ("clobber", ["run", "calibrated.toml", "-o", "cal.toml", "--force"], 2,
     "clustersweep run: error: -o: 'cal.toml' is the calibration file it names; name another "
     "file (an output never replaces an input)"),
    ("clobber", ["validate", "runs.csv", "-o", "runs.csv"], 2,
     "clustersweep validate: error: -o: 'runs.csv' is a runs file being read; name another file "
     "(an output never replaces an input)"),
    ("clobber", ["validate", "runs.csv", "--fit", "cal.toml", "--calibration", "cal.toml"], 2,
     "clustersweep validate: error: --fit: 'cal.toml' is the calibration file being read; name "
     "another file (an output never replaces an input)"),
    ("clobber", ["calibrate", "runs.csv", "-o", "runs.csv"], 2,
     "clustersweep calibrate: error: -o: 'runs.csv' is a runs file being read; name another file "
     "(an output never replaces an input)"),
    ("clobber", ["calibrate", "runs.csv", "-o", "cal.toml", "--calibration", "cal.toml"], 2,
     "clustersweep calibrate: error: -o: 'cal.toml' is the calibration file being read; name "
     "another file (an output never replaces an input)"),
    ("clobber", ["calibrate", "runs.csv", "-o", "folder"], 2,
     "clustersweep calibrate: error: -o: 'folder' is a folder; name a file"),
    ("clobber", ["submit", "spec.toml", "-o", "spec.toml", "--force", *SUB], 2,
     "clustersweep submit: error: -o: '{d}/spec.toml' is 'spec.toml', the spec being read; name "
     "another file (an output never replaces an input)"),
    # A nesting that would overflow the stack.
    ("crash", ["top", "s.h5", "--where", DEEP_PARENS], 2,
     "clustersweep top: error: --where:1:65: nested more than 64 deep; simplify the expression"
     "\n    ..." + "(" * 91 + "...\n" + " " * 57 + "^"),
    ("crash", ["plan", "deep.toml"], 2,
     "clustersweep plan: error: deep.toml:1:81: constraints[0]: nested more than 64 deep; "
     "simplify the expression\n    ..." + "!" * 91 + "...\n" + " " * 57 + "^"),
    # A column the store cannot have, or that the sweep did not keep.
    ("store", ["run", "columns.toml", "-o", "new.h5"], 2,
     "clustersweep run: error: columns.toml:36:18: output.columns: 'step_tim_s' is no column of "
     "this transformer store; did you mean 'step_time_s'?"),
    ("store", ["plan", "columns.toml"], 2,
     "clustersweep plan: error: columns.toml:36:18: output.columns: 'step_tim_s' is no column of "
     "this transformer store; did you mean 'step_time_s'?"),
    ("store", ["top", "s.h5", "--by", "time_compute_s"], 2,
     "clustersweep top: error: --by: column 'time_compute_s' was not kept in 's.h5' (its sweep's "
     "[output] columns = \"summary\"); rerun the sweep with columns = \"all\", or with "
     "'time_compute_s' in its list"),
    # A bounded plan on a space of 10^14 designs.
    ("hang", ["plan", "big.toml", "--sample-seconds", "0.1"], 0, ""),
    ("hang", ["plan", "bound.toml"], 2,
     "clustersweep plan: error: bound.toml:1:1: space: 20040020000 designs differ in what the "
     "structural rules or the constraints read, more than the 20000000 that can be counted in "
     "reasonable time; sweep fewer values of model, precision, gpu, the cluster size and shape, "
     "the expansion tiers or what the constraints read"),
    ("hang", ["plan", "spec.toml", "--sample-seconds", "inf"], 2,
     "clustersweep plan: error: --sample-seconds: expected a finite number >= 0, got 'inf'"),
    # Numbers past their range or of the wrong sign.
    ("number", ["plan", "spec.toml", "--ranks", "-1"], 2,
     "clustersweep plan: error: --ranks: expected a whole number from 1 to 4294967295, got '-1'"),
    ("number", ["run", "spec.toml", "-o", "new.h5", "--chunk-points", "-1"], 2,
     "clustersweep run: error: --chunk-points: expected a whole number from 0 to "
     "18446744073709551615, got '-1'"),
    ("number", ["top", "s.h5", "-n", "-1"], 2,
     "clustersweep top: error: -n: expected a whole number from 1 to 18446744073709551615, got "
     "'-1'"),
    ("number", ["pareto", "s.h5", *OBJ, "--limit", "-1"], 2,
     "clustersweep pareto: error: --limit: expected a whole number from 0 to "
     "18446744073709551615, got '-1'"),
    ("number", ["estimate", "--model", "gpt3-13b", "--gpu", "H100-SXM5-80GB", "--gpus", "64",
                "--tp", "99999999999"], 2,
     "clustersweep estimate: error: --tp: must be a positive integer, got '99999999999'"),
    ("number", ["best", "--model", "gpt3-13b", "--gpu", "H100-SXM5-80GB", "--gpus", "-8"], 2,
     "clustersweep best: error: --gpus: must be a positive integer, got '-8'"),
    ("number", ["bench", "--seconds", "nan"], 2,
     "clustersweep bench: error: --seconds: expected a finite number > 0, got 'nan'"),
    ("number", ["energy", "s.h5", "--deadline-days", "-1"], 2,
     "clustersweep energy: error: --deadline-days: expected a finite number > 0, got '-1'"),
    ("number", ["status", "s.h5", "--interval", "inf"], 2,
     "clustersweep status: error: --interval: expected a number from 0 to 600, got 'inf'"),
    ("number", ["submit", "spec.toml", "-o", "sub.h5", "--nodes", "99999999999", "--ntasks-per-node",
                "1", "--time", "1", "--dry-run"], 2,
     "clustersweep submit: error: --nodes: expected a whole number from 1 to 1048576, got "
     "'99999999999'"),
    # Expressions whose types or values cannot work.
    ("expression", ["top", "s.h5", "--where", "1/0"], 2,
     "clustersweep top: error: --where:1:3: division by zero\n    1/0\n      ^"),
    ("expression", ["top", "s.h5", "--where", "gpu == 3"], 2,
     "clustersweep top: error: --where:1:1: 'gpu' holds labels; compare it with a quoted label, "
     "e.g. gpu == 'A100-SXM4-80GB'\n    gpu == 3\n    ^~~"),
    # Files that are not what they should be.
    ("file", ["validate", "header.csv"], 2,
     "clustersweep validate: error: header.csv:2: no runs after the header; expected one per line"),
    ("file", ["validate", "folder"], 2,
     "clustersweep validate: error: cannot open runs file 'folder': it is a folder"),
    ("file", ["calibrate", "header.csv", "-o", "x.toml"], 2,
     "clustersweep calibrate: error: header.csv:2: no runs after the header; expected one per "
     "line"),
    ("file", ["calibrate", "folder", "-o", "x.toml"], 2,
     "clustersweep calibrate: error: cannot open runs file 'folder': it is a folder"),
    ("file", ["calibrate", "runs.csv", "-o", "x.toml", "--calibration", "folder"], 2,
     "clustersweep calibrate: error: cannot open calibration file 'folder': Is a directory"),
    ("file", ["plan", "folder"], 2,
     "clustersweep plan: error: cannot read spec 'folder': Is a directory"),
    ("file", ["plan", "calfolder.toml"], 2,
     "clustersweep plan: error: calfolder.toml:1:15: calibration: cannot read 'folder': it is a "
     "folder"),
    ("file", ["estimate", "folder"], 2,
     "clustersweep estimate: error: cannot open 'folder': Is a directory"),
    ("file", ["validate", "runs.csv", "--calibration", "folder"], 2,
     "clustersweep validate: error: cannot open calibration file 'folder': Is a directory"),
    ("file", ["submit", "spec.toml", "-o", "sub.h5", "--then", "bogus", *SUB], 2,
     "clustersweep submit: error: --then: 'bogus' is not a command that reads the store; expected "
     "one of summary, top, pareto, energy, sensitivity, report, export"),
    ("file", ["pareto", "s.h5", *OBJ, "--csv", "folder"], 2,
     "clustersweep pareto: error: --csv: 'folder' is a folder; name a file"),
    ("file", ["top", "s.h5", "--csv", "nodir/x.csv"], 2,
     "clustersweep top: error: --csv: cannot write 'nodir/x.csv': the folder '{d}/nodir' does not "
     "exist"),
    ("file", ["merge", "s.h5", "-o", "nodir/m.h5"], 2,
     "clustersweep merge: error: -o: cannot write 'nodir/m.h5': the folder '{d}/nodir' does not "
     "exist"),
    ("file", ["run", "spec.toml", "-o", "/proc/x.h5"], 2,
     "clustersweep run: error: --output '/proc/x.h5': cannot create a file in '/proc': No such "
     "file or directory"),
    # Damaged stores, named as such by every command that reads one.
    *[("store", [command, *(["truncated.h5", *extra] if extra is not None else
                            ["spec.toml", "-o", "truncated.h5", "--resume"])], 2,
       f"clustersweep {command}: error: '{where}truncated.h5' is not a complete clustersweep store "
       "(the file is truncated: 1000 of {size} bytes); copy it again, or rerun its sweep with "
       "--force") for command, extra, where in [
        ("summary", [], ""), ("top", [], ""), ("pareto", OBJ, ""), ("energy", [], ""),
        ("sensitivity", [], ""), ("report", ["-o", "rep"], ""), ("export", ["-o", "x.csv"], ""),
        ("status", [], "{d}/"), ("merge", ["-o", "m.h5"], ""),
        ("run", None, "")]],
    ("store", ["summary", "random.h5"], 2,
     "clustersweep summary: error: 'random.h5' is not an HDF5 file (expected a clustersweep "
     "results store)"),
    ("store", ["summary", "empty.h5"], 2,
     "clustersweep summary: error: 'empty.h5' is not a complete clustersweep store (the file is "
     "empty); copy it again, or rerun its sweep with --force"),
    ("store", ["summary", "folder"], 2,
     "clustersweep summary: error: cannot open store 'folder': it is a directory"),
]


def digest(folder):
    out = {}
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def setup(d):
    def write(name, text, mode="w"):
        with open(os.path.join(d, name), mode) as f:
            f.write(text)
    shutil.copy(os.path.join(root, "examples", "quick.toml"), os.path.join(d, "spec.toml"))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run([binary, "run", "spec.toml", "-o", "s.h5", "--progress", "none",
                    "--no-summary"], cwd=d, env=env, check=True, capture_output=True)
    os.link(os.path.join(d, "s.h5"), os.path.join(d, "link.h5"))
    with open(os.path.join(d, "s.h5"), "rb") as f:
        store = f.read()
    write("truncated.h5", store[:1000], "wb")
    write("random.h5", bytes((i * 7919 + 13) % 251 for i in range(8192)), "wb")
    write("empty.h5", "")
    os.mkdir(os.path.join(d, "folder"))
    shutil.copy(os.path.join(root, "tests", "apps", "data", "transformer_runs.csv"),
                os.path.join(d, "runs.csv"))
    with open(os.path.join(d, "runs.csv")) as f:
        write("header.csv", f.readline())
    shutil.copy(os.path.join(root, "spaces", "data", "calibration.toml"),
                os.path.join(d, "cal.toml"))
    with open(os.path.join(d, "spec.toml")) as f:
        spec = f.read()
    write("calibrated.toml", 'calibration = "cal.toml"\n' + spec)
    write("calfolder.toml", 'calibration = "folder"\n' + spec)
    write("deep.toml", f'constraints = ["{DEEP_NOT}"]\n' + spec)
    write("columns.toml", spec + 'columns = ["tp", "step_tim_s"]\n')
    write("big.toml", BIG)
    write("bound.toml", 'constraints = ["hbm_gb * nvlink_gbytes_per_s > 1"]\n' + BIG)
    return len(store)


failures = 0
with tempfile.TemporaryDirectory(prefix="clustersweep-hostile-") as d:
    store_size = setup(d)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for kind, args, code, expected in CASES:
        before = digest(d)
        shown = " ".join(a if len(a) < 60 else a[:20] + "..." for a in args)
        try:
            done = subprocess.run([binary, *args], cwd=d, env=env, capture_output=True, text=True,
                                  timeout=60)
            rc, err = done.returncode, done.stderr.rstrip("\n")
        except subprocess.TimeoutExpired:
            rc, err = None, "(hung: no exit within 60 s)"
        after = digest(d)
        changed = sorted(k for k in before if after.get(k) != before[k])
        left = sorted(k for k in after if k not in before)
        if show:
            print(f"[{kind}] {shown}\n  exit {rc}\n  " + err.replace("\n", "\n  "))
        problems = []
        if rc is None or rc < 0:
            problems.append(f"crashed or hung: {err}")
        elif rc != code:
            problems.append(f"exit {rc}, expected {code}")
        wanted = expected.replace("{d}", d).replace("{size}", str(store_size))
        if err != wanted:
            problems.append(f"said:\n    {err}\n  expected:\n    {wanted}")
        if changed:
            problems.append(f"changed {changed}")
        if left:
            problems.append(f"left behind {left}")
            for name in left:
                path = os.path.join(d, name)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        if problems:
            failures += 1
            print(f"FAIL [{kind}] clustersweep {shown}\n  " + "\n  ".join(problems))
print(f"{'ok' if failures == 0 else 'FAILED'} {len(CASES) - failures} of {len(CASES)} cases")
sys.exit(1 if failures else 0)
