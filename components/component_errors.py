"""``ComponentConfigError``: the one error a component's constructor raises for a bad argument.

It lives in its own module because ``components/errors.py`` is at its size limit; ``components.errors`` still
exports it by name.
"""

from __future__ import annotations

from agrag.components.errors import ConfigError


class ComponentConfigError(ConfigError):
    """A component was built with an argument it cannot work with (a size below 1, thresholds out of order...).

    The message names the component, what was wrong with which argument, and how to fix it, usually by naming the
    configuration key the argument comes from.
    """

    def __init__(self, component: str, problem: str, fix: str) -> None:
        self.component = component
        self.problem = problem
        self.fix = fix
        super().__init__(f"{component}: {problem}. {fix}")
