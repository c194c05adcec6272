//! What calls cost: estimates of a request's tokens, `--max-cost` checked before the first
//! call, the usage and cost added to the record, and `--dry-run` (the plan and its estimate,
//! nothing called or written).

use anyhow::Result;

use super::{Compaction, ledger_for, read_only};
use crate::call;
use crate::decision::{CostRecord, DecisionRecord, Note, Reason, UsageRecord};
use crate::entry::Usage;
use crate::error::MfError;
use crate::fold::{self, Decision, Ledger, Plan, Span};
use crate::model::Billed;
use crate::redact::Counts;
use crate::settings::{CompactSettings, ModelChoice};
use crate::transcript::Transcript;

/// `--max-cost`: plan every file first and refuse before the first call if the estimated total
/// is over the limit.
pub(super) fn check_max_cost(settings: &CompactSettings, model: &str) -> Result<()> {
    let Some(max) = settings.max_cost else {
        return Ok(());
    };
    let Some(pricing) = &settings.pricing else {
        return Err(MfError::refused(
            format!("no price is known for `{model}`, so `--max-cost` cannot be checked"),
            Some("pass --price-in and --price-out (USD per million tokens)".into()),
        )
        .into());
    };
    let (mut total, mut calls) = (0.0, 0usize);
    for file in &settings.files {
        let Ok(t) = read_only(file, settings) else {
            continue;
        };
        let ledger = ledger_for(&t, settings);
        if let Decision::Fold(plan) = fold::plan(&ledger, &settings.policy, model) {
            for span in &plan.spans {
                let (i, o) = estimate_request(&ledger, &settings.policy, span, settings);
                total += pricing.usd(billed(settings, (i, o))) * settings.tiers.tier.price_factor();
                calls += 1;
            }
        }
    }
    if total > max {
        return Err(MfError::refused(
            format!(
                "the estimated cost of {calls} call{} is ${}, over `--max-cost {max}`; nothing was called",
                if calls == 1 { "" } else { "s" },
                crate::render::usd(total)
            ),
            Some("raise --max-cost, or use --dry-run to see the estimate per file".into()),
        )
        .into());
    }
    Ok(())
}

/// Estimated tokens in and out for one span's request, without reading its text.
pub(super) fn estimate_request(
    _ledger: &Ledger<'_>,
    policy: &fold::FoldPolicy,
    span: &Span,
    settings: &CompactSettings,
) -> (u64, u64) {
    call::Costing::estimate(policy, span, settings.instruction.as_deref())
}

/// The part of the settings pricing reads.
pub(super) fn costing(settings: &CompactSettings) -> call::Costing<'_> {
    call::Costing {
        builtin: matches!(settings.model, ModelChoice::Extractive),
        pricing: settings.pricing.as_ref(),
        token_ratio: settings.token_ratio,
        tier: settings.tiers.tier,
    }
}

impl super::FileRun<'_> {
    /// Add calls' usage and cost (each from its usage, else the request's estimated tokens in
    /// and out) to the record.
    pub(super) fn spend(&mut self, calls: &[(Option<Usage>, (u64, u64))]) {
        for &(usage, estimate) in calls {
            add_usage_est(&mut self.r, usage, self.settings, estimate);
        }
    }
}

/// Add one call's usage and cost (from its usage, else the request's estimated tokens in and
/// out) to the record.
pub(super) fn add_usage_est(
    r: &mut DecisionRecord,
    usage: Option<Usage>,
    settings: &CompactSettings,
    estimate: (u64, u64),
) {
    if let Some(u) = usage {
        let prev = r.usage.unwrap_or(UsageRecord {
            input_tokens: 0,
            output_tokens: 0,
        });
        r.usage = Some(UsageRecord {
            input_tokens: prev.input_tokens + u.input_tokens,
            output_tokens: prev.output_tokens + u.output_tokens,
        });
    }
    // Calls by tier, said when the run asked for a half-price tier (or a call ran at one).
    let tier = usage.map_or(settings.tiers.tier, |u| u.tier);
    if tier != crate::entry::Tier::Standard || settings.tiers.tier != crate::entry::Tier::Standard {
        *r.tiers.entry(tier.as_str()).or_default() += 1;
    }
    let cost = cost_of(settings, estimate, usage);
    r.cost = match (r.cost, cost) {
        (Some(a), Some(b)) => Some(a.plus(b)),
        (a, b) => a.or(b),
    };
}

