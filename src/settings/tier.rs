//! `--batch`, `--batch-wait`, `--batch-status`, `--batch-cancel`, `--service-tier`,
//! `--flex-fallback`: the tier a run's calls go at, checked against the model, and where the
//! batches mf submitted are kept.

use std::path::PathBuf;
use std::time::Duration;

use super::{env_vars as ev, var};
use crate::cli::{ServiceTier, TierArgs};
use crate::entry::Tier;
use crate::error::MfError;
use crate::model::{ModelRef, Provider};
use crate::summarizer::RemoteConfig;

/// What `--batch-status` / `--batch-cancel` ask for instead of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchAction {
    #[default]
    Run,
    Status,
    Cancel,
}

/// The tier settings of a compact run.
#[derive(Debug, Clone, Default)]
pub struct TierSettings {
    /// What the run's calls are billed at: `Batch` with `--batch`, `Flex` with
    /// `--service-tier flex`.
    pub tier: Tier,
    /// `--batch-wait`: how long to wait for a batch before exiting 75 (`None`: until done).
    pub batch_wait: Option<Duration>,
    pub flex_fallback: bool,
    /// How often a batch is polled at first (it slows to a minute).
    pub poll: Duration,
    /// Where submitted batches are recorded (`None`: no home directory to keep them in).
    pub state_dir: Option<PathBuf>,
    pub action: BatchAction,
}

impl TierSettings {
    pub fn batch(&self) -> bool {
        self.tier == Tier::Batch
    }
}

/// The tier flags, checked against the model.
pub fn resolve(
    args: &TierArgs,
    model: &ModelRef,
    masks_only: bool,
    _rollup: bool,
) -> Result<TierSettings, MfError> {
    let tier = match (args.batch, args.service_tier) {
        (true, _) => Tier::Batch,
        (false, Some(ServiceTier::Flex)) => Tier::Flex,
        _ => Tier::Standard,
    };
    let label = model.label();
    if args.batch
        && !masks_only
        && !matches!(model.provider, Provider::Anthropic | Provider::OpenAi)
    {
        return Err(MfError::usage(
            format!("`--batch` needs an Anthropic or OpenAI model; `{label}` has no batch API"),
            Some("drop --batch, or name a model such as haiku or gpt-6-luna".into()),
        ));
    }
    if tier == Tier::Flex && model.provider != Provider::OpenAi {
        return Err(MfError::usage(
            format!("`--service-tier flex` is OpenAI's tier; `{label}` is not an OpenAI model"),
            Some("drop --service-tier, use --batch for Anthropic's half price, or name an OpenAI model such as gpt-6-luna".into()),
        ));
    }
    let state_dir = state_dir();
    if args.batch && state_dir.is_none() {
        return Err(MfError::usage(
            "`--batch` keeps the batches it submits so that a later run can collect them, but there is no directory to keep them in (no HOME)",
            Some("set MF_STATE_DIR (or XDG_STATE_HOME, or HOME)".into()),
        ));
    }
    Ok(TierSettings {
        tier,
        batch_wait: args.batch_wait,
        flex_fallback: args.flex_fallback,
        poll: poll(),
        state_dir,
        action: action(args),
    })
}

fn action(args: &TierArgs) -> BatchAction {
    if args.batch_status {
        BatchAction::Status
    } else if args.batch_cancel {
        BatchAction::Cancel
    } else {
        BatchAction::Run
    }
}

/// The tier settings `--batch-status` and `--batch-cancel` need, without a model.
pub fn for_admin(args: &TierArgs) -> TierSettings {
    TierSettings {
        poll: poll(),
        state_dir: state_dir(),
        action: action(args),
        ..TierSettings::default()
    }
}

fn poll() -> Duration {
    var(ev::MF_BATCH_POLL_MS)
        .and_then(|v| v.trim().parse().ok())
        .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// `$MF_STATE_DIR`, else `$XDG_STATE_HOME/mf/batches`, else `~/.local/state/mf/batches`.
pub fn state_dir() -> Option<PathBuf> {
    if let Some(d) = var(ev::MF_STATE_DIR) {
        return Some(PathBuf::from(d));
    }
    let base = var(ev::XDG_STATE_HOME)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var(ev::HOME).map(|h| PathBuf::from(h).join(".local").join("state")))?;
    Some(base.join("mf").join("batches"))
}

/// A remote model's config at the run's tier.
pub fn apply(mut config: RemoteConfig, tiers: &TierSettings) -> RemoteConfig {
    config.tier = match tiers.tier {
        // A batch's lines are the default tier's bodies; the batch itself is the discount.
        Tier::Batch => Tier::Standard,
        t => t,
    };
    config.flex_fallback = tiers.flex_fallback;
    config
}

/// The key and base URL to reach a provider a recorded batch was submitted to, for
/// `--batch-status` and `--batch-cancel` without a model on the command line: the provider's
/// key variable, and the base URL the batch was submitted to.
pub fn admin_remote(model: &str, base_url: &str) -> Result<RemoteConfig, MfError> {
    let model = crate::model::resolve(model).map_err(|e| MfError::usage(e.to_string(), None))?;
    let key_var = match model.provider {
        Provider::Anthropic => ev::ANTHROPIC_API_KEY,
        Provider::OpenAi => ev::OPENAI_API_KEY,
        Provider::OpenAiCompatible | Provider::Builtin => ev::MF_API_KEY,
    };
    let key = var(key_var).ok_or_else(|| {
        MfError::refused(
            format!(
                "{key_var} is not set; mf needs it to ask {} about its batches",
                model.label()
            ),
            Some(format!("export {key_var}=…")),
        )
    })?;
    Ok(RemoteConfig {
        model,
        base_url: base_url.to_string(),
        base_url_from: "the base URL the batch was submitted to",
        key: Some(secrecy::SecretString::from(key)),
        key_var,
        temperature: None,
        seed: None,
        anthropic_version: crate::summarizer::anthropic::DEFAULT_VERSION.to_string(),
        max_output_tokens: None,
        tier: Tier::Standard,
        flex_fallback: false,
    })
}
