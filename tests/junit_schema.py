"""JUnit XML checked against the two schemas CI tools read it by.

The rules below are written from the schemas' documentation, not copied from their
files (the XSDs are third-party files; this checks what they declare, element by
element, and would need no change to read as their declarations do):

- **Ant** — the JUnit task's result schema, `JUnit.xsd` of
  https://github.com/windyroad/JUnit-Schema (Apache-2.0), written from Ant's
  `XMLJUnitResultFormatter`; the strict one. `<testsuites>` declares no attribute;
  a `<testsuite>` in it has `name`, `timestamp` (`YYYY-MM-DDTHH:MM:SS`, no zone),
  `hostname`, `tests`, `failures`, `errors`, `time` (decimal), `package`, `id` (int),
  optional `skipped`, and holds exactly `properties`, then test cases, then
  `system-out` and `system-err`; a `<testcase>` has `name`, `classname` and `time`,
  and at most one `skipped`, `error` or `failure` (`type` required), nothing else.
- **Jenkins** — the xunit plugin's `junit-10.xsd`
  (https://github.com/jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/
  plugins/xunit/types/model/xsd/junit-10.xsd, MIT): `name`, `tests`, `failures`,
  `errors` required on a test suite, `time` in Surefire's format, a test case's
  children among skipped / error / failure / reruns / system-out / system-err.

An attribute a schema does not declare is a problem (XSD allows none unless it says so).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import datetime

Check = Callable[[str], bool]


def _token(value: str) -> bool:
    return bool(" ".join(value.split()))


def _string(value: str) -> bool:
    return True


def _int(value: str) -> bool:
    return re.fullmatch(r"[+-]?[0-9]+", value) is not None and -(2**31) <= int(value) < 2**31


def _decimal(value: str) -> bool:
    return re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)", value) is not None


def _ant_time(value: str) -> bool:
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}", value) is None:
        return False
    try:
        datetime.strptime(value, "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return True


def _surefire_time(value: str) -> bool:
    return re.fullmatch(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?", value) is not None


def _attributes(
    element: ET.Element, where: str, declared: dict[str, Check], required: set[str]
) -> list[str]:
    problems = [f"{where}: no {name}" for name in sorted(required - set(element.attrib))]
    for name, value in element.attrib.items():
        check = declared.get(name)
        if check is None:
            problems.append(f"{where}: undeclared attribute {name}")
        elif not check(value):
            problems.append(f"{where}: {name}={value!r} is not of its type")
    return problems


def _property(prop: ET.Element, where: str) -> list[str]:
    return _attributes(prop, where, {"name": _token, "value": _string}, {"name", "value"})


# --- Ant


_ANT_SUITE = {
    "name": _token,
    "timestamp": _ant_time,
    "hostname": _token,
    "tests": _int,
    "failures": _int,
    "errors": _int,
    "skipped": _int,
    "time": _decimal,
    "package": _token,
    "id": _int,
}
_ANT_CASE = {"name": _token, "classname": _token, "time": _decimal}
_OUTCOME = {"message": _string, "type": _string}


def ant_problems(root: ET.Element) -> list[str]:
    """What Ant's JUnit schema would refuse in a `<testsuites>` document."""
    if root.tag != "testsuites":
        return [f"the root is <{root.tag}>, not <testsuites>"]
    problems = _attributes(root, "testsuites", {}, set())
    for n, suite in enumerate(root):
        where = f"testsuite {n}"
        if suite.tag != "testsuite":
            problems.append(f"testsuites holds <{suite.tag}>")
            continue
        problems += _attributes(suite, where, _ANT_SUITE, set(_ANT_SUITE) - {"skipped"})
        tags = [child.tag for child in suite]
        cases = tags[1:-2]
        if tags[:1] != ["properties"] or tags[-2:] != ["system-out", "system-err"]:
            problems.append(f"{where}: children {tags[:2]}…{tags[-2:]}, not properties…out, err")
        if any(tag != "testcase" for tag in cases):
            problems.append(f"{where}: holds {sorted(set(cases) - {'testcase'})} among its cases")
        for child in suite:
            if child.tag == "properties":
                problems += [_p for prop in child for _p in _property(prop, f"{where} property")]
                problems += [
                    f"{where}: properties hold <{p.tag}>" for p in child if p.tag != "property"
                ]
            elif child.tag == "testcase":
                problems += _ant_case(child, f"{where} testcase {child.get('name')!r}")
            elif len(child):
                problems.append(f"{where}: <{child.tag}> holds elements")
    return problems


