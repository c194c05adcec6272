//! `Checkpoint`: what a read learned from a file's prefix — the index so far and the format
//! reader's state — kept in the user cache so that a rerun after the file grew reads only the new
//! bytes.
//!
//! Checkpoints live in a directory of mf's own (`<cache>/mf/checkpoints`, private to the user),
//! each file opening with a header that names mf and the checkpoint format; pruning removes only
//! files there that carry that header and belong to this user — never a file by its name alone.
//!
//! A checkpoint is never trusted blindly. It is used only when all of these hold:
//! - it was written by this very mf binary (the settings module stamps the build), for this
//!   path, for the same file (device, inode, and birth time where the filesystem records one);
//! - the file is at least as long as the prefix, and a hash (xxh3) of every byte of the prefix
//!   is the one saved: an edit anywhere in the prefix, even one that keeps its size, is seen;
//! - its own bytes hash to the hash it was saved with;
//! - sixteen entries picked at random still hash to what they hashed to when read.
//!
//! Nothing here fails a command: a checkpoint that cannot be read, checked or written is simply
//! not used.

use std::fs::{self, File};
use std::io::Write as _;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use super::Format;
use super::build::Build;
use crate::digest::line_hash;
use crate::entry::{Entry, NONE, Role};

/// The first bytes of every checkpoint file: who wrote it, and in which format.
const MAGIC: &[u8] = b"mf checkpoint, format 2\n";
/// Bytes read at a time when hashing the prefix.
const HASH_CHUNK: usize = 1 << 20;
/// Entries re-hashed from the file when a checkpoint is loaded.
const SPOT_CHECKS: usize = 16;
/// Checkpoints kept in the cache directory; the oldest beyond this are removed.
const KEEP: usize = 256;

/// Where checkpoints live and when they are worth writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOptions {
    /// mf's checkpoint directory (`<cache>/mf/checkpoints`): mf's alone, whatever else the
    /// cache directory holds.
    pub dir: PathBuf,
    /// Files shorter than this are not checkpointed (reading them is already fast).
    pub min_bytes: u64,
    /// Identifies the mf build; a checkpoint from another build is not used.
    pub stamp: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    stamp: String,
    format: Format,
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// Birth time in nanoseconds since the epoch, where the filesystem records it.
    born: Option<u128>,
    /// Bytes of the prefix (it ends with a line end).
    offset: u64,
    /// Physical lines in the prefix.
    line: u32,
    fingerprint: u64,
    body_len: u64,
    body_hash: u64,
}

/// The body after the entries: the rest of the index and the reader's state.
#[derive(Serialize)]
struct RestRef<'a, R> {
    build: &'a Build,
    reader: &'a R,
}

