"""``mapeval eval``: the cost of one mapping."""
from __future__ import annotations

from mapping.cli.inputs import (add_mapping_options, add_model_options, load_mapped_inputs,
                            parse_params)
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
    from mapping.evaluation.reference import evaluate

    app, arch, mapping = load_mapped_inputs(args, "eval")
    result = evaluate(app, arch, mapping, metric=args.metric, aggregate=args.aggregate,
                      params=parse_params(args.param))
    if args.json:
        print_json(result.to_dict())
    else:
        print(result)
    return 0
