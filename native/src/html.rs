//! The block walk of `blocks.Walker.walk`, natively, over the tree that libxml2 built for lxml,
//! and the classification of its blocks (`region._classify_base`).
//!
//! It reads the tree through `lxml.rs`'s `Node` and `Attr` (all the `unsafe` code of the reading,
//! and the invariant it rests on); the caller (`scrapy_simhash/text/native.py`) builds a walker
//! only on lxml / libxml2 versions whose layout was verified.
//!
//! It gives exactly the blocks, element numbering (parent, subtree end), landmark and budget
//! stops of the Python walk, which stays the reference (`tests/text/test_native_html.py`), and the
//! same block classes. The regular expressions stay Python's: the class/id and `display:none`
//! tests are called back once per distinct string (answers kept here, bounded), the boilerplate
//! and metadata-line tests only for the blocks that may match them; what the walk does not handle (a namespaced element, an
//! entity reference node, text that is not UTF-8, a comment in a flattened subtree) gives
//! `Unsupported`, and the caller runs the Python walk.

use std::borrow::Cow;
use std::ffi::c_int;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::lxml::{self, Attr, Node, CDATA, COMMENT, ELEMENT, ENTITY_REF, PI, TEXT, XINCLUDE_END, XINCLUDE_START};
use crate::CharSet;

/// `region._classify_base`'s classes (`GOOD`, `SHORT`, `LINKS`, `META`; -2: not classified
/// here, a block with full-width letters or digits) and thresholds.
const GOOD: i8 = 2;
const SHORT: i8 = 1;
const LINKS: i8 = 0;
const META: i8 = -1;
const UNCLASSIFIED: i8 = -2;

/// Flags of `extract.IN_CHROME_TAG` / `IN_CHROME_CLASS`.
const IN_CHROME_TAG: u8 = 1;
const IN_CHROME_CLASS: u8 = 2;
/// `blocks.Walker.walk` flattens the rest below this depth.
const MAX_DEPTH: u32 = 200;
/// Bounds of the answers kept per predicate (as `blocks._NEGATIVE_CACHE`).
const MEMO_ENTRIES: usize = 50_000;
const MEMO_CHARS: usize = 4 << 20;
/// The bounds of `HtmlWalker::text_memo` (block texts: longer, more of them distinct).
const TEXT_MEMO_ENTRIES: usize = 20_000;
const TEXT_MEMO_CHARS: usize = 1 << 20;

type TagSet = FxHashSet<Box<[u8]>>;

fn tag_set(tags: Vec<String>) -> TagSet {
    tags.into_iter().map(|t| t.into_bytes().into_boxed_slice()).collect()
}

/// Why the walk stopped early: the Python walk's `Budget` reasons, or something it does not handle.
enum Stop {
    Large,
    Budget,
    Unsupported(&'static str),
    Py(PyErr),
}

impl From<PyErr> for Stop {
    fn from(e: PyErr) -> Self {
        Stop::Py(e)
    }
}

type Res<T> = Result<T, Stop>;

/// Answers of a predicate over strings, kept per distinct string (bounded).
struct Memo<V = bool> {
    answers: FxHashMap<String, V>,
    chars: usize,
}

impl<V> Memo<V> {
    fn new() -> Self {
        Memo {
            answers: FxHashMap::default(),
            chars: 0,
        }
    }

    /// Keeps `value` for `key`, emptied first when it would hold more than `entries` keys or
    /// `chars` bytes of them.
    fn keep(&mut self, key: &str, value: V, entries: usize, chars: usize) {
        if self.answers.len() >= entries || self.chars + key.len() > chars {
            self.answers.clear();
            self.chars = 0;
        }
        self.chars += key.len();
        self.answers.insert(key.to_owned(), value);
    }
}

fn ask(memo: &Mutex<Memo>, predicate: &Bound<'_, PyAny>, key: &str) -> PyResult<bool> {
    remembered(memo, key, || predicate.call1((key,))?.is_truthy())
}

/// The answer for `key` kept in `memo`, else `answer()`'s, kept.
fn remembered<V: Copy>(memo: &Mutex<Memo<V>>, key: &str, answer: impl FnOnce() -> PyResult<V>) -> PyResult<V> {
    if let Some(&found) = memo.lock().unwrap().answers.get(key) {
        return Ok(found);
    }
    let found = answer()?;
    memo.lock().unwrap().keep(key, found, MEMO_ENTRIES, MEMO_CHARS);
    Ok(found)
}

fn utf8(bytes: &[u8]) -> Res<&str> {
    std::str::from_utf8(bytes).map_err(|_| Stop::Unsupported("text that is not UTF-8"))
}

/// lxml's `_textNodeOrSkip`: the node if it is text, skipping XInclude markers; else `None`.
fn text_node_or_skip(mut node: Option<Node<'_>>) -> Option<Node<'_>> {
    while let Some(n) = node {
        match n.kind() {
            TEXT | CDATA => return Some(n),
            XINCLUDE_START | XINCLUDE_END => node = n.next(),
            _ => return None,
        }
    }
    None
}

/// lxml's `_collectText`: the adjacent text nodes from `node` joined (`.text` of a parent's
/// first child, `.tail` of an element's next sibling); `None` when there is none.
fn collect_text<'t>(node: Option<Node<'t>>) -> Res<Option<Cow<'t, str>>> {
    let Some(first) = text_node_or_skip(node) else {
        return Ok(None);
    };
    if text_node_or_skip(first.next()).is_none() {
        return Ok(Some(Cow::Borrowed(utf8(first.content())?)));
    }
    let mut out = Vec::new();
    let mut cur = Some(first);
    while let Some(n) = cur {
        out.extend_from_slice(n.content());
        cur = text_node_or_skip(n.next());
    }
    String::from_utf8(out)
        .map(|s| Some(Cow::Owned(s)))
        .map_err(|_| Stop::Unsupported("text that is not UTF-8"))
}

/// The value of attribute `a` as lxml's `el.get(name)` gives it (libxml2's `xmlGetNsProp`):
/// `None` for no attribute, `""` for an attribute without value.
fn attr_value(a: Option<Attr<'_>>) -> Res<Option<Cow<'_, str>>> {
    let Some(a) = a else {
        return Ok(None);
    };
    let Some(first) = a.children() else {
        return Ok(Some(Cow::Borrowed("")));
    };
    if first.next().is_none() && matches!(first.kind(), TEXT | CDATA) {
        return Ok(Some(Cow::Borrowed(utf8(first.content())?)));
    }
    let mut out = Vec::new();
    let mut child = Some(first);
    while let Some(c) = child {
        if c.kind() != TEXT {
            return Err(Stop::Unsupported("an attribute value with entity references"));
        }
        out.extend_from_slice(c.content());
        child = c.next();
    }
    String::from_utf8(out)
        .map(|s| Some(Cow::Owned(s)))
        .map_err(|_| Stop::Unsupported("text that is not UTF-8"))
}

/// `blocks._wraps_paragraphs`: at least `wanted` <p>/<br> below the element (at least one
/// when `wanted` is 0, as Python's loop).
fn wraps_paragraphs(node: Node<'_>, wanted: usize) -> bool {
    let wanted = wanted.max(1);
    let mut count = 0;
    let mut stack = Vec::new();
    let mut cur = node.children();
    loop {
        while let Some(c) = cur {
            if c.kind() == ELEMENT {
                if c.is_paragraph() {
                    count += 1;
                    if count >= wanted {
                        return true;
                    }
                }
                if c.children().is_some() {
                    stack.push(c.next());
                    cur = c.children();
                    continue;
                }
            }
            cur = c.next();
        }
        match stack.pop() {
            Some(next) => cur = next,
            None => return false,
        }
    }
}

/// A class/id test of `extract` (`cached_search` of `_NEGATIVE_RE` or `META_CLASS_RE`, built by
/// `_class_words_re`), on the lower-cased string: one of `words` anywhere, or one of `tokens` after
/// the start, white space (`\s`), `_` or `-`, and before the end, white space, a digit (`\d`), `_`
/// or `-`, where the text up to the token's end does not end with one of `not_after`. The words
/// are ASCII, so a byte search in the UTF-8 text is a character search.
struct ClassWords {
    words: WordTable,
    tokens: WordTable,
    not_after: Vec<Box<[u8]>>,
}

/// ASCII words, and for each first byte the words that start with it and the second bytes they
/// may go on with (a bit each; all of them where a word is that one byte).
struct WordTable {
    words: Vec<Box<[u8]>>,
    starts: Vec<Vec<u16>>,
    seconds: Vec<[u64; 4]>,
}

impl WordTable {
    fn new(list: Vec<String>) -> PyResult<Self> {
        let mut starts = vec![Vec::new(); 256];
        let mut seconds = vec![[0u64; 4]; 256];
        let mut words = Vec::with_capacity(list.len());
        for (i, w) in list.into_iter().enumerate() {
            if w.is_empty() || !w.is_ascii() || i > u16::MAX as usize {
                return Err(PyValueError::new_err(format!("not a class word: {w:?}")));
            }
            let bytes = w.as_bytes();
            starts[bytes[0] as usize].push(i as u16);
            match bytes.get(1) {
                Some(&b) => seconds[bytes[0] as usize][b as usize >> 6] |= 1 << (b & 63),
                None => seconds[bytes[0] as usize] = [u64::MAX; 4],
            }
            words.push(w.into_bytes().into_boxed_slice());
        }
        Ok(WordTable { words, starts, seconds })
    }

    /// The words that `rest` starts with (`first`: its first byte, an ASCII character).
    #[inline]
    fn at<'a>(&'a self, first: char, rest: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        // (a word of one byte matches whatever comes next, or nothing: all bits set)
        let second = rest
            .get(1)
            .is_none_or(|&b| self.seconds[first as usize][b as usize >> 6] >> (b & 63) & 1 != 0);
        let candidates: &[u16] = if second { &self.starts[first as usize] } else { &[] };
        candidates
            .iter()
            .map(|&w| &*self.words[w as usize])
            .filter(move |w| rest.starts_with(w))
    }
}

