"""What every rule family shares: the attributes the rules write into the source or set on elements
(how one rule tells the next, and resiliparse, what to skip or to keep), the bounds that tell prose
from labels, and how an element's text and children are read.

Reading the tree: a resiliparse collection indexed (``c[i]``) or iterated costs a walk of the tree
per element (listing 2,700 elements takes seconds) while ``c.item(i)`` and ``c.values()`` cost
microseconds, and every node object costs microseconds; so children are walked one sibling at a time
(`_children`) and no rule lists a large collection.
"""

from __future__ import annotations

import re
from typing import Any

SKIP_ATTR = "data-selene-skip"  # marks an element resiliparse skips
# marks an element a skip rule must not remove (see "Protection" in the package doc)
KEEP_ATTR = "data-selene-keep"
NAME_ATTR = "data-selene-n"  # marks, in the source, an element whose class or id names boilerplate
HIDE_ATTR = "data-selene-h"  # marks, in the source, an element hidden or given a role that is not content
ASIDE_ATTR = "data-selene-aside"  # an <aside>, renamed a <section> so that resiliparse does not drop it
# marks, in the source, an element that may be the page's content by its markup
CONTENT_ATTR = "data-selene-c"

# a marker written into the source where an attribute pattern matched text, not a tag (a code sample
# or prose that shows `class="comments"`): the parser reads it as text, so it is taken out again
_MARK_TEXT = re.compile(f" (?:{NAME_ATTR}|{HIDE_ATTR}|{CONTENT_ATTR}|{ASIDE_ATTR})\\b")
_TAG = re.compile(r"<[^>]*>")
CODE = "\ue000"  # marks a code block between _blocks and _clean_lines (a private-use character)

PROSE_CHARS = 120  # a paragraph of at least this much text is prose, not a label or a teaser
LONE_PROSE_CHARS = 1000  # a single paragraph this long is a content root on its own (text in <br> lines)


def _text_len(el: Any) -> int:
    return len(" ".join((el.text or "").split()))  # a frameset "body" has no text at all


def _children(el: Any) -> list[Any]:
    """Element children, walked one sibling at a time (indexing resiliparse's collections costs a
    walk of the tree per item)."""
    out = []
    c = el.first_element_child
    while c is not None:
        out.append(c)
        c = c.next_element_sibling
    return out
