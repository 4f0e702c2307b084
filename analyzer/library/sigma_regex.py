"""A pattern's regex rewritten for log platforms: Sigma's regex subset, and Lucene's dialect.

The library's regexes use the `regex` module's syntax and are searched in one log message.
A Sigma rule may use only `.`, `^`, `$`, `* + ? {n,m}`, `[...]`, `[^...]`, `(...)` and `|`
(the Sigma specification's modifiers appendix), and the backends follow: RE2 (Loki) has no
lookarounds, Lucene (Elasticsearch, OpenSearch) no anchors, no `\\b`, no `(?:`, and it reads a
regex as matching the whole field. So a regex is parsed (with Python's own parser), rewritten
into an equivalent without those constructs, and written back:

- named and non-capturing groups become plain groups; lazy quantifiers greedy ones (a match
  exists or not either way); `\\d \\w \\s` become the ASCII classes they stand for;
  `(?i:...)` becomes `[aA]`-style classes;
- a lookaround or `\\b` where the regex begins or ends becomes the characters it asks for, or
  the line's start or end: `\\bfoo` is `(^|[^0-9A-Z_a-z])foo`, `foo(?! on )` is
  `foo($|[^ ]| ($|[^o]|o($|[^n]|n($|[^ ]))))`; inside the regex, one that the characters
  around it decide (`\\b` between a letter and a space) is kept or dropped, one that narrows a
  single character (`(?![\\w ])x` before a class) narrows that class;
- anything else (a lookaround of variable length, a backreference, an atomic group, a
  lookaround inside the regex over several characters) is not rewritten: `Unsupported` says
  why, and the pattern is listed as not exported.

Character classes are read as ASCII (`\\w` is `[0-9A-Z_a-z]`), as RE2 reads them; a message
is one line (`^` and `$` are its start and end).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typeshed names Python's regex parser by its old, deprecated module names
    import sre_constants as _c
    import sre_parse as _parser
else:
    from re import _constants as _c
    from re import _parser

MAX_CHAR = 0x10FFFF
_MAX_EXPANSIONS = 256  # alternatives a lookaround may spell out


class Unsupported(ValueError):
    """A construct without a rewrite that keeps the regex's meaning; the message says which."""


# ---- character sets: sorted, disjoint, non-adjacent inclusive ranges of code points ----

