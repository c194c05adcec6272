//! Matching items against text: normalised tokens, containment, and what a text says (its
//! pattern lines read as the instances they stand for).

use super::*;

pub(super) const QUOTE_CHARS: &[char] = &['`', '"', '\'', '“', '”', '‘', '’', '*', '«', '»'];

/// Text normalised for matching: lower case, quotes and backticks dropped, whitespace collapsed.
pub fn norm_text(s: &str) -> String {
    norm_tokens(s).join(" ")
}

/// Lower-cased tokens: runs of letters and digits, and single punctuation characters; quotes,
/// backticks and `*` count as spaces; thousands separators inside numbers are dropped.
pub(super) fn norm_tokens(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
            i += 1;
            continue;
        }
        if c == ','
            && !cur.is_empty()
            && cur.bytes().all(|b| b.is_ascii_digit())
            && i + 3 < chars.len() + 1
            && chars
                .get(i + 1..i + 4)
                .is_some_and(|g| g.iter().all(char::is_ascii_digit))
            && chars.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
        {
            i += 1;
            continue;
        }
        if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if !(c.is_whitespace() || QUOTE_CHARS.contains(&c)) {
            out.push(c.to_string());
        }
        i += 1;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Token sequences, indexed for containment checks.
pub(super) struct TokenIndex {
    toks: Vec<String>,
    at: HashMap<String, Vec<usize>>,
}

impl TokenIndex {
    pub(super) fn new(text: &str) -> Self {
        let toks = norm_tokens(text);
        let mut at: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, t) in toks.iter().enumerate() {
            at.entry(t.clone()).or_default().push(i);
        }
        Self { toks, at }
    }

    pub(super) fn contains(&self, needle: &[String]) -> bool {
        if needle.is_empty() {
            return false;
        }
        let mut anchor = 0;
        let mut fewest = usize::MAX;
        for (k, t) in needle.iter().enumerate() {
            match self.at.get(t) {
                None => return false,
                Some(v) if v.len() < fewest => {
                    fewest = v.len();
                    anchor = k;
                }
                Some(_) => {}
            }
        }
        self.at[&needle[anchor]].iter().any(|&p| {
            p >= anchor
                && p - anchor + needle.len() <= self.toks.len()
                && self.toks[p - anchor..p - anchor + needle.len()] == *needle
        })
    }

    pub(super) fn contains_text(&self, text: &str) -> bool {
        self.contains(&norm_tokens(text))
    }
}

/// Which of `needles` occur in any of `texts` (normalised token sequences), in one pass.
pub(super) fn occur_in(
    texts: &mut dyn Iterator<Item = &str>,
    needles: &[Vec<String>],
) -> Vec<bool> {
    let mut found = vec![false; needles.len()];
    let mut by_first: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, n) in needles.iter().enumerate() {
        if let Some(f) = n.first() {
            by_first.entry(f.as_str()).or_default().push(k);
        }
    }
    if by_first.is_empty() {
        return found;
    }
    for text in texts {
        let toks = norm_tokens(text);
        for (p, t) in toks.iter().enumerate() {
            if let Some(ks) = by_first.get(t.as_str()) {
                for &k in ks {
                    let n = &needles[k];
                    if !found[k] && p + n.len() <= toks.len() && toks[p..p + n.len()] == n[..] {
                        found[k] = true;
                    }
                }
            }
        }
        if found.iter().all(|f| *f) {
            break;
        }
    }
    found
}

/// What a text says, for matching items against it.
pub(super) struct Said {
    keys: HashSet<String>,
    index: TokenIndex,
}

impl Said {
    /// What `text` says, its pattern lines read as the instances they stand for.
    pub(super) fn new(text: &str) -> Self {
        let text = pattern::expand(text);
        let text = text.as_ref();
        let keys = extract(text).iter().flat_map(Item::registered).collect();
        Self {
            keys,
            index: TokenIndex::new(text),
        }
    }

    pub(super) fn has(&self, item: &Item) -> bool {
        item.lookups().iter().any(|k| self.keys.contains(k)) || self.index.contains_text(&item.text)
    }
}

/// Does `text` carry `item` (by its normalised value, or its text up to trivial formatting)?
pub fn mentions(text: &str, item: &Item) -> bool {
    Said::new(text).has(item)
}
