#!/usr/bin/env bash
# CTest driver for devpass-opt (tools/CMakeLists.txt adds one test per case):
#   check_devpass_opt.sh <devpass-opt> <work-dir> roundtrip <graph.json>
#       JSON out, read back and written again byte-identical, also through stdin/stdout; DOT out
#       (checked by Graphviz when `dot` is installed).
#   check_devpass_opt.sh <devpass-opt> <work-dir> bad <graph.json>
#       exit 1, a message on stderr naming the file, and the -o file left as it was.
#   check_devpass_opt.sh <devpass-opt> <work-dir> propagate <graph.json>
#       --propagate-device --verify-each --plan-memory under both policies, with and without the
#       skip flags: exit 0 (or, for ExecuTorch's skip_h2d on an input with several consumers, exit
#       1 naming it); every planned buffer within 1.1x of its lower bound; running the pass again
#       on its own output changes nothing; the output reads back.
#   check_devpass_opt.sh <devpass-opt> <work-dir> unplaceable <graph.json>
#       a graph device propagation cannot make consistent (a copy in the file that reads from the
#       wrong device): exit 1 naming node and field, nothing written, under both policies, with
#       and without --no-verify (the pass refuses it before the result could be verified).
#   check_devpass_opt.sh <devpass-opt> <work-dir> every_problem <graph.json> <count>
#       a file with <count> structural problems: --verify-each lists each (exit 1, nothing
#       written); without it the first alone is printed.
#   check_devpass_opt.sh <devpass-opt> <work-dir> usage <graph.json>
#       unknown option / missing input / bad value exit 2 and write nothing; --help, --version exit 0.
set -uo pipefail
opt=$1 work=$2 mode=$3 graph=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "check_devpass_opt: $mode $graph: $*" >&2; exit 1; }
expect_rc() {  # expect_rc <code> <command...>
  local want=$1; shift
  "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/stderr" >&2; fail "'$*' exited $rc, expected $want"; }
}

