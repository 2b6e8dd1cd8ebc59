"""Rule 3, repeated user posts: a container of three or more sibling blocks of the same shape that carry
the marks of user posts (a ``<time>``, or Reply / Like / Report / Quote controls) holds reader
comments, and is skipped. Kept when they are answers (named so, or mostly several paragraphs or
code), and, by the pipeline, when removing them leaves less than `ARTICLE_CHARS` (a forum thread).

The containers are found from a sample of the page's ``<time>`` elements, walking up from each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from selene.ingest.extract.dom import _children
from selene.ingest.extract.names import _words

_POST_CONTROLS = re.compile(
    r"^\s*(reply|like|likes|report|quote|flag|upvote|downvote|permalink|share)\s*$", re.I
)
SAMPLE_TIMES = 8  # <time> elements looked at for user posts, from the start and the end of the page
MAX_POST_SIBLINGS = 160  # a container of more children is not looked at as a run of user posts
ARTICLE_CHARS = 400  # text left after removing a run of user posts, below which they were the content


def _post_like(el: Any) -> bool:
    if el.query_selector("time") is not None:
        return True
    for sel in ("a", "button", "span"):
        c = el.query_selector(sel)
        if c is not None and len(c.text or "") < 12 and _POST_CONTROLS.match(c.text or ""):
            return True
    return False


def _user_post_containers(body: Any) -> list[Any]:
    """Containers of >= 3 same-shaped sibling blocks that look like user posts (a <time>, or Reply /
    Like controls): comment sections, or a forum thread's posts."""
    times = body.query_selector_all("time")
    n = len(times)
    if n < 3 or n > 1000:
        return []
    # a sample of the <time>s, first and last
    sample = sorted(set(range(min(n, SAMPLE_TIMES))) | set(range(max(0, n - SAMPLE_TIMES // 2), n)))
    found: list[Any] = []
    looked: set[Any] = set()  # parents already judged (wrappers of one node are one object)
    for t in (times.item(i) for i in sample):
        node, depth = t.parent, 0
        while node is not None and node.type == 1 and node.tag not in ("body", "html") and depth < 8:
            parent = node.parent
            if parent is None or parent.type != 1 or parent in looked:
                break
            if parent.child_element_count > MAX_POST_SIBLINGS:
                break
            shape = (node.tag, node.class_name)
            same = [c for c in _children(parent) if (c.tag, c.class_name) == shape]
            if len(same) >= 3:
                looked.add(parent)
                if _at_least(same, _post_like, 3) and not _answers(parent, same):
                    found.append(parent)
                break
            node, depth = parent, depth + 1
    return found


_ANSWER_WORDS = {"answer", "answers", "question", "solution", "accepted"}


def _answers(container: Any, posts: list[Any]) -> bool:
    """Posts that are content, not comments: answers on a Q&A page (named so), or posts that are
    mostly rich (several paragraphs or a code block), which comments seldom are."""
    names = f"{container.class_name or ''} {container.id or ''} {posts[0].class_name or ''}"
    if not _ANSWER_WORDS.isdisjoint(_words(names)):
        return True
    return _at_least(posts, _rich, (len(posts) + 1) // 2)


def _rich(post: Any) -> bool:
    return post.query_selector("pre") is not None or len(post.query_selector_all("p")) >= 2


def _at_least(items: list[Any], holds: Callable[[Any], bool], n: int) -> bool:
    """Whether `holds` is true of at least `n` of `items`, judged no further than the answer needs
    (each judgement looks elements up in the tree)."""
    left = len(items)
    for item in items:
        if n <= 0 or n > left:
            break
        left -= 1
        n -= holds(item)
    return n <= 0
