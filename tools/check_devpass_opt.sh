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
#   check_devpass_opt.sh <devpass-opt> <work-dir> families <graph.json> <signatures.json>
#       --fuse --insert-casts: exit 0, the phases in --stats in order, a result that verifies, reads
#       back as written and that a second run leaves unchanged, the same with --no-verify and
#       --debug-rules; with --propagate-device (both policies, --plan-memory) exit 0, and the nodes
#       of propagating the families' output: they run before device propagation.
#   check_devpass_opt.sh <devpass-opt> <work-dir> family_counts <graph.json> <signatures.json> <fusions> <casts>
#       --fuse --insert-casts --stats: that many fusions and casts, the fused kernels in the output;
#       --debug-rules explains the cast rule where it did not apply and reports where it did.
#   check_devpass_opt.sh <devpass-opt> <work-dir> family_errors <graph.json> <signatures.json> <bad-signatures.json>
#       a bad or missing signatures file: exit 1 naming the file, op and slot, nothing written;
#       --insert-casts without a file, twice, --fuse=value, --debug-rules without a pass: exit 2.
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
                   "--skip-h2d-for-method-inputs --skip-d2h-for-method-outputs" "--no-elide" "--no-resident-constants"; do
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
  families)
    sigs=$5
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" --verify-each --stats "$graph" -o "$work/fam.json"
    [ "$(sed -n 's/^\([a-z-]*\): [0-9]* rewrites, .*/\1/p' "$work/stderr" | tr '\n' ' ')" = "fuse insert-casts elide-cast-round-trips " ] ||
      { cat "$work/stderr" >&2; fail "--stats does not list fuse, insert-casts, elide-cast-round-trips"; }
    grep -q "^copies: " "$work/stderr" || fail "--stats printed no copy line"
    expect_rc 0 "$opt" --verify-each "$work/fam.json" -o "$work/same.json"
    cmp -s "$work/fam.json" "$work/same.json" || fail "the result does not read back as written"
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" "$work/fam.json" -o "$work/again.json"
    cmp -s "$work/fam.json" "$work/again.json" || fail "running the families again changed the graph"
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" --no-verify "$graph" -o "$work/unverified.json"
    cmp -s "$work/fam.json" "$work/unverified.json" || fail "--no-verify changed the result"
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" --debug-rules "$graph" -o "$work/traced.json"
    cmp -s "$work/fam.json" "$work/traced.json" || fail "--debug-rules changed the result"
    # With device propagation: the nodes of propagating the families' output (the file lists them in
    # another order, so the copies are made in another order: the lines are compared as sets).
    for policy in executorch devpass; do
      expect_rc 0 "$opt" --insert-casts="$sigs" --propagate-device --policy=$policy --fuse --verify-each --plan-memory \
        --stats "$graph" -o "$work/planned.json"
      expect_rc 0 "$opt" --insert-casts="$sigs" --propagate-device --policy=$policy --fuse "$graph" -o "$work/both.json"
      expect_rc 0 "$opt" --propagate-device --policy=$policy "$work/fam.json" -o "$work/after.json"
      cmp -s <(sed 's/,$//' "$work/both.json" | sort) <(sed 's/,$//' "$work/after.json" | sort) ||
        fail "--policy=$policy: the families did not run before device propagation"
    done
    [ -z "$(ls "$work" | grep '\.tmp\.')" ] || fail "a temporary file was left behind"
    ;;
  family_counts)
    sigs=$5 fusions=$6 casts=$7
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" --stats "$graph" -o "$work/out.json"
    grep -q "^fuse: $fusions rewrites, [0-9]* matches tried, +$fusions/-[0-9]* nodes$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--stats does not report $fusions fusions"; }
    grep -q "^insert-casts: [0-9]* rewrites, [0-9]* matches tried, +$casts/-0 nodes$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--stats does not report $casts casts"; }
    [ "$(grep -o '"kernel":"fused\.[a-z0-9_]*"' "$work/out.json" | wc -l)" -eq "$fusions" ] || fail "not $fusions fused nodes written"
    [ "$(grep -o '"kernel":"aten\._to_copy\.default"' "$work/out.json" | wc -l)" -eq "$casts" ] || fail "not $casts casts written"
    expect_rc 0 "$opt" --fuse --insert-casts="$sigs" --debug-rules=wants_another_dtype "$graph" -o "$work/traced.json"
    grep -q "^debug-rules: node '[^']*': \`on_use(any as k, any as v) \[has_cast_signature(k) && wants_another_dtype(k, v)\].*\`: applied$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--debug-rules does not report the cast rule where it applied"; }
    grep -q "^debug-rules: node '[^']*': input [0-9]*: .*: wants_another_dtype(k, v) is false: " "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--debug-rules does not explain the cast rule where it did not apply"; }
    if grep -v "wants_another_dtype" "$work/stderr" | grep -q "^debug-rules:"; then fail "--debug-rules=wants_another_dtype reports other rules"; fi
    ;;
  family_errors)
    sigs=$5 bad=$6
    expect_rc 1 "$opt" --insert-casts="$bad" "$graph" -o "$work/out.json"
    grep -q "^devpass-opt: $bad: op 'conv2d': slot 1: 'float17' is not a dtype (" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "a bad signature is not named by file, op and slot"; }
    expect_rc 1 "$opt" --fuse --insert-casts="$work/missing.json" "$graph" -o "$work/out.json"
    grep -q "^devpass-opt: $work/missing.json: cannot open the file$" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "a missing signatures file is not named"; }
    [ ! -e "$work/out.json" ] || fail "an output file was written"
    [ ! -s "$work/stdout" ] || fail "something was written to stdout"
    expect_rc 2 "$opt" --insert-casts= "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" --insert-casts="$sigs" --insert-casts="$sigs" "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" "$graph" -o "$work/out.json" --insert-casts
    expect_rc 2 "$opt" --fuse=yes "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" --debug-rules "$graph" -o "$work/out.json"
    grep -q "^devpass-opt: error: --debug-rules needs a pass whose rules it traces" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "--debug-rules without a pass is not explained"; }
    [ ! -e "$work/out.json" ] || fail "a usage error wrote an output file"
    expect_rc 0 "$opt" --help
    grep -q -- '--insert-casts=<signatures.json>' "$work/stdout" || fail "--help does not list --insert-casts"
    grep -q -- '--fuse ' "$work/stdout" || fail "--help does not list --fuse"
    ;;
  *) fail "unknown mode" ;;
esac
