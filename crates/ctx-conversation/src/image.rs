//! Images referenced in a prompt: found, read through the sandbox, checked by their content,
//! and turned into request parts.

use base64::Engine as _;
use ctx_diagnostics::Code;
pub use ctx_fs::image::{extension_type, sniff};
use ctx_fs::{Sandbox, Store};
use sha2::Digest as _;

/// The default cap of an image's size (`--max-image-bytes`).
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// An image reference found in a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageRef {
    /// A file: `![alt](shots/a.png)`, `![alt](file:///abs/a.png)` or `@shots/a.png`, with the
    /// path (the `file://` prefix removed) and the byte offset of the reference.
    File {
        /// The path as it will be resolved.
        path: String,
        /// Where the reference starts in the prompt.
        at: usize,
    },
    /// An `http(s)://` image, passed on as its URL.
    Url(String),
}

/// An image read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// The path as the prompt wrote it.
    pub path: String,
    /// Its media type, from its content (`image/png`).
    pub media_type: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Image {
    /// The bytes in standard base64.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// A `data:` URL of the image.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64())
    }

    /// The short placeholder the text formats show in place of the bytes.
    pub fn placeholder(&self) -> String {
        ctx_fs::image::xml_placeholder(&self.path, self.media_type, self.bytes.len() as u64)
    }
}

/// Why an image could not be attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageError {
    /// `E_NOT_FOUND`, `E_OUTSIDE`, `E_DENIED`, `E_TOO_LARGE`, `E_IMAGE`…
    pub code: Code,
    /// What went wrong, naming the path as written.
    pub message: String,
}

/// Whether `path` ends in the extension of an image kind a model takes.
pub fn is_image_path(path: &str) -> bool {
    extension_type(path).is_some()
}

/// The image references of a prompt, in order: Markdown images `![alt](target)` (a path, a
/// `file://` URL or an `http(s)://` URL) and `@path` mentions of image files.
pub fn find_images(prompt: &str) -> Vec<(usize, ImageRef)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = prompt[from..].find("![").map(|i| from + i) {
        from = at + 2;
        let Some(close) = prompt[at + 2..].find("](").map(|i| at + 2 + i) else { continue };
        if prompt[at + 2..close].contains('\n') {
            continue;
        }
        let Some(end) = prompt[close + 2..].find(')').map(|i| close + 2 + i) else { continue };
        let target = prompt[close + 2..end].trim();
        let target = target.split_once(" \"").map_or(target, |(t, _)| t).trim_matches(['<', '>']);
        if target.is_empty() || target.contains('\n') {
            continue;
        }
        from = end + 1;
        if target.starts_with("http://") || target.starts_with("https://") {
            found.push((at, ImageRef::Url(target.to_owned())));
        } else {
            let path = match target.strip_prefix("file://") {
                Some(url) => file_url_path(url),
                None => Some(target.to_owned()),
            };
            if let Some(path) = path {
                found.push((at, ImageRef::File { path, at }));
            }
        }
    }
    for item in ctx_syntax::scan(prompt).items {
        if let ctx_syntax::ItemKind::Mention(reference) = &item.kind {
            let path = reference.path.unescaped();
            if is_image_path(&path) {
                let at = item.span.start;
                found.push((at, ImageRef::File { path: path.into_owned(), at }));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found
}

/// Reads the image at `path` (relative to the workspace root, or absolute inside a root)
/// through the sandbox, at most `max` bytes, and checks that its content is an image of the
/// kind its extension names.
///
/// A path in the folder of pasted images (`pasted`, see [`paste`]) is read from there, by its
/// plain file name: that folder serves images and nothing else.
pub fn load(
    sandbox: &Sandbox,
    pasted: Option<&Store>,
    path: &str,
    max: u64,
) -> Result<Image, ImageError> {
    let bytes = match pasted.and_then(|store| pasted_name(store, path).map(|name| (store, name))) {
        Some((store, name)) => match store.read(name) {
            Ok(Some(bytes)) if bytes.len() as u64 <= max => bytes,
            Ok(Some(bytes)) => {
                let message = format!("{path}: {} bytes, over the image cap of {max}", bytes.len());
                return Err(ImageError { code: Code::TooLarge, message });
            }
            Ok(None) => {
                let message = format!("no such pasted image: {path}");
                return Err(ImageError { code: Code::NotFound, message });
            }
            Err(err) => return Err(ImageError { code: err.code(), message: err.to_string() }),
        },
        None => sandbox
            .read_bytes(path, None, max)
            .map(|(_, b)| b)
            .map_err(|err| ImageError { code: err.code(), message: err.to_string() })?,
    };
    let bad = |message: String| ImageError { code: Code::Image, message };
    let Some(media_type) = sniff(&bytes) else {
        return Err(bad(format!("{path}: not a PNG, JPEG, GIF or WebP image")));
    };
    match extension_type(path) {
        Some(named) if named != media_type => {
            Err(bad(format!("{path}: the extension says {named}, the content is {media_type}")))
        }
        _ => Ok(Image { path: path.to_owned(), media_type, bytes }),
    }
}

/// The file name of `path` when it lies directly in the folder of `store`.
fn pasted_name<'p>(store: &Store, path: &'p str) -> Option<&'p str> {
    let dir = store.path().as_str().trim_end_matches('/');
    let name = path.strip_prefix(dir)?.strip_prefix('/')?;
    (!name.is_empty() && !name.contains(['/', '\\'])).then_some(name)
}

