"""YAML loading that remembers where every key and item came from (safe_load semantics).

:func:`load` returns plain dict/list subclasses (:class:`LocDict`, :class:`LocList`) that carry
the file and the 1-based line/column of each key and item. Only PyYAML's SafeLoader constructors
run: a file cannot import or execute anything. Duplicate keys are errors (PyYAML silently keeps
the last one). Numbers with an exponent are numbers as in YAML 1.2 (``1e308``, ``1.0e300``,
``.5E-3``: YAML 1.1, PyYAML's, needs a dot and a signed exponent and reads these as text).

Every source of YAML passes through :func:`loads` and its limits (:data:`MAX_FILE_BYTES`,
:data:`MAX_DEPTH`, :data:`MAX_EXPANDED_VALUES`): task, scene, robot and scenario files, and the
values written on the command line (``--set KEY=VALUE``, ``ptm sweep --grid``/``--random``), which
:func:`value` parses; a scenario variant's values are part of its file.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any, Optional

import yaml
from yaml.nodes import MappingNode, SequenceNode

from .errors import Loc, TreeLoadError

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 64
#: values a document may hold once its aliases are expanded (guards the loader's walks)
MAX_EXPANDED_VALUES = 200_000
#: libyaml's parser with PyYAML's safe constructors (None: PyYAML was built without libyaml)
_C_LOADER: Optional[type] = getattr(yaml, "CSafeLoader", None)
#: YAML 1.2 core schema numbers with an exponent (PyYAML already reads the others)
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$")


class LocDict(dict):
    """A dict with ``loc`` (where the mapping starts) and ``key_locs`` / ``value_locs`` per key."""

    loc: Loc
    key_locs: dict[Any, Loc]
    value_locs: dict[Any, Loc]

    def key_loc(self, key: Any) -> Loc:
        return self.key_locs.get(key, self.loc)

    def value_loc(self, key: Any) -> Loc:
        return self.value_locs.get(key, self.key_loc(key))


class LocList(list):
    """A list with ``loc`` and ``item_locs``."""

    loc: Loc
    item_locs: list[Loc]

    def item_loc(self, i: int) -> Loc:
        return self.item_locs[i] if 0 <= i < len(self.item_locs) else self.loc


def to_plain(value: Any) -> Any:
    """``value`` with every :class:`LocDict` / :class:`LocList` (any dict / list) copied to a plain
    ``dict`` / ``list``, recursively (keys, tuples and scalars unchanged): for consumers that must
    not see the location attributes (the blackboard, JSON Schema validation)."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value


def _loc(file: str, node: Any) -> Loc:
    m = node.start_mark
    return Loc(file, m.line + 1, m.column + 1)


def _make_loader(file: str, base: type = yaml.SafeLoader) -> type:
    class _Loader(base):  # type: ignore[valid-type,misc]
        pass

    def construct_mapping(loader: Any, node: MappingNode, deep: bool = False) -> LocDict:
        loader.flatten_mapping(node)
        out = LocDict()
        out.loc = _loc(file, node)
        out.key_locs = {}
        out.value_locs = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise TreeLoadError.single(_loc(file, key_node), "a mapping key must be a plain value") from None
            if key in out:
                first = out.key_locs[key]
                raise TreeLoadError.single(_loc(file, key_node), f"duplicate key {key!r} (first at line {first.line})",
                                           "remove one of them")
            out[key] = loader.construct_object(value_node, deep=True)
            out.key_locs[key] = _loc(file, key_node)
            out.value_locs[key] = _loc(file, value_node)
        return out

    def construct_sequence(loader: Any, node: SequenceNode, deep: bool = False) -> LocList:
        out = LocList(loader.construct_object(child, deep=True) for child in node.value)
        out.loc = _loc(file, node)
        out.item_locs = [_loc(file, child) for child in node.value]
        return out

    # YAML 1.2 reads 1e308 and 1.0e300 as numbers; YAML 1.1 (PyYAML) needs a dot and a signed exponent
    _Loader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+.0123456789"))
    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    return _Loader


