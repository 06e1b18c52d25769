"""Interoperability and tooling for task trees.

Modules:
  - ``schema``: JSON Schema (draft 2020-12) of task files, generated from the behaviour registry
    (``ptm schema``);
  - ``btxml``: BehaviorTree.CPP v4 / Groot2 XML import and export (``ptm convert``, ``ptm run
    FILE.xml --scene TASK.yaml``), in ``btxml_common``, ``btxml_import``, ``btxml_export`` and
    ``btxml_yaml``;
  - ``docs``: the generated reference tables of the documentation site (``ptm docs``);
  - ``cli``: the ``ptm`` subcommands above.
"""
