"""MkDocs hooks: pages made from the sources at build time, so that they cannot drift.

- ``howto/examples/NAME.md`` is ``examples/NAME/README.md`` (``examples/A/B`` becomes
  ``A-B``), one source for the examples' commands and their documentation.
- ``<!-- mapeval-model: NAME -->`` becomes the table of cost model NAME's parameters,
  read from its registered class (defaults and accepted ranges).
- ``<!-- mapeval-limits -->`` becomes the table of the stated limits (``--limit``).
- ``<!-- mapeval-file: PATH -->`` becomes the text of the repository's file PATH.
- ``<!-- mapeval-grammar: NAME -->`` becomes ``dsl/grammars/NAME.lark``.
- ``<!-- mapeval-help: COMMAND [KIND] -->`` in a page becomes the output of
  ``mapeval COMMAND [KIND] --help``, so every option of every command is in the reference.
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
HELP = re.compile(r"<!--\s*mapeval-help:\s*([\w-]+(?:\s+[\w-]+)?)\s*-->")
GRAMMAR = re.compile(r"<!--\s*mapeval-grammar:\s*(\w+)\s*-->")
FILE = re.compile(r"<!--\s*mapeval-file:\s*(\S+)\s*-->")
MODEL = re.compile(r"<!--\s*mapeval-model:\s*(\w+)\s*-->")
LIMITS = re.compile(r"<!--\s*mapeval-limits\s*-->")


def example_pages() -> dict[str, Path]:
    """``howto/examples/NAME.md`` -> the README it is made from."""
    pages = {}
    for readme in sorted((ROOT / "examples").glob("**/README.md")):
        name = "-".join(readme.parent.relative_to(ROOT / "examples").parts)
        pages[f"howto/examples/{name}.md"] = readme
    return pages


def command_help(words: list[str]) -> str:
    """What ``mapeval WORDS --help`` prints (without running a process)."""
    from mapping.cli import main as cli
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.parse(cli.build_parser(words[0]), [*words, "--help"])
    return out.getvalue()


def subcommands(command: str) -> list[str]:
    """The formats or kinds of ``mapeval COMMAND FORMAT`` (``import``, ``export``,
    ``plot``), from the command's own parser."""
    from mapping.cli import main as cli
    top = cli._subparsers(cli.build_parser(command)).choices[command]
    action = cli._subparsers(top)
    return list(action.choices) if action is not None else []


def help_block(words: list[str]) -> str:
    return "```text\n" + command_help(words).rstrip() + "\n```"


def _range(field) -> str:
    """The values a parameter accepts, from its pydantic constraints."""
    low = high = ""
    for c in field.metadata:
        for attr, text in (("gt", "> {}"), ("ge", ">= {}"), ("lt", "< {}"), ("le", "<= {}")):
            value = getattr(c, attr, None)
            if value is not None:
                if attr in ("gt", "ge"):
                    low = text.format(value)
                else:
                    high = text.format(value)
    return ", ".join(x for x in (low, high) if x) or "any"


def model_parameters(name: str) -> str:
    """A Markdown table of cost model ``name``'s parameters from its registered class:
    name, default, accepted range and description."""
    from pydantic_core import PydanticUndefined

    from moa.cost_models.registry import model_class
    rows = ["| parameter | default | accepts | meaning |", "|---|---|---|---|"]
    for key, field in model_class(name).Parameters.model_fields.items():
        default = "required" if field.default is PydanticUndefined else f"`{field.default}`"
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{key}` | {default} | {_range(field)} | {meaning} |")
    return "\n".join(rows)


def limits_table() -> str:
    """A Markdown table of the stated limits from their registry: name, default, what."""
    from mapping.cli.limits import LIMITS as registry
    rows = ["| limit | default | what it bounds |", "|---|---|---|"]
    for name in registry:
        rows.append(f"| `{name}` | {registry.get(name).value:,} | {registry.help(name)} |")
    return "\n".join(rows)


def on_files(files, config):
    for uri, readme in example_pages().items():
        text = readme.read_text(encoding="utf-8")
        folder = readme.parent.relative_to(ROOT).as_posix()
        text += f"\n\n*This page is `{folder}/README.md`; its files are in `{folder}/`.*\n"
        files.append(File.generated(config, uri, content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    def expand(match):
        words = match.group(1).split()
        parts = [help_block(words)]
        if len(words) == 1:
            for sub in subcommands(words[0]):
                parts += [f"#### mapeval {words[0]} {sub}", help_block([words[0], sub])]
        return "\n\n".join(parts)

    def grammar(match):
        name = match.group(1)
        text = (ROOT / "dsl" / "grammars" / f"{name}.lark").read_text(encoding="utf-8")
        return f"`dsl/grammars/{name}.lark`:\n\n```text\n{text.rstrip()}\n```"

    def source(match):
        path = match.group(1)
        text = (ROOT / path).read_text(encoding="utf-8")
        return f"`{path}`:\n\n```text\n{text.rstrip()}\n```"
    markdown = MODEL.sub(lambda m: model_parameters(m.group(1)), markdown)
    markdown = LIMITS.sub(lambda m: limits_table(), markdown)
    return FILE.sub(source, GRAMMAR.sub(grammar, HELP.sub(expand, markdown)))

