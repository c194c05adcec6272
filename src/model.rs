//! `ModelTable`: the one data table of summarizer models — aliases, providers, ids, context sizes,
//! request profiles, tokenizer ratios and price bands — and how a `--model` name resolves against
//! it. Update the rows when providers change their line-ups; nothing else in mf hard-codes a model.

use std::fmt;

/// Who runs a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// mf's own offline summarizer.
    Builtin,
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions.
    OpenAi,
    /// A local or third-party server speaking OpenAI Chat Completions (Ollama, llama.cpp, vLLM, LM Studio).
    OpenAiCompatible,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Builtin => "builtin",
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::OpenAiCompatible => "openai-compatible",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a request to a model family is shaped, and what the family refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// mf's own summarizer: no request at all.
    Builtin,
    /// Anthropic before the 5.x generation (Haiku 4.5, 4.6 models): no thinking unless asked,
    /// so nothing about thinking is sent; `temperature` is accepted.
    AnthropicLegacy,
    /// Anthropic 5.x models that think adaptively by default (effort `medium` or `high`) and
    /// allow thinking to be switched off: mf sends `thinking: {"type": "disabled"}` (accepted at
    /// effort high or below, which is the default). Non-default `temperature`, `top_p`, `top_k`
    /// and an assistant prefill are a 400.
    AnthropicThinkingOff,
    /// Anthropic models that only think adaptively (Opus 5.5, Fable 5.1, Mythos 5.x: `disabled` is
    /// a 400): mf asks for effort `low` and gives `max_tokens` room for the thinking. Sampling
    /// parameters and prefill are a 400.
    AnthropicAdaptive,
    /// OpenAI reasoning models (GPT-5 and later): the lowest reasoning effort the model takes,
    /// `max_completion_tokens` with room for reasoning, and only the default temperature.
    OpenAiReasoning {
        /// The lowest `reasoning_effort` the model accepts (`none`, `minimal` or `low`).
        effort: &'static str,
    },
    /// OpenAI chat models without reasoning (GPT-4o, GPT-4.1): `max_completion_tokens`,
    /// `temperature` and `seed` accepted.
    OpenAiChat,
    /// An OpenAI-compatible server: `max_tokens`, and whatever sampling the user asks for.
    Compatible,
}

