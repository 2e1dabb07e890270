//! Run ids: the start time of a run, readable, sortable, and unique per repository.

mod parse;

pub use parse::ParseRunIdError;

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The id of one run: when it started, in UTC, to the millisecond, as
/// `YYYYMMDD-HHMMSS-mmm` (for example `20250131-235959-042`).
///
/// Ids compare and sort as strings, which is the order they were made in:
/// [`Session::begin`](crate::Session::begin) never hands out an id that sorts
/// before an existing one, and moves to the next free millisecond when two
/// runs start in the same one. The id names the run's tag `harness/<id>`, its
/// refs `refs/harness/<id>/…` and its directory `.git/harness/runs/<id>/`.
///
/// Parsing accepts only this exact shape with a real date and time, so an id
/// from the command line can never name a path outside the runs directory.
///
/// ```
/// use harness_undo::RunId;
///
/// let id: RunId = "20250131-235959-042".parse()?;
/// assert_eq!(id.to_string(), "20250131-235959-042");
/// assert!("../../etc".parse::<RunId>().is_err());
/// # Ok::<(), harness_undo::ParseRunIdError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(String);

impl RunId {
    /// The id as a string, e.g. `20250131-235959-042`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The moment the id stands for.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.unix_millis())
    }

    /// The id for `now`, or one millisecond after `newest` if that is later, so
    /// that a new id always sorts after every existing one.
    pub(crate) fn next(now: SystemTime, newest: Option<&RunId>) -> RunId {
        let now = unix_millis(now);
        let after_newest = newest.map_or(0, |id| id.unix_millis() + 1);
        RunId::from_unix_millis(now.max(after_newest))
    }

    /// The id of the millisecond `ms` after the Unix epoch.
    pub(crate) fn from_unix_millis(ms: u64) -> RunId {
        let days = ms / MILLIS_PER_DAY;
        let of_day = ms % MILLIS_PER_DAY;
        let (year, month, day) = civil_from_days(days);
        let seconds = of_day / 1000;
        RunId(format!(
            "{year:04}{month:02}{day:02}-{:02}{:02}{:02}-{:03}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60,
            of_day % 1000
        ))
    }

    /// Milliseconds after the Unix epoch.
    pub(crate) fn unix_millis(&self) -> u64 {
        let digits = |range: std::ops::Range<usize>| -> u64 {
            self.0.as_bytes()[range]
                .iter()
                .fold(0, |n, b| n * 10 + u64::from(b - b'0'))
        };
        let days = days_from_civil(digits(0..4), digits(4..6), digits(6..8));
        let seconds = digits(9..11) * 3600 + digits(11..13) * 60 + digits(13..15);
        days * MILLIS_PER_DAY + seconds * 1000 + digits(16..19)
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for RunId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for RunId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RunId, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Milliseconds since the Unix epoch; a clock before 1970 counts as the epoch.
pub(crate) fn unix_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

const MILLIS_PER_DAY: u64 = 86_400_000;

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's
/// `civil_from_days`, for dates on or after the epoch only.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01 so that leap days end each 400-year era.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let (month, year_shift) = if month_from_march < 10 {
        (month_from_march + 3, 0)
    } else {
        (month_from_march - 9, 1)
    };
    (year_of_era + era * 400 + year_shift, month, day)
}

