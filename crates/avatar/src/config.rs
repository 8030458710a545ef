//! The server's settings, their defaults and their checks.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Limits on what a client may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest request head (request line and fields); past it the answer is 431.
    pub max_head_bytes: usize,
    /// Largest request target; past it the answer is 414.
    pub max_target_bytes: usize,
    /// Largest request body that is read and thrown away; past it the answer is 413.
    pub max_body_bytes: u64,
    /// HTTP/2 streams a connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS);
    /// past it a stream is refused with REFUSED_STREAM.
    pub max_concurrent_streams: u32,
    /// Largest HTTP/2 header list, names and values plus 32 bytes per field
    /// (SETTINGS_MAX_HEADER_LIST_SIZE); past it the answer is 431. A header block's encoded
    /// bytes may reach twice this before the connection is closed (ENHANCE_YOUR_CALM).
    pub max_header_list_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head_bytes: 8 * 1024,
            max_target_bytes: 4 * 1024,
            max_body_bytes: 64 * 1024,
            max_concurrent_streams: 100,
            max_header_list_bytes: 16 * 1024,
        }
    }
}

/// Where and with what certificate HTTP/3 is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Listen {
    /// UDP address every worker's socket binds, with `SO_REUSEPORT`.
    pub listen: SocketAddr,
    /// The certificate chain, PEM.
    pub cert: PathBuf,
    /// The certificate's private key, PEM.
    pub key: PathBuf,
}

/// Everything the server needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address every worker listens on, with `SO_REUSEPORT`.
    pub listen: SocketAddr,
    /// Number of images; `{n}` in the location runs over `1..=images`.
    pub images: u32,
    /// `Location` template with `{n}`; `None` picks [`DEFAULT_LOCATION`], or
    /// [`DEFAULT_LOCAL_LOCATION`] when `images_dir` is set.
    pub location: Option<String>,
    /// Directory whose files are served under `/images/`.
    pub images_dir: Option<PathBuf>,
    /// SVG template file with `{{color}}`; `None` uses the built-in fox.
    pub svg_template: Option<PathBuf>,
    /// Number of worker threads, each with its own listener and event loop.
    pub workers: usize,
    /// Open connections allowed over all workers; past it new ones are closed at once.
    pub max_connections: usize,
    /// Time allowed to send a whole request head (slowloris guard).
    pub head_timeout: Duration,
    /// Time a keep-alive connection may sit idle, or a peer may take to read a response.
    pub idle_timeout: Duration,
    /// Time allowed to finish in-flight responses after SIGTERM or SIGINT.
    pub shutdown_timeout: Duration,
    /// Whether each request is logged to standard output.
    pub access_log: bool,
    /// Request limits.
    pub limits: Limits,
    /// HTTP/3 beside the TCP listener, if asked for.
    pub h3: Option<H3Listen>,
}

/// The default `Location` template.
pub const DEFAULT_LOCATION: &str = "https://avatar.example/Renard-{n}.png";

/// The default `Location` template when `--images-dir` is given.
pub const DEFAULT_LOCAL_LOCATION: &str = "/images/Renard-{n}.png";

/// The default port, the blog post's.
pub const DEFAULT_PORT: u16 = 6666;

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, DEFAULT_PORT)),
            images: 21,
            location: None,
            images_dir: None,
            svg_template: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_connections: 100_000,
            head_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(10),
            access_log: false,
            limits: Limits::default(),
            h3: None,
        }
    }
}

