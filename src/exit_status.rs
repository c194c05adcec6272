//! `ExitStatus`: the documented exit codes; only `main` turns one into a process exit.

/// How mf ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done, including "nothing to fold", a declined fold and a closed output pipe.
    Success,
    /// 1: bad input (malformed, torn, missing file) or a refused operation.
    Failure,
    /// 2: usage error (bad flags) or an unexpected failure.
    Error,
    /// 3: not compacted — the summarizer failed or could not be reached (0 with `--allow-degraded`).
    NotCompacted,
    /// 75: an agent session in use (the agent is running it), or a provider batch still working
    /// when `--batch`'s wait ended; nothing written, try again later (`EX_TEMPFAIL` of
    /// sysexits.h).
    Busy,
    /// 128 + the signal: interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
    Interrupted(i32),
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::NotCompacted => 3,
            ExitStatus::Busy => 75,
            ExitStatus::Interrupted(sig) => crate::interrupt::exit_code(sig),
        }
    }

    /// The more serious of two statuses (an interruption beats everything, then usage errors,
    /// then refusals, then a session in use, then an uncompacted file): what a retry cannot mend
    /// beats what it can.
    pub fn worst(self, other: ExitStatus) -> ExitStatus {
        let rank = |s: ExitStatus| match s {
            ExitStatus::Success => 0,
            ExitStatus::NotCompacted => 1,
            ExitStatus::Busy => 2,
            ExitStatus::Failure => 3,
            ExitStatus::Error => 4,
            ExitStatus::Interrupted(_) => 5,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExitStatus;

    #[test]
    fn codes_are_documented_values() {
        assert_eq!(ExitStatus::Success.code(), 0);
        assert_eq!(ExitStatus::Failure.code(), 1);
        assert_eq!(ExitStatus::Error.code(), 2);
        assert_eq!(ExitStatus::NotCompacted.code(), 3);
        assert_eq!(ExitStatus::Busy.code(), 75);
        assert_eq!(ExitStatus::Interrupted(2).code(), 130);
        assert_eq!(ExitStatus::Interrupted(15).code(), 143);
        assert_eq!(
            ExitStatus::Failure.worst(ExitStatus::NotCompacted),
            ExitStatus::Failure
        );
        assert_eq!(
            ExitStatus::Busy.worst(ExitStatus::Failure),
            ExitStatus::Failure
        );
        assert_eq!(
            ExitStatus::NotCompacted.worst(ExitStatus::Busy),
            ExitStatus::Busy
        );
    }
}
