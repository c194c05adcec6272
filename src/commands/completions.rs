//! `mf completions SHELL`: the shell's hook into mf's own completer (clap_complete's dynamic
//! completion: the shell asks `MF_COMPLETE=SHELL mf -- WORDS…`; a name of mf's own, so a
//! `COMPLETE` set for something else never turns mf into a completer), so values that depend on the
//! command line complete too: `--strategy`'s names, `--system-prompt @FILE`, and the summary ids
//! of the file `expand` names.

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::engine::ValueCompleter;
use clap_complete::env::EnvCompleter;
use clap_complete::{ArgValueCompleter, CompletionCandidate, PathCompleter};

use crate::cli::{Cli, CompletionsArgs};

/// The environment variable the shell hook sets when it asks mf for completions.
pub const VAR: &str = "MF_COMPLETE";

/// The command line with its completers: what the shell hook's questions are answered from.
pub fn command() -> clap::Command {
    Cli::command()
        .mut_subcommand("compact", |c| {
            c.mut_arg("system_prompt", |a| {
                a.add(ArgValueCompleter::new(system_prompt_values))
            })
        })
        .mut_subcommand("expand", |c| {
            c.mut_arg("id", |a| a.add(ArgValueCompleter::new(summary_ids)))
        })
}

/// Answer the shell's completion request and exit, when this run is one (`MF_COMPLETE` is set).
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(command)
        .var(VAR)
        .complete();
}

/// The hook script for `shell`.
pub fn script(shell: clap_complete::Shell) -> String {
    use clap_complete::env;
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &env::Bash,
        clap_complete::Shell::Zsh => &env::Zsh,
        clap_complete::Shell::Fish => &env::Fish,
        clap_complete::Shell::PowerShell => &env::Powershell,
        clap_complete::Shell::Elvish => &env::Elvish,
        _ => &env::Bash,
    };
    let mut buf = Vec::new();
    completer
        .write_registration(VAR, "mf", "mf", "mf", &mut buf)
        .expect("writing to memory");
    String::from_utf8(buf).expect("completion scripts are UTF-8")
}

pub fn completions(args: &CompletionsArgs) -> std::io::Result<()> {
    crate::render::stdout(&script(args.shell))
}

/// `--system-prompt TEXT|@FILE`: after `@`, file names (kept behind the `@`); before anything,
/// the `@` itself (free text has nothing to complete).
fn system_prompt_values(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    match current.strip_prefix('@') {
        Some(path) => PathCompleter::any()
            .complete(OsStr::new(path))
            .into_iter()
            .map(|c| {
                let value = format!("@{}", c.get_value().to_string_lossy());
                CompletionCandidate::new(value)
            })
            .collect(),
        None if current.is_empty() => vec![
            CompletionCandidate::new("@").help(Some("read the instruction from a file".into())),
        ],
        None => Vec::new(),
    }
}

/// The transcript `expand` names on the command line being completed (the first word after
/// `expand` that is neither a flag nor a flag's value).
fn expand_file(words: &[String]) -> Option<PathBuf> {
    let at = words.iter().position(|w| w == "expand")?;
    let mut rest = words[at + 1..words.len().saturating_sub(1)].iter();
    while let Some(w) = rest.next() {
        match w.as_str() {
            "--format" | "--from" => {
                rest.next();
            }
            "--" => return rest.next().map(PathBuf::from),
            w if w.starts_with('-') => {}
            w => return Some(PathBuf::from(w)),
        }
    }
    None
}

/// `expand`'s ID: the summaries and stubs in the named file, with the turns each covers.
fn summary_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    use crate::fold::Ledger;
    let current = current.to_string_lossy();
    // The shell's words follow the `--` it puts after mf's own path.
    let args: Vec<String> = std::env::args().collect();
    let words = match args.iter().position(|a| a == "--") {
        Some(i) => &args[i + 1..],
        None => &args[..],
    };
    let Some(file) = expand_file(words) else {
        return Vec::new();
    };
    let Ok(t) = crate::transcript::read(&file, &crate::settings::read_options(None, None)) else {
        return Vec::new();
    };
    let ledger = Ledger::new(t.conversation());
    ledger
        .summaries_in_order()
        .into_iter()
        .map(|s| {
            let id = t.id_string(s.entry as usize);
            let kind = if s.kind == crate::entry::ClaimKind::Stub {
                "stub"
            } else {
                "summary"
            };
            (id, kind)
        })
        .filter(|(id, _)| id.starts_with(current.as_ref()))
        .map(|(id, kind)| CompletionCandidate::new(id).help(Some(kind.into())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_file_expand_names_is_found_among_its_flags() {
        assert_eq!(
            expand_file(&words("mf expand a.jsonl ")),
            Some("a.jsonl".into())
        );
        assert_eq!(
            expand_file(&words("mf -q expand --format text --deep b.jsonl msg")),
            Some("b.jsonl".into())
        );
        assert_eq!(
            expand_file(&words("mf expand --from chat -- -odd.jsonl x")),
            Some("-odd.jsonl".into())
        );
        assert_eq!(expand_file(&words("mf expand a.jsonl")), None);
        assert_eq!(expand_file(&words("mf recall a.jsonl x")), None);
    }

    #[test]
    fn every_completer_is_attached_to_an_argument_that_exists() {
        // mut_arg panics on a name that does not exist.
        command().debug_assert();
    }
}
