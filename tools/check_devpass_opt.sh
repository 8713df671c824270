#!/usr/bin/env bash
# CTest driver for devpass-opt (tools/CMakeLists.txt adds one test per case):
#   check_devpass_opt.sh <devpass-opt> <work-dir> roundtrip <graph.json>
#       JSON out, read back and written again byte-identical, also through stdin/stdout; DOT out
#       (checked by Graphviz when `dot` is installed).
#   check_devpass_opt.sh <devpass-opt> <work-dir> bad <graph.json>
#       exit 1, a message on stderr naming the file, and the -o file left as it was.
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
    ;;
  usage)
    expect_rc 2 "$opt" --no-such-option "$graph" -o "$work/out.json"
    grep -q "unknown option '--no-such-option'" "$work/stderr" || fail "no message for an unknown option"
    expect_rc 2 "$opt" -o "$work/out.json"
    expect_rc 2 "$opt" --emit=svg "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" "$graph" "$graph" -o "$work/out.json"
    expect_rc 2 "$opt" "$graph" -o
    expect_rc 2 "$opt" --verify-each=yes "$graph" -o "$work/out.json"
    [ ! -e "$work/out.json" ] || fail "a usage error wrote an output file"
    expect_rc 0 "$opt" --help
    grep -q -- '--emit=<json|dot>' "$work/stdout" || fail "--help does not list --emit"
    expect_rc 0 "$opt" --version
    grep -q '^devpass-opt version [0-9]' "$work/stdout" || fail "--version prints no version"
    ;;
  *) fail "unknown mode" ;;
esac
