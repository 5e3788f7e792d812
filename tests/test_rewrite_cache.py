"""The assertion-rewrite cache the xdist controller writes for its workers
(tests/rewrite_cache.py): pytest's own rewritten code, read back by pytest, written once."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from rewrite_cache import prewarm, rewritten


def _cached(source: Path) -> Path:
    return rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)


def test_the_cache_holds_rewritten_asserts_that_pytest_reads_back(
    pytestconfig: pytest.Config, tmp_path: Path
) -> None:
    source = tmp_path / "test_one.py"
    source.write_text("def test_a():\n    x = 1\n    assert x == 2\n")
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "conftest.py").write_text("")
    assert [p.name for p in rewritten(pytestconfig, tmp_path)] == ["conftest.py", "test_one.py"]
    assert prewarm(pytestconfig, tmp_path) == 2
    assert not (rewrite.get_cache_dir(source) / ("helper" + rewrite.PYC_TAIL)).exists()
    code = rewrite._read_pyc(source, _cached(source))
    assert code is not None
    module: dict[str, object] = {}
    exec(code, module)
    with pytest.raises(AssertionError) as failed:
        module["test_a"]()  # type: ignore[operator]
    assert "assert 1 == 2" in str(failed.value)  # the rewritten message, not a bare assert


def test_a_current_cache_is_kept_and_a_changed_source_rewritten_again(
    pytestconfig: pytest.Config, tmp_path: Path
) -> None:
    source = tmp_path / "test_two.py"
    source.write_text("def test_b():\n    assert True\n")
    assert prewarm(pytestconfig, tmp_path) == 1
    assert prewarm(pytestconfig, tmp_path) == 0
    source.write_text("def test_b():\n    assert 1\n")
    assert prewarm(pytestconfig, tmp_path) == 1
    assert rewrite._read_pyc(source, _cached(source)) is not None
