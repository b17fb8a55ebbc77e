from agrag.components.data_models.ontology import PrunedReport, UndeclaredPattern
from agrag.flows.ingest_report import IngestReport, stage_lines
from agrag.flows.ingest_report_markdown import ingest_report_markdown

GENERALISED = PrunedReport(
    entities_kept=2,
    relations_kept=1,
    relations_generalised=1,
    undeclared_patterns=(
        UndeclaredPattern("owns", "Name", "Name", 1, "Victor Hale -owns-> Osprey Ceramics", ("d1",), "RELATED_TO"),
    ),
)


def report(pruned: PrunedReport) -> IngestReport:
    return IngestReport("notes", 1, 1, 0, (), pruned=pruned)


def test_the_prune_line_says_how_many_relations_were_kept_as_related_to() -> None:
    assert stage_lines(report(GENERALISED))["prune"] == (
        "kept 2 entities and 1 relations (1 as RELATED_TO); dropped 0 and 0"
    )
    assert stage_lines(report(PrunedReport(entities_kept=2)))["prune"] == (
        "kept 2 entities and 0 relations; dropped 0 and 0"
    )


def test_the_markdown_report_lists_a_pattern_kept_as_related_to() -> None:
    markdown = ingest_report_markdown(report(GENERALISED), "/data")
    assert not GENERALISED.empty
    assert (
        "| relation pattern kept as RELATED_TO | (Name)-[owns]->(Name) | 1 | Victor Hale -owns-> Osprey Ceramics |"
        in markdown
    )
