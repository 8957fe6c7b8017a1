//! Native fingerprint core of scrapy-simhash: normalised text -> tokens -> weights -> SimHash,
//! with a page's change sketch, content key and template line keys from the same tokens and
//! text (`Core.page`), and (`html`) the block walk over lxml's parsed tree.
//!
//! It gives the outputs of the Python reference (`scrapy_simhash/text/features.py`, `fingerprint/simhash.py`,
//! `sketch.py`, `extract.py`) bit for bit; `tests/fingerprint/test_native.py` and `tests/text/test_native_html.py`
//! check it, and each module's unit tests (`cargo test`) check its steps against values of the
//! Python path. The Python surface is typed in `scrapy_simhash_native.pyi`. Everything that depends on
//! the Unicode tables of the running Python is handed in by the caller, so that the two paths
//! agree whatever the Unicode versions of Rust and Python:
//!
//! - the text comes in already NFKC-normalised and lower-cased (`features.normalize`);
//! - the character classes of the token regex (`[^\W\d_]` and `\d`) and of `\s` come as code
//!   point ranges computed by Python's `re` on every code point;
//! - the dictionary is jieba's own `dict.txt`, the stop words are the package's lists.
//!
//! The text work runs with the GIL released (the walk holds it: see `html`).

use std::collections::hash_map::Entry;
use std::fs::File;
use std::io::BufReader;

mod flat;
mod html;
mod lxml;

use jieba_rs::Jieba;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rustc_hash::{FxHashMap, FxHashSet};

const NUMBER_TOKEN: &str = "<num>";
/// Weights are scaled to integers <= 2**24 before summing (fingerprint._WEIGHT_BITS).
const WEIGHT_SCALE: f64 = (1u64 << 24) as f64;
const MAX_CHAR: usize = 0x110000;

/// A set of code points (one bit each).
pub(crate) struct CharSet(Vec<u64>);

impl CharSet {
    pub(crate) fn from_ranges(ranges: &[(u32, u32)]) -> PyResult<Self> {
        let mut bits = vec![0u64; MAX_CHAR / 64];
        for &(start, end) in ranges {
            if start > end || end as usize > MAX_CHAR {
                return Err(PyValueError::new_err(format!("bad code point range {start}..{end}")));
            }
            for c in start..end {
                bits[(c >> 6) as usize] |= 1 << (c & 63);
            }
        }
        Ok(CharSet(bits))
    }

    #[inline]
    pub(crate) fn contains(&self, c: char) -> bool {
        let c = c as u32;
        self.0[(c >> 6) as usize] >> (c & 63) & 1 != 0
    }
}

/// jieba's Han range (re_han_default), the only characters handed to the segmenter.
#[inline]
fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fd5}').contains(&c)
}

#[derive(Clone, Copy)]
enum Hash {
    Blake2b,
    Xxh3,
}

#[pyclass(frozen, module = "scrapy_simhash_native")]
struct Core {
    jieba: Jieba,
    /// Stop words and NUMBER_TOKEN: no feature in "words" mode.
    skip: FxHashSet<String>,
    /// `[^\W\d_]`: letters (and numeric characters that are not decimal digits).
    word: CharSet,
    /// `\d`: decimal digits.
    digit: CharSet,
    /// `\s`.
    space: CharSet,
    /// `1 + ln(c)` for small counts c, as computed by Python.
    log_tf: Vec<f64>,
}

