#!/usr/bin/env bash
# Checks that doc blocks show what their commands print (tests/docs/CMakeLists.txt runs it).
#
#   check_doc_outputs.sh --root DIR --work DIR [--tool NAME=PATH]... [--as=COMMAND=REPLACEMENT]... DOC:LINE...
#
# DOC:LINE is the opening fence of a block; the line before it is one of
#   <!-- output: COMMAND -->   the block is what COMMAND prints
#   <!-- output -->            the block is a transcript: lines `$ COMMAND` (continued on `> ` lines),
#                              each followed by what it prints
# COMMAND runs under bash in WORK, a fresh folder linking every top-level entry of ROOT (so
# `tests/data/...` resolves and whatever the command writes stays in WORK), with each --tool
# first on PATH under its NAME; a COMMAND that is or starts with an --as COMMAND runs REPLACEMENT
# in its place (plus the rest of its words). Compared: stdout and stderr together, as a terminal
# shows them (a block that shows one redirects the other in its command), after replacing times,
# the only thing that differs from run to run, on both sides: a number before " ms" and the value
# of "seconds". Runs with LC_ALL=C and no visible GPU (the docs show the output without one).
set -euo pipefail

root="" work=""
tools=() replacements=() blocks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --tool) tools+=("$2"); shift 2 ;;
    --as=*) replacements+=("${1#--as=}"); shift ;;
    -*) echo "check_doc_outputs: unknown option $1" >&2; exit 2 ;;
    *) blocks+=("$1"); shift ;;
  esac
done
[ -n "$root" ] && [ -n "$work" ] && [ ${#blocks[@]} -gt 0 ] || { echo "usage: see the comment at the top of $0" >&2; exit 2; }

normalise() {
  sed -E -e 's/[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)? ms\b/<time> ms/g' \
         -e 's/"seconds": [0-9.eE+-]+/"seconds": <time>/g'
}

status=0
# Prints what one doc command prints (stdout and stderr) in the scratch folder; fails as it fails.
run_command() {
  local run=$1 r name
  for r in "${replacements[@]}"; do
    name=${r%%=*}
    if [ "$run" = "$name" ] || [[ "$run" == "$name "* ]]; then run=${r#*=}${run#"$name"}; fi
  done
  (cd "$work" && PATH="$work/.bin:$PATH" LC_ALL=C CUDA_VISIBLE_DEVICES="" bash -c "$run" 2>&1 </dev/null)
}

# Appends what `command` prints to `actual`; on failure reports it and clears `ok`.
run_into_actual() {
  local out
  if out=$(run_command "$command"); then
    [ -z "$out" ] || actual+=$out$'\n'
  else
    printf '%s: the command failed: %s\n%s\n' "$where" "$command" "$out" >&2
    ok=0
  fi
}

status=0
for block in "${blocks[@]}"; do
  doc=${block%:*} line=${block##*:}
  where="${doc#"$root"/}:$line"
  marker=$(sed -n "$((line - 1))p" "$doc")
  sed -n "${line}p" "$doc" | grep -q '^```' || { echo "$where: not the opening fence of a block" >&2; exit 2; }
  expected=$(awk -v start="$line" 'NR > start { if (/^```/) exit; print }' "$doc")

  rm -rf "$work" && mkdir -p "$work/.bin"
  for entry in "$root"/*; do
    [ "$(basename "$entry")" = build ] || ln -s "$entry" "$work/"
  done
  for t in "${tools[@]}"; do ln -s "${t#*=}" "$work/.bin/${t%%=*}"; done

  actual="" ok=1
  if [[ "$marker" =~ ^'<!-- output: '(.*)' -->'$ ]]; then
    command=${BASH_REMATCH[1]}
    run_into_actual
  elif [ "$marker" = "<!-- output -->" ]; then
    # A transcript: the command lines are copied, the output lines replaced by what they print.
    [[ "$expected" == '$ '* ]] || { echo "$where: a transcript starts with '\$ COMMAND'" >&2; exit 2; }
    command="" in_command=0
    while IFS= read -r text; do
      if [ "$in_command" = 1 ] && [[ "$text" == '> '* ]]; then
        command+=$'\n'${text#'> '} actual+=$text$'\n'
        continue
      fi
      if [ "$in_command" = 1 ]; then in_command=0; run_into_actual; fi
      if [[ "$text" == '$ '* ]]; then command=${text#'$ '} actual+=$text$'\n' in_command=1; fi
    done <<<"$expected"
    if [ "$in_command" = 1 ]; then run_into_actual; fi
  else
    echo "$where: the line before the block is not an <!-- output --> marker: $marker" >&2
    exit 2
  fi
  if [ "$ok" = 0 ]; then
    status=1
    continue
  fi
  if ! diff -u --label "$where (the doc)" --label "what it prints" \
         <(printf '%s\n' "$expected" | normalise) <(printf '%s\n' "${actual%$'\n'}" | normalise); then
    printf '%s: the block is not what its command prints (diff above)\n' "$where" >&2
    status=1
  fi
done
exit "$status"