impl ClassWords {
    fn new(words: Vec<String>, tokens: Vec<String>, not_after: Vec<String>) -> PyResult<Self> {
        Ok(ClassWords {
            words: WordTable::new(words)?,
            tokens: WordTable::new(tokens)?,
            not_after: not_after
                .into_iter()
                .map(|w| w.into_bytes().into_boxed_slice())
                .collect(),
        })
    }

    /// Whether one of the words starts at byte `i` (character `c`, ASCII) of the lower-cased
    /// `text`, or one of the tokens (`after_boundary`: at the start, or after white space, '_' or
    /// '-').
    #[inline]
    fn at(&self, text: &str, i: usize, c: char, after_boundary: bool, space: &CharSet, digit: &CharSet) -> bool {
        let rest = &text.as_bytes()[i..];
        if self.words.at(c, rest).next().is_some() {
            return true;
        }
        if after_boundary {
            for token in self.tokens.at(c, rest) {
                let end = i + token.len();
                if self.not_after.iter().any(|w| text.as_bytes()[..end].ends_with(w)) {
                    continue;
                }
                match text[end..].chars().next() {
                    None => return true,
                    Some(n) if n == '_' || n == '-' || space.contains(n) || digit.contains(n) => return true,
                    Some(_) => {}
                }
            }
        }
        false
    }
}

/// `NEGATIVE_CLASS` if `text`, lower-cased as Python's `str.lower` does, holds a word or a token
/// of `negative`, `META_CLASS` if of `meta`: one pass over the lower case (made in `lower`).
fn class_words_of(
    negative: &ClassWords,
    meta: &ClassWords,
    text: &str,
    space: &CharSet,
    digit: &CharSet,
    lower: &mut String,
) -> u8 {
    let unicode;
    let low: &str = if text.is_ascii() {
        lower.clear();
        lower.push_str(text);
        lower.make_ascii_lowercase();
        lower
    } else {
        unicode = text.to_lowercase();
        &unicode
    };
    let (mut is_negative, mut is_meta) = (false, false);
    let mut after_boundary = true;
    for (i, c) in low.char_indices() {
        if c.is_ascii() {
            is_negative = is_negative || negative.at(low, i, c, after_boundary, space, digit);
            is_meta = is_meta || meta.at(low, i, c, after_boundary, space, digit);
            if is_negative && is_meta {
                break;
            }
        }
        after_boundary = c == '_' || c == '-' || space.contains(c);
    }
    (if is_negative { NEGATIVE_CLASS } else { 0 }) | (if is_meta { META_CLASS } else { 0 })
}

// What the walk asks of an element's or an attribute's name, read once from its bytes
// (`HtmlWalker::name_bits`) and kept per name pointer (`Names`).
const N_BLOCK: u16 = 1 << 0;
const N_INVISIBLE: u16 = 1 << 1;
const N_CHROME_TAG: u16 = 1 << 2;
/// A block other than <body>, <html> and <br>: its class/id may make it chrome.
const N_CLASS_CHROME: u16 = 1 << 3;
const N_MAIN: u16 = 1 << 4;
const N_A: u16 = 1 << 5;
const N_TIME: u16 = 1 << 6;
/// <body>, <html>
const N_PAGE: u16 = 1 << 7;
const N_CLASS: u16 = 1 << 8;
const N_ID: u16 = 1 << 9;
const N_STYLE: u16 = 1 << 10;
const N_HIDDEN: u16 = 1 << 11;
const N_ROLE: u16 = 1 << 12;

/// The bits of the class/id answers kept in `HtmlWalker::class_memo`.
const NEGATIVE_CLASS: u8 = 1;
const META_CLASS: u8 = 2;

const NAME_SLOTS: usize = 256;
const NAME_FILL: usize = 192;

/// The `name_bits` of the names met in one walk, by the name's address: libxml2's HTML parser
/// keeps one copy of each name in the document's dictionary, so a walk meets few addresses. The
/// tree does not change during the walk (the GIL is held), so the string at an address does not
/// either: the bits kept for it are its bits. Past `NAME_FILL` names, the rest are read each time.
struct Names {
    keys: [usize; NAME_SLOTS],
    bits: [u16; NAME_SLOTS],
    len: usize,
}

impl Names {
    fn new() -> Self {
        Names {
            keys: [0; NAME_SLOTS],
            bits: [0; NAME_SLOTS],
            len: 0,
        }
    }
}

/// An element's attributes that the walk reads (the first of each name without namespace, as
/// lxml's `get(name)`); `None` where absent.
#[derive(Clone, Copy)]
struct Attrs<'t> {
    class: Option<Attr<'t>>,
    id: Option<Attr<'t>>,
    style: Option<Attr<'t>>,
    hidden: Option<Attr<'t>>,
    role: Option<Attr<'t>>,
}

const NO_ATTRS: Attrs<'static> = Attrs {
    class: None,
    id: None,
    style: None,
    hidden: None,
    role: None,
};

/// What `chrome` found out about an element, for its walk: its name's bits, its attributes, and
/// its class/id answers once read (`None`: not yet; `Some(None)`: neither class nor id).
#[derive(Clone, Copy)]
struct Seen<'t> {
    bits: u16,
    attrs: Attrs<'t>,
    class: Option<Option<u8>>,
}

struct Walk<'a, 'py, 't> {
    walker: &'a HtmlWalker,
    display_none: &'a Bound<'py, PyAny>,
    /// (text, links, owner, meta, flags, characters), the text where it lies in `texts`
    blocks: Vec<(std::ops::Range<usize>, usize, u32, usize, u8, usize)>,
    texts: String,
    parent: Vec<u32>,
    end: Vec<u32>,
    /// The pieces of the current block, joined; `started`: `bool(self.pieces)`.
    pieces: String,
    started: bool,
    links: usize,
    owner: u32,
    in_meta: u32,
    meta: usize,
    flags: u8,
    landmark: i64,
    deadline: Option<Instant>,
    next_check: usize,
    max_blocks: usize,
    step: usize,
    /// The last element found to hold fewer than `wrapper_paragraphs` <p>/<br>, and how many
    /// such elements the walk is inside: an element inside one holds fewer too.
    few_paragraphs: Option<Node<'t>>,
    in_few: u32,
    /// The last element whose `wraps_paragraphs` was read, and the answer (its chrome and its
    /// metadata test both ask).
    last_wraps: (Option<Node<'t>>, bool),
    names: Names,
    /// The class/id string being looked up, and its lower case (buffers for the walk).
    key: String,
    lower: String,
    /// Whether a comment or processing instruction below the root may split a text run
    /// (`comment_runs` of the whole tree, read as the walk goes).
    comments: bool,
}

