"""Sources of log lines: line assembly and tailing of local mirror files."""