@dataclass(frozen=True, slots=True)
class Chars:
    ranges: tuple[tuple[int, int], ...]

    @staticmethod
    def of(ranges: Iterable[tuple[int, int]]) -> Chars:
        out: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if out and lo <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        return Chars(tuple(out))

    @staticmethod
    def chars(text: str) -> Chars:
        return Chars.of((ord(c), ord(c)) for c in text)

    def __or__(self, other: Chars) -> Chars:
        return Chars.of(self.ranges + other.ranges)

    def invert(self) -> Chars:
        out, nxt = [], 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= MAX_CHAR:
            out.append((nxt, MAX_CHAR))
        return Chars(tuple(out))

    def __and__(self, other: Chars) -> Chars:
        return (self.invert() | other.invert()).invert()

    def __sub__(self, other: Chars) -> Chars:
        return self & other.invert()

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def within(self, other: Chars) -> bool:
        return not (self - other)

    def single(self) -> int | None:
        return self.ranges[0][0] if len(self.ranges) == 1 and self.ranges[0][0] == self.ranges[0][1] else None

    def size(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    def folded(self) -> Chars:
        """With the other case of every ASCII letter it holds (what IGNORECASE adds)."""
        extra = [(ord(c.swapcase()), ord(c.swapcase())) for lo, hi in self.ranges
                 for n in range(max(lo, 65), min(hi, 122) + 1) if (c := chr(n)).isalpha()]
        return Chars.of(self.ranges + tuple(extra))


NOTHING = Chars(())
EVERYTHING = Chars(((0, MAX_CHAR),))
DIGIT = Chars.of([(48, 57)])
WORD = Chars.of([(48, 57), (65, 90), (95, 95), (97, 122)])
SPACE = Chars.of([(9, 13), (32, 32)])
NEWLINE = Chars.chars("\n")
DOT = NEWLINE.invert()


# ---- the regex as a tree ----

@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    branches: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Rep:
    item: Node
    lo: int
    hi: int | None


@dataclass(frozen=True, slots=True)
class Anchor:
    start: bool  # ^ (else $)


@dataclass(frozen=True, slots=True)
class Look:
    behind: bool
    negative: bool
    body: Node


@dataclass(frozen=True, slots=True)
class Boundary:
    negated: bool  # \B


Node = Chars | Seq | Alt | Rep | Anchor | Look | Boundary
EMPTY = Seq(())


def seq(items: Iterable[Node]) -> Node:
    flat: list[Node] = []
    for item in items:
        flat.extend(item.items if isinstance(item, Seq) else [item])
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(branches: Sequence[Node]) -> Node:
    return branches[0] if len(branches) == 1 else Alt(tuple(branches))


# ---- parsing: Python's parser, into the tree ----

_CATEGORIES = {
    _c.CATEGORY_DIGIT: DIGIT, _c.CATEGORY_NOT_DIGIT: DIGIT.invert(),
    _c.CATEGORY_WORD: WORD, _c.CATEGORY_NOT_WORD: WORD.invert(),
    _c.CATEGORY_SPACE: SPACE, _c.CATEGORY_NOT_SPACE: SPACE.invert(),
}


def parse(regex: str, ignorecase: bool = False) -> Node:
    """The regex as a tree; `ignorecase` folds case into the classes (Lucene has no flag)."""
    try:
        with warnings.catch_warnings():
            # a FutureWarning: Python's re reads it otherwise than the regex module (`[[:alpha:]]`)
            warnings.simplefilter("error", FutureWarning)
            tree = _parser.parse(_distinct_names(regex))
    except Exception as exc:  # re.error, a FutureWarning, or a limit of the parser
        raise Unsupported(f"Python's re cannot read it as the regex module does ({exc})") from None
    flags = tree.state.flags
    return _tree(tree, ignorecase or bool(flags & _c.SRE_FLAG_IGNORECASE), bool(flags & _c.SRE_FLAG_DOTALL))


_NAMED_GROUP = re.compile(r"(?<!\\)\(\?P<(\w+)>")


def _distinct_names(regex: str) -> str:
    """The regex with a group name that alternatives repeat (the regex module allows it,
    Python's re does not) made distinct; a rule's groups have no names anyway."""
    seen: Counter[str] = Counter()

    def rename(m: re.Match[str]) -> str:
        seen[m[1]] += 1
        return m[0] if seen[m[1]] == 1 else f"(?P<{m[1]}__{seen[m[1]]}>"

    return _NAMED_GROUP.sub(rename, regex)


def _tree(items: Any, icase: bool, dotall: bool) -> Node:
    return seq(_node(op, av, icase, dotall) for op, av in items)


def _node(op: Any, av: Any, icase: bool, dotall: bool) -> Node:
    def fold(c: Chars) -> Chars:
        return c.folded() if icase else c

    if op is _c.LITERAL:
        return fold(Chars.of([(av, av)]))
    if op is _c.NOT_LITERAL:
        return fold(Chars.of([(av, av)])).invert()
    if op is _c.ANY:
        return EVERYTHING if dotall else DOT
    if op is _c.IN:
        return _class(av, fold)
    if op is _c.BRANCH:
        return alt([_tree(b, icase, dotall) for b in av[1]])
    if op is _c.SUBPATTERN:
        _group, add, remove, body = av
        icase = (icase or bool(add & _c.SRE_FLAG_IGNORECASE)) and not remove & _c.SRE_FLAG_IGNORECASE
        dotall = (dotall or bool(add & _c.SRE_FLAG_DOTALL)) and not remove & _c.SRE_FLAG_DOTALL
        return _tree(body, icase, dotall)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
        lo, hi, body = av
        return Rep(_tree(body, icase, dotall), lo, None if hi == _c.MAXREPEAT else hi)
    if op is _c.AT:
        return _at(av)
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        direction, body = av
        return Look(direction < 0, op is _c.ASSERT_NOT, _tree(body, icase, dotall))
    names = {_c.GROUPREF: "a backreference", _c.GROUPREF_EXISTS: "a conditional group",
             _c.ATOMIC_GROUP: "an atomic group", _c.POSSESSIVE_REPEAT: "a possessive quantifier"}
    raise Unsupported(f"{names.get(op, str(op).lower())}: no regular-expression equivalent in Sigma")


def _class(items: Iterable[tuple[Any, Any]], fold: Callable[[Chars], Chars]) -> Chars:
    negate, out = False, NOTHING
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            out = out | Chars.of([(av, av)])
        elif op is _c.RANGE:
            out = out | Chars.of([av])
        elif op is _c.CATEGORY and av in _CATEGORIES:
            out = out | _CATEGORIES[av]
        else:
            raise Unsupported(f"the class item {str(av).lower()} has no Sigma equivalent")
    out = fold(out)
    return out.invert() if negate else out


def _at(where: Any) -> Node:
    if where in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
        return Anchor(True)
    if where in (_c.AT_END, _c.AT_END_STRING):
        return Anchor(False)
    if where in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY):
        return Boundary(where is _c.AT_NON_BOUNDARY)
    raise Unsupported(f"the position {str(where).lower()} has no Sigma equivalent")


