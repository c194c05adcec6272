//! `--batch`: every call of the run as one provider batch (half price). Passes, each planning
//! the files still open exactly as a synchronous run would: a pass answers every call it can
//! from collected results and queues the rest (`summarizer::batched`), which stops their files
//! before anything is written; the queued calls go out as one batch (split at the provider's
//! limits) — or, when an earlier run already submitted them, that batch is collected instead —
//! and the next pass writes what they answered. A retry of a lossy summary and a rollup of the
//! chunks just written come out of a pass as calls of the next batch. When the wait ends
//! (`--batch-wait`, Ctrl-C, a kill) nothing half is written: the batch is kept in mf's state
//! directory, the files end "try again later" (75), and rerunning the command collects it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::sync::Semaphore;

use super::batch_store::{BatchRecord, Store, Stored};
use super::{Compaction, rollup_file, run};
use crate::decision::DecisionRecord;
use crate::interrupt::Interrupt;
use crate::redact::Redactor;
use crate::render::Ui;
use crate::settings::tier::BatchAction;
use crate::settings::{CompactSettings, ModelChoice};
use crate::summarizer::batched::{Batched, Queued};
use crate::summarizer::wire::BatchStatus;
use crate::summarizer::{Remote, Severity, Summarizer, SummarizerError};

/// The slowest a batch is polled.
const MAX_POLL: Duration = Duration::from_secs(60);

/// Whether a file's result is a call still waiting in a batch.
fn pending(r: &Result<DecisionRecord>) -> bool {
    r.as_ref().err().is_some_and(|e| {
        e.chain().any(|c| {
            c.downcast_ref::<SummarizerError>()
                .is_some_and(|s| s.severity == Severity::Pending)
        })
    })
}

/// What a remote run needs to reach the provider.
pub(super) fn remote_for(settings: &CompactSettings, ui: Ui) -> Result<Arc<Remote>> {
    let ModelChoice::Remote(config) = &settings.model else {
        anyhow::bail!("a batch needs a remote model");
    };
    Ok(Arc::new(remote_of(config, settings, ui)?))
}

fn remote_of(
    config: &crate::summarizer::RemoteConfig,
    settings: &CompactSettings,
    ui: Ui,
) -> Result<Remote> {
    let log = ui.verbose().then(|| {
        let log: crate::http::Log = Arc::new(move |line: &str| ui.log(line));
        (log, settings.debug_bodies, ui.very_verbose())
    });
    Ok(crate::summarizer::remote_model(
        config,
        settings.http.clone(),
        log,
        Arc::new(move |line: &str| ui.warn(line)),
    )?)
}

/// The files still open, as settings of their own (their `--output` targets with them).
fn narrowed(settings: &CompactSettings, open: &[usize]) -> CompactSettings {
    let mut s = settings.clone();
    s.files = open.iter().map(|&i| settings.files[i].clone()).collect();
    s.outputs = settings
        .outputs
        .as_ref()
        .map(|o| open.iter().map(|&i| o[i].clone()).collect());
    s
}

