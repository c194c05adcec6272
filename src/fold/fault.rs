//! `Faults`: why the audit declines a summary, as data. A leaf of the engine (it imports nothing
//! from `fold`), so that `audit`, which finds them, and `cite`, which rejects a candidate for
//! them, both depend on it and not on each other. The words are `decision`'s.

/// One reason the audit declines a summary, with the data that decided it. The words are
/// `decision`'s (its `Display`); the JSON and the records carry them.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// It imitates mf's framing: each forgery's kind and text.
    Forged(Vec<(String, String)>),
    /// It repeats the instruction: the share of its 5-word phrases found there.
    Echo(f64),
    /// Its own words keep `own` of the salient items, under `floor` (a generic text).
    Generic { own: f64, floor: f64 },
    /// It keeps `kept` of `found` items (weighted: `retention`), under `min`; the missing
    /// items the audit lists, most important first.
    Lossy {
        kept: usize,
        found: usize,
        retention: f64,
        min: f64,
        missing: Vec<String>,
    },
    /// It states what nothing it read says.
    Invented(Vec<String>),
    /// It states corrected values as current: (old, new).
    Superseded(Vec<(String, String)>),
    /// It binds values otherwise than the span does: each claim, what the span says instead,
    /// and where (the transcript line when known, else the turn).
    Misstated(Vec<Misstated>),
}

/// One misstated claim, as a fault carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misstated {
    /// `figure`, `action` or `status`.
    pub kind: &'static str,
    pub claim: String,
    pub span_says: String,
    pub turn: u64,
    pub line: Option<u64>,
}

/// Why the audit declines a summary: every fault found, in the order they are told.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults(pub Vec<Fault>);

// The shares in it are ratios of counts, never NaN: equality is total.
impl Eq for Fault {}
impl Eq for Faults {}

impl Faults {
    /// The same faults with every text from the summary or the span passed through `f` (mf
    /// redacts secrets before a reason is shown or written).
    pub fn map_texts(mut self, mut f: impl FnMut(&str) -> String) -> Self {
        let mut each = |t: &mut String| *t = f(t);
        for fault in &mut self.0 {
            match fault {
                Fault::Forged(v) => v.iter_mut().for_each(|(_, text)| each(text)),
                Fault::Superseded(v) => v.iter_mut().for_each(|(old, new)| {
                    each(old);
                    each(new);
                }),
                Fault::Lossy { missing: v, .. } | Fault::Invented(v) => {
                    v.iter_mut().for_each(&mut each)
                }
                Fault::Misstated(v) => v.iter_mut().for_each(|m| {
                    each(&mut m.claim);
                    each(&mut m.span_says);
                }),
                Fault::Echo(_) | Fault::Generic { .. } => {}
            }
        }
        self
    }

    /// Whether any fault names `text` (a missing item, an invention, a forgery, a value).
    pub fn names(&self, text: &str) -> bool {
        self.0.iter().any(|fault| match fault {
            Fault::Forged(v) => v.iter().any(|(_, t)| t == text),
            Fault::Superseded(v) => v.iter().any(|(old, new)| old == text || new == text),
            Fault::Lossy { missing: v, .. } | Fault::Invented(v) => v.iter().any(|t| t == text),
            Fault::Misstated(v) => v.iter().any(|m| m.claim == text || m.span_says == text),
            Fault::Echo(_) | Fault::Generic { .. } => false,
        })
    }
}
