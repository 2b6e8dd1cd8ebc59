"""selene's main-text extractor: boilerplate goes, the article (headings, lists, code, tables) stays."""

from __future__ import annotations

import builtins
import unicodedata
from typing import Any

import pytest

from selene.errors import ConfigError
from selene.ingest.config import IngestConfig
from selene.ingest.extract import extract_main_text
from selene.ingest.html import check_extractor, html_to_text

PARAS = [
    "The committee met on Tuesday to discuss the proposal for a new bridge across the river, which "
    "has been debated in the town for more than a decade.",
    "Engineers presented three designs, each with a different cost and a different time to build, and "
    "residents were invited to comment on them at a public meeting next month.",
    "The mayor said that the final decision would be taken in the spring, after the budget for the "
    "coming year has been approved by the council and the state.",
    "Funding is expected to come partly from a regional infrastructure programme and partly from a "
    "local levy that would be collected over twenty years.",
]


def page(body: str, title: str = "Bridge plans") -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def article(extra_inside: str = "", cls: str = "entry-content") -> str:
    ps = "".join(f"<p>{p}</p>" for p in PARAS)
    return f'<article><h1>Bridge plans</h1><div class="{cls}">{ps}{extra_inside}</div></article>'


def comments(n: int, cls: str = "css-1kx9f2", item: str = "css-8hd2ka") -> str:
    items = "".join(
        f'<div class="{item}"><span>user{i}</span><time datetime="2024-05-0{i % 9 + 1}">{i} hours ago</time>'
        f"<p>I have lived here for years and I think the bridge is a waste of money, number {i}, because "
        f"the traffic never goes that way anyway.</p><a href='#'>Reply</a><span>Like</span></div>"
        for i in range(n)
    )
    return f'<div class="{cls}"><h3>{n} Comments</h3>{items}</div>'


def test_article_kept_and_obfuscated_comment_section_dropped() -> None:
    text = extract_main_text(page(article() + comments(12)))
    for p in PARAS:
        assert p in text
    assert "waste of money" not in text and "Reply" not in text


def test_comments_inside_the_article_are_dropped_too() -> None:
    text = extract_main_text(page(article(extra_inside=comments(5))))
    assert PARAS[-1] in text and "waste of money" not in text


def test_a_forum_thread_keeps_its_posts() -> None:
    """Repeated user posts with no article outside them are the page's content."""
    posts = "".join(
        f'<div class="post"><span class="user">member{i}</span><time>2 days ago</time>'
        f"<div class='body'><p>{PARAS[i]}</p></div><a href='#'>Reply</a></div>"
        for i in range(4)
    )
    text = extract_main_text(page(f'<div id="thread">{posts}</div>'))
    for p in PARAS:
        assert p in text


def test_share_rows_newsletter_related_and_ads_are_dropped() -> None:
    share = '<div class="share-buttons"><a href="#">Share</a><a href="#">Tweet</a><a href="#">Email</a></div>'
    newsletter = (
        '<div class="nl-box newsletter-signup"><h4>Get the morning briefing</h4><p>Sign up for our daily '
        "newsletter and never miss a story from the region.</p><button>Subscribe</button></div>"
    )
    related = (
        '<section class="related-posts"><h3>You may also like</h3><ul>'
        + "".join(f'<li><a href="/s{i}">Another story about town number {i}</a></li>' for i in range(6))
        + "</ul></section>"
    )
    ad = '<div class="ad-slot"><span>Advertisement</span></div>'
    body = article(extra_inside=newsletter + ad) + share + related
    text = extract_main_text(page(body))
    for p in PARAS:
        assert p in text
    for junk in ("morning briefing", "Subscribe", "Another story", "Advertisement", "Tweet", "You may also like"):
        assert junk not in text, junk


