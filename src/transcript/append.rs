//! Appending under an exclusive lock: whole lines, one write, synced; and `--output` copies.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{Tail, Transcript, TranscriptError, parse};

/// A transcript file held under an exclusive lock. The lock is released on drop.
#[derive(Debug)]
pub struct Locked {
    file: File,
    path: PathBuf,
}

/// The outcome of one attempt at the lock.
#[derive(Debug)]
pub enum LockAttempt {
    Locked(Locked),
    /// Another process holds it; try again later.
    Busy,
}

/// Open `path` for appending and try once to take an exclusive lock on it, without waiting.
pub fn try_lock(path: &Path) -> Result<LockAttempt, TranscriptError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|source| TranscriptError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(LockAttempt::Busy),
        Err(std::fs::TryLockError::Error(source)) => {
            // Filesystems without locks (some network mounts) report "unsupported": carry on
            // unlocked rather than refuse, as cargo does.
            if !matches!(source.kind(), std::io::ErrorKind::Unsupported) {
                return Err(TranscriptError::Lock {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(LockAttempt::Locked(Locked {
        file,
        path: path.to_path_buf(),
    }))
}

/// Open `path` for appending and take an exclusive lock on it, blocking. When another process
/// holds the lock, `on_wait` is called once first.
pub fn lock(path: &Path, on_wait: impl FnOnce(&Path)) -> Result<Locked, TranscriptError> {
    match try_lock(path)? {
        LockAttempt::Locked(l) => Ok(l),
        LockAttempt::Busy => {
            on_wait(path);
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .open(path)
                .map_err(|source| TranscriptError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
            file.lock().map_err(|source| TranscriptError::Lock {
                path: path.to_path_buf(),
                source,
            })?;
            Ok(Locked {
                file,
                path: path.to_path_buf(),
            })
        }
    }
}

impl Locked {
    /// The file's bytes as they are now, under the lock.
    pub fn read_bytes(&mut self) -> Result<Vec<u8>, TranscriptError> {
        let mut bytes = Vec::new();
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_end(&mut bytes))
            .map_err(|source| TranscriptError::Open {
                path: self.path.clone(),
                source,
            })?;
        Ok(bytes)
    }

    /// Read and parse the file as it is now, under the lock.
    pub fn reread(&mut self) -> Result<(Vec<u8>, Transcript), TranscriptError> {
        let bytes = self.read_bytes()?;
        let t = parse(&self.path, &bytes)?;
        Ok((bytes, t))
    }

    /// Append whole lines in one write and sync. `current` is the file as just reread under this
    /// lock: a torn tail is refused; a complete last line without a newline gets one first.
    pub fn append(
        &mut self,
        current: &Transcript,
        lines: &[String],
    ) -> Result<u64, TranscriptError> {
        current.check_tail()?;
        let mut buf = Vec::new();
        if current.tail == Tail::Unterminated {
            buf.push(b'\n');
        }
        for line in lines {
            debug_assert!(!line.contains('\n'));
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
        }
        let before = current.snapshot.len;
        let write = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        if let Err(source) = write {
            // Take back a partial line: safe, we hold the lock and know the length before.
            if self.file.metadata().is_ok_and(|m| m.len() > before) {
                let _ = self.file.set_len(before);
                let _ = self.file.sync_data();
            }
            return Err(TranscriptError::Write {
                path: self.path.clone(),
                source,
            });
        }
        Ok(buf.len() as u64)
    }
}

/// Write `input` plus the new lines to `dest` (for `--output`): a temp file beside it, synced,
/// then renamed over it, so `dest` is never seen half written.
pub fn write_copy(
    dest: &Path,
    input: &Transcript,
    input_bytes: &[u8],
    lines: &[String],
) -> Result<(), TranscriptError> {
    let werr = |source| TranscriptError::Write {
        path: dest.to_path_buf(),
        source,
    };
    input.check_tail()?;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.mf-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(input_bytes)?;
        if input.tail == Tail::Unterminated {
            f.write_all(b"\n")?;
        }
        for line in lines {
            f.write_all(line.as_bytes())?;
            f.write_all(b"\n")?;
        }
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(&input.path) {
            let _ = std::fs::set_permissions(&tmp, meta.permissions());
        }
        std::fs::rename(&tmp, dest)?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(werr)
}
