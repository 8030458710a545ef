//! Avatar image files, loaded once from `--images-dir` and served from memory.
//!
//! Only regular files directly inside the directory are loaded, and a request names a file by
//! its exact name (no `/`, no decoding), so no request path can reach outside the directory.

use std::path::{Path, PathBuf};

use crate::etag;

/// Largest total size of the loaded files.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// Why a directory could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ImageDirError {
    /// The directory or a file in it could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path that failed.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The files add up to more than [`MAX_TOTAL_BYTES`].
    #[error("the files in {0} add up to more than 256 MiB; serve them with nginx instead")]
    TooLarge(PathBuf),
}

/// One file, ready to send.
#[derive(Debug)]
pub struct ImageFile {
    name: Box<str>,
    /// The `Content-Type` value.
    pub content_type: &'static str,
    /// The quoted ETag, a hash of the content.
    pub etag: [u8; 18],
    /// The bytes.
    pub body: Box<[u8]>,
    /// The response fields that depend on the file (`Content-Type`, `Content-Length`, `ETag`),
    /// each ending in CRLF, built once at load.
    pub fields: Box<[u8]>,
}

/// The files of one directory, sorted by name.
#[derive(Debug, Default)]
pub struct ImageDir {
    files: Vec<ImageFile>,
}

impl ImageDir {
    /// Loads every regular file in `dir` whose name is safe to put in a URL path.
    ///
    /// Symlinks, subdirectories, hidden files and names with other bytes than
    /// `A-Z a-z 0-9 . _ -` are skipped.
    pub fn load(dir: &Path) -> Result<Self, ImageDirError> {
        let read_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ImageDirError::Read { path, source }
        };
        let mut files = Vec::new();
        let mut total: u64 = 0;
        for entry in std::fs::read_dir(dir).map_err(read_err(dir))? {
            let entry = entry.map_err(read_err(dir))?;
            let path = entry.path();
            let file_type = entry.file_type().map_err(read_err(&path))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if !file_type.is_file() || !is_safe_name(&name) {
                continue;
            }
            let body = std::fs::read(&path).map_err(read_err(&path))?;
            total += body.len() as u64;
            if total > MAX_TOTAL_BYTES {
                return Err(ImageDirError::TooLarge(dir.to_path_buf()));
            }
            let mut tag = [b'"'; 18];
            tag[1..17].copy_from_slice(&etag::hex16(etag::fnv1a64(&body)));
            let content_type = content_type(&name);
            let mut fields = format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\nETag: ",
                body.len()
            )
            .into_bytes();
            fields.extend_from_slice(&tag);
            fields.extend_from_slice(b"\r\n");
            files.push(ImageFile {
                content_type,
                name: name.into(),
                etag: tag,
                body: body.into(),
                fields: fields.into(),
            });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ImageDir { files })
    }

    /// The file called exactly `name`.
    pub fn get(&self, name: &[u8]) -> Option<&ImageFile> {
        self.files
            .binary_search_by(|f| f.name.as_bytes().cmp(name))
            .ok()
            .map(|i| &self.files[i])
    }

    /// Number of files loaded.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file was loaded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

fn is_safe_name(name: &str) -> bool {
    !name.starts_with('.')
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The `Content-Type` for a file name, by extension.
pub fn content_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "svg" => "image/svg+xml; charset=utf-8",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests;