impl<'t> Walk<'_, '_, 't> {
    /// `wraps_paragraphs` of `node`, without reading the subtree of an element inside one
    /// that holds fewer.
    fn wraps_paragraphs(&mut self, node: Node<'t>) -> bool {
        if self.in_few > 0 || Some(node) == self.few_paragraphs {
            return false;
        }
        if self.last_wraps.0 == Some(node) {
            return self.last_wraps.1;
        }
        let wraps = wraps_paragraphs(node, self.walker.wrapper_paragraphs);
        if !wraps {
            self.few_paragraphs = Some(node);
        }
        self.last_wraps = (Some(node), wraps);
        wraps
    }

    /// `HtmlWalker::name_bits` of `name`, kept by its address `key` (`Node::name_key`).
    #[inline]
    fn name(&mut self, key: usize, name: &[u8]) -> u16 {
        if key == 0 {
            return self.walker.name_bits(b"");
        }
        let names = &mut self.names;
        let mut i = ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize;
        loop {
            let k = names.keys[i];
            if k == key {
                return names.bits[i];
            }
            if k == 0 {
                break;
            }
            i = (i + 1) % NAME_SLOTS;
        }
        let bits = self.walker.name_bits(name);
        if names.len < NAME_FILL {
            names.keys[i] = key;
            names.bits[i] = bits;
            names.len += 1;
        }
        bits
    }

    /// The element's name bits (only elements without namespace are handled).
    #[inline]
    fn tag_bits(&mut self, node: Node<'t>) -> Res<u16> {
        if node.has_ns() {
            return Err(Stop::Unsupported("a namespaced element"));
        }
        Ok(self.name(node.name_key(), node.name()))
    }

    /// The attributes the walk reads, in one pass over the element's attributes.
    fn attrs(&mut self, node: Node<'t>) -> Attrs<'t> {
        let mut out = NO_ATTRS;
        let mut next = node.attrs();
        while let Some(a) = next {
            if a.kind() == lxml::ATTRIBUTE && !a.has_ns() {
                let bits = self.name(a.name_key(), a.name());
                let slot = match bits & (N_CLASS | N_ID | N_STYLE | N_HIDDEN | N_ROLE) {
                    N_CLASS => &mut out.class,
                    N_ID => &mut out.id,
                    N_STYLE => &mut out.style,
                    N_HIDDEN => &mut out.hidden,
                    N_ROLE => &mut out.role,
                    _ => {
                        next = a.next();
                        continue;
                    }
                };
                if slot.is_none() {
                    *slot = Some(a);
                }
            }
            next = a.next();
        }
        out
    }

    /// The class/id answers of an element (`NEGATIVE_CLASS`, `META_CLASS`) of
    /// `f"{el.get('class') or ''} {el.get('id') or ''}"`; `None` when it has neither.
    fn class_answers(&mut self, attrs: &Attrs<'t>) -> Res<Option<u8>> {
        let class = attr_value(attrs.class)?;
        let id = attr_value(attrs.id)?;
        if class.is_none() && id.is_none() {
            return Ok(None);
        }
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push_str(class.as_deref().unwrap_or(""));
        key.push(' ');
        key.push_str(id.as_deref().unwrap_or(""));
        let w = self.walker;
        let lower = &mut self.lower;
        let answers = remembered(&w.class_memo, &key, || {
            Ok(class_words_of(
                &w.negative,
                &w.meta_class,
                &key,
                &w.space,
                &w.digit,
                lower,
            ))
        });
        self.key = key;
        Ok(Some(answers?))
    }

    fn is_space(&self, c: char) -> bool {
        self.walker.space.contains(c)
    }

    /// `len(text.strip())`
    fn strip_len(&self, text: &str) -> usize {
        if text.is_ascii() {
            let space = &self.walker.ascii_space;
            let bytes = text.as_bytes();
            return match bytes.iter().position(|&b| !space[b as usize]) {
                Some(start) => bytes
                    .iter()
                    .rposition(|&b| !space[b as usize])
                    .map_or(0, |end| end + 1 - start),
                None => 0,
            };
        }
        let t = text.trim_matches(|c| self.is_space(c));
        t.chars().count()
    }

    /// Whether all of `text` is white space (ASCII bytes by the table, as long as they last).
    fn all_space(&self, text: &str) -> bool {
        let space = &self.walker.ascii_space;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            if b >= 128 {
                return text[i..].chars().all(|c| self.is_space(c));
            }
            if !space[b as usize] {
                return false;
            }
        }
        true
    }

    fn add(&mut self, text: &str, idx: u32, in_link: bool) {
        if !self.started {
            if !text.is_empty() && self.all_space(text) {
                return;
            }
            self.owner = idx;
            self.started = true;
        }
        self.pieces.push_str(text);
        if in_link {
            self.links += self.strip_len(text);
        }
        if self.in_meta > 0 {
            self.meta += self.strip_len(text);
        }
    }

    fn flush(&mut self) {
        if !self.started {
            return;
        }
        self.started = false;
        // the block's text goes at the end of `texts`
        let start = self.texts.len();
        let text = &mut self.texts;
        let size = if self.pieces.is_ascii() {
            // by the table: an ASCII character is its byte
            let space = &self.walker.ascii_space;
            for word in self
                .pieces
                .split(|c: char| space[c as usize & 127])
                .filter(|w| !w.is_empty())
            {
                if text.len() > start {
                    text.push(' ');
                }
                text.push_str(word);
            }
            text.len() - start
        } else {
            join_words(&self.pieces, &self.walker.space, text)
        };
        self.pieces.clear();
        if self.texts.len() > start {
            self.blocks.push((
                start..self.texts.len(),
                self.links.min(size),
                self.owner,
                self.meta.min(size),
                self.flags,
                size,
            ));
        }
        self.links = 0;
        self.meta = 0;
    }

