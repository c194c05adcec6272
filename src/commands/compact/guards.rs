//! The guards a compaction passes before anything is paid: the summarizer is not the model
//! that wrote the conversation, the file's lock is ours, the session is not live.

use std::time::Duration;

use anyhow::Result;

use super::Compaction;
use crate::error::MfError;
use crate::model;
use crate::settings::{CompactSettings, ModelChoice};
use crate::transcript::{Locked, Transcript};

/// The billing law: the summarizer must not be the model that wrote the conversation, unless
/// the user says so.
pub(super) fn check_same_model(t: &Transcript, settings: &CompactSettings) -> Result<()> {
    let ModelChoice::Remote(remote) = &settings.model else {
        return Ok(());
    };
    if settings.allow_same_model {
        return Ok(());
    }
    for agent in t.agent_models.iter().chain(settings.agent_model.iter()) {
        if model::same_model(agent, &remote.model.id) {
            return Err(MfError::refused(
                format!(
                    "`{}` is the model that wrote `{}` (`{agent}`): summarizing with it bills compression at the main model's price",
                    remote.model.label(),
                    t.display()
                ),
                Some("name a cheaper summarizer with --model, or pass --allow-same-model to do it anyway".into()),
            )
            .into());
        }
    }
    Ok(())
}

/// Wait for the file's lock without blocking the runtime, so a signal still lands.
pub(super) async fn wait_lock(h: &Locked, ctx: &Compaction) -> Result<()> {
    let mut said = false;
    loop {
        if h.try_lock()? {
            return Ok(());
        }
        if !said {
            ctx.ui.note(&format!(
                "waiting for the lock on `{}` (another mf is working on it)",
                h.path().display()
            ));
            said = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(25)) => {}
            _ = ctx.interrupt.cancelled() => return Err(MfError::Interrupted.into()),
        }
    }
}
