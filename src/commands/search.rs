//! `mf search`: ranked hits over what the folds hide (or every entry), with the ids `expand`
//! takes. Reads only; prints hits on stdout and what was searched on stderr.

use anyhow::Result;

use crate::cli::SearchArgs;
use crate::error::MfError;
use crate::exit_status::ExitStatus;
use crate::fold::Ledger;
use crate::render::{self, Ui};
use crate::search::Query;
use crate::settings::read_options;
use crate::transcript::CacheOptions;
use crate::view::{Scope, read_for_view, search as find};

pub fn search(args: &SearchArgs, cache: Option<&CacheOptions>, ui: &Ui) -> Result<ExitStatus> {
    let query = Query::new(&args.query).map_err(|e| MfError::usage(e.to_string(), None))?;
    let t = read_for_view(&args.file, &read_options(args.from, cache), ui)?;
    let ledger = Ledger::new(t.conversation());
    let scope = if args.all { Scope::All } else { Scope::Folded };
    let found = find(&t, &ledger, &query, scope, args.limit as usize)?;
    if found.widened {
        ui.note(&format!(
            "nothing in `{}` is folded: searched every entry",
            t.display()
        ));
    }
    if found.hits.is_empty() {
        ui.note(&format!(
            "no hit in {} {}entr{} of `{}`{}",
            found.searched,
            if found.scope == Scope::Folded {
                "folded "
            } else {
                ""
            },
            if found.searched == 1 { "y" } else { "ies" },
            t.display(),
            if found.scope == Scope::Folded {
                " (--all searches every entry)"
            } else {
                ""
            }
        ));
        return Ok(ExitStatus::Failure);
    }
    if args.json {
        render::stdout(&render::search::json_lines(&found.hits))?;
    } else {
        render::stdout(&render::search::text(&found.hits))?;
    }
    Ok(ExitStatus::Success)
}