    fn check_budget(&mut self) -> Res<()> {
        self.next_check = self.parent.len() + self.step;
        if self.blocks.len() > self.max_blocks {
            return Err(Stop::Large);
        }
        if self.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Stop::Budget);
        }
        Ok(())
    }

    /// `Walker.chrome`: the chrome flag an element adds; -1 for an invisible one. What it read
    /// of the element is kept in `seen` for the element's walk. The class flag is left to the
    /// caller: `true` when the class/id says chrome, then the flag is `IN_CHROME_CLASS` unless the
    /// element wraps paragraphs.
    fn chrome(&mut self, node: Node<'t>, seen: &mut Seen<'t>) -> Res<(i8, bool)> {
        let bits = seen.bits;
        if bits & N_INVISIBLE != 0 {
            return Ok((-1, false));
        }
        let flag = if bits & N_CHROME_TAG != 0 {
            IN_CHROME_TAG as i8
        } else {
            0
        };
        if node.attrs().is_none() {
            seen.class = Some(None);
            return Ok((flag, false));
        }
        let attrs = self.attrs(node);
        seen.attrs = attrs;
        if attrs.hidden.is_some() {
            return Ok((-1, false));
        }
        if let Some(style) = attr_value(attrs.style)? {
            if style.contains("none") && ask(&self.walker.style_memo, self.display_none, &style)? {
                return Ok((-1, false));
            }
        }
        let mut class = false;
        if bits & N_CLASS_CHROME != 0 {
            let answers = self.class_answers(&attrs)?;
            seen.class = Some(answers);
            class = answers.is_some_and(|a| a & NEGATIVE_CLASS != 0);
        }
        Ok((flag, class))
    }

    /// `blocks._is_meta_element`
    fn is_meta_element(&mut self, node: Node<'t>, seen: &Seen<'t>) -> Res<bool> {
        let meta = if seen.bits & N_TIME != 0 {
            true
        } else if seen.bits & (N_PAGE | N_A) != 0 {
            return Ok(false);
        } else {
            let answers = match seen.class {
                Some(answers) => answers,
                None => self.class_answers(&seen.attrs)?,
            };
            match answers {
                None => return Ok(false),
                Some(a) => a & META_CLASS != 0,
            }
        };
        Ok(meta && !self.wraps_paragraphs(node))
    }

    /// The walk of an element whose chrome flag is `flag` (> 0: chrome, 0: none).
    fn enter(&mut self, node: Node<'t>, seen: Seen<'t>, flag: i8, parent: u32, in_link: bool, depth: u32) -> Res<()> {
        if flag == 0 || self.flags & flag as u8 == flag as u8 {
            return self.walk(node, Some(seen), parent, in_link, depth);
        }
        // Entering chrome: its text never shares a block with text outside it.
        if self.started {
            self.flush();
        }
        let outer = self.flags;
        self.flags = outer | flag as u8;
        self.walk(node, Some(seen), parent, in_link, depth)?;
        if self.started {
            self.flush();
        }
        self.flags = outer;
        Ok(())
    }

    /// `Walker.walk` of `node`; `seen`: what `chrome` read of it (`None` for the root).
    fn walk(&mut self, node: Node<'t>, seen: Option<Seen<'t>>, parent: u32, mut in_link: bool, depth: u32) -> Res<()> {
        let idx = self.parent.len();
        if idx >= self.next_check {
            self.check_budget()?;
        }
        let idx32 = idx as u32;
        self.parent.push(parent);
        self.end.push(0);
        let seen = match seen {
            Some(seen) => seen,
            None => {
                let bits = self.tag_bits(node)?;
                Seen {
                    bits,
                    attrs: self.attrs(node),
                    class: None,
                }
            }
        };
        let block = seen.bits & N_BLOCK != 0;
        if block && self.started {
            self.flush();
        }
        if self.landmark < 0 && (seen.bits & N_MAIN != 0 || attr_value(seen.attrs.role)?.as_deref() == Some("main")) {
            self.landmark = idx as i64;
        }
        if seen.bits & N_A != 0 {
            in_link = true;
        }
        let meta = self.is_meta_element(node, &seen)?;
        if meta {
            self.in_meta += 1;
        }
        // (after both of this element's own tests, which may have read its subtree)
        let few = self.in_few == 0 && self.few_paragraphs == Some(node);
        if few {
            self.in_few += 1;
        }
        if let Some(text) = collect_text(node.children())? {
            if !text.is_empty() {
                self.add(&text, idx32, in_link);
            }
        }
        if depth < MAX_DEPTH {
            let mut next = node.children();
            while let Some(child) = next {
                match child.kind() {
                    ELEMENT => {
                        let mut seen = Seen {
                            bits: self.tag_bits(child)?,
                            attrs: NO_ATTRS,
                            class: None,
                        };
                        let (flag, class) = self.chrome(child, &mut seen)?;
                        if flag >= 0 {
                            let flag = if class && !self.wraps_paragraphs(child) {
                                flag | IN_CHROME_CLASS as i8
                            } else {
                                flag
                            };
                            self.enter(child, seen, flag, idx32, in_link, depth + 1)?;
                        } else if !self.comments {
                            // skipped with its content: its comments are read here
                            self.comments = comment_runs(child);
                        }
                    }
                    COMMENT | PI => {
                        if !self.comments {
                            self.comments = comment_splits_at(child);
                        }
                    }
                    ENTITY_REF => return Err(Stop::Unsupported("an entity reference node")),
                    _ => {
                        next = child.next();
                        continue; // text (collected as .text or .tail) and nodes lxml does not iterate
                    }
                }
                if let Some(tail) = collect_text(child.next())? {
                    if !tail.is_empty() {
                        self.add(&tail, idx32, in_link);
                    }
                }
                next = child.next();
            }
        } else {
            // absurdly deep markup: flatten the rest (" ".join(el.itertext()))
            if !self.comments {
                self.comments = comment_runs(node);
            }
            let mut items = Vec::new();
            itertext(node, &mut items)?;
            let joined = items.join(" ");
            self.add(&joined, idx32, in_link);
        }
        if meta {
            self.in_meta -= 1;
        }
        if block && self.started {
            self.flush();
        }
        self.end[idx] = self.parent.len() as u32;
        if few {
            self.in_few -= 1;
        }
        Ok(())
    }
}

/// lxml's `itertext()` of an element made of elements and text only: its text, then each
/// child's text (recursively) and tail, "" items included.
fn itertext(node: Node<'_>, items: &mut Vec<String>) -> Res<()> {
    if let Some(text) = collect_text(node.children())? {
        items.push(text.into_owned());
    }
    let mut next = node.children();
    while let Some(child) = next {
        match child.kind() {
            ELEMENT => {
                if child.has_ns() {
                    return Err(Stop::Unsupported("a namespaced element"));
                }
                itertext(child, items)?;
                if let Some(tail) = collect_text(child.next())? {
                    items.push(tail.into_owned());
                }
            }
            TEXT | CDATA => {}
            _ => return Err(Stop::Unsupported("a node other than text or element below depth 200")),
        }
        next = child.next();
    }
    Ok(())
}

/// A few characters: the ASCII ones a bit each, the others listed.
struct CharTable {
    ascii: [bool; 128],
    /// The others, and a bit for each of their code points modulo 64 (most characters out at once).
    other: Vec<char>,
    other_bits: u64,
}

impl CharTable {
    fn new(chars: impl IntoIterator<Item = char>) -> Self {
        let mut table = CharTable {
            ascii: [false; 128],
            other: Vec::new(),
            other_bits: 0,
        };
        for c in chars {
            if c.is_ascii() {
                table.ascii[c as usize] = true;
            } else if !table.other.contains(&c) {
                table.other.push(c);
                table.other_bits |= 1 << (c as u32 & 63);
            }
        }
        table
    }

    #[inline]
    fn contains(&self, c: char) -> bool {
        if c.is_ascii() {
            self.ascii[c as usize]
        } else {
            self.other_bits >> (c as u32 & 63) & 1 != 0 && self.other.contains(&c)
        }
    }
}

/// What the classification of a block reads of its characters, in one pass (`text_facts`).
struct Facts {
    /// `weight(text)`
    weight: Option<usize>,
    /// Its characters in `punct`.
    punct: usize,
    /// Whether it has a character of `digit`, one of the four `is_lookalike`.
    digit: bool,
    lookalike: bool,
}

/// `Facts` of `text` (the others than `weight` only where `weight` is not `None`).
fn text_facts(text: &str, punct: &CharTable, digit: &CharSet) -> Facts {
    if text.is_ascii() {
        let bytes = text.as_bytes();
        return Facts {
            weight: Some(bytes.len()),
            punct: bytes.iter().filter(|&&b| punct.ascii[b as usize]).count(),
            digit: bytes.iter().any(|&b| digit.contains(b as char)),
            lookalike: false,
        };
    }
    let mut facts = Facts {
        weight: None,
        punct: 0,
        digit: false,
        lookalike: false,
    };
    // `weight`'s loop
    let mut size = 0;
    let mut light = 0;
    let mut dense_script = false;
    for c in text.chars() {
        if full_width_alnum(c) {
            return facts;
        }
        size += 1;
        if cjk_char(c) {
            dense_script = true;
        } else if !any_punct(c) {
            light += 1;
        }
        facts.punct += usize::from(punct.contains(c));
        facts.digit |= digit.contains(c);
        facts.lookalike |= is_lookalike(c);
    }
    facts.weight = Some(if dense_script { 3 * size - 2 * light } else { size });
    facts
}

/// `text.to_ascii_lowercase()`, made once when first asked, in a buffer kept between blocks.
struct Lower<'a> {
    text: &'a str,
    buf: &'a mut String,
    done: bool,
}

impl Lower<'_> {
    fn get(&mut self) -> &str {
        if !self.done {
            self.buf.clear();
            self.buf.push_str(self.text);
            self.buf.make_ascii_lowercase();
            self.done = true;
        }
        self.buf
    }
}

/// `region._ASCII_LETTER_LOOKALIKE_RE`: the only characters that `re` matches with an ASCII
/// letter case-insensitively or whose `str.lower()` holds one.
#[inline]
fn is_lookalike(c: char) -> bool {
    matches!(c, '\u{130}' | '\u{131}' | '\u{17f}' | '\u{212a}')
}

// `blocks._CJK_SPACE_RE`'s classes: Han and kana; punctuation of both widths and CJK symbols.
#[inline]
fn han_kana(c: char) -> bool {
    matches!(c, '\u{2e80}'..='\u{2fff}' | '\u{3040}'..='\u{9fff}' | '\u{f900}'..='\u{faff}')
}

