"""``LLMEstimate``: what an LLM step is about to cost, worked out before any call."""

from __future__ import annotations

from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # a rough rule for English with the usual tokenizers; the estimate says "about"


@dataclass(frozen=True, slots=True)
class LLMEstimate:
    """The most calls and about how many prompt tokens a step will send, and what the cache already answers.

    Attributes:
        items: Chunks (or other items) the step works on.
        calls: The most calls it may make (every gleaning round included; early stops make fewer).
        prompt_tokens: About how many prompt tokens those calls send.
        cached: Items whose first call the answer cache already holds, so they cost no call.
    """

    items: int
    calls: int
    prompt_tokens: int
    cached: int = 0

    def summary(self) -> str:
        """The estimate as one line for people."""
        return (
            f"{self.items} chunks, up to {self.calls} calls, about {self.prompt_tokens:,} prompt tokens "
            f"({self.cached} chunks answered from the cache)"
        )
