"""pytest plugin collecting ``*.scenario.yaml`` files (work in progress)."""
