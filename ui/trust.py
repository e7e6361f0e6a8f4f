"""What the server trusts from its users: pickles only if the operator opts in."""

from __future__ import annotations

from budgetdag_core.validation import env_setting, flag

TRUST_PICKLES_ENV = "BUDGETDAG_TRUST_PICKLES"
"""Environment variable; ``1`` lets the Export page unpickle uploaded policies."""


def pickles_allowed() -> bool:
    """Whether the server was started with ``BUDGETDAG_TRUST_PICKLES=1``.

    Unpickling runs code from the file on the server, for whoever uploads it: a
    tick box in the page cannot protect the server from its own users, so only
    the operator who starts the server can allow it.
    """
    return env_setting(TRUST_PICKLES_ENV, flag, False, "0 or 1")
