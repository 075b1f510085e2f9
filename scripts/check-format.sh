#!/usr/bin/env bash
# Fails, naming the files, when a C++ source of the repository is not formatted as .clang-format
# says (clang-format from Debian, as scripts/install-deps.sh --test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed"; exit 1; }
bad=()
while IFS= read -r file; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
if ((${#bad[@]})); then
  echo "check-format: not formatted (run clang-format -i on them): ${bad[*]}"
  exit 1
fi
echo "check-format: every C++ source is formatted"
