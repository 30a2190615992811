// SPDX-License-Identifier: GPL-2.0
//
// promlint: `promtool check metrics` without the Prometheus server.
//
// Reads the Prometheus text exposition format on stdin and checks it with
// promlint, the linter of the Prometheus Go client library that promtool's
// `check metrics` runs: a text that does not parse is an error (exit 1),
// each lint problem (naming, units, counters without _total, missing HELP,
// ...) is printed as "METRIC: TEXT" and makes the exit status 3, as
// promtool's does.  Built by scripts/deps.sh into /opt/vcache/bin/promlint.
package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: promlint < METRICS (Prometheus text format on stdin)")
		os.Exit(2)
	}
	problems, err := promlint.New(os.Stdin).Lint()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error while linting:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "%s: %s\n", p.Metric, p.Text)
	}
	if len(problems) > 0 {
		os.Exit(3)
	}
}
