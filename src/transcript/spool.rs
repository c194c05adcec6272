//! Standard input, spooled to an unnamed temporary file so that it can be read back at random
//! like any transcript file. The copy is bounded twice while it is read: by a byte limit (what a
//! person expects a transcript on a pipe to be at most) and by the free space of the temporary
//! directory's filesystem, of which it always leaves [`RESERVE`] to other programs. Either bound
//! stops the copy before the bytes over it are written; the file has no name, so nothing is left
//! behind on an error, a crash or a kill.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use super::error::TranscriptError;

/// The bound on standard input when none is set: 1 GiB.
pub const DEFAULT_STDIN_LIMIT: u64 = 1 << 30;

/// Free space the spool leaves on its filesystem: a full disk tears other programs' writes.
pub const RESERVE: u64 = 64 << 20;

/// Bytes copied at a time (and between two looks at the free space).
const CHUNK: usize = 256 << 10;

/// How standard input is spooled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdinOptions {
    /// The most bytes read from standard input; `Err`: the setting's value is not a size (the
    /// message says which setting and why), reported when standard input is read.
    pub limit: Result<u64, String>,
    /// The temporary directory (`None`: the system's).
    pub dir: Option<PathBuf>,
}

impl Default for StdinOptions {
    fn default() -> Self {
        StdinOptions {
            limit: Ok(DEFAULT_STDIN_LIMIT),
            dir: None,
        }
    }
}

/// The free bytes an unprivileged writer may still use on `file`'s filesystem (`None`: the
/// filesystem does not say).
fn free_bytes(file: &File) -> Option<u64> {
    let st = rustix::fs::fstatvfs(file).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize.max(1)))
}

/// Fill `buf` from `input` (until full or the end); the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Copy `input` to an unnamed temporary file, rewound: an error as soon as a bound is passed,
/// before what passes it is written.
pub fn spool(input: &mut impl Read, opts: &StdinOptions) -> Result<File, TranscriptError> {
    spool_with(input, opts, free_bytes)
}

/// [`spool`], with the free space as `free` says.
fn spool_with(
    input: &mut impl Read,
    opts: &StdinOptions,
    free: impl Fn(&File) -> Option<u64>,
) -> Result<File, TranscriptError> {
    let limit = opts
        .limit
        .clone()
        .map_err(|message| TranscriptError::StdinSetting { message })?;
    let dir = opts.dir.as_ref().map_or_else(
        || "the temporary directory".to_string(),
        |d| format!("`{}`", d.display()),
    );
    let read_err = |source| TranscriptError::Open {
        path: PathBuf::from("<stdin>"),
        source,
    };
    let spool_err = |source| TranscriptError::Spool {
        dir: dir.clone(),
        source,
    };
    let mut file = match &opts.dir {
        Some(d) => tempfile::tempfile_in(d),
        None => tempfile::tempfile(),
    }
    .map_err(spool_err)?;
    let mut buf = vec![0u8; CHUNK];
    let mut total: u64 = 0;
    loop {
        // A signal (Ctrl-C, `timeout`) stops the copy: nothing of it is kept.
        if let Some(signal) = crate::interrupt::received_by_process() {
            return Err(TranscriptError::StdinInterrupted { signal });
        }
        // One byte past the bound is enough to know the input passes it.
        let room = (limit - total).saturating_add(1).min(CHUNK as u64) as usize;
        let n = fill(input, &mut buf[..room]).map_err(read_err)?;
        if n == 0 {
            break;
        }
        if total + n as u64 > limit {
            return Err(TranscriptError::StdinTooLarge { limit });
        }
        if let Some(free) = free(&file)
            && free < n as u64 + RESERVE
        {
            return Err(TranscriptError::StdinNoSpace {
                dir: dir.clone(),
                read: total + n as u64,
                free,
                reserve: RESERVE,
            });
        }
        file.write_all(&buf[..n]).map_err(spool_err)?;
        total += n as u64;
    }
    file.rewind().map_err(spool_err)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(limit: u64) -> StdinOptions {
        StdinOptions {
            limit: Ok(limit),
            dir: None,
        }
    }

    #[test]
    fn under_and_at_the_bound_is_copied_whole() {
        for len in [0usize, 1, 999, 1000] {
            let data = vec![b'x'; len];
            let mut f = spool(&mut &data[..], &opts(1000)).unwrap();
            let mut back = Vec::new();
            f.read_to_end(&mut back).unwrap();
            assert_eq!(back, data);
        }
    }

    #[test]
    fn over_the_bound_stops_at_once() {
        // An endless input: the copy stops after reading one chunk at most past the bound.
        let mut endless = std::io::repeat(b'a').take(u64::MAX);
        let e = spool(&mut endless, &opts(1000)).unwrap_err();
        assert!(
            matches!(e, TranscriptError::StdinTooLarge { limit: 1000 }),
            "{e}"
        );
        assert_eq!(u64::MAX - endless.limit(), 1001);
        let e = spool(&mut &[b'x'; 1001][..], &opts(1000)).unwrap_err();
        assert!(e.to_string().contains("1000 bytes"), "{e}");
    }

    #[test]
    fn the_spool_leaves_the_reserve_free() {
        // The filesystem has room for the reserve and 100 bytes more: 100 bytes are copied,
        // 101 are refused, before the 101st is written.
        let free = |_: &File| Some(RESERVE + 100);
        assert!(spool_with(&mut &[b'x'; 100][..], &opts(1 << 30), free).is_ok());
        let e = spool_with(&mut &[b'x'; 101][..], &opts(1 << 30), free).unwrap_err();
        assert!(
            matches!(e, TranscriptError::StdinNoSpace { read: 101, .. }),
            "{e}"
        );
        assert!(
            e.to_string().contains("64 MiB free for other programs"),
            "{e}"
        );
        // A filesystem that does not say how much is free is written to.
        assert!(spool_with(&mut &[b'x'; 101][..], &opts(1 << 30), |_: &File| None).is_ok());
    }

    #[test]
    fn a_bad_setting_is_reported_when_stdin_is_read() {
        let o = StdinOptions {
            limit: Err("MF_STDIN_LIMIT=x is not a size".into()),
            dir: None,
        };
        let e = spool(&mut &b"{}"[..], &o).unwrap_err();
        assert!(e.to_string().contains("MF_STDIN_LIMIT=x"), "{e}");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(crate::text::human_bytes(1 << 30), "1 GiB");
        assert_eq!(crate::text::human_bytes(1000), "1000 bytes");
        assert_eq!(crate::text::human_bytes(1536), "1.5 KiB");
    }
}
