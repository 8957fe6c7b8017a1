//! The regular-expression fallback of `extract` (`flat_text`, the title of `_flat_document`,
//! `html.unescape`) and the line keys of `templates.line_keys`, natively.
//!
//! Each pass reproduces one regular expression of the Python reference, match for match:
//!
//! 1. `_INVISIBLE_TITLE_RE.sub(" ", html)`: `<(script|...|title)\b.*?(?:</\1\s*>|\Z)`, ignoring case;
//! 2. `_BLOCK_TAG_RE.sub("\n", ...)`: `</?(?:address|...)\b[^>]*>`, ignoring case;
//! 3. `_TAG_RE.sub("", ...)`: `<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*>|<![^>]*>`;
//! 4. `extract.unescape` (`html.unescape`: named references of HTML5 with its longest-prefix rule,
//!    numeric references with its replacement tables);
//! 5. `_BLANKS_RE`, `_LINE_BREAK_RE` and `strip()`: a run of whitespace becomes "\n" when it holds
//!    one, else " ", and none is left at either end.
//!
//! What depends on the running Python comes from it (`_native.flat_text`): the classes `\w` and
//! `\s`, which characters `re` matches to an ASCII letter when ignoring case, which pairs a
//! back-reference ignoring case accepts, and `html`'s tables. A tag name is the run of `\w`
//! characters after `<` (every character that matches a letter of a name is one), so
//! `name\b` matches exactly when the run has the name's length and matches it letter by letter.

use std::borrow::Cow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::CharSet;

/// Names of `rules.INVISIBLE_ELEMENTS` and `title`, and of `rules.BLOCK` (given by Python).
struct Names(Vec<Vec<u8>>);

impl Names {
    fn new(names: Vec<String>) -> PyResult<Self> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
                return Err(PyValueError::new_err(format!(
                    "not a lower-case ASCII tag name: {name:?}"
                )));
            }
            out.push(name.into_bytes());
        }
        Ok(Names(out))
    }
}

#[pyclass(frozen, module = "scrapy_simhash_native")]
pub struct FlatText {
    word: CharSet,
    space: CharSet,
    digit: CharSet,
    /// Non-ASCII characters that `re` matches to an ASCII letter ignoring case: (character, letter).
    folds: FxHashSet<(char, u8)>,
    /// Pairs (opened, closing) of characters that `(?i)(.)\1` accepts, among those of `folds`
    /// and the ASCII letters.
    backrefs: FxHashSet<(char, char)>,
    invisible: Names,
    block: Names,
    /// `html.entities.html5`.
    entities: FxHashMap<String, String>,
    /// `html._invalid_charrefs`, `html._invalid_codepoints`.
    invalid_charrefs: FxHashMap<u32, String>,
    invalid_codepoints: FxHashSet<u32>,
}

/// A substitution pass's output: `s` with byte ranges replaced, borrowed while none is.
struct Splice<'a> {
    s: &'a str,
    out: String,
    copied: usize,
}

impl<'a> Splice<'a> {
    fn new(s: &'a str) -> Self {
        Splice {
            s,
            out: String::new(),
            copied: 0,
        }
    }

    fn replace(&mut self, start: usize, end: usize, with: &str) {
        self.out.push_str(&self.s[self.copied..start]);
        self.out.push_str(with);
        self.copied = end;
    }

    fn finish(mut self) -> Cow<'a, str> {
        if self.copied == 0 {
            return self.s.into();
        }
        self.out.push_str(&self.s[self.copied..]);
        self.out.into()
    }
}

/// The longest tag name handled ("blockquote", "figcaption"); a longer run is no name.
const MAX_NAME: usize = 16;

impl FlatText {
    /// Whether `re` matches `c` to the lower-case ASCII letter `letter` ignoring case.
    #[inline]
    fn folds_to(&self, c: char, letter: u8) -> bool {
        if c.is_ascii() {
            c.to_ascii_lowercase() as u8 == letter
        } else {
            self.folds.contains(&(c, letter))
        }
    }

    /// The `\w` run starting at byte `at` of `s`: its characters (at most MAX_NAME + 1) and end.
    fn word_run(&self, s: &str, at: usize) -> (Vec<char>, usize) {
        let mut run = Vec::new();
        let mut end = at;
        for c in s[at..].chars() {
            if !self.word.contains(c) {
                break;
            }
            end += c.len_utf8();
            run.push(c);
            if run.len() > MAX_NAME {
                break;
            }
        }
        (run, end)
    }

