"""The size table of the rotate example (README): for each profile prof_{i,r}N/ in
DIRECTORY, the totals of the inclusive import, computation per byte, the share of
getchar and putchar in the instructions, and the local (self-loop) shares of the bytes.

usage: python3 table.py DIRECTORY N N ..."""
import sys
from collections import Counter
from dsl.importers.profile import import_profile, read_logs

COLUMNS = ("side", "kernel", "instructions", "bytes", "instructions/byte",
           "getchar+putchar share of instructions", "local share of bytes",
           "read_ppm local", "write_ppm local", "kernel local")
print("| " + " | ".join(COLUMNS) + " |")
print("|" + "---|" * len(COLUMNS))
for n in map(int, sys.argv[2:]):
    for k in "ir":
        d = f"{sys.argv[1]}/prof_{k}{n}"
        t = read_logs(d)
        ops = Counter()
        for i, name in t.names.items():
            ops[name] += t.icount.get(i, 0)
        g = import_profile(d, inclusive=True).graph
        I = sum(a.attrs["ops"] for a in g.actors.values())
        B = sum(c.size for c in g.channels.values())
        own = {c.src: c.size for c in g.channels.values() if c.src == c.dst}
        kernel = "iter_rot" if k == "i" else "rec_rot"
        io = (ops["getchar"] + ops["putchar"]) / I
        local = sum(own.values()) / B
        shares = " | ".join(f"{own.get(f, 0) / B:.1%}" for f in ("read_ppm", "write_ppm", kernel))
        print(f"| {n}x{n} | {kernel} | {I:,} | {B:,} | {I / B:.3f} | {io:.1%} | {local:.1%} | "
              f"{shares} |")
