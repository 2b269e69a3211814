"""The architecture holds: the layers in pyproject.toml, no import circles, modules of a
readable size."""

import ast
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
LONGEST = 400  # lines; a longer module says why in its docstring ("Long: ...")


def test_the_import_layers_in_pyproject_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


@pytest.mark.parametrize("package", ["companion", "benchmarks", "training"])
def test_no_import_circles(package):
    graph = grimp.build_graph(package)
    circles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if graph.find_shortest_chain(importer=imported, imported=importer):
                circles.add(tuple(sorted((importer, imported))))
    assert not circles, sorted(circles)


def test_long_modules_say_why():
    unexplained = []
    for folder in ("companion", "benchmarks", "training"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = path.read_text().count("\n")
            if lines > LONGEST:
                doc = ast.get_docstring(ast.parse(path.read_text())) or ""
                if "Long:" not in doc:
                    unexplained.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    assert not unexplained, unexplained
