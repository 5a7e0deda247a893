"""A generated 10,000-actor file parses (speed is measured by benchmarks, not here)."""
import dsl


def chain(n):
    lines = ["sdf chain {", "    param S = 64"]
    lines += [f"    actor a{i} [quanta = {i % 7 + 1}, S = S]" for i in range(n)]
    lines += [f"    a{i} -> a{i + 1} [prod = 2, cons = 2, size = 4]" for i in range(n - 1)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_ten_thousand_actors():
    (g,) = dsl.parse_sdf(chain(10_000), "chain.sdf")
    assert len(g.actors) == 10_000 and len(g.channels) == 9_999
    assert g.actors["a9999"].origin == ("chain.sdf", 10_002, 11)
    assert g.channels["a0->a1"].prod == 2
    assert str(g.actors["a5"].attrs["S"]) == "S"