impl Core {
    /// `features.HAN_LINE_BREAK_RE.sub("", text)`: a run of whitespace that holds a line break
    /// and stands between two Han characters is removed.
    fn join_han_lines<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if !text.contains('\n') || text.is_ascii() {
            return text.into();
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0; // bytes of `text` copied to `out`
        let mut prev: Option<char> = None;
        let mut iter = text.char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            if !self.space.contains(c) {
                prev = Some(c);
                continue;
            }
            // A maximal run of whitespace starts at i.
            let mut newline = c == '\n';
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = iter.peek() {
                if !self.space.contains(d) {
                    break;
                }
                newline |= d == '\n';
                end = j + d.len_utf8();
                iter.next();
            }
            let next = iter.peek().map(|&(_, d)| d);
            if newline && prev.is_some_and(is_han) && next.is_some_and(is_han) {
                out.push_str(&text[last..i]);
                last = end;
            }
            prev = None; // the next character (if any) follows whitespace
        }
        if last == 0 {
            return text.into();
        }
        out.push_str(&text[last..]);
        out.into()
    }

    /// A letter or digit that is not Han: `tokenizers._ALNUM`.
    #[inline]
    fn is_alnum(&self, c: char) -> bool {
        (self.word.contains(c) || self.digit.contains(c)) && !is_han(c)
    }

    /// `Tokenizer.tokenize`: the matches of `features.TOKEN_RE`, in order; Han runs segmented
    /// by jieba, numbers (a run that starts with a digit) as NUMBER_TOKEN, words (a run that
    /// starts with a letter) with their digits.
    fn tokenize<'a>(&self, text: &'a str, hmm: bool, out: &mut Vec<&'a str>) {
        let bytes_len = text.len();
        let mut chars = text.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            if is_han(c) {
                let mut end = start + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !is_han(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                out.extend(self.jieba.cut(&text[start..end], hmm).into_iter().map(|t| t.word));
            } else if self.digit.contains(c) {
                // \d(?:ALNUM|[.,:/\-]\d)*
                self.skip_joined(
                    &mut chars,
                    |d| matches!(d, '.' | ',' | ':' | '/' | '-'),
                    |d| self.digit.contains(d),
                );
                out.push(NUMBER_TOKEN);
            } else if self.word.contains(c) {
                // [^\W\d_]ALNUM*(?:['\u2019][^\W\d_HAN]ALNUM*)*
                self.skip_joined(
                    &mut chars,
                    |d| matches!(d, '\'' | '\u{2019}'),
                    |d| self.word.contains(d) && !is_han(d),
                );
                let end = chars.peek().map_or(bytes_len, |&(j, _)| j);
                out.push(&text[start..end]);
            }
        }
    }

    /// Advance `chars` past `ALNUM*(?:JOIN NEXT ALNUM*)*`: letters and digits, and a joiner
    /// character only where the character after it satisfies `next`.
    fn skip_joined(&self, chars: &mut Chars<'_>, join: impl Fn(char) -> bool, next: impl Fn(char) -> bool) {
        loop {
            while chars.peek().is_some_and(|&(_, d)| self.is_alnum(d)) {
                chars.next();
            }
            let mut ahead = chars.clone();
            if !ahead.next().is_some_and(|(_, d)| join(d)) || !ahead.peek().is_some_and(|&(_, d)| next(d)) {
                return;
            }
            *chars = ahead;
        }
    }

    /// `FeatureExtractor.weigh` for features="words": (features in first-seen order, weights).
    fn weigh<'a>(&self, tokens: &[&'a str], log_tf: bool) -> (Vec<&'a str>, Vec<f64>) {
        let mut index: FxHashMap<&'a str, usize> = FxHashMap::default();
        let mut feats: Vec<&'a str> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        for &t in tokens {
            if self.skip.contains(t) {
                continue;
            }
            match index.entry(t) {
                Entry::Occupied(e) => counts[*e.get()] += 1,
                Entry::Vacant(e) => {
                    e.insert(feats.len());
                    feats.push(t);
                    counts.push(1);
                }
            }
        }
        let weights = counts
            .iter()
            .map(|&c| {
                if !log_tf {
                    c as f64
                } else if (c as usize) < self.log_tf.len() {
                    self.log_tf[c as usize]
                } else {
                    1.0 + (c as f64).ln()
                }
            })
            .collect();
        (feats, weights)
    }
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

fn digest(hash: Hash, data: &[u8], nbytes: usize) -> [u8; 16] {
    let mut out = [0u8; 16];
    match hash {
        Hash::Blake2b => {
            let h = blake2b_simd::Params::new().hash_length(nbytes).hash(data);
            out[..nbytes].copy_from_slice(h.as_bytes());
        }
        // xxhash's *_digest: the canonical (big-endian) bytes.
        Hash::Xxh3 if nbytes == 8 => out[..8].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(data).to_be_bytes()),
        Hash::Xxh3 => out.copy_from_slice(&xxhash_rust::xxh3::xxh3_128(data).to_be_bytes()),
    }
    out
}

