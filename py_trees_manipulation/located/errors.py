"""Load errors that name the file, line and column, and suggest the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Loc:
    """A place in a file: 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        if self.line <= 0:  # not in a file: a command-line override
            return self.file
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task file."""

    loc: Loc
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}" + (f"; {self.hint}" if self.hint else "")


class TreeLoadError(Exception):
    """A task file (or one it includes) is invalid. ``problems`` lists every problem found.

    ``str(error)`` is one ``FILE:LINE:COL: what is wrong; how to fix it`` line per problem.
    """

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(cls, loc: Loc, message: str, hint: str = "") -> "TreeLoadError":
        return cls([Problem(loc, message, hint)])


class ProblemCollector:
    """Collects the problems found in one file (a checker's base): :meth:`err` adds one at a place.

    Attributes:
        file: the file checked. problems: the :class:`Problem` s found, in order.
    """

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def err(self, loc: Loc, msg: str, hint: str = "") -> None:
        self.problems.append(Problem(loc, msg, hint))


def did_you_mean(word: str, options: list[str] | tuple[str, ...] | set[str], n: int = 1) -> str:
    """``"did you mean 'X'?"`` for the closest option, or ``""``."""
    import difflib

    close = difflib.get_close_matches(str(word), sorted(str(o) for o in options), n=n, cutoff=0.6)
    if not close:
        close = [o for o in sorted(str(o) for o in options) if o.lower() == str(word).lower()][:1]
    return f"did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def loc_or(loc: Optional[Loc], file: str) -> Loc:
    return loc if loc is not None else Loc(file, 1, 1)
