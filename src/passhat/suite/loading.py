"""Loading a suite folder: `load_suite` reads suite.yaml and every case file, checks them
(validation.py), loads the environment (through passhat/imports.py, like a user's) and
the scorers, and raises one `SuiteError` listing every problem found. `CaseReader`
reads single cases without the rest (what a report needs to explain a few cases).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from passhat.errors import ConfigError, SuiteError
from passhat.imports import BUILTIN_ENVIRONMENTS, load_object, source_hash
from passhat.plain import Loc, did_you_mean, field_path, show
from passhat.suite import model as kinds
from passhat.suite import shapes
from passhat.suite.checks import (
    _lacked,
    _path_problem,
    _template_problem,
    check_scorer_function,
    goal_item_keys,
    goal_lacks,
    template_fields,
)
from passhat.suite.hashing import case_hash, scorer_file_hash, suite_hash
from passhat.suite.model import (
    _CASE_ID,
    _SCORER_EXAMPLE,
    _SCORER_KINDS,
    CASES_DIR,
    ENVIRONMENT_KEYS,
    SUITE_FILE,
    Case,
    ScorerSpec,
    Suite,
    SuiteDefaults,
    _case_of,
    _Shelf,
)
from passhat.suite.reading import _anchor_problem, _json_problems, _load_yaml, _yaml_message

Parsed = Any
"""A file as its schema parsed it: shapes.py's plain record or validation.py's model (the
same fields)."""

MAX_FILE_BYTES = 64 * 2**20
"""A suite.yaml or case file larger than this is refused before it is read (a YAML file
takes ten times its size in memory once parsed): keep data sets outside the suite."""

_SCORER_FILES = {
    "exact_set": "_ExactSetFile",
    "subset": "_SubsetFile",
    "superset": "_SupersetFile",
    "equals": "_EqualsFile",
    "matches": "_MatchesFile",
    "present": "_PresentFile",
    "judge": "_JudgeFile",
    "custom": "_CustomFile",
}
"""The schema (validation.py's model, shapes.py's table) of each scorer kind."""


def _validated(
    name: str, data: Any, prefix: Loc = ()
) -> tuple[Parsed | None, list[tuple[Loc, str]]]:
    """`data` parsed by schema `name`: by its plain table when that accepts it (pydantic
    is not imported), else by its strict model; None and the model's problems if invalid."""
    parsed = shapes.parse(name, data) if name in shapes.TABLES else None
    if parsed is not None:
        return parsed, []
    from pydantic import ValidationError

    from passhat.suite import validation

    model = getattr(validation, name)
    try:
        return model.model_validate(data), []
    except ValidationError as error:
        return None, validation.validation_problems(error, model, prefix)


# ---------------------------------------------------------------------- loading


def load_suite(
    path: str | Path, *, environment: str | None = None, scorers: list[Any] | None = None
) -> Suite:
    """Load and validate a suite folder (or its suite.yaml); SuiteError lists every problem.

    `environment` and `scorers` replace suite.yaml's `environment` and
    `defaults.scorers` (as suite.yaml would write them) before anything is checked:
    the suite, its hash included, is what suite.yaml with them would give."""
    overrides: dict[str, Any] = {}
    if environment is not None:
        overrides["environment"] = environment
    if scorers is not None:
        overrides["scorers"] = scorers
    return _Loader(Path(path), overrides).load()


class CaseReader:
    """suite.yaml's scorers and single cases read from `cases/<id>.yaml` (or `.yml`),
    without reading the other case files: what a report reads to explain a few cases of
    a suite of 10,000 (a whole load takes seconds). SuiteError when the folder or
    suite.yaml's scorers are not valid."""

    def __init__(self, path: str | Path) -> None:
        self._loader = loader = _Loader(Path(path))
        if not loader.root.is_dir():
            raise SuiteError(f"{loader.shown}: no such folder; give a suite folder")
        head = loader._suite_file()
        specs = loader._scorer_specs() if head is not None else None
        if specs is None:
            problem = loader.problems[0] if loader.problems else f"{loader.shown}: no scorers"
            raise SuiteError(problem, loader.problems)
        self.scorers: tuple[ScorerSpec, ...] = tuple(specs)

    def case(self, case_id: str) -> Case | None:
        """The case from its own file; None when no file of that name holds it, valid."""
        loader = self._loader
        for ext in (".yaml", ".yml"):
            rel = f"{CASES_DIR}/{case_id}{ext}"
            if (loader.root / rel).is_file():
                read = loader._case(rel, None, (), list(self.scorers))
                loader.shelf.flush()
                if read is not None and read[0].id == case_id:
                    return read[0]
        return None

    def every_case(self) -> dict[str, Case]:
        """Every valid case of cases/ by its id (an id's first file, as a whole load
        keeps it), each read as `case` reads one: no environment and no scorer's code
        imported, where `load_suite` imports both (a report reads the suite a store
        names, and a store may be someone else's)."""
        loader = self._loader
        found: dict[str, Case] = {}
        for name in loader._case_files():
            read = loader._case(f"{CASES_DIR}/{name}", None, (), list(self.scorers))
            if read is not None:
                found.setdefault(read[0].id, read[0])
        loader.shelf.flush()
        return found


