//! How every validator of a schema is compiled: draft 2020-12, the contract's formats asserted,
//! `multipleOf` as the contract defines it.

/// How every validator of a schema is compiled: draft 2020-12, the contract's formats asserted,
/// `multipleOf` as the contract defines it.
pub(super) type Options = jsonschema::ValidationOptions<'static>;

/// The options every validator of a schema is built with.
pub(super) fn options() -> Options {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .with_keyword("multipleOf", multiple_of::keyword)
}

/// `multipleOf` as the contract defines it: integers are tested exactly; otherwise value / m
/// must be a finite double with no fractional part.
pub(super) mod multiple_of {
    use jsonschema::{Keyword, ValidationError};
    use serde_json::{Map, Number, Value};

    pub(super) struct MultipleOf(Number);

    #[allow(clippy::unnecessary_wraps)] // the signature `with_keyword` asks for
    pub(super) fn keyword<'a>(
        _: &'a Map<String, Value>,
        value: &'a Value,
        _: jsonschema::paths::Location,
    ) -> Result<Box<dyn for<'i> Keyword<'i>>, ValidationError<'a>> {
        match value
            .as_number()
            .filter(|m| m.as_f64().is_some_and(|m| m > 0.0))
        {
            Some(m) => Ok(Box::new(MultipleOf(m.clone()))),
            None => Err(ValidationError::custom(
                "multipleOf must be a number greater than 0",
            )),
        }
    }

    fn exact(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }

    pub(in crate::validate) fn holds(value: &Number, m: &Number) -> bool {
        match (exact(value), exact(m)) {
            (Some(v), Some(m)) => m != 0 && v % m == 0,
            _ => {
                let q = value.as_f64().unwrap_or(f64::NAN) / m.as_f64().unwrap_or(f64::NAN);
                q.is_finite() && q.fract() == 0.0
            }
        }
    }

    impl<'i> Keyword<'i> for MultipleOf {
        fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
            if self.is_valid(instance) {
                Ok(())
            } else {
                Err(ValidationError::custom("not a multiple"))
            }
        }

        fn is_valid(&self, instance: &'i Value) -> bool {
            instance.as_number().is_none_or(|n| holds(n, &self.0))
        }
    }
}
