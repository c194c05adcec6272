//! `mf explain`: the decisions recorded in a file, its summaries and their audits, suspicious
//! lines, the agent's own compactions, and what `compact` would do now — without calling a
//! summarizer or writing anything.

use anyhow::Result;

use crate::cli::ExplainArgs;
use crate::decision::{CostRecord, DecisionRecord, SpanRecord, UsageRecord, VerbatimRecord};
use crate::entry::{ClaimKind, DeclinedSpan, Record, RecordKind, Usage};
use crate::fold::{self, Decision, Item, ItemKind, Ledger};
use crate::render::explain::{
    BranchView, Explanation, FlagView, Focus, HistoryEvent, NativeView, NoteView, SummaryView,
};
use crate::render::notes::note_view;
use crate::render::{self, Ui};
use crate::settings::{ConfigFile, explain_policy, read_options};
use crate::transcript::{CacheOptions, Transcript};
use crate::view::{mf_field, read_for_view, resolve};

/// The `mf` object's audit of a summary, read back from its line.
pub fn audit_of(t: &Transcript, i: usize) -> Option<serde_json::Value> {
    mf_field(t, i, "audit")
}

/// The explanation of a transcript under a policy: its summaries, the history of mf's decisions
/// in it, what the ledger flags, what the reader noted, the agent's own compactions, its branch.
pub fn explanation(t: &Transcript, ledger: &Ledger<'_>, now: DecisionRecord) -> Explanation {
    let mut history: Vec<HistoryEvent> = Vec::new();
    let summaries = summary_views(t, ledger, &mut history);
    history.extend(t.records.iter().filter_map(|r| record_event(r, &summaries)));
    history.sort_by_key(|h| h.line);
    Explanation {
        file: t.display(),
        format: t.format.name().to_string(),
        entries: t.entries.len(),
        turns: ledger.turns.iter().copied().max().unwrap_or(0) as u64,
        lines: t.lines,
        summaries,
        history,
        flags: flag_views(t, ledger),
        notes: note_views(t),
        native: native_views(t),
        branch: branch_view(t),
        now,
        focus: None,
        tier_costs: Vec::new(),
    }
}

/// Every summary and stub in order, each also an event of the history.
fn summary_views(
    t: &Transcript,
    ledger: &Ledger<'_>,
    history: &mut Vec<HistoryEvent>,
) -> Vec<SummaryView> {
    let id_of = |i: u32| t.id_string(i as usize);
    ledger
        .summaries_in_order()
        .into_iter()
        .map(|s| {
            let cov = t.claims[t.entries[s.entry as usize].claim as usize]
                .coverage
                .as_ref()
                .ok();
            let line = t.entries[s.entry as usize].line;
            let model = cov.map(|c| c.model.clone()).unwrap_or_default();
            let at = cov.map_or(0, |c| c.summarized_at_ms);
            let audit = audit_of(t, s.entry as usize);
            let cited = mf_field(t, s.entry as usize, "cited");
            let (usage, cost) = priced(&model, cov.and_then(|c| c.usage));
            history.push(HistoryEvent {
                usage,
                cost,
                line,
                at_ms: at,
                kind: if s.kind == ClaimKind::Stub {
                    "stub"
                } else {
                    "fold"
                },
                summary_id: Some(id_of(s.entry)),
                reason: None,
                model: Some(model.clone()),
                from_turn: Some(s.from_turn),
                to_turn: Some(s.to_turn),
                entry_count: Some(s.children.len() as u64),
                detail: format!(
                    "{} original message{} into {} chars",
                    s.leaf_count,
                    if s.leaf_count == 1 { "" } else { "s" },
                    t.entries[s.entry as usize].chars
                ),
            });
            SummaryView {
                id: id_of(s.entry),
                kind: if s.kind == ClaimKind::Stub {
                    "stub"
                } else {
                    "summary"
                },
                line,
                from_turn: s.from_turn,
                to_turn: s.to_turn,
                entry_count: s.children.len(),
                original_count: s.leaf_count,
                model,
                summarized_at_ms: at,
                state: s.state(),
                nested_in: s.covered_by.map(id_of),
                chars: t.entries[s.entry as usize].chars as usize,
                audit,
                cited,
            }
        })
        .collect()
}

