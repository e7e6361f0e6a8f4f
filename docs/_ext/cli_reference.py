"""The ``budgetdag-cli`` directive: the CLI reference, generated from the parser.

``.. budgetdag-cli::`` renders ``budgetdag_core.cli.build_parser()`` as
reStructuredText: the program's description, then one section per subcommand
with its usage line and a table of its arguments (name, default, help). The
page cannot drift from the code: a new option appears at the next build.
"""

from __future__ import annotations

from cli_rst import reference_lines
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


class BudgetDAGCLI(SphinxDirective):
    """Insert the generated CLI reference."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        content = StringList(reference_lines(), source="budgetdag_core/cli.py")
        self.state.nested_parse(
            content, self.content_offset, container, match_titles=True
        )
        return container.children


def setup(app):
    app.add_directive("budgetdag-cli", BudgetDAGCLI)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
