//! Decoding file bytes to text and back, losslessly (SPEC §5): UTF-8 with or
//! without BOM, UTF-16 LE/BE with or without BOM, and legacy encodings
//! (windows-1252, Shift_JIS, GBK, ...) only when detection (`chardetng`) is
//! confident and the bytes round-trip exactly through `encoding_rs`. Anything
//! else is named in a refusal; nothing is ever decoded with replacement
//! characters, and [`try_encode`] refuses text the file's encoding cannot hold.

use crate::error::{ToolError, ToolResult};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A legacy (non-Unicode) encoding known to `encoding_rs`, by its WHATWG name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Legacy(&'static encoding_rs::Encoding);

impl Legacy {
    /// The WHATWG name (`windows-1252`, `Shift_JIS`, `GBK`, ...).
    pub fn name(self) -> &'static str {
        self.0.name()
    }
    /// Look a legacy encoding up by label; Unicode encodings are not legacy.
    pub fn for_label(label: &str) -> Option<Legacy> {
        let e = encoding_rs::Encoding::for_label(label.as_bytes())?;
        if e == encoding_rs::UTF_8 || e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
            None
        } else {
            Some(Legacy(e))
        }
    }
}

impl std::fmt::Debug for Legacy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Legacy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Legacy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Legacy::for_label(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown legacy encoding {s:?}")))
    }
}

/// The encoding a file was decoded from; writing re-encodes with the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// UTF-8 without a BOM.
    Utf8,
    /// UTF-8 with a BOM (kept on write).
    Utf8Bom,
    /// UTF-16 little endian with a BOM.
    Utf16LeBom,
    /// UTF-16 big endian with a BOM.
    Utf16BeBom,
    /// UTF-16 little endian without a BOM (detected from the NUL pattern).
    Utf16Le,
    /// UTF-16 big endian without a BOM.
    Utf16Be,
    /// A legacy encoding detected with confidence.
    Legacy(Legacy),
}

impl Encoding {
    /// The name shown to a model ("utf-8", "utf-16le with BOM", a legacy
    /// encoding's label).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf8Bom => "utf-8 with BOM",
            Encoding::Utf16LeBom => "utf-16le with BOM",
            Encoding::Utf16BeBom => "utf-16be with BOM",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
            Encoding::Legacy(l) => l.name(),
        }
    }
    /// True for UTF-8 without BOM, the encoding nothing needs to be said about.
    pub fn is_plain_utf8(self) -> bool {
        self == Encoding::Utf8
    }
}

/// Text decoded from bytes, with what is needed to write it back identically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The decoded text.
    pub text: String,
    /// What it was decoded from; encoding `text` with it gives the bytes back.
    pub encoding: Encoding,
}

/// How many leading bytes are inspected for NUL bytes to call a file binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// The share of NUL bytes in one byte lane (even or odd offsets) of the first
/// [`BINARY_SNIFF_BYTES`] above which BOM-less text is tried as UTF-16 (ASCII
/// text in UTF-16 has a NUL in every other byte).
pub const UTF16_NUL_LANE_SHARE: f64 = 0.7;

/// Fewer non-ASCII bytes than this are too little evidence for any legacy
/// encoding other than windows-1252.
pub const LEGACY_MIN_NON_ASCII: usize = 4;

/// Of decoded text from outside (command output, an MCP result, a fetched body),
/// the share of characters that are NUL, other controls (but `\n`, `\r`, `\t`
/// and ESC, which starts the ANSI sequences of ordinary output) or U+FFFD (an
/// undecodable byte) above which it is binary rather than text with some
/// control bytes (which is shown with them escaped).
pub const BINARY_TEXT_SHARE: f64 = 0.10;
/// Fewer such characters than this never make text binary, whatever its length.
pub const BINARY_TEXT_MIN: usize = 8;

