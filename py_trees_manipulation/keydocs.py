"""Key tables of YAML file sections: one declaration per key feeds validation, schema and docs.

Used by the scene section (:data:`py_trees_manipulation.scene.spec.SCENE_KEYS`) and robot
description files (:data:`py_trees_manipulation.robots.description.DESCRIPTION_KEYS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence


@dataclass(frozen=True)
class KeyDoc:
    """One accepted key: name, type as written in YAML, default (``""``: none), meaning."""

    name: str
    type: str
    default: str
    doc: str
    required: bool = False


def keys_markdown(sections: Mapping[str, Sequence[KeyDoc]], titles: Mapping[str, str],
                  extra_rows: Mapping[str, Sequence[str]] = {}) -> str:
    """Markdown: one ``#### title`` table (key, type, default, meaning) per section, in order;
    ``extra_rows[section]`` are table lines appended to that section's table."""
    lines: list[str] = []
    for section, keys in sections.items():
        lines += [f"#### {titles[section]}", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for k in keys:
            default = "**required**" if k.required else (k.default or "")
            lines.append(f"| `{k.name}` | {k.type} | {default} | {k.doc} |")
        lines += list(extra_rows.get(section, ()))
        lines.append("")
    return "\n".join(lines)
