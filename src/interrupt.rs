//! `Interrupt`: what SIGINT, SIGTERM and SIGHUP do. Outside a write, mf stops at once (a
//! read-only command simply ends; a compaction drops the calls in flight, writes nothing for
//! them and reports what it had written). During an append the signal waits: an append is never
//! cut short by a signal mf can catch. SIGXFSZ (a file-size limit) becomes an error on the write
//! instead of killing mf mid-line.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
use tokio::sync::watch;

#[derive(Debug)]
struct Inner {
    signal: AtomicI32,
    /// Set by commands that stop in good order (reporting what they wrote).
    graceful: AtomicBool,
    /// Appends in progress.
    critical: AtomicUsize,
    tx: watch::Sender<i32>,
}

/// The process's interrupt state. Clones share it.
#[derive(Debug, Clone)]
pub struct Interrupt {
    inner: Arc<Inner>,
    rx: watch::Receiver<i32>,
}

/// The last signal the installed handlers received, process-wide (0: none): what a loop far
/// from the command's `Interrupt` (copying standard input) looks at to stop in time.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The signal the installed handlers received, if any (none without [`Interrupt::install`]).
pub fn received_by_process() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Held while an append is in progress: a signal received meanwhile takes effect after it.
#[derive(Debug)]
pub struct Critical<'a>(&'a Interrupt);

impl Drop for Critical<'_> {
    fn drop(&mut self) {
        self.0.inner.critical.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Interrupt {
    /// Install the handlers. Until `graceful` is called, a signal ends the process at once with
    /// 128 + its number, as if no handler were there.
    pub fn install() -> Self {
        let (tx, rx) = watch::channel(0);
        let inner = Arc::new(Inner {
            signal: AtomicI32::new(0),
            graceful: AtomicBool::new(false),
            critical: AtomicUsize::new(0),
            tx,
        });
        let _ = signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)));
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            let state = inner.clone();
            std::thread::spawn(move || {
                for sig in signals.forever() {
                    let first = state.signal.load(Ordering::SeqCst) == 0;
                    state.signal.store(sig, Ordering::SeqCst);
                    RECEIVED.store(sig, Ordering::SeqCst);
                    let _ = state.tx.send(sig);
                    let graceful = state.graceful.load(Ordering::SeqCst);
                    // Not stopping in order, or asked twice outside an append: end now.
                    if !graceful || (!first && state.critical.load(Ordering::SeqCst) == 0) {
                        while state.critical.load(Ordering::SeqCst) > 0 {
                            std::thread::sleep(std::time::Duration::from_millis(5));
                        }
                        std::process::exit(exit_code(sig).into());
                    }
                }
            });
        }
        Interrupt { inner, rx }
    }

    /// A state with no handlers, for tests that drive the pipeline in-process.
    pub fn inert() -> Self {
        let (tx, rx) = watch::channel(0);
        Interrupt {
            inner: Arc::new(Inner {
                signal: AtomicI32::new(0),
                graceful: AtomicBool::new(false),
                critical: AtomicUsize::new(0),
                tx,
            }),
            rx,
        }
    }

    /// From now on a signal is reported to the work in progress instead of ending the process.
    pub fn graceful(&self) {
        self.inner.graceful.store(true, Ordering::SeqCst);
    }

    /// The signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.inner.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Completes when a signal arrives.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|&s| s != 0).await;
    }

    /// Enter an append: signals wait until the guard is dropped.
    pub fn critical(&self) -> Critical<'_> {
        self.inner.critical.fetch_add(1, Ordering::SeqCst);
        Critical(self)
    }
}

/// The exit code for a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
pub fn exit_code(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(130)
}

/// The signal's name.
pub fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