def _ant_case(case: ET.Element, where: str) -> list[str]:
    problems = _attributes(case, where, _ANT_CASE, set(_ANT_CASE))
    children = list(case)
    if len(children) > 1:
        problems.append(f"{where}: {len(children)} children, at most one")
    for child in children:
        if child.tag not in ("skipped", "error", "failure"):
            problems.append(f"{where}: holds <{child.tag}>")
        elif child.tag != "skipped":
            problems += _attributes(child, f"{where} {child.tag}", _OUTCOME, {"type"})
            if len(child):
                problems.append(f"{where} {child.tag}: holds elements")
    return problems


# --- Jenkins


_JENKINS_ROOT = {
    "name": _string,
    "time": _surefire_time,
    "tests": _string,
    "failures": _string,
    "errors": _string,
}
_JENKINS_SUITE = {
    **{name: _string for name in ("name", "tests", "failures", "errors", "group", "skipped")},
    **{name: _string for name in ("timestamp", "hostname", "id", "package", "file", "log", "url")},
    "time": _surefire_time,
}
_JENKINS_CASE = {"name": _string, "time": _string, "classname": _string, "group": _string}
_JENKINS_CASE_CHILDREN = {
    "skipped",
    "error",
    "failure",
    "rerunFailure",
    "rerunError",
    "flakyFailure",
    "flakyError",
    "system-out",
    "system-err",
}


def jenkins_problems(root: ET.Element) -> list[str]:
    """What Jenkins's xunit junit-10.xsd would refuse in a `<testsuites>` document."""
    if root.tag != "testsuites":
        return [f"the root is <{root.tag}>, not <testsuites>"]
    problems = _attributes(root, "testsuites", _JENKINS_ROOT, set())
    for suite in root:
        if suite.tag != "testsuite":
            problems.append(f"testsuites holds <{suite.tag}>")
            continue
        problems += _jenkins_suite(suite, f"testsuite {suite.get('name')!r}")
    return problems


def _jenkins_suite(suite: ET.Element, where: str) -> list[str]:
    problems = _attributes(suite, where, _JENKINS_SUITE, {"name", "tests", "failures", "errors"})
    for child in suite:
        if child.tag == "testsuite":
            problems += _jenkins_suite(child, f"{where} testsuite")
        elif child.tag == "properties":
            problems += [_p for prop in child for _p in _property(prop, f"{where} property")]
        elif child.tag == "testcase":
            case = f"{where} testcase {child.get('name')!r}"
            problems += _attributes(child, case, _JENKINS_CASE, {"name"})
            for inner in child:
                if inner.tag not in _JENKINS_CASE_CHILDREN:
                    problems.append(f"{case}: holds <{inner.tag}>")
                elif inner.tag in ("skipped", "error", "failure"):
                    problems += _attributes(inner, f"{case} {inner.tag}", _OUTCOME, set())
        elif child.tag not in ("system-out", "system-err"):
            problems.append(f"{where}: holds <{child.tag}>")
    return problems


def schema_problems(text: str) -> list[str]:
    """Both schemas' problems with a JUnit document, each named by its schema."""
    root = ET.fromstring(text)
    return [f"Ant: {p}" for p in ant_problems(root)] + [
        f"Jenkins: {p}" for p in jenkins_problems(root)
    ]
