"""``ptm schema``, ``ptm convert`` and ``ptm docs`` (registered through ``cli.COMMAND_MODULES``).

Exit codes as for every ``ptm`` command: 0 done, 1 out of date (``docs --check``), 2 invalid input.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def _write(text: str, output: str | None) -> None:
    if output and output != "-":
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        print(output, file=sys.stderr)
    else:
        sys.stdout.write(text)


def cmd_schema(args: argparse.Namespace) -> int:
    from .schema import schema_json

    _write(schema_json(), args.output)
    return 0


def _kind(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    return "xml" if ext == ".xml" else "yaml" if ext in (".yaml", ".yml") else ""


def cmd_convert(args: argparse.Namespace) -> int:
    from ..trees.errors import TreeLoadError
    from ..trees.loader import load_task
    from .btxml import export_xml, load_task_from_xml, load_tree_from_xml, task_to_yaml

    src = _kind(args.file)
    dst = _kind(args.output) if args.output and args.output != "-" else ("yaml" if src == "xml" else "xml")
    if not src:
        print(f"ptm: {args.file}: expected a .xml or .yaml file", file=sys.stderr)
        return 2
    if src == dst or not dst:
        print(f"ptm: convert goes XML -> YAML or YAML -> XML (got {args.file} -> {args.output})", file=sys.stderr)
        return 2
    try:
        if src == "xml":
            task = (load_task_from_xml(args.file, args.scene, args.set) if args.scene
                    else load_tree_from_xml(args.file, args.set))
            text = task_to_yaml(task, f"converted from {os.path.basename(args.file)} by 'ptm convert'")
        else:
            text = export_xml(load_task(args.file, args.set))
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    _write(text, args.output)
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from .docs import MarkersMissing, behaviours_markdown, readme_is_current, update_readme

    try:
        if args.update_readme:
            changed = update_readme(args.update_readme)
            print(f"{args.update_readme}: {'updated' if changed else 'already current'}", file=sys.stderr)
            return 0
        if args.check:
            if readme_is_current(args.check):
                return 0
            print(f"{args.check}: the behaviour table is out of date; run 'ptm docs --update-readme {args.check}'",
                  file=sys.stderr)
            return 1
    except (MarkersMissing, OSError) as e:
        print(f"ptm: {e}", file=sys.stderr)
        return 2
    _write(behaviours_markdown(), args.output)
    return 0


def register(subparsers: Any) -> None:
    """Add ``schema``, ``convert`` and ``docs`` to the ``ptm`` parser."""
    p = subparsers.add_parser("schema", help="print the JSON Schema of task files (for editors)",
                              description="JSON Schema (draft 2020-12) generated from the behaviour registry; "
                                          "see docs/editor_schema.md to wire it into VS Code.")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_schema)

    p = subparsers.add_parser("convert", help="convert between BehaviorTree.CPP XML and YAML task trees",
                              description="FILE.xml -o FILE.yaml or FILE.yaml -o FILE.xml (BehaviorTree.CPP v4 / Groot2).")
    p.add_argument("file", help="a .xml (BehaviorTree.CPP v4) or .yaml task file")
    p.add_argument("-o", "--output", help="output file (.yaml or .xml); default stdout in the other format")
    p.add_argument("--scene", metavar="TASK.yaml", help="XML -> YAML: take the scene, blackboard and parameters "
                                                       "from this task file (needed for ${...} in the XML)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a value (as ptm run)")
    p.set_defaults(func=cmd_convert)

    p = subparsers.add_parser("docs", help="the behaviour reference as Markdown; keep the README's table current")
    p.add_argument("--update-readme", metavar="README.md", help="regenerate the table between the behaviours markers")
    p.add_argument("--check", metavar="README.md", help="exit 1 if the README's table differs from the registry")
    p.add_argument("-o", "--output", help="write the Markdown here instead of stdout")
    p.set_defaults(func=cmd_docs)
