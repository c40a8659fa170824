"""The DPSA study's report on the report model (issue 18), checked on a hand-made frame of
two traces: its tables, its findings against the paper and its renderings."""

from __future__ import annotations

import pandas as pd

from queuesim.reports.document import Bullets, Link, Table
from queuesim.reports.render_html import to_html
from queuesim.reports.render_markdown import to_markdown
from queuesim.studies.dpsa_report import SECTIONS, TITLE, study_report

POLICIES = ("EASY", "DPSAp", "DPSAn", "DPSAw")
#: per trace, each policy's mean bounded slowdown; EASY's is the baseline
BSLD = {"A-1": (10.0, 9.0, 5.0, 20.0), "B-2": (4.0, 4.0, 3.0, 4.4)}


def frame() -> pd.DataFrame:
    rows = []
    for trace, values in BSLD.items():
        for policy, bsld in zip(POLICIES, values, strict=True):
            rows.append(
                {
                    "trace": trace,
                    "policy": policy,
                    "jobs": 1200,
                    "cpus": 64,
                    "utilization": 0.5 if trace == "A-1" else 0.8,
                    "mean_bounded_slowdown": bsld,
                    "mean_wait": 100.0 * bsld,
                    "d_bsld_pct": 100.0 * (bsld - values[0]) / values[0],
                    "d_wait_pct": 100.0 * (bsld - values[0]) / values[0],
                    "short_share": 0.25,
                    "bsld_short": 2 * bsld,
                    "bsld_other": 1.0,
                    "sim_seconds": 1.5,
                    "searches": 0 if policy == "EASY" else 10,
                    "bound_hits": 0,
                    "pool_misfits": 0,
                }
            )
    return pd.DataFrame(rows)


def report(discussion: bool = False):  # type: ignore[no-untyped-def]
    return study_report(
        frame(),
        command="queuesim study dpsa --out x",
        bound_ms=0.0,
        bound_nodes=1000,
        elapsed="0.1 min",
        discussion=discussion,
    )


def test_change_table_holds_each_variants_change_against_easy() -> None:
    """One row per trace; EASY's own figures, then each variant's change in percent (DPSAp
    on A-1: 9 against 10 is -10 %; DPSAw on B-2: 4.4 against 4 is +10 %)."""
    built = report()
    assert built.title == TITLE
    assert [s.title for s in built.sections] == list(SECTIONS[:4])
    table = built.sections[0].blocks[0]
    assert isinstance(table, Table)
    assert table.header[:6] == [
        "trace",
        "jobs",
        "CPUs",
        "utilization",
        "EASY bsld",
        "EASY wait (s)",
    ]
    assert table.rows[0][:6] == ["A-1", "1,200", "64", "50.0%", "10.00", "1,000"]
    assert table.rows[0][6:9] == ["-10.0 %", "-50.0 %", "+100.0 %"]
    assert table.rows[1][6:9] == ["+0.00 %", "-25.0 %", "+10.0 %"]


def test_findings_count_the_traces_each_variant_wins() -> None:
    """DPSAn is better on both traces; DPSAw worse on both; DPSAp better on one and equal
    (within 0.05 %) on the other."""
    findings = report().sections[3].blocks[0]
    assert isinstance(findings, Bullets)
    words = [" ".join(p if isinstance(p, str) else p.text for p in item) for item in findings.items]
    by_variant = {w.split()[0]: w for w in words}
    assert "better than EASY on 0 of 2 traces, worse on 2" in by_variant["DPSAw"]
    assert (
        "better than EASY on 1 of 2 traces, worse on 0, within 0.05 % on 1" in by_variant["DPSAp"]
    )
    assert "better than EASY on 2 of 2 traces, worse on 0" in by_variant["DPSAn"]


def test_discussion_only_when_asked_and_rendered_with_its_link() -> None:
    """The discussion of the default study is a section of its own, with the companion
    report as a link; Markdown and HTML render every section."""
    assert SECTIONS[4] not in [s.title for s in report().sections]
    built = report(discussion=True)
    assert built.sections[-1].title == SECTIONS[4]
    links = [
        part
        for block in built.sections[-1].blocks
        for text in (block.items if isinstance(block, Bullets) else [getattr(block, "text", ())])
        for part in text
        if isinstance(part, Link)
    ]
    assert [link.href for link in links] == ["exact-estimates/study.md"]
    markdown = to_markdown(built)
    assert "## Reading the results against the paper" in markdown
    assert "[exact-estimates/study.md](exact-estimates/study.md)" in markdown
    assert "`queuesim study dpsa --out x`" in markdown
    page = to_html(built)
    assert page.count("<h2 id=") == len(SECTIONS)
    assert "http" not in page.replace("http-equiv", "")  # nothing fetched from a network
