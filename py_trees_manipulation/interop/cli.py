"""``ptm schema``, ``ptm convert`` and ``ptm docs`` (registered through ``cli.COMMAND_MODULES``).

Exit codes as for every ``ptm`` command: 0 done, 1 out of date (``docs --check``), 2 invalid input.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..commands.subcommands import add_command


def _write(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` (its folder created; the path echoed on stderr), or stdout.

    Raises:
        OSError: the file cannot be written.
    """
    if output and output != "-":
        folder = os.path.dirname(output)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        print(output, file=sys.stderr)
    else:
        sys.stdout.write(text)


def _write_exit(text: str, output: str | None) -> int:
    """:func:`_write` as a command's exit code: 0, or 2 (the reason on stderr) when the file cannot
    be written."""
    try:
        _write(text, output)
    except OSError as e:
        print(f"ptm: {output}: cannot write: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema (draft 2020-12) of task files, generated from the behaviour registry, or with
    --robot that of robot description files; see docs/editor_schema.md to wire it into VS Code.

    Examples:
      ptm schema -o ptm-task.schema.json
      ptm schema --robot -o ptm-robot.schema.json
    """
    if getattr(args, "robot", False):
        from .robot_schema import robot_schema_json as schema_json
    else:
        from .schema import schema_json

    return _write_exit(schema_json(), args.output)


def _kind(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    return "xml" if ext == ".xml" else "yaml" if ext in (".yaml", ".yml") else ""


def cmd_convert(args: argparse.Namespace) -> int:
    """Convert a task tree between YAML and BehaviorTree.CPP v4 XML (Groot2): FILE.yaml -o FILE.xml exports the
    tree; FILE.xml -o FILE.yaml imports it, and with --scene TASK.yaml writes a complete task file (name,
    description, parameters, scene and blackboard of TASK.yaml, tree of FILE.xml) that ptm run accepts.

    Examples:
      ptm convert examples/pick_and_lift.yaml -o pick_and_lift.xml
      ptm convert pick_and_lift.xml --scene examples/pick_and_lift.yaml -o edited.yaml
      ptm run edited.yaml
    Exit codes: 0 written, 2 invalid input.
    """
    from ..located.errors import TreeLoadError
    from ..trees.loader import load_task
    from .btxml_export import export_xml
    from .btxml_import import load_task_from_xml, load_tree_from_xml
    from .btxml_yaml import task_to_yaml

    src = _kind(args.file)
    dst = _kind(args.output) if args.output and args.output != "-" else ("yaml" if src == "xml" else "xml")
    if not src:
        print(f"ptm: {args.file}: expected a .xml or .yaml file", file=sys.stderr)
        return 2
    for path in [args.file] + ([args.scene] if args.scene else []):
        if not os.path.isfile(path):
            print(f"ptm: {path}: no such file", file=sys.stderr)
            return 2
    if (args.scene or args.main_tree) and src != "xml":
        print("ptm: --scene and --main-tree are for XML -> YAML (a YAML task file holds its own scene and tree)",
              file=sys.stderr)
        return 2
    if src == dst or not dst:
        print(f"ptm: convert goes XML -> YAML or YAML -> XML (got {args.file} -> {args.output})", file=sys.stderr)
        return 2
    try:
        if src == "xml":
            if args.scene:
                task = load_task_from_xml(args.file, args.scene, args.set, main_tree_id=args.main_tree)
                note = (f"converted from {os.path.basename(args.file)} (tree) and {os.path.basename(args.scene)} "
                        "(name, parameters, scene, blackboard) by 'ptm convert'")
            else:
                task = load_tree_from_xml(args.file, args.set, main_tree_id=args.main_tree)
                note = (f"converted from {os.path.basename(args.file)} by 'ptm convert' (tree only: "
                        "add --scene TASK.yaml for a runnable task file)")
            to_file = bool(args.output) and args.output != "-"
            text = task_to_yaml(task, note, scene_file=args.scene,
                                output_dir=os.path.dirname(os.path.abspath(args.output)) if to_file else None)
        else:
            text = export_xml(load_task(args.file, args.set))
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    return _write_exit(text, args.output)


def cmd_docs(args: argparse.Namespace) -> int:
    """Print the behaviour reference (every behaviour, composite and decorator with its parameters and units) as
    Markdown, or check/update the generated tables of the documentation pages (docs/*.md): the behaviour table
    and the key tables of scene and robot description files, between their <!-- NAME:start --> and <!--
    NAME:end --> markers.

    Examples:
      ptm docs -o behaviours.md
      ptm docs --update docs/*.md
      ptm docs --check docs/*.md     # exit 1 when a table is out of date
    """
    from .docs import BLOCKS, MarkersMissing, behaviours_markdown, has_blocks, stale_blocks, update_page

    try:
        pages = args.update or args.check
        if pages:
            pages = [p for p in pages if has_blocks(p)]
            if not pages:
                print("ptm: none of these files has a generated table (markers <!-- NAME:start --> and "
                      f"<!-- NAME:end -->, NAME one of {', '.join(BLOCKS)})", file=sys.stderr)
                return 2
        if args.update:
            for path in pages:
                changed = update_page(path)
                print(f"{path}: " + (f"updated ({', '.join(changed)})" if changed else "already current"),
                      file=sys.stderr)
            return 0
        if args.check:
            stale = [(path, stale_blocks(path)) for path in pages]
            for path, names in stale:
                if names:
                    print(f"{path}: out of date: {', '.join(names)}; run 'ptm docs --update {path}'", file=sys.stderr)
            return 1 if any(names for _, names in stale) else 0
    except MarkersMissing as e:
        print(f"ptm: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"ptm: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    return _write_exit(behaviours_markdown(), args.output)


def register(subparsers: Any) -> None:
    """Add ``schema``, ``convert`` and ``docs`` to the ``ptm`` parser."""
    p = add_command(subparsers, "schema", cmd_schema, "print the JSON Schema of task files (for editors)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument("--robot", action="store_true", help="the schema of robot description files instead")

    p = add_command(subparsers, "convert", cmd_convert, "convert between BehaviorTree.CPP XML and YAML task trees")
    p.add_argument("file", help="a .xml (BehaviorTree.CPP v4) or .yaml task file")
    p.add_argument("-o", "--output", help="output file (.yaml or .xml); default stdout in the other format")
    p.add_argument("--scene", metavar="TASK.yaml", help="XML -> YAML: write a complete task file with the name, "
                                                       "description, parameters, scene and blackboard of TASK.yaml "
                                                       "(also needed for ${...} in the XML)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a value (as ptm run)")
    p.add_argument("--main-tree", metavar="ID", help="XML -> YAML: the BehaviorTree to convert, for a file with several "
                                                    "trees and no main_tree_to_execute")

    p = add_command(subparsers, "docs", cmd_docs,
                    "the behaviour reference as Markdown; keep the site's generated tables current")
    p.add_argument("--update", "--update-readme", nargs="+", metavar="PAGE.md",
                   help="regenerate the tables between the markers of these pages")
    p.add_argument("--check", nargs="+", metavar="PAGE.md", help="exit 1 if a page's table differs from the registry")
    p.add_argument("-o", "--output", help="write the Markdown here instead of stdout")
