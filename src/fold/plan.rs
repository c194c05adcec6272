//! `plan`: given a ledger and a policy, decide what (if anything) to fold. Pure.
//!
//! A fold is a run of view items after the preamble and before the verbatim tail. Its seams lie
//! before a turn start (never between a tool call and its results, never inside the last turn).
//! A fold over the model's span budget is split into chunks, one summarizer call each: at turn
//! starts where it can, inside a turn at tool-unit boundaries where a single turn is too big;
//! a single tool unit too big for any call stays verbatim.

use crate::digest::content_fingerprint;
use crate::entry::{
    ClaimKind, ClaimStrategy, Coverage, Covered, DeclineReason, DeclinedSpan, Draft, NONE,
    RecordKind, SpanRef, Usage, estimate_tokens, flag,
};
use crate::fold::frame::plain_label;
use crate::fold::ledger::{Item, ItemKind, Ledger};
use crate::fold::policy::FoldPolicy;

/// What the engine decided for one transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Fold, one summarizer call per span.
    Fold(Plan),
    /// Nothing to fold now, and why.
    Skip(Skip),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    pub reason: SkipReason,
    /// The span that would have folded, when there was one.
    pub span: Option<Span>,
}

/// A set of view items folded by one summary, and what it amounts to.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// In conversation order.
    pub items: Vec<Item>,
    pub from_turn: u64,
    pub to_turn: u64,
    /// Original messages behind the span, all levels down.
    pub leaf_count: usize,
    /// Characters of the span as a model would read it.
    pub chars: usize,
    /// Coverage digest of its entries' bytes.
    pub digest: String,
    /// Anchor-line ranges naming exactly its entries.
    pub ranges: Vec<[u32; 2]>,
    /// First and last anchor line.
    pub first_line: u32,
    pub last_line: u32,
    /// The most tokens its summary may take, when `--target-tokens` needs a shorter summary
    /// than the compression goal gives.
    pub summary_cap: Option<usize>,
    /// How its coverage was chosen (recorded beside the summary, so the re-vet on read knows
    /// whether gaps are allowed).
    pub strategy: ClaimStrategy,
    /// Anchor line of what follows this chunk of a plan (the next chunk, or what stays
    /// verbatim): recorded as the summary's tail, so a fold's end is where mf chose it.
    pub tail_line: Option<u32>,
}

impl Span {
    /// The decline record for this span: named by its ends, count and digest, so that it stays
    /// small however long the span is.
    pub fn decline(
        &self,
        reason: DeclineReason,
        model: &str,
        summary_chars: Option<usize>,
        detail: String,
    ) -> RecordKind {
        RecordKind::Decline {
            reason,
            model: model.to_string(),
            span: DeclinedSpan::Ref(SpanRef {
                from_line: self.first_line,
                to_line: self.last_line,
                count: self.items.len() as u64,
                digest: self.digest.clone(),
                from_turn: self.from_turn,
                to_turn: self.to_turn,
            }),
            span_chars: self.chars as u64,
            summary_chars: summary_chars.map(|c| c as u64),
            detail,
            usage: None,
            key: None,
        }
    }

    pub fn of(ledger: &Ledger<'_>, items: Vec<Item>) -> Self {
        let (mut from, mut to) = (u64::MAX, 0u64);
        let (mut leaves, mut chars) = (0usize, 0usize);
        let (mut first, mut last) = (u32::MAX, 0u32);
        for &it in &items {
            let (a, b) = ledger.item_turns(it);
            from = from.min(a);
            to = to.max(b);
            leaves += ledger.item_leaves(it);
            chars += ledger.item_chars(it);
            let line = ledger.conv.entries[it as usize].line;
            first = first.min(line);
            last = last.max(line);
        }
        Span {
            digest: ledger.digest(&items),
            ranges: ledger.line_ranges(&items),
            items,
            from_turn: from,
            to_turn: to,
            leaf_count: leaves,
            chars,
            first_line: first,
            last_line: last,
            summary_cap: None,
            strategy: ClaimStrategy::Summary,
            tail_line: None,
        }
    }

    /// The coverage record of a summary of this span (by `model`, with content fingerprint
    /// `fingerprint`), as mf writes it beside the summary; `tail_line` when the span has no
    /// tail of its own.
    pub fn coverage(
        &self,
        model: &str,
        usage: Option<Usage>,
        now_ms: u64,
        tail_line: Option<u32>,
        fingerprint: String,
    ) -> Coverage {
        Coverage {
            version: 2,
            from_turn: self.from_turn,
            to_turn: self.to_turn,
            entry_count: self.items.len() as u64,
            covered: Covered::Lines {
                ranges: self.ranges.clone(),
                digest: self.digest.clone(),
            },
            // The chunk's own tail when the plan gave it one (where its fold stops).
            tail_line: self.tail_line.or(tail_line),
            kept_results: None,
            strategy: Some(self.strategy),
            model: model.to_string(),
            summarized_at_ms: now_ms,
            usage,
            fingerprint,
        }
    }

    /// A summary of this span as the re-vet judges its coverage: mf's plain label (the re-vet
    /// honours any label mf writes), no text. What [`Ledger::would_honour`] is asked about
    /// before anything is paid.
    pub fn draft_to_vet(&self, tail_line: Option<u32>) -> Draft {
        let content = format!(
            "{}\n\n",
            plain_label(self.from_turn, self.to_turn, self.leaf_count, "")
        );
        Draft {
            kind: ClaimKind::Summary,
            turn: self.to_turn,
            coverage: self.coverage("", None, 0, tail_line, content_fingerprint(&content)),
            content,
            id: String::new(),
            stub_of: None,
            extra: Vec::new(),
        }
    }

    /// The same span, as `--strategy cited` folds it: exactly what its summary cites.
    pub fn cited(self) -> Self {
        Span {
            strategy: ClaimStrategy::Cited,
            ..self
        }
    }

    pub fn tokens(&self) -> usize {
        estimate_tokens(self.chars)
    }