#[inline]
fn any_punct(c: char) -> bool {
    matches!(
        c,
        '!'..='/'
            | ':'..='@'
            | '['..='`'
            | '{'..='~'
            | '\u{ff01}'..='\u{ff0f}'
            | '\u{ff1a}'..='\u{ff20}'
            | '\u{ff3b}'..='\u{ff40}'
            | '\u{ff5b}'..='\u{ff65}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
    )
}

#[inline]
fn space_punct(c: char) -> bool {
    any_punct(c) || ('\u{3000}'..='\u{303f}').contains(&c)
}

/// Whether `blocks._CJK_SPACE_RE` takes out a single space between `p` and `n`.
#[inline]
fn cjk_space_goes(p: char, n: char) -> bool {
    // (each alternative needs a Han or kana character: none between ASCII characters)
    !(p.is_ascii() && n.is_ascii())
        && ((han_kana(p) && (han_kana(n) || space_punct(n))) || (space_punct(p) && han_kana(n)))
}

/// `blocks._CJK_SPACE_RE.sub("", " ".join(pieces.split()))` (`split` at the characters of
/// `space`) written to `text`; returns its characters. A space goes where the regular expression
/// takes it out: between the last character of a word and the first of the next.
fn join_words(pieces: &str, space: &CharSet, text: &mut String) -> usize {
    let mut size = 0;
    let mut last = None; // the last character so far
    for word in pieces.split(|c| space.contains(c)).filter(|w| !w.is_empty()) {
        if let (Some(p), Some(n)) = (last, word.chars().next()) {
            if !cjk_space_goes(p, n) {
                text.push(' ');
                size += 1;
            }
        }
        text.push_str(word);
        size += word.chars().count();
        last = word.chars().next_back();
    }
    size
}

// `blocks.CJK` and Hangul: `CJK_CHAR_RE`; with punctuation of both widths: `_DENSE_RE`.
#[inline]
fn cjk_char(c: char) -> bool {
    matches!(c, '\u{2e80}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{ac00}'..='\u{d7af}')
}

/// Full-width letters and digits (`fold` normalises a text with one).
#[inline]
fn full_width_alnum(c: char) -> bool {
    matches!(c, '\u{ff10}'..='\u{ff19}' | '\u{ff21}'..='\u{ff3a}' | '\u{ff41}'..='\u{ff5a}')
}

/// `extract.weight(extract.fold(text))`, or `None` when `fold` would normalise (full-width
/// letters or digits: NFKC is Python's, by its Unicode tables): the reference that the tests hold
/// `text_facts`'s weight to (the walk reads it there, with the block's other facts, in one pass).
#[cfg(test)]
fn weight(text: &str) -> Option<usize> {
    if text.is_ascii() {
        return Some(text.len());
    }
    let mut size = 0;
    let mut light = 0; // characters that are not dense
    let mut dense_script = false;
    for c in text.chars() {
        if full_width_alnum(c) {
            return None;
        }
        size += 1;
        if cjk_char(c) {
            dense_script = true;
        } else if !any_punct(c) {
            light += 1;
        }
    }
    Some(if dense_script { 3 * size - 2 * light } else { size })
}

/// The native block walk and block classification: `HtmlWalker(lxml.etree._Element,
/// space_ranges, digit_ranges, rules)`: `\s` and `\d` as code point ranges, and `text.rules`' tag
/// sets, thresholds, character sets, class/id words (`negative`, `meta_class`: `(words, tokens)`,
/// and `negative_not_after`, see `ClassWords`) and the predicates over style and block strings, as
/// one mapping.
#[pyclass(frozen, module = "scrapy_simhash_native")]
pub struct HtmlWalker {
    /// `lxml.etree._Element`: the only type read as `LxmlElement`.
    element_type: Py<PyAny>,
    space: CharSet,
    /// `rules.BLOCK`, `_INVISIBLE`, `_CHROME_TAGS`, `_WRAPPER_PARAGRAPHS`
    block: TagSet,
    invisible: TagSet,
    chrome_tags: TagSet,
    wrapper_paragraphs: usize,
    /// `blocks._NEGATIVE_RE`, `META_CLASS_RE`
    negative: ClassWords,
    meta_class: ClassWords,
    display_none: Py<PyAny>,
    /// class/id string -> `NEGATIVE_CLASS` | `META_CLASS`
    class_memo: Mutex<Memo<u8>>,
    style_memo: Mutex<Memo>,
    /// block text -> the answers of `boilerplate_any`, `boilerplate_start` and `meta_text` asked
    /// so far (`HtmlWalker::asked`), the Python predicates being pure functions of the text: a
    /// site's bylines, datelines and footers recur on its pages.
    text_memo: Mutex<Memo<u8>>,
    /// `region._classify_base`'s character sets and suffixes (`PUNCT_RE`, `_SENTENCE_END`,
    /// `_ELLIPSES`) and its text predicates (`is_boilerplate`, `BOILERPLATE_RE.match`,
    /// `is_meta_text`), called only where the answer is not decided here.
    punct: CharTable,
    sentence_end: CharTable,
    /// Whether each ASCII character is in `space`.
    ascii_space: [bool; 128],
    /// `\d`, `_META_KEYWORDS_SORTED`, `_META_HAN_KEYWORD_RE`'s words: `_meta_says`.
    digit: CharSet,
    meta_keywords: Vec<String>,
    meta_han_keywords: Vec<String>,
    ellipses: Vec<String>,
    /// `ellipses` as a tuple, for `str.endswith`.
    ellipses_tuple: Py<PyTuple>,
    boilerplate_any: Py<PyAny>,
    boilerplate_start: Py<PyAny>,
    meta_text: Py<PyAny>,
    /// `text.rules`' thresholds of a block's class.
    limits: Limits,
    /// `text.rules`' content region: `DECAY`, `EXTEND_RATIO`, `EXTEND_LEVELS` (`main_blocks`).
    decay: Vec<f64>,
    extend_ratio: f64,
    extend_levels: usize,
}

/// The thresholds of `region._classify_base` (`text.rules`: `LINK_DENSITY` ... `GOOD_SENTENCE_WEIGHT`).
struct Limits {
    link_density: f64,
    linked_density: f64,
    linked_sentence_weight: usize,
    sentence_punct: usize,
    boilerplate_max_weight: usize,
    boilerplate_start_max_weight: usize,
    meta_max_weight: usize,
    meta_markup_share: f64,
    teaser_max_weight: usize,
    good_weight: usize,
    good_punct_weight: usize,
    good_sentence_weight: usize,
}

/// The names of the rules `HtmlWalker::new` reads (`HtmlWalker.rule_names`).
const RULES: [&str; 31] = [
    "block",
    "invisible",
    "chrome_tags",
    "wrapper_paragraphs",
    "negative",
    "negative_not_after",
    "meta_class",
    "display_none",
    "punct",
    "sentence_end",
    "ellipses",
    "meta_keywords",
    "meta_han_keywords",
    "boilerplate_any",
    "boilerplate_start",
    "meta_text",
    "link_density",
    "linked_density",
    "linked_sentence_weight",
    "sentence_punct",
    "boilerplate_max_weight",
    "boilerplate_start_max_weight",
    "meta_max_weight",
    "meta_markup_share",
    "teaser_max_weight",
    "good_weight",
    "good_punct_weight",
    "good_sentence_weight",
    "decay",
    "extend_ratio",
    "extend_levels",
];

/// The rule `name` of the rules mapping (`text.rules.native_rules`), or a `ValueError` naming it.
fn rule<'py, T: FromPyObjectOwned<'py>>(rules: &Bound<'py, PyDict>, name: &str) -> PyResult<T> {
    match rules.get_item(name)? {
        Some(value) => value.extract().map_err(Into::into),
        None => Err(PyValueError::new_err(format!(
            "the rules lack {name:?} (text.rules.native_rules)"
        ))),
    }
}

