//! The `avatar` binary: parses the command line, starts the server, stops it on SIGTERM/SIGINT.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use avatar::config::{self, check_range, timeout_secs, ConfigError};
use avatar::{Config, Server};
use clap::Parser;

/// A random-avatar HTTP server: a 302 to one of N images, and SVG foxes in any colour.
///
/// `avatar 6666 21` (the blog post's form) listens on 127.0.0.1:6666 with 21 images.
#[derive(Debug, Parser)]
#[command(name = "avatar", version, max_term_width = 100)]
struct Cli {
    /// Port on 127.0.0.1 (the post's form; use --listen for another address).
    #[arg(value_name = "PORT", conflicts_with = "listen")]
    port: Option<u16>,

    /// Number of images (the post's form of --images).
    #[arg(value_name = "IMAGES", conflicts_with = "images")]
    image_count: Option<u64>,

    /// Address to listen on, IPv4 or IPv6 (`[::1]:6666`).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,

    /// Number of images, 1..=65535 [default: 21].
    #[arg(long, value_name = "N")]
    images: Option<u64>,

    /// Location template; `{n}` runs over 1..=N
    /// [default: https://avatar.example/Renard-{n}.png, or /images/Renard-{n}.png with --images-dir].
    #[arg(long, value_name = "TEMPLATE")]
    location: Option<String>,

    /// Serve the files of DIR under /images/ (loaded at start).
    #[arg(long, value_name = "DIR")]
    images_dir: Option<PathBuf>,

    /// SVG template with a {{color}} placeholder [default: the built-in fox].
    #[arg(long, value_name = "FILE")]
    svg_template: Option<PathBuf>,

    /// Worker threads, each with its own listener and event loop [default: number of CPUs].
    #[arg(long, value_name = "N")]
    workers: Option<u64>,

    /// Open connections allowed; past it new ones are closed at once.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_connections: u64,

    /// Seconds allowed to send a request head, and then its body (slowloris guard).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    head_timeout: u64,

    /// Seconds a keep-alive connection may stay idle.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    idle_timeout: u64,

    /// Seconds allowed to finish in-flight responses after SIGTERM or SIGINT.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    shutdown_timeout: u64,

    /// HTTP/2 streams a connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, value_name = "N", default_value_t = 100)]
    h2_max_streams: u64,

    /// Serve HTTP/3 (QUIC, UDP) on ADDR too, e.g. 127.0.0.1:6666; needs --cert and --key.
    #[arg(long, value_name = "ADDR")]
    h3_listen: Option<SocketAddr>,

    /// The HTTP/3 certificate chain (PEM).
    #[arg(long, value_name = "FILE")]
    cert: Option<PathBuf>,

    /// The HTTP/3 certificate's private key (PEM).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,

    /// Log every request to standard output.
    #[arg(long)]
    access_log: bool,

    /// Check the settings and files, print a summary, and exit without listening.
    #[arg(long)]
    check: bool,
}

impl Cli {
    fn into_config(self) -> Result<(Config, bool), ConfigError> {
        let defaults = Config::default();
        let listen = match (self.listen, self.port) {
            (Some(addr), _) => addr,
            (None, Some(port)) => SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            (None, None) => defaults.listen,
        };
        let images = self
            .images
            .or(self.image_count)
            .unwrap_or(u64::from(defaults.images));
        let images = check_range(images, 65_535, ConfigError::Images)? as u32;
        let workers = match self.workers {
            Some(n) => check_range(n, 256, ConfigError::Workers)? as usize,
            None => defaults.workers.min(256),
        };
        let h3 = match (self.h3_listen, self.cert, self.key) {
            (Some(listen), Some(cert), Some(key)) => Some(config::H3Listen { listen, cert, key }),
            (None, None, None) => None,
            _ => return Err(ConfigError::H3Incomplete),
        };
        let config = Config {
            listen,
            images,
            location: self.location,
            images_dir: self.images_dir,
            svg_template: self.svg_template,
            workers,
            max_connections: check_range(
                self.max_connections,
                10_000_000,
                ConfigError::MaxConnections,
            )? as usize,
            head_timeout: timeout_secs("head-timeout", self.head_timeout)?,
            idle_timeout: timeout_secs("idle-timeout", self.idle_timeout)?,
            shutdown_timeout: timeout_secs("shutdown-timeout", self.shutdown_timeout)?,
            access_log: self.access_log,
            limits: config::Limits {
                max_concurrent_streams: check_range(
                    self.h2_max_streams,
                    10_000,
                    ConfigError::MaxStreams,
                )? as u32,
                ..config::Limits::default()
            },
            h3,
        };
        config.validate()?;
        Ok((config, self.check))
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            eprintln!(
                "avatar: {} (try --help)",
                line.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("avatar: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let (config, check_only) = cli.into_config()?;
    if check_only {
        let site = avatar::Site::from_config(&config)?;
        println!(
            "avatar: configuration ok: {} images, first {}, listen {}",
            site.image_count(),
            String::from_utf8_lossy(site.location(0)),
            config.listen
        );
        return Ok(());
    }
    let workers = config.workers;
    let images = config.images;
    let server = Server::bind(config)?;
    let handle = server.shutdown_handle();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .context("cannot install the SIGTERM/SIGINT handlers")?;
    std::thread::Builder::new()
        .name("avatar-signals".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            if signals.forever().next().is_some() {
                handle.shutdown();
            }
        })
        .context("cannot start the signal thread")?;
    eprintln!(
        "avatar: listening on http://{} ({workers} worker{}, {images} images)",
        server.local_addr(),
        if workers == 1 { "" } else { "s" }
    );
    if let Some(addr) = server.h3_addr() {
        eprintln!("avatar: listening on https://{addr} over HTTP/3 (UDP)");
    }
    server.run().context("a worker stopped")?;
    eprintln!("avatar: stopped");
    Ok(())
}
