//! Lower-case hex, the text form of digests and tags on the bus (subject tokens, message
//! headers). Nothing here is secret: tags are compared as bytes, in constant time, by
//! [`crate::auth`].

/// The lower-case hex form of `bytes`.
pub(crate) fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The bytes of hex text `s` (either case); `None` for an odd length or a non-hex digit.
pub(crate) fn decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_hex() {
        assert_eq!(encode(&[0x00, 0x9f, 0xff]), "009fff");
        assert_eq!(decode("009fFF"), Some(vec![0x00, 0x9f, 0xff]));
        assert_eq!(decode("abc"), None);
        assert_eq!(decode("zz"), None);
    }
}