def test_docs_page_keeps_headings_lists_code_and_tables_and_drops_its_chrome() -> None:
    body = (
        '<nav id="sidebar" class="sidebar"><ol class="chapter"><li><a href="/1">1. Introduction</a></li>'
        '<li><a href="/2">2. Installation</a></li></ol></nav>'
        '<div id="mdbook-help-container"><div id="mdbook-help-popup"><h2>Keyboard shortcuts</h2>'
        "<p>Press ← or → to navigate between chapters</p><p>Press S or / to search in the book</p></div></div>"
        '<main><h1>Configuration</h1><p>The configuration file is read at start-up from the working '
        "directory; every key has a default, so an empty file is valid.</p>"
        "<h2>Keys</h2><ul><li>name: the project name shown in the title bar</li>"
        "<li>threads: how many worker threads serve requests</li></ul>"
        "<pre><code>[server]\nthreads = 4\nname = \"demo\"</code></pre>"
        "<table><tr><th>key</th><th>default</th></tr><tr><td>threads</td><td>8</td></tr></table>"
        '<div class="nav-chapters"><a href="/1" class="previous">Previous</a><a href="/3">Next</a></div></main>'
    )
    text = extract_main_text(page(body))
    assert "The configuration file is read at start-up" in text
    assert "Keys" in text and "threads: how many worker threads" in text
    assert 'threads = 4\nname = "demo"' in text  # code keeps its lines
    assert "threads" in text and "8" in text
    assert "Keyboard shortcuts" not in text and "Press S or /" not in text and "Installation" not in text
    assert text.index("The configuration file") < text.index("Keys") < text.index("threads = 4")


def test_a_badly_named_wrapper_cannot_empty_the_page() -> None:
    """A class word on the element that holds the page's text (`has-sidebar`) does not remove it."""
    body = f'<div class="page has-sidebar widget-area">{"".join(f"<p>{p}</p>" for p in PARAS)}</div>'
    text = extract_main_text(page(body))
    assert all(p in text for p in PARAS)


def test_repeated_captions_and_labels_are_dropped_once_kept_never() -> None:
    gallery = "".join(
        f'<figure><img src="/{i}.jpg"><figcaption>Photo: City Archive</figcaption></figure>' for i in range(4)
    )
    ps = "".join(f"<p>{p}</p><p>Read more</p>" for p in PARAS)
    text = extract_main_text(page(f"<article>{gallery}{ps}</article>"))
    assert all(p in text for p in PARAS)
    assert "Read more" not in text and text.count("City Archive") <= 1


def test_empty_and_hopeless_markup_give_empty_text_not_errors() -> None:
    assert extract_main_text("") == ""
    assert extract_main_text("<html><body></body></html>") == ""
    assert extract_main_text("<frameset><frame src=a></frameset>") == ""  # a body without text
    assert "deep" in extract_main_text("<p>" * 5000 + "deep")
    assert extract_main_text('<div class="comments">' * 300 + "x") in ("", "x")
    assert extract_main_text("<<<>>>\x00 not html at all") in ("", "<<<>>> not html at all", "<<<>>>\x00 not html at all")


def test_html_to_text_switches_extractor_and_config_names_it() -> None:
    html = page(article() + comments(6)).encode()
    selene_text, charset = html_to_text(html, "utf-8", "selene")
    plain, _ = html_to_text(html, "utf-8", "resiliparse")
    assert charset == "utf-8" and "waste of money" not in selene_text
    assert PARAS[0] in plain and len(plain) > len(selene_text)
    assert IngestConfig().extractor == "selene"
    with pytest.raises(ValueError, match="extractor"):
        IngestConfig(extractor="readability")  # type: ignore[arg-type]


def test_trafilatura_missing_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_trafilatura(name: str, *a: Any, **k: Any) -> Any:
        if name == "trafilatura":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_trafilatura)
    with pytest.raises(ConfigError, match="selene\\[web\\]"):
        check_extractor("trafilatura")
    check_extractor("selene")


def test_generated_pages_of_every_kind_score_above_resiliparse_alone() -> None:
    """On the evaluation pages of benchmarks/extract.py (a few per kind here): selene keeps nearly
    all of the main text and much less boilerplate than resiliparse's main-content mode."""
    from tests.web_pages import KINDS, pages, shingle_scores

    sample = pages(n_per_type=4, seed=11)
    scores: dict[str, list[tuple[float, float]]] = {"selene": [], "resiliparse": []}
    for p in sample:
        for name in scores:
            text, _ = html_to_text(p.body(), None, name)  # type: ignore[arg-type]
            scores[name].append(shingle_scores(text, p.truth))
    mean = {k: (sum(s[0] for s in v) / len(v), sum(s[1] for s in v) / len(v)) for k, v in scores.items()}
    assert {p.kind for p in sample} == set(KINDS)
    assert mean["selene"][1] >= 0.95  # recall
    assert mean["selene"][0] >= 0.85 and mean["selene"][0] > mean["resiliparse"][0] + 0.1  # precision