# ---- what can come first and last ----

def zero_width(node: Node) -> bool:
    return isinstance(node, Anchor | Look | Boundary)


def first(node: Node) -> tuple[Chars, bool]:
    """The characters a match can start with, and whether it can be empty."""
    return _ends(node, last=False)


def last(node: Node) -> tuple[Chars, bool]:
    return _ends(node, last=True)


def _ends(node: Node, last: bool) -> tuple[Chars, bool]:
    if isinstance(node, Chars):
        return node, False
    if isinstance(node, Seq):
        out = NOTHING
        for item in reversed(node.items) if last else node.items:
            chars, empty = _ends(item, last)
            out = out | chars
            if not empty:
                return out, False
        return out, True
    if isinstance(node, Alt):
        ends = [_ends(b, last) for b in node.branches]
        return Chars.of(r for c, _e in ends for r in c.ranges), any(e for _c, e in ends)
    if isinstance(node, Rep):
        chars, empty = _ends(node.item, last)
        return chars, empty or node.lo == 0
    return NOTHING, True


@dataclass(frozen=True, slots=True)
class Side:
    """What lies on one side of a position: `open` when nothing of the regex does (the text
    there is free, and a rewrite may consume it); else the characters that can be there and
    whether the line's start or end can."""

    open: bool
    chars: Chars = NOTHING
    edge: bool = False

    @property
    def word(self) -> bool | None:
        """True: a word character is there for sure; False: surely not; None: either."""
        if self.open:
            return None
        if self.chars.within(WORD) and self.chars and not self.edge:
            return True
        if not (self.chars & WORD):
            return False
        return None


OPEN = Side(True)
ANYWHERE = Side(False, EVERYTHING, True)  # inside a repetition: the neighbours are not followed


def _side(items: Sequence[Node], outer: Side, forward: bool) -> Side:
    chars = NOTHING
    for item in items if forward else reversed(items):
        got, empty = first(item) if forward else last(item)
        chars = chars | got
        if not empty:
            return Side(False, chars)
    if outer.open:
        return OPEN if not chars else Side(False, EVERYTHING, True)
    return Side(False, chars | outer.chars, outer.edge)


# ---- lookarounds spelled out as strings of classes ----

def strings(node: Node) -> list[tuple[Chars, ...]] | None:
    """Every string of classes the node matches, when it matches strings of bounded length
    only and not too many of them; None otherwise."""
    if isinstance(node, Chars):
        return [(node,)]
    if isinstance(node, Seq):
        out: list[tuple[Chars, ...]] = [()]
        for item in node.items:
            part = strings(item)
            if part is None or len(out) * len(part) > _MAX_EXPANSIONS:
                return None
            out = [a + b for a in out for b in part]
        return out
    if isinstance(node, Alt):
        out = []
        for b in node.branches:
            part = strings(b)
            if part is None or len(out) + len(part) > _MAX_EXPANSIONS:
                return None
            out += part
        return out
    if isinstance(node, Rep) and node.hi is not None:
        return strings(alt([Seq((node.item,) * n) for n in range(node.lo, node.hi + 1)]))
    return None


