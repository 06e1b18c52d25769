"""What BehaviorTree.CPP XML import and export share (:mod:`.btxml` describes the mapping): the
BT.CPP vocabulary (built-ins without a py_trees equivalent, pre/post conditions, decorators under
another name, blackboard pointers), XML with locations (:class:`XmlElement`, :func:`parse_xml`,
:func:`read_xml`: expat, no DTD, no entities, size and depth limits), a scalar attribute's value
and a node type's declared parameters.

Moved out of :mod:`.btxml` (issue 37 item 6), which re-exports the public names.
"""

from __future__ import annotations

import json
import re
import xml.parsers.expat as expat
from dataclasses import dataclass, field
from typing import Any

from ..behaviors import registry
from ..behaviors.params import Param
from ..located import locyaml
from ..located.errors import Loc, TreeLoadError
from ..trees.nodes import COMPOSITES, DECORATORS

#: BT.CPP 4 built-ins (src/bt_factory.cpp) with no py_trees equivalent, with a hint
UNSUPPORTED: dict[str, str] = {
    "SequenceWithMemory": "py_trees has no sequence that resumes at the failed child; use Sequence (restarts after a FAILURE)",
    "AsyncSequence": "py_trees sequences do not yield RUNNING between children; use Sequence",
    "AsyncFallback": "py_trees selectors do not yield RUNNING between children; use Fallback",
    "ParallelAll": "use Parallel (success_count=-1: all must succeed, failure_count=1)",
    "IfThenElse": "write it as a Fallback of Sequence(condition, then) and the else branch, if that fits",
    "WhileDoElse": "no py_trees equivalent",
    "TryCatch": "no py_trees equivalent",
    "ManualSelector": "no py_trees equivalent",
    "Delay": "put a Wait before the child in a Sequence",
    "Precondition": "use a Fallback/Sequence with a condition behaviour",
    "LoopInt": "no py_trees equivalent (queues on the blackboard)", "LoopBool": "no py_trees equivalent",
    "LoopDouble": "no py_trees equivalent", "LoopString": "no py_trees equivalent",
    "SkipUnlessUpdated": "no py_trees equivalent (entry sequence numbers)",
    "WaitValueUpdate": "no py_trees equivalent (entry sequence numbers)",
    "Script": "scripting is not supported; use SetBlackboardVariable",
    "ScriptCondition": "scripting is not supported; use CheckBlackboardVariableValue",
    "UnsetBlackboard": "no equivalent behaviour", "WasEntryUpdated": "no py_trees equivalent",
    "TestNode": "use Success, Failure or Running (mock nodes are not supported)",
    **{f"Switch{i}": "no py_trees equivalent" for i in range(2, 7)},
}
PRE_POST_CONDITIONS = ("_skipIf", "_failureIf", "_successIf", "_while", "_onSuccess", "_onFailure", "_onHalted", "_post")
_IGNORED_ATTRS = ("_uid", "_fullpath", "_description")
_EXPLICIT = ("Action", "Condition", "Decorator", "Control")
#: our decorators that are BT.CPP built-ins under another name (export and import)
_DECORATOR_TO_BTCPP = {"Inverter": "Inverter", "FailureIsSuccess": "ForceSuccess",
                       "SuccessIsFailure": "ForceFailure", "SuccessIsRunning": "KeepRunningUntilFailure"}
_BTCPP_TO_DECORATOR = {v: k for k, v in _DECORATOR_TO_BTCPP.items()}
#: a BT.CPP blackboard pointer ``{key}`` / ``{@key}`` (root blackboard)
POINTER = re.compile(r"^\s*\{\s*(@?[A-Za-z_][A-Za-z0-9_/.\-]*)\s*\}\s*$")


# ------------------------------------------------------------------------------------------------
# XML with locations
@dataclass
class XmlElement:
    """An XML element with its 1-based line and column (attributes in document order)."""

    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list["XmlElement"] = field(default_factory=list)

    def loc(self, file: str) -> Loc:
        return Loc(file, self.line, self.col)


