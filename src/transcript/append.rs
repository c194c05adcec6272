//! Appending to a transcript: opened for appending before anything is paid for, held under an
//! exclusive lock while mf plans, calls and writes, and written as whole lines in one `write`,
//! only when the file ends at a line boundary at that instant; synced; checked after. The lines
//! of one append to an agent's session are tagged as one set (`wire::SetTag`): a crash can cut
//! the write anywhere, and a reader counts a set only when all of it is there and whole.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::wire::MF_PREFIX;
use super::{ReadOptions, Source, Transcript, TranscriptError, check_regular};

/// A transcript opened for appending (and, once `lock` succeeds, locked).
#[derive(Debug)]
pub struct Locked {
    file: File,
    path: PathBuf,
}

/// Open `path` for reading and appending: a read-only file, a read-only mount or an immutable
/// file fails here, before any summarizer is paid. Only regular files are opened.
pub fn open_for_append(path: &Path) -> Result<Locked, TranscriptError> {
    check_regular(path)?;
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TranscriptError::Open {
                path: path.to_path_buf(),
                source,
            },
            _ => TranscriptError::NotWritable {
                path: path.to_path_buf(),
                source,
            },
        })?;
    // Checked again on the open file: the path may have changed between the two.
    Source::from_file(
        path,
        file.try_clone().map_err(|source| TranscriptError::Open {
            path: path.to_path_buf(),
            source,
        })?,
    )?;
    Ok(Locked {
        file,
        path: path.to_path_buf(),
    })
}

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Appended {
    /// Bytes written.
    pub bytes: u64,
    /// Byte offset the lines begin at.
    pub at: u64,
    /// A newline was written first to end a complete last line that had none.
    pub ended_last_line: bool,
    /// A newline was written first to close a line mf began earlier and did not finish.
    pub closed_torn_mf: bool,
    /// Another program wrote between mf's check of the file's end and mf's write: mf's lines
    /// are not where they were meant to be (reading recovers both).
    pub interleaved: bool,
}

impl Locked {
    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read the file through this handle (as it is now, under the lock when it is held).
    pub fn read(&self, opts: &ReadOptions) -> Result<Transcript, TranscriptError> {
        let file = self
            .file
            .try_clone()
            .map_err(|source| TranscriptError::Open {
                path: self.path.clone(),
                source,
            })?;
        super::read_source(Source::from_file(&self.path, file)?, opts)
    }

