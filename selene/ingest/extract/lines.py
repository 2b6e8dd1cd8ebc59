"""Rule 6, lines, outside code blocks: controls and labels ("Share", "Advertisement", "Read more: ...",
the common German, French and Spanish ones), bylines, datelines and reading times, copyright and
view counts, calls to action in short blocks (newsletter, paywall, consent, affiliate text), post
and profile metadata ("Posts: 303", "11mo ago", breadcrumbs), shop widgets (prices, ratings, stock
lines), captions with a picture's credit, reference markers ("[1]", "[edit]"), and repeats of short
label-like lines (gallery captions).

The patterns are matched on lower-cased lines (faster than case-insensitive matching), and the
costly ones only on lines that have a word they need.
"""

from __future__ import annotations

import re

from selene.ingest.extract.dom import CODE

# lines that are controls or labels, not text (whole line, case-insensitive)
_BOILER_LINE = re.compile(
    r"^(?:"
    r"share(?: this| on \w+| via \w+)?|tweet|email|e-mail|print|copy link|pin it|whatsapp|facebook|twitter|linkedin|"
    r"advertisement(?: [-–—] .{0,40})?|sponsored(?: content| links| ads)?|ad|loading\.{0,3}|rss(?: feed)?|"
    r"text size.{0,80}|pages?:?(?: \d+)+|send (?:this )?to a friend|top|connect with us|"
    r"suggested (?:articles|stories|posts|reading)|editors?['’]?s? (?:picks|recommendations)|recommended reading|"
    r"keywords?:? .{0,200}|.{1,40} on digg|powered by .{1,40}|.{0,20}bloggers like this|"
    r"(?:related|more|read more|latest|also) (?:\w+ ){0,3}(?:on|from|in) .{1,40}:|the latest (?:on|from|in) .{1,40}|"
    r"weiterlesen|mehr lesen|anzeige|werbung|kommentare?(?: schreiben| geschlossen)?|ähnliche (?:beiträge|artikel)|"
    r"lade weitere \w+|mehr laden|weiterführende(?:r)? links?|"
    r"(?:read more|continue reading|weiterlesen|lire la suite|leer más) \d+ ?(?:min|mins|minutes?|minuten)|"
    r"related (?:topics|subjects|tags)\b.{0,200}|"
    r"[^.!?|]{1,30}(?: \| [^.!?|]{1,30}){2,}|"
    r"schlagworte:?.{0,200}|teilen|drucken|lire la suite|publicité|leer más|publicidad|"
    r"read more|continue reading|see more|show more|load more|view all|"
    r"(?:read more|read next|more on this|also read|see also|related|watch|listen|recommended)\s*:.{0,150}|"
    r"related(?: posts| articles| stories)?|you may also like|recommended(?: for you)?|more from .{1,40}|"
    r"\d+ comments?|comments?|leave a (?:reply|comment)|reply|add a comment|join the discussion|"
    r"subscribe(?: now)?|sign up|sign in|log in|follow us|newsletter|"
    r"(?:posted|filed|published) (?:in|under|on|by) .{0,80}|tags?:.{0,200}|categor(?:y|ies):.{0,200}|"
    r"(?:photo|image|picture|credit|source|getty images|reuters|ap photo)s?:? .{0,80}|"
    r"previous(?: post| article| page)?|next(?: post| article| page)?|back to top|skip to (?:main )?content|"
    r".{0,40}©.{0,160}|copyright .{0,120}|.{0,160}all rights reserved\.?|"
    r"(?:viewed|seen|read|visto|gelesen) (?:\d[\d,.]* )?(?:times|veces|mal)|\d[\d,.]*k? (?:views|reads|shares)|"
    r"a version of this article appears in print .{0,200}|"
    r"\*{0,2} ?(?:percent )?daily values? are based on .{0,200}|"
    r"(?:last )?(?:updated|published|posted|modified)(?: on)?:? (?:\w{3,9}\.? \d{1,2},? \d{4}|\d{1,2}\.? \w{3,9}\.? \d{4}|\d{4}-\d\d-\d\d).{0,30}|"
    r"add to (?:cart|basket|bag|wishlist|wish list|favourites|favorites)|buy (?:it )?now|"
    r"(?:in stock|out of stock|only \d+ left|ships (?:within|in|today)|free (?:delivery|shipping|returns)|"
    r"delivery (?:by|within|in)|usually dispatched).{0,80}|"
    r"[★☆✩✪⭐]+.{0,60}|\d(?:[.,]\d)? (?:out of|/) 5(?: stars?)?.{0,40}|"
    r"(?:(?:[€$£¥₹]|rs\.?|usd|eur|gbp)\s?\d[\d.,]*|\d[\d.,]*\s?(?:[€$£¥₹]|usd|eur|gbp)|save \d+%|"
    r"was|now|rrp|incl\. vat|excl\. vat|\s)+"
    r")[\s.:!»›→]*$",
    re.I,
)
_SHORT = 40  # characters: lines at most this long may be labels