impl Profile {
    /// A short name for `mf models` and the record.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Builtin => "built in",
            Profile::AnthropicLegacy => "plain",
            Profile::AnthropicThinkingOff => "thinking off",
            Profile::AnthropicAdaptive => "effort low",
            Profile::OpenAiReasoning { effort: "none" } => "reasoning none",
            Profile::OpenAiReasoning { effort: "minimal" } => "reasoning minimal",
            Profile::OpenAiReasoning { .. } => "reasoning low",
            Profile::OpenAiChat => "plain",
            Profile::Compatible => "plain",
        }
    }

    /// Why the model refuses sampling parameters, when it does.
    pub fn sampling_rule(self) -> Option<&'static str> {
        match self {
            Profile::AnthropicThinkingOff | Profile::AnthropicAdaptive => Some(
                "Anthropic's 5.x models answer a non-default temperature, top_p or top_k (and an assistant prefill) with 400",
            ),
            Profile::OpenAiReasoning { .. } => Some(
                "OpenAI's reasoning models accept only the default temperature (1) and answer any other with 400",
            ),
            _ => None,
        }
    }

    /// Why the model has no `seed`, when it has none.
    pub fn seed_rule(self) -> Option<&'static str> {
        match self {
            Profile::AnthropicLegacy
            | Profile::AnthropicThinkingOff
            | Profile::AnthropicAdaptive => {
                Some("the Anthropic Messages API has no seed parameter")
            }
            _ => None,
        }
    }

    /// Tokens of room for thinking or reasoning on top of a summary of `summary` tokens: none
    /// where thinking is off, the summary's own size again (at least 4,096) where the model
    /// thinks at its lowest effort.
    pub fn thinking_room(self, summary: u64) -> u64 {
        match self {
            Profile::AnthropicAdaptive
            | Profile::OpenAiReasoning {
                effort: "minimal" | "low",
            } => summary.max(4_096),
            // `none` does not reason; a little room for a model that reasons anyway.
            Profile::OpenAiReasoning { .. } => (summary / 4).max(512),
            _ => 0,
        }
    }

    /// Whether a reply cut off at the token cap may have been spent thinking (and so is worth
    /// asking once more with a larger budget).
    pub fn thinks(self) -> bool {
        matches!(
            self,
            Profile::AnthropicThinkingOff
                | Profile::AnthropicAdaptive
                | Profile::OpenAiReasoning { .. }
        )
    }

    /// The profile of a model not in the table, from its id.
    pub fn guess(provider: Provider, id: &str) -> Profile {
        let id = id.to_ascii_lowercase();
        match provider {
            Provider::Builtin => Profile::Builtin,
            Provider::OpenAiCompatible => Profile::Compatible,
            Provider::Anthropic => {
                if id.contains("fable") || id.contains("mythos") || id.contains("opus-5") {
                    Profile::AnthropicAdaptive
                } else if generation(&id).is_some_and(|g| g >= 5) {
                    Profile::AnthropicThinkingOff
                } else {
                    Profile::AnthropicLegacy
                }
            }
            Provider::OpenAi => {
                if id.starts_with("gpt-4") || id.starts_with("chatgpt-") || id.starts_with("gpt-3")
                {
                    Profile::OpenAiChat
                } else {
                    // GPT-5 and later, and the o-series, reason; `low` is the effort every
                    // one of them takes.
                    Profile::OpenAiReasoning { effort: "low" }
                }
            }
        }
    }
}

/// The generation of a Claude id (`claude-haiku-5-5` → 5, `claude-3-5-haiku-…` → 3).
fn generation(id: &str) -> Option<u32> {
    id.split('-')
        .find_map(|p| p.parse::<u32>().ok().filter(|&n| (1..100).contains(&n)))
}

