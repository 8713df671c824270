"""devpass-export: torchvision models (random weights) exported as devpass.graph/1 files under
a named partitioning (devpass.partition: whole, per_op, two_gpu).

    devpass-export resnet18 --partition per_op -o resnet18.per_op.json
    devpass-export resnet18 --partition per_op --keep-on-host aten.add.Tensor -o resnet18.per_op_host_adds.json
    devpass-export --all --models resnet18,mobilenet_v2 --out-dir tests/data/graphs/exported
"""

from __future__ import annotations

import argparse
import os
import sys
import time

MODELS = ("resnet18", "mobilenet_v2", "vit_b_16")


def _model(name: str):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    return model, (torch.randn(1, 3, 224, 224),)


def main(argv=None) -> int:
    from .partition import SCHEMES

    parser = argparse.ArgumentParser(prog="devpass-export", description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", choices=MODELS, help="a torchvision model")
    parser.add_argument("--partition", choices=SCHEMES, default="whole", help="how ops are delegated to devices")
    parser.add_argument("-o", "--output", help="the file to write (default: <model>.<partition>.json)")
    parser.add_argument("--keep-on-host", default="", metavar="OPS",
                        help="comma-separated aten op names left on the host (e.g. aten.add.Tensor), as a backend without them")
    parser.add_argument("--all", action="store_true", help="every model under every partitioning")
    parser.add_argument("--models", default=",".join(MODELS), help="with --all: which models (comma-separated)")
    parser.add_argument("--out-dir", default=".", help="with --all: where the files go")
    args = parser.parse_args(argv)
    if not args.all and args.model is None:
        parser.error("name a model, or --all")

    from .export import export_model, write

    jobs = (
        [(m, p, os.path.join(args.out_dir, f"{m}.{p}.json")) for m in args.models.split(",") for p in SCHEMES]
        if args.all
        else [(args.model, args.partition, args.output or f"{args.model}.{args.partition}.json")]
    )
    for model_name, scheme, path in jobs:
        if model_name not in MODELS:
            parser.error(f"unknown model {model_name!r} (one of {', '.join(MODELS)})")
        started = time.perf_counter()
        model, inputs = _model(model_name)
        host_ops = [op for op in args.keep_on_host.split(",") if op]
        document = export_model(model, inputs, scheme, name=os.path.splitext(os.path.basename(path))[0], keep_on_host=host_ops)
        write(document, path)
        print(f"devpass-export: {path}: {len(document['nodes'])} nodes, {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