def test_code_blocks_are_kept_whole_with_highlighter_classes_and_label_like_lines() -> None:
    """No class word or line rule reaches into <pre>: a highlighted comment (`hljs-comment`,
    `token comment`), YAML lines that look like labels, blank lines and a 'Share' line all stay."""
    code = (
        '<pre><code><span class="hljs-comment"># settings</span>\nthreads: 4\nposted: 12\n\n'
        '<span class="token comment">// Share</span>\nShare\n12 comments</code></pre>'
    )
    text = extract_main_text(page(article(extra_inside=code)))
    assert "# settings\nthreads: 4\nposted: 12\n\n// Share\nShare\n12 comments" in text
    assert PARAS[0] in text


def test_a_boilerplate_heading_among_many_headings_is_found_by_its_place_in_the_source() -> None:
    """API pages have hundreds of headings: the one boilerplate section is found (and only it goes),
    including when a script holds a heading-like string that the parser does not make an element."""
    methods = "".join(f"<h3>Method {i}</h3><p>What method {i} does, in a sentence of prose.</p>" for i in range(300))
    script = "<script>var tpl = '<h2>Related posts</h2>';</script>"
    html = page(f"{script}<main>{methods}<h2>Related posts</h2><p>Another story about the town.</p></main>")
    text = extract_main_text(html)
    assert text.count("What method") == 300 and "Method 299" in text
    assert "Related posts" not in text and "Another story" not in text


def test_layout_and_page_builder_class_words_do_not_remove_the_article() -> None:
    """Wrappers named "sidebar-layout", "elementor-widget" or "section--has-ads" around the article's
    paragraphs are kept: the paragraphs find their content root; a real sidebar still goes."""
    widgets = "".join(
        f'<div class="elementor-element elementor-widget elementor-widget-text-editor">'
        f'<div class="elementor-widget-container"><p>{p}</p></div></div>'
        for p in PARAS
    )
    body = (
        f'<div class="o-row c-fixed-sidebar-layout--300@md"><div class="elementor-widget-wrap">{widgets}</div></div>'
        '<aside class="widget widget-sidebar"><p>About me: I write about towns, bridges and the people who '
        "argue about them, and I have done so for many years on this little blog of mine.</p></aside>"
    )
    text = extract_main_text(page(body))
    for p in PARAS:
        assert p in text
    assert "About me" not in text


def test_a_paywall_class_on_the_articles_own_paragraphs_names_prose() -> None:
    ps = "".join(f'<p class="paywall">{p}</p>' for p in PARAS)
    box = '<div class="paywall"><p>Subscribe now to keep reading.</p><a href="/subscribe">Subscribe</a></div>'
    text = extract_main_text(page(f"<main><div class='body'>{ps}</div>{box}</main>"))
    for p in PARAS:
        assert p in text


def test_a_span_named_by_a_boilerplate_word_around_a_paragraphs_text_stays() -> None:
    """A Facebook note's <span class="...ContentTags"> around all of a paragraph's text is prose; a tag
    link inside a paragraph still goes."""
    ps = "".join(f'<p><span class="_fbReactionComponent__eventDetailsContentTags fsl">{p}</span></p>' for p in PARAS)
    tagged = f'<p>{PARAS[0]} <a class="post-tags" href="/t/bridges">bridges, towns</a></p>'
    text = extract_main_text(page(f"<div class='c-article-copy'>{ps}{tagged}</div>"))
    for p in PARAS:
        assert p in text
    assert "bridges, towns" not in text