    /// The length its summary should aim for, in tokens: the policy's goal for a span of this
    /// size, held to `summary_cap` when there is one.
    pub fn summary_target_tokens(&self, policy: &FoldPolicy) -> usize {
        let goal = policy.summary_target_tokens(self.tokens());
        self.summary_cap.map_or(goal, |cap| goal.min(cap.max(64)))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// Fewer uncovered entries than `--trigger`.
    BelowTrigger { uncovered: usize, trigger: usize },
    /// Everything considered is inside the verbatim tail (after rounding to whole turns).
    NothingBeforeTail { considered: usize },
    /// Fewer entries would fold than `--min-fold`.
    TooFew { would_fold: usize, min_fold: usize },
    /// This exact span was already declined (not smaller, or lossy with this model).
    DeclinedBefore {
        line: u32,
        at_ms: u64,
        reason: crate::entry::DeclineReason,
    },
    /// The recall view is already within `--target-tokens`.
    UnderTarget { tokens: usize, target: usize },
    /// `--strategy mask`: no tool result outside the kept ones is worth a stub. Of the
    /// `results` in view, `tail` are in the verbatim tail, `kept` more among the `keep` newest,
    /// and `small` (the rest) too short for a stub to shorten.
    NothingToMask {
        results: usize,
        keep: usize,
        tail: usize,
        kept: usize,
        small: usize,
    },
    /// Every span would hold only what mf wrote or was already refused: summaries, stubs, and
    /// entries a binding decline spanned. Nothing new to ask about.
    /// (`small`: chunks too short to come back shorter, between units too large for a call.)
    NothingNew { stale: usize, small: usize },
    /// Every tool unit that would fold is too large for one call under `--max-span-tokens`
    /// (`room`: the characters a request has for the transcript after its own framing).
    TooLargeForACall {
        units: usize,
        budget: usize,
        room: usize,
    },
    /// The agent shows one unbroken run of entries after its summaries (pi), and the first entry
    /// this fold would keep verbatim (of turn `turn`, kept for `why`) stands before everything it
    /// would fold: no part of the fold can be shown.
    OneRun { turn: u64, why: KeptFor },
    /// The first chunk of the fold would not stand on read (`why`: the re-vet's words); mf never
    /// plans a fold it would not honour.
    NotHonoured { why: String },
}

/// Why an entry inside a fold's reach stays verbatim (what stops a fold on an agent that shows
/// one unbroken run after its summaries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptFor {
    /// A real user message, `--protect user`.
    Protected,
    /// Older than the window `--size` considers.
    Window,
    /// The preamble, or an entry the format pins.
    Fixed,
    /// A tool unit too large for one call.
    TooLarge,
    /// A chunk declined before (its verdict binds).
    Declined,
    /// A chunk with nothing new, or too small to come back shorter.
    NotAsked,
    /// The prompt of a turn whose other entries fold apart from it.
    Prompt,
    /// An earlier summary stands after it.
    Summary,
}

/// A fold to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// One span per summarizer call, in conversation order (several when the fold was over the
    /// model's span budget).
    pub spans: Vec<Span>,
    /// Everything the fold covers, all spans together.
    pub whole: Span,
    /// View items that stay verbatim (preamble, anything before the window, the tail, protected
    /// user messages, units too large for one call).
    pub verbatim: Vec<Item>,
    /// Real user messages kept out of the fold (`--protect user`).
    pub protected: Vec<Item>,
    /// Tool units too large for one call, left verbatim.
    pub oversized: Vec<Vec<Item>>,
    /// Some span boundary lies inside a turn (at a tool-unit boundary).
    pub in_turn: bool,
    /// The turn folded inside because it is larger than the verbatim tail may hold: its prompt
    /// and its newest tool units stay verbatim, its older ones fold.
    pub split_turn: Option<u64>,
    /// Characters of the whole recall view before the fold.
    pub view_chars: usize,
    /// Anchor line of the first entry of the verbatim tail.
    pub tail_line: Option<u32>,
    /// Remarks for the decision record (a target that cannot be met, …).
    pub notes: Vec<PlanNote>,
}

/// A remark of the planner for the decision record. The words are `decision`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanNote {
    /// `--target-tokens` is met only by folding everything before the verbatim tail, with its
    /// summary held to `held_to` tokens (at the compression goal it would be `goal`).
    Squeezed {
        target: usize,
        held_to: usize,
        goal: usize,
    },
    /// `--target-tokens` cannot be met: the preamble and the verbatim tail alone are `fixed`
    /// tokens; everything before them folds.
    TargetUnmet { target: usize, fixed: usize },
    /// Items with nothing new (summaries, stubs, entries declined before) stay as they are.
    NothingNew(usize),
    /// Chunks under `MIN_CHUNK_CHARS` between units too large to fold stay verbatim.
    SmallChunks(usize),
    /// The agent shows one unbroken run of entries after its summaries (pi): an entry of turn
    /// `turn` stays verbatim (for `why`) with more to fold after it, so the fold stops there: the
    /// `chunks` planned from turn `from_turn` on stay verbatim.
    OneRun {
        turn: u64,
        why: KeptFor,
        chunks: usize,
        from_turn: u64,
    },
    /// The chunk from turn `from_turn` would not stand on read (`why`: the re-vet's words), so
    /// it and the `chunks - 1` after it stay verbatim.
    NotHonoured {
        why: String,
        chunks: usize,
        from_turn: u64,
    },
}

/// Where fold boundaries may go among the candidates.
/// What the fold's window is cut in: the ledger and policy, the head of a turn split at the
/// tail (kept verbatim), and the seams of the candidates.
#[derive(Clone, Copy)]
struct Window<'a> {
    ledger: &'a Ledger<'a>,
    policy: &'a FoldPolicy,
    head: &'a [Item],
    seams: &'a Seams,
}

struct Seams {
    /// Boundary before candidate p: at a turn start, outside every tool unit.
    turn: Vec<bool>,
    /// Boundary before candidate p: outside every tool unit (for splitting a turn).
    unit: Vec<bool>,
}