/// `fingerprint.weighted_simhash`: bit i is bit (i % 8) of byte i // 8 of the digests, set when the
/// weights (scaled to integers as there) of the features with that bit outweigh the others.
/// `digest_of` gives a feature's digest (`bits / 8` bytes used).
fn simhash(
    feats: &[&str],
    weights: &[f64],
    bits: usize,
    mut digest_of: impl FnMut(&str) -> [u8; 16],
) -> PyResult<u128> {
    let top = weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() || top <= 0.0 {
        return Err(PyValueError::new_err("feature weights must be finite and positive"));
    }
    let scale = WEIGHT_SCALE / top;
    let nbytes = bits / 8;
    let mut ones = [0u64; 128];
    let mut total = 0u64;
    for (f, &w) in feats.iter().zip(weights) {
        let wq = (w * scale).round_ties_even().max(1.0) as u64;
        total += wq;
        let d = digest_of(f);
        for (byte_i, &byte) in d[..nbytes].iter().enumerate() {
            let mut b = byte;
            while b != 0 {
                let k = b.trailing_zeros() as usize;
                ones[byte_i * 8 + k] += wq;
                b &= b - 1;
            }
        }
    }
    let mut fp = 0u128;
    for (i, &o) in ones[..bits].iter().enumerate() {
        if 2 * (o as u128) > total as u128 {
            fp |= 1u128 << i;
        }
    }
    Ok(fp)
}

/// `fingerprint.hash_cache("blake2b", 64)`'s digest of a token, as the little-endian u64 that the
/// change sketch mixes.
fn blake2b_64(token: &str) -> u64 {
    let h = blake2b_simd::Params::new().hash_length(8).hash(token.as_bytes());
    u64::from_le_bytes(h.as_bytes().try_into().expect("8 bytes"))
}

/// The options of `Fingerprinter` that the core implements: (feature hash, whether log_tf).
fn options(bits: usize, feature_hash: &str, weighting: &str) -> PyResult<(Hash, bool)> {
    if bits != 64 && bits != 128 {
        return Err(PyValueError::new_err(format!(
            "bits ({bits}) is invalid: it must be 64 or 128"
        )));
    }
    let hash = match feature_hash {
        "blake2b" => Hash::Blake2b,
        "xxh3" => Hash::Xxh3,
        _ => {
            return Err(PyValueError::new_err(format!(
                "feature_hash={feature_hash:?} is not native"
            )))
        }
    };
    let log_tf = match weighting {
        "log_tf" => true,
        "tf" => false,
        _ => return Err(PyValueError::new_err(format!("weighting={weighting:?} is not native"))),
    };
    Ok((hash, log_tf))
}

/// A page's fingerprint and what is made of the same tokens (`Core.page`).
type Page<'py> = (u128, bool, Bound<'py, PyBytes>, Option<u128>, Vec<u64>);

/// `simhash.exact_fp`: blake2b of the tokens joined by U+001F, personalised.
fn exact_fp(tokens: &[&str], bits: usize) -> u128 {
    let mut state = blake2b_simd::Params::new()
        .hash_length(bits / 8)
        .personal(b"simhash-exact")
        .to_state();
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 {
            state.update(b"\x1f");
        }
        state.update(t.as_bytes());
    }
    let mut buf = [0u8; 16];
    buf[..bits / 8].copy_from_slice(state.finalize().as_bytes());
    u128::from_le_bytes(buf)
}

/// `sketch.sketch_tokens`: words per shingle, slots (16 bits each), splitmix64's constants.
const SHINGLE: usize = 3;
const SLOTS: usize = 64;
const C1: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's finaliser (`sketch._mix`).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `sketch.sketch_tokens` of tokens given as their 8-byte digests (`blake2b_64`).
fn sketch(t: &[u64]) -> [u8; 2 * SLOTS] {
    let mut out = [0u8; 2 * SLOTS];
    let n = t.len();
    if n == 0 {
        return out;
    }
    let mut best = [u64::MAX; SLOTS];
    let mut seen = [false; SLOTS];
    for i in 0..n.saturating_sub(SHINGLE - 1).max(1) {
        let mut h = mix(t[i].wrapping_mul(C1));
        if n > 1 {
            h = mix(h.wrapping_add(t[i + 1]));
        }
        if n > 2 {
            h = mix(h.wrapping_mul(C1).wrapping_add(t[i + 2]));
        }
        let slot = (h >> 58) as usize;
        if !seen[slot] || h < best[slot] {
            best[slot] = h;
            seen[slot] = true;
        }
    }
    for slot in 0..SLOTS {
        if seen[slot] {
            let low = ((best[slot] & 0xFFFF) as u16).max(1);
            out[2 * slot..2 * slot + 2].copy_from_slice(&low.to_le_bytes());
        }
    }
    out
}