case $mode in
  roundtrip)
    expect_rc 0 "$opt" "$graph" -o "$work/a.json"
    expect_rc 0 "$opt" "$work/a.json" -o "$work/b.json"
    cmp -s "$work/a.json" "$work/b.json" || fail "write -> read -> write is not byte-identical"
    expect_rc 0 "$opt" --verify-each - <"$work/a.json"
    cmp -s "$work/a.json" "$work/stdout" || fail "stdin -> stdout differs from the file output"
    expect_rc 0 "$opt" --emit=dot "$graph" -o "$work/a.dot"
    head -c 8 "$work/a.dot" | grep -q '^digraph ' || fail "DOT output does not start with 'digraph '"
    if command -v dot >/dev/null; then
      dot -Tsvg "$work/a.dot" -o "$work/a.svg" || fail "Graphviz rejects the DOT output"
    fi
    [ -z "$(ls "$work" | grep '\.tmp\.')" ] || fail "a temporary file was left behind"
    ;;
  bad)
    echo old >"$work/out.json"
    expect_rc 1 "$opt" "$graph" -o "$work/out.json"
    grep -q "^devpass-opt: $graph: " "$work/stderr" || { cat "$work/stderr" >&2; fail "stderr does not name the file"; }
    [ "$(cat "$work/out.json")" = old ] || fail "the output file was changed"
    expect_rc 1 "$opt" "$graph" -o "$work/new.json"
    [ ! -e "$work/new.json" ] || fail "an output file was written"
    [ ! -s "$work/stdout" ] || fail "something was written to stdout"
    [ -z "$(ls "$work" | grep '\.tmp\.')" ] || fail "a temporary file was left behind"
    # --verify-each: the same file refused, nothing written; a structural problem file lists every
    # problem, the first of them the one the plain run printed.
    first=$(sed -n '1s/^devpass-opt: [^:]*: //p' "$work/stderr")
    expect_rc 1 "$opt" --verify-each "$graph" -o "$work/new.json"
    [ ! -e "$work/new.json" ] || fail "--verify-each: an output file was written"
    if grep -q "^devpass-opt: verification failed after reading " "$work/stderr"; then
      [ "$(sed -n '2s/^  //p' "$work/stderr")" = "$first" ] || { cat "$work/stderr" >&2; fail "--verify-each lists another first problem"; }
    fi
    ;;
  every_problem)  # check_devpass_opt.sh <devpass-opt> <work-dir> every_problem <graph.json> <count>
    expect_rc 1 "$opt" --verify-each "$graph" -o "$work/out.json"
    grep -q "^devpass-opt: verification failed after reading $graph ($5 problems):$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--verify-each does not announce $5 problems"; }
    [ "$(grep -c "^  node '" "$work/stderr")" -eq "$5" ] || { cat "$work/stderr" >&2; fail "--verify-each does not list $5 problems"; }
    [ ! -e "$work/out.json" ] || fail "an output file was written"
    expect_rc 1 "$opt" "$graph" -o "$work/out.json"
    [ "$(wc -l <"$work/stderr")" -eq 1 ] || { cat "$work/stderr" >&2; fail "without --verify-each one problem is printed"; }
    ;;
  propagate)
    for policy in executorch devpass; do
      for flags in "" "--skip-h2d-for-method-inputs" "--skip-d2h-for-method-outputs" \
                   "--skip-h2d-for-method-inputs --skip-d2h-for-method-outputs" "--no-elide"; do
        # shellcheck disable=SC2086
        "$opt" --propagate-device --policy=$policy $flags --verify-each --plan-memory --stats "$graph" \
          -o "$work/out.json" >"$work/stdout" 2>"$work/stderr"
        rc=$?
        if [ $rc -eq 1 ] && [ $policy = executorch ] && [[ $flags == *skip-h2d* ]] &&
           grep -q "needs a method input with one consumer" "$work/stderr"; then
          continue  # ExecuTorch's own restriction, reported as invalid input
        fi
        [ $rc -eq 0 ] || { cat "$work/stderr" >&2; fail "--policy=$policy $flags exited $rc"; }
        grep -q "^copies: " "$work/stderr" || fail "--stats printed no copy line"
        while read -r ratio; do
          awk -v r="$ratio" 'BEGIN { exit !(r <= 1.1) }' || fail "--policy=$policy $flags: buffer ratio $ratio > 1.1"
        done < <(sed -n 's/.*, ratio \([0-9.]*\),.*/\1/p' "$work/stderr")
        # shellcheck disable=SC2086
        expect_rc 0 "$opt" --propagate-device --policy=$policy $flags --verify-each "$work/out.json" -o "$work/again.json"
        expect_rc 0 "$opt" "$work/out.json" -o "$work/same.json"
        cmp -s "$work/again.json" "$work/same.json" || fail "--policy=$policy $flags: propagating twice changed the graph"
        # shellcheck disable=SC2086
        expect_rc 0 "$opt" --propagate-device --policy=$policy $flags --no-verify --plan-memory "$graph" -o "$work/unverified.json"
        cmp -s "$work/out.json" "$work/unverified.json" || fail "--policy=$policy $flags: --no-verify changed the result"
      done
    done
    # --time-passes=json: one JSON object on stderr naming every phase that ran, passes only.
    # (The devpass policy skips elision on a graph without copies: it cannot make a round trip.)
    expect_rc 0 "$opt" --propagate-device --time-passes=json "$graph" -o "$work/timed.json"
    grep -qE '^\{"phases": \[\{"name": "insert-shared-copies", "seconds": [0-9.e+-]+\}, (\{"name": "elide-round-trips", "seconds": [0-9.e+-]+\}, )?\{"name": "annotate-devices", "seconds": [0-9.e+-]+\}\], "total_seconds": [0-9.e+-]+\}$' "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--time-passes=json is not the documented object"; }
    expect_rc 0 "$opt" --propagate-device --policy=executorch --time-passes=json "$graph" -o "$work/timed.json"
    grep -qE '^\{"phases": \[\{"name": "insert-input-copies", "seconds": [0-9.e+-]+\}, \{"name": "insert-output-copies", "seconds": [0-9.e+-]+\}, \{"name": "elide-round-trips", "seconds": [0-9.e+-]+\}, \{"name": "annotate-devices", "seconds": [0-9.e+-]+\}\], "total_seconds": [0-9.e+-]+\}$' "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--time-passes=json (executorch) is not the documented object"; }
    # --huge-pages changes how memory is backed, never the result.
    for policy in executorch devpass; do
      expect_rc 0 "$opt" --propagate-device --policy=$policy --plan-memory "$graph" -o "$work/paged.json"
      expect_rc 0 "$opt" --propagate-device --policy=$policy --plan-memory --huge-pages "$graph" -o "$work/huge.json"
      cmp -s "$work/paged.json" "$work/huge.json" || fail "--policy=$policy: --huge-pages changed the result"
    done
    ;;
  unplaceable)
    for policy in executorch devpass; do
      for verify in "" --no-verify; do
        expect_rc 1 "$opt" --propagate-device --policy=$policy $verify "$graph" -o "$work/out.json"
        grep -q "^devpass-opt: node '[^']*': inputs\[0\]: reads '[^']*' on " "$work/stderr" ||
          { cat "$work/stderr" >&2; fail "the message names no node and field"; }
        [ ! -e "$work/out.json" ] || fail "--policy=$policy $verify: an output file was written"
      done
    done
    ;;
  usage)
    expect_rc 2 "$opt" --no-such-option "$graph" -o "$work/out.json"
    grep -q "unknown option '--no-such-option'" "$work/stderr" || fail "no message for an unknown option"
    expect_rc 2 "$opt" -o "$work/out.json"
    expect_rc 2 "$opt" --emit=svg "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" "$graph" "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" "$graph" -o
    expect_rc 2 "$opt" --verify-each=yes "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" --no-verify=yes "$graph" -o "$work/out.json"
    # --debug-rules: a line per rule tried, with the reason; the result is the same without it.
    expect_rc 2 "$opt" --debug-rules "$graph" -o "$work/out.json"
    expect_rc 0 "$opt" --propagate-device --policy=executorch --debug-rules=same_device "$graph" -o "$work/traced.json"
    grep -q "^debug-rules: node '[^']*': value 0: \`h2d_copy(d2h_copy(any as x) as d) as h \[same_device(h, x)\].*\`: node '[^']*' is [a-z_]*, expected h2d_copy$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--debug-rules does not explain a rule that did not apply"; }
    grep -q "^debug-rules: node '[^']*': \`h2d_copy(d2h_copy.*\`: applied$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--debug-rules does not report the rule that applied"; }
    if grep -v "same_device" "$work/stderr" | grep -q "^debug-rules:"; then fail "--debug-rules=same_device reports other rules"; fi
    expect_rc 0 "$opt" --propagate-device --policy=executorch "$graph" -o "$work/untraced.json"
    cmp -s "$work/traced.json" "$work/untraced.json" || fail "--debug-rules changed the result"
    # An optional value goes after '=': the next word is an input file, and the error says so.
    expect_rc 2 "$opt" --time-passes json "$graph" -o "$work/out.json"
    grep -q "more than one input file ('json' and '.*'); a value of --time-passes goes after '=': --time-passes=json" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "no hint for '--time-passes json'"; }
    expect_rc 2 "$opt" --policy=tpu --propagate-device "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" --skip-h2d-for-method-inputs "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" --propagate-device --no-non-cpu-memory-planning --skip-d2h-for-method-outputs "$graph" -o "$work/out.json"
    [ ! -e "$work/out.json" ] || fail "a usage error wrote an output file"
    expect_rc 0 "$opt" --help
    grep -q -- '--emit=<json|dot>' "$work/stdout" || fail "--help does not list --emit"
    expect_rc 0 "$opt" --version
    grep -q '^devpass-opt version [0-9]' "$work/stdout" || fail "--version prints no version"
    ;;
  *) fail "unknown mode" ;;
esac
