"""A seeded web-like corpus for span dedup: varied prose pages with the boilerplate real crawls repeat.

    python benchmarks/spans_corpus.py --mb 20 --out DIR [--seed 0]   (DIR/pages.jsonl, then `selene ingest`)

Material: natural English sentences taken from text already on the machine: the bundled sample's
Pile documents (`data/sample/pile`: the Python reference, docstrings, PyPI descriptions, licences,
Debian copyright files), the held-out docstrings of `data/reference/` and the English texts of
`benchmarks/data/langid_set.jsonl.zst`. Paragraphs are unwrapped, code-like ones skipped, and the rest
cut into sentences at terminal punctuation before a capital; a sentence of 5-45 words, mostly
letters, joins the pool once. Made-up sentences come on top, from templates filled with seeded
names and numbers, so every page also has what sentence splitters disagree on: abbreviations ("Dr.",
"e.g.", "U.S.", "approx.", "et al."), initials, ellipses ("..." and "…"), decimals, prices, times,
dates, versions, quotations with the speaker after them, "?!", bullets, host and file names, e-mail
addresses, emoticons; and what normalisers disagree on: accented names, curly quotes, currency
signs, dashes, full-width punctuation and a CJK sentence.

A page belongs to a site (sites drawn by a Zipf law, as crawls see a few big sites and many small
ones) and is, in order:
- the site's navigation line ("Home | News | Reviews | ...") on 70% of its pages;
- one of six consent-manager cookie banners (3-4 sentences each) on 35% of pages;
- a title, and on 40% a byline ("By Dr. J. Smith | Mar. 3, 2021 | 5 min read");
- 3-9 body paragraphs of 2-7 sentences (on 5% of pages, stubs, one paragraph of 1-3 sentences) (pool sentences in a new random order, so three consecutive
  sentences almost never recur by chance; one in eight from the templates);
- a bulleted or numbered list on 25% of pages;
- a famous quotation (one of 40, 1-3 sentences) on 8%;
- a long copied passage on 4%: 4-12 consecutive body sentences of an earlier page (syndication,
  scraped copies); a third of them altered the way copies are (lower-cased, numbers changed,
  punctuation or line breaks changed) so that text normalisation decides whether they match;
- one of ten licence notices (real licence paragraphs of the sample) on 5%;
- the site's newsletter footer on 25%, its copyright footer on 80%.
Each page's `planted` field names the blocks planted in it (`selene ingest` keeps it in `meta` with
`meta_keys=url+planted`), so results can be read by
kind. Sizes run from a few MB to a few hundred: pages are made until `--mb` MB of text are written.
Same seed and size: byte-identical file.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
PILE = ROOT / "data" / "sample" / "pile"
REFERENCE = ROOT / "data" / "reference" / "docstrings.jsonl.zst"
LANGID = ROOT / "benchmarks" / "data" / "langid_set.jsonl.zst"
PROSE_SOURCES = ("PythonReference", "Docstrings", "PyPI", "Licenses", "DebianCopyright")

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[\"A-Z])")
_CODE = re.compile(r"(>>>|\bdef |\bclass |[{}<>=]|::|\$ |#!|\\\w|`|__|https?:)")
_WORD = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"\d+")


def _names(words: str) -> list[str]:
    return words.split()


FIRST = _names("James Mary Robert Linda Aisha Wei Carlos Fatima Olga Kenji Priya Lars Noor Tomas Grace Ahmed")
LAST = _names("Smith Garcia Okafor Tanaka Novak Larsen Rossi Dubois Kowalski Haddad Silva Chen Murphy Singh")
CITIES = _names("Boston Lagos Osaka Lyon Krakow Austin Porto Leeds Pune Oslo Denver Quito Adelaide")
COUNTRIES = _names("Canada Brazil Japan Kenya Norway Chile India Spain Poland Ghana Mexico Egypt")
MONTHS = _names("Jan. Feb. Mar. Apr. Aug. Sept. Oct. Nov. Dec.")
NOUNS = _names("report update release study survey plan budget review season model recipe guide")
VERBS = _names("announced confirmed denied delayed expanded published revised launched tested")
TEMPLATES = [
    "Dr. {last} and Mr. {last2} met in {city} on {mon} {d}, {year}, to discuss the {noun}.",
    "{co} Inc. {verb} revenue of ${n}.{nn} million, up {p}.{q}% from a year earlier.",
    "Prices start at ${n}.99 per month, i.e. about ${m} a year, taxes incl. for most buyers.",
    "{first} paused... then {verb} the {noun} anyway, to everyone's surprise.",
    '"We are thrilled with the {noun}," said {first} {last}. "It took {n} months!"',
    "See e.g. ch. {n}, pp. {a}-{b}, for the details of the {noun} from {year}.",
    "The U.S. team beat {country} {n}-{m} at {h}:{mm} p.m. local time on {mon} {d}.",
    "{i}. {j}. {last} wrote the foreword to the {year} edition of the {noun}.",
    "Version {n}.{m}.{a} fixes bug no. {b} in the {noun} module (see the changelog).",
    "Is the {noun} worth it? Yes! At ${n}.{nn} it beats the {year} model.",
    "The trail is approx. {n}.{q} km long, with {m} steep sections, bridges, etc.",
    "Prof. {last} (Univ. of {city}) {verb} the {noun} at {h}:{mm} a.m. on {mon} {d}.",
    "What happened next?... Nobody in {city} expected the {noun} to be {verb} in {year}.",
    "Temperatures fell to -{n}.{q} °C in {city} vs. {m}.{a} °C a week ago.",
    "According to the U.K. office, {p}.{q} million people read the {noun} last year.",
    '{first} asked: "Why now?" The answer, says {last}, is the {year} {noun}.',
    # what web text adds: non-ASCII names and marks, Unicode ellipses and dashes, bullets, addresses,
    # emoticons, full-width punctuation, dotted names of files and hosts
    "{uname} ({ucity}) said the {noun} was “finally done”… {first} wasn’t so sure.",
    "Really?! The {noun} sold out in {m} minutes — again. Wow!!",
    "• {first}’s {noun}: €{n},{nn} • {last}’s: £{m}.{q} • total: ¥{a}",
    "Read more at www.{lower}.example/{noun}.html. Questions? Mail info@{lower}.example.",
    "Open config.yaml, set debug: true, and restart. It works :) Thanks, {first}!",
    "The {noun} is due on {h}/{d}/{year}, i.e. in {m} days; see §{q}.{a} of the rules.",
    "会议于{d}日结束。{uname} 说：“很好！” Then everyone went home.",
    "Café {last} serves crème brûlée for ${n}.{nn}. It’s in {ucity}, near the naïve art museum.",
    "She scored {p}/{m} (approx. {q}{q}%) on the 3rd. test; he got No. {n}.",
    "{first} et al. (ed.) published vol. {q}, ch. {m}... Then nothing for {m} yrs.",
]
UNAMES = _names("José_Müller Zoë_Ødegaard Łukasz_Wójcik Chloé_Lefèvre İlkay_Gündoğan Nguyễn_Văn_An")
UCITIES = _names("São_Paulo Zürich Kraków Malmö Reykjavík Düsseldorf Besançon")
NAV = _names("Home News Sport Business Reviews Guides Deals About Contact Blog Events Shop Help Podcasts")
COOKIES = [
    "We use cookies to improve your experience on our site. By continuing to browse, you agree to our "
    "use of cookies. You can change your cookie settings at any time. Accept all cookies?",
    "This website uses cookies. We use cookies to personalise content and ads, to provide social media "
    "features and to analyse our traffic. We also share information about your use of our site with our "
    "partners. Manage preferences | Accept",
    "Your privacy matters to us. We and our partners store and access information on your device, such as "
    "cookies. Some partners do not ask for your consent to process your data. Click Accept to continue.",
    "Cookie notice: this site uses essential cookies to function. With your permission, we would also like to "
    "set analytics cookies. Read our Cookie Policy for more details. Allow all / Reject non-essential",
    "We value your privacy! We use cookies and similar technologies to deliver our services. You may withdraw "
    "consent at any time in the settings. OK, got it.",
    "Hi there. This site uses cookies for analytics and personalised ads. Learn more in our privacy policy. "
    "Continue without accepting?",
]
NEWSLETTER = [
    "Subscribe to the {site} newsletter. Get our best stories delivered to your inbox every week. "
    "You can unsubscribe at any time.",
    "Enjoyed this article? Sign up for {site} Weekly! No spam, just the news that matters. Join {n},000 readers.",
    "Never miss a story from {site}. Enter your e-mail address below. We respect your privacy.",
]
QUOTES = [
    ("The only thing we have to fear is fear itself.", "Franklin D. Roosevelt"),
    ("Be the change that you wish to see in the world.", "Mahatma Gandhi"),
    ("In the middle of difficulty lies opportunity.", "Albert Einstein"),
    ("The unexamined life is not worth living.", "Socrates"),
    ("Stay hungry. Stay foolish.", "Steve Jobs"),
    ("I have not failed. I've just found 10,000 ways that won't work.", "Thomas A. Edison"),
    ("Simplicity is the ultimate sophistication.", "Leonardo da Vinci"),
    ("It always seems impossible until it's done.", "Nelson Mandela"),
    ("Well done is better than well said.", "Benjamin Franklin"),
    ("The best way out is always through. Keep going.", "Robert Frost"),
    ("That's one small step for man. One giant leap for mankind.", "Neil Armstrong"),
    ("Ask not what your country can do for you. Ask what you can do for your country.", "John F. Kennedy"),
    ("Knowledge is power. Power is responsibility. Responsibility is freedom.", "Francis Bacon (attr.)"),
    ("Brevity is the soul of wit.", "William Shakespeare"),
    ("We shall fight on the beaches. We shall never surrender.", "Winston Churchill"),
    ("Whatever you are, be a good one.", "Abraham Lincoln"),
    ("Life is what happens when you're busy making other plans.", "John Lennon"),
    ("To be, or not to be? That is the question.", "William Shakespeare"),
    ("I think, therefore I am.", "René Descartes"),
    ("Done is better than perfect. Ship it. Then improve it.", "Sheryl Sandberg (attr.)"),
]
LISTS = ["Key points:", "In short:", "What you need:", "Steps:", "Highlights:"]


def _read_jsonl_zst(path: Path) -> Iterator[dict]:
    with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as r:
        for line in io.TextIOWrapper(r, encoding="utf-8"):
            yield json.loads(line)


def pool_sentences(texts: list[str]) -> list[str]:
    """Natural sentences of `texts` (see the module doc), each once, in first-seen order."""
    seen: dict[str, None] = {}
    for text in texts:
        for para in re.split(r"\n\s*\n", text.replace("\r", "")):
            lines = para.split("\n")
            if any(ln.startswith(("    ", "\t", ">>>", "*", "-", "|", "+")) for ln in lines[1:]):
                continue  # indented or tabular: code, tables, option lists
            flat = " ".join(ln.strip() for ln in lines).strip()
            if not flat or _CODE.search(flat):
                continue
            for sent in _SENT_END.split(flat):
                words = sent.split()
                if not 5 <= len(words) <= 45 or sent[-1] not in ".!?" or not sent[0].isupper():
                    continue
                if sum(bool(_WORD.fullmatch(w.strip(".,;:!?()'\""))) for w in words) < 0.8 * len(words):
                    continue
                seen.setdefault(sent, None)
    return list(seen)


def load_pool() -> list[str]:
    texts = [
        d["text"]
        for f in sorted(PILE.glob("*.jsonl.zst"))
        for d in _read_jsonl_zst(f)
        if d["meta"]["pile_set_name"] in PROSE_SOURCES
    ]
    texts += [d["text"] for d in _read_jsonl_zst(REFERENCE)]
    texts += [d["text"] for d in _read_jsonl_zst(LANGID) if d.get("lang") == "en"]
    return pool_sentences(texts)


def licence_blocks() -> list[str]:
    """Ten licence notices: the commonest multi-sentence paragraphs of the sample's licences."""
    counts: Counter[str] = Counter()
    for f in sorted(PILE.glob("*.jsonl.zst")):
        for d in _read_jsonl_zst(f):
            if d["meta"]["pile_set_name"] == "Licenses":
                for para in re.split(r"\n\s*\n", d["text"]):
                    flat = " ".join(para.split())
                    if 3 <= len(_SENT_END.split(flat)) <= 8 and len(flat) < 1200:
                        counts[flat] += 1
    return [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]


