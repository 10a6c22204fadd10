//! Counts packed as LEB128 varints: what the plan log and the kept rows
//! write of each call, a byte or two for the small counts most are.

/// Appends `v` as LEB128: seven bits a byte, low first, the high bit set on
/// every byte but the last.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads the LEB128 count at `*at` and moves past it. Only what
/// [`put_varint`] wrote is read, so the bytes are always there.
pub(crate) fn take_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}
