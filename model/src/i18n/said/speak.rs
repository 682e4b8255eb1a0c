//! Writing JSON with every [`Said`] in one language, without a thread-local: [`to_json`] wraps
//! the JSON serializer in [`Speak`], which passes everything through unchanged but a `Said`. A
//! `Said` asks its serializer whether it is human-readable: JSON itself is, and gets the
//! English; `Speak` says it is not, and the `Said` hands it both languages under a marker
//! newtype, of which `Speak` writes the one asked for.
//!
//! `Speak` tells every value it is not human-readable. The view model, the boot state and the
//! what-if answer hold no type that writes itself differently then (times are strings); a test
//! holds `to_json(Lang::En, …)` to plain `serde_json` on the whole demo view.

use serde::ser::{
    SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple, SerializeTupleStruct,
    SerializeTupleVariant,
};
use serde::{Serialize, Serializer};

use super::super::Lang;

/// The newtype name under which a [`Said`] hands [`Speak`] both its languages.
pub(super) const SAID: &str = "\u{0}gpudash::Said";

/// `value` as JSON, every [`Said`] in it written in `lang`.
pub fn to_json<T: Serialize + ?Sized>(lang: Lang, value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(1024);
    value.serialize(Speak { inner: &mut serde_json::Serializer::new(&mut out), how: How { lang, browser: false } })?;
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// `value` in the browser's wire ([`crate::wire`]): postcard, every [`Said`] in `lang`, every
/// field the browser's build does not have ([`crate::wire::LEFT_OUT`]) left out, and a field
/// skipped when `None` written as `None` (postcard is positional: nothing may be missing).
pub fn to_postcard<T: Serialize + ?Sized>(lang: Lang, value: &T) -> postcard::Result<Vec<u8>> {
    let mut out = postcard::Serializer { output: postcard::ser_flavors::AllocVec::new() };
    value.serialize(Speak { inner: &mut out, how: How { lang, browser: true } })?;
    postcard::ser_flavors::Flavor::finalize(out.output)
}

/// How [`Speak`] writes: the sentences' language, and whether for the browser's wire.
#[derive(Clone, Copy)]
struct How {
    lang: Lang,
    browser: bool,
}

/// A serializer that writes what `inner` writes, each [`Said`] in one language.
pub struct Speak<S> {
    inner: S,
    how: How,
}

/// A value to be written through [`Speak`].
struct Speaking<'a, T: ?Sized> {
    value: &'a T,
    how: How,
}

impl<T: Serialize + ?Sized> Serialize for Speaking<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Speak { inner: s, how: self.how })
    }
}

/// A compound value (sequence, map, struct…) being written through [`Speak`]; `name` is the
/// struct's (empty for others).
pub struct Part<C> {
    inner: C,
    how: How,
    name: &'static str,
}

impl<C> Part<C> {
    fn wrap<'a, T: ?Sized>(&self, value: &'a T) -> Speaking<'a, T> {
        Speaking { value, how: self.how }
    }

    /// Whether the field `key` of this struct is not written at all.
    fn left_out(&self, key: &'static str) -> bool {
        self.how.browser && crate::wire::LEFT_OUT.contains(&(self.name, key))
    }
}

macro_rules! forward {
    ($($name:ident($($arg:ident: $t:ty),*);)*) => {
        $(fn $name(self, $($arg: $t),*) -> Result<S::Ok, S::Error> {
            self.inner.$name($($arg),*)
        })*
    };
}

impl<S: Serializer> Serializer for Speak<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Part<S::SerializeSeq>;
    type SerializeTuple = Part<S::SerializeTuple>;
    type SerializeTupleStruct = Part<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Part<S::SerializeTupleVariant>;
    type SerializeMap = Part<S::SerializeMap>;
    type SerializeStruct = Part<S::SerializeStruct>;
    type SerializeStructVariant = Part<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.inner.serialize_some(&Speaking { value, how: self.how })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<S::Ok, S::Error> {
        if name == SAID {
            // Both languages, as a pair: write the one asked for.
            let both = serde_json::to_value(value).map_err(serde::ser::Error::custom)?;
            let i = match self.how.lang {
                Lang::En => 0,
                Lang::Ja => 1,
            };
            let said = both.get(i).and_then(|v| v.as_str());
            return self
                .inner
                .serialize_str(said.ok_or_else(|| serde::ser::Error::custom("a sentence without its words"))?);
        }
        self.inner.serialize_newtype_struct(name, &Speaking { value, how: self.how })
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner.serialize_newtype_variant(name, index, variant, &Speaking { value, how: self.how })
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Ok(Part { inner: self.inner.serialize_seq(len)?, how: self.how, name: "" })
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        Ok(Part { inner: self.inner.serialize_tuple(len)?, how: self.how, name: "" })
    }

    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        Ok(Part { inner: self.inner.serialize_tuple_struct(name, len)?, how: self.how, name: "" })
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Ok(Part { inner: self.inner.serialize_tuple_variant(name, index, variant, len)?, how: self.how, name: "" })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(Part { inner: self.inner.serialize_map(len)?, how: self.how, name: "" })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Part { inner: self.inner.serialize_struct(name, len)?, how: self.how, name })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Ok(Part { inner: self.inner.serialize_struct_variant(name, index, variant, len)?, how: self.how, name })
    }

    /// Not human-readable: the signal a [`Said`] answers with both its languages.
    fn is_human_readable(&self) -> bool {
        false
    }
}

/// A compound's parts, each written through [`Speak`]: `$trait` with `$method(value)`.
macro_rules! parts {
    ($($trait:ident::$method:ident;)*) => {
        $(impl<C: $trait> $trait for Part<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                let v = self.wrap(value);
                self.inner.$method(&v)
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        })*
    };
}

/// A struct's fields, each written through [`Speak`].
macro_rules! fields {
    ($($trait:ident;)*) => {
        $(impl<C: $trait> $trait for Part<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), C::Error> {
                if self.left_out(key) {
                    return Ok(());
                }
                let v = self.wrap(value);
                self.inner.serialize_field(key, &v)
            }
            // Only `Option`s are skipped (`skip_serializing_if = "Option::is_none"`): the
            // browser's wire writes the `None`.
            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                if self.how.browser && !self.left_out(key) {
                    return self.inner.serialize_field(key, &None::<()>);
                }
                self.inner.skip_field(key)
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        })*
    };
}

parts! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

fields! {
    SerializeStruct;
    SerializeStructVariant;
}

impl<C: SerializeMap> SerializeMap for Part<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        let k = self.wrap(key);
        self.inner.serialize_key(&k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let v = self.wrap(value);
        self.inner.serialize_value(&v)
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}