/// The cost of one call: from reported usage, else from mf's estimate; nothing for the built-in.
pub(super) fn cost_of(
    settings: &CompactSettings,
    estimate: (u64, u64),
    usage: Option<Usage>,
) -> Option<CostRecord> {
    costing(settings).cost_of(estimate, usage)
}

/// mf's estimate of a request (in 4-character tokens, in and out) in the model's own tokens.
pub(super) fn billed(settings: &CompactSettings, estimate: (u64, u64)) -> Billed {
    costing(settings).billed(estimate)
}

/// `--dry-run`: the plan, what the calls would cost (each in the price band of its size), and
/// whether any request is over the model's context — before anything is paid. With
/// `--count-tokens`, each request is built and the provider counts its input exactly (free).
pub(super) async fn dry_run(
    t: &Transcript,
    ledger: &Ledger<'_>,
    plan: &Plan,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
) -> Result<()> {
    let model = ctx.summarizer.model().to_string();
    let (mut tin, mut tout) = (0u64, 0u64);
    let context = settings.context_tokens;
    let counting = settings.count_tokens;
    if counting && !matches!(settings.model, ModelChoice::Remote(_)) {
        r.notes.push(Note::CountedBuiltin {
            model: model.clone(),
        });
    }
    let redactor = settings.redact.then_some(&ctx.redactor);
    let several = plan.spans.len() > 1;
    let mut counted_all = counting;
    for (k, span) in plan.spans.iter().enumerate() {
        let est = estimate_request(ledger, &settings.policy, span, settings);
        let mut b = billed(settings, est);
        let mut counted = false;
        if counting {
            let mut redacted = Counts::default();
            let pieces = call::pieces_of(t, ledger, span, redactor, &mut redacted)?;
            let request = call::make_request(span, pieces, &super::rules(settings), None);
            match ctx.summarizer.count_tokens(&request) {
                Some(fut) => match fut.await {
                    Ok(n) => {
                        b.input = n;
                        counted = true;
                    }
                    Err(e) if e.stops() => return Err(e.into()),
                    Err(e) => {
                        counted_all = false;
                        r.notes.push(Note::CountFailed {
                            call: k + 1,
                            message: e.message,
                        });
                    }
                },
                None => counted_all = false,
            }
        }
        let (i, o) = (b.input, b.output);
        if let Some(ctx_tokens) = context
            && i + o > ctx_tokens
        {
            let w = Note::OverContext {
                tokens: i + o,
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                model: model.clone(),
                context: ctx_tokens,
            };
            ctx.ui.warn(&format!("{}: {w}", r.file));
            r.notes.push(w);
        }
        tin += i;
        tout += o;
        let remote = matches!(settings.model, ModelChoice::Remote(_));
        let priced = settings.pricing.as_ref().map(|pricing| {
            let c = CostRecord {
                usd: pricing.usd(b) * settings.tiers.tier.price_factor(),
                estimated: true,
            };
            r.cost = Some(r.cost.map_or(c, |p| p.plus(c)));
            let over = pricing.cheap_limit().is_some_and(|limit| i > limit);
            (pricing.describe(i), over, c.usd)
        });
        if remote && (priced.is_some() || several || counting) {
            r.notes.push(Note::CallEstimate {
                call: k + 1,
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                tokens_in: i,
                tokens_out: o,
                counted,
                price: priced,
            });
        }
    }
    if matches!(settings.model, ModelChoice::Extractive) {
        r.cost = Some(CostRecord {
            usd: 0.0,
            estimated: false,
        });
    }
    r.reason = Reason::DryRun {
        plan: Box::new(std::mem::take(&mut r.reason)),
        requests: plan.spans.len(),
        model,
        tokens_in: tin,
        tokens_out: tout,
        counted: counting && counted_all,
        cost_usd: r.cost.map(|c| c.usd),
    };
    Ok(())
}
