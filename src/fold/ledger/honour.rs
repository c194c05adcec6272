//! The one rule of what a summary mf writes may cover: the re-vet on read, asked before the
//! write. The planner asks it of every chunk it plans (so it never plans a fold it would not
//! honour), the writer of every summary before it appends it (a summary the re-vet would refuse
//! is never written), and the replay applies it to every claim it reads — the same code.

use crate::digest::content_fingerprint;
use crate::entry::{Claim, ClaimKind, Conversation, Draft, Entry, NONE, Role};

use super::Ledger;

impl<'a> Ledger<'a> {
    /// Would each of `drafts`, appended in this order after everything in the file, stand?
    /// The file is replayed with them appended (each a line of mf's shape, seen by the agent),
    /// so each is judged by [`Ledger::check`] exactly as it will be read back: `Ok` when it
    /// stands, else the words `mf verify` would print. Stubs are judged by the mask's own rule
    /// (one tool result, answered where it stood) and pass here.
    pub fn would_honour(&self, drafts: &[Draft]) -> Vec<Result<(), String>> {
        let conv = self.conv;
        if drafts.iter().all(|d| d.kind != ClaimKind::Summary) {
            return drafts.iter().map(|_| Ok(())).collect();
        }
        // After every line of the file: its last entry, and any record written after it.
        let last = conv
            .entries
            .iter()
            .map(|e| e.line)
            .chain(conv.records.iter().map(|r| r.line))
            .max()
            .unwrap_or(0);
        let mut entries: Vec<Entry> = conv.entries.to_vec();
        let mut claims: Vec<Claim> = conv.claims.to_vec();
        let mut at = Vec::with_capacity(drafts.len());
        for (k, d) in drafts.iter().enumerate() {
            if d.kind != ClaimKind::Summary {
                at.push(None);
                continue;
            }
            let i = entries.len() as u32;
            entries.push(Entry {
                line: last + 1 + k as u32,
                role: Role::System,
                flags: 0,
                chars: d.content.chars().count() as u32,
                hash: 0,
                id: crate::digest::id_hash(&d.id),
                pos: 0,
                len: 0,
                more: NONE,
                link: NONE,
                claim: claims.len() as u32,
            });
            claims.push(Claim {
                entry: i,
                kind: d.kind,
                id: d.id.clone(),
                coverage: Ok(d.coverage.clone()),
                content_fingerprint: Some(content_fingerprint(&d.content)),
                label: d.content.lines().next().unwrap_or_default().to_string(),
                shape_ok: Ok(()),
            });
            at.push(Some(i));
        }
        let after = Ledger::new(Conversation {
            entries: &entries,
            claims: &claims,
            ..conv
        });
        at.into_iter()
            .map(|i| match i {
                None => Ok(()),
                Some(i) if after.summaries.contains_key(&i) => Ok(()),
                Some(i) => Err(after
                    .flags
                    .iter()
                    .find(|f| f.entry == Some(i))
                    .map_or_else(|| "it would not stand".to_string(), |f| f.why.clone())),
            })
            .collect()
    }
}
