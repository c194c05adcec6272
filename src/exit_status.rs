//! `ExitStatus`: the documented exit codes; only `main` turns one into a process exit.

/// How mf ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done, including "nothing to fold" and a closed output pipe.
    Success,
    /// 1: bad input (malformed, torn, missing file) or a refused operation.
    Failure,
    /// 2: usage error or unexpected failure.
    Error,
    /// 130: interrupted (Ctrl-C); nothing was written for the span in flight.
    Interrupted,
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Interrupted => 130,
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
        assert_eq!(ExitStatus::Interrupted.code(), 130);
    }
}