impl Seams {
    fn new(ledger: &Ledger<'_>, cands: &[Item], lenient: bool) -> Self {
        let n = cands.len();
        let entries = ledger.conv.entries;
        // Position of each entry among the candidates (`usize::MAX`: not a candidate).
        let mut pos = vec![usize::MAX; entries.len()];
        for (p, &it) in cands.iter().enumerate() {
            pos[it as usize] = p;
        }
        let pos_of = |it: u32| Some(pos[it as usize]).filter(|&p| p != usize::MAX);
        let is_turn_start = |it: Item| match ledger.kind(it) {
            ItemKind::Message => ledger.starts_turn(it as usize),
            ItemKind::Stub => false,
            ItemKind::Summary => ledger.starts_turn(ledger.summaries[&it].first_leaf as usize),
        };
        // Forbidden boundaries: strictly after a call, up to and including its last result.
        let mut diff = vec![0i64; n + 2];
        for (c, &it) in cands.iter().enumerate() {
            if ledger.kind(it) != ItemKind::Message || ledger.conv.calls(it as usize).is_empty() {
                continue;
            }
            let last = ledger.last_result[it as usize];
            let end = if last != NONE {
                // The result may sit under a stub; the stub takes its place.
                let at = pos_of(last).or_else(|| {
                    let h = ledger.hidden_by[last as usize];
                    (h != NONE).then(|| pos_of(h)).flatten()
                });
                match at {
                    Some(r) if r > c => r,
                    _ => continue,
                }
            } else {
                // Unanswered: its turn stays whole.
                (c + 1..n)
                    .find(|&q| is_turn_start(cands[q]))
                    .map_or(n, |q| q - 1)
            };
            diff[c + 1] += 1;
            diff[end + 1] -= 1;
        }
        let mut unit = vec![true; n + 1];
        let mut acc = 0i64;
        for (p, slot) in unit.iter_mut().enumerate() {
            acc += diff[p];
            if acc > 0 {
                *slot = false;
            }
        }
        // Inside a turn, a boundary only before something that is not a tool result.
        for p in 1..n {
            let it = cands[p];
            if unit[p]
                && ledger.kind(it) != ItemKind::Summary
                && !ledger.conv.answers(it as usize).is_empty()
            {
                unit[p] = false;
            }
        }
        // Never inside what a summary before it stands for: a cited fold (or a rollup of one)
        // leaves raw entries between its originals, and they stand after it in the view; a
        // boundary among them would give a later chunk entries inside an earlier one's reach,
        // which a summary fold never leaves raw (the re-vet would not honour it).
        let mut reach = 0u32;
        // Whether every summary whose reach is open is a summary fold (gaps only where it kept
        // user messages out).
        let mut gapless_reach = true;
        let summary_fold = |it: Item| {
            ledger.summaries.get(&it).is_none_or(|s| {
                ledger
                    .conv
                    .claim(s.entry as usize)
                    .and_then(|c| c.coverage.as_ref().ok())
                    .is_some_and(|c| c.strategy == Some(ClaimStrategy::Summary))
            })
        };
        for (p, &it) in cands.iter().enumerate() {
            // Where it stands in conversation order (an agent's own summary stands before what
            // it kept), and the last original it stands for.
            let first = ledger.position(it).0;
            let last = match ledger.summaries.get(&it) {
                Some(s) => (entries.partition_point(|e| e.line <= s.last_leaf_line) as u32)
                    .saturating_sub(1)
                    .max(first),
                None => first,
            };
            // A summary fold's own gaps are user messages it kept out (`--protect user`): a
            // later fold may end at one of them (the re-vet keeps them out), as it may at any
            // turn. Inside a cited summary's reach (or one written before mf recorded
            // strategies) nothing is cut. `would_honour` below has the last word.
            if lenient && p > 0 && reach > first && gapless_reach && ledger.starts_turn(it as usize)
            {
                reach = reach.max(last);
                continue;
            }
            if p > 0 && reach > first {
                unit[p] = false;
            } else {
                gapless_reach = true;
            }
            gapless_reach &= summary_fold(it);
            reach = reach.max(last);
        }
        let turn = (0..=n)
            .map(|p| unit[p] && (p == 0 || p == n || is_turn_start(cands[p])))
            .collect();
        Seams { turn, unit }
    }
}

/// The view after the leading preamble (which is never folded), and where it starts.
fn candidates<'v>(ledger: &'v Ledger<'_>) -> (usize, &'v [Item]) {
    let first = ledger
        .view
        .iter()
        .position(|&it| !ledger.is_preamble(it))
        .unwrap_or(ledger.view.len());
    (first, &ledger.view[first..])
}

/// Whether an item stays out of every fold under this policy. A tool result whose call is never
/// folded (a call in the preamble) stays with its call: a fold never holds a result without it.
/// `head`: the prompt that opened a turn folded inside (it stays verbatim).
fn kept_out(ledger: &Ledger<'_>, policy: &FoldPolicy, head: &[Item], it: Item) -> bool {
    let call = ledger.call_of[it as usize];
    ledger.is_fixed(it)
        || (policy.protect_user && ledger.is_user_message(it))
        || (call != NONE && ledger.kind(it) == ItemKind::Message && ledger.is_fixed(call))
        || head.contains(&it)
}

/// Characters mf's label adds to a summary (with the blank line after it), as planning counts.
const SUMMARY_LABEL_CHARS: usize = 400;
/// The least room worth folding into when a recall target squeezes a summary (64 tokens).
const MIN_SUMMARY_CHARS: usize = 256;

/// Estimated characters of the summary of a span of `chars` characters.
fn summary_estimate(policy: &FoldPolicy, chars: usize) -> usize {
    policy.summary_target_tokens(estimate_tokens(chars)) * 4 + SUMMARY_LABEL_CHARS
}

/// Decide what to fold with a summary (or, for `Strategy::Cited`, what to offer).
pub fn plan(ledger: &Ledger<'_>, policy: &FoldPolicy, model: &str) -> Decision {
    // Seams that may cut among the user messages a summary fold kept out (a later fold may end
    // at one of them, as it may at any turn) first; when that plan would not stand on read in
    // full, the strict seams (never inside any summary's reach) instead.
    let lenient = plan_with(ledger, policy, model, true);
    let refused = match &lenient {
        Decision::Skip(s) => matches!(s.reason, SkipReason::NotHonoured { .. }),
        Decision::Fold(f) => f
            .notes
            .iter()
            .any(|n| matches!(n, PlanNote::NotHonoured { .. })),
    };
    if refused {
        plan_with(ledger, policy, model, false)
    } else {
        lenient
    }
}

