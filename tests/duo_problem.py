"""The two-PE problem shared by the fidelity, validation and measurement tests: a chain
``a -> b`` (``a`` has ``n`` quanta, ``b`` 2) on PEs with LSLA alphas 1 and 3 and a bus of
0.5 per byte, and its four mappings.  Expected values are computed by hand in each test."""

APP = """
sdf chain {
    param n = 1
    actor a [quanta = n]
    actor b [quanta = 2]
    a -> b
}
"""
ARCH = """
moa duo {
    pe p0 [time = lsla(alpha = 1)]
    pe p1 [time = lsla(alpha = 3)]
    cn bus [time = lsla(alpha = 0.5)]
    p0 -- bus
    p1 -- bus
}
"""
MAPS = """
mapping both_p0 { a -> p0; b -> p0 }
mapping both_p1 { a -> p1; b -> p1 }
mapping split { a -> p0; b -> p1 }
mapping rev { a -> p1; b -> p0 }
"""
#: mapping -> (PE of a, PE of b)
PLACES = {"both_p0": ("p0", "p0"), "both_p1": ("p1", "p1"), "split": ("p0", "p1"),
          "rev": ("p1", "p0")}


def write_inputs(directory, arch: str = ARCH, maps: str = MAPS) -> dict:
    """Write ``app.sdf``, ``arch.moa`` and ``maps.map`` into ``directory``: their paths by
    extension (``sdf``, ``moa``, ``map``)."""
    paths = {}
    for name, text in (("app.sdf", APP), ("arch.moa", arch), ("maps.map", maps)):
        (directory / name).write_text(text)
        paths[name.split(".")[1]] = str(directory / name)
    return paths
