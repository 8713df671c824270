#!/usr/bin/env bash
# Every option `devpass-opt --help` lists is documented in docs/command-line.md, and every option
# the options table there lists is one devpass-opt has (tests/docs/CMakeLists.txt runs it).
# devpass-run's options are its --help text, shown and compared in docs/runtime.md.
#
#   check_doc_options.sh <docs/command-line.md> <devpass-opt>
set -euo pipefail
doc=$1 opt=$2
status=0
helped=$("$opt" --help | grep -oE -- '(^|[[ ])--?[a-z][-a-z0-9]*' | grep -oE -- '--?[a-z][-a-z0-9]*' | sort -u)
[ -n "$helped" ] || { echo "check_doc_options: $opt --help lists no option" >&2; exit 1; }
for option in $helped; do
  grep -qF -- "\`$option" "$doc" || { echo "$doc: devpass-opt $option is not documented" >&2; status=1; }
done
# The table's rows start with | `--name or | `-o.
for option in $(sed -n '/^## Options/,/^## [^O]/p' "$doc" | grep -oE -- '^\| `--?[a-z][-a-z0-9]*' | grep -oE -- '--?[a-z][-a-z0-9]*' | sort -u); do
  grep -qxF -- "$option" <<<"$helped" || { echo "$doc: the options table lists $option, which devpass-opt --help does not" >&2; status=1; }
done
exit $status