    /// The name of `names` that `name\b` matches at byte `at` of `s`, with the run's characters
    /// and its end.
    fn name_at(&self, s: &str, at: usize, names: &Names) -> Option<(Vec<char>, usize)> {
        let (run, end) = self.word_run(s, at);
        if run.is_empty() || run.len() > MAX_NAME {
            return None;
        }
        let found = names
            .0
            .iter()
            .any(|name| name.len() == run.len() && run.iter().zip(name).all(|(&c, &l)| self.folds_to(c, l)));
        found.then_some((run, end))
    }

    /// Whether the characters of `s` from byte `at` match `opened` as `\1` ignoring case; their end.
    fn backref_at(&self, s: &str, at: usize, opened: &[char]) -> Option<usize> {
        let mut end = at;
        let mut chars = s[at..].chars();
        for &o in opened {
            let c = chars.next()?;
            if c != o && !self.backrefs.contains(&(o, c)) {
                return None;
            }
            end += c.len_utf8();
        }
        Some(end)
    }

    /// The end of `\s*>` at byte `at` of `s`.
    fn spaces_gt(&self, s: &str, at: usize) -> Option<usize> {
        let mut end = at;
        for c in s[at..].chars() {
            if c == '>' {
                return Some(end + 1);
            }
            if !self.space.contains(c) {
                return None;
            }
            end += c.len_utf8();
        }
        None
    }