/// True when decoded text is really binary: more than [`BINARY_TEXT_SHARE`] of
/// its characters (and at least [`BINARY_TEXT_MIN`]) are NUL, controls or
/// replacement characters. A few NULs (`find -print0`) or bells are text.
pub fn looks_binary_text(s: &str) -> bool {
    let mut total = 0usize;
    let mut odd = 0usize;
    for c in s.chars() {
        total += 1;
        if c == '\u{FFFD}' || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{1B}')) {
            odd += 1;
        }
    }
    odd >= BINARY_TEXT_MIN && odd as f64 > total as f64 * BINARY_TEXT_SHARE
}

/// True when the bytes look binary (a NUL in the first 8 KiB, outside UTF-16).
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    if bomless_utf16(bytes).is_some() {
        return false;
    }
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Which BOM-less UTF-16 byte order the NUL pattern suggests, if any.
fn bomless_utf16(bytes: &[u8]) -> Option<Encoding> {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if head.len() < 4 || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let pairs = head.len() / 2;
    let even = head.iter().step_by(2).filter(|b| **b == 0).count();
    let odd = head.iter().skip(1).step_by(2).filter(|b| **b == 0).count();
    let share = |n: usize| n as f64 / pairs as f64;
    if share(odd) >= UTF16_NUL_LANE_SHARE && even == 0 {
        Some(Encoding::Utf16Le)
    } else if share(even) >= UTF16_NUL_LANE_SHARE && odd == 0 {
        Some(Encoding::Utf16Be)
    } else {
        None
    }
}

/// All of `r`'s bytes, at most `max`, into a buffer sized from `expect`
/// (the file's size from metadata already in hand): a file of that size
/// arrives in one read of `expect + 1` bytes. A regular file (what both
/// callers pass) comes back short of a read only at its end, so a first
/// read that returns exactly `expect` bytes is taken as the end the
/// metadata gave, with no second read to see it. A file that has grown
/// fills the extra byte and is read on to its real end; any other short
/// count is read on until a read returns nothing. std's `read_to_end`
/// either stats and seeks again for a size hint (`File`) or starts with
/// 8 KiB reads (any other reader), and always makes that second read.
pub fn read_sized(r: &mut impl std::io::Read, expect: u64, max: u64) -> std::io::Result<Vec<u8>> {
    let cap = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let max = cap(max);
    let expect = cap(expect);
    let mut buf = vec![0u8; expect.saturating_add(1).min(max)];
    let mut n = 0;
    loop {
        if n == buf.len() {
            if n >= max {
                break;
            }
            // Grown past `expect`: double, up to `max`.
            buf.resize(n.saturating_mul(2).max(8192).min(max), 0);
        }
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => {
                let first = n == 0;
                n += k;
                if first && n == expect && n < buf.len() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}

/// Decode `bytes`; refuse binary and undecodable content with kind `binary`,
/// naming what was detected.
pub fn decode(bytes: &[u8], what: &str) -> ToolResult<Decoded> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return std::str::from_utf8(rest)
            .map(|t| Decoded {
                text: t.to_string(),
                encoding: Encoding::Utf8Bom,
            })
            .map_err(|e| not_utf8(what, e, "it has a UTF-8 BOM"));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, what, u16::from_le_bytes).map(|text| Decoded {
            text,
            encoding: Encoding::Utf16LeBom,
        });
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, what, u16::from_be_bytes).map(|text| Decoded {
            text,
            encoding: Encoding::Utf16BeBom,
        });
    }
    // Without a NUL byte in the sniffed head, the text is neither BOM-less
    // UTF-16 nor binary: both checks are skipped (the common case, one memchr).
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
        && let Some(d) = nul_sniff(bytes, what)?
    {
        return Ok(d);
    }
    match std::str::from_utf8(bytes) {
        Ok(t) => Ok(Decoded {
            text: t.to_string(),
            encoding: Encoding::Utf8,
        }),
        Err(e) => legacy(bytes, what, e),
    }
}

