//! Minimal deterministic PNG writer (8-bit RGB, adaptive row filters, zlib
//! stream with fixed-Huffman deflate and LZ77). Kept here so the crate needs
//! neither plotters' `image` dependency nor a temp file: plotters can only
//! encode PNGs to a path.

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Encode `rgb` (row-major, 3 bytes per pixel) as a PNG file.
pub(super) fn encode_rgb8(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let stride = width as usize * 3;
    if width == 0 || height == 0 || rgb.len() != stride * height as usize {
        return Err(format!(
            "pixel buffer of {} bytes does not match {width}x{height} RGB",
            rgb.len()
        ));
    }
    let filtered = filter_rows(rgb, stride);
    let mut zlib = vec![0x78, 0x01];
    zlib.extend(deflate(&filtered));
    zlib.extend(adler32(&filtered).to_be_bytes());

    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    // bit depth 8, colour type 2 (RGB), deflate, adaptive filters, no interlace
    ihdr.extend([8, 2, 0, 0, 0]);

    let mut out = Vec::with_capacity(zlib.len() + 64);
    out.extend(SIGNATURE);
    chunk(&mut out, b"IHDR", &ihdr)?;
    chunk(&mut out, b"IDAT", &zlib)?;
    chunk(&mut out, b"IEND", &[])?;
    Ok(out)
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) -> Result<(), String> {
    let len = u32::try_from(data.len()).map_err(|_| "PNG chunk too large".to_string())?;
    out.extend(len.to_be_bytes());
    let start = out.len();
    out.extend(kind);
    out.extend(data);
    let crc = crc32(&out[start..]);
    out.extend(crc.to_be_bytes());
    Ok(())
}

/// Pick, per row, the filter with the smallest sum of absolute values
/// (the usual PNG heuristic) and prefix the row with its type byte.
fn filter_rows(rgb: &[u8], stride: usize) -> Vec<u8> {
    let rows = rgb.len() / stride;
    let mut out = Vec::with_capacity((stride + 1) * rows);
    let zero = vec![0u8; stride];
    let mut cand = vec![0u8; stride];
    let mut best = vec![0u8; stride];
    for y in 0..rows {
        let row = &rgb[y * stride..(y + 1) * stride];
        let prev = if y == 0 {
            &zero[..]
        } else {
            &rgb[(y - 1) * stride..y * stride]
        };
        let mut best_kind = 0u8;
        let mut best_score = u64::MAX;
        for kind in 0..5u8 {
            filter(kind, row, prev, &mut cand);
            let score: u64 = cand
                .iter()
                .map(|&b| u64::from((b as i8).unsigned_abs()))
                .sum();
            if score < best_score {
                best_score = score;
                best_kind = kind;
                std::mem::swap(&mut best, &mut cand);
            }
        }
        out.push(best_kind);
        out.extend_from_slice(&best);
    }
    out
}

fn filter(kind: u8, row: &[u8], prev: &[u8], out: &mut [u8]) {
    for i in 0..row.len() {
        let a = if i >= 3 { row[i - 3] } else { 0 };
        let b = prev[i];
        let c = if i >= 3 { prev[i - 3] } else { 0 };
        let x = row[i];
        out[i] = match kind {
            0 => x,
            1 => x.wrapping_sub(a),
            2 => x.wrapping_sub(b),
            3 => x.wrapping_sub(((u16::from(a) + u16::from(b)) / 2) as u8),
            _ => x.wrapping_sub(paeth(a, b, c)),
        };
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u32, count: u32) {
        self.acc |= u64::from(value) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// Huffman codes go most-significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        let mut rev = 0;
        for k in 0..len {
            rev |= ((code >> k) & 1) << (len - 1 - k);
        }
        self.put(rev, len);
    }
    fn lit_len(&mut self, sym: u32) {
        match sym {
            0..=143 => self.code(0x30 + sym, 8),
            144..=255 => self.code(0x190 + (sym - 144), 9),
            256..=279 => self.code(sym - 256, 7),
            _ => self.code(0xC0 + (sym - 280), 8),
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

const LEN_BASE: [u32; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u32; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u32; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

const WINDOW: usize = 1 << 15;
const HASH_BITS: u32 = 15;
const MAX_CHAIN: usize = 32;
const MAX_MATCH: usize = 258;
const NONE: u32 = u32::MAX;

/// One final fixed-Huffman deflate block with hash-chain LZ77 matching.
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut bits = Bits {
        out: Vec::with_capacity(data.len() / 8 + 64),
        acc: 0,
        n: 0,
    };
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE = fixed Huffman
    let n = data.len();
    let mut head = vec![NONE; 1 << HASH_BITS];
    let mut prev = vec![NONE; WINDOW];
    let mut i = 0;
    while i < n {
        let (mut best_len, mut best_dist) = (0usize, 0usize);
        if i + 3 <= n {
            let max_len = (n - i).min(MAX_MATCH);
            let mut cand = head[hash(data, i)];
            let mut chain = 0;
            while cand != NONE && chain < MAX_CHAIN {
                let c = cand as usize;
                let dist = i - c;
                if dist > WINDOW {
                    break;
                }
                if data[c + best_len.min(max_len - 1)] == data[i + best_len.min(max_len - 1)] {
                    let mut l = 0;
                    while l < max_len && data[c + l] == data[i + l] {
                        l += 1;
                    }
                    if l > best_len {
                        best_len = l;
                        best_dist = dist;
                        if l == max_len {
                            break;
                        }
                    }
                }
                cand = prev[c % WINDOW];
                chain += 1;
            }
        }
        if best_len >= 3 {
            let li = LEN_BASE
                .iter()
                .rposition(|&b| b as usize <= best_len)
                .unwrap_or(0);
            bits.lit_len(257 + li as u32);
            bits.put(best_len as u32 - LEN_BASE[li], LEN_EXTRA[li]);
            let di = DIST_BASE
                .iter()
                .rposition(|&b| b as usize <= best_dist)
                .unwrap_or(0);
            bits.code(di as u32, 5);
            bits.put(best_dist as u32 - DIST_BASE[di], DIST_EXTRA[di]);
            for p in i..i + best_len {
                insert(data, &mut head, &mut prev, p);
            }
            i += best_len;
        } else {
            bits.lit_len(u32::from(data[i]));
            insert(data, &mut head, &mut prev, i);
            i += 1;
        }
    }
    bits.lit_len(256);
    bits.finish()
}

fn hash(data: &[u8], i: usize) -> usize {
    let v = u32::from(data[i]) | u32::from(data[i + 1]) << 8 | u32::from(data[i + 2]) << 16;
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

fn insert(data: &[u8], head: &mut [u32], prev: &mut [u32], i: usize) {
    if i + 3 <= data.len() {
        let h = hash(data, i);
        prev[i % WINDOW] = head[h];
        head[h] = i as u32;
    }
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

fn crc32(data: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in data {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ u32::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_published_check_values() {
        // The standard check inputs of CRC-32 and Adler-32.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
    }

    #[test]
    fn empty_input_is_one_final_fixed_block() {
        // BFINAL=1, BTYPE=01, end-of-block code 0000000: the bytes zlib writes.
        assert_eq!(deflate(&[]), [0x03, 0x00]);
    }

    #[test]
    fn buffer_of_the_wrong_size_is_an_error() {
        assert!(encode_rgb8(&[0; 11], 2, 2).is_err());
        assert!(encode_rgb8(&[], 0, 0).is_err());
        let png = encode_rgb8(&[0; 12], 2, 2).unwrap();
        assert_eq!(&png[..8], &SIGNATURE);
    }
}
