"""Bad input: a clear message pointing at FILE:LINE:COL, exit status 2, no traceback."""
import re
import textwrap

import pytest

from mapping.cli.main import main

APP = """\
sdf app {
    actor a [quanta = 2]
    actor b
    a -> b [prod = 2, cons = 1]
}
"""
ARCH = """\
moa arch {
    pe p0 [time = lsla(alpha = 1)]
    pe p1 [time = lsla(alpha = 2)]
    cn bus [time = lsla(alpha = 0.5)]
    p0 -- bus
    p1 -- bus
}
"""
MAP = "mapping m { a -> p0; b -> p1 }\n"


@pytest.fixture
def files(tmp_path):
    def write(app=APP, arch=ARCH, mapping=MAP):
        paths = []
        for name, text in (("app.sdf", app), ("arch.moa", arch), ("m.map", mapping)):
            path = tmp_path / name
            path.write_text(textwrap.dedent(text))
            paths.append(str(path))
        return paths
    return write


def fails(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err and captured.out == ""
    return captured.err


def located(err, path, line, col=None):
    """The message starts FILE:LINE:COL and is followed by the line and a caret."""
    m = re.match(rf"{re.escape(path)}:(\d+):(\d+): error: ", err)
    assert m, err
    assert int(m.group(1)) == line, err
    if col is not None:
        assert int(m.group(2)) == col, err
    source_line = open(path).read().splitlines()[line - 1]
    lines = err.splitlines()
    assert source_line.strip() in lines[1], err
    caret_col = lines[2].index("^") - (lines[1].index(source_line.strip())
                                       - source_line.index(source_line.strip()))
    assert caret_col == int(m.group(2)) - 1, err
    return err


def test_ok_baseline(files, capsys):
    assert main(["eval", *files(), "--json"]) == 0


def test_syntax_error_gives_line_and_column(files, capsys):
    app, arch, m = files(app="sdf app {\n    actor a [quanta = 2\n    actor b\n}\n")
    err = fails(capsys, "eval", app, arch, m)
    located(err, app, 2)


def test_syntax_error_in_moa_points_at_the_token(files, capsys):
    app, arch, m = files(arch="moa arch {\n    pe p0 [time = lsla(alpha = 1)]\n    p0 -- -- x\n}\n")
    err = fails(capsys, "eval", app, arch, m)
    located(err, arch, 3, 11)


def test_inconsistent_graph_names_a_channel(files, capsys):
    app, arch, m = files(app="""\
        sdf app {
            actor a
            actor b
            a -> b [prod = 2]
            channel back : b -> a [prod = 1, delay = 5]
        }
        """)
    err = fails(capsys, "eval", app, arch, m)
    located(err, app, 5)
    assert "inconsistent" in err and "'back'" in err


def test_deadlock_names_the_actors(files, capsys):
    app, arch, m = files(app="""\
        sdf app {
            actor a
            actor b
            a -> b
            b -> a
        }
        """)
    err = fails(capsys, "check", app)
    assert "deadlock" in err and "'a'" in err and "'b'" in err


def test_unmapped_actor(files, capsys):
    err = fails(capsys, "eval", *files(mapping="mapping m { a -> p0 }\n"))
    assert "does not map actor 'b'" in err


def test_unknown_pe_names_itself(files, capsys):
    app, arch, m = files(mapping="mapping m {\n  a -> p0\n  b -> p9\n}\n")
    err = fails(capsys, "eval", app, arch, m)
    located(err, m, 3)
    assert "'p9'" in err and "unknown PE" in err


def test_unknown_cost_model(files, capsys):
    app, arch, m = files(arch=ARCH.replace("lsla(alpha = 2)", "warp(speed = 9)"))
    err = fails(capsys, "eval", app, arch, m)
    located(err, arch, 3)
    assert "unknown cost model 'warp'" in err and "lsla" in err


def test_negative_model_parameter(files, capsys):
    app, arch, m = files(arch=ARCH.replace("alpha = 2", "alpha = -2"))
    err = fails(capsys, "eval", app, arch, m)
    located(err, arch, 3)
    assert "element 'p1'" in err and "metric 'time'" in err and "'alpha'" in err


def test_missing_model_parameter(files, capsys):
    app, arch, m = files(arch=ARCH.replace("lsla(alpha = 0.5)", "lsla(beta = 0.5)"))
    err = fails(capsys, "eval", app, arch, m)
    assert "element 'bus'" in err and "missing parameter 'alpha'" in err


def test_pe_pair_without_route(files, capsys):
    app, arch, m = files(arch=ARCH.replace("    p1 -- bus\n", ""))
    err = fails(capsys, "eval", app, arch, m)
    assert "no route from PE 'p0' to PE 'p1'" in err and "'a->b'" in err


@pytest.mark.parametrize("kind, text, message", [
    ("app", "sdf app {\n  actor a\n  actor a\n}\n", "duplicate actor 'a'"),
    ("app", "sdf app {\n  actor a\n  actor b\n  a -> b\n  a -> b\n}\n", "name it"),
    ("arch", "moa arch {\n  pe p0\n  cn p0\n}\n", "duplicate element 'p0'"),
    ("mapping", "mapping m { a -> p0; b -> p1 }\nmapping m { a -> p0; b -> p0 }\n",
     "duplicate mapping 'm'"),
])
def test_duplicate_names(files, capsys, kind, text, message):
    # issue 8: a bad file no longer hides the report of the others (exit 2 all the same)
    paths = files(**{kind: text})
    assert main(["check", *paths]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and message in err
    target = paths[["app", "arch", "mapping"].index(kind)]
    assert err.startswith(f"{target}:")
    reported = [line.split(": ")[0] for line in captured.out.splitlines()
                if not line.startswith(" ")]
    assert reported == [p for p in paths if p != target]


def test_several_mappings_need_a_choice(files, capsys):
    err = fails(capsys, "eval", *files(mapping=MAP + "mapping n { a -> p1; b -> p1 }\n"))
    assert "--mapping" in err and "m, n" in err


def test_unknown_parameter_override(files, capsys):
    err = fails(capsys, "eval", *files(), "-p", "Q=3")
    assert "unknown parameter 'Q'" in err


def test_missing_file(files, capsys):
    app, arch, m = files()
    err = fails(capsys, "eval", app, arch + ".missing.moa", m)
    assert "no such file" in err


def test_debug_shows_the_traceback(files):
    app, arch, m = files(mapping="mapping m { a -> p0 }\n")
    with pytest.raises(Exception):
        main(["eval", app, arch, m, "--debug"])


def test_a_file_with_several_graphs_needs_a_choice(files, capsys, tmp_path):
    app, arch, m = files()
    two = tmp_path / "two.sdf"
    two.write_text(APP + APP.replace("sdf app", "sdf other"))
    err = fails(capsys, "eval", str(two), arch, m)
    assert "holds 2 graphs (app, other)" in err and "--graph NAME" in err
    assert main(["eval", str(two), arch, m, "--graph", "other", "--json"]) == 0


def test_unknown_aggregation_of_an_architecture_is_checked_against_the_registry(files, capsys):
    # moa keeps no list of aggregation names: the command checks the name against the
    # registry (every registered one is accepted, `period` too) and points at it
    app, arch, m = files(arch=ARCH.replace("moa arch {\n", "moa arch {\n    aggregate = median\n"))
    err = fails(capsys, "eval", app, arch, m)
    located(err, arch, 2, 17)
    assert "unknown aggregation 'median'" in err
    from mapping.semantics.aggregation import AGGREGATIONS
    assert f"(known: {', '.join(AGGREGATIONS)})" in err and "period" in err
    app, arch, m = files(arch=ARCH.replace("moa arch {\n", "moa arch {\n    aggregate = period\n"))
    assert main(["check", arch]) == 0


def test_a_message_without_a_place_is_written_by_one_rule(capsys, monkeypatch):
    """``PROGRAM: SEVERITY: MESSAGE`` (dsl.diagnostics.format_diagnostic without an
    origin) for the CLI's errors and warnings that name no place in a file, and the bad
    input's exit status :data:`~mapping.cli.diagnostics.BAD_INPUT`."""
    from types import SimpleNamespace

    import mapping.cli.commands.check as check
    from mapping.cli.commands.measured import report_problems
    from mapping.cli.diagnostics import BAD_INPUT, report

    assert BAD_INPUT == 2
    report("--exclude f: never called", "warning", program="mapeval profile")
    fit = SimpleNamespace(warnings=["a and b: cannot tell apart"])
    report_problems(SimpleNamespace(skipped=0, assessment=SimpleNamespace(fit=fit)))
    assert capsys.readouterr().err == ("mapeval profile: warning: --exclude f: never called\n"
                                       "mapeval: warning: a and b: cannot tell apart\n")

    def broken(args):
        raise RuntimeError("kaboom")
    monkeypatch.setattr(check, "run", broken)
    assert main(["check", "x.sdf"]) == 1
    assert capsys.readouterr().err == ("mapeval: internal error: RuntimeError: kaboom (run "
                                       "again with --debug for a traceback)\n")
