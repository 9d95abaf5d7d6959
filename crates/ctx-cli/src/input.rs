//! Reading the top-level input: a named file or standard input, as UTF-8.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, bail};

/// Reads `path` (`-` for standard input) as UTF-8 text, with a clear message when it is not.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<String> {
    let (bytes, name) = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().lock().read_to_end(&mut bytes).context("cannot read standard input")?;
        (bytes, "standard input".to_owned())
    } else {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        (bytes, path.display().to_string())
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let at = err.utf8_error().valid_up_to();
            bail!("{name} is not UTF-8 text (invalid byte at offset {at})")
        }
    }
}
