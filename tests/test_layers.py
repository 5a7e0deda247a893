"""The packages import downward only (SPEC §2, issue 8).

Every ``import`` in the source counts, those inside functions too: a lazy import is
still a dependency.  ``moc`` and ``moa`` never import each other; ``dsl`` never imports
``mapping``; inside ``mapping`` each module may import only its own layer or lower ones,
and the module graph has no cycle.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("moc", "moa", "dsl", "mapping")

#: the layers of ``mapping``, lowest first; a module's layer is its longest matching prefix
MAPPING_LAYERS = [
    ("errors, registries, output files", ["mapping.errors", "mapping.options",
                                          "mapping.registry", "mapping.output",
                                          "mapping.progress", "mapping.bulk",
                                          "mapping.overrides"]),
    ("domain", ["mapping.semantics.problem"]),
    ("placement", ["mapping.semantics.routing", "mapping.semantics.traffic"]),
    ("semantics", ["mapping.semantics"]),
    ("evaluators", ["mapping.evaluation"]),
    ("search", ["mapping.search"]),
    ("calibration", ["mapping.calibration", "mapping.profiler"]),
    ("plots", ["mapping.plots"]),
    ("command line", ["mapping.cli", "mapping.__init__"]),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1 and parts[0] != "mapping":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = module_name(path).rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # ``from pkg import mod`` depends on ``pkg.mod``; ``from mod import name`` on
            # ``mod`` (resolve() strips ``.name``)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def source_modules():
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def resolve(name: str, modules) -> str | None:
    """The module that ``name`` (a module or ``module.attribute``) lives in."""
    while name:
        if name in modules:
            return name
        if f"{name}.__init__" in modules:
            return f"{name}.__init__"
        name = name.rpartition(".")[0]
    return None


@pytest.fixture(scope="module")
def graph():
    modules = source_modules()
    g = nx.DiGraph()
    for name, path in modules.items():
        g.add_node(name)
        for target in imports_of(path):
            resolved = resolve(target, modules)
            if resolved and resolved != name:
                g.add_edge(name, resolved)
    return g


def test_moc_and_moa_never_import_each_other(graph):
    bad = [(a, b) for a, b in graph.edges
           if {a.split(".")[0], b.split(".")[0]} == {"moc", "moa"}]
    assert not bad


def test_dsl_never_imports_mapping(graph):
    bad = [(a, b) for a, b in graph.edges if a.startswith("dsl") and b.startswith("mapping")]
    assert not bad


def test_no_cycle_between_dsl_and_mapping(graph):
    sub = graph.subgraph([n for n in graph if n.split(".")[0] in ("dsl", "mapping")])
    cycles = list(nx.simple_cycles(sub))
    assert not cycles, cycles[:3]


def test_no_cycle_in_the_models_and_languages(graph):
    """``moc``, ``moa`` and ``dsl`` import each module after the ones it needs: no
    circle, lazy imports counted (one module decides SDF or cyclo-static, issue 39)."""
    sub = graph.subgraph([n for n in graph if n.split(".")[0] in ("moc", "moa", "dsl")])
    cycles = list(nx.simple_cycles(sub))
    assert not cycles, cycles[:3]


def private_imports(path: Path) -> list[str]:
    """``from module import _name`` of a module of the project other than ``path``'s own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and \
                (node.module or "").split(".")[0] in PACKAGES:
            found += [f"{module_name(path)}:{node.lineno} imports {node.module}.{a.name}"
                      for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_private_name_crosses_a_module_of_the_models():
    """A name with a leading underscore stays in its module: what another module needs
    is public (``moc``, ``moa`` and ``dsl``)."""
    modules = source_modules()
    bad = [line for name, path in modules.items() if name.split(".")[0] in ("moc", "moa", "dsl")
           for line in private_imports(path)]
    assert not bad, "\n".join(bad)


def layer_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(MAPPING_LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} belongs to no layer of MAPPING_LAYERS"
    return rank


def test_mapping_imports_downward_only(graph):
    upward = []
    for a, b in graph.edges:
        if a.startswith("mapping") and b.startswith("mapping"):
            if layer_of(b) > layer_of(a):
                upward.append(f"{a} ({MAPPING_LAYERS[layer_of(a)][0]}) imports "
                              f"{b} ({MAPPING_LAYERS[layer_of(b)][0]})")
    assert not upward, "\n".join(upward)


def test_numeric_layers_import_without_lark():
    code = textwrap.dedent("""
        import sys
        class NoLark:
            def find_spec(self, name, path=None, target=None):
                if name == "lark" or name.startswith("lark."):
                    raise ImportError("lark is not installed here")
        sys.meta_path.insert(0, NoLark())
        import mapping.calibration.elements, mapping.calibration.validation
        import mapping.evaluation.batch, mapping.search, mapping.evaluation.reference
        import mapping.evaluation.sweep, mapping.calibration.fidelity, mapping.calibration.measurements
        assert not any(m == "lark" or m.startswith("lark.") for m in sys.modules)
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def private_names_defined(tree) -> set[str]:
    """The ``_names`` a module defines: functions, classes, module and class attributes,
    and attributes it assigns on any object (``self._cache = ...``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_names_used(tree) -> list[tuple[int, str]]:
    """``_names`` a module takes from elsewhere: imported, or read as an attribute of
    something other than ``self``/``cls``."""
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
            used += [(node.lineno, a.name) for a in node.names
                     if a.name.startswith("_") and not a.name.startswith("__")]
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_")
              and not node.attr.startswith("__")
              and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            used.append((node.lineno, node.attr))
    return used


def test_no_private_name_crosses_a_module():
    """A module's ``_private`` names are its own: another module of mapeval that reads one
    (an import, or ``model._bind(...)`` on an object of another module's class) depends on
    what its owner may change freely."""
    trees = {name: ast.parse(path.read_text(), str(path))
             for name, path in source_modules().items()}
    defined = {name: private_names_defined(tree) for name, tree in trees.items()}
    ours = set().union(*defined.values())
    crossing = [f"{name}:{line} uses {attr}, defined in "
                + ", ".join(sorted(m for m, d in defined.items() if attr in d))
                for name, tree in trees.items()
                for line, attr in private_names_used(tree)
                if attr in ours and attr not in defined[name]]
    assert not crossing, "\n".join(crossing)


def test_every_import_of_mapeval_names_a_module_that_exists():
    """An import of a moved module inside a function fails only when that function runs:
    every ``import`` of ``moc``, ``moa``, ``dsl`` or ``mapping`` must name a module (or
    a name of one) that exists."""
    modules = source_modules()
    missing = [f"{name} imports {target}"
               for name, path in modules.items() for target in imports_of(path)
               if resolve(target, modules) in (None, "mapping.__init__")
               and target.split(".")[0] == "mapping" and target.count(".") >= 1
               and not hasattr(__import__("mapping"), target.split(".")[1])]
    assert not missing, "\n".join(missing)


#: the most lines a module of the core may have (one concern its name says)
MAX_MODULE_LINES = 700


def test_no_module_of_the_core_is_over_700_lines():
    """Each module of ``moc``, ``moa``, ``mapping`` and ``dsl`` stays under about 700
    lines: a longer one holds more than the one concern its name says (issue 39)."""
    long = sorted(f"{name}: {n} lines" for name, path in source_modules().items()
                  if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES)
    assert not long, "\n".join(long)