def _atoms(sets: Sequence[Chars]) -> list[Chars]:
    """Disjoint classes, each inside or outside every one of `sets`, covering their union."""
    atoms: list[Chars] = []
    for s in sets:
        rest = s
        split: list[Chars] = []
        for a in atoms:
            split += [x for x in (a & s, a - s) if x]
            rest = rest - a
        atoms = split + ([rest] if rest else [])
    return atoms


def not_followed(words: Sequence[tuple[Chars, ...]]) -> Node | None:
    """What may follow a position that none of `words` follows: the line's end, a character
    no word starts with, or a word's first character and what may follow that. None: nothing
    may (a word is empty)."""
    return _not_next(words, ahead=True)


def not_preceded(words: Sequence[tuple[Chars, ...]]) -> Node | None:
    return _not_next(words, ahead=False)


def _not_next(words: Sequence[tuple[Chars, ...]], ahead: bool) -> Node | None:
    if any(not w for w in words):
        return None
    ends = [w[0] if ahead else w[-1] for w in words]
    branches: list[Node] = [Anchor(not ahead)]
    others = Chars.of(r for e in ends for r in e.ranges).invert()
    if others:
        branches.append(others)
    for atom in _atoms(ends):
        tails = [w[1:] if ahead else w[:-1] for w, e in zip(words, ends, strict=True) if atom.within(e)]
        rest = _not_next(tails, ahead)
        if rest is not None:
            branches.append(seq([atom, rest] if ahead else [rest, atom]))
    return alt(branches)


# ---- rewriting: no lookaround, no \b ----

def rewrite(node: Node) -> Node:
    """The same regex without lookarounds or `\\b` (see the module's docstring); raises
    Unsupported."""
    out = _rewrite(node, OPEN, OPEN)
    if out is None:
        raise Unsupported("it can never match (its assertions contradict each other)")
    return out


def _rewrite(node: Node, before: Side, after: Side) -> Node | None:
    if isinstance(node, Alt):
        branches = [b for b in (_rewrite(b, before, after) for b in node.branches) if b is not None]
        return alt(branches) if branches else None
    if isinstance(node, Rep):
        item = _rewrite(node.item, ANYWHERE, ANYWHERE)
        if item is None:
            return EMPTY if node.lo == 0 else None
        return Rep(item, node.lo, node.hi)
    if isinstance(node, Seq):
        return _sequence(list(node.items), before, after)
    if zero_width(node):
        return _sequence([node], before, after)
    return node


def _optional(node: Node) -> bool:
    return isinstance(node, Rep) and node.lo == 0


def _sequence(items: list[Node], before: Side, after: Side) -> Node | None:
    # an optional part at a free edge changes no line's verdict: `foo(?: bar)?` finds what
    # `foo` finds
    while before.open and items and _optional(items[0]):
        items = items[1:]
    while after.open and items and _optional(items[-1]):
        items = items[:-1]
    lead = list(itertools.takewhile(zero_width, items)) if before.open else []
    items = items[len(lead):]
    trail = list(itertools.takewhile(zero_width, reversed(items)))[::-1] if after.open else []
    items = items[:len(items) - len(trail)]
    if lead and not items:  # nothing but assertions, with both sides free
        if all(isinstance(z, Anchor) for z in lead):
            return seq(lead)
        raise Unsupported("an expression made of assertions only")
    body = _middle(items, _beyond(lead, before, start=True), _beyond(trail, after, start=False))
    if body is None:
        return None
    head = _edge(lead, _side(items + trail, after, forward=True), ahead=False) if lead else EMPTY
    tail = _edge(trail, _side(lead + items, before, forward=False), ahead=True) if trail else EMPTY
    if head is None or tail is None:
        return None
    return seq([head, *body, tail])