    /// Pass 1: `_INVISIBLE_TITLE_RE.sub(" ", s)`.
    fn strip_invisible<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Splice::new(s);
        let mut i = 0;
        while let Some(off) = s[i..].find('<') {
            let p = i + off;
            let Some((opened, after)) = self.name_at(s, p + 1, &self.invisible) else {
                i = p + 1;
                continue;
            };
            // `.*?(?:</\1\s*>|\Z)`: the first closing tag, else the end.
            let mut end = s.len();
            let mut q = after;
            while let Some(off) = s[q..].find("</") {
                let close = q + off;
                if let Some(gt) = self
                    .backref_at(s, close + 2, &opened)
                    .and_then(|e| self.spaces_gt(s, e))
                {
                    end = gt;
                    break;
                }
                q = close + 1;
            }
            out.replace(p, end, " ");
            i = end;
        }
        out.finish()
    }

    /// Pass 2: `_BLOCK_TAG_RE.sub("\n", s)`.
    fn break_blocks<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let Some(last_gt) = s.rfind('>') else { return s.into() };
        let mut out = Splice::new(s);
        let mut i = 0;
        while let Some(off) = s[i..].find('<') {
            let p = i + off;
            if p >= last_gt {
                break;
            }
            let at = if s.as_bytes()[p + 1] == b'/' { p + 2 } else { p + 1 };
            match self.name_at(s, at, &self.block) {
                // `[^>]*>`: the first '>' after the name (there is one: last_gt)
                Some((_, after)) if after <= last_gt => {
                    let gt = s[after..].find('>').map_or(last_gt, |o| after + o);
                    out.replace(p, gt + 1, "\n");
                    i = gt + 1;
                }
                _ => i = p + 1,
            }
        }
        out.finish()
    }

    /// Pass 4: `extract.unescape` (`html.unescape`).
    fn unescape<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if !s.contains('&') {
            return s.into();
        }
        let mut out = Splice::new(s);
        let mut i = 0;
        while let Some(off) = s[i..].find('&') {
            let p = i + off;
            i = p + 1;
            let rest = &s.as_bytes()[p + 1..];
            let (end, replacement): (usize, Cow<str>) = if rest.first() == Some(&b'#') {
                // `#[0-9]+;?` | `#[xX][0-9a-fA-F]+;?`
                let (hex, start) = match rest.get(1) {
                    Some(b'x' | b'X') => (true, 2),
                    _ => (false, 1),
                };
                let digits = rest[start..]
                    .iter()
                    .take_while(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() })
                    .count();
                if digits == 0 {
                    // "&#x" without hex digits: "x" is no decimal digit either, and '#' no name
                    continue;
                }
                let number = &rest[start..start + digits];
                let mut end = p + 1 + start + digits;
                if s.as_bytes().get(end) == Some(&b';') {
                    end += 1;
                }
                (end, self.numeric(number, hex))
            } else {
                // `[^\t\n\f <&#;]{1,32};?`
                let mut end = p + 1;
                for c in s[p + 1..].chars().take(32) {
                    if matches!(c, '\t' | '\n' | '\x0c' | ' ' | '<' | '&' | '#' | ';') {
                        break;
                    }
                    end += c.len_utf8();
                }
                if end == p + 1 {
                    continue;
                }
                if s.as_bytes().get(end) == Some(&b';') {
                    end += 1;
                }
                match self.named(&s[p + 1..end]) {
                    Some(replacement) => (end, replacement.into()),
                    None => continue, // left as it is
                }
            };
            out.replace(p, end, &replacement);
            i = end;
        }
        out.finish()
    }

    /// `html._replace_charref` of a numeric reference (its digits); a number too large for a
    /// code point reads as one (`extract.unescape` clamps long decimal numbers the same way).
    fn numeric(&self, digits: &[u8], hex: bool) -> Cow<'_, str> {
        let radix = if hex { 16 } else { 10 };
        let mut num: u32 = 0;
        for &d in digits {
            let v = (d as char).to_digit(radix).unwrap_or(0);
            num = num.saturating_mul(radix).saturating_add(v).min(0x110000);
        }
        if let Some(text) = self.invalid_charrefs.get(&num) {
            return text.as_str().into();
        }
        if (0xD800..=0xDFFF).contains(&num) || num > 0x10FFFF {
            return "\u{FFFD}".into();
        }
        if self.invalid_codepoints.contains(&num) {
            return "".into();
        }
        char::from_u32(num).map_or("\u{FFFD}".into(), |c| c.to_string().into())
    }

    /// `html._replace_charref` of a named reference `name` (with its ';' if any): the
    /// replacement, or None when it stays as it is.
    fn named(&self, name: &str) -> Option<String> {
        if let Some(text) = self.entities.get(name) {
            return Some(text.clone());
        }
        // The longest prefix of at least 2 characters that is a name.
        let bounds: Vec<usize> = name.char_indices().map(|(i, _)| i).collect();
        for x in (2..bounds.len()).rev() {
            if let Some(text) = self.entities.get(&name[..bounds[x]]) {
                return Some(format!("{text}{}", &name[bounds[x]..]));
            }
        }
        None
    }

    /// Passes 3 and 5 around 4: tags removed, references replaced, whitespace folded.
    fn text_of(&self, s: &str) -> String {
        let mut tagless = Splice::new(s);
        let last_gt = s.rfind('>');
        let mut i = 0;
        while let Some(off) = s[i..].find('<') {
            let p = i + off;
            i = p + 1;
            let Some(last_gt) = last_gt.filter(|&g| g > p) else {
                break;
            };
            let b = s.as_bytes();
            let tag = match b.get(p + 1) {
                Some(b'!') => true,
                Some(c) if c.is_ascii_alphabetic() => true,
                Some(b'/') => b.get(p + 2).is_some_and(|c| c.is_ascii_alphabetic()),
                _ => false,
            };
            if !tag || p + 2 > last_gt {
                continue;
            }
            let gt = s[p + 2..].find('>').map_or(last_gt, |o| p + 2 + o);
            tagless.replace(p, gt + 1, "");
            i = gt + 1;
        }
        let tagless = tagless.finish();
        let text = self.unescape(&tagless);
        let mut out = String::with_capacity(text.len());
        let mut run: Option<bool> = None; // in a whitespace run: whether it holds "\n"
        for c in text.chars() {
            if self.space.contains(c) {
                run = Some(run.unwrap_or(false) || c == '\n');
                continue;
            }
            if let Some(newline) = run.take() {
                if !out.is_empty() {
                    out.push(if newline { '\n' } else { ' ' });
                }
            }
            out.push(c);
        }
        out
    }

    /// `TITLE_RE.search(html)`'s group: `<title\b[^>]*>(.*?)</title`, ignoring case.
    fn title<'a>(&self, s: &'a str) -> Option<&'a str> {
        let mut i = 0;
        while let Some(off) = s[i..].find('<') {
            let p = i + off;
            i = p + 1;
            let (run, after) = self.word_run(s, p + 1);
            if run.len() != 5 || !run.iter().zip(b"title").all(|(&c, &l)| self.folds_to(c, l)) {
                continue;
            }
            let gt = after + s[after..].find('>')?;
            let mut q = gt + 1;
            // The first "</title" after it; none: no later <title> has one either.
            loop {
                let close = q + s[q..].find("</")?;
                let mut chars = s[close + 2..].chars();
                if b"title"
                    .iter()
                    .all(|&l| chars.next().is_some_and(|c| self.folds_to(c, l)))
                {
                    return Some(&s[gt + 1..close]);
                }
                q = close + 1;
            }
        }
        None
    }
}

