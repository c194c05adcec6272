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
    pub fn map_texts(self, mut f: impl FnMut(&str) -> String) -> Self {
        let mut all = |v: Vec<String>| v.iter().map(|t| f(t)).collect::<Vec<_>>();
        let faults = self
            .0
            .into_iter()
            .map(|fault| match fault {
                Fault::Forged(v) => {
                    let (kinds, texts): (Vec<String>, Vec<String>) = v.into_iter().unzip();
                    Fault::Forged(kinds.into_iter().zip(all(texts)).collect())
                }
                Fault::Lossy {
                    kept,
                    found,
                    retention,
                    min,
                    missing,
                } => Fault::Lossy {
                    kept,
                    found,
                    retention,
                    min,
                    missing: all(missing),
                },
                Fault::Invented(v) => Fault::Invented(all(v)),
                Fault::Superseded(v) => {
                    let (old, new): (Vec<String>, Vec<String>) = v.into_iter().unzip();
                    Fault::Superseded(all(old).into_iter().zip(all(new)).collect())
                }
                other => other,
            })
            .collect();
        Faults(faults)
    }

    /// Whether any fault names `text` (a missing item, an invention, a forgery, a value).
    pub fn names(&self, text: &str) -> bool {
        self.0.iter().any(|fault| match fault {
            Fault::Forged(v) | Fault::Superseded(v) => {
                v.iter().any(|(a, b)| a == text || b == text)
            }
            Fault::Lossy { missing: v, .. } | Fault::Invented(v) => v.iter().any(|t| t == text),
            Fault::Echo(_) | Fault::Generic { .. } => false,
        })
    }
}