/// [`plan`] with lenient or strict seams (`Seams::new`).
fn plan_with(ledger: &Ledger<'_>, policy: &FoldPolicy, model: &str, lenient: bool) -> Decision {
    let skip = |reason, span| Decision::Skip(Skip { reason, span });
    if let Some(reason) = not_yet(ledger, policy) {
        return skip(reason, None);
    }
    let view_chars = ledger.view_chars();

    let (first, cands) = candidates(ledger);
    let n = cands.len();
    let seams = Seams::new(ledger, cands, lenient);

    let start = window_start(policy, &seams, n);
    let considered = n - start;

    let tail = tail_start(ledger, cands, &seams, policy, start);
    let end = tail.end;
    let head: Vec<Item> = tail
        .head
        .map(|(a, b)| cands[a..b].to_vec())
        .unwrap_or_default();
    if end <= start || (start..end).all(|p| head.contains(&cands[p])) {
        return skip(SkipReason::NothingBeforeTail { considered }, None);
    }

    // --target-tokens: the fewest oldest turns that bring the view under the target. When even
    // folding everything at the compression goal leaves the view over it, everything is folded
    // and the summaries are held to the room that is left (the gentlest compression that meets
    // the target), unless the verbatim part alone leaves no useful room.
    let (end, squeeze, note) = match policy.target_tokens {
        Some(target) => {
            let win = Window {
                ledger,
                policy,
                head: &head,
                seams: &seams,
            };
            fit_target(&win, first, (start, end), target)
        }
        None => (end, None, None),
    };
    // A fold that ends before the split turn leaves it whole.
    let head: Vec<Item> = match tail.head {
        Some((a, _)) if a < end => head,
        _ => Vec::new(),
    };
    let split_turn = (end < n && !seams.turn[end]).then(|| ledger.item_turns(cands[end]).0);

    let range = &cands[start..end];
    let protected = protected_in(ledger, policy, range);
    let items = folded_in(ledger, policy, &head, range);
    if items.len() < policy.min_fold {
        let reason = SkipReason::TooFew {
            would_fold: items.len(),
            min_fold: policy.min_fold,
        };
        let span = (!items.is_empty()).then(|| Span::of(ledger, items));
        return skip(reason, span);
    }

    // Chunks, when the fold is over the span budget.
    let (chunks, oversized, in_turn, cut_heads) = match policy.max_span_tokens {
        Some(budget) => split(
            &Window {
                ledger,
                policy,
                head: &head,
                seams: &seams,
            },
            cands,
            (start, end),
            budget,
        ),
        None => (vec![items.clone()], Vec::new(), false, Vec::new()),
    };
    let (
        Asked {
            mut spans,
            mut idle,
            declined,
            stale,
            small,
        },
        open_prompts,
    ) = ask_open(ledger, policy, model, cands, chunks);
    if spans.is_empty() {
        return nothing_to_ask(policy, declined, stale, small, &oversized);
    }
    let mut notes: Vec<PlanNote> = note.into_iter().chain(idle_notes(stale, small)).collect();
    for s in &mut spans {
        s.tail_line = chunk_tail(ledger, cands, &s.items);
    }
    // An agent that shows one unbroken run of entries after its summaries (pi) can be shown only
    // a fold of a prefix of what it sends: the chunks before the first entry kept verbatim.
    let mut split_turn = split_turn;
    if ledger.conv.one_run
        && let (k, Some(stop)) = one_run_prefix(ledger, &spans)
    {
        let why = kept_for(
            ledger,
            stop,
            &Kept {
                protected: &protected,
                window: &cands[..start],
                oversized: &oversized,
                declined: declined.as_ref().map(|(_, s)| s),
                idle: &idle,
            },
        );
        if k == 0 {
            return match why {
                KeptFor::Declined => nothing_to_ask(policy, declined, stale, small, &[]),
                _ => skip(
                    SkipReason::OneRun {
                        turn: ledger.item_turns(stop).0,
                        why,
                    },
                    None,
                ),
            };
        }
        let dropped = spans.split_off(k);
        notes.push(PlanNote::OneRun {
            turn: ledger.item_turns(stop).0,
            why,
            chunks: dropped.len(),
            from_turn: dropped[0].from_turn,
        });
        idle.extend(dropped.into_iter().flat_map(|s| s.items));
        // The turn folded inside is folded inside only if a chunk that stands reaches it.
        split_turn = reached(ledger, &spans, split_turn);
    }
    if let Some(room) = squeeze {
        share_room(&mut spans, room);
    }
    let mut whole = match whole_of(ledger, policy, model, &spans) {
        Ok(whole) => whole,
        Err(skipped) => return skipped,
    };
    // The one rule of what a summary may cover (the re-vet on read, `Ledger::would_honour`):
    // mf never plans a fold it would not honour. The chunks from the first one that would not
    // stand on read stay verbatim.
    let drafts: Vec<_> = spans
        .iter()
        .map(|s| s.draft_to_vet(tail_line(ledger, &whole, &cands[end..])))
        .collect();
    let refused = ledger
        .would_honour(&drafts)
        .into_iter()
        .enumerate()
        .find_map(|(k, v)| v.err().map(|why| (k, why)));
    if let Some((k, why)) = refused {
        if k == 0 {
            let first = spans.swap_remove(0);
            return skip(SkipReason::NotHonoured { why }, Some(first));
        }
        let dropped = spans.split_off(k);
        notes.push(PlanNote::NotHonoured {
            why,
            chunks: dropped.len(),
            from_turn: dropped[0].from_turn,
        });
        idle.extend(dropped.into_iter().flat_map(|s| s.items));
        split_turn = reached(ledger, &spans, split_turn);
        whole = match whole_of(ledger, policy, model, &spans) {
            Ok(whole) => whole,
            Err(skipped) => return skipped,
        };
    }
    let kept = (protected.iter().copied())
        .chain(head.iter().copied())
        .chain(cut_heads)
        .chain(open_prompts)
        .chain(idle)
        .chain(oversized.iter().flatten().copied());
    let verbatim = verbatim_of(
        ledger,
        &ledger.view[..first + start],
        kept,
        range,
        &cands[end..],
    );
    let tail_line = tail_line(ledger, &whole, &cands[end..]);
    Decision::Fold(Plan {
        spans,
        whole,
        verbatim,
        protected,
        oversized,
        in_turn,
        split_turn,
        view_chars,
        tail_line,
        notes,
    })
}

/// The turn folded inside, if a chunk that stands still reaches it.
fn reached(ledger: &Ledger<'_>, spans: &[Span], split_turn: Option<u64>) -> Option<u64> {
    split_turn.filter(|&turn| {
        spans
            .last()
            .is_some_and(|s| s.items.iter().any(|&it| ledger.item_turns(it).1 >= turn))
    })
}

/// What keeps an entry out of the fold, for the one-run note: the parts of the plan kept
/// verbatim, each for its reason.
struct Kept<'a> {
    protected: &'a [Item],
    window: &'a [Item],
    oversized: &'a [Vec<Item>],
    declined: Option<&'a Span>,
    idle: &'a [Item],
}

/// Why `stop`, the first entry an agent that shows one unbroken run cannot be shown folded
/// after, stays verbatim.
fn kept_for(ledger: &Ledger<'_>, stop: Item, kept: &Kept<'_>) -> KeptFor {
    if kept.protected.contains(&stop) {
        KeptFor::Protected
    } else if ledger.is_fixed(stop) {
        KeptFor::Fixed
    } else if kept.window.contains(&stop) {
        KeptFor::Window
    } else if kept.oversized.iter().any(|u| u.contains(&stop)) {
        KeptFor::TooLarge
    } else if kept.declined.is_some_and(|s| s.items.contains(&stop)) {
        KeptFor::Declined
    } else if kept.idle.contains(&stop) {
        KeptFor::NotAsked
    } else if ledger.kind(stop) == ItemKind::Message && ledger.starts_turn(stop as usize) {
        KeptFor::Prompt
    } else {
        KeptFor::Summary
    }
}

/// The entries of the fold's range kept out of it as protected (`--protect user`).
fn protected_in(ledger: &Ledger<'_>, policy: &FoldPolicy, range: &[Item]) -> Vec<Item> {
    range
        .iter()
        .copied()
        .filter(|&it| policy.protect_user && ledger.is_user_message(it))
        .collect()
}

/// The entries of the fold's range that fold (none the planner keeps out).
fn folded_in(ledger: &Ledger<'_>, policy: &FoldPolicy, head: &[Item], range: &[Item]) -> Vec<Item> {
    range
        .iter()
        .copied()
        .filter(|&it| !kept_out(ledger, policy, head, it))
        .collect()
}