def test_text_in_br_lines_is_found_when_main_content_mode_drops_it() -> None:
    """resiliparse's main-content mode drops a "permalink" post; the <br> lines of prose bring it back."""
    lines = "<br><br>".join(PARAS + PARAS[::-1])  # a long post: its one block is a content root alone
    body = f'<div class="content"><div class="post_content permalink"><div class="post_body">{lines}</div></div></div>'
    text = extract_main_text(page(body))
    for p in PARAS:
        assert p in text


def test_teaser_lists_go_with_their_titles_and_pictures() -> None:
    teasers = "".join(
        f'<div class="card"><a href="/story-{i}"><img src="x.jpg"></a><h4><a href="/story-{i}">Story number {i} of the week</a></h4>'
        f"<div>A short blurb that sums up story {i} for the reader who is browsing.</div></div>"
        for i in range(5)
    )
    text = extract_main_text(page(article() + f"<div class='more'>{teasers}</div>"))
    assert PARAS[0] in text and "Story number" not in text and "blurb" not in text


def test_forum_replies_with_repeated_anchor_titles_are_not_teasers() -> None:
    posts = "".join(
        f'<div class="msg"><h3><a href="#p{i}">Re: bridge plans</a></h3><p>{p}</p></div>' for i, p in enumerate(PARAS)
    )
    text = extract_main_text(page(f"<div id='thread'>{posts}</div>"))
    for p in PARAS:
        assert p in text


def test_datelines_copyright_and_view_counts_go_dates_in_sentences_stay() -> None:
    extra = (
        "<p>Case Study August 12, 2010, 5:00PM EST</p><p>Thu, 14 May 2020 17:55 UTC</p>"
        "<p>Patricio Candia | Palma de Mallorca | 08/01/2014</p><p>Viewed 314 times</p>"
        "<p>™ &amp; © 2013 Cable News Network, Inc. All rights reserved.</p>"
        "<p>On March 3, 2021 the council voted to fund the bridge.</p>"
        "<p>The old bridge at dusk, seen from the east bank. (AP Photo/Jane Doe)</p>"
        "<p>The council said on Tuesday, according to Reuters, that the money was there.</p>"
    )
    text = extract_main_text(page(article(extra_inside=extra)))
    for gone in ("Case Study", "17:55", "Palma", "314", "Cable News", "at dusk"):
        assert gone not in text
    assert "On March 3, 2021 the council voted" in text and "according to Reuters" in text


def test_article_headline_is_dropped_a_docs_title_is_kept() -> None:
    head = '<meta property="og:type" content="article"><meta property="og:title" content="Bridge plans approved">'
    html = (
        f"<html><head><title>Bridge plans approved | Town News</title>{head}</head><body>"
        f"<article><h1>Bridge plans approved</h1>{''.join(f'<p>{p}</p>' for p in PARAS)}</article></body></html>"
    )
    assert "Bridge plans approved" not in extract_main_text(html)
    docs = f"<html><head><title>Bridge plans approved — docs</title></head><body><main><h1>Bridge plans approved</h1>{''.join(f'<p>{p}</p>' for p in PARAS)}</main></body></html>"
    assert extract_main_text(docs).startswith("Bridge plans approved")


def test_slug_ids_and_heading_ids_are_not_boilerplate_names() -> None:
    body = (
        '<main><article id="faster-search-across-workspaces"><h2 id="nav_nur_die_folie">Only the film stays</h2>'
        f"<p>{PARAS[0]}</p></article><article><p>{PARAS[1]}</p></article></main>"
    )
    text = extract_main_text(page(body))
    assert "Only the film stays" in text and PARAS[0] in text and PARAS[1] in text


