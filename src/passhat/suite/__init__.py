"""Suites: a folder of cases, loaded, validated and hashed before anything runs.

A suite is a folder::

    suite.yaml      name, description, environment, labels, defaults (agent,
                    model, k, params, max_turns, scorers)
    cases/*.yaml    one case per file: id, input, fixtures, goal, optional tags

`load_suite` reads YAML safely (plain data only; a key written twice is refused
rather than silently dropped; anchors and aliases are refused, so the data is a
tree and every check and hash walks each value once), checks every file against
its schema, the environment (its class, loaded through passhat/imports.py like a
user's, checks itself and every case: env.py's protocol) and the scorers, and
raises one `SuiteError` listing every problem found, each naming the file, the
field path and the fix. This package imports neither env.py nor scoring.py: the
layering runs one way, suite -> environment -> scoring. A loaded suite is immutable
and carries content hashes, so an experiment records exactly what it ran on:

- a case's hash covers its input, fixtures and goal;
- the suite's hash covers suite.yaml's content (with defaults filled in, the
  `tools` environment's declaration included), every case id with its hash, and
  the bytes of any scorer file beside suite.yaml;
- a user environment's source file has its own hash (`environment_hash`), which
  the experiment records, so resume names it when it changed.

Both are SHA-256 over canonical JSON (sorted keys, no whitespace), so key order,
YAML formatting and comments never change them; any change of content does.

The package's rooms (this module re-exports their names, so `from passhat.suite
import X` keeps working):

    model.py        what a loaded suite is: Suite, Case, scorer specs (frozen records)
    reading.py      YAML read safely: plain data, no duplicate keys, no anchors
    shapes.py       the files' schemas as plain tables: valid plain data, no pydantic
    validation.py   the files' schemas as strict models, and their messages (named
                    problems; imported only for a file shapes.py leaves to them)
    checks.py       paths, item templates, goals against scorers, scorer functions
    loading.py      load_suite and CaseReader: read, check, collect every problem
    hashing.py      what the suite's and the cases' hashes cover
"""

from __future__ import annotations

from typing import Any

from passhat.plain import Loc as Loc  # re-exported: these predate plain.py
from passhat.plain import canonical_json as canonical_json
from passhat.plain import did_you_mean as did_you_mean
from passhat.plain import field_path as field_path
from passhat.plain import sha256_json as sha256_json
from passhat.plain import show as show
from passhat.suite.checks import _LACKS as _LACKS
from passhat.suite.checks import _PATH as _PATH
from passhat.suite.checks import MAX_FORMAT_NUMBER as MAX_FORMAT_NUMBER
from passhat.suite.checks import _lacked as _lacked
from passhat.suite.checks import _path_problem as _path_problem
from passhat.suite.checks import _template_problem as _template_problem
from passhat.suite.checks import check_goal_items as check_goal_items
from passhat.suite.checks import check_scorer_function as check_scorer_function
from passhat.suite.checks import goal_item_keys as goal_item_keys
from passhat.suite.checks import goal_lacks as goal_lacks
from passhat.suite.checks import template_fields as template_fields
from passhat.suite.hashing import case_hash as case_hash
from passhat.suite.hashing import scorer_file_hash as scorer_file_hash
from passhat.suite.hashing import spec_dict as spec_dict
from passhat.suite.hashing import suite_hash as suite_hash
from passhat.suite.loading import CaseReader as CaseReader
from passhat.suite.loading import _Loader as _Loader
from passhat.suite.loading import load_suite as load_suite
from passhat.suite.model import _CASE_ID as _CASE_ID
from passhat.suite.model import _SCORER_EXAMPLE as _SCORER_EXAMPLE
from passhat.suite.model import _SCORER_KINDS as _SCORER_KINDS
from passhat.suite.model import CASES_DIR as CASES_DIR
from passhat.suite.model import ENVIRONMENT_KEYS as ENVIRONMENT_KEYS
from passhat.suite.model import SUITE_FILE as SUITE_FILE
from passhat.suite.model import Case as Case
from passhat.suite.model import CustomSpec as CustomSpec
from passhat.suite.model import EqualsSpec as EqualsSpec
from passhat.suite.model import ExactSetSpec as ExactSetSpec
from passhat.suite.model import Fixture as Fixture
from passhat.suite.model import JudgeSpec as JudgeSpec
from passhat.suite.model import MatchesSpec as MatchesSpec
from passhat.suite.model import PresentSpec as PresentSpec
from passhat.suite.model import ScorerSpec as ScorerSpec
from passhat.suite.model import SubsetSpec as SubsetSpec
from passhat.suite.model import Suite as Suite
from passhat.suite.model import SuiteDefaults as SuiteDefaults
from passhat.suite.model import SupersetSpec as SupersetSpec
from passhat.suite.model import _case_from_state as _case_from_state
from passhat.suite.model import _case_of as _case_of
from passhat.suite.model import _pack as _pack
from passhat.suite.model import _Shelf as _Shelf
from passhat.suite.model import _shelved as _shelved
from passhat.suite.model import _unpack as _unpack
from passhat.suite.reading import _ANY_CHAR_RESOLVERS as _ANY_CHAR_RESOLVERS
from passhat.suite.reading import _FIRST_CHAR_RESOLVERS as _FIRST_CHAR_RESOLVERS
from passhat.suite.reading import _INT as _INT
from passhat.suite.reading import _MAP as _MAP
from passhat.suite.reading import _PLAIN_SCALARS as _PLAIN_SCALARS
from passhat.suite.reading import _SEQ as _SEQ
from passhat.suite.reading import _STR as _STR
from passhat.suite.reading import _anchor_problem as _anchor_problem
from passhat.suite.reading import _json_problems as _json_problems
from passhat.suite.reading import _load_yaml as _load_yaml
from passhat.suite.reading import _UniqueKeyLoader as _UniqueKeyLoader
from passhat.suite.reading import _value as _value
from passhat.suite.reading import _yaml_message as _yaml_message
from passhat.suite.reading import load_yaml as load_yaml

_VALIDATION = frozenset(
    {
        "StrictModel",
        "_CaseFile",
        "_CommandAgentFile",
        "_CustomFile",
        "_DefaultsFile",
        "_EXPECTED",
        "_EqualsFile",
        "_ExactSetFile",
        "_FixtureFile",
        "_JudgeFile",
        "_MatchesFile",
        "_PresentFile",
        "_SubsetFile",
        "_SuiteFile",
        "_SupersetFile",
        "_error_message",
        "_field_at",
        "_is_scalar",
        "_keys_at",
        "_model_at",
        "_step",
        "_unwrap_model",
        "validation_problems",
    }
)
"""validation.py's names (the strict pydantic models and their messages), re-exported on
first use: importing this package does not import pydantic (see shapes.py)."""


def __getattr__(name: str) -> Any:
    if name in _VALIDATION:
        from passhat.suite import validation

        return getattr(validation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Case",
    "CaseReader",
    "CustomSpec",
    "EqualsSpec",
    "ExactSetSpec",
    "Fixture",
    "JudgeSpec",
    "MatchesSpec",
    "PresentSpec",
    "ScorerSpec",
    "SubsetSpec",
    "Suite",
    "SuiteDefaults",
    "SupersetSpec",
    "load_suite",
]