#[pymethods]
impl Core {
    /// `Core(dict_path, skip_words, word_ranges, digit_ranges, space_ranges, log_tf)`: loads
    /// jieba's dictionary (about 0.3 s). Ranges are half-open ``(start, end)`` code points.
    #[new]
    fn new(
        py: Python<'_>,
        dict_path: std::path::PathBuf,
        skip_words: Vec<String>,
        word_ranges: Vec<(u32, u32)>,
        digit_ranges: Vec<(u32, u32)>,
        space_ranges: Vec<(u32, u32)>,
        log_tf: Vec<f64>,
    ) -> PyResult<Self> {
        let jieba = py.detach(|| {
            let file = File::open(&dict_path).map_err(|e| {
                PyOSError::new_err(format!("cannot read jieba's dictionary {}: {e}", dict_path.display()))
            })?;
            Jieba::with_dict(&mut BufReader::new(file))
                .map_err(|e| PyValueError::new_err(format!("bad jieba dictionary {}: {e}", dict_path.display())))
        })?;
        Ok(Core {
            jieba,
            skip: skip_words.into_iter().collect(),
            word: CharSet::from_ranges(&word_ranges)?,
            digit: CharSet::from_ranges(&digit_ranges)?,
            space: CharSet::from_ranges(&space_ranges)?,
            log_tf,
        })
    }

    /// Tokens of normalised ``text`` (``FeatureExtractor.tokens`` after ``normalize``).
    /// A str with lone surrogates raises UnicodeEncodeError (the caller takes the Python path).
    fn tokens(&self, py: Python<'_>, text: &Bound<'_, PyString>, hmm: bool) -> PyResult<Vec<String>> {
        let text = text.to_str()?;
        Ok(py.detach(|| {
            let joined = self.join_han_lines(text);
            let mut toks = Vec::new();
            self.tokenize(&joined, hmm, &mut toks);
            toks.into_iter().map(str::to_owned).collect()
        }))
    }

    /// ``(fingerprint, short)`` of normalised ``text`` (title line included) for
    /// features="words": ``Fingerprinter._fingerprint``. ``None`` when there is no feature.
    /// ``weighting``: "tf" or "log_tf"; ``feature_hash``: "blake2b" or "xxh3"; ``bits``: 64, 128.
    #[allow(clippy::too_many_arguments)] // the keyword arguments of a Python method
    #[pyo3(signature = (text, *, hmm, bits, feature_hash, weighting, min_features))]
    fn fingerprint(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        hmm: bool,
        bits: usize,
        feature_hash: &str,
        weighting: &str,
        min_features: usize,
    ) -> PyResult<Option<(u128, bool)>> {
        let (hash, log_tf) = options(bits, feature_hash, weighting)?;
        let text = text.to_str()?;
        py.detach(|| {
            let joined = self.join_han_lines(text);
            let mut tokens = Vec::new();
            self.tokenize(&joined, hmm, &mut tokens);
            let (feats, weights) = self.weigh(&tokens, log_tf);
            if feats.is_empty() {
                return Ok(None);
            }
            let (fp, short) = if feats.len() < min_features {
                (exact_fp(&tokens, bits), true)
            } else {
                (
                    simhash(&feats, &weights, bits, |f| digest(hash, f.as_bytes(), bits / 8))?,
                    false,
                )
            };
            Ok(Some((if fp == 0 { 1 } else { fp }, short)))
        })
    }

