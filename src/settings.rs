//! `Settings`: flags, environment and files resolved into what each command needs. The only
//! module that reads the environment.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::{CompactArgs, PolicyArgs};
use crate::error::MfError;
use crate::fold::FoldPolicy;
use crate::summarizer::extractive;

/// Environment variables mf reads.
pub mod env_vars {
    /// The summarizer model when `--model` is not given.
    pub const MF_MODEL: &str = "MF_MODEL";
    /// Set to anything but `0` to never draw progress bars.
    pub const MF_NO_PROGRESS: &str = "MF_NO_PROGRESS";
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// How mf talks to the person at the terminal.
#[derive(Debug, Clone, Copy)]
pub struct UiSettings {
    pub quiet: bool,
    /// Progress bars: only on a terminal, never when asked not to.
    pub progress: bool,
    pub stdout_is_terminal: bool,
}

impl UiSettings {
    pub fn resolve(quiet: bool, no_progress: bool) -> Self {
        let env_off = var(env_vars::MF_NO_PROGRESS).is_some_and(|v| v != "0");
        Self {
            quiet,
            progress: !quiet && !no_progress && !env_off && std::io::stderr().is_terminal(),
            stdout_is_terminal: std::io::stdout().is_terminal(),
        }
    }
}

/// The summarizer a command will use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    Extractive,
}

impl ModelChoice {
    pub fn name(&self) -> &str {
        match self {
            ModelChoice::Extractive => extractive::NAME,
        }
    }
}

const MODEL_CHOICES: &str = "extractive (built-in, offline, no key)";

/// Resolve the model: `--model`, else `MF_MODEL`; never a default.
pub fn resolve_model(flag: Option<&str>) -> Result<ModelChoice, MfError> {
    let name = flag.map(str::to_string).or_else(|| var(env_vars::MF_MODEL));
    let Some(name) = name else {
        return Err(MfError::usage(
            "no summarizer model named: pass `--model MODEL` or set MF_MODEL (mf never picks one for you)",
            Some(format!("available: {MODEL_CHOICES}")),
        ));
    };
    match name.trim() {
        extractive::NAME => Ok(ModelChoice::Extractive),
        other => Err(MfError::usage(
            format!("unknown model `{other}`"),
            Some(format!("available: {MODEL_CHOICES}")),
        )),
    }
}

/// Resolve the policy flags over their defaults.
pub fn resolve_policy(args: &PolicyArgs) -> Result<FoldPolicy, MfError> {
    let d = FoldPolicy::default();
    let PolicyArgs {
        recent,
        size,
        trigger,
        min_fold,
    } = args.clone();
    FoldPolicy::new(
        recent.unwrap_or(d.recent),
        size,
        trigger.unwrap_or(d.trigger),
        min_fold.unwrap_or(d.min_fold),
    )
    .map_err(|e| MfError::usage(e.to_string(), None))
}

/// Everything `compact` needs.
#[derive(Debug, Clone)]
pub struct CompactSettings {
    pub files: Vec<PathBuf>,
    pub model: ModelChoice,
    pub policy: FoldPolicy,
    /// Replacement instruction, if given.
    pub instruction: Option<String>,
    pub dry_run: bool,
    pub output: Option<PathBuf>,
    pub json: bool,
    pub jobs: usize,
}

impl CompactSettings {
    pub fn resolve(args: CompactArgs) -> Result<Self, MfError> {
        let CompactArgs {
            files,
            model,
            policy,
            system_prompt,
            dry_run,
            output,
            json,
            jobs,
        } = args;
        let model = resolve_model(model.as_deref())?;
        let policy = resolve_policy(&policy)?;
        let instruction = match system_prompt {
            None => None,
            Some(p) => {
                let text = match p.strip_prefix('@') {
                    Some(path) => std::fs::read_to_string(path).map_err(|e| {
                        MfError::refused(
                            format!("cannot read the system prompt file `{path}`: {e}"),
                            None,
                        )
                    })?,
                    None => p,
                };
                if text.trim().is_empty() {
                    return Err(MfError::usage("`--system-prompt` is empty", None));
                }
                Some(text)
            }
        };
        if jobs == 0 {
            return Err(MfError::usage("`-j` must be at least 1", None));
        }
        if let Some(out) = &output
            && files.len() > 1
            && !out.is_dir()
        {
            return Err(MfError::usage(
                format!(
                    "with several files, `--output` must be an existing directory (`{}` is not)",
                    out.display()
                ),
                None,
            ));
        }
        Ok(Self {
            files,
            model,
            policy,
            instruction,
            dry_run,
            output,
            json,
            jobs,
        })
    }

    /// Where the compacted copy of `file` goes, when `--output` is given.
    pub fn output_for(&self, file: &std::path::Path) -> Option<PathBuf> {
        let out = self.output.as_ref()?;
        if out.is_dir() {
            Some(out.join(file.file_name().unwrap_or_default()))
        } else {
            Some(out.clone())
        }
    }
}
