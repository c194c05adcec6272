//! Writing files mf owns without following a link someone else planted: a new file is created
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` (an existing name, a symlink included, is never opened),
//! a replaced file is a new temporary file in the same directory renamed over it, and a
//! directory mf keeps its own files in (its cache, under a directory others may write, like a
//! 1777 `/tmp`) must be a real directory of this user's that nobody else can write, as ssh
//! requires of `~/.ssh`. A leaf: no other module of mf is imported.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

fn nofollow() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

/// A new file at `path` (mode `mode`), opened for writing; fails when any name is there, a
/// symlink included (the link is not followed).
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(nofollow())
        .open(path)
}

/// A file opened for reading when `path` itself is a regular file (a final symlink is not
/// followed) owned by this user and writable by no one else.
pub fn open_own(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nofollow())
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || !private(&m) {
        return Err(io::Error::other(format!(
            "{} is not a file of this user's that only this user can write",
            path.display()
        )));
    }
    Ok(f)
}

/// `bytes` into `path` in one step: a new temporary file in `path`'s directory (created
/// exclusively), synced, given `mode` (or the mode of the regular file it replaces), renamed
/// over `path`. A symlink at `path` is replaced, never written through: callers that mean to
/// edit a link's target pass the target.
pub fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".mf-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    let mode = mode.or_else(|| {
        fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.permissions().mode())
    });
    if let Some(mode) = mode {
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(mode & 0o7777))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Like [`replace`], for a file of mf's own (a backup, a checkpoint, hook state): a symlink at
/// `path` is refused, named, instead of replaced.
pub fn replace_own(path: &Path, bytes: &[u8]) -> io::Result<()> {
    refuse_link(path)?;
    replace(path, bytes, Some(0o600))
}

/// An error when `path` is a symlink (naming it and what to do).
pub fn refuse_link(path: &Path) -> io::Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::other(format!(
            "{} is a symlink where mf keeps a file of its own; mf does not write through it: \
remove the link (or move it away) and run this again",
            path.display()
        )));
    }
    Ok(())
}

/// Whether `path` names a descriptor of this process (`/dev/fd/3`, `/dev/stdout`,
/// `/proc/self/fd/3`): a link the shell made for the user, followed on purpose.
fn is_descriptor(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.starts_with("/dev/fd/")
        || s.starts_with("/proc/self/fd/")
        || s.starts_with("/proc/thread-self/fd/")
        || matches!(&*s, "/dev/stdout" | "/dev/stderr")
}

/// Why an output file the user named (`--record PATH`) is not written, if it is not: a symlink
/// to a regular file (a repository can ship `out/records.jsonl` as a link to `~/.bashrc`), or a
/// dangling one. A link to a device or pipe (`/dev/null`) and a descriptor path are followed.
pub fn output_refusal(path: &Path) -> Option<String> {
    let m = fs::symlink_metadata(path).ok()?;
    if !m.file_type().is_symlink() || is_descriptor(path) {
        return None;
    }
    match fs::metadata(path) {
        Ok(t) if !t.is_file() => None,
        Ok(_) => Some(format!(
            "{} is a symlink to a file; mf does not write its output through a link: name the \
file itself, or remove the link",
            path.display()
        )),
        Err(e) => Some(format!(
            "{} is a symlink to nothing mf can open ({e}); name a file itself",
            path.display()
        )),
    }
}

/// An output file the user named, created or truncated, opened for writing; refused (see
/// [`output_refusal`]) when it is a symlink to a regular file. Not through a link planted after
/// the check either: a path that is not a link is opened with `O_NOFOLLOW`.
pub fn create_output(path: &Path) -> io::Result<File> {
    if let Some(why) = output_refusal(path) {
        return Err(io::Error::other(why));
    }
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true).mode(0o644);
    let linked = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !linked {
        o.custom_flags(nofollow());
    }
    o.open(path)
}

fn private(m: &fs::Metadata) -> bool {
    m.uid() == rustix::process::geteuid().as_raw() && m.mode() & 0o022 == 0
}

/// Make `dir` mf's own: the parents it lacks are created (mode `0700`), and its last `own`
/// components (the directories mf names, e.g. `mf/hooks` under a cache directory) must each be
/// a real directory (not a symlink) of this user's that no one else can write — else refused,
/// naming the one that is not. A `mf` directory or link another user planted in a shared
/// (1777) cache directory is never followed.
pub fn private_dir(dir: &Path, own: usize) -> io::Result<()> {
    let mine: Vec<&Path> = dir
        .ancestors()
        .take(own.max(1))
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    let made = |d: &Path, r: io::Result<()>| match r {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(io::Error::new(
            e.kind(),
            format!("cannot create {}: {e}", d.display()),
        )),
        _ => Ok(()),
    };
    if let Some(base) = mine
        .last()
        .and_then(|d| d.parent())
        .filter(|b| !b.as_os_str().is_empty())
    {
        made(
            base,
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(base),
        )?;
    }
    // Top down, each checked before the next is made in it.
    for d in mine.into_iter().rev() {
        made(d, fs::DirBuilder::new().mode(0o700).create(d))?;
        check_own(d)?;
    }
    Ok(())
}

/// Whether `dir`'s last `own` components are mf's own (as [`private_dir`] requires), without
/// creating anything.
pub fn is_private_dir(dir: &Path, own: usize) -> bool {
    dir.ancestors()
        .take(own.max(1))
        .filter(|d| !d.as_os_str().is_empty())
        .all(|d| check_own(d).is_ok())
}

fn check_own(d: &Path) -> io::Result<()> {
    let m = fs::symlink_metadata(d)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", d.display())))?;
    let why = if m.file_type().is_symlink() {
        Some("is a symlink")
    } else if !m.is_dir() {
        Some("is not a directory")
    } else if m.uid() != rustix::process::geteuid().as_raw() {
        Some("belongs to another user")
    } else if m.mode() & 0o022 != 0 {
        Some("can be written by other users")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(io::Error::other(format!(
            "{} {why}: mf keeps its own files only in a directory of this user's that no one else \
can write; remove or move it (or set MF_CACHE_DIR to a private directory) and run this again",
            d.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_link_to_a_file_is_refused_a_device_or_descriptor_is_not() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("bashrc");
        fs::write(&victim, "keep\n").unwrap();
        let link = d.path().join("records.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(output_refusal(&link).unwrap().contains("symlink to a file"));
        assert!(create_output(&link).is_err());
        assert_eq!(fs::read(&victim).unwrap(), b"keep\n");
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(create_output(&dangling).is_err());
        assert!(!d.path().join("nowhere").exists());
        let null = d.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        assert_eq!(output_refusal(&null), None);
        create_output(&null).unwrap().write_all(b"x").unwrap();
        assert_eq!(output_refusal(Path::new("/dev/stdout")), None);
        let plain = d.path().join("plain.jsonl");
        create_output(&plain).unwrap().write_all(b"r\n").unwrap();
        assert_eq!(fs::read(&plain).unwrap(), b"r\n");
    }

    #[test]
    fn a_planted_link_is_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        fs::write(&outside, "keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(create_new(&link, 0o600).is_err());
        assert!(replace_own(&link, b"x").is_err());
        assert!(open_own(&link).is_err());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        // A planted `mf` link in a shared directory: refused, the target untouched.
        let target = d.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("mf")).unwrap();
        let err = private_dir(&d.path().join("mf").join("hooks"), 2).unwrap_err();
        assert!(err.to_string().contains("is a symlink"), "{err}");
        assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
        // A fresh one is made private.
        let mine = d.path().join("c").join("mf").join("hooks");
        private_dir(&mine, 2).unwrap();
        assert_eq!(fs::metadata(&mine).unwrap().mode() & 0o777, 0o700);
        replace_own(&mine.join("f"), b"1").unwrap();
        replace_own(&mine.join("f"), b"2").unwrap();
        assert_eq!(fs::read(mine.join("f")).unwrap(), b"2");
    }
}
