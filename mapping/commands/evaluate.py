"""``mapeval eval``: the cost of one mapping."""
from __future__ import annotations

from mapping.evaluate import evaluate
from mapping.inputs import (add_mapping_options, add_model_options, choose_mapping, classify,
                            load_single, one, parse_params)
from mapping.output import print_json


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="evaluate one mapping",
        description="Evaluate one metric of one mapping of an application (.sdf) onto an "
        "architecture (.moa). Files may come in any order; they are told apart by extension.",
        epilog="example: mapeval eval app.sdf arch.moa maps.map --mapping fast -p S=2048 --json")
    p.add_argument("files", nargs="+", metavar="FILE", help="APP.sdf ARCH.moa [MAP.map]")
    add_mapping_options(p)
    add_model_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(run=run)


def run(args):
    inputs = classify(args.files, ("sdf", "moa", "map"))
    app = load_single(one(inputs.sdf, "sdf", "eval"), "sdf", args.graph)
    arch = load_single(one(inputs.moa, "moa", "eval"), "moa", args.architecture)
    mapping = choose_mapping(one(inputs.map, "map", "eval", required=False), args.mapping,
                             args.map)
    result = evaluate(app, arch, mapping, metric=args.metric, aggregate=args.aggregate,
                      params=parse_params(args.param))
    if args.json:
        print_json(result.to_dict())
    else:
        print(result)
    return 0