def loads(text: str, file: str = "<string>") -> Any:
    """Parse YAML text with locations.

    Raises:
        TreeLoadError: malformed YAML (with the parser's line and column), an unsafe tag,
            a duplicate key, or a file too large or too deeply nested.
    """
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise TreeLoadError.single(Loc(file, 1, 1), f"file is larger than {MAX_FILE_BYTES // 1000} kB",
                                   "split it with include:")
    if _C_LOADER is not None:
        # libyaml's parser, 6x faster than PyYAML's (a task file in 0.5 ms instead of 3 ms); the same
        # resolvers and constructors, the same data and locations (tests/unit/test_locyaml.py). Any
        # problem is parsed again by PyYAML's own parser below, whose messages the hints know.
        try:
            fast = _make_loader(file, _C_LOADER)(text)
            try:
                data = fast.get_single_data()
            finally:
                fast.dispose()
        except yaml.MarkedYAMLError as e:
            # libyaml stops at 1000 open brackets; PyYAML's own parser would take seconds (quadratic
            # in the depth) to reach a RecursionError on the same text
            if "maximum nesting depth" in str(e.problem):
                mark = e.problem_mark
                loc = Loc(file, mark.line + 1, mark.column + 1) if mark else Loc(file, 1, 1)
                raise TreeLoadError.single(loc, "the YAML is nested too deeply") from None
        except Exception:
            pass
        else:
            check_limits(data, Loc(file, 1, 1))
            return data
    try:
        loader = _make_loader(file)(text)  # the reader checks the characters here
    except yaml.reader.ReaderError as e:
        before = text[:max(e.position, 0)]
        loc = Loc(file, before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1)
        raise TreeLoadError.single(loc, f"character #x{e.character:04x} is not allowed in YAML",
                                   "remove control characters from the file") from None
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        loc = Loc(file, mark.line + 1, mark.column + 1) if mark else Loc(file, 1, 1)
        msg = f"malformed YAML: {e.problem or e.context}"
        hint = ""
        if e.problem and "could not determine a constructor" in e.problem:
            msg = f"unsupported YAML tag: {e.problem.split('tag ')[-1]}"
            hint = "tags such as !!python/... are not allowed in task files"
        elif "mapping values are not allowed" in str(e.problem):
            hint = "check the indentation and that 'key: value' has a space after the colon"
        elif "expected <block end>" in str(e.problem):
            hint = ("this line is not indented like the lines above it: items of one list or mapping must "
                    "start in the same column")
        elif "found character '\\t'" in str(e.problem):
            hint = "indent with spaces, not tabs"
        raise TreeLoadError.single(loc, msg, hint) from None
    except yaml.YAMLError as e:
        raise TreeLoadError.single(Loc(file, 1, 1), f"malformed YAML: {e}") from None
    except RecursionError:
        raise TreeLoadError.single(Loc(file, 1, 1), "the YAML is nested too deeply") from None
    finally:
        loader.dispose()
    check_limits(data, Loc(file, 1, 1))
    return data


def check_limits(data: Any, loc: Loc) -> None:
    """Refuse parsed YAML nested deeper than :data:`MAX_DEPTH` or holding more than
    :data:`MAX_EXPANDED_VALUES` values once its aliases are expanded (linear in its distinct nodes).
    :func:`loads` checks every document; the loader checks a task again once the ``--set`` values
    are in it.

    Raises:
        TreeLoadError: at ``loc``.
    """
    size, height = _measure(data, {}, set())
    if height > MAX_DEPTH:
        raise TreeLoadError.single(loc, f"the YAML is nested deeper than {MAX_DEPTH} levels")
    if size > MAX_EXPANDED_VALUES:
        raise TreeLoadError.single(loc, f"the YAML expands to more than {MAX_EXPANDED_VALUES} values",
                                   "anchors and aliases (&a / *a) that repeat each other multiply; write the values out")