/// One price band: what a request costs when its prompt is up to `up_to` tokens (or over the
/// previous band's limit, for the last). USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The largest prompt, in tokens, this band applies to; `None` for the last band.
    pub up_to: Option<u64>,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Band {
    const fn flat(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self {
            up_to: None,
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    /// The band's name, for messages: `≤100K` / `>100K`, or `flat`.
    pub fn describe(&self, bands: &[Band]) -> String {
        match (self.up_to, bands.len()) {
            (_, 1) => "flat".to_string(),
            (Some(n), _) => format!("≤{}", short_tokens(n)),
            (None, _) => {
                let below = bands
                    .iter()
                    .filter_map(|b| b.up_to)
                    .max()
                    .unwrap_or_default();
                format!(">{}", short_tokens(below))
            }
        }
    }
}

/// `100000` → `100K`, `1050000` → `1.05M`.
pub fn short_tokens(n: u64) -> String {
    if n >= 1_000_000 {
        let m = n as f64 / 1e6;
        let s = format!("{m:.2}");
        format!("{}M", s.trim_end_matches('0').trim_end_matches('.'))
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}K", n / 1_000)
    } else if n >= 1_000 {
        format!("{:.1}K", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// A model's prices: its bands, lowest first. The band is chosen by the request's real prompt
/// size (input plus cache reads and writes), and applies to the whole request.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    pub bands: Vec<Band>,
}

/// Tokens of one call, as the provider bills them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billed {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Pricing {
    /// One price for every prompt size (`--price-in` / `--price-out`, or a one-band row).
    pub fn flat(input: f64, output: f64) -> Self {
        Self {
            bands: vec![Band::flat(input, output, input, input)],
        }
    }

    pub fn of_row(row: &ModelRow) -> Self {
        Self {
            bands: row.bands.to_vec(),
        }
    }

    /// The band a prompt of `prompt_tokens` falls in.
    pub fn band(&self, prompt_tokens: u64) -> &Band {
        self.bands
            .iter()
            .find(|b| b.up_to.is_none_or(|n| prompt_tokens <= n))
            .or(self.bands.last())
            .expect("a price has a band")
    }

    /// The cheapest band's limit, when there are several: a request should stay at or under it.
    pub fn cheap_limit(&self) -> Option<u64> {
        self.bands.first().and_then(|b| b.up_to)
    }

    /// US dollars for one call.
    pub fn usd(&self, t: Billed) -> f64 {
        let b = self.band(t.input + t.cache_read + t.cache_write);
        (t.input as f64 * b.input
            + t.output as f64 * b.output
            + t.cache_read as f64 * b.cache_read
            + t.cache_write as f64 * b.cache_write)
            / 1_000_000.0
    }

    /// The band's name for a prompt of `prompt_tokens`, with its prices: `≤100K $0.10/$0.50`.
    pub fn describe(&self, prompt_tokens: u64) -> String {
        let b = self.band(prompt_tokens);
        format!(
            "{} ${}/${}",
            b.describe(&self.bands),
            price(b.input),
            price(b.output)
        )
    }
}

/// A price per MTok without needless zeros: `0.10`, `2.50`, `0.125`.
pub fn price(v: f64) -> String {
    let s = format!("{v:.3}");
    match s.strip_suffix('0') {
        Some(t) => t.to_string(),
        None => s,
    }
}

/// Whether a model is current, kept for old sessions, or on its way out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Current,
    /// Still served, superseded.
    Legacy,
    /// Shuts down in the API on this date (YYYY-MM-DD).
    Retiring(&'static str),
}

impl Status {
    pub fn describe(self) -> String {
        match self {
            Status::Current => "current".into(),
            Status::Legacy => "legacy".into(),
            Status::Retiring(d) => format!("shuts down {d}"),
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRow {
    pub alias: Option<&'static str>,
    pub provider: Provider,
    pub id: &'static str,
    pub status: Status,
    pub profile: Profile,
    pub context_tokens: u64,
    /// The most one summarizer call may carry, in the model's own tokens, before the price
    /// bands are considered: spans over it are split into chunks.
    pub span_tokens: u64,
    /// The most one summary may be, in tokens (the request's output cap, before thinking room).
    pub output_tokens: u64,
    /// The most the model writes in one reply (thinking included): the ceiling of a retry.
    pub max_output_tokens: u64,
    /// The model's tokens per mf estimate token (4 characters): how much more (or less) the
    /// model's tokenizer counts the same text. See `TOKEN_RATIOS`.
    pub token_ratio: f64,
    /// Price bands, lowest prompt size first.
    pub bands: &'static [Band],
    /// When the row was last checked, and where.
    pub verified: &'static str,
}

/// How the tokenizer ratios were calibrated (shown by `mf models --json` and the README):
/// mf's estimate is 4 characters a token. Anthropic's 4.x tokenizer is taken as 1.0 of that
/// (mf's long-standing estimate for it); the 5.x tokenizer (Claude 4.7 and later) counts "about
/// 30 % more tokens" for the same text (Anthropic's Haiku 5.5 overview), so 1.30. OpenAI's
/// o200k tokenizer (GPT-4o and later) is 1.0. These are documented ratios, not measured
/// against the real APIs (which tests here cannot reach); `--dry-run --count-tokens` asks
/// Anthropic for the exact figure.
pub const TOKEN_RATIOS: &str = "mf estimates 4 characters a token; each row's ratio scales that to the model's tokenizer (Anthropic 4.x 1.00; Anthropic 5.x and Claude 4.7+ 1.30, from Anthropic's \"about 30% more tokens than Haiku 4.5\"; OpenAI o200k 1.00). --dry-run --count-tokens asks Anthropic for the exact count.";

const HAIKU_5_5: &[Band] = &[
    Band {
        up_to: Some(100_000),
        input: 0.10,
        output: 0.50,
        cache_read: 0.01,
        cache_write: 0.125,
    },
    Band::flat(0.50, 2.50, 0.05, 0.625),
];

/// OpenAI's long-prompt rule: above 272K input tokens the whole request is billed at 2x input
/// (and cache) and 1.5x output.
macro_rules! openai_bands {
    ($i:expr, $o:expr, $r:expr, $w:expr) => {
        &[
            Band {
                up_to: Some(272_000),
                input: $i,
                output: $o,
                cache_read: $r,
                cache_write: $w,
            },
            Band::flat($i * 2.0, $o * 1.5, $r * 2.0, $w * 2.0),
        ]
    };
}

const ANTHROPIC_5: &str =
    "2026-12-01 platform.claude.com/docs/en/models/haiku-5-5/overview (comparison table)";
const ANTHROPIC_4: &str = "2026-12-01 platform.claude.com/docs/en/about-claude/pricing";
const OPENAI_RETIRING: &str = "2026-12-01 OpenAI deprecations (shutdown 2027-01-14; replacement gpt-6-luna) via netbirdio/netbird#8664; prices as transcribed 2026";

/// The table. Aliases point at each family's current model.
pub const MODELS: &[ModelRow] = &[
    ModelRow {
        alias: Some("extractive"),
        provider: Provider::Builtin,
        id: "extractive",
        status: Status::Current,
        profile: Profile::Builtin,
        context_tokens: 0,
        span_tokens: 2_000_000,
        // A summary's length is bounded by what it is for: at most 16,384 tokens (64 kB), which
        // holds a fifth (the compression goal) of a span of 80,000 tokens. A longer span gets a
        // summary of this length, which the audit then judges like any model's.
        output_tokens: 16_384,
        max_output_tokens: 16_384,
        token_ratio: 1.0,
        bands: &[Band::flat(0.0, 0.0, 0.0, 0.0)],
        verified: "built in",
    },
    ModelRow {
        alias: Some("haiku"),
        provider: Provider::Anthropic,
        id: "claude-haiku-5-5",
        status: Status::Current,
        profile: Profile::AnthropicThinkingOff,
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.30,
        bands: HAIKU_5_5,
        verified: "2026-12-01 platform.claude.com/docs/en/models/haiku-5-5/overview (bands, cache) and migration-guide (thinking, sampling)",
    },
    ModelRow {
        alias: Some("sonnet"),
        provider: Provider::Anthropic,
        id: "claude-sonnet-5-5",
        status: Status::Current,
        profile: Profile::AnthropicThinkingOff,
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.30,
        // Cache prices from Anthropic's standing multipliers (read 0.1x, 5-minute write 1.25x).
        bands: &[Band::flat(2.0, 10.0, 0.20, 2.50)],
        verified: ANTHROPIC_5,
    },
    ModelRow {
        alias: Some("opus"),
        provider: Provider::Anthropic,
        id: "claude-opus-5-5",
        status: Status::Current,
        profile: Profile::AnthropicAdaptive,
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.30,
        bands: &[Band::flat(4.0, 20.0, 0.40, 5.0)],
        verified: ANTHROPIC_5,
    },
    ModelRow {
        alias: Some("fable"),
        provider: Provider::Anthropic,
        id: "claude-fable-5-1",
        status: Status::Current,
        profile: Profile::AnthropicAdaptive,
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.30,
        bands: &[Band::flat(10.0, 50.0, 1.0, 12.5)],
        verified: ANTHROPIC_5,
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-haiku-4-5",
        status: Status::Legacy,
        profile: Profile::AnthropicLegacy,
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 64_000,
        token_ratio: 1.0,
        bands: &[Band::flat(1.0, 5.0, 0.10, 1.25)],
        verified: ANTHROPIC_4,
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-sonnet-4-6",
        status: Status::Legacy,
        profile: Profile::AnthropicLegacy,
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 64_000,
        token_ratio: 1.0,
        bands: &[Band::flat(3.0, 15.0, 0.30, 3.75)],
        verified: ANTHROPIC_4,
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-opus-4-6",
        status: Status::Legacy,
        profile: Profile::AnthropicLegacy,
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 64_000,
        token_ratio: 1.0,
        bands: &[Band::flat(5.0, 25.0, 0.50, 6.25)],
        verified: ANTHROPIC_4,
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-6-luna",
        status: Status::Current,
        profile: Profile::OpenAiReasoning { effort: "none" },
        context_tokens: 1_050_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.0,
        bands: openai_bands!(0.10, 0.50, 0.01, 0.125),
        verified: "2026-12-01 developers.openai.com/api/docs/models/gpt-6-luna (effort none..max, default medium; >272K 2x/1.5x)",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-5.6-luna",
        status: Status::Current,
        profile: Profile::OpenAiReasoning { effort: "none" },
        context_tokens: 1_050_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.0,
        bands: openai_bands!(0.20, 1.20, 0.02, 0.25),
        verified: "2026-12-01 developers.openai.com/api/docs/models/gpt-5.6-luna (effort none..max, default medium; >272K 2x/1.5x)",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-5.6-terra",
        status: Status::Current,
        profile: Profile::OpenAiReasoning { effort: "none" },
        context_tokens: 1_050_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.0,
        bands: openai_bands!(2.00, 12.00, 0.20, 2.50),
        verified: "2026-12-01 input $2.00 from OpenAI's gpt-5.6-luna page; output $12, context and the 272K band from secondary sources (vercel.com, docs.venice.ai): not verified on OpenAI's own page",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-5-mini",
        status: Status::Legacy,
        profile: Profile::OpenAiReasoning { effort: "minimal" },
        context_tokens: 400_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 128_000,
        token_ratio: 1.0,
        bands: &[Band::flat(0.25, 2.0, 0.025, 0.25)],
        verified: "2026 OpenAI pricing as transcribed (protocols.md §2.4)",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4o-mini",
        status: Status::Retiring("2027-01-14"),
        profile: Profile::OpenAiChat,
        context_tokens: 128_000,
        span_tokens: 100_000,
        output_tokens: 4096,
        max_output_tokens: 16_384,
        token_ratio: 1.0,
        bands: &[Band::flat(0.15, 0.60, 0.075, 0.15)],
        verified: OPENAI_RETIRING,
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4o",
        status: Status::Retiring("2027-01-14"),
        profile: Profile::OpenAiChat,
        context_tokens: 128_000,
        span_tokens: 100_000,
        output_tokens: 4096,
        max_output_tokens: 16_384,
        token_ratio: 1.0,
        bands: &[Band::flat(2.50, 10.0, 1.25, 2.50)],
        verified: OPENAI_RETIRING,
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4.1-mini",
        status: Status::Retiring("2027-01-14"),
        profile: Profile::OpenAiChat,
        context_tokens: 1_047_576,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 32_768,
        token_ratio: 1.0,
        bands: &[Band::flat(0.40, 1.60, 0.10, 0.40)],
        verified: OPENAI_RETIRING,
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4.1",
        status: Status::Retiring("2027-01-14"),
        profile: Profile::OpenAiChat,
        context_tokens: 1_047_576,
        span_tokens: 150_000,
        output_tokens: 4096,
        max_output_tokens: 32_768,
        token_ratio: 1.0,
        bands: &[Band::flat(2.0, 8.0, 0.50, 2.0)],
        verified: OPENAI_RETIRING,
    },
];

/// The share of the cheap band a planned request may fill: room for mf's estimate to be off by
/// up to a tenth.
pub const BAND_FILL: f64 = 0.9;

/// How much denser than mf's 4 characters a token real agent content can be. Measured on the
/// corpus Claude Code sessions (Opus 4.6, Sonnet 4.5): between consecutive calls the reported
/// input grew by one token per 2.6–2.8 characters of tool-heavy content, so 4 / 2.6. A request
/// planned under the cheap band assumes content that dense: chunks under the band cost the same
/// per token whatever their number, so the margin costs only the framing of the extra calls,
/// while a request over the band costs 5x.
pub const DENSE_CONTENT: f64 = 4.0 / 2.6;

impl ModelRow {
    /// The span budget mf plans with, in mf estimate tokens (4 characters): the row's span
    /// budget, and under the cheapest price band with a tenth to spare, each in the model's
    /// tokens, turned into mf's estimate by the tokenizer ratio.
    pub fn planning_span_tokens(&self) -> u64 {
        let mut real = self.span_tokens;
        if let Some(limit) = Pricing::of_row(self).cheap_limit() {
            real = real.min((limit as f64 * BAND_FILL / DENSE_CONTENT) as u64);
        }
        (real as f64 / self.token_ratio).floor() as u64
    }
}

/// The budgets for a model not in the table: a local OpenAI-compatible server gets a small span
/// budget, since many silently cut prompts longer than their context; a cloud model gets a
/// moderate one.
pub fn default_budgets(provider: Provider) -> (u64, u64) {
    match provider {
        Provider::OpenAiCompatible => (3_000, 1_024),
        Provider::Builtin => (2_000_000, 16_384),
        Provider::Anthropic | Provider::OpenAi => (100_000, 4_096),
    }
}

/// Names offered to shell completion for `--model`: the aliases, then the other rows' ids
/// (which resolve bare), current rows first.
pub fn completion_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = MODELS.iter().filter_map(|r| r.alias).collect();
    let rest = MODELS.iter().filter(|r| r.alias.is_none());
    v.extend(
        rest.clone()
            .filter(|r| r.status == Status::Current)
            .map(|r| r.id),
    );
    v.extend(rest.filter(|r| r.status != Status::Current).map(|r| r.id));
    v.push("openai-compatible:");
    v
}

/// A resolved `--model`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRef {
    pub provider: Provider,
    /// The id sent to the provider.
    pub id: String,
    /// The table row, when the model is in the table.
    pub row: Option<ModelRow>,
}

impl ModelRef {
    /// The span budget of one call (in mf estimate tokens, under the cheap price band) and
    /// the output budget, in tokens.
    pub fn budgets(&self) -> (u64, u64) {
        self.row.map_or_else(
            || default_budgets(self.provider),
            |r| (r.planning_span_tokens(), r.output_tokens),
        )
    }

    /// How requests to this model are shaped.
    pub fn profile(&self) -> Profile {
        self.row
            .map_or_else(|| Profile::guess(self.provider, &self.id), |r| r.profile)
    }

    /// The model's tokens per mf estimate token.
    pub fn token_ratio(&self) -> f64 {
        self.row.map_or_else(
            || match self.profile() {
                Profile::AnthropicThinkingOff | Profile::AnthropicAdaptive => 1.30,
                _ => 1.0,
            },
            |r| r.token_ratio,
        )
    }

    /// The model's price bands, when the table knows them.
    pub fn pricing(&self) -> Option<Pricing> {
        self.row.as_ref().map(Pricing::of_row)
    }

    /// The most the model writes in one reply, when known.
    pub fn max_output(&self) -> Option<u64> {
        self.row.map(|r| r.max_output_tokens)
    }

    /// A warning for a model that is on its way out, naming what replaces it.
    pub fn warning(&self) -> Option<String> {
        match self.row?.status {
            Status::Retiring(date) => Some(format!(
                "`{}` shuts down in the {} API on {date}; gpt-6-luna is its named replacement (mf models lists the table)",
                self.id, self.provider
            )),
            _ => None,
        }
    }

    /// The model's context window, when known.
    pub fn context(&self) -> Option<u64> {
        self.row.map(|r| r.context_tokens).filter(|&c| c > 0)
    }

    /// The name written into summaries: `provider:id`, or `extractive`.
    pub fn label(&self) -> String {
        match self.provider {
            Provider::Builtin => self.id.clone(),
            p => format!("{p}:{}", self.id),
        }
    }
}

/// Why a model name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model `{name}`{why}")]
pub struct UnknownModel {
    pub name: String,
    pub why: String,
}

/// The names a user can pass, for error messages.
pub fn choices() -> String {
    "extractive (built in, offline), haiku, sonnet, opus, anthropic:<id>, openai:<id> or a bare gpt-…/o…-name, \
openai-compatible:<name> with --base-url; `mf models` lists the table"
        .to_string()
}

fn row_for(provider: Provider, id: &str) -> Option<ModelRow> {
    MODELS
        .iter()
        .copied()
        .find(|r| r.provider == provider && r.id == id)
}

fn looks_openai(name: &str) -> bool {
    ["gpt-", "chatgpt-", "o1", "o3", "o4"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Resolve a model name: an alias, `provider:id`, a bare id from the table, or a bare OpenAI name.
pub fn resolve(name: &str) -> Result<ModelRef, UnknownModel> {
    let name = name.trim();
    let unknown = |why: &str| UnknownModel {
        name: name.to_string(),
        why: why.to_string(),
    };
    if let Some(row) = MODELS.iter().find(|r| r.alias == Some(name)) {
        return Ok(ModelRef {
            provider: row.provider,
            id: row.id.to_string(),
            row: Some(*row),
        });
    }
    if let Some((prefix, id)) = name.split_once(':') {
        let provider = match prefix {
            "anthropic" => Provider::Anthropic,
            "openai" => Provider::OpenAi,
            "openai-compatible" | "local" => Provider::OpenAiCompatible,
            other => {
                return Err(unknown(&format!(
                    ": no provider `{other}` (anthropic, openai, openai-compatible)"
                )));
            }
        };
        if id.trim().is_empty() {
            return Err(unknown(": the model id after the provider is empty"));
        }
        let id = id.trim().to_string();
        return Ok(ModelRef {
            provider,
            row: row_for(provider, &id),
            id,
        });
    }
    if let Some(row) = MODELS
        .iter()
        .find(|r| r.id == name && r.provider != Provider::Builtin)
    {
        return Ok(ModelRef {
            provider: row.provider,
            id: row.id.to_string(),
            row: Some(*row),
        });
    }
    if name.starts_with("claude-") {
        return Ok(ModelRef {
            provider: Provider::Anthropic,
            id: name.to_string(),
            row: None,
        });
    }
    if looks_openai(name) {
        return Ok(ModelRef {
            provider: Provider::OpenAi,
            id: name.to_string(),
            row: None,
        });
    }
    Err(unknown(""))
}

/// Whether two model names mean the same model: equal ids after resolving aliases and prefixes,
/// with a dated snapshot (`…-20251001`) equal to its undated id.
pub fn same_model(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        let id = resolve(s).map_or_else(|_| s.trim().to_string(), |m| m.id);
        let id = id.to_lowercase();
        match id.rsplit_once('-') {
            Some((stem, date)) if date.len() == 8 && date.chars().all(|c| c.is_ascii_digit()) => {
                stem.to_string()
            }
            _ => id,
        }
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_prefixes_and_bare_names() {
        assert_eq!(resolve("haiku").unwrap().id, "claude-haiku-5-5");
        assert_eq!(
            resolve("haiku").unwrap().label(),
            "anthropic:claude-haiku-5-5"
        );
        let m = resolve("openai:gpt-4.1-mini").unwrap();
        assert_eq!(
            (m.provider, m.id.as_str()),
            (Provider::OpenAi, "gpt-4.1-mini")
        );
        assert!(m.row.is_some());
        assert_eq!(resolve("gpt-4o-mini").unwrap().provider, Provider::OpenAi);
        assert_eq!(
            resolve("openai-compatible:smollm2").unwrap().provider,
            Provider::OpenAiCompatible
        );
        assert_eq!(resolve("extractive").unwrap().provider, Provider::Builtin);
        assert_eq!(
            resolve("claude-haiku-4-5").unwrap().provider,
            Provider::Anthropic
        );
        assert!(resolve("llama3").is_err());
        assert!(resolve("mistral:7b").is_err());
        assert!(resolve("openai:").is_err());
    }

    #[test]
    fn a_request_is_priced_in_the_band_of_its_own_size() {
        let haiku = resolve("haiku").unwrap().pricing().unwrap();
        let at = |i, o| {
            haiku.usd(Billed {
                input: i,
                output: o,
                ..Billed::default()
            })
        };
        assert!((at(100_000, 1_000) - (0.01 + 0.0005)).abs() < 1e-12);
        // One token over: the whole request at 5x.
        assert!((at(100_001, 1_000) - (100_001.0 * 0.50 + 1_000.0 * 2.50) / 1e6).abs() < 1e-12);
        assert_eq!(haiku.describe(100_001), ">100K $0.50/$2.50");
        let luna = resolve("gpt-6-luna").unwrap().pricing().unwrap();
        let long = luna.usd(Billed {
            input: 300_000,
            output: 2_000,
            ..Billed::default()
        });
        assert!((long - (300_000.0 * 0.20 + 2_000.0 * 0.75) / 1e6).abs() < 1e-12);
        assert_eq!(Pricing::flat(1.0, 2.0).cheap_limit(), None);
    }

    #[test]
    fn the_span_budget_stays_under_the_cheap_band_in_the_model_s_tokens() {
        for r in MODELS.iter().filter(|r| r.provider != Provider::Builtin) {
            let real = r.planning_span_tokens() as f64 * r.token_ratio;
            if let Some(limit) = Pricing::of_row(r).cheap_limit() {
                assert!(
                    real * DENSE_CONTENT <= limit as f64 * BAND_FILL + 2.0,
                    "{}: {real}",
                    r.id
                );
            }
            assert!(real <= r.context_tokens as f64, "{}", r.id);
        }
        assert_eq!(resolve("haiku").unwrap().budgets().0, 45_000);
    }

    #[test]
    fn profiles_of_rows_and_of_unknown_ids() {
        for (name, profile) in [
            ("haiku", Profile::AnthropicThinkingOff),
            ("opus", Profile::AnthropicAdaptive),
            ("claude-mythos-5-1", Profile::AnthropicAdaptive),
            ("claude-haiku-5-6", Profile::AnthropicThinkingOff),
            ("claude-3-5-haiku-20241022", Profile::AnthropicLegacy),
            ("gpt-4o", Profile::OpenAiChat),
            ("gpt-7-nova", Profile::OpenAiReasoning { effort: "low" }),
        ] {
            assert_eq!(resolve(name).unwrap().profile(), profile, "{name}");
        }
        assert!(
            resolve("gpt-4.1-mini")
                .unwrap()
                .warning()
                .unwrap()
                .contains("2027-01-14")
        );
        assert!(resolve("haiku").unwrap().warning().is_none());
    }

    #[test]
    fn same_model_sees_through_aliases_and_snapshots() {
        assert!(same_model("haiku", "claude-haiku-5-5"));
        assert!(same_model(
            "anthropic:claude-haiku-4-5",
            "claude-haiku-4-5-20251001"
        ));
        assert!(!same_model("haiku", "claude-sonnet-5-5"));
    }
}
