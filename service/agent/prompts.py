"""What the agent tells the model: the loop policy, the repair request, and the statements that end a run."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.citations import CitationCheck
from agrag.service.agent.answer import ToolCallRecord

NO_ANSWER_MARK = "[no-answer]"

SYSTEM_PROMPT = f"""You answer questions from a collection of documents, using only what the tools return.

How to work:
1. Discover: call search_evidence with the question word for word. Pick the mode: hybrid for most questions,
   keyword for exact names or codes, vector for paraphrases, graph for questions that chain two or three facts
   (for example "Where did the author of X study?").
2. Fetch before citing: call fetch_evidence on the ids whose snippets look relevant. Snippets are not quotable;
   only text you fetched (or read with navigate) can be cited.
3. When a passage is not enough: navigate to its parent section or its previous/next passage, or use
   find_entities and explore to follow relations between people, systems and places, then fetch what they point to.
4. Draft the answer: every sentence that states a fact, a figure or a name ends with the evidence id it comes
   from in square brackets, e.g. "Maria Chen wrote the planner [d1f3a9c2b4e5d6f.3b9f0c1d2e4a.c2]." Cite only ids
   you fetched. Do not invent ids, and do not write a Sources list: it is added for you.
5. You may call check_citations on your draft; it is checked again before it is shown.
6. If the evidence does not answer the question, reply with {NO_ANSWER_MARK} followed by one or two sentences on
   what you looked for and what the documents say instead. Never answer from your own knowledge.

Your final reply (the one without tool calls) is the draft answer and nothing else."""


def repair_prompt(check: CitationCheck) -> str:
    """Ask the model to fix its draft once, showing what the citation check found."""
    lines = ["The citation check found problems in your draft answer:"]
    lines += [f"- [{item.id}] is invalid: {_REASONS[item.reason]}" for item in check.invalid]
    lines += [
        f'- This sentence states a figure or a name but cites nothing: "{sentence}"' for sentence in check.uncited
    ]
    for claim in check.unsupported:
        missing = ", ".join((*claim.missing_figures, *claim.missing_names))
        lines.append(f'- The evidence cited by "{claim.sentence}" does not contain: {missing}')
    lines.append(
        "Fix the draft: fetch_evidence any passage you want to cite, cite a fetched id for every sentence with a "
        "figure or a name, or remove what the evidence does not support. Reply with the whole corrected draft."
    )
    return "\n".join(lines)


_REASONS = {
    "malformed": "it is not an evidence id",
    "not_fetched": "you never fetched it (call fetch_evidence first)",
    "out_of_scope": "it lies outside the documents you may read",
}


def findings(check: CitationCheck) -> list[str]:
    """The check's findings, one line each, for an answer shown as not grounded."""
    found = [f"citation [{item.id}] removed: {_REASONS[item.reason]}" for item in check.invalid]
    found += [f'uncited claim: "{sentence}"' for sentence in check.uncited]
    found += [
        f'unsupported claim: "{claim.sentence}" (missing {", ".join((*claim.missing_figures, *claim.missing_names))})'
        for claim in check.unsupported
    ]
    return found


def looked_at(trace: Sequence[ToolCallRecord]) -> str:
    """What the run searched for and read, for a statement that gives no answer."""
    searches = [str(r.arguments.get("query", "")) for r in trace if r.name in {"search_evidence", "find_entities"}]
    read = sum(1 for r in trace if r.name in {"fetch_evidence", "navigate"} and r.ok)
    if not searches and not read:
        return "It made no searches."
    quoted = "; ".join(f'"{query}"' for query in searches[:5]) or "nothing"
    more = f" and {len(searches) - 5} more" if len(searches) > 5 else ""
    return f"It searched for {quoted}{more} and read passages in {read} call{'s' if read != 1 else ''}."
