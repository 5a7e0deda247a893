"""Start-up of ``mapeval check`` and ``mapeval analyse`` (issue 42): what a command
imports is what it uses, so that a small graph's check or analysis is not a second of
library imports.  Each case runs the command in a fresh interpreter and lists the heavy
modules it loaded; the times are measured by ``tests/perf/startup.py``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SDF = str(ROOT / "examples" / "timing" / "video.sdf")
CSDF = str(ROOT / "examples" / "csdf" / "orders.sdf")
#: Kiter's Echo (its K-periodic period 5094212000, ``tests/data/kiter_csdf.json``)
ECHO = str(ROOT / "tests" / "data" / "csdf" / "Echo.sdf")
SDF3_XML = str(ROOT / "examples" / "sdf3_lookup" / "audio.xml")
#: a cyclo-static SDF3 file whose actor fires an initialisation phase (period 5/2)
CSDF_XML = str(ROOT / "examples" / "csdf" / "warm_ring.xml")
#: libraries that a command on an application alone does not need (``numpy.ma``:
#: ``np.unique`` and ``np.isin`` import it on their first call)
NOT_FOR_THE_APPLICATION = ("scipy", "networkx", "pydantic", "matplotlib", "pandas", "pint",
                           "numpy.ma", "moa.cost_models", "moa.architecture",
                           "mapping.evaluation")
#: the simulation's modules (schedule and buffers), which the throughput alone never needs
#: (``moc.csdf`` and ``moc.iteration_program``: a large graph's, on numpy arrays)
SIMULATION = ("moc.self_timed", "moc.occupancy", "moc.csdf", "moc.iteration_program")
#: modules of mapeval (and the standard library's threads) that an application alone does
#: not need, each a few frozen dataclasses (a millisecond each, their methods compiled) or
#: a command's module: the bound problem (for an architecture), the other subcommands
#: (``analyse`` shares no helper with ``check``, and ``--tradeoff`` runs in its own
#: module), the ``.map`` records, the ``mapeval import`` classes, and ``check``'s tokens
#: of one iteration (``moc.activity``), which the analysis does not count
OTHER_WORK = ("mapping.semantics", "mapping.cli.commands.check",
              "mapping.cli.commands.tradeoff", "mapping.cli.commands.analyse", "dsl.mappings",
              "dsl.importers.importer", "moc.activity", "threading")
#: what the parser of the text formats loads: lark, and lark's own imports (``tempfile``;
#: ``threading`` through ``logging``)
LARK = ["lark", "tempfile", "threading"]
#: standard modules that cost start-up and that ``moc`` and the command line do without
#: (``moc.record`` instead of dataclasses, ``collections.abc`` instead of typing); lark,
#: which reads ``.sdf`` text, imports all three itself
STANDARD_AT_START = ("dataclasses", "inspect", "typing")


def loaded(argv: list[str], cache: Path, also: tuple[str, ...] = ()) -> tuple[dict, list[str]]:
    """The JSON that ``mapeval argv --json`` prints and the top-level packages and
    listed modules (and those of ``also``) in ``sys.modules`` when it returns."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from mapping.cli.main import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main({argv!r} + ["--json"])
        watched = {NOT_FOR_THE_APPLICATION + SIMULATION + OTHER_WORK +
                    ("numpy", "lark", "tempfile") + also!r}
        names = sorted(w for w in watched if w in sys.modules)
        print(json.dumps({{"code": code, "out": json.loads(out.getvalue()), "modules": names}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "XDG_CACHE_HOME": str(cache)})
    result = json.loads(proc.stdout)
    assert result["code"] == 0, proc.stderr
    return result["out"], result["modules"]


def test_check_of_an_sdf_graph_imports_no_numerical_library(tmp_path):
    out, modules = loaded(["check", SDF], tmp_path)
    assert out["files"][0]["repetitions"] == {"src": 1, "filt": 2, "enc": 1, "snk": 1}
    assert modules == sorted(LARK + ["mapping.cli.commands.check", "moc.activity"])


def test_check_of_a_small_cyclo_static_graph_imports_no_numerical_library(tmp_path):
    # its liveness comes from K-periodic schedules, a small graph's on Python lists
    out, modules = loaded(["check", CSDF], tmp_path)
    assert out["files"][0]["deadlock"] is False
    assert modules == sorted(LARK + ["mapping.cli.commands.check", "moc.activity"])


@pytest.mark.parametrize("path, period", [(SDF, "6"), (CSDF, "6"), (ECHO, "5094212000")])
def test_analyse_of_a_small_graph_without_simulation_imports_no_numerical_library(
        tmp_path, path, period):
    # neither numpy nor the simulation's modules: a small graph's K-periodic constraint
    # graphs are Python lists (``moc.howard_exact.on_lists``)
    out, modules = loaded(["analyse", "--no-simulate", path], tmp_path)
    assert out["exact"]["period"] == period
    assert modules == sorted(LARK + ["mapping.cli.commands.analyse"])


@pytest.mark.parametrize("path", [SDF, CSDF])
def test_analyse_of_a_small_graph_with_simulation_imports_no_numerical_library(
        tmp_path, path):
    """The default ``analyse`` (schedule, latency and buffers) of a small SDF graph and
    a small cyclo-static one: the simulation's modules, but on Python lists
    (``moc.occupancy_lists``), without numpy nor the cyclo-static firing graph
    (``moc.csdf``); its buffers those of the state space (``moc.self_timed.simulate``,
    run here)."""
    out, modules = loaded(["analyse", path], tmp_path)
    assert out["exact"]["period"] == "6"
    assert modules == sorted(LARK + ["mapping.cli.commands.analyse", "moc.occupancy",
                                     "moc.self_timed"])
    from mapping.cli.inputs import load_single
    from moc.self_timed import simulate
    from moc.timing import prepared, self_timed_period
    graph, durations, q, _ = prepared(load_single(Path(path), "sdf"))
    pace = self_timed_period(graph, durations, q).actor_periods
    growing = {c.name for c in graph.channels.values() if pace[c.src] < pace[c.dst]}
    assert out["buffers"] == dict(simulate(graph, durations, q, growing).buffers)


def test_analyse_of_an_sdf3_file_needs_no_parser_nor_temporary_files(tmp_path):
    """An SDF3 ``.xml`` file is read by the standard library's XML parser; nothing is
    written, so ``tempfile`` (which the atomic writes use) is not imported either, and
    without lark nothing starts ``threading`` (nor do ``mapeval import``'s classes load
    with the reader of the format)."""
    out, modules = loaded(["analyse", "--no-simulate", SDF3_XML], tmp_path)
    assert out["exact"]["period"] == "0"
    assert modules == ["mapping.cli.commands.analyse"]
    out, modules = loaded(["check", SDF3_XML], tmp_path)
    assert out["files"][0]["deadlock"] is False
    assert modules == ["mapping.cli.commands.check", "moc.activity"]


@pytest.mark.parametrize("path, period", [(SDF3_XML, "0"), (CSDF_XML, "5/2")])
def test_analyse_and_check_of_a_small_graph_need_no_dataclasses_nor_typing(tmp_path, path,
                                                                            period):
    """The files of Kiter's and SDF3's suites (SDF3 ``.xml``) through ``check``,
    ``analyse --no-simulate`` and the default ``analyse``: no :mod:`dataclasses` (its
    import brings :mod:`inspect`, and each class it makes compiles its methods), nor
    :mod:`typing`."""
    for argv in (["check", path], ["analyse", "--no-simulate", path], ["analyse", path]):
        out, modules = loaded(argv, tmp_path, STANDARD_AT_START)
        assert not set(STANDARD_AT_START) & set(modules), argv
        if argv[0] == "analyse":
            assert out["exact"]["period"] == period
        else:
            assert out["files"][0]["deadlock"] is False


def blas_threads(argv: list[str], environ: dict) -> dict:
    """``OPENBLAS_NUM_THREADS`` and the process's thread count (Linux's ``/proc``) after
    ``mapeval argv`` ran as a command line (``main()`` reading ``sys.argv``)."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, os, sys
        from mapping.cli.main import main
        sys.argv = ["mapeval"] + {argv!r}
        with contextlib.redirect_stdout(io.StringIO()):
            assert main() == 0
        import numpy
        with open("/proc/self/status") as f:
            threads = int(f.read().split("Threads:")[1].split()[0])
        print(json.dumps({{"setting": os.environ.get("OPENBLAS_NUM_THREADS"),
                           "threads": threads}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True,
                          env={**environ, "PYTHONPATH": str(ROOT)})
    return json.loads(proc.stdout)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_command_without_linear_algebra_starts_no_blas_threads():
    """``check`` and ``analyse`` run with one BLAS thread (OpenBLAS's pool of waiting
    threads costs a second core as much CPU as the rest of the start-up); a number the
    user chose is kept, and the commands that do linear algebra keep the default."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    assert blas_threads(["analyse", "--no-simulate", CSDF], environ) == \
        {"setting": "1", "threads": 1}
    assert blas_threads(["check", CSDF], environ)["setting"] == "1"
    assert blas_threads(["analyse", CSDF], {**environ, "OPENBLAS_NUM_THREADS": "2"}) == \
        {"setting": "2", "threads": 2}
    odroid = ROOT / "examples" / "odroid"
    evaluated = blas_threads(["eval", str(odroid / "stereo.sdf"), str(odroid / "odroid.moa"),
                              str(odroid / "mappings.map"), "--mapping", "mixed"], environ)
    assert evaluated["setting"] is None


def test_the_parser_cache_is_used_and_a_broken_one_rebuilt(tmp_path):
    """The parse tables cached by lark give the same graphs as a fresh build, and a
    cache file that is garbage is rebuilt rather than trusted."""
    first, _ = loaded(["check", SDF, CSDF], tmp_path)
    cached = tmp_path / "mapeval" / "grammar-sdf-py{}{}.cache".format(*sys.version_info[:2])
    assert cached.stat().st_size > 1000
    second, _ = loaded(["check", SDF, CSDF], tmp_path)
    cached.write_bytes(b"not a cache\n\x80\x04garbage")
    third, _ = loaded(["check", SDF, CSDF], tmp_path)
    assert first == second == third
    assert cached.stat().st_size > 1000


def test_the_package_names_stay_the_functions_once_their_modules_load():
    """``moc`` loads its names on first use; ``moc.activity`` and ``moc.tradeoff`` are
    functions even after the modules of the same names were imported first."""
    code = textwrap.dedent("""
        import moc.activity, moc.tradeoff
        from moc import activity, tradeoff, SDFGraph
        import moc
        assert callable(activity) and activity.__module__ == "moc.activity"
        assert tradeoff.__module__ == "moc.tradeoff" and moc.activity is activity
        assert SDFGraph.__module__ == "moc.graph"
        for name in moc.__all__:
            getattr(moc, name)                   # every public name resolves
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
