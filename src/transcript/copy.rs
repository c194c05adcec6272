//! `--output`: the input's bytes plus mf's new lines, written to another file that appears whole
//! or not at all. The file is built unnamed (`O_TMPFILE`, so even a killed mf leaves nothing
//! behind) and linked into place only if the name is free; with `--force` it replaces the name
//! atomically. Where unnamed files are not supported, a hidden temporary file is used, removed
//! on every exit mf controls, and swept on the next run if mf was killed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Tail, Transcript, TranscriptError};

/// Where the compacted copy of one input goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// Standard output: the input's bytes, then the new lines.
    Stdout,
    File(PathBuf),
}

fn werr(path: &Path) -> impl Fn(std::io::Error) -> TranscriptError + '_ {
    move |source| TranscriptError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// The input's bytes as read, ended by a newline if its last line has none, then `lines`.
fn write_body(t: &Transcript, lines: &[String], out: &mut impl Write) -> std::io::Result<()> {
    let mut src = t.file.try_clone()?;
    src.seek(SeekFrom::Start(0))?;
    let copied = std::io::copy(&mut (&mut src).take(t.len), out)?;
    if copied != t.len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the input became shorter while it was copied",
        ));
    }
    let unterminated = matches!(t.tail, Tail::Unterminated | Tail::Torn { mf: true, .. });
    if unterminated && !lines.is_empty() {
        out.write_all(b"\n")?;
    }
    for line in lines {
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// The input's bytes plus `lines` in an unnamed temporary file, read back as a transcript: the
/// copy as it stands after one write, for a second write that covers what the first wrote
/// (`--output` with nested summaries). Its path is the input's, for messages; it is never
/// written to again.
pub fn stage(
    t: &Transcript,
    lines: &[String],
    opts: &super::ReadOptions,
) -> Result<Transcript, TranscriptError> {
    // The staged copy is not the file at its path: no checkpoint is read or kept for it.
    let opts = super::ReadOptions {
        cache: None,
        ..opts.clone()
    };
    let mut f = tempfile::tempfile().map_err(werr(&t.path))?;
    write_body(t, lines, &mut f).map_err(werr(&t.path))?;
    super::read_source(
        super::Source {
            path: t.path.clone(),
            file: f,
            identity: t.identity,
        },
        &opts,
    )
}

/// The transcript's first `upto` bytes (the file as it stood when it was that long), written to
/// a new file `dest` that must not exist yet: a private copy for `mf eval` to fold, never the
/// input itself.
pub fn write_prefix(t: &Transcript, upto: u64, dest: &Path) -> Result<(), TranscriptError> {
    let upto = upto.min(t.len);
    let copy = || -> std::io::Result<()> {
        let mut src = t.file.try_clone()?;
        src.seek(SeekFrom::Start(0))?;
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dest)?;
        let copied = std::io::copy(&mut (&mut src).take(upto), &mut out)?;
        if copied != upto {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the input became shorter while it was copied",
            ));
        }
        out.flush()
    };
    copy().map_err(werr(dest))
}

/// Write the copy. Without `force`, an existing `dest` is never replaced.
pub fn write_copy(
    target: &OutputTarget,
    t: &Transcript,
    lines: &[String],
    force: bool,
) -> Result<(), TranscriptError> {
    let dest = match target {
        OutputTarget::Stdout => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            return write_body(t, lines, &mut out).map_err(werr(Path::new("<stdout>")));
        }
        OutputTarget::File(p) => p.as_path(),
    };
    t.check_tail()?;
    // An existing device or FIFO (`-o /dev/null`, `-o /dev/stdout`, a named pipe) is written
    // into, as a shell redirection would, and never replaced: renaming over it would put a
    // regular file where `/dev/null` was. A block device is never written.
    if let Ok(m) = std::fs::metadata(dest) {
        use std::os::unix::fs::FileTypeExt;
        let ft = m.file_type();
        if ft.is_block_device() || ft.is_socket() {
            return Err(TranscriptError::NotRegular {
                path: dest.to_path_buf(),
                kind: if ft.is_socket() {
                    "a socket"
                } else {
                    "a block device"
                },
            });
        }
        if ft.is_char_device() || ft.is_fifo() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dest)
                .map_err(werr(dest))?;
            let mut out = std::io::BufWriter::new(f);
            return write_body(t, lines, &mut out).map_err(werr(dest));
        }
    }
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mode = std::fs::metadata(&t.path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o644);
    match unnamed(&dir, mode) {
        Ok(mut f) => {
            write_body(t, lines, &mut f)
                .and_then(|()| f.sync_all())
                .map_err(werr(dest))?;
            link_into_place(&f, &dir, dest, force)?;
        }
        Err(_) => {
            sweep(&dir, dest);
            let name = dest
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "out".into());
            let mut tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}.mf-{}-", std::process::id()))
                .suffix(".tmp")
                .tempfile_in(&dir)
                .map_err(werr(dest))?;
            write_body(t, lines, tmp.as_file_mut())
                .and_then(|()| tmp.as_file().sync_all())
                .and_then(|()| {
                    tmp.as_file()
                        .set_permissions(std::fs::Permissions::from_mode(mode))
                })
                .map_err(werr(dest))?;
            if force {
                tmp.persist(dest).map_err(|e| werr(dest)(e.error))?;
            } else {
                tmp.persist_noclobber(dest)
                    .map_err(|e| exists_or(dest, e.error))?;
            }
        }
    }
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn exists_or(dest: &Path, e: std::io::Error) -> TranscriptError {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        TranscriptError::Changed {
            path: dest.to_path_buf(),
            what: "the output file appeared while mf was working; it was not replaced".into(),
        }
    } else {
        werr(dest)(e)
    }
}

/// An unnamed file in `dir` (`O_TMPFILE`): it vanishes if mf dies before linking it.
fn unnamed(dir: &Path, mode: u32) -> std::io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    Ok(File::from(fd))
}

/// Give the unnamed file its name: only if the name is free, or (with `force`) replacing it.
fn link_into_place(f: &File, dir: &Path, dest: &Path, force: bool) -> Result<(), TranscriptError> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", f.as_raw_fd());
    let link =
        |to: &Path| rustix::fs::linkat(CWD, proc_path.as_str(), CWD, to, AtFlags::SYMLINK_FOLLOW);
    if !force {
        return link(dest).map_err(|e| exists_or(dest, e.into()));
    }
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.mf-{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    link(&tmp).map_err(|e| werr(dest)(e.into()))?;
    std::fs::rename(&tmp, dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        werr(dest)(e)
    })
}

/// Remove hidden temporary files a killed mf left for `dest` (their process is gone).
fn sweep(dir: &Path, dest: &Path) {
    let Some(name) = dest.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.mf-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        if !file.ends_with(".tmp") {
            continue;
        }
        let pid: Option<u32> = rest.split(['-', '.']).next().and_then(|p| p.parse().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