/// A setting that cannot work, or a file that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--images` out of range.
    #[error("--images must be between 1 and 65535 (got {0})")]
    Images(u64),
    /// `--workers` out of range.
    #[error("--workers must be between 1 and 256 (got {0})")]
    Workers(u64),
    /// `--max-connections` out of range.
    #[error("--max-connections must be between 1 and 10000000 (got {0})")]
    MaxConnections(u64),
    /// `--h2-max-streams` out of range.
    #[error("--h2-max-streams must be between 1 and 10000 (got {0})")]
    MaxStreams(u64),
    /// A timeout out of range.
    #[error("--{flag} must be between 1 and 86400 seconds (got {got})")]
    Timeout {
        /// The flag name.
        flag: &'static str,
        /// The value given.
        got: u64,
    },
    /// A certificate or key file for HTTP/3 was refused.
    #[error("{what} {path}: {reason}")]
    Tls {
        /// The flag.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `--h3-listen` without its certificate and key, or the other way round.
    #[error("--h3-listen needs --cert FILE and --key FILE (PEM), and they need --h3-listen")]
    H3Incomplete,
    /// The location template has no `{n}`.
    #[error("--location must contain {{n}}, which becomes the image number (got {0:?})")]
    LocationWithoutN(String),
    /// The location template cannot go in a header.
    #[error("--location must be printable ASCII without spaces, at most 2048 bytes (got {0:?})")]
    LocationInvalid(String),
    /// The SVG template file could not be read.
    #[error("cannot read --svg-template {path}: {source}")]
    TemplateRead {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The SVG template was refused.
    #[error("--svg-template {path}: {source}")]
    Template {
        /// The file.
        path: PathBuf,
        /// Why.
        source: crate::svg::TemplateError,
    },
    /// The images directory could not be loaded.
    #[error("--images-dir: {0}")]
    ImageDir(#[from] crate::images::ImageDirError),
    /// A location points into `/images/` at a file the directory lacks.
    #[error("--images-dir {dir} has no {name}, which --location {location:?} needs for image {n}: add it or lower --images")]
    MissingImage {
        /// The directory.
        dir: PathBuf,
        /// The missing file name.
        name: String,
        /// The template.
        location: String,
        /// The image number.
        n: u32,
    },
}

/// Checks a count against `1..=max`.
pub fn check_range(
    value: u64,
    max: u64,
    err: impl FnOnce(u64) -> ConfigError,
) -> Result<u64, ConfigError> {
    if (1..=max).contains(&value) {
        Ok(value)
    } else {
        Err(err(value))
    }
}

/// Checks a timeout in seconds and turns it into a `Duration`.
pub fn timeout_secs(flag: &'static str, secs: u64) -> Result<Duration, ConfigError> {
    check_range(secs, 86_400, |got| ConfigError::Timeout { flag, got }).map(Duration::from_secs)
}

impl Config {
    /// The location template in force.
    pub fn location_template(&self) -> &str {
        match (&self.location, &self.images_dir) {
            (Some(l), _) => l,
            (None, Some(_)) => DEFAULT_LOCAL_LOCATION,
            (None, None) => DEFAULT_LOCATION,
        }
    }

    /// Checks the numbers and the location template (not the files).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range(u64::from(self.images), 65_535, ConfigError::Images)?;
        check_range(self.workers as u64, 256, ConfigError::Workers)?;
        check_range(
            self.max_connections as u64,
            10_000_000,
            ConfigError::MaxConnections,
        )?;
        check_range(
            u64::from(self.limits.max_concurrent_streams),
            10_000,
            ConfigError::MaxStreams,
        )?;
        for (flag, d) in [
            ("head-timeout", self.head_timeout),
            ("idle-timeout", self.idle_timeout),
            ("shutdown-timeout", self.shutdown_timeout),
        ] {
            timeout_secs(flag, d.as_secs())?;
        }
        let location = self.location_template();
        if location.is_empty()
            || location.len() > 2048
            || !location.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(ConfigError::LocationInvalid(location.to_owned()));
        }
        if !location.contains("{n}") {
            return Err(ConfigError::LocationWithoutN(location.to_owned()));
        }
        Ok(())
    }

    /// The `Location` value for image `n` (1-based).
    pub fn location_for(&self, n: u32) -> String {
        self.location_template().replace("{n}", &n.to_string())
    }
}

#[cfg(test)]
mod tests;