/// The history event of one of mf's records; `None` for the fold record mf 0.1.0 wrote beside a
/// summary the history already has.
fn record_event(r: &Record, summaries: &[SummaryView]) -> Option<HistoryEvent> {
    let mut ev = HistoryEvent {
        line: r.line,
        at_ms: r.at_ms,
        kind: "unknown",
        summary_id: None,
        reason: None,
        model: None,
        from_turn: None,
        to_turn: None,
        entry_count: None,
        detail: String::new(),
        usage: None,
        cost: None,
    };
    match &r.kind {
        RecordKind::Fold {
            summary_id,
            model,
            from_turn,
            to_turn,
            entry_count,
            span_chars,
            summary_chars,
        } => {
            // mf 0.1.0 wrote a fold record beside each summary; the summary says it all.
            if summaries.iter().any(|s| &s.id == summary_id) {
                return None;
            }
            ev.kind = "fold";
            ev.summary_id = Some(summary_id.clone());
            ev.model = Some(model.clone());
            ev.from_turn = Some(*from_turn);
            ev.to_turn = Some(*to_turn);
            ev.entry_count = Some(*entry_count);
            ev.detail = format!("{span_chars} chars folded into {summary_chars}");
        }
        RecordKind::Decline {
            reason,
            model,
            span,
            detail,
            usage,
            ..
        } => {
            (ev.usage, ev.cost) = priced(model, *usage);
            let (a, b) = span.turns();
            ev.kind = "decline";
            ev.reason = Some(reason.as_str().to_string());
            ev.model = Some(model.clone());
            ev.from_turn = Some(a);
            ev.to_turn = Some(b);
            ev.entry_count = Some(span.count());
            ev.detail = match span {
                DeclinedSpan::Ref(s) => {
                    format!("lines {}–{}: {detail}", s.from_line, s.to_line)
                }
                DeclinedSpan::Ids { .. } => detail.clone(),
            };
        }
        RecordKind::Retract { summary_id, .. } => {
            ev.kind = "retract";
            ev.summary_id = Some(summary_id.clone());
            ev.detail = "withdrawn; its originals are verbatim in recall again".into();
        }
        RecordKind::Unknown { kind } => {
            ev.detail = format!("an mf line of kind `{kind}` that this mf does not know; ignored");
        }
    }
    Some(ev)
}

/// What the ledger flags, line by line.
fn flag_views(t: &Transcript, ledger: &Ledger<'_>) -> Vec<FlagView> {
    let id_of = |i: u32| t.id_string(i as usize);
    ledger
        .flags
        .iter()
        .map(|f| FlagView {
            line: f.line,
            id: f.entry.map(id_of),
            kind: f.kind.as_str(),
            why: f.why.clone(),
        })
        .collect()
}

/// What the reader noted about the file's lines.
fn note_views(t: &Transcript) -> Vec<NoteView> {
    t.notes
        .iter()
        .map(|n| {
            let (kind, detail) = note_view(&n.kind);
            NoteView {
                line: n.line,
                kind,
                detail,
            }
        })
        .collect()
}

/// The agent's own compaction summaries.
fn native_views(t: &Transcript) -> Vec<NativeView> {
    t
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.has(crate::entry::flag::NATIVE_SUMMARY))
        .map(|(i, e)| NativeView {
            line: e.line,
            detail: format!(
                "{}'s own compaction summary ({} chars); what lies before it is already summarized by the agent, and {}",
                t.format.describe(),
                t.entries[i].chars,
                if e.has(crate::entry::flag::PINNED) {
                    "mf folds only after it, carrying it verbatim as one unit"
                } else {
                    "mf folds only from it on: a fold takes it in with the turns after it"
                }
            ),
        })
        .collect()
}

/// The active branch: what the agent sees, against what the file also holds.
fn branch_view(t: &Transcript) -> Option<BranchView> {
    let (mut on, mut off, mut before) = (0usize, 0usize, 0usize);
    let mut leaf = None;
    for e in &t.entries {
        if e.has(crate::entry::flag::HISTORY) {
            before += 1;
        } else if e.has(crate::entry::flag::UNSEEN) {
            off += 1;
        } else {
            on += 1;
            leaf = Some(e.line);
        }
    }
    (t.format.is_agent() || off > 0).then_some(BranchView {
        entries: on,
        leaf_line: leaf,
        off_branch: off,
        before_native: before,
    })
}

