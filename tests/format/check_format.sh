#!/usr/bin/env bash
# CTest driver (tests/CMakeLists.txt): every C++ file git tracks is as the committed .clang-format
# formats it. Formatting differs between clang-format releases, so the check runs only with the
# release the tree was formatted with (Debian 12's clang-format 14) and exits 77 (CTest's skip)
# with another one, or without clang-format or git.
#
#   check_format.sh SOURCE_DIR
set -uo pipefail
source_dir=$1
command -v clang-format >/dev/null || { echo "check_format: no clang-format: skipped"; exit 77; }
command -v git >/dev/null || { echo "check_format: no git: skipped"; exit 77; }
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$version" = 14 ] || { echo "check_format: clang-format $version, the tree is formatted with 14: skipped"; exit 77; }
cd "$source_dir" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "check_format: not a git checkout: skipped"; exit 77; }
mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.h' '*.cuh' '*.cu')
[ "${#files[@]}" -gt 0 ] || { echo "check_format: no files" >&2; exit 1; }
if ! clang-format --dry-run -Werror "${files[@]}"; then
  echo "check_format: the files above are not formatted: run clang-format -i on them (docs/building.md, \"Formatting\")" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
