"""Mention linking: short forms ("Okafor", "Ada", "Dr. Okafor", "A. Okafor", "CT-60") join the full name they stand for.

A step of ``EntityResolver``, after the spelling rules. A short form links to a full name it fits (see
``name_forms``) when every document naming it agrees on one: a document that names exactly one fitting full name
points at that one; a document that names none points at the only fitting full name in scope (the batch and the
stored entities), if there is only one. A document naming two, two documents pointing at two, or a document with
nothing in it and two in scope keep the short form apart from all of them, in the merge log with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from agrag.components.data_models.chunk import document_id_of
from agrag.components.data_models.resolution import KEPT_APART, MergeDecision, ResolutionRule
from agrag.components.resolvers.merge_groups import MergeGroups, Node, Pair
from agrag.components.resolvers.name_forms import (
    MAX_PERSON_WORDS,
    VESSEL_PREFIXES,
    FitKind,
    NameForm,
    fit_kind,
    is_person_label,
    may_be_person,
    name_form,
)
from agrag.components.resolvers.name_matching import labels_compatible

MAX_KEPT_APART_LINES = 3  # per short form: a common first name would otherwise log one line per namesake
SHOWN = 3  # names and documents quoted in one reason
MAX_NAMESAKES = 50  # a first name or surname of more full names than this says nothing about which one


@dataclass(frozen=True, slots=True)
class _Fit:
    full: Node
    kind: FitKind


class _FullNames:
    """The names of the scope that short forms may stand for, indexed by the words a short form shares with them.

    A person's full name is found by its first word, its last word, one of its words with the last (a shorter
    form), or an initial with the last; a thing's by its name without a legal form or prefix, or by its code.
    """

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.forms: dict[str, NameForm] = {}
        self.by_core: dict[tuple[str, ...], list[Node]] = defaultdict(list)
        self.by_person: dict[tuple[str, ...], list[Node]] = defaultdict(list)
        self.by_thing: dict[tuple[str, ...], list[Node]] = defaultdict(list)  # without legal form, or the code
        # First and last words of proper names that are no person's ("Skerrin" of "Skerrin Arms"), and the names:
        # such a word alone names a place or a maker, not a person, so it is nobody's first name or surname.
        self.modifiers: dict[str, set[str]] = defaultdict(set)
        for node in nodes:
            entity = node.entity
            form = self.forms[entity.id] = name_form(entity.name)
            core = form.core
            if not core:
                continue
            self.by_core[core].append(node)
            person = may_be_person(form, entity.label)
            if form.full and person:
                self._index_person(node, core)
            elif form.proper and 1 < len(core) <= MAX_PERSON_WORDS and not person:
                self.modifiers[core[0]].add(entity.id)
                self.modifiers[core[-1]].add(entity.id)
            if not is_person_label(entity.label):
                if (designated := form.designated()) != core:
                    self.by_thing[designated].append(node)
                if form.code and len(core) > 1:
                    self.by_thing[(form.code,)].append(node)

    def _index_person(self, node: Node, core: tuple[str, ...]) -> None:
        last = core[-1]
        keys = {("first", core[0]), ("last", last), ("initial", core[0][0], last)}
        keys.update(("pair", word, last) for word in core[:-1])
        for key in keys:
            self.by_person[key].append(node)

    def _person_keys(self, short: Node, form: NameForm) -> list[tuple[str, ...]]:
        core = form.core
        if form.initials:
            return [("initial", core[0], core[-1])]
        if len(core) > 1:
            return [("pair", core[0], core[-1])]
        if core[0] in self.modifiers and not is_person_label(short.label):
            return []  # a place word is a person's only when typed so
        return [("first", core[0]), ("last", core[0])]

    def fits_of(self, short: Node) -> list[_Fit]:
        """The names ``short`` may stand for, with how; in id order.

        A word more than ``MAX_NAMESAKES`` full names share stands for none of them.
        """
        form = self.forms[short.id]
        if not form.core:
            return []
        near = list(self.by_core.get(form.core, ())) if form.decorated else []
        blocks = [self.by_person.get(key, []) for key in self._person_keys(short, form)]
        if sum(len(block) for block in blocks) <= MAX_NAMESAKES:
            near += (node for block in blocks for node in block)
        for node in self.by_thing.get(form.core, ()):
            # "Boston" is no short form of "Boston Corp" once "Boston Yanks" is a name too
            if len(form.core) > 1 or not self.modifiers.get(form.core[0], set()) - {node.id}:
                near.append(node)
        found = {}
        for node in near:
            kind = fit_kind(form, short.label, self.forms[node.id], node.label)
            if kind is not None and node.id != short.id and labels_compatible(short.label, node.label):
                found[node.id] = _Fit(node, kind)
        return [found[key] for key in sorted(found)]

    def specificity(self, node: Node) -> tuple[int, int, bool, str]:
        """Sort key: longer short forms first, plain before decorated, then by id.

        "Ada Okafor" joins "Ada N. Okafor" before "Okafor" is decided, so "Okafor" then sees one group.
        """
        form = self.forms[node.id]
        return (-(len(form.core) - form.initials), -len(form.core), form.decorated, node.id)


def link_short_forms(
    nodes: dict[str, Node],
    groups: MergeGroups,
    chunks: dict[str, set[str]],
    candidates: list[Pair],
    stored: set[str] | frozenset[str] = frozenset(),
) -> list[MergeDecision]:
    """Join each new short form to the full name it stands for; return the ``kept_apart`` decisions.

    Args:
        nodes: The batch's and the stored entities, by id.
        groups: The merge groups so far; the links join them (the full name's group gives the root).
        chunks: The chunks of the batch naming each entity (a mention or an *about* link); the stored entities'
            other documents are not known here.
        candidates: Near misses; a link the groups refuse, or one only a type could have confirmed, is added.
        stored: Ids of batch entities stored already (canonical or merged).

    A stored short form is never linked here: a canonical one may hold full names merged into it that the scope
    does not show, so a second full name would join the first; a merged one keeps the merge an earlier run made
    (or the undo of it), rather than move every mention of it to another full name a new document names.
    """
    index = _FullNames(nodes.values())
    found = {}
    for node in nodes.values():
        if not node.known and node.id not in stored and (fits := index.fits_of(node)):
            found[node.id] = fits
    linker = _Linker(groups, chunks, candidates)
    kept: list[MergeDecision] = []
    for short in sorted((nodes[i] for i in found), key=index.specificity):
        if not nodes[groups.find(short.id)].known:
            kept += linker.decide(short, found[short.id])
    return kept


def travels(fit: _Fit, short: Node) -> bool:
    """Whether the fit holds in a document that does not name the full name.

    A person rule needs a ``Person`` on one side: untyped, "Lisbon" and "Lisbon Metropolitan Area" look like a
    first name and a full name, and only their shared document shows what the word means there. A title or a
    possessive on the same name, a legal form or prefix, and a model code carry their own evidence. A name of
    several words that drops some of another's (``Ada Okafor`` of ``Ada Nkem Okafor``) holds only beside it.
    """
    if fit.kind in {FitKind.SAME_NAME, FitKind.MODEL_CODE}:
        return True
    if fit.kind is FitKind.FEWER_NAMES:
        # "Scott Howell" is a whole name of its own: in another document it is as likely a namesake
        # ("Lida Scott Howell", an archer, is not the consultant "Herbert Weston Scott Howell III")
        return False
    if fit.kind is FitKind.WITHOUT_DESIGNATOR:  # "Shearwater" of "RV Shearwater", not "Boston" of "Boston Corp"
        return " " in short.name.strip() or name_form(fit.full.name).core[0] in VESSEL_PREFIXES
    return is_person_label(fit.full.label) or is_person_label(short.label)


class _Linker:
    """Decides one short form at a time against the merge groups as they grow."""

    def __init__(self, groups: MergeGroups, chunks: dict[str, set[str]], candidates: list[Pair]) -> None:
        self.groups = groups
        self.chunks = chunks
        self.candidates = candidates
        self._documents: dict[str, frozenset[str]] = {}

    def documents(self, entity_id: str) -> frozenset[str]:
        """The documents of the batch naming the entity."""
        if (found := self._documents.get(entity_id)) is None:
            found = self._documents[entity_id] = frozenset(document_id_of(c) for c in self.chunks.get(entity_id, ()))
        return found

    def decide(self, short: Node, found: list[_Fit]) -> list[MergeDecision]:
        """Link ``short`` to the one full name its documents agree on, or keep it apart when they do not."""
        find, own = self.groups.find, self.groups.find(short.id)
        by_root: dict[str, _Fit] = {}
        for fit in found:
            if find(fit.full.id) == own:
                return []  # linked already
            by_root.setdefault(find(fit.full.id), fit)
        votes: dict[str, list[str]] = defaultdict(list)  # root -> documents naming both
        alone: list[str] = []  # documents naming the short form and no full name it fits
        for document in sorted(self.documents(short.id)):
            local = _by_name({find(f.full.id) for f in found if document in self.documents(f.full.id)}, by_root)
            if len(local) > 1:
                return self._keep_apart(short, by_root, f"document {document} names {_names(local, by_root)}")
            if local:
                votes[local[0]].append(document)
            else:
                alone.append(document)
        if len(votes) > 1:
            said = "; ".join(f"{_names([r], by_root)} in {_list(votes[r])}" for r in _by_name(votes, by_root))
            return self._keep_apart(short, by_root, f"its documents name different ones: {said}")
        if alone and len(by_root) > 1:
            if any(travels(fit, short) for fit in by_root.values()):
                return self._keep_apart(short, by_root, f"{_list(alone)} name none of them")
            return []  # untyped: the documents naming none could not have linked anyway
        if votes or alone:  # else nothing names it: no evidence either way
            (root,) = list(votes) or list(by_root)
            self._link(short, by_root[root], len(votes.get(root, ())), alone)
        return []

    def _link(self, short: Node, fit: _Fit, beside: int, alone: list[str]) -> None:
        """Join ``short`` to ``fit``'s group; the score is the share of its documents that name the full name."""
        full = fit.full
        what = {
            FitKind.SAME_NAME: f"is {full.shown} with a title or a possessive",
            FitKind.WITHOUT_DESIGNATOR: f"is {full.shown} without its legal form or prefix",
            FitKind.MODEL_CODE: f"is the model code of {full.shown}",
        }.get(fit.kind, f"is the {fit.kind.value} of {full.shown}")
        if not alone:
            where = f"the only such name in its {_count(beside, 'document')}"
        elif beside:
            where = f"named beside it in {beside} of its {_count(beside + len(alone), 'document')}"
            where += " and the only such name in scope"
        else:
            where = "the only name it fits in scope"
        score = round(beside / (beside + len(alone)), 3)
        pair = Pair(short, full, ResolutionRule.SHORT_FORM, score, f"{short.shown} {what}, {where}")
        if alone and not travels(fit, short):
            self.candidates.append(pair)  # untyped: no document but its own may say so
        elif self.groups.join(pair, prefer_target=True) is not None:
            self.candidates.append(pair)

    def _keep_apart(self, short: Node, by_root: dict[str, _Fit], problem: str) -> list[MergeDecision]:
        roots = _by_name(by_root, by_root)
        reason = f"{short.shown} may stand for {_names(roots, by_root)}, but {problem}: kept apart"
        decisions: list[MergeDecision] = []
        for root in roots:
            pair = Pair(short, by_root[root].full, ResolutionRule.SHORT_FORM, 0.0, reason)
            self.groups.keep_apart(pair)
            if len(decisions) < MAX_KEPT_APART_LINES:
                decisions.append(MergeDecision(*pair.ids, KEPT_APART, pair.rule, pair.score, reason))
        return decisions


def _by_name(roots: Iterable[str], by_root: dict[str, _Fit]) -> list[str]:
    return sorted(roots, key=lambda r: (by_root[r].full.name, r))


def _names(roots: list[str], by_root: dict[str, _Fit]) -> str:
    shown = [f"'{by_root[r].full.name}'" for r in roots[:SHOWN]]
    more = f" and {len(roots) - SHOWN} more" if len(roots) > SHOWN else ""
    return (" and ".join(shown) if len(shown) <= 2 else ", ".join(shown)) + more


def _list(documents: list[str]) -> str:
    shown = ", ".join(documents[:SHOWN])
    more = f" and {len(documents) - SHOWN} more" if len(documents) > SHOWN else ""
    return f"{_count(len(documents), 'document')} ({shown}{more})"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
