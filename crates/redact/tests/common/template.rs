// The labelled tables' templates (`⟦A:36⟧`: 36 alphanumerics, deterministic
// per row; `«…»` marks secret bytes), shared by `tests/samples.rs` and the
// crate's differential tests (`include!`d: items only).

const CLASSES: &[(char, &str)] = &[
    (
        'A',
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    ),
    (
        'U',
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
    ),
    (
        'B',
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    ),
    ('H', "0123456789abcdef"),
    ('h', "0123456789abcdef"),
    ('D', "0123456789"),
    ('L', "abcdefghijklmnopqrstuvwxyz0123456789"),
    ('l', "abcdefghijklmnopqrstuvwxyz0123456789"),
    ('Z', "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    ('C', "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    ('E', "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    ('S', "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| chars[(self.next() % chars.len() as u64) as usize])
            .collect()
    }
}

fn b64(bytes: &[u8], alphabet: &[u8], pad: bool) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..=chunk.len() {
            out.push(alphabet[((v >> (18 - 6 * i)) & 63) as usize] as char);
        }
        if pad {
            out.push_str(&"=".repeat(3 - chunk.len()));
        }
    }
    out
}

/// Expand one template.
fn expand(t: &str, rng: &mut Rng) -> String {
    const STD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    match t {
        "PK" => return concat!("PRIV", "ATE KEY").to_string(),
        "uuid" => {
            let h = CLASSES[3].1;
            return format!(
                "{}-{}-4{}-a{}-{}",
                rng.pick(h, 8),
                rng.pick(h, 4),
                rng.pick(h, 3),
                rng.pick(h, 3),
                rng.pick(h, 12)
            );
        }
        "discord" => {
            let id = format!("1{}", rng.pick("0123456789", 17));
            return format!(
                "{}.{}.{}",
                b64(id.as_bytes(), URL, false),
                rng.pick(CLASSES[1].1, 6),
                rng.pick(CLASSES[1].1, 38)
            );
        }
        _ => {}
    }
    if let Some(n) = t.strip_prefix("pad:") {
        // Filler for long lines: words, no candidate for any rule.
        let n: usize = n.parse().expect("pad length");
        return "lorem ipsum dolor sit amet ".repeat(n / 27 + 1)[..n].to_string();
    }
    if let Some(text) = t.strip_prefix("b64:") {
        // `{A:36}` inside is a template too (expanded before encoding), so
        // a token's prefix and random part need not be written together.
        let mut plain = String::new();
        let mut rest = text;
        while let Some(i) = rest.find('{') {
            let end = rest[i..].find('}').expect("closed {template}") + i;
            plain.push_str(&rest[..i]);
            plain.push_str(&expand(&rest[i + 1..end], rng));
            rest = &rest[end + 1..];
        }
        plain.push_str(rest);
        return b64(plain.as_bytes(), STD, true);
    }
    let (class, n) = t.split_once(':').expect("template class:len");
    let c = class.chars().next().expect("class");
    let alphabet = CLASSES
        .iter()
        .find(|(k, _)| *k == c && class.len() == 1)
        .unwrap_or_else(|| panic!("unknown class {class}"))
        .1;
    rng.pick(alphabet, n.parse().expect("length"))
}

/// The row's text with templates expanded, and the marked spans.
pub(crate) fn materialize(raw: &str, seed: u64) -> (String, Vec<(usize, usize)>) {
    let mut rng = Rng(seed);
    let mut out = String::new();
    let mut spans = Vec::new();
    let mut open = None;
    let mut rest = raw;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('⟦') {
            let end = r.find('⟧').expect("unclosed template");
            out.push_str(&expand(&r[..end], &mut rng));
            rest = &r[end + '⟧'.len_utf8()..];
        } else if let Some(r) = rest.strip_prefix('«') {
            open = Some(out.len());
            rest = r;
        } else if let Some(r) = rest.strip_prefix('»') {
            spans.push((open.take().expect("» without «"), out.len()));
            rest = r;
        } else {
            let c = rest.chars().next().expect("char");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    assert!(open.is_none(), "« without »");
    (out, spans)
}
