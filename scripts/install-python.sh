#!/usr/bin/env bash
# Installs the Python module built in BUILD (BUILD/python/clustersweep: the package and its
# extension) into Debian's Python, so that `/usr/bin/python3 -c "import clustersweep"` works:
# into /usr/local/lib/python3.X/dist-packages as root, else into the user's site-packages.
# CLUSTERSWEEP_PYTHON_SITE names another folder (the tests use one). Replaces an older copy whole.
set -euo pipefail
build=${1:-build}
python=/usr/bin/python3
package="$build/python/clustersweep"
if ! compgen -G "$package/_core*.so" >/dev/null; then
  echo "install-python: no module in $package; build the target clustersweep_python first" >&2
  exit 2
fi
site=${CLUSTERSWEEP_PYTHON_SITE:-$("$python" -c '
import os, site
print(site.getsitepackages()[0] if os.geteuid() == 0 else site.getusersitepackages())')}
mkdir -p "$site"
staging=$(mktemp -d "$site/.clustersweep-XXXXXX")
trap 'rm -rf "$staging"' EXIT
cp "$package"/*.py "$package"/_core*.so "$staging/"
rm -rf "$site/clustersweep.old"
[[ -e "$site/clustersweep" ]] && mv "$site/clustersweep" "$site/clustersweep.old"
mv "$staging" "$site/clustersweep"
rm -rf "$site/clustersweep.old"
trap - EXIT
chmod 755 "$site/clustersweep"
version=$(cd / && PYTHONPATH="${CLUSTERSWEEP_PYTHON_SITE:-}" "$python" -c \
  'import clustersweep; print(clustersweep.__version__)')
echo "install-python: clustersweep $version for $python in $site"
