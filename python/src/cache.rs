//! The `CacheComposition` class: where the engine puts `cache_control`
//! markers.

use pyo3::prelude::*;

use tracecost::engine::cache::{
    CacheComposition, HistoryCachePolicy, ManifestCachePolicy, ManifestPosition, ProviderKind,
};
use tracecost::engine::rewrite::WireView;
use tracecost::policy::parse_ttl;

use crate::errors::config_err;
use crate::request::{MarkerTuple, compose, parse_messages, parse_system, parse_tools};

/// Where the engine puts cache_control markers.
#[pyclass(name = "CacheComposition", module = "tracecost._native", frozen)]
pub(crate) struct PyCacheComposition {
    pub(crate) inner: CacheComposition,
}

#[pymethods]
impl PyCacheComposition {
    #[new]
    #[pyo3(signature = (history=true, manifest=Some("cached"), prompt_region=true, ttl="5m", provider="anthropic"))]
    fn new(
        history: bool,
        manifest: Option<&str>,
        prompt_region: bool,
        ttl: &str,
        provider: &str,
    ) -> PyResult<Self> {
        let provider: ProviderKind = provider.parse().map_err(config_err)?;
        let manifest = match manifest {
            None => ManifestCachePolicy::default(),
            Some(m) => ManifestCachePolicy {
                enabled: true,
                position: m.parse::<ManifestPosition>().map_err(config_err)?,
            },
        };
        let ttl = parse_ttl(ttl).map_err(config_err)?;
        let inner = CacheComposition::new(
            provider,
            HistoryCachePolicy { enabled: history },
            manifest,
            prompt_region,
            ttl,
        )
        .map_err(config_err)?;
        Ok(PyCacheComposition { inner })
    }

    /// The provider's name.
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider().as_str()
    }

    /// The TTL every marker carries.
    #[getter]
    fn ttl(&self) -> &'static str {
        self.inner.ttl().as_str()
    }

    /// The request body for messages sent as they are, and its markers.
    fn request(
        &self,
        messages: Vec<String>,
        tools: Vec<String>,
        system: Vec<String>,
    ) -> PyResult<(String, Vec<MarkerTuple>)> {
        let history = parse_messages(&messages)?;
        let tools = parse_tools(&tools)?;
        let system = parse_system(&system)?;
        let view = WireView::unchanged(&history);
        Ok(compose(&tools, &system, &view, Some(&self.inner)))
    }
}