/// (year, month, day) to days since 1970-01-01; the inverse of [`civil_from_days`].
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let (year, month_from_march) = if month > 2 {
        (year, month - 3)
    } else {
        // Year 0 only comes from a malformed id, which the round trip then rejects.
        (year.saturating_sub(1), month + 9)
    };
    let era = year / 400;
    let year_of_era = year % 400;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era).saturating_sub(719_468)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    macro_rules! formats {
        ($($name:ident: $ms:expr => $text:expr;)*) => {$(
            #[test]
            fn $name() {
                let id = RunId::from_unix_millis($ms);
                assert_eq!(id.as_str(), $text);
                assert_eq!(id.unix_millis(), $ms);
                assert_eq!($text.parse::<RunId>().unwrap(), id);
            }
        )*};
    }

    formats! {
        epoch: 0 => "19700101-000000-000";
        last_millisecond_of_1999: 946_684_799_999 => "19991231-235959-999";
        leap_day_2000: 951_782_400_000 => "20000229-000000-000";
        march_first_2000: 951_868_800_000 => "20000301-000000-000";
        leap_day_2024_afternoon: 1_709_222_706_123 => "20240229-160506-123";
        new_year_2025: 1_735_689_600_000 => "20250101-000000-000";
        no_leap_day_in_2100: 4_107_542_400_000 => "21000301-000000-000";
        end_of_february_2100: 4_107_542_399_999 => "21000228-235959-999";
        leap_day_2400: 13_574_563_200_000 => "24000229-000000-000";
        one_hour_in: 3_600_000 => "19700101-010000-000";
    }

    macro_rules! rejects {
        ($($name:ident: $text:expr;)*) => {$(
            #[test]
            fn $name() {
                let err = $text.parse::<RunId>().unwrap_err();
                assert_eq!(err, ParseRunIdError { text: $text.to_string() });
            }
        )*};
    }

    rejects! {
        empty: "";
        traversal: "../../../etc/passwd";
        too_short: "20250101-000000-00";
        too_long: "20250101-000000-0000";
        letter_in_date: "2025010a-000000-000";
        letter_in_time: "20250101-00000a-000";
        letter_in_millis: "20250101-000000-00a";
        wrong_first_separator: "20250101_000000-000";
        wrong_second_separator: "20250101-000000_000";
        month_thirteen: "20251301-000000-000";
        february_thirtieth: "20250230-000000-000";
        no_leap_day_2025: "20250229-000000-000";
        hour_twenty_four: "20250101-240000-000";
        minute_sixty: "20250101-006000-000";
        before_epoch: "19691231-235959-999";
        slash_inside: "2025/101-000000-000";
        year_zero_january: "00000101-000000-000";
    }

    #[test]
    fn next_takes_now_when_it_is_later() {
        let newest = RunId::from_unix_millis(1_000);
        let now = UNIX_EPOCH + Duration::from_millis(5_000);
        assert_eq!(
            RunId::next(now, Some(&newest)),
            RunId::from_unix_millis(5_000)
        );
        assert_eq!(RunId::next(now, None), RunId::from_unix_millis(5_000));
    }

    #[test]
    fn next_steps_past_the_newest_when_the_clock_is_not_ahead() {
        let newest = RunId::from_unix_millis(5_000);
        let same = UNIX_EPOCH + Duration::from_millis(5_000);
        assert_eq!(
            RunId::next(same, Some(&newest)),
            RunId::from_unix_millis(5_001)
        );
        let behind = UNIX_EPOCH + Duration::from_millis(4_000);
        assert_eq!(
            RunId::next(behind, Some(&newest)),
            RunId::from_unix_millis(5_001)
        );
        let just_ahead = UNIX_EPOCH + Duration::from_millis(5_001);
        assert_eq!(
            RunId::next(just_ahead, Some(&newest)),
            RunId::from_unix_millis(5_001)
        );
    }

    #[test]
    fn time_is_the_millisecond_of_the_id() {
        let id = RunId::from_unix_millis(1_709_222_706_123);
        assert_eq!(
            id.time(),
            UNIX_EPOCH + Duration::from_millis(1_709_222_706_123)
        );
    }

    #[test]
    fn a_clock_before_the_epoch_counts_as_the_epoch() {
        assert_eq!(unix_millis(UNIX_EPOCH - Duration::from_secs(1)), 0);
        assert_eq!(unix_millis(UNIX_EPOCH + Duration::from_millis(7)), 7);
    }

    #[test]
    fn serde_round_trips_and_validates() {
        let id = RunId::from_unix_millis(42);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"19700101-000000-042\"");
        assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), id);
        let err = serde_json::from_str::<RunId>("\"../x\"").unwrap_err();
        assert!(err.to_string().contains("is not a run id"), "{err}");
    }

    proptest! {
        #[test]
        fn ids_round_trip_and_sort_by_time(a in 0u64..8_000_000_000_000, b in 0u64..8_000_000_000_000) {
            let (ia, ib) = (RunId::from_unix_millis(a), RunId::from_unix_millis(b));
            prop_assert_eq!(ia.unix_millis(), a);
            prop_assert_eq!(ia.as_str().parse::<RunId>().unwrap(), ia.clone());
            prop_assert_eq!(ia.cmp(&ib), a.cmp(&b));
        }
    }
}
