//! Retry delays: what `.retry_after(..)` takes, and the one rounding of every delay.

use std::time::Duration;

/// A retry delay: whole seconds (`u32`, `u64`, `i64`, ...), fractional seconds (`f64`) or a
/// [`Duration`]. Fractions round up; zero or less means "no delay".
///
/// ```
/// use mcp_fusion::errors::RetryAfter;
/// assert_eq!(2.001_f64.whole_seconds(), Some(3));
/// assert_eq!((-5_i64).whole_seconds(), None);
/// assert_eq!(u64::MAX.whole_seconds(), Some(u32::MAX));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a retry delay",
    label = "not a number of seconds or a `Duration`",
    note = "a retry delay is whole seconds (`u32`, `u64`, ...), fractional seconds (`f64`) or a `std::time::Duration`"
)]
pub trait RetryAfter {
    /// The delay in whole seconds, or `None` when it is zero or less.
    fn whole_seconds(self) -> Option<u32>;
}

fn positive_seconds(secs: u64) -> Option<u32> {
    (secs > 0).then(|| u32::try_from(secs).unwrap_or(u32::MAX))
}

macro_rules! retry_after_int {
    ($($t:ty),*) => {$(
        impl RetryAfter for $t {
            #[allow(irrefutable_let_patterns, clippy::cast_lossless)]
            fn whole_seconds(self) -> Option<u32> {
                u64::try_from(self).ok().and_then(positive_seconds)
            }
        }
    )*};
}
retry_after_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl RetryAfter for f64 {
    fn whole_seconds(self) -> Option<u32> {
        // `as` saturates, and NaN becomes 0: exactly "round up, omit <= 0, at most u32::MAX".
        let secs = self.ceil();
        (secs >= 1.0).then_some(secs as u32)
    }
}

impl RetryAfter for f32 {
    fn whole_seconds(self) -> Option<u32> {
        f64::from(self).whole_seconds()
    }
}

impl RetryAfter for Duration {
    fn whole_seconds(self) -> Option<u32> {
        positive_seconds(seconds_up(self))
    }
}

/// A duration in whole seconds, a fraction rounding up: the one rounding of every delay and
/// window the envelopes write.
pub(crate) fn seconds_up(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}