def _beyond(zero: list[Node], outer: Side, start: bool) -> Side:
    """The side of the expression's body where assertions stood: the line's edge after an
    anchor, else any character (what they are rewritten into is not followed further)."""
    if not zero:
        return outer
    if any(isinstance(z, Anchor) and z.start == start for z in zero):
        return Side(False, NOTHING, True)
    return Side(False, EVERYTHING, True)


def _middle(items: list[Node], before: Side, after: Side) -> list[Node] | None:
    out = list(items)
    i = 0
    while i < len(out):
        item = out[i]
        prev, nxt = _side(out[:i], before, False), _side(out[i + 1:], after, True)
        if isinstance(item, Boundary):
            keep = _boundary(item, prev, nxt)
            if keep is False:
                return None
            del out[i]
            continue
        if isinstance(item, Look):
            changed = _narrow(out, i, prev, nxt)
            if changed is None:
                return None
            out = changed
            continue
        if not isinstance(item, Chars | Anchor):
            done = _rewrite(item, prev, nxt)
            if done is None:
                return None
            out[i] = done
        i += 1
    return out


def _boundary(b: Boundary, prev: Side, nxt: Side) -> bool:
    """Whether `\\b` (or `\\B`) holds between these sides, when they decide it."""
    before, after = prev.word, nxt.word
    if before is None or after is None:
        raise Unsupported(r"a \b inside the expression between parts that may be word or non-word "
                          "characters")
    return (before != after) != b.negated


def _narrow(items: list[Node], i: int, prev: Side, nxt: Side) -> list[Node] | None:
    """A lookaround inside the expression over one character: decided by its neighbours, or
    folded into the class next to it."""
    look = items[i]
    assert isinstance(look, Look)
    words = strings(look.body)
    if words is None or any(len(w) != 1 for w in words):
        raise Unsupported("a lookaround inside the expression over more than one character")
    wanted = Chars.of(r for w in words for r in w[0].ranges)
    side = prev if look.behind else nxt
    if not side.open and not side.edge and (side.chars.within(wanted) or not (side.chars & wanted)):
        holds = side.chars.within(wanted) != look.negative
        return items[:i] + items[i + 1:] if holds else None
    j = i - 1 if look.behind else i + 1
    while 0 <= j < len(items) and zero_width(items[j]):
        j += -1 if look.behind else 1
    if not 0 <= j < len(items):
        raise Unsupported("a lookaround inside the expression whose neighbour is outside its group")
    target = items[j]

    def keep(c: Chars) -> Chars:
        return c - wanted if look.negative else c & wanted

    if isinstance(target, Chars):
        narrowed: list[Node] = [keep(target)]
    elif isinstance(target, Rep) and isinstance(target.item, Chars) and target.lo >= 1:
        rest = Rep(target.item, target.lo - 1, None if target.hi is None else target.hi - 1)
        narrowed = [rest, keep(target.item)] if look.behind else [keep(target.item), rest]
    else:
        raise Unsupported("a lookaround inside the expression next to more than one character")
    if not narrowed[0 if not look.behind else -1]:
        return None
    out = list(items)
    out[j:j + 1] = narrowed
    del out[i if i < j else i + len(narrowed) - 1]
    return out


