from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.resolution import MERGED
from agrag.components.resolvers.merge_groups import MergeGroups, Node, Pair, ordered, pair_order


def node(name: str, label: str = "Name", *, known: bool = False, mentions: int = 1) -> Node:
    return Node(Entity(entity_id_for(name, label), name, label), normalize_name(name), known, mentions)


def pair(a: Node, b: Node, rule: str = "fuzzy", score: float = 95.0) -> Pair:
    member, target = ordered(a, b)
    return Pair(member, target, rule, score, f"{a.name} ~ {b.name}")


def groups_of(*nodes: Node) -> MergeGroups:
    return MergeGroups({n.id: n for n in nodes})


def test_the_target_is_stored_then_typed_then_most_mentioned_then_longest() -> None:
    plain, stored = node("Atlas"), node("Atlas Ctl", known=True)
    assert ordered(plain, stored) == (plain, stored)
    typed = node("Atlas", "Component")
    assert ordered(typed, plain) == (plain, typed)
    many = node("Atlas Controler", mentions=5)
    assert ordered(many, node("Atlas Controller")) == (node("Atlas Controller"), many)
    assert ordered(node("Atlas Ctl"), node("Atlas Controller"))[1].name == "Atlas Controller"


def test_pairs_sort_strongest_first_with_ratios_scaled() -> None:
    a, b, c = node("Helios Robotics"), node("Helius Robotics"), node("Maria Chen")
    fuzzy, embedded = pair(a, b, "fuzzy", 93.3), pair(a, c, "embedding", 0.95)
    assert sorted([fuzzy, embedded], key=pair_order) == [embedded, fuzzy]


def test_a_chain_points_every_member_at_the_final_root() -> None:
    controller, one, two = node("Atlas Controller", "Component"), node("Atlas Controler"), node("Atlas Controlr")
    groups = groups_of(controller, one, two)
    assert groups.join(pair(one, two)) is None  # "Atlas Controler" leads: the longer name
    assert groups.join(pair(two, controller)) is None  # its group joins by "Atlas Controlr"
    assert groups.find(two.id) == controller.id
    decisions = groups.decisions()
    assert {d.member_id: d.resolved_id for d in decisions} == {one.id: controller.id, two.id: controller.id}
    assert all(d.decision == MERGED for d in decisions)
    assert "'Atlas Controler' joins with 'Atlas Controlr'" in next(d for d in decisions if d.member_id == one.id).reason


def test_joins_are_refused_between_stored_entities_labels_and_kept_apart_groups() -> None:
    first, second = node("Vega Stack", known=True), node("Vega Stacks", known=True)
    person, org, name = node("Jordan Lee", "Person"), node("Jordan Lee", "Organization"), node("Jordan Lee")
    groups = groups_of(first, second, person, org, name)
    assert groups.join(pair(first, second)) == "both sides are stored entities already"
    assert groups.join(pair(person, org)) == "that would join entities of different labels"
    assert groups.join(pair(person, org), ignore_labels=True) is None
    other = groups_of(person, org, name)
    other.keep_apart(pair(person, org))
    assert other.join(pair(name, person)) is None
    assert other.join(pair(name, org), ignore_labels=True) == "that would join entities kept apart"


def test_candidates_skip_joined_pairs_and_repeat_pairs() -> None:
    a, b, c = node("Maria Chen"), node("Mario Chen"), node("Marie Chen")
    groups = groups_of(a, b, c)
    groups.join(pair(a, b))
    near = [pair(a, c, score=88.0), pair(c, a, score=88.0), pair(a, b, score=90.0), pair(b, c, score=91.0)]
    assert [(x.name, x.other_name) for x in groups.candidates(near)] == [
        (pair(b, c).member.name, pair(b, c).target.name),
        (pair(a, c).member.name, pair(a, c).target.name),
    ]


def test_prefer_target_makes_the_targets_group_the_root_unless_only_the_member_is_stored() -> None:
    short, full = node("Kirsty", "Person", mentions=9), node("Kirsty Munro")
    groups = groups_of(short, full)
    assert groups.join(Pair(short, full, "short_form", 1.0, "first name"), prefer_target=True) is None
    assert groups.find(short.id) == full.id  # not the typed, more mentioned short form
    (decision,) = groups.decisions()
    assert (decision.member_id, decision.resolved_id) == (short.id, full.id)
    stored, new = node("Okafor", known=True), node("Ada Okafor")
    kept = groups_of(stored, new)
    assert kept.join(Pair(stored, new, "short_form", 1.0), prefer_target=True) is None
    assert kept.find(new.id) == stored.id  # a stored entity stays a root