def test_scripts_are_cut_before_parsing_and_json_ld_still_marks_an_article() -> None:
    script = '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Bridge plans"}</script>'
    noise = "<script>var s = '<p>" + "not text " * 50 + "</p>';</script><style>p { color: red }</style>"
    html = f"<html><head>{script}</head><body>{noise}<article><h1>Bridge plans</h1>{''.join(f'<p>{p}</p>' for p in PARAS)}</article></body></html>"
    text = extract_main_text(html)
    assert "not text" not in text and "color" not in text and PARAS[0] in text
    assert not text.startswith("Bridge plans")  # the JSON-LD made it an article: the headline went
    # from bytes, the scripts are cut before decoding (an emoji in one made the whole page four bytes a
    # character), the JSON-LD read first: the same text, in any charset that writes ASCII as ASCII
    emoji = "<script>var e = '\U0001f600';</script>"
    for charset in ("utf-8", "utf-16", "gb18030", "shift_jis", "windows-1252"):
        page_ = html.replace("<body>", f"<body>{emoji}") if charset.startswith(("utf", "gb")) else html
        assert html_to_text(page_.encode(charset), http_charset=charset) == (text, charset), charset
    # an element whose name only starts like one (a custom <styled-box>) is not a style sheet
    custom = html.replace("<article>", f"<article><styled-box><p>{PARAS[3]} (boxed)</p></styled-box>")
    custom = custom.replace("</body>", "<style>.late { color: blue }</style></body>")
    assert f"{PARAS[3]} (boxed)" in extract_main_text(custom)
    assert f"{PARAS[3]} (boxed)" in html_to_text(custom.encode())[0]


def test_contents_cut_before_parsing_are_those_the_parser_would_end_there() -> None:
    """Scripts, styles and svgs are cut from the source as the parser reads them (and lists renamed): a "<style>" inside
    a script is script, an upper-case tag is the same tag, an svg closed in its start tag
    ("<svg/>") holds nothing, an svg's labels are not text, an unclosed script runs to the end."""
    from selene.ingest.extract import _prepare_source

    src = "<p>a</p><SCRIPT>x = '<style>'; y = '</style>';</SCRIPT><p>b</p><svg/><p>c</p><svg viewBox='0 0 1 1'><title>Share</title></svg><p>d</p>"
    want = "<p>a</p><SCRIPT></SCRIPT><p>b</p><svg/><p>c</p><svg viewBox='0 0 1 1'></svg><p>d</p>"
    assert _prepare_source(src) == want
    assert _prepare_source(src.encode()) == want.encode()
    assert _prepare_source("<p>a</p><script>never closed <p>b</p>") == "<p>a</p><script>"
    assert _prepare_source("<p>a</p><scripts>kept</scripts>") == "<p>a</p><scripts>kept</scripts>"
    # in the same pass lists become ordered ones (resiliparse drops every <ul>), but not in a script
    assert _prepare_source("<UL class='x'><li>a</li></ul><script>'<ul>'</script>") == "<ol class='x'><li>a</li></ol><script></script>"
    body = f"<article>{''.join(f'<p>{p}</p>' for p in PARAS)}<svg><text>Share on Facebook</text></svg></article>"
    assert "Share on Facebook" not in extract_main_text(page(body))
    # an element in the svg's place when it closes itself stays
    body = f"<article><p>{PARAS[0]}</p><svg class='icon'/><p>{PARAS[1]}</p>{''.join(f'<p>{p}</p>' for p in PARAS[2:])}</article>"
    assert PARAS[1] in extract_main_text(page(body))


def test_an_article_a_site_put_inside_an_aside_stays_and_other_asides_go() -> None:
    """A site that wraps its article in an <aside> (schema.org Article inside): resiliparse's
    main-content mode drops every aside, so asides are renamed in the source and skipped by selene's
    own rule, which spares the one that holds the page's content."""
    ps = "".join(f"<p>{p}</p>" for p in PARAS)
    body = (
        f'<main><aside class="pa-direct-content"><section itemscope itemtype="http://schema.org/Article">{ps}</section></aside>'
        "<aside><p>Most read this week: a very long list of other stories that nobody asked for, told at length "
        "so that it looks like a paragraph of prose to any rule that measures.</p></aside></main>"
    )
    text = extract_main_text(page(body))
    assert all(p in text for p in PARAS) and "Most read" not in text
    assert "Most read" not in extract_main_text(page(f"<article>{ps}</article><aside><p>Most read: more</p></aside>"))