impl HtmlWalker {
    /// What the walk asks of an element or attribute name (the `N_` bits).
    fn name_bits(&self, name: &[u8]) -> u16 {
        let mut bits = 0;
        let block = self.block.contains(name);
        if block {
            bits |= N_BLOCK;
            if !matches!(name, b"body" | b"html" | b"br") {
                bits |= N_CLASS_CHROME;
            }
        }
        if self.invisible.contains(name) {
            bits |= N_INVISIBLE;
        }
        if self.chrome_tags.contains(name) {
            bits |= N_CHROME_TAG;
        }
        bits |= match name {
            b"main" => N_MAIN,
            b"a" => N_A,
            b"time" => N_TIME,
            b"body" | b"html" => N_PAGE,
            _ => 0,
        };
        bits | match name {
            b"class" => N_CLASS,
            b"id" => N_ID,
            b"style" => N_STYLE,
            b"hidden" => N_HIDDEN,
            b"role" => N_ROLE,
            _ => 0,
        }
    }

    /// The libxml2 node of ``root``, an ``lxml.etree._Element``.
    fn root_node<'t>(&self, py: Python<'_>, root: &'t Bound<'_, PyAny>) -> PyResult<Node<'t>> {
        if !root.get_type().is(self.element_type.bind(py)) {
            return Err(PyValueError::new_err(format!(
                "not an lxml.etree._Element: {}",
                root.get_type().name()?
            )));
        }
        // (the exact class this walker was built for, on an lxml the caller verified)
        lxml::root(root).map_err(PyValueError::new_err)
    }
}

/// A node lxml takes for an element (`_isElement`): `getprevious`/`getnext` step over the rest.
fn elementish(typ: c_int) -> bool {
    matches!(typ, ELEMENT | COMMENT | ENTITY_REF | PI)
}