_MARKERS = re.compile(r"\[(?:\d{1,3}|[a-z]|citation needed|clarification needed|edit|update)\]", re.I)


# calls to action: a short block with two or more of these is a signup, paywall or consent box (matched
# on lower-cased text: a case-insensitive alternation is tried slowly at every character)
_CTA = re.compile(
    r"\b(?:subscrib\w*|unsubscrib\w*|newsletters?|sign(?:ing)? up|signup|inbox|no spam|free trial|"
    r"try (?:it )?free|e-?paper|print edition|log ?in|sign in|cookies?|consent|privacy (?:policy|settings)|"
    r"advertis\w+|personali[sz]ed? (?:ads|content)|premium|members?(?:hip)? only|delivered to your|"
    r"affiliate(?: links?)?|disclosure(?: policy)?|support us|donat\w+|funded by (?:our )?readers)\b"
)
_BYLINE = re.compile(
    r"^(?:by|written by|posted by|words by)\s+[^.!?]{2,80}$|^.{0,60}\b\d+\s*min(?:ute)?s? read\b.{0,40}$",
    re.I,
)
_CODEISH = re.compile(r"[=(){}\[\];<>#]")
# a dateline: a date or time and at most two other words ("Case Study August 12, 2010, 5:00PM EST",
# "Thu, 14 May 2020 17:55 UTC", "Last Modified: 11/18/2011 4:06 AM", "Posted at 2013-12-30T14:42:01-0700")
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:{_MONTH})\.?,?\s+\d{{4}}|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    r"|\d{4}-\d\d-\d\d(?:t[\d:]+(?:[+-]\d{2}:?\d{2})?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4})\b",
    re.I,
)
_DATE_REST = re.compile(
    rf"\b(?:{_MONTH}|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?|\b\d{{1,2}}:\d\d(?::\d\d)?(?:\s*[ap]\.?m\.?)?|\b[ap]\.?m\.?\b|"
    r"\b(?:utc|gmt|[ecmp][sd]?t|bst|cet|cest|ist|aest|ET|PT)\b|[+-]\d{2}:?\d{2}\b|\b\d+\b|"
    r"\b(?:at|as of|on|updated|published|posted|modified|last|created|date)\b|[,|:–—•·()/-]",
    re.I,
)
# post and profile metadata: "Posts: 303", "Joined: 9 April 2022", "nightowl 11mo ago", "267",
# "Board index » Help"
_META_LINE = re.compile(
    r"^(?:[^\W\d][\w .-]{1,24}:\s*(?:[\d.,]+|\d{1,2}\.? \w{3,10}\.? \d{4}|\w{3,10}\.? \d{1,2},? \d{4})"
    r"|.{0,40}?\b\d+\s*(?:s|m|h|d|w|mo|y|min|mins|hrs?|hours?|days?|weeks?|months?|years?)\s+ago"
    r"|[\d\s.,+%▲▼↑↓-]{1,10}"
    r"|[^.!?\n]{1,60}(?:\s+[»›]\s+[^.!?\n]{1,60})+)$",
    re.I,
)


# a picture's caption by its credit: "... (Getty/Kevork Djansezian)", "Stephen Chernin/Getty Images ...",
# "... (AP Photo/Evan Vucci)", "... Photo: Reuters"
_AGENCY = r"(?:getty(?: images)?|ap(?: photo)?|reuters|afp|epa(?:-efe)?|shutterstock|istock(?:photo)?|alamy|icon smi|icon sportswire|usa today sports|bloomberg|nurphoto)"
_CREDIT = re.compile(
    rf"\((?:[^()]{{0,60}}/)?{_AGENCY}\b[^()]{{0,60}}\)\s*\.?$|^[\w .'’-]{{2,40}}/{_AGENCY}\b|"
    r"(?:photo|image|picture|credit)s?:\s*[^.]{2,60}$|\b(?:getty images|ap photo|shutterstock|istock(?:photo)?|alamy)\s*$",
    re.I,
)