def parse_xml(text: str, file: str = "<string>") -> XmlElement:
    """Parse XML text into :class:`XmlElement` s with locations (expat; no DTD, no entities).

    Raises:
        TreeLoadError: malformed XML, a DOCTYPE/entity declaration, too large or too deep.
    """
    if len(text.encode("utf-8", "replace")) > locyaml.MAX_FILE_BYTES:
        raise TreeLoadError.single(Loc(file, 1, 1), f"file is larger than {locyaml.MAX_FILE_BYTES // 1000} kB")
    text, shifts = _escape_bare_ampersands(text)
    parser = expat.ParserCreate()
    parser.ordered_attributes = True
    stack: list[XmlElement] = []
    roots: list[XmlElement] = []

    def column(line: int, col0: int) -> int:
        """1-based column in the file as written (before bare '&' became '&amp;')."""
        return col0 + 1 - 4 * sum(1 for c in shifts.get(line, ()) if c < col0)

    class _Refused(Exception):
        pass

    def start(tag: str, attrs: list[str]) -> None:
        line = parser.CurrentLineNumber
        el = XmlElement(tag, dict(zip(attrs[::2], attrs[1::2])), line, column(line, parser.CurrentColumnNumber))
        if len(stack) >= locyaml.MAX_DEPTH:
            raise _Refused(f"elements nested deeper than {locyaml.MAX_DEPTH} levels")
        (stack[-1].children if stack else roots).append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    def refuse_dtd(*args: Any) -> None:
        raise _Refused("DOCTYPE and entity declarations are not allowed in tree files")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    try:
        parser.Parse(text, True)
    except expat.ExpatError as e:
        raise TreeLoadError.single(Loc(file, e.lineno, column(e.lineno, e.offset)),
                                   f"malformed XML: {expat.errors.messages[e.code]}") from None
    except _Refused as e:
        line = parser.CurrentLineNumber
        raise TreeLoadError.single(Loc(file, line, column(line, parser.CurrentColumnNumber)), str(e)) from None
    except RecursionError:  # pragma: no cover - depth is limited above
        raise TreeLoadError.single(Loc(file, 1, 1), "the XML is nested too deeply") from None
    if not roots:  # pragma: no cover - expat reports "no element found"
        raise TreeLoadError.single(Loc(file, 1, 1), "empty XML document")
    return roots[0]


#: an '&' that does not start one of XML's own references (the five entities, &#N;, &#xN;)
_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);)")


def _escape_bare_ampersands(text: str) -> tuple[str, dict[int, list[int]]]:
    """``text`` with every bare ``&`` written ``&amp;``, as BT.CPP's tinyxml2 reads them
    (``if="A && B"``, ``name="pick & place"``), and, per 1-based line, the 0-based columns (in the
    new text) where 4 characters were inserted, to report the file's own columns."""
    shifts: dict[int, list[int]] = {}
    out: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        cols: list[int] = []

        def rep(m: re.Match[str]) -> str:
            cols.append(m.start() + 4 * len(cols))
            return "&amp;"

        out.append(_BARE_AMP.sub(rep, line))
        if cols:
            shifts[n] = cols
    return "\n".join(out), shifts


def read_xml(path: str) -> XmlElement:
    """Read and parse an XML file (TreeLoadError for I/O and encoding problems too)."""
    return parse_xml(locyaml.read_text(path, what="an XML tree"), path)


def _scalar(text: str) -> Any:
    s = text.strip()
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    try:
        v = float(s)
        return v
    except ValueError:
        pass
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if s.startswith('"') and s.endswith('"') and len(s) >= 2:
        try:
            return json.loads(s)
        except ValueError:
            pass
    return text


def _declaration(kind: str) -> dict[str, Param]:
    if kind in COMPOSITES:
        return COMPOSITES[kind]
    if kind in DECORATORS:
        return DECORATORS[kind]
    cls = registry.behaviours().get(kind)
    return cls.all_params() if cls is not None else {}
