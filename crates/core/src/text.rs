//! Decoding file bytes to text and back, losslessly (SPEC §5): UTF-8 with or
//! without BOM, UTF-16 LE/BE with BOM. Anything else is named in a refusal.

use crate::error::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

/// The encoding a file was decoded from; writing re-encodes with the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16LeBom,
    Utf16BeBom,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf8Bom => "utf-8 with BOM",
            Encoding::Utf16LeBom => "utf-16le with BOM",
            Encoding::Utf16BeBom => "utf-16be with BOM",
        }
    }
}

/// Text decoded from bytes, with what is needed to write it back identically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    pub encoding: Encoding,
}

/// How many leading bytes are inspected for NUL bytes to call a file binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// True when the bytes look binary (a NUL in the first 8 KiB, outside UTF-16).
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
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
            .map_err(|e| not_utf8(what, e));
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
    if looks_binary(bytes) {
        return Err(ToolError::binary(format!(
            "{what} looks like a binary file (it has NUL bytes); it cannot be shown as text"
        )));
    }
    match std::str::from_utf8(bytes) {
        Ok(t) => Ok(Decoded {
            text: t.to_string(),
            encoding: Encoding::Utf8,
        }),
        Err(e) => Err(not_utf8(what, e)),
    }
}

fn not_utf8(what: &str, e: std::str::Utf8Error) -> ToolError {
    ToolError::binary(format!(
        "{what} is not valid UTF-8 (first bad byte at offset {}); it looks like a legacy 8-bit encoding (e.g. latin-1 or windows-1252), which is not decoded yet",
        e.valid_up_to()
    ))
}

fn utf16(rest: &[u8], what: &str, f: fn([u8; 2]) -> u16) -> ToolResult<String> {
    if rest.len() % 2 != 0 {
        return Err(ToolError::binary(format!(
            "{what} has a UTF-16 BOM but an odd number of bytes"
        )));
    }
    let units: Vec<u16> = rest.chunks_exact(2).map(|c| f([c[0], c[1]])).collect();
    String::from_utf16(&units)
        .map_err(|_| ToolError::binary(format!("{what} has a UTF-16 BOM but invalid UTF-16 data")))
}

/// Encode text back to bytes in `enc`.
pub fn encode(text: &str, enc: Encoding) -> Vec<u8> {
    match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf8Bom => {
            let mut v = vec![0xEF, 0xBB, 0xBF];
            v.extend_from_slice(text.as_bytes());
            v
        }
        Encoding::Utf16LeBom => {
            let mut v = vec![0xFF, 0xFE];
            text.encode_utf16()
                .for_each(|u| v.extend_from_slice(&u.to_le_bytes()));
            v
        }
        Encoding::Utf16BeBom => {
            let mut v = vec![0xFE, 0xFF];
            text.encode_utf16()
                .for_each(|u| v.extend_from_slice(&u.to_be_bytes()));
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn nul_bytes_are_binary() {
        assert_eq!(
            decode(b"ab\0cd", "f").unwrap_err().kind,
            crate::ErrorKind::Binary
        );
    }

    #[test]
    fn latin1_is_refused_with_the_encoding_named() {
        let e = decode(b"caf\xe9", "f").unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Binary);
        assert!(e.message.contains("latin-1"));
    }
}
