"""A SQLite-backed world for the sql suite: a user's environment on passhat's protocol.

Each run gets its own in-memory database built from the case input; the agent
reads it with `query` and answers by writing rows with `insert_answer`. The
final state is the answer table, so the goal is the rows themselves.

    environment: sql_env.py:SqlWorld      (suite.yaml)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from passhat import Environment, ToolError, tool

_TABLE = {
    "type": "object",
    "required": ["columns", "rows"],
    "properties": {
        "columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "rows": {"type": "array", "items": {"type": "array"}},
    },
}
_VALUE = {"type": ["string", "integer", "number", "null"]}


class SqlWorld(Environment):
    """A database to read and an `answer` table to fill."""

    input_schema = {  # noqa: RUF012 (read by passhat, never changed)
        "type": "object",
        "required": ["question", "tables", "answer_columns"],
        "properties": {
            "question": {"type": "string", "description": "what the agent must answer"},
            "tables": {"type": "object", "additionalProperties": _TABLE},
            "answer_columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
    }
    goal_schema = {  # noqa: RUF012
        "type": "object",
        "required": ["answer"],
        "properties": {"answer": {"type": "array", "items": {"type": "object"}}},
    }

    def setup(self, input: dict[str, Any]) -> None:
        self.db = sqlite3.connect(":memory:")
        for name, table in input["tables"].items():
            self._create(name, table["columns"], table["rows"])
        self.answer_columns: list[str] = input["answer_columns"]
        self._create("answer", self.answer_columns, [])

    def _create(self, name: str, columns: list[str], rows: list[list[Any]]) -> None:
        quoted = ", ".join(f'"{c}"' for c in columns)
        self.db.execute(f'CREATE TABLE "{name}" ({quoted})')
        marks = ", ".join("?" for _ in columns)
        self.db.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)

    @tool
    def query(self, sql: str) -> dict[str, Any]:
        """Run one read-only SQL query (SQLite); returns its columns and at most 50 rows."""
        self.db.execute("PRAGMA query_only = ON")
        try:
            cursor = self.db.execute(sql)
            rows = cursor.fetchmany(50)
        except sqlite3.Error as error:
            raise ToolError(f"query failed: {error}") from None
        finally:
            self.db.execute("PRAGMA query_only = OFF")
        return {
            "columns": [d[0] for d in cursor.description or []],
            "rows": [list(r) for r in rows],
        }

    @tool(
        parameters={
            "type": "object",
            "properties": {
                "rows": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "object", "additionalProperties": _VALUE},
                    "description": "The answer, one object per row, keyed by column.",
                }
            },
            "required": ["rows"],
            "additionalProperties": False,
        }
    )
    def insert_answer(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Write rows into the answer table; its columns are given with the question."""
        for index, row in enumerate(rows):
            if sorted(row) != sorted(self.answer_columns):
                raise ToolError(
                    f"rows[{index}] has columns {sorted(row)}; the answer table's are "
                    f"{self.answer_columns}; nothing was written"
                )
        marks = ", ".join("?" for _ in self.answer_columns)
        self.db.executemany(
            f"INSERT INTO answer VALUES ({marks})",
            [[row[c] for c in self.answer_columns] for row in rows],
        )
        return {"inserted": len(rows)}

    @tool(fixtures=True)
    def glossary(self, term: str) -> str:
        """Look up what a business term means here (answered from the case's notes)."""

    def final_state(self) -> dict[str, Any]:
        cursor = self.db.execute("SELECT * FROM answer ORDER BY rowid")
        names = [d[0] for d in cursor.description]
        return {"answer": [dict(zip(names, row, strict=True)) for row in cursor]}

    def close(self) -> None:
        self.db.close()

    def check_rules(self, input: dict[str, Any], goal: dict[str, Any]) -> Iterable[Any]:
        for index, row in enumerate(goal["answer"]):
            if sorted(row) != sorted(self.answer_columns):
                yield (
                    ("goal", "answer", index),
                    f"has columns {sorted(row)}; answer_columns are {self.answer_columns}",
                )