/// Bytes with a NUL in their head: BOM-less UTF-16 (decoded), binary
/// (refused), or neither (None: decode them as UTF-8).
fn nul_sniff(bytes: &[u8], what: &str) -> ToolResult<Option<Decoded>> {
    if let Some(enc) = bomless_utf16(bytes) {
        let f = if enc == Encoding::Utf16Le {
            u16::from_le_bytes
        } else {
            u16::from_be_bytes
        };
        if let Ok(text) = utf16(bytes, what, f)
            && !text.contains('\0')
        {
            return Ok(Some(Decoded {
                text,
                encoding: enc,
            }));
        }
    }
    if looks_binary(bytes) {
        return Err(ToolError::binary(format!(
            "{what} looks like a binary file (it has NUL bytes); it cannot be shown as text"
        )));
    }
    Ok(None)
}

/// Not UTF-8: accept a legacy encoding only when chardetng is confident and
/// the bytes decode without errors and re-encode to exactly the same bytes.
fn legacy(bytes: &[u8], what: &str, utf8_err: std::str::Utf8Error) -> ToolResult<Decoded> {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(bytes, true);
    let (enc, confident) = det.guess_assess(None, false);
    let legacy = Legacy::for_label(enc.name());
    // A few high bytes say little about which of the many legacy encodings it
    // is; windows-1252 (the superset of latin-1) is the one common default.
    let non_ascii = bytes.iter().filter(|b| !b.is_ascii()).count();
    let enough = non_ascii >= LEGACY_MIN_NON_ASCII || enc == encoding_rs::WINDOWS_1252;
    match legacy {
        Some(l) if confident && enough => {
            let Some(text) = enc.decode_without_bom_handling_and_without_replacement(bytes) else {
                return Err(not_utf8(
                    what,
                    utf8_err,
                    &format!(
                        "it looks like {} but does not decode cleanly as it",
                        l.name()
                    ),
                ));
            };
            if let Some(c) = text
                .chars()
                .find(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c' | '\x1b'))
            {
                return Err(not_utf8(
                    what,
                    utf8_err,
                    &format!(
                        "as {} it would hold the control character U+{:04X}, so it is probably not text in that encoding",
                        l.name(),
                        u32::from(c)
                    ),
                ));
            }
            let (back, _, unmappable) = enc.encode(&text);
            if unmappable || back.as_ref() != bytes {
                return Err(ToolError::unsupported(format!(
                    "{what} looks like {} text, but it does not round-trip through that encoding byte for byte, so wrench will not decode (or rewrite) it; convert it to UTF-8 first (e.g. `iconv -f {} -t UTF-8`)",
                    l.name(),
                    l.name()
                )));
            }
            Ok(Decoded {
                text: text.into_owned(),
                encoding: Encoding::Legacy(l),
            })
        }
        Some(l) => Err(not_utf8(
            what,
            utf8_err,
            &format!(
                "it may be a legacy encoding such as {}, but detection is not confident",
                l.name()
            ),
        )),
        None => Err(not_utf8(what, utf8_err, "no legacy encoding fits it")),
    }
}

fn not_utf8(what: &str, e: std::str::Utf8Error, detected: &str) -> ToolError {
    ToolError::binary(format!(
        "{what} is not valid UTF-8 (first bad byte at offset {}); {detected}. If it is text, convert it to UTF-8 first (e.g. with iconv)",
        e.valid_up_to()
    ))
}

fn utf16(rest: &[u8], what: &str, f: fn([u8; 2]) -> u16) -> ToolResult<String> {
    if !rest.len().is_multiple_of(2) {
        return Err(ToolError::binary(format!(
            "{what} has a UTF-16 BOM but an odd number of bytes"
        )));
    }
    let units: Vec<u16> = rest.chunks_exact(2).map(|c| f([c[0], c[1]])).collect();
    String::from_utf16(&units)
        .map_err(|_| ToolError::binary(format!("{what} has a UTF-16 BOM but invalid UTF-16 data")))
}

fn utf16_bytes(text: &str, bom: Option<[u8; 2]>, f: fn(u16) -> [u8; 2]) -> Vec<u8> {
    let mut v = Vec::with_capacity(text.len() * 2 + 2);
    if let Some(b) = bom {
        v.extend_from_slice(&b);
    }
    text.encode_utf16().for_each(|u| v.extend_from_slice(&f(u)));
    v
}

/// Encode text back to bytes in `enc`. Unicode encodings cannot fail; for a
/// legacy encoding, characters it cannot represent come out as `encoding_rs`
/// writes them (numeric character references), so anything that writes a file
/// must use [`try_encode`], which refuses instead.
pub fn encode(text: &str, enc: Encoding) -> Vec<u8> {
    match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf8Bom => {
            let mut v = vec![0xEF, 0xBB, 0xBF];
            v.extend_from_slice(text.as_bytes());
            v
        }
        Encoding::Utf16LeBom => utf16_bytes(text, Some([0xFF, 0xFE]), u16::to_le_bytes),
        Encoding::Utf16BeBom => utf16_bytes(text, Some([0xFE, 0xFF]), u16::to_be_bytes),
        Encoding::Utf16Le => utf16_bytes(text, None, u16::to_le_bytes),
        Encoding::Utf16Be => utf16_bytes(text, None, u16::to_be_bytes),
        Encoding::Legacy(l) => l.0.encode(text).0.into_owned(),
    }
}

