"""The importer × model × procedure table: every test records its cell, the session prints the
table at the end (and writes it to target/importers/table.md)."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

IMPORTERS = ["FMPy", "fmu-manipulation-toolbox", "libcosim", "Ecos", "fmi-sim"]
PROCEDURES = ["check", "simulate", "= FMPy (1e-12 rel)", "step sequence", "get/set state", "statuses"]

# (importer, model, procedure) -> cell text
CELLS = {}


def record(importer, model, procedure, text):
    assert importer in IMPORTERS and procedure in PROCEDURES, (importer, procedure)
    CELLS[(importer, model, procedure)] = text


def table_markdown():
    models = sorted({k[1] for k in CELLS})
    lines = [
        "| importer | model | " + " | ".join(PROCEDURES) + " |",
        "| --- | --- | " + " | ".join("---" for _ in PROCEDURES) + " |",
    ]
    for imp in IMPORTERS:
        for m in models:
            row = [CELLS.get((imp, m, p), "") for p in PROCEDURES]
            if not any(row):
                continue
            lines.append(f"| {imp} | {m} | " + " | ".join(c or "–" for c in row) + " |")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def table():
    return record


def pytest_terminal_summary(terminalreporter):
    if not CELLS:
        return
    text = table_markdown()
    terminalreporter.write_sep("=", "importer × model × procedure")
    terminalreporter.write_line(text)
    out = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "importers" / "table.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    terminalreporter.write_line(f"(written to {out})")
