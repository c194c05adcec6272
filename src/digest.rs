//! `Digest`: the hashes mf binds its lines with — the content fingerprint of a summary (FNV-1a
//! 64 of its content string), the hash of each entry's bytes (xxh3-64), and the coverage digest
//! of a span (xxh3-128 over its entries' hashes, in order).

use xxhash_rust::xxh3::{Xxh3, xxh3_64};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = FNV_OFFSET;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The fingerprint of a summary's content as written in its coverage record: 16 lowercase hex digits.
pub fn content_fingerprint(content: &str) -> String {
    format!("{:016x}", fnv1a64(content.as_bytes()))
}

/// Hash of one line's bytes (without its line end).
pub fn line_hash(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// Hash of an id string (entry ids, tool call ids, uuids).
pub fn id_hash(id: &str) -> u64 {
    // A fixed, distinct seed keeps id hashes apart from line hashes.
    xxhash_rust::xxh3::xxh3_64_with_seed(id.as_bytes(), 0x6d66_6964)
}

/// Hash of an entry made of several pieces (a streamed response written over several lines):
/// the hash of its pieces' hashes, in order. A one-piece entry's hash is its line hash.
pub fn pieces_hash(hashes: &[u64]) -> u64 {
    match hashes {
        [one] => *one,
        many => {
            let mut h = Xxh3::new();
            for x in many {
                h.update(&x.to_le_bytes());
            }
            h.digest()
        }
    }
}

/// A running coverage digest over entry hashes.
#[derive(Clone, Default)]
pub struct Digest(Xxh3);

impl Digest {
    pub fn new() -> Self {
        Self(Xxh3::new())
    }

    pub fn push(&mut self, entry_hash: u64) {
        self.0.update(&entry_hash.to_le_bytes());
    }

    /// 32 lowercase hex digits.
    pub fn finish(&self) -> String {
        format!("{:032x}", self.0.digest128())
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Digest")
    }
}

/// The coverage digest of entries with these hashes, in order.
pub fn digest_of(hashes: impl IntoIterator<Item = u64>) -> String {
    let mut d = Digest::new();
    for h in hashes {
        d.push(h);
    }
    d.finish()
}

/// The key of a summarizer request: xxh3-128 over its parts, each length-prefixed (so no two
/// lists of parts collide by moving bytes between them). 32 lowercase hex digits.
pub fn request_key(parts: &[&[u8]]) -> String {
    let mut h = Xxh3::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    format!("{:032x}", h.digest128())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(content_fingerprint("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn digests_depend_on_every_hash_and_their_order() {
        let a = digest_of([1, 2, 3]);
        assert_eq!(a.len(), 32);
        assert_eq!(a, digest_of([1, 2, 3]));
        assert_ne!(a, digest_of([1, 3, 2]));
        assert_ne!(a, digest_of([1, 2]));
        assert_eq!(pieces_hash(&[7]), 7);
        assert_ne!(pieces_hash(&[7, 8]), pieces_hash(&[8, 7]));
        assert_ne!(id_hash("m1"), line_hash(b"m1"));
    }
}
