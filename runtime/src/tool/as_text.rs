//! A success value whose JSON is a string (`String`, `&str`, `Cow<str>`, a `char`, a unit
//! variant, or any of these as `Some` or in a newtype) is sent as that string's text: the
//! model reads `Deleted note_1`, not `"Deleted note_1"` with its quotes and escapes. Found by
//! serializing the value into [`AsText`], which takes a string and refuses anything else at its
//! first call: a value that is no string costs one refused call before it is written as JSON.

use std::fmt;

use serde::Serialize;
use serde::ser::{Error, Impossible, Serializer};

/// The text of `value` when its JSON is a string.
pub(crate) fn as_text<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    value.serialize(AsText).ok()
}

/// A serializer that keeps a string and refuses every other value.
struct AsText;

/// Why [`AsText`] refused a value: it is not a string.
#[derive(Debug)]
struct NotText;

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a string")
    }
}

impl std::error::Error for NotText {}

impl Error for NotText {
    fn custom<M: fmt::Display>(_: M) -> Self {
        NotText
    }
}

/// The methods of values that are no string: each refuses.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {$(
        fn $method(self, $(_: $arg),*) -> Result<String, NotText> {
            Err(NotText)
        }
    )*};
}

impl Serializer for AsText {
    type Ok = String;
    type Error = NotText;
    type SerializeSeq = Impossible<String, NotText>;
    type SerializeTuple = Impossible<String, NotText>;
    type SerializeTupleStruct = Impossible<String, NotText>;
    type SerializeTupleVariant = Impossible<String, NotText>;
    type SerializeMap = Impossible<String, NotText>;
    type SerializeStruct = Impossible<String, NotText>;
    type SerializeStructVariant = Impossible<String, NotText>;

    fn serialize_str(self, v: &str) -> Result<String, NotText> {
        Ok(v.to_owned())
    }

    fn serialize_char(self, v: char) -> Result<String, NotText> {
        Ok(v.to_string())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, NotText> {
        Ok(variant.to_owned())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, NotText> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, NotText> {
        value.serialize(self)
    }

    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, NotText> {
        Err(NotText)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotText> {
        Err(NotText)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotText> {
        Err(NotText)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotText> {
        Err(NotText)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotText> {
        Err(NotText)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotText> {
        Err(NotText)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotText> {
        Err(NotText)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotText> {
        Err(NotText)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    #[derive(Serialize)]
    struct Id(String);

    #[derive(Serialize)]
    enum Status {
        Paid,
    }

    #[derive(Serialize)]
    struct Invoice {
        id: String,
    }

    #[test]
    fn strings_are_their_text_and_nothing_else_is() {
        assert_eq!(as_text("Deleted note_1").as_deref(), Some("Deleted note_1"));
        assert_eq!(
            as_text(&String::from("a \"b\"\n")).as_deref(),
            Some("a \"b\"\n")
        );
        assert_eq!(as_text(&Cow::Borrowed("c")).as_deref(), Some("c"));
        assert_eq!(as_text(&Some("d")).as_deref(), Some("d"));
        assert_eq!(as_text(&Id("inv_1".into())).as_deref(), Some("inv_1"));
        assert_eq!(as_text(&Status::Paid).as_deref(), Some("Paid"));
        assert_eq!(as_text(&'x').as_deref(), Some("x"));
        for refused in [
            as_text(&1),
            as_text(&None::<String>),
            as_text(&vec!["a"]),
            as_text(&Invoice { id: "i".into() }),
            as_text(&()),
            as_text(&true),
        ] {
            assert_eq!(refused, None);
        }
    }
}
