#!/usr/bin/env bash
# CTest driver (tests/docs/CMakeLists.txt) for check_doc_links.py: links and anchors resolve, and
# no tracked file dates its text or cites the tracker. Exits 77 (CTest's skip) without python3.
#
#   check_doc_links.sh SOURCE_DIR links|narration
set -uo pipefail
command -v python3 >/dev/null || { echo "check_doc_links: no python3: skipped"; exit 77; }
exec python3 "$(dirname "$0")/check_doc_links.py" "$@"