/// Whether the text nodes from `node` up to the next element-like sibling hold a character other
/// than ASCII white space (a superset of Python's: `str.isspace` takes more characters for space).
fn text_up_to_element(mut node: Option<Node<'_>>) -> bool {
    let mut any = false;
    while let Some(n) = node.filter(|n| !elementish(n.kind())) {
        if matches!(n.kind(), TEXT | CDATA) {
            any |= n
                .content()
                .iter()
                .any(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'));
        }
        node = n.next();
    }
    any
}

/// Whether some run of comments and processing instructions below `root` has text with more than
/// white space in two of its pieces (the text before the run, the tail of each of its nodes):
/// `extract._comment_splits` can be true only then. It reads lxml's text and tails a little
/// more widely (all text nodes up to the next element-like node, ASCII white space only), so that
/// false here is false there.
fn comment_runs(root: Node<'_>) -> bool {
    let mut next = root.children();
    while let Some(mut cur) = next {
        let typ = cur.kind();
        if matches!(typ, COMMENT | PI) && comment_splits_at(cur) {
            return true;
        }
        if typ == ELEMENT && cur.children().is_some() {
            next = cur.children();
            continue;
        }
        loop {
            if let Some(n) = cur.next() {
                next = Some(n);
                break;
            }
            match cur.parent() {
                Some(p) if p != root => cur = p,
                _ => return false,
            }
        }
    }
    false
}

/// `comment_runs`' test of one comment or processing instruction `cur`: whether it is the first
/// of its run and the run has text with more than white space in two of its pieces.
fn comment_splits_at(cur: Node<'_>) -> bool {
    let is_comment = |n: Option<Node<'_>>| n.is_some_and(|n| matches!(n.kind(), COMMENT | PI));
    let mut prev = cur.prev();
    while let Some(p) = prev.filter(|p| !elementish(p.kind())) {
        prev = p.prev();
    }
    if is_comment(prev) {
        return false; // not the first of its run: read at the first
    }
    // the first of its run: the text before it, then each node's tail
    let before = match prev {
        None => cur.parent().and_then(|p| p.children()),
        Some(p) => p.next(),
    };
    let mut pieces = usize::from(text_up_to_element(before));
    let mut node = Some(cur);
    while let Some(n) = node.filter(|n| matches!(n.kind(), COMMENT | PI)) {
        pieces += usize::from(text_up_to_element(n.next()));
        if pieces >= 2 {
            return true;
        }
        node = n.next();
        while let Some(m) = node.filter(|m| !elementish(m.kind())) {
            node = m.next();
        }
    }
    false
}

/// The classification of a block, called by the walk (not by Python).
impl HtmlWalker {
    /// `region._classify_base` of a block whose folded text is its text: (class, teaser).
    /// `size`: its characters; `facts`: its `text_facts`, `weight` their weight; `low`: a buffer
    /// for its lower case.
    #[allow(clippy::too_many_arguments)]
    fn classify(
        &self,
        py: Python<'_>,
        text: &str,
        size: usize,
        facts: &Facts,
        weight: usize,
        links: usize,
        meta: usize,
        low: &mut String,
    ) -> PyResult<(i8, bool)> {
        let size = size as f64;
        let density = links as f64 / size;
        let punct = facts.punct;
        let (first, last) = (
            text.chars().next().unwrap_or(' '),
            text.chars().next_back().unwrap_or(' '),
        );
        let sentence = self.sentence_end.contains(last);
        let mut low = Lower {
            text,
            buf: low,
            done: false,
        };
        let l = &self.limits;
        if density > l.link_density
            || (density > l.linked_density
                && (punct < l.sentence_punct || (weight < l.linked_sentence_weight && !sentence)))
        {
            return Ok((LINKS, false));
        }
        if weight < l.boilerplate_max_weight
            && (self.boilerplate_any(py, text, facts, &mut low)?
                || (weight < l.boilerplate_start_max_weight && self.asked(py, text, BOILERPLATE_START)?))
        {
            return Ok((LINKS, false));
        }
        if first == '<' && last == '>' {
            return Ok((LINKS, false)); // markup shown as text
        }
        if weight < l.meta_max_weight
            && ((meta as f64 >= l.meta_markup_share * size && !(sentence && punct >= l.sentence_punct))
                || (self.may_say_meta(text, facts, &mut low) && self.asked(py, text, META_TEXT)?))
        {
            return Ok((META, false));
        }
        let teaser = weight < l.teaser_max_weight && self.ellipses.iter().any(|e| text.ends_with(e.as_str()));
        let good = weight >= l.good_weight
            || (weight >= l.good_punct_weight && punct >= l.sentence_punct)
            || (weight >= l.good_sentence_weight && sentence);
        Ok((if good { GOOD } else { SHORT }, teaser))
    }

    /// False when `region._meta_says` is (then `is_meta_text` is False): no digit, no Han
    /// metadata word, no metadata keyword (ASCII case folding is enough without the four
    /// look-alike characters, which go to Python).
    fn may_say_meta(&self, text: &str, facts: &Facts, low: &mut Lower<'_>) -> bool {
        if facts.digit {
            return true;
        }
        if !text.is_ascii() && (facts.lookalike || self.meta_han_keywords.iter().any(|k| text.contains(k.as_str()))) {
            return true;
        }
        let low = low.get();
        self.meta_keywords.iter().any(|k| low.contains(k.as_str()))
    }

    /// `region.is_boilerplate`: its test for the strings that each alternative of the regex
    /// needs, here (ASCII case folding is enough without the four characters that `re` or
    /// `str.lower` take for an ASCII letter), the regex in Python only when one is there.
    fn boilerplate_any(&self, py: Python<'_>, text: &str, facts: &Facts, low: &mut Lower<'_>) -> PyResult<bool> {
        let lookalike = facts.lookalike; // (none in ASCII text)
        let candidate = lookalike || text.contains('©') || text.contains("版权所有") || {
            let low = low.get();
            low.contains("all rights reserved") || low.contains("cookie")
        };
        if !candidate {
            return Ok(false);
        }
        self.asked(py, text, BOILERPLATE_ANY)
    }

    /// The answer of the Python text predicate `which` (`BOILERPLATE_ANY`, `BOILERPLATE_START`,
    /// `META_TEXT`) for `text`, asked once per distinct text while the memo holds it.
    fn asked(&self, py: Python<'_>, text: &str, which: u8) -> PyResult<bool> {
        let asked = which << 3; // the bit saying it was asked; `which` the bit of the answer
        let known = self.text_memo.lock().unwrap().answers.get(text).copied().unwrap_or(0);
        if known & asked != 0 {
            return Ok(known & which != 0);
        }
        let predicate = match which {
            BOILERPLATE_ANY => &self.boilerplate_any,
            BOILERPLATE_START => &self.boilerplate_start,
            _ => &self.meta_text,
        };
        let answer = predicate.bind(py).call1((text,))?.is_truthy()?;
        let mut memo = self.text_memo.lock().unwrap();
        let bits = asked | if answer { which } else { 0 };
        match memo.answers.get_mut(text) {
            Some(found) => *found |= bits,
            None => memo.keep(text, bits, TEXT_MEMO_ENTRIES, TEXT_MEMO_CHARS),
        }
        Ok(answer)
    }
}

/// The Python text predicates of `HtmlWalker::asked`, each a bit of an answer in `text_memo`
/// (the bit three places up: that it was asked).
const BOILERPLATE_ANY: u8 = 1;
const BOILERPLATE_START: u8 = 2;
const META_TEXT: u8 = 4;

#[pymethods]
impl HtmlWalker {
    /// A walker over `element_type` with `rules` (`text.rules.native_rules`, with the
    /// punctuation's characters and the Han keywords' words: `_native.html_walker`); the running
    /// Python's `\s` and `\d` as code point ranges.
    #[new]
    fn new(
        element_type: Py<PyAny>,
        space_ranges: Vec<(u32, u32)>,
        digit_ranges: Vec<(u32, u32)>,
        rules: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let space = CharSet::from_ranges(&space_ranges)?;
        let negative: (Vec<String>, Vec<String>) = rule(rules, "negative")?;
        let meta_class: (Vec<String>, Vec<String>) = rule(rules, "meta_class")?;
        let punct: String = rule(rules, "punct")?;
        let sentence_end: String = rule(rules, "sentence_end")?;
        Ok(HtmlWalker {
            element_type,
            ascii_space: std::array::from_fn(|b| space.contains(b as u8 as char)),
            space,
            block: tag_set(rule(rules, "block")?),
            invisible: tag_set(rule(rules, "invisible")?),
            chrome_tags: tag_set(rule(rules, "chrome_tags")?),
            wrapper_paragraphs: rule(rules, "wrapper_paragraphs")?,
            negative: ClassWords::new(negative.0, negative.1, rule(rules, "negative_not_after")?)?,
            meta_class: ClassWords::new(meta_class.0, meta_class.1, Vec::new())?,
            display_none: rule(rules, "display_none")?,
            class_memo: Mutex::new(Memo::new()),
            style_memo: Mutex::new(Memo::new()),
            text_memo: Mutex::new(Memo::new()),
            punct: CharTable::new(punct.chars()),
            sentence_end: CharTable::new(sentence_end.chars()),
            ellipses_tuple: PyTuple::new(rules.py(), rule::<Vec<String>>(rules, "ellipses")?)?.unbind(),
            ellipses: rule(rules, "ellipses")?,
            digit: CharSet::from_ranges(&digit_ranges)?,
            meta_keywords: rule(rules, "meta_keywords")?,
            meta_han_keywords: rule(rules, "meta_han_keywords")?,
            boilerplate_any: rule(rules, "boilerplate_any")?,
            boilerplate_start: rule(rules, "boilerplate_start")?,
            meta_text: rule(rules, "meta_text")?,
            limits: Limits {
                link_density: rule(rules, "link_density")?,
                linked_density: rule(rules, "linked_density")?,
                linked_sentence_weight: rule(rules, "linked_sentence_weight")?,
                sentence_punct: rule(rules, "sentence_punct")?,
                boilerplate_max_weight: rule(rules, "boilerplate_max_weight")?,
                boilerplate_start_max_weight: rule(rules, "boilerplate_start_max_weight")?,
                meta_max_weight: rule(rules, "meta_max_weight")?,
                meta_markup_share: rule(rules, "meta_markup_share")?,
                teaser_max_weight: rule(rules, "teaser_max_weight")?,
                good_weight: rule(rules, "good_weight")?,
                good_punct_weight: rule(rules, "good_punct_weight")?,
                good_sentence_weight: rule(rules, "good_sentence_weight")?,
            },
            decay: rule(rules, "decay")?,
            extend_ratio: rule(rules, "extend_ratio")?,
            extend_levels: rule(rules, "extend_levels")?,
        })
    }

    /// The names of the rules the walker reads (``text.rules.native_rules``' keys).
    #[staticmethod]
    fn rule_names() -> Vec<&'static str> {
        RULES.to_vec()
    }

    /// The fields of ``walk``'s result when it walked the tree (its first, ``"ok"``, included).
    #[staticmethod]
    fn walk_fields() -> Vec<&'static str> {
        vec!["ok", "blocks", "parent", "end", "landmark", "next_check", "comments"]
    }

    /// Walk the tree below ``root`` (an ``lxml.etree._Element`` of lxml's HTML parser) as
    /// ``Walker.walk(root, 0, False, 0)`` does. Returns ``("ok", blocks, parent, end, landmark,
    /// next_check, comments)`` (``comments``: ``comment_runs`` of ``root``, read by this walk) with blocks ``(text, links, owner, meta, flags, weight, base, teaser)``
    /// (``Block``'s fields; ``weight`` -1 and ``base`` -2: a block with full-width letters or
    /// digits, which the Python side folds and classifies), ``("large" | "budget",)`` when the walk stops as the Python walk
    /// would, ``("unsupported", reason)`` for a tree it does not handle. ``remaining``: seconds
    /// left of the time budget (``None``: no budget).
    #[pyo3(signature = (root, *, remaining, max_blocks, step))]
    fn walk<'py>(
        &self,
        py: Python<'py>,
        root: &Bound<'py, PyAny>,
        remaining: Option<f64>,
        max_blocks: usize,
        step: usize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let node = self.root_node(py, root)?;
        let display_none = self.display_none.bind(py);
        let mut w = Walk {
            walker: self,
            display_none,
            // (about a median page's: fewer reallocations as they grow)
            blocks: Vec::with_capacity(128),
            texts: String::with_capacity(16 << 10),
            parent: Vec::with_capacity(1024),
            end: Vec::with_capacity(1024),
            pieces: String::with_capacity(256),
            started: false,
            links: 0,
            owner: 0,
            in_meta: 0,
            meta: 0,
            flags: 0,
            landmark: -1,
            // past the end of time (or NaN: no budget at all)
            deadline: remaining
                .and_then(|s| Duration::try_from_secs_f64(s.max(0.0)).ok())
                .and_then(|d| Instant::now().checked_add(d)),
            next_check: step,
            max_blocks,
            step,
            few_paragraphs: None,
            in_few: 0,
            last_wraps: (None, false),
            names: Names::new(),
            key: String::new(),
            lower: String::new(),
            comments: false,
        };
        match w.walk(node, None, 0, false, 0) {
            Ok(()) => {}
            Err(Stop::Large) => return PyTuple::new(py, ["large"]),
            Err(Stop::Budget) => return PyTuple::new(py, ["budget"]),
            Err(Stop::Unsupported(why)) => return PyTuple::new(py, ["unsupported", why]),
            Err(Stop::Py(e)) => return Err(e),
        }
        w.flush();
        let blocks = PyList::empty(py);
        let mut low = String::new();
        for (range, links, owner, meta, flags, size) in &w.blocks {
            let text = &w.texts[range.clone()];
            let (wt, base, teaser) = if *flags != 0 {
                // Chrome blocks: the Python side classifies them if it needs them.
                let facts = text_facts(text, &self.punct, &self.digit);
                (facts.weight.map_or(-1, |wt| wt as i64), UNCLASSIFIED, false)
            } else {
                let facts = text_facts(text, &self.punct, &self.digit);
                match facts.weight {
                    Some(wt) => {
                        let (base, teaser) = self.classify(py, text, *size, &facts, wt, *links, *meta, &mut low)?;
                        (wt as i64, base, teaser)
                    }
                    None => (-1, UNCLASSIFIED, false),
                }
            };
            blocks.append((PyString::new(py, text), *links, *owner, *meta, *flags, wt, base, teaser))?;
        }
        (
            "ok",
            blocks,
            PyList::new(py, &w.parent)?,
            PyList::new(py, &w.end)?,
            w.landmark,
            w.next_check,
            w.comments,
        )
            .into_pyobject(py)
    }

    /// ``(negative, meta)``: whether ``text`` (a class and id, space-separated) matches
    /// ``blocks._NEGATIVE_RE`` and ``META_CLASS_RE``, as the walk tests it.
    fn class_words(&self, text: &str) -> (bool, bool) {
        let answers = class_words_of(
            &self.negative,
            &self.meta_class,
            text,
            &self.space,
            &self.digit,
            &mut String::new(),
        );
        (answers & NEGATIVE_CLASS != 0, answers & META_CLASS != 0)
    }

    /// ``region.main_blocks(walker, blocks, relaxed)``: the content region's blocks among
    /// ``blocks`` (``Block`` objects, a subsequence of the walker's), ``parent`` and ``end`` the
    /// walker's element numbering; the same list of the same objects. ``None`` when a block is not
    /// classified yet (``base`` -2: full-width letters or digits), which the Python side does.
    #[pyo3(signature = (blocks, parent, end, relaxed))]
    fn main_blocks<'py>(
        &self,
        py: Python<'py>,
        blocks: &Bound<'py, PyList>,
        parent: &Bound<'py, PyList>,
        end: &Bound<'py, PyList>,
        relaxed: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let found = PyList::empty(py);
        if blocks.is_empty() {
            return Ok(Some(found));
        }
        let n = parent.len();
        let ellipses = self.ellipses_tuple.bind(py);
        let parent_of = |i: usize| -> PyResult<usize> { parent.get_item(i)?.extract() };
        // each block's owner, weight, links, base and teaser; teasers: 2+ blocks cut with "..."
        let mut read = Vec::with_capacity(blocks.len());
        let mut cut = 0usize;
        for block in blocks.iter() {
            let base: i8 = block.getattr(intern!(py, "base"))?.extract()?;
            if base == UNCLASSIFIED {
                return Ok(None);
            }
            if cut < 2 {
                // (str.endswith in place: no UTF-8 copy of the text)
                let norm = block.getattr(intern!(py, "norm"))?;
                cut += norm.call_method1(intern!(py, "endswith"), (ellipses,))?.is_truthy()? as usize;
            }
            let owner: usize = block.getattr(intern!(py, "owner"))?.extract()?;
            if owner >= n {
                return Err(PyValueError::new_err(format!(
                    "block owner {owner} past the {n} elements"
                )));
            }
            let weight: i64 = block.getattr(intern!(py, "weight"))?.extract()?;
            read.push((owner, weight, base, block));
        }
        let teasers = cut >= 2;
        let mut kinds = Vec::with_capacity(read.len());
        let mut good = vec![0i64; n];
        let mut score = vec![0f64; n];
        let mut holders = Vec::new();
        for (owner, weight, base, block) in &read {
            // region.block_kind
            let kind = if *base <= LINKS {
                *base
            } else if teasers && block.getattr(intern!(py, "teaser"))?.is_truthy()? {
                SHORT
            } else if relaxed {
                GOOD
            } else {
                *base
            };
            kinds.push(kind);
            let value: f64 = if kind == GOOD {
                let links: i64 = block.getattr(intern!(py, "links"))?.extract()?;
                good[*owner] += weight - links;
                holders.push(*owner);
                (weight - links) as f64
            } else if kind == LINKS {
                -(*weight as f64)
            } else {
                -(*weight as f64) / 4.0
            };
            let mut i = *owner;
            for decay in &self.decay {
                score[i] += value * decay;
                if i == 0 {
                    break;
                }
                i = parent_of(i)?;
            }
        }
        // the good blocks' owners and their ancestors, children after their parent
        let mut above = vec![false; n];
        let mut order = Vec::new();
        for &h in &holders {
            let mut i = h;
            while !above[i] {
                above[i] = true;
                order.push(i);
                if i == 0 {
                    break;
                }
                i = parent_of(i)?;
            }
        }
        order.sort_unstable();
        for &i in order.iter().rev() {
            if i != 0 {
                let up = parent_of(i)?;
                good[up] += good[i];
            }
        }
        let mut best: Option<(usize, f64)> = None;
        for &i in &order {
            if good[i] != 0 && best.is_none_or(|(_, s)| score[i] > s) {
                best = Some((i, score[i]));
            }
        }
        let Some((mut best, _)) = best else {
            return Ok(Some(found));
        };
        while best != 0 {
            let mut up = parent_of(best)?;
            let mut levels = 1;
            while up != 0 && good[up] == good[best] {
                up = parent_of(up)?;
                levels += 1;
            }
            if levels <= self.extend_levels && good[up] as f64 >= self.extend_ratio * good[best] as f64 {
                best = up;
            } else {
                break;
            }
        }
        let (lo, hi): (usize, usize) = (best, end.get_item(best)?.extract()?);
        let inside: Vec<usize> = (0..read.len()).filter(|&j| lo <= read[j].0 && read[j].0 < hi).collect();
        let Some(first) = inside.iter().position(|&j| kinds[j] == GOOD) else {
            return Ok(Some(found));
        };
        let last = inside.iter().rposition(|&j| kinds[j] == GOOD).unwrap_or(first);
        for &j in &inside[first..=last] {
            if kinds[j] > LINKS {
                found.append(&read[j].3)?;
            }
        }
        Ok(Some(found))
    }

    /// Whether a comment or processing instruction below ``root`` may split a text run as
    /// ``extract._comment_splits`` asks (see `comment_runs`): when false, it does not.
    fn comment_runs(&self, py: Python<'_>, root: &Bound<'_, PyAny>) -> PyResult<bool> {
        let node = self.root_node(py, root)?;
        Ok(comment_runs(node))
    }
}