/// `mf compact --batch`: every file's record, or its error (a file whose calls are still in a
/// batch when the wait ends: `Pending`, exit 75).
pub(super) async fn run_batched(
    settings: &CompactSettings,
    ui: Ui,
    interrupt: &Interrupt,
) -> Result<Vec<Result<DecisionRecord>>> {
    let remote = remote_for(settings, ui)?;
    let batched = Arc::new(Batched::new(remote.clone()));
    let store = Store::new(settings.tiers.state_dir.clone());
    let now = crate::clock::now_ms();
    let config = remote.config();
    let mine = |r: &BatchRecord| r.model == config.model.id && r.base_url == config.base_url;
    // What earlier runs collected, and what they submitted and left waiting.
    let mut in_flight: HashMap<String, String> = HashMap::new();
    // Files whose chunk summaries an earlier run wrote and whose rollup it left in a batch.
    let mut rolling: BTreeMap<usize, (DecisionRecord, Vec<String>)> = BTreeMap::new();
    for r in store.all(now).into_iter().filter(|r| mine(r)) {
        for (file, ids) in &r.rollups {
            if let Some(k) = settings
                .files
                .iter()
                .position(|f| f.display().to_string() == *file)
            {
                let mut rec = DecisionRecord::new(file, Some(&config.model.label()));
                rec.action = crate::decision::Action::Skipped;
                rolling.insert(k, (rec, ids.clone()));
            }
        }
        if r.collected {
            for (key, s) in &r.results {
                if matches!(s, Stored::Answered { .. }) {
                    batched.answer(key.clone(), s.reply());
                }
            }
        } else {
            for k in &r.keys {
                in_flight.insert(k.clone(), r.id.clone());
            }
        }
    }
    let ctx = Arc::new(Compaction {
        summarizer: batched.clone() as Arc<dyn Summarizer>,
        now_ms: crate::clock::now_ms,
        ui,
        interrupt: interrupt.clone(),
        calls: Arc::new(Semaphore::new(settings.jobs.max(64))),
        redactor: Redactor::new(config.secrets()),
    });
    let deadline = settings.tiers.batch_wait.map(|d| Instant::now() + d);
    let mut results: Vec<Option<Result<DecisionRecord>>> =
        settings.files.iter().map(|_| None).collect();
    let mut open: Vec<usize> = (0..settings.files.len())
        .filter(|k| !rolling.contains_key(k))
        .collect();
    let mut used: BTreeSet<String> = BTreeSet::new();
    loop {
        let mut still = Vec::new();
        if !open.is_empty() {
            let pass = run(&narrowed(settings, &open), ctx.clone()).await?;
            for (k, r) in open.iter().zip(pass) {
                match r {
                    r if pending(&r) => still.push(*k),
                    Ok(mut r) if r.rollup_pending.is_some() => {
                        let ids = r.rollup_pending.take().expect("checked");
                        rolling.insert(*k, (r, ids));
                    }
                    r => results[*k] = Some(r),
                }
            }
        }
        // Rollups of chunk summaries written by an earlier pass (or run).
        for (k, (rec, ids)) in std::mem::take(&mut rolling) {
            match rollup_file(&settings.files[k], settings, &ctx, rec, ids).await {
                Ok(mut r) if r.rollup_pending.is_some() => {
                    let ids = r.rollup_pending.take().expect("checked");
                    rolling.insert(k, (r, ids));
                }
                r => results[k] = Some(r),
            }
        }
        let queued = batched.take_queued();
        if still.is_empty() && rolling.is_empty() {
            break;
        }
        if queued.is_empty() {
            for k in still {
                results[k] = Some(Err(SummarizerError::fatal(
                    "a call waited for a batch but none was queued; this is a bug in mf, please report it",
                )
                .into()));
            }
            break;
        }
        let files: Vec<String> = still
            .iter()
            .chain(rolling.keys())
            .map(|&k| settings.files[k].display().to_string())
            .collect();
        let rollups: BTreeMap<String, Vec<String>> = rolling
            .iter()
            .map(|(&k, (_, ids))| (settings.files[k].display().to_string(), ids.clone()))
            .collect();
        let mut waiting: BTreeSet<String> = BTreeSet::new();
        let mut new: Vec<Queued> = Vec::new();
        for q in queued {
            match in_flight.get(&q.key) {
                Some(id) => {
                    waiting.insert(id.clone());
                }
                None => new.push(q),
            }
        }
        for id in submit(&remote, &store, new, &files, &rollups, ui).await? {
            waiting.insert(id);
        }
        for id in &waiting {
            if let Some(r) = store
                .all(crate::clock::now_ms())
                .iter()
                .find(|r| &r.id == id)
            {
                for k in &r.keys {
                    in_flight.insert(k.clone(), id.clone());
                }
            }
        }
        match wait(
            &remote,
            &waiting,
            deadline,
            interrupt,
            ui,
            settings.tiers.poll,
        )
        .await?
        {
            Waited::Ended(statuses) => {
                for st in statuses {
                    collect(&remote, &store, &batched, &st, &mut used).await?;
                    for k in in_flight.clone().keys() {
                        if in_flight[k] == st.id {
                            in_flight.remove(k);
                        }
                    }
                }
            }
            Waited::Stopped { why, statuses } => {
                let about = statuses
                    .iter()
                    .map(|s| format!("{} ({}/{} answered, {})", s.id, s.done, s.total, s.status))
                    .collect::<Vec<_>>()
                    .join(", ");
                for (k, (mut r, _)) in std::mem::take(&mut rolling) {
                    r.waiting = true;
                    r.notes.push(crate::decision::Note::RollupWaiting(format!(
                        "the chunk summaries are written; their rollup is in batch {about}. Run the same command again to collect it"
                    )));
                    results[k] = Some(Ok(r));
                }
                for k in still {
                    let e = SummarizerError {
                        message: format!(
                            "{why}: batch {about} is still working; nothing was written for this file. Run the same command again to collect the answers without submitting again (`mf compact --batch-status` lists the batches; `--batch-cancel` cancels them)"
                        ),
                        ..SummarizerError::pending()
                    };
                    results[k] = Some(Err(e.into()));
                }
                return Ok(finished(results));
            }
        }
        open = still;
    }
    forget_used(&store, settings, &used);
    Ok(finished(results))
}

