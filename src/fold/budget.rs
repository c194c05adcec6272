//! `fit_budget`: the part of the recall view that fits a token budget. Pure.

use crate::entry::estimate_tokens;
use crate::fold::ledger::{Item, ItemKind, Ledger};

/// Tokens held back from every budget for the reply and framing.
pub const RESERVE_TOKENS: usize = 256;
/// Below this much room, nothing is worth sending.
pub const MIN_ROOM_TOKENS: usize = 100;

/// Keep the preamble and standing summaries first, then the newest entries that fit, whole tool
/// units at a time (a tool result never travels without its call). Returns items in view order.
pub fn fit_budget(ledger: &Ledger<'_>, budget_tokens: usize) -> Vec<Item> {
    let room = budget_tokens.saturating_sub(RESERVE_TOKENS);
    if room < MIN_ROOM_TOKENS {
        return Vec::new();
    }
    let cost = |it: Item| estimate_tokens(ledger.item_chars(it));
    let view = &ledger.view;
    let mut keep = vec![false; view.len()];
    let mut used = 0usize;
    // Preamble and summaries first, in order, while they fit.
    for (k, &it) in view.iter().enumerate() {
        if ledger.kind(it) == ItemKind::Summary || ledger.is_preamble(it) {
            if used + cost(it) > room {
                break;
            }
            used += cost(it);
            keep[k] = true;
        }
    }
    // Then the newest entries, one unit at a time, until one does not fit.
    let mut k = view.len();
    while k > 0 {
        // A unit ends at k-1; it starts at the message whose calls the tool results answer.
        let mut start = k - 1;
        while start > 0 && is_tool_result(ledger, view[start]) {
            start -= 1;
        }
        let unit = start..k;
        if unit.clone().all(|j| keep[j]) {
            k = start;
            continue;
        }
        let need: usize = unit
            .clone()
            .filter(|&j| !keep[j])
            .map(|j| cost(view[j]))
            .sum();
        if used + need > room {
            break;
        }
        used += need;
        unit.for_each(|j| keep[j] = true);
        k = start;
    }
    view.iter()
        .zip(keep)
        .filter_map(|(&it, k)| k.then_some(it))
        .collect()
}

fn is_tool_result(ledger: &Ledger<'_>, it: Item) -> bool {
    ledger.kind(it) != ItemKind::Summary && !ledger.conv.answers(it as usize).is_empty()
}
