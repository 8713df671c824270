#!/usr/bin/env bash
# CTest driver (tests/CMakeLists.txt): the demo and the tools, run with their default outputs from
# the root of a scratch copy of the working tree, leave `git status --porcelain` empty there.
#
#   check_clean_tree.sh SOURCE_DIR WORK_DIR MOE_DECODE DEVPASS_OPT DEVPASS_RUN [EXAMPLE...]
#
# The copy holds the files git would clone or add (tracked, and untracked but not ignored), in a
# repository of its own with one commit, so what a program writes shows up as untracked or
# modified unless .gitignore covers it. Runs the scratch copy's scripts/demo-run (the run step of
# scripts/demo, which writes build/demo/out), moe_decode with its defaults, devpass-opt and
# devpass-run on a sample graph with every report on, and each EXAMPLE program. Exits 77 (CTest's
# skip) without git.
set -uo pipefail
[ $# -ge 5 ] || { echo "usage: check_clean_tree.sh SOURCE_DIR WORK_DIR MOE_DECODE DEVPASS_OPT DEVPASS_RUN [EXAMPLE...]" >&2; exit 2; }
source_dir=$1 work=$2 moe_decode=$3 opt=$4 run=$5
shift 5
command -v git >/dev/null || { echo "check_clean_tree: no git: skipped"; exit 77; }
fail() { echo "check_clean_tree: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work/tree" || exit 1
tree=$work/tree
git -C "$source_dir" ls-files -z --cached --others --exclude-standard >"$work/files" || fail "git ls-files failed in $source_dir"
# Files deleted in the working tree but still in the index are not copied.
(cd "$source_dir" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh <"$work/files" |
   tar --null -T - -cf -) | tar -xf - -C "$tree" || fail "copying the working tree failed"
: >"$work/gitconfig"  # an empty global config: the user's settings never reach the scratch repository
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_AUTHOR_NAME=check GIT_AUTHOR_EMAIL=check@localhost \
       GIT_COMMITTER_NAME=check GIT_COMMITTER_EMAIL=check@localhost
{ git -C "$tree" init -q && git -C "$tree" add -A && git -C "$tree" commit -q -m scratch; } >"$work/git.log" 2>&1 ||
  { cat "$work/git.log" >&2; fail "making the scratch repository failed"; }
[ -z "$(git -C "$tree" status --porcelain)" ] || fail "the scratch copy is not clean before anything ran"

# Runs one program from the scratch copy's root, its output to the work folder (outside the copy).
step=0
in_tree() {
  step=$((step + 1))
  if ! (cd "$tree" && CUDA_VISIBLE_DEVICES="" "$@") >"$work/step$step.log" 2>&1; then
    cat "$work/step$step.log" >&2
    fail "failed: $*"
  fi
}
graph=examples/graphs/two_adds.json
in_tree bash scripts/demo-run "$moe_decode" "$opt" build/demo/out
in_tree "$moe_decode"
in_tree "$opt" --propagate-device --plan-memory --capturability --stats --time-passes --verify-each "$graph"
in_tree "$opt" --emit=dot "$graph"
in_tree "$run" "$graph"
for example in "$@"; do in_tree "$example"; done

status=$(git -C "$tree" status --porcelain --untracked-files=all)
[ -z "$status" ] || fail "programs run with their defaults wrote into the tree (.gitignore does not cover it):
$status"
echo "check_clean_tree: git status --porcelain is empty after $step programs"