fn finished(results: Vec<Option<Result<DecisionRecord>>>) -> Vec<Result<DecisionRecord>> {
    results
        .into_iter()
        .map(|r| r.expect("every file has a result"))
        .collect()
}

/// Submit the queued calls as batches within the provider's limits, each kept in the store
/// as soon as the provider names it: their ids.
async fn submit(
    remote: &Remote,
    store: &Store,
    queued: Vec<Queued>,
    files: &[String],
    rollups: &BTreeMap<String, Vec<String>>,
    ui: Ui,
) -> Result<Vec<String>> {
    if queued.is_empty() {
        return Ok(Vec::new());
    }
    let (max_requests, max_bytes) = remote.batch_limits()?;
    let mut groups: Vec<Vec<(String, serde_json::Value)>> = vec![Vec::new()];
    let mut bytes = 0usize;
    for q in queued {
        let line = remote.batch_line(&q.key, &q.body)?;
        let n = serde_json::to_vec(&line).map_or(0, |v| v.len()) + 1;
        let last = groups.last_mut().expect("one group at least");
        if !last.is_empty() && (last.len() >= max_requests || bytes + n > max_bytes) {
            groups.push(Vec::new());
            bytes = 0;
        }
        bytes += n;
        groups
            .last_mut()
            .expect("one group at least")
            .push((q.key, line));
    }
    let config = remote.config();
    let mut ids = Vec::new();
    for group in groups {
        let lines: Vec<serde_json::Value> = group.iter().map(|(_, l)| l.clone()).collect();
        let st = remote.submit_batch(&lines).await?;
        let record = BatchRecord {
            version: 1,
            id: st.id.clone(),
            provider: config.model.provider.as_str().to_string(),
            model: config.model.id.clone(),
            base_url: config.base_url.clone(),
            submitted_at_ms: crate::clock::now_ms(),
            files: files.to_vec(),
            keys: group.into_iter().map(|(k, _)| k).collect(),
            status: st.status.clone(),
            done: st.done,
            total: st.total.max(lines.len() as u64),
            collected: false,
            results: BTreeMap::new(),
            rollups: rollups.clone(),
        };
        store.save(&record)?;
        ui.note(&format!(
            "submitted batch {} to {}: {} request{} for {} file{}; waiting for it (Ctrl-C stops waiting; the next run collects it)",
            st.id,
            config.model.label(),
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" },
        ));
        ids.push(st.id);
    }
    Ok(ids)
}

enum Waited {
    Ended(Vec<BatchStatus>),
    Stopped {
        why: String,
        statuses: Vec<BatchStatus>,
    },
}

/// Poll the batches until all have ended, the wait runs out, or a signal comes. A poll the
/// provider does not answer (a restart, an outage) is said and tried again; a setup error
/// (the key refused) ends the run.
async fn wait(
    remote: &Remote,
    ids: &BTreeSet<String>,
    deadline: Option<Instant>,
    interrupt: &Interrupt,
    ui: Ui,
    poll: Duration,
) -> Result<Waited> {
    let mut last: BTreeMap<String, BatchStatus> = BTreeMap::new();
    let bar = ui.batch_bar(0);
    let mut every = poll;
    loop {
        for id in ids {
            match remote.batch_status(id).await {
                Ok(st) => {
                    last.insert(id.clone(), st);
                }
                Err(e) if e.severity == Severity::Fatal => return Err(e.into()),
                Err(e) => ui.warn(&format!("batch {id}: {}; asking again", e.message)),
            }
        }
        let (done, total) = last
            .values()
            .fold((0, 0), |(d, t), s| (d + s.done, t + s.total));
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(
            last.values()
                .map(|s| format!("{} {}", s.id, s.status))
                .collect::<Vec<_>>()
                .join(", "),
        );
        if last.len() == ids.len() && last.values().all(|s| s.ended) {
            bar.finish_and_clear();
            return Ok(Waited::Ended(last.into_values().collect()));
        }
        let stop = |why: String, last: BTreeMap<String, BatchStatus>| {
            let mut statuses: Vec<BatchStatus> = last.into_values().collect();
            for id in ids {
                if !statuses.iter().any(|s| &s.id == id) {
                    statuses.push(BatchStatus {
                        id: id.clone(),
                        status: "unknown".into(),
                        ..BatchStatus::default()
                    });
                }
            }
            Ok(Waited::Stopped { why, statuses })
        };
        let until = Instant::now() + every;
        loop {
            if let Some(sig) = interrupt.received() {
                bar.finish_and_clear();
                return stop(
                    format!("stopped waiting ({})", crate::interrupt::name(sig)),
                    last,
                );
            }
            if let Some(d) = deadline
                && Instant::now() >= d
            {
                bar.finish_and_clear();
                return stop("stopped waiting (--batch-wait ran out)".into(), last);
            }
            if Instant::now() >= until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20).min(every)).await;
        }
        every = (every * 3 / 2).min(MAX_POLL.max(poll));
    }
}

