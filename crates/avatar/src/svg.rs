//! SVG avatars: the colour template, its `{{color}}` placeholder, and `/<rrggbb>.svg` names.

use crate::etag;

/// The placeholder replaced by `#rrggbb` (lowercase) in a template.
pub const PLACEHOLDER: &str = "{{color}}";

/// The default template: a fox drawn for this project.
pub const DEFAULT_FOX: &str = include_str!("../assets/fox.svg");

/// Largest accepted template, so a mistaken `--svg-template` cannot eat the memory.
pub const MAX_TEMPLATE_BYTES: usize = 1 << 20;

/// Why a template was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TemplateError {
    /// No `{{color}}` in the text.
    #[error("the template has no {PLACEHOLDER} placeholder: add one where the colour goes, as in fill=\"{PLACEHOLDER}\"")]
    NoPlaceholder,
    /// Longer than [`MAX_TEMPLATE_BYTES`].
    #[error("the template is {0} bytes, over the 1 MiB limit")]
    TooLarge(usize),
}

/// A template split at its placeholders, so a body is a few copies and no search.
#[derive(Debug, Clone)]
pub struct SvgTemplate {
    parts: Vec<Box<[u8]>>,
    version: [u8; 16],
    body_len: usize,
}

impl SvgTemplate {
    /// Splits `text` at each `{{color}}`.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        if text.len() > MAX_TEMPLATE_BYTES {
            return Err(TemplateError::TooLarge(text.len()));
        }
        let parts: Vec<Box<[u8]>> = text
            .split(PLACEHOLDER)
            .map(|p| p.as_bytes().into())
            .collect();
        if parts.len() < 2 {
            return Err(TemplateError::NoPlaceholder);
        }
        let body_len = parts.iter().map(|p| p.len()).sum::<usize>() + 7 * (parts.len() - 1);
        Ok(SvgTemplate {
            parts,
            version: etag::hex16(etag::fnv1a64(text.as_bytes())),
            body_len,
        })
    }

    /// The project's fox.
    pub fn default_fox() -> Self {
        SvgTemplate::parse(DEFAULT_FOX).expect("the built-in template has a placeholder")
    }

    /// Length of every body, whatever the colour.
    pub fn body_len(&self) -> usize {
        self.body_len
    }

    /// Appends the body for `color` (six lowercase hex digits) to `out`.
    pub fn write_body(&self, color: &[u8; 6], out: &mut Vec<u8>) {
        let (last, rest) = self.parts.split_last().expect("at least two parts");
        for part in rest {
            out.extend_from_slice(part);
            out.push(b'#');
            out.extend_from_slice(color);
        }
        out.extend_from_slice(last);
    }

    /// The quoted ETag for `color`: `"rrggbb-<template hash>"`, so a new template gets new tags.
    pub fn etag(&self, color: &[u8; 6]) -> [u8; 25] {
        let mut tag = [b'"'; 25];
        tag[1..7].copy_from_slice(color);
        tag[7] = b'-';
        tag[8..24].copy_from_slice(&self.version);
        tag
    }
}

/// Returns the lowercase colour if `path` is exactly `/` + 6 hex digits + `.svg`.
pub fn color_from_path(path: &[u8]) -> Option<[u8; 6]> {
    let [b'/', hex @ .., b'.', b's', b'v', b'g'] = path else {
        return None;
    };
    let hex: &[u8; 6] = hex.try_into().ok()?;
    let mut color = [0u8; 6];
    for (dst, &c) in color.iter_mut().zip(hex) {
        if !c.is_ascii_hexdigit() {
            return None;
        }
        *dst = c.to_ascii_lowercase();
    }
    Some(color)
}

/// Formats the low 24 bits of `bits` as six lowercase hex digits.
pub fn color_from_bits(bits: u64) -> [u8; 6] {
    let hex = etag::hex16(bits & 0xff_ffff);
    let mut color = [0u8; 6];
    color.copy_from_slice(&hex[10..]);
    color
}

#[cfg(test)]
mod tests;
