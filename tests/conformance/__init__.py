"""Redis's own test suite (its TCL units) run against resplite: the runner and the fast subset."""
