# `snakemake --report` gathers the outputs of the configuration it is given, so it needs the run's own
# --config: without it, it looks for the default configuration's outputs (22 datasets, the landmark
# experiment) and fails on the first one missing, after one warning per file. Checked here, once every
# stage has added its outputs to TARGETS: one line naming the --config of the run recorded in
# results/tables/environment.md (rejectopt.pipeline.report.report_config_error).

import sys

from rejectopt.pipeline.config import ConfigError
from rejectopt.pipeline.report import report_config_error, report_requested

if report_requested(sys.argv):
    REPORT_CONFIG_ERROR = report_config_error(
        TARGETS, config, "results/tables/environment.md"
    )
    if REPORT_CONFIG_ERROR:
        raise ConfigError(REPORT_CONFIG_ERROR)