/// `templates.line_key` of one line already normalised (`features.normalize`): runs of `\s`
/// (`space`) as one space, none at either end, every run of `\d` (`digit`) as "0", blake2b (8 bytes,
/// little-endian). `buf` is scratch space.
pub(crate) fn line_key(space: &CharSet, digit: &CharSet, line: &str, buf: &mut String) -> u64 {
    buf.clear();
    let mut pending_space = false;
    let mut in_digits = false;
    for c in line.chars() {
        if space.contains(c) {
            pending_space = !buf.is_empty();
            in_digits = false;
            continue;
        }
        if pending_space {
            buf.push(' ');
            pending_space = false;
        }
        if digit.contains(c) {
            if !in_digits {
                buf.push('0');
                in_digits = true;
            }
            continue;
        }
        in_digits = false;
        buf.push(c);
    }
    let digest = blake2b_simd::Params::new().hash_length(8).hash(buf.as_bytes());
    u64::from_le_bytes(digest.as_bytes().try_into().expect("8 bytes"))
}

#[pymethods]
impl FlatText {
    #[new]
    #[allow(clippy::too_many_arguments)] // the arguments of a Python constructor
    fn new(
        word_ranges: Vec<(u32, u32)>,
        space_ranges: Vec<(u32, u32)>,
        digit_ranges: Vec<(u32, u32)>,
        folds: Vec<(char, char)>,
        backrefs: Vec<(char, char)>,
        invisible: Vec<String>,
        block: Vec<String>,
        entities: FxHashMap<String, String>,
        invalid_charrefs: FxHashMap<u32, String>,
        invalid_codepoints: FxHashSet<u32>,
    ) -> PyResult<Self> {
        let mut fold_set = FxHashSet::default();
        for (c, letter) in folds {
            if !letter.is_ascii_lowercase() {
                return Err(PyValueError::new_err(format!(
                    "not a lower-case ASCII letter: {letter:?}"
                )));
            }
            if !c.is_ascii() {
                fold_set.insert((c, letter as u8));
            }
        }
        Ok(FlatText {
            word: CharSet::from_ranges(&word_ranges)?,
            space: CharSet::from_ranges(&space_ranges)?,
            digit: CharSet::from_ranges(&digit_ranges)?,
            folds: fold_set,
            backrefs: backrefs.into_iter().collect(),
            invisible: Names::new(invisible)?,
            block: Names::new(block)?,
            entities,
            invalid_charrefs,
            invalid_codepoints,
        })
    }

    /// `extract.flat_text(html)` and the unescaped title group of `_flat_document` (None when
    /// there is no `<title>`), with the GIL released.
    fn document(&self, py: Python<'_>, html: &str) -> (Option<String>, String) {
        py.detach(|| {
            let title = self.title(html).map(|t| self.unescape(t).into_owned());
            let visible = self.strip_invisible(html);
            let text = self.text_of(&self.break_blocks(&visible));
            (title, text)
        })
    }

    /// `templates.line_key` of each line of `text` (already normalised), split at "\n".
    fn line_keys(&self, py: Python<'_>, text: &str) -> Vec<u64> {
        py.detach(|| {
            let mut buf = String::new();
            text.split('\n')
                .map(|line| line_key(&self.space, &self.digit, line, &mut buf))
                .collect()
        })
    }
}