@pytest.mark.parametrize(
    "start, end",
    [
        ("<main>", "</main>"),
        ("<ARTICLE class='x'>", "</ARTICLE>"),
        ('<div role="main">', "</div>"),
        ('<div itemprop="articleBody">', "</div>"),
        ("<div itemscope itemtype=https://schema.org/NewsArticle>", "</div>"),
        ('<div class="post hentry">', "</div>"),
    ],
)
def test_content_by_markup_keeps_a_wrapper_a_class_word_names(start: str, end: str) -> None:
    """An element that is the page's content by its markup keeps its wrappers, whatever their class
    words, even when its paragraphs are too short to vote as prose (and there is enough text that no
    fallback looks for a wrapper)."""
    lines = "".join(f"<p>Short line number {i} of the text, kept.</p>" for i in range(8))
    more = "".join(f"<p>Another short line, number {i}, of the page.</p>" for i in range(16))
    body = f'<div class="widget-area">{start}{lines}{end}</div><div>{more}</div><div class="sidebar"><p>Other things</p></div>'
    text = extract_main_text(page(body))
    assert "Short line number 7 of the text, kept." in text and "Other things" not in text


def test_class_and_id_attributes_are_read_whatever_separates_them() -> None:
    """An attribute after a tab or a newline, or with a space before its "=", is read like one after
    a space; an attribute whose name only ends like one (data-class) is not."""
    from selene.ingest.extract import NAME_ATTR, _mark_names

    marked, n = _mark_names('<div\n  class="share-bar"><div\tid = "newsletter"><div data-class="sidebar"><p class="lead">')
    assert marked.count(NAME_ATTR) == n == 2 and 'data-class="sidebar" data' not in marked


def test_a_card_list_goes_and_the_article_paragraph_run_into_it_stays() -> None:
    items = "".join(
        f'<li><a href="/s{i}"><img src="x.jpg"></a><span>A short blurb about story {i} for readers who browse the list.</span></li>'
        for i in range(5)
    )
    body = f"<article>{''.join(f'<p>{p}</p>' for p in PARAS)}<p>Reporters A and B contributed to this report.</p><ul>{items}</ul></article>"
    text = extract_main_text(page(body))
    assert PARAS[-1] in text and "contributed to this report" in text and "blurb" not in text


def test_attribute_text_in_code_and_prose_stays_as_written() -> None:
    """A page that shows markup (`class="comments"`, `style="display:none"`) in a code block or in
    prose: the source is marked where attribute patterns match, and no mark may reach the text."""
    code = '&lt;div class="comments" role="navigation" style="display:none"&gt;'
    body = (
        "<article>" + "".join(f"<p>{p}</p>" for p in PARAS[:2])
        + f"<pre>{code}</pre>"
        + '<p>Then write class="sidebar" id=nav on the element you want hidden, and the rule does the rest '
        "of the work for every page of the site that uses it.</p></article>"
    )
    text = extract_main_text(page(body))
    assert "data-selene" not in text
    assert '<div class="comments" role="navigation" style="display:none">' in text
    assert 'Then write class="sidebar" id=nav on the element' in text


def test_text_comes_out_nfc_normalized() -> None:
    """A page that spells "ü" as u + U+0308 gives one letter, so a word stays one word for the metric
    and the tokenizer."""
    decomposed = [p.replace("u", "u\u0308", 1) for p in PARAS]
    text = extract_main_text(page("<article>" + "".join(f"<p>{p}</p>" for p in decomposed) + "</article>"))
    assert "\u0308" not in text
    assert unicodedata.normalize("NFC", decomposed[0]) in text


def test_an_embedded_tweet_the_article_quotes_stays() -> None:
    """`<blockquote class="twitter-tweet">`, the markup sites quote a post with, is quoted content;
    resiliparse's main-content mode alone drops it (a class word starting with "twitter")."""
    tweet = (
        '<div><blockquote class="twitter-tweet"><p lang="en" dir="ltr">The new bridge design is out: three '
        'options, one budget. <a href="https://t.co/x">pic.twitter.com/x</a></p>&mdash; Town Council '
        '(@council) <a href="https://twitter.com/council/status/1">May 3, 2024</a></blockquote>'
        '<script async src="https://platform.twitter.com/widgets.js"></script></div>'
    )
    ps = [f"<p>{p}</p>" for p in PARAS]
    text = extract_main_text(page("<article>" + "".join(ps[:2]) + tweet + "".join(ps[2:]) + "</article>"))
    assert "The new bridge design is out: three options, one budget." in text
    for p in PARAS:
        assert p in text