class _Loader:
    """One load: collects every problem before giving up."""

    def __init__(self, given: Path, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = overrides or {}
        """suite.yaml's environment and defaults.scorers given by the caller (`load_suite`)."""
        if given.name == SUITE_FILE and given.is_file():
            given = given.parent
        self.shown = given
        self.root = given.resolve()
        self.problems: list[str] = []
        self.env_name: str | None = None
        """suite.yaml's environment, when it is text (even if other fields are wrong)."""
        self.labels: tuple[str, ...] | None = None
        """suite.yaml's labels, when they are a list of text."""
        self.scorers: list[Any] | None = None
        """suite.yaml's defaults.scorers, when they are a non-empty list."""
        self.env_config: dict[str, Any] = {}
        """suite.yaml's settings of the declarative `tools` environment."""
        self.env_hash: str | None = None
        """SHA-256 of a user environment's source file."""
        self.shelf = _Shelf()
        """Where the cases' content goes (see `Case`)."""
        self.item_keys: dict[int, set[str]] = {}
        """Per set scorer with an item template (by index): every key any goal item holds."""

    def problem(self, rel: str, loc: Loc, message: str) -> None:
        where = field_path(loc)
        head = str(self.shown / rel) if rel else str(self.shown)
        self.problems.append(f"{head}: {where}: {message}" if where else f"{head}: {message}")

    def load(self) -> Suite:
        if not self.root.exists():
            raise SuiteError(
                f"{self.shown}: no such folder; give a suite folder holding {SUITE_FILE} "
                f"and {CASES_DIR}/"
            )
        if not self.root.is_dir():
            raise SuiteError(
                f"{self.shown}: is a file, not a suite folder; give the folder holding "
                f"{SUITE_FILE} and {CASES_DIR}/"
            )
        head = self._suite_file()
        agent = self._agent_spec(head.defaults.agent) if head is not None else None
        specs = self._scorer_specs()
        env_cls = self._environment(self.env_name) if self.env_name else None
        if env_cls is not None and self.labels is not None:
            for loc, message in env_cls.check_labels(self.labels):
                self.problem(SUITE_FILE, loc, message)
        cases, goal_problems = self._cases(
            env_cls if self.labels is not None else None, self.labels or (), specs or []
        )
        scorer_hashes: dict[str, str] = {}
        if specs is not None:
            scorer_hashes = self._check_scorers(specs, goal_problems)
        if self.problems or head is None or specs is None or agent is None:
            count = len(self.problems)
            raise SuiteError(
                f"{self.shown}: {count} problem{'s' if count != 1 else ''} in the suite",
                self.problems,
            )
        defaults = SuiteDefaults(
            agent=agent,
            model=head.defaults.model,
            k=head.defaults.k,
            params=dict(head.defaults.params),
            max_turns=head.defaults.max_turns,
            scorers=tuple(specs),
        )
        ordered = tuple(sorted(cases, key=lambda c: c.id))
        self.shelf.flush()  # from here on only read
        return Suite(
            name=head.name,
            description=head.description,
            path=self.root,
            labels=tuple(head.labels),
            environment=head.environment,
            defaults=defaults,
            cases=ordered,
            hash=suite_hash(head, defaults, ordered, scorer_hashes, self.env_config),
            environment_config=self.env_config,
            environment_hash=self.env_hash,
            loaded_with=dict(self.overrides),
        )

    # -- files

    def _read(self, rel: str) -> Any:
        """Parsed, JSON-ready YAML of a file, or None (after recording why not)."""
        try:
            # opened without waiting (a FIFO with no writer blocked for ever) and sized
            # before it is read (a sparse 2 GB file ran out of memory: a traceback)
            fd = os.open(os.path.join(self.root, rel), os.O_RDONLY | os.O_NONBLOCK)
            with open(fd, "rb") as file:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    self.problem(
                        rel, (), "is not a file (a folder, FIFO or device); put a YAML file there"
                    )
                    return None
                if info.st_size > MAX_FILE_BYTES:
                    self.problem(
                        rel,
                        (),
                        f"is {info.st_size:,} bytes, more than the {MAX_FILE_BYTES:,} a suite "
                        "file may hold; keep data sets outside the suite",
                    )
                    return None
                # the size fstat gave and a byte more, not the cap: read(cap) made a
                # 64 MiB buffer for every case file (opening and reading 200 small ones
                # took 5-8 ms, not 2); a file that grew since is read on, to the cap
                raw = file.read(info.st_size + 1)
                if len(raw) > info.st_size:
                    raw += file.read(MAX_FILE_BYTES + 1 - len(raw))
                text = raw.decode("utf-8")
        except FileNotFoundError:
            self.problem(rel, (), "no such file")
            return None
        except UnicodeDecodeError:
            self.problem(rel, (), "is not UTF-8 text; save it as UTF-8")
            return None
        except OSError as error:
            self.problem(rel, (), f"cannot be read ({error.strerror})")
            return None
        try:
            anchor = _anchor_problem(text)
            data, plain = (None, True) if anchor else _load_yaml(text)  # a SafeLoader
        except yaml.YAMLError as error:
            self.problem(rel, (), _yaml_message(error))
            return None
        except ValueError as error:  # an integer past Python's 4,300-digit limit
            self.problem(
                rel, (), f"holds a number too long to read ({error}); quote it to keep it as text"
            )
            return None
        if anchor:
            self.problem(rel, (), anchor)
            return None
        if data is None:
            self.problem(rel, (), "is empty; write the fields as 'key: value' lines")
            return None
        if not isinstance(data, dict):
            self.problem(rel, (), f"expected 'key: value' lines, got {show(data)}")
            return None
        bad = [] if plain else list(_json_problems(data))
        for loc, message in bad:
            self.problem(rel, loc, message)
        return None if bad else data

    def _overridden(self, data: Any) -> Any:
        """suite.yaml's data with the caller's environment and scorers in place."""
        if not self.overrides or not isinstance(data, dict):
            return data
        data = dict(data)
        if "environment" in self.overrides:
            data["environment"] = self.overrides["environment"]
        if "scorers" in self.overrides:
            defaults = data.get("defaults")
            defaults = dict(defaults) if isinstance(defaults, dict) else {}
            defaults["scorers"] = self.overrides["scorers"]
            data["defaults"] = defaults
        return data

    def _suite_file(self) -> Parsed | None:
        if not (self.root / SUITE_FILE).exists():  # a FIFO there is named by `_read`
            self.problem(
                SUITE_FILE,
                (),
                "no such file; every suite folder needs one (name, environment, labels, defaults)",
            )
            return None
        data = self._read(SUITE_FILE)
        if data is None:
            return None
        data = self._overridden(data)
        # What can be read even when other fields are wrong, so that cases and
        # scorers are still checked and one run lists every problem.
        env_name, labels = data.get("environment"), data.get("labels", [])
        self.env_name = env_name if isinstance(env_name, str) else None
        self.env_config = {k: data[k] for k in ENVIRONMENT_KEYS if k in data}
        if isinstance(labels, list) and all(isinstance(x, str) for x in labels):
            self.labels = tuple(labels)
        defaults = data.get("defaults")
        scorers = defaults.get("scorers") if isinstance(defaults, dict) else None
        self.scorers = scorers if isinstance(scorers, list) and scorers else None
        head, problems = _validated("_SuiteFile", data)
        for loc, message in problems:
            self.problem(SUITE_FILE, loc, message)
        if head is None:
            return None
        seen: dict[str, int] = {}
        for index, label in enumerate(head.labels):
            if not label.strip():
                self.problem(SUITE_FILE, ("labels", index), "is empty; write the label's name")
            elif label in seen:
                self.problem(
                    SUITE_FILE,
                    ("labels", index),
                    f"{show(label)} repeats labels[{seen[label]}]; list each label once",
                )
            seen.setdefault(label, index)
        return head

    def _agent_spec(self, raw: Any) -> str | None:
        """The agent spec string: a name as written, or a command agent's canonical spec."""
        loc: Loc = ("defaults", "agent")
        if isinstance(raw, str) and raw.strip():
            return raw
        if isinstance(raw, dict):
            parsed, problems = _validated("_CommandAgentFile", raw, loc)
            for where, message in problems:
                self.problem(SUITE_FILE, where, message)
            return None if parsed is None else shapes.command_agent_spec(parsed)
        self.problem(
            SUITE_FILE,
            loc,
            f"expected an agent name (clarifier, package.module:name) or "
            f"{{command: [program, args...]}}, got {show(raw)}",
        )
        return None

    def _environment(self, name: str) -> Any:
        """The environment class suite.yaml names, checked; None (after recording why)."""
        try:
            env_cls = load_object(
                BUILTIN_ENVIRONMENTS.get(name, name), self.root, what="environment"
            )
        except ConfigError as error:
            known = sorted(BUILTIN_ENVIRONMENTS)
            # the location already says "environment:", so the message need not
            message = str(error).removeprefix("environment ")
            if ":" not in name:
                message = (
                    f"{show(name)} is not an environment; use one of {', '.join(known)} or "
                    f"file.py:ClassName{did_you_mean(name, known)}"
                )
            self.problem(SUITE_FILE, ("environment",), message)
            return None
        if not (isinstance(env_cls, type) and hasattr(env_cls, "check_class")):
            self.problem(
                SUITE_FILE,
                ("environment",),
                f"{name}: {show(getattr(env_cls, '__name__', env_cls))} is not a "
                "passhat Environment; write class Name(passhat.Environment) with @tool methods",
            )
            return None
        found = env_cls.check_class(self.env_config)
        for loc, message in found:
            prefix = (
                f"{name}: " if loc == ("environment",) and name not in BUILTIN_ENVIRONMENTS else ""
            )
            self.problem(SUITE_FILE, loc, prefix + message)
        if name not in BUILTIN_ENVIRONMENTS:
            self.env_hash = source_hash(env_cls)
        return None if found else env_cls

    def _scorer_specs(self) -> list[ScorerSpec] | None:
        if self.scorers is None:
            return None
        specs: list[ScorerSpec] = []
        ok = True
        for index, raw in enumerate(self.scorers):
            spec = self._scorer_spec(raw, ("defaults", "scorers", index))
            if spec is None:
                ok = False
            else:
                specs.append(spec)
        return specs if ok else None

    def _scorer_spec(self, raw: Any, loc: Loc) -> ScorerSpec | None:
        if not isinstance(raw, dict):
            self.problem(SUITE_FILE, loc, f"expected a scorer such as {_SCORER_EXAMPLE}")
            return None
        kinds = [k for k in _SCORER_KINDS if k in raw]
        if len(kinds) != 1:
            got = "none" if not kinds else " and ".join(kinds)
            keys = [str(k) for k in raw]
            hint = "".join(did_you_mean(k, _SCORER_KINDS) for k in keys[:1]) if not kinds else ""
            self.problem(
                SUITE_FILE,
                loc,
                f"names {got} of the scorer kinds; give exactly one of "
                f"{', '.join(_SCORER_KINDS)}{hint}",
            )
            return None
        parsed, problems = _validated(_SCORER_FILES[kinds[0]], raw, loc)
        for where, message in problems:
            self.problem(SUITE_FILE, where, message)
        return None if parsed is None else self._spec_from(kinds[0], parsed, loc)

    def _spec_from(self, kind: str, parsed: Parsed, loc: Loc) -> ScorerSpec | None:
        if kind == "exact_set":
            bad = _path_problem(parsed.exact_set)
            if bad:
                self.problem(SUITE_FILE, (*loc, "exact_set"), bad)
            bad_item = _template_problem(parsed.item) if parsed.item is not None else None
            if bad_item:
                self.problem(SUITE_FILE, (*loc, "item"), bad_item)
            return None if bad or bad_item else kinds.ExactSetSpec(parsed.exact_set, parsed.item)
        if kind in ("subset", "superset"):
            path = parsed.subset if kind == "subset" else parsed.superset
            bad = _path_problem(path)
            if bad:
                self.problem(SUITE_FILE, (*loc, kind), bad)
            bad_item = _template_problem(parsed.item) if parsed.item is not None else None
            if bad_item:
                self.problem(SUITE_FILE, (*loc, "item"), bad_item)
            cls = kinds.SubsetSpec if kind == "subset" else kinds.SupersetSpec
            return None if bad or bad_item else cls(path, parsed.item)
        if kind == "equals":
            bad = _path_problem(parsed.equals) if parsed.equals != "." else None
            if bad:
                self.problem(SUITE_FILE, (*loc, "equals"), bad)
            return None if bad else kinds.EqualsSpec(parsed.equals)
        if kind == "matches":
            bad = _path_problem(parsed.matches)
            if bad:
                self.problem(SUITE_FILE, (*loc, "matches"), bad)
            try:
                re.compile(parsed.pattern)
            except (re.error, RecursionError, OverflowError) as error:  # too deep, too many
                self.problem(
                    SUITE_FILE,
                    (*loc, "pattern"),
                    f"{show(parsed.pattern)} is not a regular expression ({error})",
                )
                return None
            return None if bad else kinds.MatchesSpec(parsed.matches, parsed.pattern)
        if kind == "judge":
            return self._judge_spec(parsed, loc)
        if kind == "present":
            ok = self._paths_ok(parsed.present, (*loc, "present"))
            return kinds.PresentSpec(tuple(parsed.present)) if ok else None
        assert kind == "custom"
        return kinds.CustomSpec(parsed.custom, dict(parsed.params))

    def _paths_ok(self, paths: Sequence[str], loc: Loc) -> bool:
        """Name every path of a list that is not a dotted path; True when all are."""
        ok = True
        for index, path in enumerate(paths):
            bad = _path_problem(path)
            if bad:
                self.problem(SUITE_FILE, (*loc, index), bad)
                ok = False
        return ok

    def _judge_spec(self, parsed: Parsed, loc: Loc) -> kinds.JudgeSpec | None:
        ok = True
        provider, _, name = parsed.model.partition(":")
        if not name or provider not in ("replay", "openai", "anthropic"):
            self.problem(
                SUITE_FILE,
                (*loc, "model"),
                f"{show(parsed.model)} is not provider:name; use replay:CASSETTE.jsonl, "
                "openai:MODEL or anthropic:MODEL",
            )
            ok = False
        ok = self._paths_ok(parsed.paths, (*loc, "paths")) and ok
        if not parsed.judge.strip():
            self.problem(SUITE_FILE, (*loc, "judge"), "is empty; write the rubric")
            ok = False
        if not ok:
            return None
        return kinds.JudgeSpec(
            rubric=parsed.judge,
            model=parsed.model,
            paths=tuple(parsed.paths),
            params=dict(parsed.params),
            base_url=parsed.base_url,
        )

    def _case_files(self) -> list[str]:
        folder = self.root / CASES_DIR
        if not folder.is_dir():
            self.problem(
                CASES_DIR,
                (),
                "no such folder; put one YAML file per case in cases/ "
                "(e.g. cases/ac-conflict-001.yaml)",
            )
            return []
        # names, not Paths: pathlib's parsing cost more than reading a thousand small files
        with os.scandir(folder) as entries:
            files = sorted(
                entry.name
                for entry in entries
                if os.path.splitext(entry.name)[1] in (".yaml", ".yml") and self._case_file(entry)
            )
        if not files:
            self.problem(CASES_DIR, (), "holds no case files; add cases/<case-id>.yaml")
        return files

    def _case_file(self, entry: os.DirEntry[str]) -> bool:
        """A case file to read; a link that loops or cannot be followed is a problem named
        with the file (it was an OSError traceback), not a file skipped in silence."""
        try:
            if entry.is_file():
                return True
            # a folder is skipped, and so is a link to nothing (an editor's lock file,
            # .#name.yaml); a FIFO or a device is read, to be named (it was skipped unsaid)
            return not entry.is_dir() and os.path.exists(entry.path)
        except OSError as error:
            self.problem(
                f"{CASES_DIR}/{entry.name}",
                (),
                f"cannot be read ({error.strerror}); remove the link or point it at a case file",
            )
            return False

    def _cases(
        self, env_cls: Any, labels: tuple[str, ...], specs: list[ScorerSpec]
    ) -> tuple[list[Case], dict[int, list[tuple[str, Loc, str]]]]:
        """The valid cases, and per scorer (by its index) what the goals of the cases
        lack for it (file, location, message), in case order."""
        cases: list[Case] = []
        goal_problems: dict[int, list[tuple[str, Loc, str]]] = {}
        first_file: dict[str, str] = {}
        for name in self._case_files():
            rel = f"{CASES_DIR}/{name}"
            found = self._case(rel, env_cls, labels, specs)
            if found is None:
                continue
            case, lacking = found
            if case.id in first_file:
                self.problem(
                    rel,
                    ("id",),
                    f"{show(case.id)} is already the id of {self.shown / first_file[case.id]}; "
                    "give each case its own id",
                )
                continue
            first_file[case.id] = rel
            cases.append(case)
            for index, loc, message in lacking:
                goal_problems.setdefault(index, []).append((rel, loc, message))
        return cases, goal_problems

    def _case(
        self, rel: str, env_cls: Any, labels: tuple[str, ...], specs: list[ScorerSpec]
    ) -> tuple[Case, list[tuple[int, Loc, str]]] | None:
        """A case file's case, with what its goal lacks for the scorers (by the scorer's
        index); None (after recording why) when the file is not a valid case."""
        data = self._read(rel)
        if data is None:
            return None
        ok = True
        parsed, found = _validated("_CaseFile", data)
        if parsed is None:
            for loc, message in found:
                self.problem(rel, loc, message)
            # When only id, tags or stray keys are wrong, the environment can still
            # check input, goal and fixtures: every problem is listed in one go.
            if any(loc[:1] in (("input",), ("goal",), ("fixtures",)) for loc, _ in found):
                return None
            core = {k: v for k, v in data.items() if k in ("input", "goal", "fixtures")}
            parsed, found = _validated("_CaseFile", {**core, "id": "unchecked"})
            if parsed is None:
                return None
            ok = False
        if ok and not _CASE_ID.match(parsed.id):
            self.problem(
                rel,
                ("id",),
                f"{show(parsed.id)} may hold only letters, digits, '.', '_' and '-' "
                "(and must start with a letter or digit)",
            )
            ok = False
        lacking = goal_lacks(specs, parsed.goal)  # read while the goal is at hand
        for index, keys in goal_item_keys(specs, parsed.goal).items():
            self.item_keys.setdefault(index, set()).update(keys)
        case = self._build_case(parsed, rel)
        if env_cls is not None:
            found = env_cls.check_case(case, labels, self.env_config)
            for loc, message in found:
                self.problem(rel, loc, message)
            ok = ok and not found
        return (case, lacking) if ok else None

    def _build_case(self, parsed: Parsed, rel: str) -> Case:
        fixtures = {
            tool: [{"args": f.args, "response": f.response} for f in items]
            for tool, items in parsed.fixtures.items()
        }
        return _case_of(
            parsed.id,
            parsed.input,
            {tool: [(f["args"], f["response"]) for f in items] for tool, items in fixtures.items()},
            parsed.goal,
            tuple(sys.intern(tag) for tag in parsed.tags),
            os.path.join(self.root, rel),
            case_hash(parsed.input, fixtures, parsed.goal),
            self.shelf,
        )

    # -- scorers

    def _check_scorers(
        self, specs: list[ScorerSpec], goal_problems: dict[int, list[tuple[str, Loc, str]]]
    ) -> dict[str, str]:
        """What the goals lack for the scorers (found per case as it loaded); custom
        scorers importable and callable."""
        hashes: dict[str, str] = {}
        for index, spec in enumerate(specs):
            problems = goal_problems.get(index, [])
            never = self._fields_no_item_holds(index, spec)
            if never:
                # the template is wrong, not every case's goal: one line, on the template
                problems = [p for p in problems if not set(_lacked(p[2])) <= set(never)]
                assert isinstance(spec, kinds.ExactSetSpec) and spec.item is not None
                held = sorted(self.item_keys[index])
                hint = "".join(did_you_mean(name, held) for name in never[:1])
                self.problem(
                    SUITE_FILE,
                    ("defaults", "scorers", index, "item"),
                    f"{show(spec.item)} names {', '.join(never)}, which no goal item of any "
                    f"case holds (they hold {', '.join(held)}){hint}",
                )
            for rel, loc, message in problems:
                self.problem(rel, loc, message)
            if isinstance(spec, kinds.CustomSpec):
                try:
                    fn = load_object(spec.ref, self.root, what="")
                    check_scorer_function(fn, spec.ref, spec.params)
                except ConfigError as error:
                    self.problem(SUITE_FILE, ("defaults", "scorers", index, "custom"), str(error))
                    continue
                digest = scorer_file_hash(spec.ref, self.root)
                if digest is not None:
                    hashes[spec.ref] = digest
        return hashes

    def _fields_no_item_holds(self, index: int, spec: ScorerSpec) -> list[str]:
        """The fields of a set scorer's item template that no goal item of any case
        holds, when some case has items: a misspelt template, not a hundred goals."""
        keys = self.item_keys.get(index)
        if not keys or not isinstance(spec, kinds.ExactSetSpec) or spec.item is None:
            return []
        return [name for name in template_fields(spec.item) if name not in keys]