def _edge(zero: list[Node], inner: Side, ahead: bool) -> Node | None:
    """The assertions at the start (`ahead` False) or end of the expression, where the text
    beyond is free: what they ask of it, spelled out. `inner` is the side of the match."""
    looks = [z for z in zero if isinstance(z, Look)]
    if len(zero) == 1 and looks and not looks[0].negative and looks[0].behind != ahead:
        # what a single positive lookaround asks for is matched as it is: the text is free there
        return _rewrite(looks[0].body, OPEN if not ahead else inner, inner if not ahead else OPEN)
    run = _run_look(zero, ahead)
    if run is not None:
        zero = [z for z in zero if z is not run[0]]
    banned, wanted = _asks(zero, inner, ahead)
    if run is not None:
        if wanted or any(isinstance(z, Anchor) for z in zero):
            raise Unsupported("a lookaround of variable or unbounded length")
        return _not_after_run(banned, run[1], run[2], ahead)
    if any(isinstance(z, Anchor) for z in zero):  # beyond is nothing: negative assertions hold
        return None if wanted else Anchor(not ahead)
    if not wanted:
        return (not_followed if ahead else not_preceded)(banned) if banned else EMPTY
    if len(wanted) == 1 and not banned:
        return alt([Seq(w) for w in wanted[0]])
    if all(len(w) == 1 for w in [w for ws in wanted for w in ws] + banned):
        chars = EVERYTHING
        for ws in wanted:
            chars = chars & Chars.of(r for w in ws for r in w[0].ranges)
        chars = chars - Chars.of(r for w in banned for r in w[0].ranges)
        return chars or None
    raise Unsupported("positive and negative lookarounds over several characters at one edge")


def _run_look(zero: list[Node], ahead: bool) -> tuple[Look, Chars, list[tuple[Chars, ...]]] | None:
    """A negative lookaround at the edge that bans a run of one class followed by strings
    none of which starts with that class (`(?!\\s*=)`): the run, and those strings."""
    for z in zero:
        if not (isinstance(z, Look) and z.negative and z.behind != ahead):
            continue
        items = list(z.body.items) if isinstance(z.body, Seq) else [z.body]
        near = items[0] if ahead else items[-1]
        if not (isinstance(near, Rep) and isinstance(near.item, Chars) and near.lo == 0 and near.hi is None):
            continue
        words = strings(seq(items[1:] if ahead else items[:-1]))
        if not words or any(not w for w in words):
            continue
        if any(w[0 if ahead else -1] & near.item for w in words):
            continue
        return z, near.item, words
    return None


def _not_after_run(banned: list[tuple[Chars, ...]], run: Chars, words: list[tuple[Chars, ...]],
                   ahead: bool) -> Node:
    """What may stand beyond the edge when none of `banned` does and the longest run of `run`
    there is not followed (`ahead`) or preceded by one of `words`. A character of the run
    cannot start a banned string (else Unsupported): then the text beyond is either no run
    at all, or a run as long as it goes and then none of `words`."""
    if any(w[0 if ahead else -1] & run for w in banned):
        raise Unsupported("a lookaround of variable or unbounded length")
    stop: list[tuple[Chars, ...]] = [(run,)]
    direct = _not_next(banned + words + stop, ahead)
    after = _not_next(words + stop, ahead)
    assert direct is not None and after is not None  # every string is non-empty
    runs = [run, Rep(run, 0, None), after] if ahead else [after, Rep(run, 0, None), run]
    return alt([direct, seq(runs)])


def _asks(zero: list[Node], inner: Side, ahead: bool) -> tuple[list[tuple[Chars, ...]],
                                                               list[list[tuple[Chars, ...]]]]:
    """The strings that may not stand beyond the edge, and the sets of strings of which one
    must (each assertion one set)."""
    banned: list[tuple[Chars, ...]] = []
    wanted: list[list[tuple[Chars, ...]]] = []
    for z in zero:
        if isinstance(z, Anchor):
            if z.start == ahead:
                raise Unsupported(f"{'^' if z.start else '$'} on the wrong side of the expression")
        elif isinstance(z, Boundary):
            inside = inner.word
            if inside is None:
                raise Unsupported(r"a \b next to a part that may be a word or a non-word character")
            # \b: beyond is of the other kind than inside (a non-word character or none after a
            # word one); \B: of the same kind
            if inside != z.negated:
                banned.append((WORD,))
            else:
                wanted.append([(WORD,)])
        elif isinstance(z, Look):
            if z.behind == ahead:
                raise Unsupported("a lookaround that looks back into the match at its edge")
            words = strings(z.body)
            if words is None:
                raise Unsupported("a lookaround of variable or unbounded length")
            if z.negative:
                banned += words
            else:
                wanted.append(words)
    return banned, wanted


# ---- writing the tree back ----

