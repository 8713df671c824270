# Used by scripts/gpu-check: reads one devpass-run report on stdin and prints whether its
# checksums equal the host reference's (argv: policy, flags, graph, reference checksums).
import json, sys
policy, flags, f, ref = sys.argv[1:]
r = json.load(sys.stdin)
got = str([o["checksum"] for o in r["outputs"]])
print(("EQUAL " if got == ref else "DIFFER") + f" {r['device']:8} {policy:10} {flags or '-':55} {f.split('/graphs/')[1]}  {r['seconds']:.4f}s copies={r['copies']}")
