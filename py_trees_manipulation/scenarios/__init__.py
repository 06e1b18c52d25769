"""Scenario tests and parameter sweeps for task files (see docs/scenarios.md)."""
