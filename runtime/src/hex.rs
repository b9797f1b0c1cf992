//! Bytes written as lowercase hex: digests, random ids, keys.

/// `bytes` in lowercase hex, two digits a byte.
pub(crate) fn lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_byte_is_two_lowercase_digits() {
        assert_eq!(super::lower(&[]), "");
        assert_eq!(super::lower(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let every: Vec<u8> = (0..=255).collect();
        let formatted: String = every.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::lower(&every), formatted);
    }
}
