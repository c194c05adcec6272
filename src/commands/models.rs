//! `mf models`: the model table, as a table or JSON.

use crate::entry::Tier;
use crate::model::{MODELS, ModelRow, Profile, Provider, Status, TOKEN_RATIOS};
use crate::render::{self, BandView, ModelView, Ui};

/// The half-price tiers mf uses for a provider's models: Anthropic's Message Batches; OpenAI's
/// Batch API and flex tier.
fn half_price_tiers(p: Provider) -> &'static [&'static str] {
    match p {
        Provider::Anthropic => &["batch"],
        Provider::OpenAi => &["batch", "flex"],
        Provider::OpenAiCompatible | Provider::Builtin => &[],
    }
}

fn view(r: &ModelRow) -> ModelView {
    let mut rejects = Vec::new();
    if r.profile.sampling_rule().is_some() {
        rejects.extend(["--temperature", "top_p", "top_k", "prefill"]);
    }
    if r.profile.seed_rule().is_some() {
        rejects.push("--seed");
    }
    let span_estimate = r.planning_span_tokens();
    ModelView {
        alias: r.alias,
        provider: r.provider.as_str(),
        id: r.id,
        status: match r.status {
            Status::Current => "current",
            Status::Legacy => "legacy",
            Status::Retiring(_) => "retiring",
        },
        shutdown: match r.status {
            Status::Retiring(d) => Some(d),
            _ => None,
        },
        profile: r.profile.name(),
        reasoning_effort: match r.profile {
            Profile::OpenAiReasoning { effort } => Some(effort),
            Profile::AnthropicAdaptive => Some("low"),
            _ => None,
        },
        thinking: match r.profile {
            Profile::AnthropicThinkingOff => Some("disabled"),
            Profile::AnthropicAdaptive => Some("adaptive"),
            _ => None,
        },
        rejects,
        context_tokens: r.context_tokens,
        span_tokens: (span_estimate as f64 * r.token_ratio).floor() as u64,
        span_estimate_tokens: span_estimate,
        output_tokens: r.output_tokens,
        max_output_tokens: r.max_output_tokens,
        token_ratio: r.token_ratio,
        bands: r
            .bands
            .iter()
            .map(|b| BandView {
                up_to_prompt_tokens: b.up_to,
                input_per_mtok: b.input,
                output_per_mtok: b.output,
                cache_read_per_mtok: b.cache_read,
                cache_write_per_mtok: b.cache_write,
            })
            .collect(),
        price_in_per_mtok: r.bands[0].input,
        price_out_per_mtok: r.bands[0].output,
        half_price_tiers: half_price_tiers(r.provider).to_vec(),
        batch_price_in_per_mtok: (!half_price_tiers(r.provider).is_empty())
            .then(|| r.bands[0].input * Tier::Batch.price_factor()),
        batch_price_out_per_mtok: (!half_price_tiers(r.provider).is_empty())
            .then(|| r.bands[0].output * Tier::Batch.price_factor()),
        verified: r.verified,
    }
}

pub fn models(json: bool, ui: &Ui) -> std::io::Result<()> {
    let rows: Vec<ModelView> = MODELS.iter().map(view).collect();
    if json {
        // One object per line, as every other `--json` of mf.
        let mut text = String::new();
        for r in &rows {
            text.push_str(&serde_json::to_string(r).expect("a row serializes"));
            text.push('\n');
        }
        return render::stdout(&text);
    }
    render::stdout(&render::models_table(ui, &rows, TOKEN_RATIOS))
}