/// Each pass against the Python reference: the expected values were computed once with
/// `extract.flat_text`, `extract.TITLE_RE` + `extract.unescape` and `templates._key_of` on the
/// same inputs and pasted here. The tables are the parts of Python's that the inputs use (the
/// tag names are `extract`'s own lists).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{DIGIT, SPACE, WORD};

    const INVISIBLE: &[&str] = &[
        "script", "style", "noscript", "template", "svg", "math", "textarea", "select", "object", "iframe", "title",
    ];
    #[rustfmt::skip] // rules.BLOCK, sorted
    const BLOCK: &[&str] = &[
        "address", "article", "aside", "blockquote", "body", "br", "caption", "center", "dd", "details", "dir", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "p", "pre", "section", "summary",
        "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    ];

    fn flat() -> FlatText {
        let names = |n: &[&str]| Names::new(n.iter().map(|s| s.to_string()).collect()).unwrap();
        // `\w`: `[^\W\d_]`, digits and "_"
        let mut word = WORD.to_vec();
        word.extend([
            (0x30, 0x3a),
            (0x5f, 0x60),
            (0x130, 0x132),
            (0x17f, 0x180),
            (0x212a, 0x212b),
        ]);
        // `(?i)(.)\1`'s pairs of different letters: the ASCII cases, and those `re` adds
        let mut backrefs: FxHashSet<(char, char)> = ('a'..='z')
            .flat_map(|c| [(c, c.to_ascii_uppercase()), (c.to_ascii_uppercase(), c)])
            .collect();
        for (a, b) in [('I', '\u{130}'), ('i', '\u{130}'), ('K', '\u{212a}'), ('k', '\u{212a}')] {
            backrefs.extend([(a, b), (b, a)]);
        }
        let entities = [
            ("amp;", "&"),
            ("amp", "&"),
            ("lt;", "<"),
            ("gt;", ">"),
            ("nbsp;", "\u{a0}"),
            ("copy;", "\u{a9}"),
            ("not", "\u{ac}"),
        ];
        FlatText {
            word: CharSet::from_ranges(&word).unwrap(),
            space: CharSet::from_ranges(SPACE).unwrap(),
            digit: CharSet::from_ranges(DIGIT).unwrap(),
            // re's case folds to ASCII letters: dotted I, dotless i, long s, Kelvin sign
            folds: [
                ('\u{130}', b'i'),
                ('\u{131}', b'i'),
                ('\u{17f}', b's'),
                ('\u{212a}', b'k'),
            ]
            .into_iter()
            .collect(),
            backrefs,
            invisible: names(INVISIBLE),
            block: names(BLOCK),
            entities: entities.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            invalid_charrefs: [(0, "\u{fffd}"), (0x80, "\u{20ac}")]
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect(),
            invalid_codepoints: [0x1, 0xb].into_iter().collect(),
        }
    }

    fn document(html: &str) -> (Option<String>, String) {
        let f = flat();
        let title = f.title(html).map(|t| f.unescape(t).into_owned());
        let visible = f.strip_invisible(html);
        (title, f.text_of(&f.break_blocks(&visible)))
    }

    #[test]
    fn document_is_pythons() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            (
                "<html><head><title>A &amp; B</title><script>x<y</script></head><body><p>One&nbsp;two</p>\
                 <div>Three &lt;four&gt; &#x41;&#65;&notit; &ampx</div></body></html>",
                Some("A & B"),
                "One two\nThree <four> AA\u{ac}it; &x",
            ),
            ("<TITLE>t</title ><p>a<br>b</p>", Some("t"), "a\nb"),
            (
                "no tags &copy;2024 &#0; &#x110000; &#128;",
                None,
                "no tags \u{a9}2024 \u{fffd} \u{fffd} \u{20ac}",
            ),
            (
                "<div class=x>Tea<SCRIPT>alert(\"</p>\")</script >time</DIV><style>p{}",
                None,
                "Tea time",
            ),
            ("", None, ""),
            ("<", None, "<"),
            ("&#x; &; &#;", None, "&#x; &; &#;"),
        ];
        for (html, title, text) in cases {
            let (t, x) = document(html);
            assert_eq!(t.as_deref(), *title, "{html:?}");
            assert_eq!(x, *text, "{html:?}");
        }
    }

    #[test]
    fn case_folds_match_tag_names_as_re_does() {
        // "<\u{17f}cript>" is "<script>" to `re` ignoring case (the long s folds to "s"), but its
        // back-reference does not accept "</script>", only the same long s or its case.
        assert_eq!(document("a<\u{17f}cript>hidden</script>b").1, "a");
        assert_eq!(document("a<\u{17f}cript>hidden</\u{17f}CRIPT>b").1, "a b");
        let (_, text) = document("a<scripts>x</scripts>b"); // no name: only the tag goes
        assert_eq!(text, "axb");
    }

    #[test]
    fn numeric_references_clamp_and_replace() {
        let f = flat();
        assert_eq!(f.numeric(b"65", false), "A");
        assert_eq!(f.numeric(b"d800", true), "\u{fffd}"); // a surrogate
        assert_eq!(f.numeric(&[b'9'; 40], false), "\u{fffd}"); // huge: clamped past the last code point
        assert_eq!(f.numeric(b"1", false), ""); // an invalid code point
        assert_eq!(f.named("amp"), Some("&".to_string()));
        assert_eq!(f.named("zz;"), None);
    }

    #[test]
    fn line_key_is_pythons() {
        let space = CharSet::from_ranges(SPACE).unwrap();
        let digit = CharSet::from_ranges(DIGIT).unwrap();
        let mut buf = String::new();
        let cases: [(&str, u64); 4] = [
            ("posted 12 may 2024  by  bob", 7572751373741857943),
            ("", 13020603013274838756),
            ("   ", 13020603013274838756),
            ("a1b22c", 12751964922983199405),
        ];
        for (line, key) in cases {
            assert_eq!(line_key(&space, &digit, line, &mut buf), key, "{line:?}");
        }
    }

    #[test]
    fn names_are_lower_case_ascii() {
        assert!(Names::new(vec!["p".into(), "h1".into()]).is_ok());
        assert!(Names::new(vec!["P".into()]).is_err());
        assert!(Names::new(vec![String::new()]).is_err());
    }
}
