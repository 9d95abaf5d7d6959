//! Image files: the kinds a model takes, told by their extension and by their first bytes, and
//! the placeholder that stands for one in XML text (its bytes travel only in chat request
//! bodies). The assembler shows an image file as a placeholder and a conversation attaches
//! it, so both tell images the same way.

/// The extensions of the image kinds a model takes, with their media types.
const KINDS: [(&str, &str); 5] = [
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
];

/// The media type an image file's extension names (`shot.PNG` → `image/png`), if any.
pub fn extension_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    KINDS.iter().find(|(e, _)| *e == ext).map(|(_, t)| *t)
}

/// How many leading bytes [`sniff`] needs.
pub const SNIFF_BYTES: usize = 12;

/// The media type of image bytes, from their first bytes: PNG, JPEG, GIF or WebP.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The placeholder of an image in XML: `<image path="…" type="…" bytes="…"/>`.
///
/// The assembler's XML format prints it and a conversation's image shows itself with it
/// (`ctx_conversation::image::Image::placeholder`), so it lives here, below both.
pub fn xml_placeholder(path: &str, media_type: &str, bytes: u64) -> String {
    let path = path.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    format!("<image path=\"{path}\" type=\"{media_type}\" bytes=\"{bytes}\"/>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension_and_content() {
        assert_eq!(extension_type("a/b.JPG"), Some("image/jpeg"));
        assert_eq!(extension_type("notes.md"), None);
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"plain"), None);
        assert_eq!(
            xml_placeholder("a\"b.png", "image/png", 3),
            "<image path=\"a&quot;b.png\" type=\"image/png\" bytes=\"3\"/>"
        );
    }
}