/// The whole fold as one span, or the skip when it is too few entries, or (asked in one call)
/// the very span declined before.
#[allow(clippy::result_large_err)]
fn whole_of(
    ledger: &Ledger<'_>,
    policy: &FoldPolicy,
    model: &str,
    spans: &[Span],
) -> Result<Span, Decision> {
    let skip = |reason, span| Decision::Skip(Skip { reason, span });
    let folded: Vec<Item> = spans.iter().flat_map(|s| s.items.iter().copied()).collect();
    if folded.len() < policy.min_fold {
        return Err(skip(
            SkipReason::TooFew {
                would_fold: folded.len(),
                min_fold: policy.min_fold,
            },
            None,
        ));
    }
    let whole = Span::of(ledger, folded);
    if spans.len() == 1
        && let Some((line, at_ms, reason)) = ledger.declined_before(&whole.digest, model)
    {
        return Err(skip(
            SkipReason::DeclinedBefore {
                line,
                at_ms,
                reason,
            },
            Some(whole),
        ));
    }
    Ok(whole)
}

/// Not worth planning yet: too few entries uncovered (under the trigger), or the view is already
/// within `--target-tokens`.
fn not_yet(ledger: &Ledger<'_>, policy: &FoldPolicy) -> Option<SkipReason> {
    let uncovered = ledger.uncovered_count();
    if uncovered < policy.trigger {
        return Some(SkipReason::BelowTrigger {
            uncovered,
            trigger: policy.trigger,
        });
    }
    let tokens = estimate_tokens(ledger.view_chars());
    match policy.target_tokens {
        Some(target) if tokens <= target => Some(SkipReason::UnderTarget { tokens, target }),
        _ => None,
    }
}

/// The window: the newest `size` of the `n` candidates, its start rounded forward to a whole
/// turn.
fn window_start(policy: &FoldPolicy, seams: &Seams, n: usize) -> usize {
    let mut start = policy.size.map_or(0, |size| n.saturating_sub(size));
    while start < n && !seams.turn[start] {
        start += 1;
    }
    start
}

/// The skip when no chunk is asked about: a span declined before, units each too large for one
/// call, or nothing new.
fn nothing_to_ask(
    policy: &FoldPolicy,
    declined: Option<((u32, u64, DeclineReason), Span)>,
    stale: usize,
    small: usize,
    oversized: &[Vec<Item>],
) -> Decision {
    let skip = |reason, span| Decision::Skip(Skip { reason, span });
    match declined {
        Some(((line, at_ms, reason), span)) => skip(
            SkipReason::DeclinedBefore {
                line,
                at_ms,
                reason,
            },
            Some(span),
        ),
        None if stale == 0 && small == 0 && !oversized.is_empty() => {
            let budget = policy.max_span_tokens.unwrap_or(0);
            skip(
                SkipReason::TooLargeForACall {
                    units: oversized.len(),
                    budget,
                    room: (budget * 4).saturating_sub(REQUEST_OVERHEAD_CHARS),
                },
                None,
            )
        }
        None => skip(SkipReason::NothingNew { stale, small }, None),
    }
}

/// `--target-tokens` squeezed: each chunk's summary gets its share of the room, by size.
fn share_room(spans: &mut [Span], room: usize) {
    let all: usize = spans.iter().map(|s| s.chars).sum::<usize>().max(1);
    let text = room.saturating_sub(SUMMARY_LABEL_CHARS * spans.len());
    for s in spans {
        s.summary_cap = Some(estimate_tokens(text * s.chars / all));
    }
}

/// What stays verbatim, in order: what lies before the window, what the planner kept out, the
/// fixed entries of the fold's range (outside the preamble), and the tail.
fn verbatim_of(
    ledger: &Ledger<'_>,
    before: &[Item],
    kept: impl Iterator<Item = Item>,
    range: &[Item],
    tail: &[Item],
) -> Vec<Item> {
    let mut verbatim: Vec<Item> = before.to_vec();
    verbatim.extend(kept);
    verbatim.extend(
        range
            .iter()
            .copied()
            .filter(|&it| ledger.is_fixed(it) && !ledger.is_preamble(it)),
    );
    verbatim.extend_from_slice(tail);
    verbatim
}

/// The law at a seam, whatever the seams the planner chose (a tool unit that straddles later
/// prompts hides their turns from its turn seams): a chunk never holds the prompt that opened a
/// turn while some of that turn stays outside it — in the verbatim tail, in another chunk, or
/// left verbatim. Such a prompt leaves its chunk (it stays verbatim, as the head of a turn folded
/// inside does); returned, the prompts taken out.
fn keep_open_prompts(
    ledger: &Ledger<'_>,
    policy: &FoldPolicy,
    cands: &[Item],
    chunks: &mut [Vec<Item>],
) -> Vec<Item> {
    // Which chunk holds each candidate (`usize::MAX`: none). Indexed by item: a million-entry
    // file plans in one pass, without hashing.
    let mut chunk_of = vec![usize::MAX; ledger.turns.len()];
    for (c, chunk) in chunks.iter().enumerate() {
        for &it in chunk {
            chunk_of[it as usize] = c;
        }
    }
    // For each turn, where its foldable messages lie: the one place seen so far (a chunk, or
    // `usize::MAX`: outside every chunk), and whether they lie in more than one.
    let turns = ledger.turns.iter().max().map_or(0, |&t| t as usize + 1);
    let mut place: Vec<Option<(usize, bool)>> = vec![None; turns];
    for &it in cands {
        // A summary (or stub) lies in every turn it stands for: a turn whose rest an earlier
        // summary holds goes on wherever that summary is.
        let turns = match ledger.kind(it) {
            ItemKind::Message if !kept_out(ledger, policy, &[], it) => {
                let t = u64::from(ledger.turns[it as usize]);
                t..=t
            }
            ItemKind::Message => continue,
            _ => {
                let (a, b) = ledger.item_turns(it);
                a..=b
            }
        };
        let at = chunk_of[it as usize];
        for t in turns {
            let Some(p) = place.get_mut(t as usize) else {
                continue;
            };
            *p = match *p {
                None => Some((at, false)),
                Some((first, spread)) => Some((first, spread || first != at)),
            };
        }
    }
    let mut taken = Vec::new();
    for chunk in chunks.iter_mut() {
        chunk.retain(|&it| {
            let open = is_turn(ledger, it)
                && place[ledger.turns[it as usize] as usize].is_some_and(|(_, spread)| spread);
            if open {
                taken.push(it);
            }
            !open
        });
    }
    taken
}

/// Where one chunk's fold stops: the anchor line of the first candidate after its last item that
/// a fold could hold (what the format pins is passed over), where its first original stands.
fn chunk_tail(ledger: &Ledger<'_>, cands: &[Item], items: &[Item]) -> Option<u32> {
    let set: std::collections::HashSet<Item> = items.iter().copied().collect();
    let last = cands.iter().rposition(|it| set.contains(it))?;
    let fixed = |it: Item| {
        let call = ledger.call_of[it as usize];
        ledger.is_fixed(it) || (call != NONE && ledger.is_fixed(call))
    };
    // Past the last original the chunk stands for: a summary it folds in may have protected
    // user messages left between its originals, reaching past the next candidate.
    let entries = ledger.conv.entries;
    let last_leaf = items
        .iter()
        .map(|it| match ledger.summaries.get(it) {
            Some(s) => s.last_leaf_line,
            None => entries[*it as usize].line,
        })
        .max()
        .unwrap_or(0);
    cands[last + 1..]
        .iter()
        .copied()
        .filter(|&it| !fixed(it))
        .map(|it| match ledger.summaries.get(&it) {
            Some(s) => s.first_leaf,
            None => it,
        })
        .map(|first| entries[first as usize].line)
        .find(|&line| line > last_leaf)
}