#[derive(Deserialize)]
struct Rest<R> {
    build: Build,
    reader: R,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(buf: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *buf.get(*i)?;
        *i += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Entries, densely: each field relative to what the previous entry predicts (the next line,
/// the next byte, the next link), so that a typical entry takes about twenty bytes.
fn encode_entries(entries: &[Entry], out: &mut Vec<u8>) {
    put_varint(out, entries.len() as u64);
    let (mut line, mut next_pos, mut link) = (0u32, 0u64, 0u32);
    for e in entries {
        let present = u8::from(e.more != NONE)
            | (u8::from(e.link != NONE) << 1)
            | (u8::from(e.claim != NONE) << 2);
        out.push(e.role as u8 | (present << 2));
        out.push(e.flags);
        put_varint(out, u64::from(e.line.wrapping_sub(line)));
        put_varint(out, zigzag(e.pos.wrapping_sub(next_pos) as i64));
        put_varint(out, u64::from(e.len));
        put_varint(out, u64::from(e.chars));
        out.extend_from_slice(&e.hash.to_le_bytes());
        out.extend_from_slice(&e.id.to_le_bytes());
        if e.more != NONE {
            put_varint(out, u64::from(e.more));
        }
        if e.link != NONE {
            put_varint(out, u64::from(e.link.wrapping_sub(link)));
            link = e.link.wrapping_add(1);
        }
        if e.claim != NONE {
            put_varint(out, u64::from(e.claim));
        }
        line = e.line;
        next_pos = e.pos + u64::from(e.len) + 1;
    }
}

fn decode_entries(buf: &[u8], i: &mut usize) -> Option<Vec<Entry>> {
    let n = usize::try_from(get_varint(buf, i)?).ok()?;
    // At least 18 bytes an entry: a count beyond that is damage, not a reason to allocate.
    if n > buf.len() / 18 {
        return None;
    }
    let mut entries = Vec::with_capacity(n);
    let (mut line, mut next_pos, mut link) = (0u32, 0u64, 0u32);
    let u32_of = |v: u64| u32::try_from(v).ok();
    for _ in 0..n {
        let head = *buf.get(*i)?;
        let flags = *buf.get(*i + 1)?;
        *i += 2;
        let role = match head & 3 {
            0 => Role::System,
            1 => Role::User,
            2 => Role::Assistant,
            _ => Role::Tool,
        };
        let present = head >> 2;
        line = line.wrapping_add(u32_of(get_varint(buf, i)?)?);
        let pos = next_pos.wrapping_add(unzigzag(get_varint(buf, i)?) as u64);
        let len = u32_of(get_varint(buf, i)?)?;
        let chars = u32_of(get_varint(buf, i)?)?;
        let words = buf.get(*i..*i + 16)?;
        let hash = u64::from_le_bytes(words[..8].try_into().ok()?);
        let id = u64::from_le_bytes(words[8..].try_into().ok()?);
        *i += 16;
        let more = if present & 1 != 0 {
            u32_of(get_varint(buf, i)?)?
        } else {
            NONE
        };
        let this_link = if present & 2 != 0 {
            let l = link.wrapping_add(u32_of(get_varint(buf, i)?)?);
            link = l.wrapping_add(1);
            l
        } else {
            NONE
        };
        let claim = if present & 4 != 0 {
            u32_of(get_varint(buf, i)?)?
        } else {
            NONE
        };
        entries.push(Entry {
            line,
            role,
            flags,
            chars,
            hash,
            id,
            pos,
            len,
            more,
            link: this_link,
            claim,
        });
        next_pos = pos + u64::from(len) + 1;
    }
    Some(entries)
}

/// A checked checkpoint, not yet decoded into a reader's state.
pub struct Found {
    pub format: Format,
    header: Header,
    /// The checkpoint file's bytes; the body starts at `body`.
    bytes: Vec<u8>,
    body: usize,
}

/// A prefix read back from a checkpoint: where to go on from.
pub struct Resumed<R> {
    pub build: Build,
    pub reader: R,
    pub line: u32,
    pub offset: u64,
}

impl Found {
    /// Decode the state for the format's reader, and spot-check entries against the file.
    pub fn decode<R: DeserializeOwned>(self, file: &File) -> Option<Resumed<R>> {
        let bytes = &self.bytes[self.body..];
        let mut i = 0;
        let entries = decode_entries(bytes, &mut i)?;
        let mut body: Rest<R> = postcard::from_bytes(bytes.get(i..)?).ok()?;
        body.build.entries = entries;
        let entries = &body.build.entries;
        let singles = entries.iter().filter(|e| e.more == NONE).count();
        if singles > 0 {
            let mut rng = fastrand::Rng::new();
            for _ in 0..SPOT_CHECKS.min(singles) {
                let e = loop {
                    let e = &entries[rng.usize(..entries.len())];
                    if e.more == NONE {
                        break e;
                    }
                };
                if e.pos + u64::from(e.len) > self.header.offset {
                    return None;
                }
                let mut buf = vec![0; e.len as usize];
                file.read_exact_at(&mut buf, e.pos).ok()?;
                if line_hash(&buf) != e.hash {
                    return None;
                }
            }
        }
        Some(Resumed {
            build: body.build,
            reader: body.reader,
            line: self.header.line,
            offset: self.header.offset,
        })
    }
}

/// The file a checkpoint for `path` is kept in.
fn slot(opts: &CacheOptions, path: &Path) -> PathBuf {
    let key = xxh3_64(path.as_os_str().as_encoded_bytes());
    opts.dir.join(format!("{key:016x}.ckpt"))
}

fn born(meta: &fs::Metadata) -> Option<u128> {
    meta.created()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_nanos())
}

/// A hash of every byte of the file's first `offset` bytes (and of `offset`): no edit of the
/// prefix, of any size, keeps it.
fn fingerprint(file: &File, offset: u64) -> std::io::Result<u64> {
    let mut h = Xxh3::new();
    let mut buf = vec![0; HASH_CHUNK.min(offset as usize)];
    let mut at = 0u64;
    while at < offset {
        let len = (offset - at).min(HASH_CHUNK as u64) as usize;
        file.read_exact_at(&mut buf[..len], at)?;
        h.update(&buf[..len]);
        at += len as u64;
    }
    h.update(&offset.to_le_bytes());
    Ok(h.digest())
}

/// The checkpoint for this file, when there is one that still holds for it.
/// A checkpoint's bytes, only when nobody else could have written them: the file (not a
/// symlink) and its directory belong to this user and are writable by no one else. A checkpoint
/// planted in a shared cache directory could otherwise describe a file's prefix falsely.
fn read_own(dir: &Path, file: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let me = rustix::process::geteuid().as_raw();
    let private = |m: &fs::Metadata| m.uid() == me && m.mode() & 0o022 == 0;
    // `mf/checkpoints` itself, never a link or another user's directory in a shared cache.
    if !crate::own_file::is_private_dir(dir, 2) {
        return None;
    }
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(file)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || !private(&meta) {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

pub fn find(opts: &CacheOptions, path: &Path, file: &File) -> Option<Found> {
    let path = fs::canonicalize(path).ok()?;
    let bytes = read_own(&opts.dir, &slot(opts, &path))?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (header, rest): (Header, &[u8]) = postcard::take_from_bytes(rest).ok()?;
    let meta = file.metadata().ok()?;
    let holds = header.stamp == opts.stamp
        && header.path == path
        && header.dev == meta.dev()
        && header.ino == meta.ino()
        && header.born == born(&meta)
        && header.offset > 0
        && header.offset <= meta.len()
        && header.body_len == rest.len() as u64
        && xxh3_64(rest) == header.body_hash
        && fingerprint(file, header.offset).ok()? == header.fingerprint;
    if !holds {
        return None;
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, header.offset - 1).ok()?;
    if last[0] != b'\n' {
        return None;
    }
    let body = bytes.len() - rest.len();
    Some(Found {
        format: header.format,
        header,
        bytes,
        body,
    })
}

/// What is being saved.
pub struct Prefix<'a, R> {
    pub format: Format,
    pub build: &'a Build,
    pub reader: &'a R,
    pub line: u32,
    pub offset: u64,
}

/// Save a checkpoint of a prefix of `path`. Errors are returned for the caller to ignore.
pub fn save<R: Serialize>(
    opts: &CacheOptions,
    path: &Path,
    file: &File,
    p: Prefix<'_, R>,
) -> std::io::Result<()> {
    let other = std::io::Error::other;
    let path = fs::canonicalize(path)?;
    let meta = file.metadata()?;
    let mut body = Vec::with_capacity(p.build.entries.len() * 24 + (1 << 16));
    encode_entries(&p.build.entries, &mut body);
    let body = postcard::to_extend(
        &RestRef {
            build: p.build,
            reader: p.reader,
        },
        body,
    )
    .map_err(other)?;
    let header = Header {
        stamp: opts.stamp.clone(),
        format: p.format,
        path: path.clone(),
        dev: meta.dev(),
        ino: meta.ino(),
        born: born(&meta),
        offset: p.offset,
        line: p.line,
        fingerprint: fingerprint(file, p.offset)?,
        body_len: body.len() as u64,
        body_hash: xxh3_64(&body),
    };
    let head = postcard::to_stdvec(&header).map_err(other)?;
    // `mf/checkpoints`: never a link or a directory another user planted in a shared cache.
    crate::own_file::private_dir(&opts.dir, 2)?;
    let target = slot(opts, &path);
    let tmp = opts.dir.join(format!(
        ".{}.{}.tmp",
        target
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("ckpt"),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    let mut out = crate::own_file::create_new(&tmp, 0o600)?;
    let written = out
        .write_all(MAGIC)
        .and_then(|()| out.write_all(&head))
        .and_then(|()| out.write_all(&body))
        .and_then(|()| fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    prune(&opts.dir);
    Ok(())
}

/// Whether `path` is a checkpoint this mf wrote: a regular file named like one, owned by this
/// user, that opens with mf's header. Nothing else is ever removed.
fn is_ours(path: &Path) -> bool {
    use std::io::Read as _;
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".ckpt"))
        .is_some_and(|k| k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit()));
    if !named {
        return false;
    }
    let me = rustix::process::geteuid().as_raw();
    let Ok(mut f) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    else {
        return false;
    };
    let Ok(meta) = f.metadata() else { return false };
    let mut head = vec![0u8; MAGIC.len()];
    meta.is_file() && meta.uid() == me && f.read_exact(&mut head).is_ok() && head == MAGIC
}

/// Keep the newest [`KEEP`] checkpoints (of those mf can prove it wrote).
fn prune(dir: &Path) {
    let Ok(read) = fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = read
        .filter_map(Result::ok)
        .filter(|e| is_ours(&e.path()))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= KEEP {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - KEEP] {
        // Checked again just before: only a file that is still ours goes.
        if is_ours(p) {
            let _ = fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_entries(rng: &mut fastrand::Rng, n: usize) -> Vec<Entry> {
        let (mut line, mut pos) = (1u32, 0u64);
        (0..n)
            .map(|_| {
                let len = rng.u32(0..5_000);
                // Mostly the next line at the next byte; sometimes a jump, sometimes backwards
                // (a rejoined line's first half), sometimes the extremes.
                match rng.u8(0..10) {
                    0 => pos = pos.saturating_sub(rng.u64(0..10_000)),
                    1 => pos += rng.u64(0..1 << 40),
                    _ => {}
                }
                line += rng.u32(0..3);
                let opt = |rng: &mut fastrand::Rng| {
                    if rng.bool() {
                        NONE
                    } else {
                        rng.u32(0..u32::MAX)
                    }
                };
                let e = Entry {
                    line,
                    role: [Role::System, Role::User, Role::Assistant, Role::Tool][rng.usize(0..4)],
                    flags: rng.u8(..),
                    chars: rng.u32(..),
                    hash: rng.u64(..),
                    id: rng.u64(..),
                    pos,
                    len,
                    more: opt(rng),
                    link: opt(rng),
                    claim: opt(rng),
                };
                pos += u64::from(len) + 1;
                e
            })
            .collect()
    }

    #[test]
    fn pruning_removes_only_mfs_own_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(100_000);
        let age = |p: &Path, k: u64| {
            let f = File::options().write(true).open(p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(k))
                .unwrap();
        };
        // Others' files, oldest of all: named like mf's, or with the extension only.
        let mut foreign = Vec::new();
        for k in 0..50u64 {
            let p = d.join(format!("{:016x}.ckpt", 0xf000 + k));
            fs::write(&p, b"not mf's").unwrap();
            age(&p, k);
            foreign.push(p);
            let p = d.join(format!("epoch={k}.ckpt"));
            fs::write(&p, [MAGIC, b"same header, another name"].concat()).unwrap();
            age(&p, k);
            foreign.push(p);
        }
        let mut ours = Vec::new();
        for k in 0..(KEEP as u64 + 10) {
            let p = d.join(format!("{k:016x}.ckpt"));
            fs::write(&p, [MAGIC, b"body"].concat()).unwrap();
            age(&p, 1_000 + k);
            ours.push(p);
        }
        prune(d);
        assert!(
            foreign.iter().all(|p| p.exists()),
            "a foreign file was removed"
        );
        let kept = ours.iter().filter(|p| p.exists()).count();
        assert_eq!(kept, KEEP);
        assert!(
            ours[..10].iter().all(|p| !p.exists()),
            "not the oldest went"
        );
    }

    #[test]
    fn the_fingerprint_covers_every_byte_of_the_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(&p, &bytes).unwrap();
        let f = File::open(&p).unwrap();
        let n = bytes.len() as u64 - 7;
        let want = fingerprint(&f, n).unwrap();
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..20 {
            let mut b = bytes.clone();
            let at = rng.usize(..n as usize);
            b[at] ^= 1 << rng.u8(0..8);
            fs::write(&p, &b).unwrap();
            let f = File::open(&p).unwrap();
            assert_ne!(fingerprint(&f, n).unwrap(), want, "a flip at {at} kept it");
        }
    }

    #[test]
    fn entries_round_trip() {
        let mut rng = fastrand::Rng::with_seed(11);
        for n in [0, 1, 2, 17, 1_000] {
            let entries = random_entries(&mut rng, n);
            let mut buf = Vec::new();
            encode_entries(&entries, &mut buf);
            let mut i = 0;
            assert_eq!(decode_entries(&buf, &mut i).as_deref(), Some(&entries[..]));
            assert_eq!(i, buf.len());
        }
    }

    #[test]
    fn damaged_entries_do_not_decode_or_panic() {
        let mut rng = fastrand::Rng::with_seed(12);
        let entries = random_entries(&mut rng, 200);
        let mut buf = Vec::new();
        encode_entries(&entries, &mut buf);
        for cut in [1, buf.len() / 3, buf.len() - 1] {
            let mut i = 0;
            assert_eq!(decode_entries(&buf[..cut], &mut i), None);
        }
        // A count far beyond the bytes is refused without allocating for it.
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX >> 1);
        let mut i = 0;
        assert_eq!(decode_entries(&huge, &mut i), None);
    }
}