/// Read an ended batch's results, keep them, and hand them to the summarizer. A request the
/// results do not name came to nothing (canceled or expired with its batch).
async fn collect(
    remote: &Remote,
    store: &Store,
    batched: &Batched,
    st: &BatchStatus,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    let items = remote.batch_results(st).await?;
    let mut record = store
        .all(crate::clock::now_ms())
        .into_iter()
        .find(|r| r.id == st.id);
    let mut results: BTreeMap<String, Stored> = items
        .iter()
        .map(|(k, item)| (k.clone(), Stored::of(item)))
        .collect();
    if let Some(r) = &record {
        for k in &r.keys {
            results.entry(k.clone()).or_insert_with(|| Stored::Failed {
                kind: if st.status.contains("expire") {
                    "expired".into()
                } else if st.status.contains("cancel") {
                    "canceled".into()
                } else {
                    "errored".into()
                },
                message: st.failure.clone().unwrap_or_else(|| {
                    format!(
                        "the batch ended ({}) with no result for this request",
                        st.status
                    )
                }),
            });
        }
    }
    for (k, s) in &results {
        batched.answer(k.clone(), s.reply());
    }
    if let Some(r) = &mut record {
        r.collected = true;
        r.status = st.status.clone();
        r.done = st.done;
        r.total = st.total;
        r.results = results;
        store.save(r)?;
    }
    used.insert(st.id.clone());
    Ok(())
}

/// Forget the batches this run collected whose files were all part of it: everything they
/// answered is now in the files (or was declined and remembered there).
fn forget_used(store: &Store, settings: &CompactSettings, used: &BTreeSet<String>) {
    let here: BTreeSet<String> = settings
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    for r in store.all(crate::clock::now_ms()) {
        if r.collected && (used.contains(&r.id) || r.files.iter().all(|f| here.contains(f))) {
            store.forget(&r.id);
        }
    }
}

/// `--batch-status` and `--batch-cancel`: the batches kept, each asked about (or canceled) at
/// its provider when its key is set. With FILEs, `--batch-cancel` cancels only the batches
/// holding calls for them.
pub(super) fn admin(
    args: &crate::cli::TierArgs,
    files: &[std::path::PathBuf],
    ui: Ui,
) -> Result<crate::exit_status::ExitStatus> {
    let tiers = crate::settings::tier::for_admin(args);
    let store = Store::new(tiers.state_dir.clone());
    let wanted: BTreeSet<String> = files.iter().map(|f| f.display().to_string()).collect();
    let records: Vec<BatchRecord> = store
        .all(crate::clock::now_ms())
        .into_iter()
        .filter(|r| !r.collected)
        .filter(|r| wanted.is_empty() || r.files.iter().any(|f| wanted.contains(f)))
        .collect();
    let mut rows = Vec::new();
    super::super::block_on(async {
        for mut r in records {
            let asked = async {
                let config = crate::settings::tier::admin_remote(&r.model, &r.base_url)?;
                let remote = Remote::new(
                    config,
                    crate::http::HttpClient::new(crate::http::HttpSettings::default())?,
                    Arc::new(move |line: &str| ui.warn(line)),
                );
                let st = if tiers.action == BatchAction::Cancel {
                    remote.cancel_batch(&r.id).await?
                } else {
                    remote.batch_status(&r.id).await?
                };
                anyhow::Ok(st)
            }
            .await;
            let seen = match asked {
                Ok(st) => {
                    r.status = st.status.clone();
                    r.done = st.done;
                    r.total = st.total;
                    let _ = store.save(&r);
                    None
                }
                Err(e) => Some(e.to_string()),
            };
            rows.push(crate::render::BatchRow {
                id: r.id.clone(),
                provider: r.provider.clone(),
                model: r.model.clone(),
                status: r.status.clone(),
                done: r.done,
                total: r.total,
                submitted_at_ms: r.submitted_at_ms,
                files: r.files.clone(),
                unreachable: seen,
            });
        }
    })?;
    crate::render::batches(&ui, &rows, tiers.action == BatchAction::Cancel, store.dir())?;
    Ok(crate::exit_status::ExitStatus::Success)
}