/// `--target-tokens`: the fewest oldest turns that bring the view under the target (the fold's
/// new end). When even folding everything at the compression goal leaves the view over it,
/// everything is folded and the summaries are held to the room that is left (the gentlest
/// compression that meets the target), unless the verbatim part alone leaves no useful room.
/// Returns the end, the room the summaries are squeezed into, and a note.
fn fit_target(
    win: &Window<'_>,
    first: usize,
    (start, end): (usize, usize),
    target: usize,
) -> (usize, Option<usize>, Option<PlanNote>) {
    let Window {
        ledger,
        policy,
        head,
        seams,
    } = *win;
    let (_, cands) = candidates(ledger);
    let view_chars = ledger.view_chars();
    let mut end = end;
    let mut note = None;
    let mut squeeze: Option<usize> = None;
    let mut folded = 0usize;
    let mut chosen = None;
    for (p, &it) in cands.iter().enumerate().take(end).skip(start) {
        if !kept_out(ledger, policy, head, it) {
            folded += ledger.item_chars(it);
        }
        if seams.turn[p + 1] || p + 1 == end {
            let after = view_chars - folded + summary_estimate(policy, folded);
            if estimate_tokens(after) <= target {
                chosen = Some(p + 1);
                break;
            }
        }
    }
    let room = (target * 4).saturating_sub(view_chars - folded);
    match chosen {
        Some(e) => end = e,
        None if room >= SUMMARY_LABEL_CHARS + MIN_SUMMARY_CHARS => {
            squeeze = Some(room);
            note = Some(PlanNote::Squeezed {
                target,
                held_to: estimate_tokens(room - SUMMARY_LABEL_CHARS),
                goal: policy.summary_target_tokens(estimate_tokens(folded)),
            });
        }
        None => {
            let tail: usize = cands[end..]
                .iter()
                .chain(head)
                .map(|&it| ledger.item_chars(it))
                .sum::<usize>()
                + ledger.view[..first]
                    .iter()
                    .map(|&it| ledger.item_chars(it))
                    .sum::<usize>();
            note = Some(PlanNote::TargetUnmet {
                target,
                fixed: estimate_tokens(tail),
            });
        }
    }
    (end, squeeze, note)
}

/// For an agent that shows one unbroken run of entries after its summaries (pi): how many of
/// `spans` (in conversation order) can be shown folded — the longest prefix after which what
/// stays in view is its summaries, then one unbroken run to the end (the prompt of a turn folded
/// inside may stand first: the agent carries it at the end of its summary) — and, when that is
/// not all of them, the first entry kept verbatim, which stops the rest. Linear in the view.
pub fn one_run_prefix(ledger: &Ledger<'_>, spans: &[Span]) -> (usize, Option<Item>) {
    let mut chunk_of: std::collections::HashMap<Item, usize> = std::collections::HashMap::new();
    for (c, s) in spans.iter().enumerate() {
        for &it in &s.items {
            chunk_of.insert(it, c);
        }
    }
    let summary = |it: Item| {
        ledger.kind(it) == ItemKind::Summary
            || ledger.conv.entries[it as usize].has(flag::NATIVE_SUMMARY)
    };
    let opens_turn = |it: Item| match ledger.kind(it) {
        ItemKind::Message => ledger.starts_turn(it as usize),
        ItemKind::Stub => false,
        ItemKind::Summary => ledger.starts_turn(ledger.summaries[&it].first_leaf as usize),
    };
    let view = &ledger.view;
    let Some(p) = view
        .iter()
        .position(|it| !chunk_of.contains_key(it) && !summary(*it))
    else {
        return (spans.len(), None);
    };
    let stop = view[p];
    // The prompt of a turn folded inside: the turn's older entries fold (or stand folded) after it.
    let mut q = p + 1;
    if ledger.kind(stop) == ItemKind::Message && ledger.starts_turn(stop as usize) {
        while q < view.len()
            && (chunk_of.contains_key(&view[q]) || summary(view[q]))
            && !opens_turn(view[q])
        {
            q += 1;
        }
    }
    for it in &view[q..] {
        if let Some(&c) = chunk_of.get(it) {
            return (c, Some(stop));
        }
        if summary(*it) {
            return (0, Some(stop));
        }
    }
    (spans.len(), None)
}

/// The chunks asked about (see [`ask`]) and the prompts kept verbatim: a prompt whose turn
/// goes on past its chunk (into the tail, another chunk, or what stays verbatim) stays verbatim
/// itself, asked again after chunks that are not asked about fall away.
fn ask_open(
    ledger: &Ledger<'_>,
    policy: &FoldPolicy,
    model: &str,
    cands: &[Item],
    chunks: Vec<Vec<Item>>,
) -> (Asked, Vec<Item>) {
    // A prompt whose turn goes on past its chunk (into the tail, another chunk, or what stays
    // verbatim) stays verbatim itself; asked again after chunks that are not asked about fall away.
    let mut chunks = chunks;
    let mut open_prompts = keep_open_prompts(ledger, policy, cands, &mut chunks);
    // Only chunks with something new are asked about; with several, only chunks long enough
    // to come back shorter; and never a chunk already declined. The others stay verbatim.
    let mut chosen = ask(ledger, model, chunks);
    let mut asked: Vec<Vec<Item>> = chosen.spans.iter().map(|s| s.items.clone()).collect();
    let more = keep_open_prompts(ledger, policy, cands, &mut asked);
    if !more.is_empty() {
        open_prompts.extend(more);
        chosen.spans = asked
            .into_iter()
            .filter(|c| !c.is_empty())
            .map(|c| Span::of(ledger, c))
            .collect();
    }
    (chosen, open_prompts)
}

/// The chunks worth asking about, and what stays verbatim instead (see [`ask`]).
struct Asked {
    spans: Vec<Span>,
    idle: Vec<Item>,
    declined: Option<((u32, u64, DeclineReason), Span)>,
    stale: usize,
    small: usize,
}