    /// What ``Fingerprinter.fingerprint_page`` makes of a page's tokens, in one call, with no
    /// token crossing to Python: ``(fingerprint, short, sketch, content_key, line_keys)``, or
    /// ``None`` when ``text`` has no feature. ``text``: the normalised title line(s) and text, as
    /// for ``fingerprint`` (same options); ``rest``: the normalised other content-like text, or
    /// ``None``. ``sketch``: ``sketch.sketch_tokens`` of the tokens of ``text`` then of ``rest``;
    /// ``content_key``: on a short page, ``simhash.exact_fp`` of those same tokens (else
    /// ``None``); ``line_keys``: ``templates.line_key`` of each line of ``text`` (empty unless
    /// ``lines``: only the site-template check reads them). Each distinct token is hashed once
    /// (the simhash's digests are the sketch's with blake2b and 64 bits).
    #[allow(clippy::too_many_arguments)] // the keyword arguments of a Python method
    #[pyo3(signature = (text, rest, *, hmm, bits, feature_hash, weighting, min_features, lines=true))]
    fn page<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        rest: Option<&Bound<'py, PyString>>,
        hmm: bool,
        bits: usize,
        feature_hash: &str,
        weighting: &str,
        min_features: usize,
        lines: bool,
    ) -> PyResult<Option<Page<'py>>> {
        let (hash, log_tf) = options(bits, feature_hash, weighting)?;
        let text = text.to_str()?;
        let rest = rest.map(|r| r.to_str()).transpose()?;
        let out = py.detach(|| -> PyResult<_> {
            let joined = self.join_han_lines(text);
            let rest_joined = rest.map(|r| self.join_han_lines(r));
            let mut tokens = Vec::new();
            self.tokenize(&joined, hmm, &mut tokens);
            let (feats, weights) = self.weigh(&tokens, log_tf);
            if feats.is_empty() {
                return Ok(None);
            }
            let own = tokens.len();
            if let Some(r) = &rest_joined {
                self.tokenize(r, hmm, &mut tokens);
            }
            let mut memo: FxHashMap<&str, u64> = FxHashMap::default();
            let digests: Vec<u64> = tokens
                .iter()
                .map(|&t| *memo.entry(t).or_insert_with(|| blake2b_64(t)))
                .collect();
            let short = feats.len() < min_features;
            let fp = if short {
                exact_fp(&tokens[..own], bits)
            } else if matches!(hash, Hash::Blake2b) && bits == 64 {
                simhash(&feats, &weights, bits, |f| {
                    let mut d = [0u8; 16];
                    d[..8].copy_from_slice(&memo[f].to_le_bytes());
                    d
                })?
            } else {
                simhash(&feats, &weights, bits, |f| digest(hash, f.as_bytes(), bits / 8))?
            };
            let content_key = short.then(|| exact_fp(&tokens, bits).max(1));
            let mut buf = String::new();
            let keys = if lines {
                text.split('\n')
                    .map(|line| flat::line_key(&self.space, &self.digit, line, &mut buf))
                    .collect()
            } else {
                Vec::new()
            };
            Ok(Some((fp.max(1), short, sketch(&digests), content_key, keys)))
        })?;
        Ok(out.map(|(fp, short, sk, content_key, keys)| (fp, short, PyBytes::new(py, &sk), content_key, keys)))
    }

    /// The number of distinct features of normalised ``text`` for features="words"
    /// (``len(FeatureExtractor.extract(text).weights)``).
    fn count_features(&self, py: Python<'_>, text: &Bound<'_, PyString>, hmm: bool) -> PyResult<usize> {
        let text = text.to_str()?;
        Ok(py.detach(|| {
            let joined = self.join_han_lines(text);
            let mut tokens = Vec::new();
            self.tokenize(&joined, hmm, &mut tokens);
            self.weigh(&tokens, true).0.len()
        }))
    }
}

#[pymodule]
fn scrapy_simhash_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_class::<html::HtmlWalker>()?;
    m.add_class::<flat::FlatText>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// What each step computes on its own, against the Python reference: the expected values were