/// Stores image bytes in `store` under the hash of their content (`<sha-256>.png`) and
/// returns the path to put into a prompt; bytes that are not a PNG, JPEG, GIF or WebP image,
/// or are over `max`, are refused.
pub fn paste(store: &Store, bytes: &[u8], max: u64) -> Result<String, ImageError> {
    if bytes.len() as u64 > max {
        let message = format!("{} bytes, over the image cap of {max}", bytes.len());
        return Err(ImageError { code: Code::TooLarge, message });
    }
    let Some(media_type) = sniff(bytes) else {
        let message = "not a PNG, JPEG, GIF or WebP image".to_owned();
        return Err(ImageError { code: Code::Image, message });
    };
    let ext = media_type.trim_start_matches("image/").replace("jpeg", "jpg");
    let hash: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("{hash}.{ext}");
    store
        .write(&name, bytes)
        .map_err(|err| ImageError { code: err.code(), message: err.to_string() })?;
    Ok(format!("{}/{name}", store.path().as_str().trim_end_matches('/')))
}

/// The bytes of the smallest image of each kind, for tests and examples: a 1×1 PNG, JPEG,
/// GIF and WebP.
pub mod samples {
    /// A 1×1 transparent PNG.
    pub const PNG: &[u8] = &[
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F,
        0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ];
    /// The start of a JPEG (SOI and a JFIF header); enough for sniffing.
    pub const JPEG: &[u8] = &[
        0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00,
        0x01, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xD9,
    ];
    /// A 1×1 GIF.
    pub const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    /// A RIFF/WEBP header with an empty lossless chunk; enough for sniffing.
    pub const WEBP: &[u8] = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00";
}

/// The path of a `file://` URL without its scheme (RFC 8089): an empty or `localhost`
/// authority (any other host names another machine: `None`), a query or fragment dropped,
/// `%XX` escapes decoded, and a drive letter (`/C:/shots/a.png`) without the slash before it.
fn file_url_path(url: &str) -> Option<String> {
    let url = match url.strip_prefix("localhost") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ if url.starts_with('/') => url,
        _ => return None,
    };
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let path = percent_encoding::percent_decode_str(url).decode_utf8_lossy();
    let b = path.as_bytes();
    let drive =
        b.len() >= 4 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' && b[3] == b'/';
    Some(if drive { path[1..].to_owned() } else { path.into_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_by_content() {
        assert_eq!(sniff(samples::PNG), Some("image/png"));
        assert_eq!(sniff(samples::JPEG), Some("image/jpeg"));
        assert_eq!(sniff(samples::GIF), Some("image/gif"));
        assert_eq!(sniff(samples::WEBP), Some("image/webp"));
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVE"), None);
    }

    #[test]
    fn references_in_prompts() {
        let prompt = "see ![the bug](shots/a.png) and @b.jpg, ![logo](https://x.test/l.png), \
                      ![abs](file:///tmp/c.gif \"title\") but not @notes.md or ![](missing";
        let refs: Vec<ImageRef> = find_images(prompt).into_iter().map(|(_, r)| r).collect();
        assert_eq!(
            refs,
            [
                ImageRef::File { path: "shots/a.png".into(), at: 4 },
                ImageRef::File { path: "b.jpg".into(), at: 32 },
                ImageRef::Url("https://x.test/l.png".into()),
                ImageRef::File { path: "/tmp/c.gif".into(), at: 71 },
            ]
        );
    }

    #[test]
    fn file_urls_are_decoded() {
        let path = |url: &str| file_url_path(url);
        assert_eq!(path("/home/u/My%20Shots/a.png").unwrap(), "/home/u/My Shots/a.png");
        assert_eq!(path("localhost/tmp/a.png").unwrap(), "/tmp/a.png");
        assert_eq!(path("/C:/Shots/a.png").unwrap(), "C:/Shots/a.png");
        assert_eq!(path("/tmp/100%.png").unwrap(), "/tmp/100%.png");
        assert_eq!(path("/tmp/a.png?v=2#top").unwrap(), "/tmp/a.png");
        assert_eq!(path("host/share/a.png"), None, "another machine's file");
        assert_eq!(path("localhost.x/a.png"), None);
        let refs = find_images("![s](file:///tmp/My%20Shots/s.png)");
        assert_eq!(refs[0].1, ImageRef::File { path: "/tmp/My Shots/s.png".into(), at: 0 });
    }

    #[test]
    fn data_url_and_placeholder() {
        let image =
            Image { path: "a\"b.png".into(), media_type: "image/png", bytes: vec![1, 2, 3] };
        assert_eq!(image.data_url(), "data:image/png;base64,AQID");
        assert_eq!(
            image.placeholder(),
            "<image path=\"a&quot;b.png\" type=\"image/png\" bytes=\"3\"/>"
        );
    }
}