_ALT, _SEQ, _ATOM = 0, 1, 2
_SIGMA_META = set("\\.^$*+?()[]{}|")
_SIGMA_CLASS_META = set("\\]^-[")
_CONTROL_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\v": "\\v"}
_LUCENE_RESERVED = set('.?+*|{}[]()"\\#@&<>~')


def _quant(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


@dataclass(frozen=True, slots=True)
class _Dialect:
    lucene: bool

    def char(self, n: int, in_class: bool) -> str:
        c = chr(n)
        if self.lucene:  # Lucene: a backslash before any non-alphanumeric; controls as they are
            return "\\" + c if c in _LUCENE_RESERVED or (in_class and c in "-^") else c
        if c in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[c]
        if n < 0x20 or n == 0x7F:
            return f"\\x{n:02x}"
        return "\\" + c if c in (_SIGMA_CLASS_META if in_class else _SIGMA_META) else c

    def chars(self, cs: Chars) -> str:
        if (n := cs.single()) is not None:
            return self.char(n, in_class=False)
        if cs == EVERYTHING:
            return "." if self.lucene else "(.|\\n)"
        if cs == DOT and not self.lucene:
            return "."
        inverse = cs.invert()
        negate = len(inverse.ranges) < len(cs.ranges)
        body = "".join(self._range(lo, hi) for lo, hi in (inverse if negate else cs).ranges)
        return f"[^{body}]" if negate else f"[{body}]"

    def _range(self, lo: int, hi: int) -> str:
        if lo == hi:
            return self.char(lo, in_class=True)
        sep = "" if hi == lo + 1 else "-"
        return self.char(lo, in_class=True) + sep + self.char(hi, in_class=True)

    def write(self, node: Node, level: int = _ALT) -> str:
        if isinstance(node, Chars):
            return self.chars(node)
        if isinstance(node, Anchor):
            if self.lucene:
                raise Unsupported(f"{'^' if node.start else '$'} inside the expression: Lucene has no anchors")
            return "^" if node.start else "$"
        if isinstance(node, Seq):
            if not node.items:
                return "()" if self.lucene or level >= _ATOM else ""
            text = "".join(self.write(i, _SEQ) for i in node.items)
            return f"({text})" if level >= _ATOM and len(node.items) > 1 else text
        if isinstance(node, Alt):
            text = "|".join(self.write(b, _ALT) for b in node.branches)
            return f"({text})" if level >= _SEQ else text
        if isinstance(node, Rep):
            return self.write(node.item, _ATOM) + _quant(node.lo, node.hi)
        raise Unsupported("a lookaround or \\b left after rewriting")  # rewrite() removes them


SIGMA = _Dialect(lucene=False)
LUCENE = _Dialect(lucene=True)
ANYTHING = Rep(EVERYTHING, 0, None)


def whole_field(node: Node) -> Node:
    """The regex as Lucene reads it, matching a whole field: `.*` where the original was not
    anchored, the anchors dropped where it was."""
    return _pad(_pad(node, start=True), start=False)


def _pad(node: Node, start: bool) -> Node:
    if isinstance(node, Anchor) and node.start == start:
        return EMPTY
    if isinstance(node, Alt):
        return Alt(tuple(_pad(b, start) for b in node.branches))
    if isinstance(node, Seq) and node.items:
        edge = node.items[0] if start else node.items[-1]
        rest = list(node.items[1:] if start else node.items[:-1])
        if isinstance(edge, Anchor) and edge.start == start:
            return seq(rest) if rest else EMPTY
        if isinstance(edge, Alt):
            padded = _pad(edge, start)
            return seq([padded, *rest] if start else [*rest, padded])
    return seq([ANYTHING, node] if start else [node, ANYTHING])


def to_sigma(regex: str) -> str:
    """The regex in Sigma's subset, searched in the message like the original; raises
    Unsupported."""
    return SIGMA.write(rewrite(parse(regex)))


def to_lucene(regex: str, ignorecase: bool = False) -> str:
    """The regex in Lucene's dialect, matching the whole message; raises Unsupported."""
    return LUCENE.write(whole_field(rewrite(parse(regex, ignorecase))))