/// The pure text functions of the walk against the Python reference: the expected values were
/// computed once with `extract.weight(extract.fold(text))` (`None` where `fold` changes the
/// text) and `blocks._CJK_SPACE_RE.sub("", " ".join(text.split()))` and pasted here. The walk
/// itself reads lxml's tree: `tests/text/test_native_html.py` compares it with the Python walk.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_is_pythons() {
        let cases: [(&str, Option<usize>); 6] = [
            ("hello", Some(5)),
            ("中文 测试，好", Some(19)),
            ("中 文 ， 好", Some(15)),
            ("a — b 中 文", Some(13)),
            ("\u{ff21}1", None), // full-width: NFKC folds it, Python's tables
            ("", Some(0)),
        ];
        for (text, expected) in cases {
            assert_eq!(weight(text), expected, "{text:?}");
        }
    }

    #[test]
    fn text_facts_are_the_separate_reads() {
        let punct = CharTable::new(".,;:!?，。；：！？、．".chars());
        let digit = CharSet::from_ranges(&[(48, 58), (0x660, 0x66a), (0xff10, 0xff1a)]).unwrap();
        for text in [
            "hello, world.",
            "中文 测试，好。",
            "a — b 中 文 2024",
            "\u{ff21}1",
            "Kelvin \u{212a}, \u{0663}!",
            "",
            "ı and ſ",
        ] {
            let facts = text_facts(text, &punct, &digit);
            assert_eq!(facts.weight, weight(text), "{text:?}");
            if facts.weight.is_some() {
                assert_eq!(
                    facts.punct,
                    text.chars().filter(|&c| punct.contains(c)).count(),
                    "{text:?}"
                );
                assert_eq!(facts.digit, text.chars().any(|c| digit.contains(c)), "{text:?}");
                assert_eq!(facts.lookalike, text.chars().any(is_lookalike), "{text:?}");
            }
        }
        assert!(punct.contains('，') && punct.contains('.') && !punct.contains('中') && !punct.contains('a'));
    }

    #[test]
    fn spaces_between_cjk_characters_go() {
        let cases = [
            ("hello", "hello"),
            ("中文 测试，好", "中文测试，好"),
            ("中 文 ， 好", "中文，好"),
            ("a — b 中 文", "a — b 中文"),
            (" 中 ", "中"), // white space at either end: none
            ("中\u{3000} ,\t文", "中,文"),
            ("a  b\n", "a b"),
            ("x，\u{3000} y 中", "x， y 中"),
        ];
        let space = CharSet::from_ranges(&[(9, 14), (32, 33), (0x3000, 0x3001)]).unwrap();
        for (text, expected) in cases {
            let mut out = String::new();
            assert_eq!(join_words(text, &space, &mut out), expected.chars().count(), "{text:?}");
            assert_eq!(out, expected, "{text:?}");
        }
    }
}
