#!/usr/bin/env bash
# CTest driver for devpass-run (tools/CMakeLists.txt adds one test per sample graph in tests/data/graphs):
#   check_devpass_run.sh <devpass-run> <work-dir> <graph.json>
#       the output checksums of the pipeline equal the host reference's, for both policies,
#       with and without the skip flags, elision and resident constants (ExecuTorch's skip_h2d may
#       reject a graph).
#   check_devpass_run.sh <devpass-run> <work-dir> too_large <graph.json>
#       a graph whose values need more memory than the host has: exit 1 naming the node.
#   check_devpass_run.sh <devpass-run> <work-dir> usage
#       unknown options and missing inputs exit 2.
set -uo pipefail
run=$1 work=$2 graph=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "check_devpass_run: $graph: $*" >&2; exit 1; }
checksums() { grep -o '"checksum": *"\?[0-9a-fx]*' "$1" | tr -d ' "' ; }

if [ "$graph" = too_large ]; then  # check_devpass_run.sh <devpass-run> <work-dir> too_large <graph.json>
  # 8 TiB of values: a clear allocation error naming the node (exit 1), no crash, no output.
  "$run" "$4" >"$work/out.json" 2>"$work/stderr"
  rc=$?
  [ $rc -eq 1 ] || { cat "$work/stderr" >&2; fail "exited $rc, expected 1"; }
  grep -q "more than the host's memory" "$work/stderr" || { cat "$work/stderr" >&2; fail "no clear allocation error"; }
  grep -q "node '" "$work/stderr" || { cat "$work/stderr" >&2; fail "the error names no node"; }
  [ ! -s "$work/out.json" ] || fail "something was printed on stdout"
  exit 0
fi
if [ "$graph" = usage ]; then
  "$run" --bogus x >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown option does not exit 2"
  "$run" >/dev/null 2>&1; [ $? -eq 2 ] || fail "a missing input does not exit 2"
  exit 0
fi

"$run" --host-reference "$graph" >"$work/reference.json" 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "host reference failed"; }
checksums "$work/reference.json" >"$work/reference.sums"
[ -s "$work/reference.sums" ] || fail "the host reference printed no checksum"
for policy in executorch devpass; do
  for flags in "" "--skip-h2d-for-method-inputs --skip-d2h-for-method-outputs" "--no-elide" "--no-resident-constants"; do
    # shellcheck disable=SC2086
    "$run" --policy=$policy $flags "$graph" >"$work/out.json" 2>"$work/stderr"
    rc=$?
    if [ $rc -eq 1 ] && [ $policy = executorch ] && grep -q "needs a method input with one consumer" "$work/stderr"; then
      continue
    fi
    [ $rc -eq 0 ] || { cat "$work/stderr" >&2; fail "--policy=$policy $flags exited $rc"; }
    checksums "$work/out.json" >"$work/out.sums"
    cmp -s "$work/reference.sums" "$work/out.sums" || fail "--policy=$policy $flags: checksums differ from the host reference"
  done
done
