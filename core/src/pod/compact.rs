//! Two fields of a pod kept small as they are decoded: the one environment variable gpudash
//! reads, and resource lists as short vectors rather than maps.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::{Deserialize, Serialize};

/// The one environment variable gpudash reads (`NVIDIA_VISIBLE_DEVICES`), decoded from the
/// container's `env` list; every other variable is skipped while parsing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuEnv(pub Option<String>);

impl GpuEnv {
    /// The variable gpudash keeps.
    pub const NAME: &'static str = "NVIDIA_VISIBLE_DEVICES";

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl Serialize for GpuEnv {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Var<'a> {
            name: &'a str,
            value: &'a str,
        }
        s.collect_seq(self.0.as_deref().map(|value| Var { name: Self::NAME, value }))
    }
}

impl<'de> Deserialize<'de> for GpuEnv {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Var {
            #[serde(default)]
            name: String,
            #[serde(default)]
            value: Option<String>,
        }
        let vars: Option<Vec<Var>> = Option::deserialize(d)?;
        Ok(Self(vars.into_iter().flatten().find(|v| v.name == Self::NAME).map(|v| v.value.unwrap_or_default())))
    }
}

/// Resource name → quantity, as a short list in one allocation (a `BTreeMap` node costs over
/// 500 bytes however few entries it holds; a container names two to four resources). Read and
/// written as the usual JSON object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceList(pub Vec<(String, Quantity)>);

impl ResourceList {
    /// The quantity of one resource.
    pub fn get(&self, name: &str) -> Option<&Quantity> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Every (resource, quantity).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Quantity)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<'a> IntoIterator for &'a ResourceList {
    type Item = (&'a String, &'a Quantity);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (String, Quantity)>, fn(&'a (String, Quantity)) -> Self::Item>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl From<BTreeMap<String, Quantity>> for ResourceList {
    fn from(m: BTreeMap<String, Quantity>) -> Self {
        Self(m.into_iter().collect())
    }
}

impl Serialize for ResourceList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ResourceList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of resource names to quantities")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<ResourceList, A::Error> {
                let mut out: Vec<(String, Quantity)> = Vec::with_capacity(m.size_hint().unwrap_or(0).min(16));
                while let Some((k, v)) = m.next_entry::<String, Quantity>()? {
                    // A repeated key: the last one wins, as in a map.
                    match out.iter_mut().find(|(x, _)| *x == k) {
                        Some(e) => e.1 = v,
                        None => out.push((k, v)),
                    }
                }
                out.shrink_to_fit();
                Ok(ResourceList(out))
            }
        }
        d.deserialize_map(Visit)
    }
}