    /// Try once to take the exclusive lock. `Ok(false)`: another process holds it.
    pub fn try_lock(&self) -> Result<bool, TranscriptError> {
        match self.file.try_lock() {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(source)) => {
                // Filesystems without locks (some network mounts) say "unsupported": carry on
                // unlocked rather than refuse, as cargo does.
                if source.kind() == std::io::ErrorKind::Unsupported {
                    Ok(true)
                } else {
                    Err(TranscriptError::Lock {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
    }

    /// Take the lock, waiting for it.
    pub fn lock(&self) -> Result<(), TranscriptError> {
        match self.file.lock() {
            Ok(()) => Ok(()),
            Err(source) if source.kind() == std::io::ErrorKind::Unsupported => Ok(()),
            Err(source) => Err(TranscriptError::Lock {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// The file must still be the one read: same device and inode, at the same path, at least
    /// as long as what was read.
    pub fn check_same(&self, t: &Transcript) -> Result<u64, TranscriptError> {
        let changed = |what: &str| TranscriptError::Changed {
            path: self.path.clone(),
            what: what.into(),
        };
        let io = |source| TranscriptError::Open {
            path: self.path.clone(),
            source,
        };
        let meta = self.file.metadata().map_err(io)?;
        if t.identity != (0, 0) && (meta.dev(), meta.ino()) != t.identity {
            return Err(changed("it was replaced by another file"));
        }
        match std::fs::metadata(&self.path) {
            Ok(m) if (m.dev(), m.ino()) == (meta.dev(), meta.ino()) => {}
            _ => return Err(changed("it was moved or replaced")),
        }
        if meta.len() < t.len {
            return Err(changed("it is shorter than when mf read it"));
        }
        Ok(meta.len())
    }

    /// Bytes after the last newline of the first `size` bytes.
    fn tail_bytes(&self, size: u64) -> std::io::Result<Vec<u8>> {
        let mut tail: Vec<u8> = Vec::new();
        let mut end = size;
        while end > 0 {
            let start = end.saturating_sub(64 * 1024);
            let mut buf = vec![0u8; (end - start) as usize];
            self.file.read_exact_at(&mut buf, start)?;
            if let Some(p) = memchr::memrchr(b'\n', &buf) {
                buf.drain(..=p);
                buf.extend_from_slice(&tail);
                return Ok(buf);
            }
            buf.extend_from_slice(&tail);
            tail = buf;
            end = start;
        }
        Ok(tail)
    }

    /// Append `lines` (each without a newline) as whole lines in one write, only when the file
    /// ends at a line boundary at that instant. A complete last line without a newline, or a
    /// line mf began and did not finish, is ended with a newline first; a line another program
    /// is still writing is waited for, up to `wait`, then refused with nothing written.
    pub fn append(
        &mut self,
        t: &Transcript,
        lines: &[String],
        wait: Duration,
    ) -> Result<Appended, TranscriptError> {
        let io = |source| TranscriptError::Write {
            path: self.path.clone(),
            source,
        };
        let mut out = Appended::default();
        let started = Instant::now();
        let (size, prefix) = loop {
            let size = self.check_same(t)?;
            let tail = self.tail_bytes(size).map_err(io)?;
            let body = tail.strip_suffix(b"\r").unwrap_or(&tail);
            if tail.is_empty() {
                break (size, "");
            }
            if body.iter().all(u8::is_ascii_whitespace)
                || serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
            {
                out.ended_last_line = true;
                break (size, "\n");
            }
            if body.starts_with(MF_PREFIX) {
                out.closed_torn_mf = true;
                break (size, "\n");
            }
            if started.elapsed() >= wait {
                return Err(TranscriptError::MidLine {
                    path: self.path.clone(),
                    bytes: tail.len() as u64,
                    waited_ms: wait.as_millis() as u64,
                });
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let mut tagged;
        let mut lines = lines;
        if t.format.is_agent() && lines.len() > 1 {
            tagged = lines.to_vec();
            super::wire::tag_set(&mut tagged, &format!("{:08x}", fastrand::u32(..)));
            lines = &tagged;
        }
        let mut block = Vec::with_capacity(lines.iter().map(|l| l.len() + 40).sum::<usize>() + 1);
        block.extend_from_slice(prefix.as_bytes());
        for line in lines {
            debug_assert!(!line.contains('\n'));
            block.extend_from_slice(line.as_bytes());
            block.push(b'\n');
        }
        // One write for the whole block, so no other appender can land inside it.
        let written = match self.file.write(&block) {
            Ok(n) if n == block.len() => Ok(()),
            Ok(n) => self.file.write_all(&block[n..]),
            Err(e) => Err(e),
        }
        .and_then(|()| self.file.sync_data());
        if let Err(source) = written {
            // Take back what was written, if nothing else was written after it.
            if let Ok(meta) = self.file.metadata()
                && meta.len() > size
                && meta.len() <= size + block.len() as u64
            {
                let mut check = vec![0u8; (meta.len() - size) as usize];
                if self.file.read_exact_at(&mut check, size).is_ok() && block.starts_with(&check) {
                    let _ = self.file.set_len(size);
                    let _ = self.file.sync_data();
                }
            }
            return Err(io(source));
        }
        out.bytes = block.len() as u64;
        out.at = size;
        let mut check = vec![0u8; block.len()];
        out.interleaved = !(self.file.read_exact_at(&mut check, size).is_ok() && check == block);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{ReadOptions, read};

    fn setup(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, content).unwrap();
        (dir, p)
    }

    #[test]
    fn appends_whole_lines_and_ends_an_unterminated_line_first() {
        let (_d, p) = setup(b"{\"role\":\"user\",\"content\":\"a\"}");
        let t = read(&p, &ReadOptions::default()).unwrap();
        let mut l = open_for_append(&p).unwrap();
        l.lock().unwrap();
        let a = l
            .append(&t, &["{\"x\":1}".into()], Duration::from_millis(10))
            .unwrap();
        assert!(a.ended_last_line && !a.interleaved);
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"{\"role\":\"user\",\"content\":\"a\"}\n{\"x\":1}\n"
        );
    }

    #[test]
    fn a_line_being_written_is_waited_for_then_refused() {
        let (_d, p) = setup(b"{\"role\":\"user\",\"content\":\"a\"}\n");
        let t = read(&p, &ReadOptions::default()).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"role\":\"us")
            .unwrap();
        let before = std::fs::read(&p).unwrap();
        let mut l = open_for_append(&p).unwrap();
        let e = l
            .append(&t, &["{\"x\":1}".into()], Duration::from_millis(30))
            .unwrap_err();
        assert!(
            matches!(e, TranscriptError::MidLine { bytes: 11, .. }),
            "{e}"
        );
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }

    #[test]
    fn mfs_own_torn_line_is_closed_not_extended() {
        let (_d, p) =
            setup(b"{\"role\":\"user\",\"content\":\"a\"}\n{\"mf\":{\"v\":2,\"kind\":\"sum");
        let t = read(&p, &ReadOptions::default()).unwrap();
        assert!(matches!(t.tail, super::super::Tail::Torn { mf: true, .. }));
        let mut l = open_for_append(&p).unwrap();
        let a = l
            .append(&t, &["{\"x\":1}".into()], Duration::from_millis(10))
            .unwrap();
        assert!(a.closed_torn_mf);
        assert!(
            std::fs::read(&p)
                .unwrap()
                .ends_with(b"\"kind\":\"sum\n{\"x\":1}\n")
        );
    }

    #[test]
    fn a_read_only_file_is_refused_at_open() {
        let (_d, p) = setup(b"{\"role\":\"user\",\"content\":\"a\"}\n");
        let mut perms = std::fs::metadata(&p).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&p, perms).unwrap();
        // root can write anyway; only check the error kind when the open fails.
        if let Err(e) = open_for_append(&p) {
            assert!(matches!(e, TranscriptError::NotWritable { .. }), "{e}");
        }
    }
}