pub fn explain(
    args: &ExplainArgs,
    config: &ConfigFile,
    cache: Option<&CacheOptions>,
    ui: &Ui,
) -> Result<()> {
    let (policy, model) = explain_policy(&args.policy, args.model.as_deref(), config)?;
    let t = read_for_view(&args.file, &read_options(args.policy.from, cache), ui)?;
    let ledger = Ledger::new(t.conversation());
    let id_of = |i: Item| t.id_string(i as usize);

    let mut now = DecisionRecord::new(&t.display(), model.as_deref());
    now.format = Some(t.format.name().to_string());
    now.before = crate::decision::Size::of(ledger.view_chars());
    now.after = now.before;
    let mut tier_costs = Vec::new();
    match fold::plan(&ledger, &policy, model.as_deref().unwrap_or_default()) {
        Decision::Skip(skip) => {
            now.reason = crate::decision::Reason::Skip(skip.reason);
            now.span = skip.span.as_ref().map(|s| SpanRecord::of(s, &id_of));
            now.verbatim = Some(VerbatimRecord::of(&ledger, &ledger.view, 0));
        }
        Decision::Fold(plan) => {
            now.planned(&ledger, &plan, &id_of);
            tier_costs = costs_by_tier(model.as_deref(), &policy, &plan);
            if model.is_none() {
                // A span declined as lossy binds only the model that wrote the summary: say so,
                // rather than only "would fold".
                for span in std::iter::once(&plan.whole).chain(&plan.spans) {
                    let declined = ledger
                        .declines_of(&span.digest)
                        .find(|(r, ..)| *r != crate::entry::DeclineReason::NotSmaller);
                    if let Some((reason, m, line)) = declined {
                        now.notes.push(crate::decision::Note::DeclinedByModel {
                            from_turn: span.from_turn,
                            to_turn: span.to_turn,
                            model: m.to_string(),
                            line,
                            reason,
                        });
                        break;
                    }
                }
            }
        }
    }
    let mut ex = explanation(&t, &ledger, now);
    ex.tier_costs = tier_costs;

    if let Some(address) = &args.id {
        let i = resolve(&t, &ledger, address)?;
        let id = t.id_string(i as usize);
        let kind = match ledger.summaries.get(&i).map(|s| s.kind) {
            Some(ClaimKind::Summary) => "summary",
            Some(ClaimKind::Stub) => "stub",
            None if ledger.flags.iter().any(|f| f.entry == Some(i)) => "look-alike",
            None => "message",
        };
        let hidden = ledger.hidden_by[i as usize];
        ex.focus = Some(Focus {
            id: id.clone(),
            line: t.entries[i as usize].line,
            kind,
            hidden_by: (hidden != crate::entry::NONE).then(|| id_of(hidden)),
        });
        let line = t.entries[i as usize].line;
        // Only what concerns the entry: its summaries, the decisions naming it, its flags.
        let covering: Vec<String> = ledger
            .summaries
            .values()
            .filter(|s| s.entry == i || s.children.contains(&i))
            .map(|s| id_of(s.entry))
            .collect();
        ex.summaries
            .retain(|s| s.id == id || covering.contains(&s.id));
        ex.history.retain(|h| {
            h.summary_id
                .as_ref()
                .is_some_and(|s| s == &id || covering.contains(s))
                || (h.kind == "decline" && span_has(&t, h.line, line, &id))
        });
        ex.flags.retain(|f| f.id.as_deref() == Some(id.as_str()));
        ex.notes.retain(|n| n.line == line);
        let _ = ItemKind::Message;
    }

    if args.json {
        render::stdout(&format!(
            "{}\n",
            serde_json::to_string(&ex).expect("an explanation serializes")
        ))?;
    } else {
        render::stdout(&render::explain::tables(ui, &ex))?;
    }
    Ok(())
}

/// What the plan's calls would cost at each tier the model's provider sells, estimated as
/// `--dry-run` estimates them (each call in its price band); nothing for a model without a price.
fn costs_by_tier(
    model: Option<&str>,
    policy: &fold::FoldPolicy,
    plan: &fold::Plan,
) -> Vec<crate::render::explain::TierCost> {
    use crate::entry::Tier;
    use crate::model::Provider;
    use crate::render::explain::TierCost;
    let Some(m) = model.and_then(|m| crate::model::resolve(m).ok()) else {
        return Vec::new();
    };
    let Some(pricing) = m.pricing() else {
        return Vec::new();
    };
    if m.provider == Provider::Builtin {
        return Vec::new();
    }
    let costing = crate::call::Costing {
        builtin: false,
        pricing: Some(&pricing),
        token_ratio: m.token_ratio(),
        tier: Tier::Standard,
    };
    let standard: f64 = plan
        .spans
        .iter()
        .map(|s| pricing.usd(costing.billed(crate::call::Costing::estimate(policy, s, None))))
        .sum();
    let mut out = vec![TierCost {
        tier: Tier::Standard.as_str(),
        usd: standard,
        flag: "",
    }];
    let tiers: &[(Tier, &str)] = match m.provider {
        Provider::Anthropic => &[(Tier::Batch, "--batch")],
        Provider::OpenAi => &[
            (Tier::Batch, "--batch"),
            (Tier::Flex, "--service-tier flex"),
        ],
        Provider::OpenAiCompatible | Provider::Builtin => &[],
    };
    out.extend(tiers.iter().map(|&(tier, flag)| TierCost {
        tier: tier.as_str(),
        usd: standard * tier.price_factor(),
        flag,
    }));
    out
}

/// Whether the decline record on `record_line` names a span that holds the entry on `line`
/// (whose id is `id`).
fn span_has(t: &Transcript, record_line: u32, line: u32, id: &str) -> bool {
    t.records.iter().any(|r| {
        r.line == record_line
            && match &r.kind {
                RecordKind::Decline {
                    span: DeclinedSpan::Ref(s),
                    ..
                } => s.from_line <= line && line <= s.to_line,
                RecordKind::Decline {
                    span: DeclinedSpan::Ids { ids, .. },
                    ..
                } => ids.iter().any(|x| x == id),
                _ => false,
            }
    })
}

/// A recorded call's usage, and its cost at the model's price band for that usage (from the
/// table; none for a model the table does not price).
fn priced(model: &str, usage: Option<Usage>) -> (Option<UsageRecord>, Option<CostRecord>) {
    let Some(u) = usage else {
        return (None, None);
    };
    let cost = crate::model::resolve(model)
        .ok()
        .and_then(|m| m.pricing())
        .map(|p| CostRecord {
            usd: p.usd(crate::model::Billed {
                input: u.input_tokens,
                output: u.output_tokens,
                ..Default::default()
            }),
            estimated: false,
        });
    (Some(u.into()), cost)
}