def value(text: str, source: str) -> Any:
    """A value written outside a file (``--set KEY=VALUE``, a sweep's ``--grid`` value), parsed as
    YAML under the same rules and limits as a file (:func:`loads`): plain dicts and lists, ``""``
    for empty text.

    Args:
        text: the YAML text of the value.
        source: what names it in errors (``"--set scene.seed=..."``).

    Raises:
        ValueError: malformed YAML, an unsafe tag, more than :data:`MAX_EXPANDED_VALUES` values once
            aliases are expanded, deeper than :data:`MAX_DEPTH`, larger than :data:`MAX_FILE_BYTES`;
            the message says what and how to fix it, without a location (the caller names the source).
    """
    if not text.strip():
        return ""
    try:
        return to_plain(loads(text, source))
    except TreeLoadError as e:
        p = e.problems[0]
        where = "" if p.loc.line <= 1 and p.loc.col <= 1 else f" (column {p.loc.col})" if p.loc.line == 1 else \
            f" (line {p.loc.line}, column {p.loc.col})"
        message = p.message.replace("the YAML", "the value").replace("file is larger", "the value is larger")
        hint = "" if "larger than" in message else p.hint
        raise ValueError(message + where + (f"; {hint}" if hint else "")) from None


def unreadable_file(path: str) -> str:
    """Why the existing ``path`` cannot be a YAML file of ours, or ``""``: a directory, not a regular
    file (a device such as ``/dev/zero``, a pipe: reading it could take forever), larger than
    :data:`MAX_FILE_BYTES`, or not readable. For a file named inside another (``include:``,
    ``task:``), so that the problem is reported where it is named."""
    try:
        st = os.stat(path)
    except OSError as e:
        return f"cannot be read: {e.strerror}"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a device, a pipe or a socket)"
    if st.st_size > MAX_FILE_BYTES:
        return f"is larger than {MAX_FILE_BYTES // 1000} kB"
    if not os.access(path, os.R_OK):
        return "cannot be read: permission denied"
    return ""


def read_text(path: str, name: Optional[str] = None, what: str = "a task file") -> str:
    """The UTF-8 text of a task file (YAML or XML), at most :data:`MAX_FILE_BYTES` + 1 bytes read
    (the parser refuses more). Raises TreeLoadError at ``name`` (default ``path``), line 1, for I/O
    and encoding problems (``what``: what the file should be, for a directory)."""
    name = name or path
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise TreeLoadError.single(Loc(name, 1, 1), "file not found") from None
    except IsADirectoryError:
        raise TreeLoadError.single(Loc(name, 1, 1), f"is a directory, not {what}") from None
    except OSError as e:
        raise TreeLoadError.single(Loc(name, 1, 1), f"cannot read: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TreeLoadError.single(Loc(name, 1, 1), f"not UTF-8 text (byte {e.start})") from None


def load(path: str, display_name: Optional[str] = None) -> Any:
    """Read and parse a YAML file with locations. Raises TreeLoadError (also for I/O errors)."""
    name = display_name or path
    return loads(read_text(path, name), name)


def _measure(x: Any, memo: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """(values counted with every alias expanded, nesting height) of parsed YAML.

    Linear in the number of distinct nodes (memoised by identity), so alias bombs
    (``&a [x, x]``, ``&b [*a, *a]``...) are measured without being walked exponentially; a
    self-referencing alias (``&a [*a]``) counts as infinitely deep.
    """
    if not isinstance(x, (dict, list)):
        return 1, 0
    k = id(x)
    if k in memo:
        return memo[k]
    if k in active or len(active) > MAX_DEPTH:
        return MAX_EXPANDED_VALUES + 1, MAX_DEPTH + 1
    active.add(k)
    size, height = 1, 1
    for child in (x.values() if isinstance(x, dict) else x):
        s, h = _measure(child, memo, active)
        size, height = size + s, max(height, h + 1)
        if size > MAX_EXPANDED_VALUES or height > MAX_DEPTH:
            break
    active.discard(k)
    memo[k] = (size, height)
    return size, height


def loc_of(root: Any, path: tuple[Any, ...], fallback: Loc) -> Loc:
    """Location of the value at ``path`` (keys and indices) inside ``root``; the deepest known."""
    loc = getattr(root, "loc", fallback)
    node = root
    for i, step in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, LocDict):
            if step not in node:
                return node.loc
            loc = node.key_loc(step) if last else node.value_loc(step)
            node = node[step]
        elif isinstance(node, LocList) and isinstance(step, int):
            if not 0 <= step < len(node):
                return node.loc
            loc = node.item_loc(step)
            node = node[step]
        else:
            break
    return loc
