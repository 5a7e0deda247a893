"""``mapeval platforms``: the built-in boards, or one board's ``.moa`` text."""
from __future__ import annotations


def add_parser(subparsers, name):
    p = subparsers.add_parser(
        name, help="list the built-in boards, or show one",
        description="Without NAME, list the built-in boards (name, kind, one line). With "
        "NAME, print that board's .moa text: its sources, its figures and the parameters "
        "marked 'fit:' that no public source gives. A board's name is accepted wherever "
        "a .moa file is (mapeval eval app.sdf odroid-xu4 map.map); a file of that name "
        "in the working directory is read instead.",
        epilog="example: mapeval platforms rpi5 > my_board.moa")
    p.add_argument("name", nargs="?", metavar="NAME", help="the board to show")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the list (name, kind, about, sources) or the board "
                   "with its 'text'")
    p.set_defaults(run=run)


def _entry(b) -> dict:
    return {"name": b.name, "kind": b.kind, "about": b.about, "sources": b.sources}


def run(args):
    from moa import boards
    from mapping.errors import InputError
    from mapping.output import print_json
    if args.name is not None:
        try:
            b = boards.board(args.name)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        text = b.path.read_text()
        if args.json:
            print_json({**_entry(b), "text": text})
        else:
            print(text, end="")
        return 0
    found = boards.boards()
    if args.json:
        print_json([_entry(b) for b in found])
        return 0
    name_w = max(len(b.name) for b in found)
    kind_w = max(len(b.kind) for b in found)
    for b in found:
        print(f"{b.name:<{name_w}}  {b.kind:<{kind_w}}  {b.about}")
    return 0
