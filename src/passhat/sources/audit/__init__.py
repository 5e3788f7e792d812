"""Audit a result folder no harness owns: how many runs were declared, claimed,
made and graded, and which are missing.

The seed's second story is the shape this reads: a Trello experiment whose
report said each group ran three times, whose `benchmark.json` said
`runs_per_configuration: 1`, whose output folder held only `run-1`, and whose
grader read `run_dir = run_dirs[0]`. An audit puts the four numbers side by
side, per configuration:

- **declared**: the run count the manifest records (`runs_per_configuration`,
  `k`, `epochs`, `num_trials`, `n_attempts`, ...), or `--declared-k`;
- **claimed**: what a report says (`--claimed`, or every claim of the report
  files and JSON summaries, read by `claims/` the way people write them:
  "each group ran three times", "averaged over 5 seeds", "pass^5", a `runs`
  column of a markdown table);
- **present**: run directories found (`run-N`, `trial-N`, `attempt-N`,
  `epoch-N`; other patterns with `--run-pattern`; any nesting with `--layout`);
- **graded**: run directories with a verdict: a grade file inside
  (`grade.json`, `verdict.json`, ...) or the exit code of `--grade "CMD
  {run_dir}"`, which passhat runs once for **every** run directory.

The plan the numbers are measured against is the largest of the three
(declared, claimed, highest run index present): a run someone claims or
declares and nobody kept is missing, by index. Figures are labelled with the
graded runs behind them, never with the plan.

Nothing is sized by what the folder says before it is checked: a claim, a
declared count or a run index above MAX_CLAIM (100,000) is refused in one line.
Reading is pure over what the folder holds (`audit_listing`); the file system and
subprocesses are touched only by `scan`, `scan_layout`, `read_manifest`,
`read_claims`, `grade_from_files` and `grade_with_command`. docs/audit.md is the
reference.

The package's rooms (`from passhat.sources.audit import X` reaches every public name):

    manifest.py    the declared run count and the planned configurations
    walk.py        the folder walked: text files read for claims, run folders found
    grade.py       one run folder's verdict: its grade file or the --grade command
    plan.py        each configuration's plan, its runs against it, the findings;
                   audit_folder
    summary.py     audit --json data, totals and figures; the `audited` experiment
"""

from __future__ import annotations

from passhat.sources.audit.grade import GRADE_FILES as GRADE_FILES
from passhat.sources.audit.grade import MAX_GRADE_BYTES as MAX_GRADE_BYTES
from passhat.sources.audit.grade import MAX_GRADER_TAIL as MAX_GRADER_TAIL
from passhat.sources.audit.grade import Grade as Grade
from passhat.sources.audit.grade import GradeStatus as GradeStatus
from passhat.sources.audit.grade import OutputTail as OutputTail
from passhat.sources.audit.grade import check_command as check_command
from passhat.sources.audit.grade import grade_from_data as grade_from_data
from passhat.sources.audit.grade import grade_from_files as grade_from_files
from passhat.sources.audit.grade import grade_with_command as grade_with_command
from passhat.sources.audit.manifest import CONFIG_KEYS as CONFIG_KEYS
from passhat.sources.audit.manifest import K_KEYS as K_KEYS
from passhat.sources.audit.manifest import MANIFESTS as MANIFESTS
from passhat.sources.audit.manifest import Declared as Declared
from passhat.sources.audit.manifest import Manifest as Manifest
from passhat.sources.audit.manifest import parse_manifest as parse_manifest
from passhat.sources.audit.manifest import read_manifest as read_manifest
from passhat.sources.audit.plan import Audit as Audit
from passhat.sources.audit.plan import AuditOptions as AuditOptions
from passhat.sources.audit.plan import ConfigurationAudit as ConfigurationAudit
from passhat.sources.audit.plan import audit_folder as audit_folder
from passhat.sources.audit.plan import audit_listing as audit_listing
from passhat.sources.audit.plan import claims_by_configuration as claims_by_configuration
from passhat.sources.audit.plan import plans as plans
from passhat.sources.audit.summary import SCHEMA_VERSION as SCHEMA_VERSION
from passhat.sources.audit.summary import audit_experiment as audit_experiment
from passhat.sources.audit.summary import audit_figures as audit_figures
from passhat.sources.audit.summary import audit_summary as audit_summary
from passhat.sources.audit.summary import audit_totals as audit_totals
from passhat.sources.audit.walk import CLAIM_SUFFIXES as CLAIM_SUFFIXES
from passhat.sources.audit.walk import MAX_CLAIM_BYTES as MAX_CLAIM_BYTES
from passhat.sources.audit.walk import MAX_CLAIM_DEPTH as MAX_CLAIM_DEPTH
from passhat.sources.audit.walk import MAX_CLAIM_FILES as MAX_CLAIM_FILES
from passhat.sources.audit.walk import MAX_REPORT_BYTES as MAX_REPORT_BYTES
from passhat.sources.audit.walk import REPORT_FILES as REPORT_FILES
from passhat.sources.audit.walk import RUN_PATTERNS as RUN_PATTERNS
from passhat.sources.audit.walk import SKIPPED_FOLDERS as SKIPPED_FOLDERS
from passhat.sources.audit.walk import USER_REGEX_TIMEOUT_S as USER_REGEX_TIMEOUT_S
from passhat.sources.audit.walk import Layout as Layout
from passhat.sources.audit.walk import RunDir as RunDir
from passhat.sources.audit.walk import RunPattern as RunPattern
from passhat.sources.audit.walk import claim_files as claim_files
from passhat.sources.audit.walk import compile_patterns as compile_patterns
from passhat.sources.audit.walk import from_zero as from_zero
from passhat.sources.audit.walk import name_configurations as name_configurations
from passhat.sources.audit.walk import parse_layout as parse_layout
from passhat.sources.audit.walk import read_claims as read_claims
from passhat.sources.audit.walk import scan as scan
from passhat.sources.audit.walk import scan_layout as scan_layout