class Generator:
    """Pages, one at a time, from a seeded RNG (see the module doc for their make-up)."""

    def __init__(self, pool: list[str], licences: list[str], seed: int, n_sites: int) -> None:
        self.pool, self.licences = pool, licences
        self.rng = random.Random(seed)
        rng = self.rng
        self.sites = []
        for s in range(n_sites):
            name = f"{rng.choice(CITIES)} {rng.choice(['Gazette', 'Times', 'Review', 'Daily', 'Post', 'Hub'])} {s}"
            nav = " | ".join(rng.sample(NAV, rng.randint(4, 8)))
            news = rng.choice(NEWSLETTER).format(site=name, n=rng.randint(2, 90))
            year = rng.randint(2009, 2024)
            footer = f"© {year} {name}. All rights reserved.\nPrivacy Policy | Terms of Use | Contact us"
            self.sites.append((name, nav, news, footer, rng.random() < 0.8))
        self.site_weights = [1 / (k + 1) for k in range(n_sites)]
        self.bodies: list[list[str]] = []  # earlier pages' body sentences, for copied passages

    def fill(self, template: str) -> str:
        r = self.rng
        return template.format(
            last=r.choice(LAST), last2=r.choice(LAST), first=r.choice(FIRST), city=r.choice(CITIES),
            country=r.choice(COUNTRIES), mon=r.choice(MONTHS), d=r.randint(1, 28), year=r.randint(1950, 2024),
            noun=r.choice(NOUNS), verb=r.choice(VERBS), co=r.choice(LAST), n=r.randint(2, 999),
            nn=f"{r.randint(0, 99):02d}", m=r.randint(2, 99), p=r.randint(1, 60), q=r.randint(0, 9),
            a=r.randint(1, 400), b=r.randint(401, 900), h=r.randint(1, 12), mm=f"{r.randint(0, 59):02d}",
            i=r.choice("ABCDEGJKLMRT"), j=r.choice("ABCDEGJKLMRT"), lower=r.choice(LAST).lower(),
            uname=r.choice(UNAMES).replace("_", " "), ucity=r.choice(UCITIES).replace("_", " "),
        )  # fmt: skip

    def sentence(self) -> str:
        if self.rng.random() < 0.125:
            return self.fill(self.rng.choice(TEMPLATES))
        return self.rng.choice(self.pool)

    def altered(self, sents: list[str]) -> str:
        """A copied passage as copies differ: case, numbers, punctuation or line breaks."""
        text = " ".join(sents)
        how = self.rng.randrange(4)
        if how == 0:
            return text.lower()
        if how == 1:
            return (
                _DIGITS.sub(lambda m: str(int(m.group()) + 1), text) if _DIGITS.search(text) else text.upper()
            )
        if how == 2:
            return text.replace(", ", "; ").replace(" - ", " -- ")
        return "\n".join(sents)  # one sentence per line instead of one paragraph

    def page(self, k: int) -> dict:
        r = self.rng
        site = r.choices(range(len(self.sites)), weights=self.site_weights)[0]
        _, nav, news, footer, has_nav = self.sites[site]
        blocks: list[str] = []
        planted: list[str] = []
        if has_nav and r.random() < 0.7:
            blocks.append(nav)
            planted.append("nav")
        if r.random() < 0.35:
            blocks.append(r.choice(COOKIES))
            planted.append("cookies")
        blocks.append(" ".join(w.capitalize() for w in r.choice(self.pool).rstrip(".!?").split()[:8]))
        if r.random() < 0.4:
            blocks.append(
                f"By {self.fill('{first} {i}. {last} | {mon} {d}, {year}')} | {r.randint(2, 15)} min read"
            )
        body: list[str] = []
        paras = []
        short = r.random() < 0.05  # a tag, contact or stub page: boilerplate and a few sentences
        if short:
            planted.append("short")
        for _ in range(1 if short else r.randint(3, 9)):
            sents = [self.sentence() for _ in range(r.randint(1, 3) if short else r.randint(2, 7))]
            body += sents
            paras.append(" ".join(sents))
        if not short and r.random() < 0.25:
            items = [self.sentence() for _ in range(r.randint(3, 6))]
            numbered = r.random() < 0.5
            lines = [f"{i + 1}. {s}" if numbered else f"- {s}" for i, s in enumerate(items)]
            paras.insert(r.randint(1, len(paras)), "\n".join([r.choice(LISTS), *lines]))
            planted.append("list")
        if r.random() < 0.08:
            quote, who = r.choice(QUOTES)
            paras.insert(r.randint(0, len(paras)), f'As {who} put it: "{quote}"')
            planted.append("quote")
        if self.bodies and r.random() < 0.04:
            src = r.choice(self.bodies)
            n = min(len(src), r.randint(4, 12))
            at = r.randint(0, len(src) - n)
            copy = src[at : at + n]
            text = self.altered(copy) if r.random() < 1 / 3 else " ".join(copy)
            paras.insert(r.randint(0, len(paras)), text)
            planted.append("copied" if text == " ".join(copy) else "copied_altered")
        blocks += paras
        if r.random() < 0.05:
            blocks.append(r.choice(self.licences))
            planted.append("licence")
        if r.random() < 0.25:
            blocks.append(news)
            planted.append("newsletter")
        if r.random() < 0.8:
            blocks.append(footer)
            planted.append("footer")
        if len(self.bodies) < 5000:
            self.bodies.append(body)
        elif r.random() < 0.1:
            self.bodies[r.randrange(len(self.bodies))] = body
        url = f"https://www.site{site}.example/p{k}"
        return {"id": f"page-{k:07d}", "text": "\n\n".join(blocks), "url": url, "planted": planted}


def generate(out: Path, mb: float, seed: int = 0) -> dict:
    """Write `out`/pages.jsonl (~mb MB of text) and return a summary: pages, bytes, planted counts."""
    pool = load_pool()
    target = int(mb * 1e6)
    gen = Generator(pool, licence_blocks(), seed, n_sites=max(20, int(target / 3000 / 40)))
    out.mkdir(parents=True, exist_ok=True)
    planted: Counter[str] = Counter()
    size = pages = 0
    with open(out / "pages.jsonl", "w", encoding="utf-8") as f:
        while size < target:
            page = gen.page(pages)
            f.write(json.dumps(page, ensure_ascii=False) + "\n")
            size += len(page["text"].encode())
            planted.update(page["planted"])
            pages += 1
    return {"pages": pages, "text_bytes": size, "pool_sentences": len(pool), "planted": dict(planted)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20.0, help="MB of page text to write")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(json.dumps(generate(args.out, args.mb, args.seed)))


if __name__ == "__main__":
    main()
