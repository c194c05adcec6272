//! `ModelTable`: the one data table of summarizer models — aliases, providers, ids, context sizes
//! and prices — and how a `--model` name resolves against it. Update the rows when providers
//! change their line-ups; nothing else in mf hard-codes a model.

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

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelRow {
    pub alias: Option<&'static str>,
    pub provider: Provider,
    pub id: &'static str,
    pub context_tokens: u64,
    /// The most one summarizer call may carry, in tokens: spans over it are split into chunks.
    pub span_tokens: u64,
    /// The most one summary may be, in tokens (the request's output cap).
    pub output_tokens: u64,
    /// USD per million input tokens (the base band where a provider has several).
    pub price_in: f64,
    /// USD per million output tokens.
    pub price_out: f64,
    /// Where and when the row was last checked.
    pub verified: &'static str,
}

/// The table. Aliases point at each family's current model.
pub const MODELS: &[ModelRow] = &[
    ModelRow {
        alias: Some("extractive"),
        provider: Provider::Builtin,
        id: "extractive",
        context_tokens: 0,
        span_tokens: 2_000_000,
        // A summary's length is bounded by what it is for: at most 16,384 tokens (64 kB), which
        // holds a fifth (the compression goal) of a span of 80,000 tokens. A longer span gets a
        // summary of this length, which the audit then judges like any model's.
        output_tokens: 16_384,
        price_in: 0.0,
        price_out: 0.0,
        verified: "built in",
    },
    ModelRow {
        alias: Some("haiku"),
        provider: Provider::Anthropic,
        id: "claude-haiku-5-5",
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 0.10,
        price_out: 0.50,
        verified: "platform.claude.com models overview, 2026-10 (prompts ≤100K tokens; $0.50/$2.50 above)",
    },
    ModelRow {
        alias: Some("sonnet"),
        provider: Provider::Anthropic,
        id: "claude-sonnet-5-5",
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 2.0,
        price_out: 10.0,
        verified: "platform.claude.com models overview, 2026-10",
    },
    ModelRow {
        alias: Some("opus"),
        provider: Provider::Anthropic,
        id: "claude-opus-5-5",
        context_tokens: 1_000_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 4.0,
        price_out: 20.0,
        verified: "platform.claude.com models overview, 2026-10",
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-haiku-4-5",
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 1.0,
        price_out: 5.0,
        verified: "platform.claude.com pricing, 2026",
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-sonnet-4-6",
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 3.0,
        price_out: 15.0,
        verified: "platform.claude.com pricing, 2026",
    },
    ModelRow {
        alias: None,
        provider: Provider::Anthropic,
        id: "claude-opus-4-6",
        context_tokens: 200_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 5.0,
        price_out: 25.0,
        verified: "platform.claude.com pricing, 2026",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4o-mini",
        context_tokens: 128_000,
        span_tokens: 100_000,
        output_tokens: 4096,
        price_in: 0.15,
        price_out: 0.60,
        verified: "OpenAI pricing as transcribed, 2026",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-4.1-mini",
        context_tokens: 1_047_576,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 0.40,
        price_out: 1.60,
        verified: "OpenAI pricing as transcribed, 2026",
    },
    ModelRow {
        alias: None,
        provider: Provider::OpenAi,
        id: "gpt-5-mini",
        context_tokens: 400_000,
        span_tokens: 150_000,
        output_tokens: 4096,
        price_in: 0.25,
        price_out: 2.0,
        verified: "OpenAI pricing as transcribed, 2026",
    },
];

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

/// Names offered to shell completion for `--model`.
pub fn completion_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = MODELS.iter().filter_map(|r| r.alias).collect();
    v.extend(
        MODELS
            .iter()
            .filter(|r| r.alias.is_none())
            .map(|r| match r.provider {
                Provider::Anthropic => match r.id {
                    "claude-haiku-4-5" => "anthropic:claude-haiku-4-5",
                    "claude-sonnet-4-6" => "anthropic:claude-sonnet-4-6",
                    _ => "anthropic:claude-opus-4-6",
                },
                _ => r.id,
            }),
    );
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
    /// The span and output budgets of one call, in tokens.
    pub fn budgets(&self) -> (u64, u64) {
        self.row.map_or_else(
            || default_budgets(self.provider),
            |r| (r.span_tokens, r.output_tokens),
        )
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
    fn same_model_sees_through_aliases_and_snapshots() {
        assert!(same_model("haiku", "claude-haiku-5-5"));
        assert!(same_model(
            "anthropic:claude-haiku-4-5",
            "claude-haiku-4-5-20251001"
        ));
        assert!(!same_model("haiku", "claude-sonnet-5-5"));
    }
}