/// Encode text in `enc` losslessly, or refuse with kind `unsupported` naming
/// the first character the encoding cannot hold (never a replacement).
pub fn try_encode(text: &str, enc: Encoding, what: &str) -> ToolResult<Vec<u8>> {
    let Encoding::Legacy(l) = enc else {
        return Ok(encode(text, enc));
    };
    let (bytes, _, unmappable) = l.0.encode(text);
    if !unmappable {
        return Ok(bytes.into_owned());
    }
    let bad = text
        .char_indices()
        .find(|(_, c)| {
            let mut b = [0u8; 4];
            l.0.encode(c.encode_utf8(&mut b)).2
        })
        .map(|(i, c)| {
            let line = text[..i].matches('\n').count() + 1;
            format!("{c:?} (U+{:04X}) on line {line}", u32::from(c))
        })
        .unwrap_or_else(|| "a character".to_string());
    Err(ToolError::unsupported(format!(
        "{what} is encoded as {}, which cannot represent {bad}; nothing was written. Use characters that exist in {} (or convert the file to UTF-8 first)",
        l.name(),
        l.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most `step` bytes per read, like a pipe or a file
    /// growing under the reader.
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let k = buf.len().min(self.1).min(self.0.len());
            buf[..k].copy_from_slice(&self.0[..k]);
            self.0 = &self.0[k..];
            Ok(k)
        }
    }

    #[test]
    fn read_sized_reads_everything_whatever_the_expected_size() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        for expect in [0, 1, 100, 19_999, 20_000, 20_001, 1 << 20] {
            for step in [1 << 20, 4096, 7] {
                let got = read_sized(&mut Trickle(&data, step), expect, u64::MAX).unwrap();
                assert_eq!(got, data, "expect {expect}, step {step}");
            }
        }
    }

    #[test]
    fn read_sized_makes_one_read_of_a_file_of_the_expected_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![b'a'; 14_152]).unwrap();
        struct Counted(std::fs::File, usize);
        impl std::io::Read for Counted {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1 += 1;
                self.0.read(buf)
            }
        }
        let mut f = Counted(std::fs::File::open(&p).unwrap(), 0);
        let got = read_sized(&mut f, 14_152, u64::MAX).unwrap();
        assert_eq!((got.len(), f.1), (14_152, 1));
        // Grown since its size was taken: read on to the real end.
        std::fs::write(&p, vec![b'b'; 20_000]).unwrap();
        let mut f = Counted(std::fs::File::open(&p).unwrap(), 0);
        assert_eq!(read_sized(&mut f, 14_152, u64::MAX).unwrap().len(), 20_000);
        // Shrunk: the short read is not taken for the end until one returns 0.
        std::fs::write(&p, vec![b'c'; 100]).unwrap();
        let mut f = Counted(std::fs::File::open(&p).unwrap(), 0);
        assert_eq!(read_sized(&mut f, 14_152, u64::MAX).unwrap().len(), 100);
        assert_eq!(f.1, 2);
    }

    #[test]
    fn read_sized_stops_at_the_limit() {
        let data = vec![b'x'; 10_000];
        for expect in [0, 5_000, 10_000] {
            let got = read_sized(&mut Trickle(&data, 3000), expect, 6_000).unwrap();
            assert_eq!(got.len(), 6_000, "expect {expect}");
        }
        assert!(
            read_sized(&mut Trickle(&data, 10), 10, 0)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn every_supported_encoding_round_trips() {
        for enc in [
            Encoding::Utf8,
            Encoding::Utf8Bom,
            Encoding::Utf16LeBom,
            Encoding::Utf16BeBom,
        ] {
            let bytes = encode("héllo\r\nwörld", enc);
            let d = decode(&bytes, "f").unwrap();
            assert_eq!(d.encoding, enc);
            assert_eq!(d.text, "héllo\r\nwörld");
            assert_eq!(encode(&d.text, d.encoding), bytes);
        }
    }

    #[test]
    fn text_with_a_few_control_bytes_is_text_and_real_binary_is_not() {
        assert!(!looks_binary_text(
            "plain\nlines\r\n\tand \x1b[31mcolour\x1b[0m\n"
        ));
        assert!(!looks_binary_text("ding\x07 and a NUL\0 in a line\n"));
        let print0: String = (0..20)
            .map(|i| format!("./src/module_{i}/file.rs\0"))
            .collect();
        assert!(!looks_binary_text(&print0));
        let elf = String::from_utf8_lossy(
            b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\x10\x6b\0\0",
        );
        assert!(looks_binary_text(&elf));
        let bad =
            String::from_utf8_lossy(&[0xff, 0xfe, 0xfd, 0x80, 0x81, 0x82, 0x83, 0x84, b'a', 0x90]);
        assert!(looks_binary_text(&bad));
        assert!(!looks_binary_text(""));
    }

    #[test]
    fn nul_bytes_are_binary() {
        assert_eq!(
            decode(b"ab\0cd", "f").unwrap_err().kind,
            crate::ErrorKind::Binary
        );
    }

    #[test]
    fn utf16_without_bom_round_trips() {
        for enc in [Encoding::Utf16Le, Encoding::Utf16Be] {
            let bytes = encode("plain ascii\nsecond line\n", enc);
            let d = decode(&bytes, "f").unwrap();
            assert_eq!(d.encoding, enc);
            assert_eq!(encode(&d.text, d.encoding), bytes);
        }
    }

    const LATIN1_PARA: &[u8] = b"Le caf\xe9 de la gare est ferm\xe9 depuis l'\xe9t\xe9 dernier. \
Les employ\xe9s ont d\xe9m\xe9nag\xe9 \xe0 c\xf4t\xe9, pr\xe8s de la fen\xeatre o\xf9 \
l'on voyait la for\xeat.\n";

    #[test]
    fn confident_legacy_text_decodes_and_round_trips() {
        let d = decode(LATIN1_PARA, "f").unwrap();
        assert_eq!(d.encoding.name(), "windows-1252");
        assert!(d.text.contains("café"));
        assert_eq!(try_encode(&d.text, d.encoding, "f").unwrap(), LATIN1_PARA);
    }

    #[test]
    fn legacy_encode_refuses_unrepresentable_characters() {
        let d = decode(LATIN1_PARA, "f").unwrap();
        let e = try_encode(&format!("{}日本\n", d.text), d.encoding, "f").unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Unsupported);
        assert!(e.message.contains("U+65E5"), "{}", e.message);
    }

    #[test]
    fn undetectable_bytes_are_refused_as_binary_naming_why() {
        let e = decode(b"\xff\xfa\x81", "f").unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Binary);
        assert!(e.message.contains("not valid UTF-8"), "{}", e.message);
    }

    #[test]
    fn legacy_encoding_serializes_by_name() {
        let d = decode(LATIN1_PARA, "f").unwrap();
        let j = serde_json::to_string(&d.encoding).unwrap();
        assert_eq!(j, r#"{"legacy":"windows-1252"}"#);
        let back: Encoding = serde_json::from_str(&j).unwrap();
        assert_eq!(back, d.encoding);
    }
}