_BOILER_LINE_LC = re.compile(_BOILER_LINE.pattern)  # the same patterns, matched on lower-cased lines
_BYLINE_LC = re.compile(_BYLINE.pattern)
_DIGIT = re.compile(r"\d")
_READ_MORE = (
    "read more", "continue reading", "weiterlesen", "mehr lesen", "lire la suite", "leer más", "seguir leyendo",
)  # fmt: skip
_CREDIT_ENDS = ("images", "photo", "shutterstock", "istock", "istockphoto", "alamy")


# a word each call to action (`_CTA`) has in it: a block with none is not read by the pattern,
# which is tried at every character
_CTA_WORDS = (
    "subscrib", "newsletter", "sign", "inbox", "spam", "free", "paper", "edition", "log", "cookie",
    "consent", "privacy", "advertis", "personali", "premium", "member", "delivered", "affiliate",
    "disclosure", "support us", "donat", "funded",
)  # fmt: skip
_CREDIT_WORDS = ("photo", "image", "picture", "credit")


def _calls_to_action(lowered: str) -> int:
    """How many calls to action (`_CTA`) a lower-cased block has."""
    return len(_CTA.findall(lowered)) if any(w in lowered for w in _CTA_WORDS) else 0


def _credit(line: str, lowered: str) -> bool:
    """Whether a line is a caption with its picture's credit (`_CREDIT`): "(Jane Doe/AP)", "Photo:
    Reuters", "... Getty Images". Without a "/" only an agency in brackets, a "Photo:" label or an
    agency at the end can be one: the pattern (tried at every character) reads no other line."""
    if "/" in line:
        return bool(_CREDIT.search(line))
    ends = lowered.endswith(_CREDIT_ENDS)
    if ":" not in line and not ends:
        return False
    return (ends or "(" in line or any(w in lowered for w in _CREDIT_WORDS)) and bool(_CREDIT.search(line))


def _dateline(line: str) -> bool:
    """Whether `line` is a date or time with at most two other words, or a date among fields split
    by bars ("Patricio Candia | Palma de Mallorca | 08/01/2014")."""
    if not _DATE.search(line):
        return False
    return line.count("|") >= 2 or len(_DATE_REST.sub(" ", line).split()) <= 2


def _clean_lines(blocks: list[str]) -> str:
    """Drop label lines, bylines, calls to action and repeats of short label-like lines."""
    out: list[str] = []
    seen: set[str] = set()
    for block in blocks:
        if block.startswith(CODE):  # code: as it is
            out.append(block[1:])
            continue
        if "[" in block:
            block = _MARKERS.sub("", block)
        flat = " ".join(block.split())
        if 0 < len(flat) <= 300 and _calls_to_action(flat.lower()) >= 2:
            continue
        kept: list[str] = []
        for line in block.split("\n"):
            s = line.strip().strip("¶").strip()
            if not s:
                continue
            if len(s) <= 300:
                low = s.lower()  # the line patterns are lower-case: matching lowered text beats re.I
                bare = low.lstrip("•·-–*0123456789. ")
                if _BOILER_LINE_LC.match(bare) or _BYLINE_LC.match(bare):
                    continue
                if low.rstrip(" .…»›→>)]").endswith(_READ_MORE):
                    continue  # a teaser's excerpt, cut off by its "Read more" link
                flush = line[:1] not in (" ", "\t")
                if flush and len(s) <= 80 and (_META_LINE.match(s) or (_DIGIT.search(s) and _dateline(s))):
                    continue
                if flush and _credit(s, low):
                    continue  # a caption with its picture's credit
            if (
                len(s) <= _SHORT * 1.5
                and line[:1] not in (" ", "\t")
                and " " in s
                and not s.endswith(":")
                and not _CODEISH.search(s)
            ):
                key = s.lower()  # a short label-like line seen before: a repeated caption or control
                if key in seen:
                    continue
                seen.add(key)
            kept.append(line.rstrip().rstrip("¶").rstrip())
        if kept:
            out.append("\n".join(kept))
    return "\n\n".join(out).strip()