/// Only chunks with something new are asked about; with several, only chunks long enough to
/// come back shorter; and never a chunk already declined. The others stay verbatim.
fn ask(ledger: &Ledger<'_>, model: &str, chunks: Vec<Vec<Item>>) -> Asked {
    let several = chunks.iter().filter(|c| !c.is_empty()).count() > 1;
    let mut idle: Vec<Item> = Vec::new();
    let mut declined = None;
    let (mut stale, mut small) = (0usize, 0usize);
    let spans: Vec<Span> = chunks
        .into_iter()
        .filter(|c| !c.is_empty())
        .filter_map(|c| {
            let span = Span::of(ledger, c);
            if let Some(d) = ledger.declined_before(&span.digest, model) {
                declined.get_or_insert((d, span.clone()));
                idle.extend(&span.items);
                return None;
            }
            if !span.items.iter().any(|&it| ledger.is_fresh(it, model)) {
                stale += span.items.len();
                idle.extend(&span.items);
                return None;
            }
            if several && span.chars < MIN_CHUNK_CHARS {
                small += 1;
                idle.extend(&span.items);
                return None;
            }
            Some(span)
        })
        .collect();
    Asked {
        spans,
        idle,
        declined,
        stale,
        small,
    }
}

/// The remarks for what was not asked about.
fn idle_notes(stale: usize, small: usize) -> impl Iterator<Item = PlanNote> {
    let stale = (stale > 0).then_some(PlanNote::NothingNew(stale));
    let small = (small > 0).then_some(PlanNote::SmallChunks(small));
    stale.into_iter().chain(small)
}

/// The verbatim tail's first turn after everything the fold covers, as recorded in its summaries:
/// for a summary item, the line where its first original was (its own line starts no turn); and
/// past the last original a folded summary stands for (a summary with protected user messages
/// left between its originals may reach past where the tail begins).
fn tail_line(ledger: &Ledger<'_>, whole: &Span, tail: &[Item]) -> Option<u32> {
    let entries = ledger.conv.entries;
    let last_leaf = whole
        .items
        .iter()
        .map(|it| match ledger.summaries.get(it) {
            Some(s) => s.last_leaf_line,
            None => entries[*it as usize].line,
        })
        .max()
        .unwrap_or(0);
    let firsts = || {
        tail.iter().map(|&it| match ledger.summaries.get(&it) {
            Some(s) => s.first_leaf as usize,
            None => it as usize,
        })
    };
    firsts()
        .filter(|&p| ledger.starts_turn(p))
        .map(|p| entries[p].line)
        .find(|&line| line > last_leaf)
        // A fold inside a turn: the tail begins with that turn's newest tool units.
        .or_else(|| {
            firsts()
                .map(|p| entries[p].line)
                .find(|&line| line > last_leaf)
        })
}

/// The verbatim tail: where it starts among the candidates, and the head of a turn it splits.
struct Tail {
    end: usize,
    /// Candidates `a..b`: the prompt that opened the turn the tail begins inside (with what
    /// travels with it); it stays verbatim while the turn's older tool units fold.
    head: Option<(usize, usize)>,
}

/// Where the verbatim tail starts among the candidates, never before `start`: the last `recent`
/// entries (at least the newest one) at a tool-unit seam, rounded outward to the start of their
/// turn when the tail then holds at most the policy's tail tokens (`recent_tokens`, or what the
/// recall goal leaves room for). A turn larger than that is folded inside: its prompt stays verbatim, and so do its
/// newest tool units, as many as fit in it (and at least the `recent` entries).
fn tail_start(
    ledger: &Ledger<'_>,
    cands: &[Item],
    seams: &Seams,
    policy: &FoldPolicy,
    start: usize,
) -> Tail {
    let n = cands.len();
    let whole = |end: usize| Tail { end, head: None };
    if n <= start {
        return whole(start);
    }
    // The tail holds at least one entry of the conversation itself: a line that only looks like
    // mf's (a claim mf does not honour) keeps no turn verbatim.
    let real = |it: Item| ledger.kind(it) == ItemKind::Message && !ledger.is_claim_entry(it);
    let Some(last_real) = cands[start..].iter().rposition(|&it| real(it)) else {
        return whole(start);
    };
    let mut p0 = n
        .saturating_sub(policy.recent.max(1))
        .max(start)
        .min(start + last_real);
    while p0 > start && !seams.unit[p0] {
        p0 -= 1;
    }
    // The turn the seam falls in, and its first candidate.
    let mut ts = p0.min(n - 1);
    while ts > start && !seams.turn[ts] {
        ts -= 1;
    }
    let chars =
        |from: usize| -> usize { cands[from..].iter().map(|&it| ledger.item_chars(it)).sum() };
    let fixed: usize = ledger
        .view
        .iter()
        .filter(|&&it| ledger.is_fixed(it))
        .map(|&it| ledger.item_chars(it))
        .sum();
    let cap = policy.tail_tokens(estimate_tokens(ledger.view_chars()), estimate_tokens(fixed));
    if p0 <= ts || estimate_tokens(chars(ts)) <= cap {
        return whole(ts);
    }
    // The head: the prompt and what travels with it, up to the first tool-unit seam. A turn
    // whose prompt lies behind the agent's own compaction (or outside the window) has none.
    let head_end = if is_turn(ledger, cands[ts]) {
        (ts + 1..=n).find(|&p| seams.unit[p]).unwrap_or(n)
    } else {
        ts
    };
    if p0 <= head_end {
        return whole(ts);
    }
    // The newest tool units that fit in the tail, at least those the seam keeps.
    let mut end = p0;
    let mut q = p0;
    while q > head_end {
        q -= 1;
        if seams.unit[q] {
            if estimate_tokens(chars(q)) > cap {
                break;
            }
            end = q;
        }
    }
    if end <= head_end {
        return whole(ts);
    }
    Tail {
        end,
        head: (head_end > ts).then_some((ts, head_end)),
    }
}

fn is_turn(ledger: &Ledger<'_>, it: Item) -> bool {
    ledger.kind(it) == ItemKind::Message && ledger.starts_turn(it as usize)
}

/// What [`split`] returns: the chunks, the groups too large for a call, whether the fold stops
/// early, and the items it leaves verbatim.
type Split = (Vec<Vec<Item>>, Vec<Vec<Item>>, bool, Vec<Item>);