/// computed once with the package's Python path (`scrapy_simhash.text.features.FeatureExtractor.tokens`,
/// `fingerprint.weighted_simhash` / `_exact_fp` / `hash_cache`, `sketch.sketch_tokens`, on the same
/// inputs) and pasted here. The character classes are the ASCII and Latin-1 parts of Python's
/// (`_ranges` in `_native.py` makes the full ones), enough for the texts used.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `[^\W\d_]` on ASCII, Latin-1 and jieba's Han range; `\d`; `\s`.
    pub(crate) const WORD: &[(u32, u32)] = &[
        (0x41, 0x5b),
        (0x61, 0x7b),
        (0xaa, 0xab),
        (0xb5, 0xb6),
        (0xba, 0xbb),
        (0xc0, 0xd7),
        (0xd8, 0xf7),
        (0xf8, 0x100),
        (0x4e00, 0x9fd6),
    ];
    pub(crate) const DIGIT: &[(u32, u32)] = &[(0x30, 0x3a)];
    pub(crate) const SPACE: &[(u32, u32)] = &[(0x9, 0xe), (0x1c, 0x21), (0x85, 0x86), (0xa0, 0xa1), (0x3000, 0x3001)];

    fn core() -> Core {
        let dict = "中国 100 ns\n人民 100 n\n中 10 f\n国 10 n\n人 10 n\n民 10 n\n";
        Core {
            jieba: Jieba::with_dict(&mut dict.as_bytes()).expect("dictionary"),
            skip: [NUMBER_TOKEN, "the"].into_iter().map(String::from).collect(),
            word: CharSet::from_ranges(WORD).unwrap(),
            digit: CharSet::from_ranges(DIGIT).unwrap(),
            space: CharSet::from_ranges(SPACE).unwrap(),
            log_tf: (0..4)
                .map(|c| if c == 0 { 0.0 } else { 1.0 + (c as f64).ln() })
                .collect(),
        }
    }

    fn tokens(text: &str) -> Vec<String> {
        let core = core();
        let joined = core.join_han_lines(text);
        let mut out = Vec::new();
        core.tokenize(&joined, false, &mut out);
        out.into_iter().map(String::from).collect()
    }

    #[test]
    fn tokenize_gives_pythons_tokens() {
        let cases: &[(&str, &[&str])] = &[
            ("hello world", &["hello", "world"]),
            (
                "don't stop-me 3.14 x2 abc'd 12:30/4 it\u{2019}s",
                &["don't", "stop", "me", "<num>", "x2", "abc'd", "<num>", "it\u{2019}s"],
            ),
            ("a'b'c 1,2,3. ok", &["a'b'c", "<num>", "ok"]),
            (
                "l'\u{e9}t\u{e9} caf\u{e9} na\u{ef}ve",
                &["l'\u{e9}t\u{e9}", "caf\u{e9}", "na\u{ef}ve"],
            ),
            ("foo_bar baz9 9baz", &["foo", "bar", "baz9", "<num>"]),
            ("", &[]),
            ("  \n\t ", &[]),
            ("'' - 's", &["s"]),
            ("a\u{1f600}b 12\u{1f600}", &["a", "b", "<num>"]), // outside every class: a boundary
        ];
        for (text, expected) in cases {
            assert_eq!(tokens(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn a_line_break_between_han_characters_is_no_boundary() {
        let core = core();
        assert_eq!(core.join_han_lines("中国\n人民 abc\n 中国"), "中国人民 abc\n 中国");
        assert_eq!(core.join_han_lines("中国 人民"), "中国 人民"); // no line break: kept
        assert_eq!(core.join_han_lines("中国\n"), "中国\n"); // nothing after it
        assert_eq!(tokens("中国\n人民 abc\n 中国"), ["中国", "人民", "abc", "中国"]);
    }

    #[test]
    fn weigh_counts_features_in_first_seen_order() {
        let core = core();
        let toks = ["b", "a", "the", "b", "<num>", "b", "a"];
        let (feats, weights) = core.weigh(&toks, false);
        assert_eq!(feats, ["b", "a"]);
        assert_eq!(weights, [3.0, 2.0]);
        let (_, weights) = core.weigh(&toks, true);
        assert_eq!(weights, [1.0 + 3f64.ln(), 1.0 + 2f64.ln()]);
        // a count past the table: 1 + ln(c) as Python computes it (1 + math.log(1000000))
        let many = vec!["w"; 1_000_000];
        assert_eq!(core.weigh(&many, true).1, [14.815510557964274]);
        assert_eq!(core.weigh(&[], true), (vec![], vec![]));
    }

    #[test]
    fn simhash_is_pythons() {
        let feats = ["hello", "world", "foo"];
        let weights = [1.0, 2.0, 1.0 + 3f64.ln()];
        let cases: [(Hash, usize, u128); 4] = [
            (Hash::Blake2b, 64, 9156635545108951924),
            (Hash::Blake2b, 128, 98056827980416512810069394923192244998),
            (Hash::Xxh3, 64, 13726265831001442199),
            (Hash::Xxh3, 128, 35185318215051490584412365300275195385),
        ];
        for (hash, bits, expected) in cases {
            let fp = simhash(&feats, &weights, bits, |f| digest(hash, f.as_bytes(), bits / 8)).unwrap();
            assert_eq!(fp, expected, "{bits} bits");
        }
        // Weights far apart: the light one still counts 1 (rounded, at least 1).
        let blake = |f: &str| digest(Hash::Blake2b, f.as_bytes(), 8);
        assert_eq!(
            simhash(&["hello", "world"], &[1e6, 1.0], 64, blake).unwrap(),
            9022087748821825191
        );
        assert_eq!(
            simhash(&["hello", "world"], &[1e6, 1e6], 64, blake).unwrap(),
            941467831378194432
        );
        assert!(simhash(&[], &[], 64, blake).is_err());
        assert!(simhash(&["a"], &[f64::NAN], 64, blake).is_err());
        assert!(simhash(&["a"], &[0.0], 64, blake).is_err());
    }

    #[test]
    fn digests_are_pythons() {
        // hashlib.blake2b(b"hello", digest_size=8).digest(), read little-endian
        assert_eq!(blake2b_64("hello"), 9022087748821825191);
        assert_eq!(&digest(Hash::Blake2b, b"hello", 8)[..8], b"\xa7\xb6\xed\xa8\x01\xe54}");
        assert_eq!(exact_fp(&["hello", "world"], 64), 5616169019188561887);
        assert_eq!(
            exact_fp(&["hello", "world"], 128),
            51739796884820229183463473406658263260
        );
        assert_eq!(exact_fp(&[], 64), 10919458508787844015);
    }

    #[test]
    fn sketch_is_pythons() {
        let of = |words: &[&str]| -> String {
            let digests: Vec<u64> = words.iter().map(|w| blake2b_64(w)).collect();
            sketch(&digests).iter().map(|b| format!("{b:02x}")).collect()
        };
        // sketch.sketch_tokens(...).hex(): the slots set, each with its 16 bits' bytes
        let at = |slots: &[(usize, &str)]| -> String {
            (0..SLOTS)
                .map(|i| slots.iter().find(|s| s.0 == i).map_or("0000", |s| s.1))
                .collect()
        };
        assert_eq!(of(&["a", "b", "c", "d"]), at(&[(2, "4399"), (35, "e280")]));
        assert_eq!(of(&["a"]), at(&[(51, "3de2")]));
        assert_eq!(of(&["a", "b"]), at(&[(58, "ca3a")]));
        assert_eq!(sketch(&[]), [0u8; 2 * SLOTS]);
        assert_eq!(mix(1), 6238072747940578789);
        assert_eq!(mix(C1), 16294208416658607535);
    }

    #[test]
    fn options_name_what_is_not_native() {
        assert!(matches!(options(64, "blake2b", "log_tf"), Ok((Hash::Blake2b, true))));
        assert!(matches!(options(128, "xxh3", "tf"), Ok((Hash::Xxh3, false))));
        for (bits, hash, weighting) in [(32, "blake2b", "tf"), (64, "md5", "tf"), (64, "xxh3", "idf")] {
            assert!(options(bits, hash, weighting).is_err());
        }
    }

    #[test]
    fn charset_holds_its_ranges_and_refuses_bad_ones() {
        let set = CharSet::from_ranges(&[(0x41, 0x43), (0x10fffe, 0x110000)]).unwrap();
        assert!(set.contains('A') && set.contains('B') && !set.contains('C'));
        assert!(set.contains('\u{10ffff}'));
        assert!(CharSet::from_ranges(&[(5, 4)]).is_err());
        assert!(CharSet::from_ranges(&[(0, 0x110001)]).is_err());
    }
}
