"""The CLI reference as reStructuredText, from the argparse parser.

Kept apart from the Sphinx directive (``cli_reference.py``) so that the tests
can check the reference without Sphinx.
"""

from __future__ import annotations

import argparse

from budgetdag_core.cli import build_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, tuple[str, object]]:
    """``{name: (help, subparser)}`` of the parser's subcommands, in order."""
    for action in parser._actions:  # argparse has no public accessor
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return {
                name: (helps.get(name, ""), sub) for name, sub in action.choices.items()
            }
    return {}


def _name(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(f"``{o}``" for o in action.option_strings)
        if action.nargs != 0:
            names += f" ``{action.metavar or action.dest.upper()}``"
        return names
    return f"``{action.dest}``"


def _default(action: argparse.Action) -> str:
    if not action.option_strings:
        return "required (positional)"
    if action.required:
        return "required"
    if action.nargs == 0:  # a flag
        return "off"
    if action.default is None:
        return "none"
    return f"``{action.default}``"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def subcommand_lines(
    name: str, summary: str, parser: argparse.ArgumentParser
) -> list[str]:
    """The reStructuredText of one subcommand."""
    title = f"budgetdag {name}"
    usage = parser.format_usage().strip().splitlines()  # argparse's wrapping
    lines = [
        title,
        "-" * len(title),
        "",
        _cell(summary[:1].upper() + summary[1:]) + ".",
        "",
    ]
    lines += [".. code-block:: text", "", *(f"   {line}" for line in usage), ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 30 15 55", ""]
    lines += ["   * - Argument", "     - Default", "     - Meaning"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        choices = ""
        if action.choices is not None:
            choices = " One of " + ", ".join(f"``{c}``" for c in action.choices) + "."
        lines += [
            f"   * - {_name(action)}",
            f"     - {_default(action)}",
            f"     - {_cell(action.help or '')}{choices}",
        ]
    return lines + [""]


def reference_lines(parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The whole reference: the description, then every subcommand."""
    parser = parser or build_parser()
    lines = [_cell(parser.description or ""), ""]
    for name, (summary, sub) in _subparsers(parser).items():
        lines += subcommand_lines(name, summary, sub)
    return lines
