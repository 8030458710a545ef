//! What is served: the image locations, the SVG template and the image files, built once at start.

use crate::config::{Config, ConfigError, Limits};
use crate::images::ImageDir;
use crate::svg::SvgTemplate;

/// Immutable content shared by all workers.
#[derive(Debug)]
pub struct Site {
    pub(crate) locations: Vec<Box<[u8]>>,
    pub(crate) svg: SvgTemplate,
    pub(crate) images: Option<ImageDir>,
    pub(crate) limits: Limits,
}

impl Site {
    /// Validates `config`, loads its files, and expands every location.
    pub fn from_config(config: &Config) -> Result<Self, ConfigError> {
        config.validate()?;
        let svg = match &config.svg_template {
            None => SvgTemplate::default_fox(),
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| ConfigError::TemplateRead {
                        path: path.clone(),
                        source,
                    })?;
                SvgTemplate::parse(&text).map_err(|source| ConfigError::Template {
                    path: path.clone(),
                    source,
                })?
            }
        };
        let images = match &config.images_dir {
            None => None,
            Some(dir) => Some(ImageDir::load(dir)?),
        };
        let mut locations = Vec::with_capacity(config.images as usize);
        for n in 1..=config.images {
            let location = config.location_for(n);
            if let (Some(dir), Some(images)) = (&config.images_dir, &images) {
                if let Some(name) = location.strip_prefix("/images/") {
                    if images.get(name.as_bytes()).is_none() {
                        return Err(ConfigError::MissingImage {
                            dir: dir.clone(),
                            name: name.to_owned(),
                            location: config.location_template().to_owned(),
                            n,
                        });
                    }
                }
            }
            locations.push(location.into_bytes().into_boxed_slice());
        }
        Ok(Site {
            locations,
            svg,
            images,
            limits: config.limits,
        })
    }

    /// Number of images a redirect chooses from.
    pub fn image_count(&self) -> usize {
        self.locations.len()
    }

    /// The `Location` of image `index` (0-based).
    pub fn location(&self, index: usize) -> &[u8] {
        &self.locations[index]
    }

    /// The SVG template.
    pub fn svg(&self) -> &SvgTemplate {
        &self.svg
    }

    /// The request limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}