/// Split candidates `start..end` into chunks whose requests fit `budget` tokens: at turn seams
/// where possible, inside a turn at tool-unit seams where a turn is too big (its prompt then
/// stays verbatim: returned last); a tool unit too big on its own is left out (verbatim).
fn split(win: &Window<'_>, cands: &[Item], (start, end): (usize, usize), budget: usize) -> Split {
    let Window {
        ledger,
        policy,
        head,
        seams,
    } = *win;
    // What one request can carry: the framing and instruction, then each piece with its label.
    let room = (budget * 4).saturating_sub(REQUEST_OVERHEAD_CHARS);
    // A turn too big for one call is folded inside: its prompt stays verbatim with what travels
    // with it, so no chunk holds a question while another chunk, a unit too large for any call
    // or a chunk that is declined leaves part of its answer raw.
    let mut head: Vec<Item> = head.to_vec();
    let base = head.len();
    let mut p = start;
    while p < end {
        let q = (p + 1..end).find(|&q| seams.turn[q]).unwrap_or(end);
        let size: usize = cands[p..q]
            .iter()
            .filter(|&&it| !kept_out(ledger, policy, &head[..base], it))
            .map(|&it| ledger.item_chars(it) + PIECE_OVERHEAD_CHARS)
            .sum();
        if size > room && is_turn(ledger, cands[p]) {
            let h = (p + 1..q).find(|&k| seams.unit[k]).unwrap_or(q);
            let prompt = cands[p..h]
                .iter()
                .copied()
                .filter(|&it| !kept_out(ledger, policy, &head[..base], it));
            head.extend(prompt.collect::<Vec<_>>());
        }
        p = q;
    }
    let cut_heads = head[base..].to_vec();
    let head = &head[..];
    let cost = |it: Item| {
        if kept_out(ledger, policy, head, it) {
            0
        } else {
            ledger.item_chars(it) + PIECE_OVERHEAD_CHARS
        }
    };
    // Units: runs between turn seams; a unit over the room is cut at tool-unit seams.
    let mut units: Vec<(usize, usize, bool)> = Vec::new(); // (from, to, inside a turn)
    let mut p = start;
    while p < end {
        let mut q = p + 1;
        while q < end && !seams.turn[q] {
            q += 1;
        }
        let size: usize = (p..q).map(|k| cost(cands[k])).sum();
        if size <= room {
            units.push((p, q, false));
        } else {
            let mut a = p;
            while a < q {
                let mut b = a + 1;
                while b < q && !seams.unit[b] {
                    b += 1;
                }
                units.push((a, b, a != p || b != q));
                a = b;
            }
        }
        p = q;
    }
    let mut chunks: Vec<(usize, usize)> = Vec::new();
    let mut oversized: Vec<(usize, usize)> = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut used = 0usize;
    for (a, b, _) in units {
        let size: usize = (a..b).map(|k| cost(cands[k])).sum();
        if size > room {
            // Too big for any call: stays verbatim; the chunks around it stand apart.
            chunks.extend(current.take());
            used = 0;
            oversized.push((a, b));
            continue;
        }
        if current.is_some() && used + size > room {
            chunks.extend(current.take());
            used = 0;
        }
        current = Some((current.map_or(a, |c| c.0), b));
        used += size;
    }
    chunks.extend(current);
    // (The fold's own end may lie inside a turn folded inside: that is not a chunk's doing.)
    let in_turn = chunks
        .iter()
        .chain(&oversized)
        .any(|&(a, b)| !seams.turn[a] || (!seams.turn[b] && b != end));
    let items = |(a, b): (usize, usize)| -> Vec<Item> {
        cands[a..b]
            .iter()
            .copied()
            .filter(|&it| !kept_out(ledger, policy, head, it))
            .collect()
    };
    (
        chunks.into_iter().map(items).collect(),
        oversized.into_iter().map(items).collect(),
        in_turn,
        cut_heads,
    )
}

/// With several chunks, a chunk shorter than this is not asked about: mf's label alone is some
/// 300 characters, so its summary would not come back shorter (it stays verbatim).
pub const MIN_CHUNK_CHARS: usize = 600;

/// `--rollup`: split summaries (in conversation order) into consecutive groups whose requests fit
/// `budget` tokens, measured as `split` measures a chunk; one group when there is no budget. A
/// summary too large to share a request with its neighbour is a group of its own.
pub fn rollup_groups(ledger: &Ledger<'_>, items: &[Item], budget: Option<usize>) -> Vec<Vec<Item>> {
    let Some(budget) = budget else {
        return vec![items.to_vec()];
    };
    let room = (budget * 4).saturating_sub(REQUEST_OVERHEAD_CHARS);
    let mut groups: Vec<Vec<Item>> = Vec::new();
    let mut used = 0usize;
    for &it in items {
        let size = ledger.item_chars(it) + PIECE_OVERHEAD_CHARS;
        match groups.last_mut() {
            Some(g) if used + size <= room => g.push(it),
            _ => {
                groups.push(vec![it]);
                used = 0;
            }
        }
        used += size;
    }
    groups
}

/// Characters a request carries besides its pieces (framing, instruction, request line).
pub const REQUEST_OVERHEAD_CHARS: usize = 2600;
/// Characters each piece's label and spacing add.
pub const PIECE_OVERHEAD_CHARS: usize = 48;

/// `--strategy mask`: the tool results to stub — every visible result outside the kept ones
/// (the verbatim tail, as a summary fold with the same `recent` would leave it, and the newest
/// `keep`), and only those a stub would shorten.
pub fn plan_mask(ledger: &Ledger<'_>, policy: &FoldPolicy) -> Result<Vec<Item>, SkipReason> {
    let (_, cands) = candidates(ledger);
    let seams = Seams::new(ledger, cands, false);
    let tail = tail_start(ledger, cands, &seams, policy, 0).end;
    let is_result = |it: Item| {
        ledger.kind(it) == ItemKind::Message
            && !ledger.conv.answers(it as usize).is_empty()
            && !ledger.is_fixed(it)
    };
    let results: Vec<Item> = ledger
        .view
        .iter()
        .copied()
        .filter(|&it| is_result(it))
        .collect();
    let in_tail = cands[tail..].iter().filter(|&&it| is_result(it)).count();
    let keep = policy.keep_tool_results;
    let old = results.len().saturating_sub(keep.max(in_tail));
    let stubs: Vec<Item> = results[..old]
        .iter()
        .copied()
        .filter(|&it| ledger.item_chars(it) > STUB_WORTH_CHARS)
        .collect();
    if stubs.is_empty() {
        let newest = results.len() - old;
        let tail = in_tail.min(newest);
        return Err(SkipReason::NothingToMask {
            results: results.len(),
            keep,
            tail,
            kept: newest - tail,
            small: old,
        });
    }
    Ok(stubs)
}

/// A tool result shorter than this is left alone: its stub would not be shorter.
pub const STUB_WORTH_CHARS: usize = 400;

impl Plan {
    /// Whether this plan is still a lawful fold of `ledger` (the file grew while the summarizer
    /// worked): every span item is still in view, the bytes are the same, and no tool result
    /// for a call inside it arrived meanwhile.
    pub fn holds_in(&self, ledger: &Ledger<'_>) -> bool {
        let in_view: std::collections::HashSet<Item> = ledger.view.iter().copied().collect();
        for span in &self.spans {
            if span.items.iter().any(|it| !in_view.contains(it)) {
                return false;
            }
            if ledger.digest(&span.items) != span.digest {
                return false;
            }
            let set: std::collections::HashSet<Item> = span.items.iter().copied().collect();
            for &it in &span.items {
                let last = ledger.last_result[it as usize];
                if last != NONE && !set.contains(&last) && ledger.hidden_by[last as usize] == NONE {
                    return false;
                }
            }
        }
        true
    }
}
